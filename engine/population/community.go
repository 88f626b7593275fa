package population

import (
	"regexp"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// Ethnicity is matched against whole community names, never against a
// place that a community's label mentions: "Tamil" matches "Tamilians" and
// the "Tamilian" of "South Indians (Tamilian, Kannadiga, Andhrite,
// Keralite)", but not "Arya Vysya (Coimbatore, Tamil Nadu)".
//
// A community's names are its label outside parentheses, split at commas
// and "and" ("Parsi, Muslim and tribal populations" → "Parsi", "Muslim",
// "tribal populations"), its aliases, and the items of a parenthetical
// unless the parenthetical names a state or union territory of the
// knowledge, or a word of the community's region (then it is a place). An
// ethnicity matches a name when both have the same number of words and
// each ethnicity word equals the name's word or is a prefix of it of four
// letters or more ("Tamil" → "Tamilians"), or the other way round.

var (
	reParen   = regexp.MustCompile(`\(([^)]*)\)`)
	reListSep = regexp.MustCompile(`\s*,\s*|\s+and\s+`)
)

// communityNames returns the whole names of c as normalised word
// sequences.
func communityNames(k *engine.Knowledge, c *engine.Community) [][]string {
	states := map[string]bool{}
	for _, s := range k.States {
		states[engine.NormaliseKey(s.Name)] = true
		for _, a := range s.Aliases {
			states[engine.NormaliseKey(a)] = true
		}
	}
	region := map[string]bool{}
	for _, w := range strings.Fields(engine.NormaliseKey(c.Region)) {
		region[w] = true
	}
	isPlace := func(item string) bool {
		key := engine.NormaliseKey(item)
		if states[key] {
			return true
		}
		for st := range states {
			if st != "" && strings.Contains(" "+key+" ", " "+st+" ") {
				return true
			}
		}
		return false
	}
	var out [][]string
	addList := func(text string) {
		for _, item := range reListSep.Split(text, -1) {
			if ws := strings.Fields(engine.NormaliseKey(item)); len(ws) > 0 {
				out = append(out, ws)
			}
		}
	}
	for _, label := range append([]string{c.Name}, c.Aliases...) {
		outside := strings.TrimSpace(reParen.ReplaceAllString(label, " "))
		addList(outside)
		for _, m := range reParen.FindAllStringSubmatch(label, -1) {
			items := reListSep.Split(m[1], -1)
			place := false
			for _, it := range items {
				if isPlace(it) {
					place = true
				}
				for _, w := range strings.Fields(engine.NormaliseKey(it)) {
					if region[w] && !regionGeneric[w] {
						place = true
					}
				}
			}
			if !place {
				addList(m[1])
			}
		}
	}
	return out
}

// regionGeneric are region-field words that say nothing about a place
// being meant ("India (region not stated …)").
var regionGeneric = map[string]bool{"india": true, "indian": true, "region": true, "not": true, "stated": true, "in": true, "a": true, "the": true, "of": true, "and": true}

// matchCommunities returns the communities one of whose whole names the
// ethnicity matches.
func (k *Selector) MatchCommunities(ethnicity string) []*engine.Community {
	words := strings.Fields(engine.NormaliseKey(ethnicity))
	if len(words) == 0 {
		return nil
	}
	var out []*engine.Community
	for i, c := range k.idx.communities {
		for _, name := range k.idx.communityNames[i] {
			if wordsMatch(words, name) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

func wordsMatch(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if len(x) >= 4 && strings.HasPrefix(y, x) || len(y) >= 4 && strings.HasPrefix(x, y) {
			continue
		}
		return false
	}
	return true
}
