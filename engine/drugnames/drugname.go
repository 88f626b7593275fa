package drugnames

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pgxsafety/pgxsafety/engine"
)

// This file is the one drug-name reader of the service. REST (/pgx/check,
// /pgx/batch), the lab CSV, the CLI and the CDS Hooks adapter (through
// fhir's medication mapper) all read a drug through ReadDrug or
// DrugsByCode, so a name means the same drug everywhere.

// nameEntry is one indexed name.
type nameEntry struct {
	label   string   // the name as the knowledge writes it
	via     string   // how a match through it is described
	rank    int      // lower wins: 0 drug name, 1 salt/synonym/abbreviation, 2 brand, 3 combination
	drugs   []string // covered drugs it names
	ingr    []string // combination ingredients as listed
	confirm string   // non-empty: the reason a match needs confirmation (it is not checked)
	twoWays bool     // confirm because the key has more than one meaning (twoMeanings)
	caution string   // non-empty: checked, with this note (the name is also an English word)
	regimen bool     // a row of the regimen-abbreviation table (engine.NameKindRegimen)
	sources []string // the row's source ids (regimen rows: named in the reading's note)
}

// nameIndex is the drug-name index built by Build.
type nameIndex struct {
	byKey map[string][]*nameEntry
	// seqs maps a first token to the token sequences of trusted names
	// (for finding names inside free text), longest first.
	seqs map[string][]nameSeq
	// suggest are the keys offered as near misses, with their drugs.
	suggest []suggestKey
	rxnorm  map[string][]string
	atc     map[string][]string
}

type nameSeq struct {
	tokens []string
	e      *nameEntry
}

type suggestKey struct {
	key   string
	drugs []string
	// generic: the key is a drug's own name, a generic synonym or a salt
	// (an INN-like name a misspelling can be corrected to); otherwise a
	// brand (a coined word: see didYouMean).
	generic bool
}

// formWords are strength, dose-form, release and route words; they are set
// aside when a name is read ("Clopidogrel 75 MG Oral Tablet"). This is
// prescription-writing convention, not clinical content.
var formWords = map[string]bool{
	"mg": true, "mcg": true, "ug": true, "µg": true, "g": true, "gm": true, "gram": true, "grams": true, "ml": true,
	"l": true, "iu": true, "unit": true, "units": true, "meq": true, "mmol": true, "%": true, "w": true, "v": true,
	"tablet": true, "tablets": true, "tab": true, "tabs": true, "capsule": true, "capsules": true, "cap": true,
	"caps": true, "injection": true, "injectable": true, "inj": true, "solution": true, "soln": true,
	"suspension": true, "susp": true, "syrup": true, "elixir": true, "liquid": true, "oral": true, "orally": true,
	"iv": true, "intravenous": true, "im": true, "intramuscular": true, "sc": true, "subcutaneous": true, "po": true,
	"topical": true, "cream": true, "ointment": true, "gel": true, "drops": true, "drop": true, "ophthalmic": true,
	"film": true, "coated": true, "fc": true, "extended": true, "release": true, "delayed": true, "modified": true,
	"prolonged": true, "sustained": true, "controlled": true, "er": true, "sr": true, "xr": true, "xl": true,
	"cr": true, "dr": true, "mr": true, "pr": true, "ec": true, "la": true, "odt": true, "dt": true, "chewable": true,
	"dispersible": true, "disintegrating": true, "effervescent": true, "enteric": true, "kit": true, "pack": true,
	"strip": true, "vial": true, "ampoule": true, "ampule": true, "powder": true, "granules": true, "sachet": true,
	"spray": true, "patch": true, "transdermal": true, "inhalation": true, "inhaler": true, "suppository": true,
	"rectal": true, "vaginal": true, "for": true, "of": true, "as": true, "per": true, "each": true, "in": true,
	"containing": true, "contains": true, "hr": true, "hour": true, "day": true, "daily": true, "once": true,
	"twice": true, "bd": true, "bid": true, "od": true, "tds": true, "tid": true, "qd": true, "prn": true,
	"x": true,
}

var (
	reNumber    = regexp.MustCompile(`^[0-9]+([.,][0-9]+)?$`)
	reStrength  = regexp.MustCompile(`^[0-9]+([.,][0-9]+)?(mg|mcg|ug|µg|g|gm|ml|iu|meq|mmol|%|mg/ml|mcg/ml|units?)$`)
	reATC       = regexp.MustCompile(`^[A-Z][0-9]{2}[A-Z]{2}[0-9]{2}$`)
	reDigits    = regexp.MustCompile(`^[0-9]+$`)
	reCodeForm  = regexp.MustCompile(`(?i)^\s*(rxnorm|rxcui|atc)\s*[:# ]\s*([A-Za-z0-9]+)\s*$`)
	reSystemBar = regexp.MustCompile(`^\s*(\S+)\|([A-Za-z0-9]+)\s*$`)
	// comboSep separates the ingredients of a combination written out.
	comboSep = regexp.MustCompile(`\s*(?:\+|/|&|;|,|\band\b|\bwith\b|\bplus\b)\s*`)
)

// nameTokens lower-cases s and splits it into tokens of letters and digits
// (a decimal point or comma between digits stays in its number; "%" is a
// token).
func nameTokens(s string) []string {
	s = strings.ToLower(s)
	// A token is a run of letters and digits, with '.' or ',' between two
	// digits; every token is a substring of s (an invalid byte reads as
	// utf8.RuneError, not a letter, and ends a token).
	var out []string
	beg := -1 // start of the token being read, -1 outside one
	prev := rune(-1)
	for i, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if beg < 0 {
				beg = i
			}
		case (r == '.' || r == ',') && beg >= 0 && unicode.IsDigit(prev) && i+1 < len(s) && unicode.IsDigit(nextRune(s[i+1:])):
		case r == '%':
			if beg >= 0 {
				out = append(out, s[beg:i])
				beg = -1
			}
			out = append(out, "%")
		default:
			if beg >= 0 {
				out = append(out, s[beg:i])
				beg = -1
			}
		}
		prev = r
	}
	if beg >= 0 {
		out = append(out, s[beg:])
	}
	return out
}

// nextRune is the first rune of s as a rune range over s reads it.
func nextRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// stripForm removes strength, dose-form and route tokens; it returns the
// kept tokens and the removed ones. Everything is kept when everything
// would be removed.
func stripForm(tokens []string) (kept, removed []string) {
	for _, t := range tokens {
		if formWords[t] || reNumber.MatchString(t) || reStrength.MatchString(t) {
			removed = append(removed, t)
			continue
		}
		kept = append(kept, t)
	}
	if len(kept) == 0 {
		return tokens, nil
	}
	return kept, removed
}

// onlyForm reports whether every token is a strength, dose-form or route
// token.
func onlyForm(tokens []string) bool {
	for _, t := range tokens {
		if !(formWords[t] || reNumber.MatchString(t) || reStrength.MatchString(t)) {
			return false
		}
	}
	return true
}

// stripSalt removes salt words.
func stripSalt(tokens []string) (kept, removed []string) {
	for _, t := range tokens {
		if saltWords[t] {
			removed = append(removed, t)
			continue
		}
		kept = append(kept, t)
	}
	if len(kept) == 0 {
		return tokens, nil
	}
	return kept, removed
}

// nameKey is the lookup key of a token sequence: the tokens joined without
// separators, so "6-MP", "6 MP" and "6MP" meet.
func nameKey(tokens []string) string { return strings.Join(tokens, "") }

// buildNameIndex indexes every drug name, synonym, salt, brand, brand stem,
// abbreviation and combination product of the knowledge, and its RxNorm and
// ATC codes.
func buildNameIndex(k *engine.Knowledge) *nameIndex {
	ni := &nameIndex{byKey: map[string][]*nameEntry{}, seqs: map[string][]nameSeq{}, rxnorm: map[string][]string{}, atc: map[string][]string{}}
	add := func(name string, e *nameEntry, trusted bool) {
		toks := nameTokens(name)
		if len(toks) == 0 {
			return
		}
		keys := []string{nameKey(toks)}
		kept, _ := stripForm(toks)
		keys = append(keys, nameKey(kept))
		for i, key := range keys {
			if i > 0 && key == keys[0] {
				continue
			}
			ke := e
			if i > 0 && e.confirm == "" && len([]rune(key)) <= 3 {
				// "PAN 40 Tablet" without its strength and form is "PAN",
				// "6 MP" without its number "MP": short, so unsafe alone.
				c := *e
				c.confirm = fmt.Sprintf("%q is short once its strength and form are set aside (%s) and may mean something else", strings.Join(kept, " "), e.label)
				ke = &c
			}
			dup := false
			for _, x := range ni.byKey[key] {
				if x == ke || (x.label == ke.label && x.confirm == ke.confirm && slices.Equal(x.drugs, ke.drugs)) {
					dup = true
				}
			}
			if !dup {
				ni.byKey[key] = append(ni.byKey[key], ke)
			}
		}
		// Free text is searched only for names that stay longer than three
		// characters once strength and form are set aside: "ATV 10mg
		// Tablet" is "ATV" there, which the "ATV/r" of "ATV/r 300/100"
		// would otherwise match.
		if trusted && e.confirm == "" && e.caution == "" && len([]rune(nameKey(kept))) > 3 {
			ni.seqs[kept[0]] = append(ni.seqs[kept[0]], nameSeq{tokens: kept, e: e})
		}
	}
	for i := range k.Drugs {
		d := &k.Drugs[i]
		add(d.Name, &nameEntry{label: d.Name, via: "name", rank: 0, drugs: []string{d.Name}}, true)
		for _, s := range d.Synonyms {
			add(s, &nameEntry{label: s, via: "generic-synonym", rank: 1, drugs: []string{d.Name}}, true)
		}
		for _, c := range d.RxNormCUIs {
			ni.rxnorm[c] = appendUnique(ni.rxnorm[c], d.Name)
		}
		for _, c := range d.ATCCodes {
			c = strings.ToUpper(c)
			ni.atc[c] = appendUnique(ni.atc[c], d.Name)
		}
	}
	for i := range k.DrugNames {
		n := &k.DrugNames[i]
		if n.Kind == engine.NameKindRegimen {
			e := &nameEntry{label: n.Name, via: n.Kind, rank: 1, drugs: n.Drugs, ingr: n.Ingredients, regimen: true, sources: n.SourceIDs}
			e.caution = regimenCaution(n)
			add(n.Name, e, e.caution == "")
			continue
		}
		e := &nameEntry{label: n.Name, via: n.Kind, drugs: n.Drugs, ingr: n.Ingredients, sources: n.SourceIDs}
		switch n.Kind {
		case engine.NameKindSalt, engine.NameKindGenericSynonym, engine.NameKindAbbreviation:
			e.rank = 1
		case engine.NameKindBrand:
			e.rank = 2
		default:
			e.rank = 3
		}
		e.confirm, e.caution = nameConfirmation(n, false)
		add(n.Name, e, n.Kind != engine.NameKindCombination)
		if n.Stem != "" && !strings.EqualFold(n.Stem, n.Name) {
			se := *e
			se.label = n.Stem
			se.confirm, se.caution = nameConfirmation(n, true)
			add(n.Stem, &se, n.Kind != engine.NameKindCombination)
		}
	}
	ni.twoMeanings()
	for first := range ni.seqs {
		ss := ni.seqs[first]
		sort.SliceStable(ss, func(i, j int) bool { return len(ss[i].tokens) > len(ss[j].tokens) })
	}
	keys := make([]string, 0, len(ni.byKey))
	for key := range ni.byKey {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		var drugs []string
		ok, generic := false, false
		for _, e := range ni.byKey[key] {
			if e.confirm == "" && e.rank <= 2 && !e.regimen && len(e.drugs) > 0 {
				ok = true
				generic = generic || e.via == "name" || e.via == engine.NameKindGenericSynonym || e.via == engine.NameKindSalt
				for _, d := range e.drugs {
					drugs = appendUnique(drugs, d)
				}
			}
		}
		if ok && len(key) >= 4 {
			ni.suggest = append(ni.suggest, suggestKey{key: key, drugs: drugs, generic: generic})
		}
	}
	return ni
}

// regimenCaution is the note a reading through a regimen-table row
// carries: a short abbreviation ("EFV", "3TC") or one that is also an
// English word ("RIPE") is read when it is the whole input, never
// looked for inside free text, and the answer asks to confirm it.
func regimenCaution(n *engine.DrugName) string {
	what := strings.Join(n.Ingredients, " + ")
	for _, f := range n.Flags {
		switch f {
		case engine.NameFlagEnglishWord:
			return fmt.Sprintf("%q is also an ordinary English word; it was read as the regimen abbreviation for %s — confirm", n.Name, what)
		case engine.NameFlagShort:
			return fmt.Sprintf("%q is a short abbreviation; it was read as %s by the regimen-abbreviation table — confirm", n.Name, what)
		}
	}
	return ""
}

// twoMeanings refuses to guess between the meanings of an abbreviation:
// when a key of a regimen-table row is also a name of anything else that
// stands for other drugs ("ATV": atazanavir in the HIV abbreviation list,
// and the Indian atorvastatin brand "ATV 10mg Tablet"), every entry of the
// key needs confirmation, naming each meaning; nothing is checked and
// did_you_mean lists the covered drugs of every meaning.
func (ni *nameIndex) twoMeanings() {
	for key, es := range ni.byKey {
		var reg *nameEntry
		for _, e := range es {
			if e.regimen {
				reg = e
				break
			}
		}
		if reg == nil {
			continue
		}
		var meanings []string
		differ := false
		for _, e := range es {
			m := meaningOf(e)
			if !slices.Contains(meanings, m) {
				meanings = append(meanings, m)
			}
			if !sameSet(e.drugs, reg.drugs) || (e.regimen && !sameSet(e.ingr, reg.ingr)) {
				differ = true
			}
		}
		if !differ {
			continue
		}
		why := fmt.Sprintf("%q has more than one meaning (%s) and was not guessed", reg.label, strings.Join(meanings, "; "))
		out := make([]*nameEntry, len(es))
		for i, e := range es {
			c := *e
			c.confirm, c.caution, c.twoWays = why, "", true
			out[i] = &c
		}
		ni.byKey[key] = out
		for first, ss := range ni.seqs {
			ni.seqs[first] = slices.DeleteFunc(ss, func(sq nameSeq) bool { return nameKey(sq.tokens) == key })
		}
	}
}

// meaningOf describes what an entry reads as, for twoMeanings' note.
func meaningOf(e *nameEntry) string {
	if e.regimen {
		return fmt.Sprintf("the abbreviation for %s", strings.Join(e.ingr, " + "))
	}
	return fmt.Sprintf("the %s %q of %s", e.via, e.label, strings.Join(e.drugs, " + "))
}

// sameSet reports whether a and b hold the same strings, case aside.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !containsFold(b, x) {
			return false
		}
	}
	return true
}

func appendUnique(ss []string, s string) []string {
	for _, x := range ss {
		if x == s {
			return ss
		}
	}
	return append(ss, s)
}

// nameConfirmation applies the sources' flags to a match through n (or
// its stem). A short name or stem (three characters or fewer: "ctx",
// "MP", "PAN") needs confirmation and is not checked, except a short
// abbreviation that holds a digit (5FU, 6 MP), which is neither a word nor
// a route abbreviation. A name or stem that is also an English word
// ("Horizon", "Trend") is checked when it is the whole input, with a
// caution, and is never looked for inside free text.
func nameConfirmation(n *engine.DrugName, stem bool) (confirm, caution string) {
	has := func(f string) bool {
		for _, x := range n.Flags {
			if x == f {
				return true
			}
		}
		return false
	}
	if stem {
		if len([]rune(strings.TrimSpace(n.Stem))) <= 3 {
			return fmt.Sprintf("%q is a short stem of the product %q and may mean something else", n.Stem, n.Name), ""
		}
		if has(engine.NameFlagStemEnglishWord) {
			return "", fmt.Sprintf("%q is also an ordinary English word; it was read as the product %q — confirm", n.Stem, n.Name)
		}
		return "", ""
	}
	if has(engine.NameFlagShort) && !(n.Kind == engine.NameKindAbbreviation && strings.IndexFunc(n.Name, unicode.IsDigit) >= 0) {
		return fmt.Sprintf("%q is a short %s that may mean something else", n.Name, n.Kind), ""
	}
	if has(engine.NameFlagEnglishWord) {
		return "", fmt.Sprintf("%q is also an ordinary English word; it was read as a %s — confirm", n.Name, n.Kind)
	}
	return "", ""
}

// DrugsByCode returns the covered drugs a drug code names: RxNorm CUIs and
// ATC codes of the knowledge. system is a FHIR system URL or one of
// "RxNorm", "ATC" (any case).
func (k *Reader) DrugsByCode(system, code string) []string {
	code = strings.TrimSpace(code)
	switch strings.ToLower(strings.TrimSpace(system)) {
	case engine.SystemRxNormURL, "rxnorm", "rxcui":
		return append([]string(nil), k.idx.names.rxnorm[code]...)
	case engine.SystemATCURL, "atc":
		return append([]string(nil), k.idx.names.atc[strings.ToUpper(code)]...)
	}
	return nil
}

// ReadDrug reads a drug as it is written in practice: a generic name, a
// salt, a synonym, an abbreviation, a brand or trade name (US and Indian
// markets), a combination product or an ingredient list ("clopidogrel +
// aspirin"), with or without strength, dose form and route
// ("Clopidogrel 75 MG Oral Tablet"), or an RxNorm or ATC code
// ("rxnorm:32968", "ATC B01AC04", "B01AC04"). It never guesses: a name the
// sources flag as an English word or a short abbreviation is not checked
// (status needs-confirmation), and a name that is not found gets near
// misses in DidYouMean.
func (k *Reader) ReadDrug(input string) engine.DrugReading {
	return k.readDrug(input, true)
}

// readDrug is ReadDrug; suggest false leaves DidYouMean empty (the near
// miss search is the costliest step, and Drug, which reads knowledge
// names for alternatives and ingredients, never uses it).
func (k *Reader) readDrug(input string, suggest bool) engine.DrugReading {
	r := engine.DrugReading{Input: input, Drugs: []string{}}
	s := strings.TrimSpace(input)
	if s == "" {
		r.Status = engine.DrugStatusNotRecognised
		return r
	}
	if k.readCode(s, &r) {
		return r
	}
	toks := nameTokens(s)
	if e, ignored, ok := k.lookupTokens(toks); ok {
		k.fromEntries(&r, e)
		r.Ignored = ignored
		return r
	}
	// An ingredient list written out.
	if parts := comboSep.Split(s, -1); len(parts) > 1 {
		var found bool
		var unread []string
		var ignored []string
		for _, p := range parts {
			pt := nameTokens(p)
			if len(pt) == 0 {
				continue
			}
			if onlyForm(pt) {
				ignored = append(ignored, pt...)
				continue
			}
			es, ign, ok := k.lookupTokens(pt)
			if !ok {
				// A name inside the part ("Omeprazole 20 MG (test text)").
				var rest []string
				es, ign, rest = k.scanEntries(pt)
				if len(es) == 0 {
					unread = append(unread, strings.TrimSpace(p))
					continue
				}
				if len(rest) > 0 {
					r.Notes = append(r.Notes, fmt.Sprintf("words not read as a drug: %s", strings.Join(rest, " ")))
				}
			}
			if confirmOnly(es) {
				unread = append(unread, strings.TrimSpace(p))
				r.Notes = append(r.Notes, es[0].confirm+"; it was not checked")
				continue
			}
			if len(entryDrugs(es)) == 0 {
				// A regimen-table abbreviation of drugs the knowledge
				// does not cover ("TDF" of "TDF/FTC/EFV").
				unread = append(unread, strings.TrimSpace(p))
				r.Notes = append(r.Notes, fmt.Sprintf("%q was read by the regimen-abbreviation table as %s, which has no pharmacogenomic guidance in the knowledge; it was not checked",
					strings.TrimSpace(p), strings.Join(es[0].ingr, " + ")))
				continue
			}
			for _, x := range es {
				if x.caution != "" {
					r.Notes = append(r.Notes, x.caution)
					break
				}
			}
			found = true
			ignored = append(ignored, ign...)
			for _, d := range entryDrugs(es) {
				r.Drugs = appendUnique(r.Drugs, d)
			}
			r.Ingredients = append(r.Ingredients, strings.TrimSpace(p))
		}
		if found {
			r.Via = "ingredient list"
			r.Ignored = ignored
			r.Unrecognised = unread
			r.Status = engine.DrugStatusRecognised
			if len(unread) > 0 {
				r.Status = engine.DrugStatusPartial
			}
			return r
		}
	}
	// Names found inside free text ("Clopidogrel 75 MG Oral Tablet [Plavix]").
	if k.scan(toks, &r) {
		return r
	}
	r.Status = engine.DrugStatusNotRecognised
	if suggest {
		r.DidYouMean = k.didYouMean(s)
	}
	return r
}

// readCode reads the code forms of ReadDrug.
func (k *Reader) readCode(s string, r *engine.DrugReading) bool {
	system, code := "", ""
	// Each expression runs only on input that holds the character it
	// needs (the separator of "rxnorm:123", the bar of "system|code"), and
	// the bare-code expressions only after the code table knows the input.
	if m := reCodeFormIn(s); m != nil {
		system, code = strings.ToLower(m[1]), m[2]
	} else if m := reSystemBarIn(s); m != nil {
		system, code = m[1], m[2]
	} else if up := strings.ToUpper(s); len(k.idx.names.atc[up]) > 0 && reATC.MatchString(up) {
		system, code = "atc", up
	} else if len(k.idx.names.rxnorm[s]) > 0 && reDigits.MatchString(s) {
		system, code = "rxnorm", s
	}
	if system == "" {
		return false
	}
	drugs := k.DrugsByCode(system, code)
	label := "RxNorm"
	if strings.EqualFold(system, "atc") || strings.EqualFold(system, engine.SystemATCURL) {
		label, code = "ATC", strings.ToUpper(code)
	}
	r.Via, r.Matched = label, label+" "+code
	if len(drugs) == 0 {
		r.Status = engine.DrugStatusNotRecognised
		r.Notes = append(r.Notes, fmt.Sprintf("%s code %s names no drug of the knowledge", label, code))
		return true
	}
	sort.Strings(drugs)
	r.Drugs, r.Status = drugs, engine.DrugStatusRecognised
	if len(drugs) > 1 {
		r.Notes = append(r.Notes, fmt.Sprintf("%s code %s names more than one drug of the knowledge; each is checked", label, code))
	}
	return true
}

// reCodeFormIn is reCodeForm.FindStringSubmatch(s), skipped when s has
// none of the separators ':', '#' and ' ' that every match holds.
func reCodeFormIn(s string) []string {
	if !strings.ContainsAny(s, ":# ") {
		return nil
	}
	return reCodeForm.FindStringSubmatch(s)
}

// reSystemBarIn is reSystemBar.FindStringSubmatch(s), skipped when s has
// no '|'.
func reSystemBarIn(s string) []string {
	if strings.IndexByte(s, '|') < 0 {
		return nil
	}
	return reSystemBar.FindStringSubmatch(s)
}

// lookupTokens finds the best entries for a whole token sequence: as
// written, without strength/form/route words, then without salt words.
func (k *Reader) lookupTokens(toks []string) ([]*nameEntry, []string, bool) {
	if len(toks) == 0 {
		return nil, nil, false
	}
	if es := best(k.idx.names.byKey[nameKey(toks)]); es != nil {
		return es, nil, true
	}
	kept, removed := stripForm(toks)
	if es := best(k.idx.names.byKey[nameKey(kept)]); es != nil {
		return es, removed, true
	}
	noSalt, salts := stripSalt(kept)
	if len(salts) > 0 {
		if es := best(k.idx.names.byKey[nameKey(noSalt)]); es != nil {
			return es, append(removed, salts...), true
		}
	}
	return nil, nil, false
}

// best returns the entries of the lowest rank, trusted ones first: a
// flagged name is used only when nothing trusted has that key.
func best(es []*nameEntry) []*nameEntry {
	if len(es) == 0 {
		return nil
	}
	if allTrustedOneRank(es) {
		// Every entry stays: the index's slice, capped so that an append
		// by the caller cannot write into it.
		return es[:len(es):len(es)]
	}
	var trusted []*nameEntry
	for _, e := range es {
		if e.confirm == "" {
			trusted = append(trusted, e)
		}
	}
	if len(trusted) > 0 {
		es = trusted
	} else if es[0].twoWays {
		return es // every meaning is named
	}
	minRank := es[0].rank
	for _, e := range es {
		minRank = min(minRank, e.rank)
	}
	var out []*nameEntry
	for _, e := range es {
		if e.rank == minRank {
			out = append(out, e)
		}
	}
	return out
}

// allTrustedOneRank reports whether every entry of es is trusted and of
// es[0]'s rank (best keeps them all).
func allTrustedOneRank(es []*nameEntry) bool {
	for _, e := range es {
		if e.confirm != "" || e.rank != es[0].rank {
			return false
		}
	}
	return true
}

func confirmOnly(es []*nameEntry) bool {
	for _, e := range es {
		if e.confirm == "" {
			return false
		}
	}
	return true
}

func entryDrugs(es []*nameEntry) []string {
	var out []string
	for _, e := range es {
		for _, d := range e.drugs {
			out = appendUnique(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// fromEntries fills r from the matched entries of one name.
func (k *Reader) fromEntries(r *engine.DrugReading, es []*nameEntry) {
	e := es[0]
	for _, x := range es[1:] {
		// Name the shortest matching label ("Clopilet" rather than
		// "Clopilet 150 Tablet").
		if len(nameTokens(x.label)) < len(nameTokens(e.label)) && x.confirm == "" {
			e = x
		}
	}
	if confirmOnly(es) {
		for _, x := range es {
			if x.regimen {
				e = x // an abbreviation with two meanings
				break
			}
		}
	}
	r.Matched, r.Via = e.label, e.via
	if confirmOnly(es) {
		r.Status = engine.DrugStatusNeedsConfirmation
		r.DidYouMean = entryDrugs(es)
		r.Notes = append(r.Notes, e.confirm+"; it was not checked: write the drug name ("+strings.Join(r.DidYouMean, " or ")+") to check it")
		return
	}
	r.Drugs = entryDrugs(es)
	r.Status = engine.DrugStatusRecognised
	for _, x := range es {
		if x.caution != "" {
			r.Notes = append(r.Notes, x.caution)
			break
		}
	}
	for _, x := range es {
		for _, in := range x.ingr {
			if !containsFold(r.Ingredients, in) {
				r.Ingredients = append(r.Ingredients, in)
			}
		}
	}
	if len(es) > 1 && len(r.Drugs) > 1 && e.via != engine.NameKindCombination {
		r.Notes = append(r.Notes, fmt.Sprintf("the name %q is listed for more than one drug (%s); each is checked", e.label, strings.Join(r.Drugs, ", ")))
	}
	for _, x := range es {
		if x.regimen {
			k.regimenReading(r, x)
			return
		}
	}
	if len(r.Ingredients) > 0 {
		r.Via = engine.NameKindCombination
		// Ingredients that are not among the covered drugs.
		for _, in := range r.Ingredients {
			if !k.ingredientCovered(in, r.Drugs) {
				r.Unrecognised = append(r.Unrecognised, in)
			}
		}
		if len(r.Unrecognised) > 0 {
			r.Status = engine.DrugStatusPartial
			r.Notes = append(r.Notes, fmt.Sprintf("combination product: %s checked; %s not checked (no pharmacogenomic guidance in the knowledge)",
				strings.Join(r.Drugs, ", "), strings.Join(r.Unrecognised, ", ")))
		}
	}
}

// regimenReading completes the reading of a regimen-table abbreviation:
// its ingredients are the table's expansion; those the knowledge covers
// are checked, the others are listed as not checked. An abbreviation none
// of whose ingredients is covered ("HRZE", "3TC") is not-recognised —
// nothing was checked — with the expansion and the reason in the notes.
func (k *Reader) regimenReading(r *engine.DrugReading, e *nameEntry) {
	r.Via = engine.NameKindRegimen
	r.Ingredients = append([]string(nil), e.ingr...)
	r.Drugs = append([]string{}, e.drugs...)
	sort.Strings(r.Drugs)
	r.Unrecognised = nil
	for _, in := range e.ingr {
		if !slices.Contains(e.drugs, in) {
			r.Unrecognised = append(r.Unrecognised, in)
		}
	}
	src := ""
	if len(e.sources) > 0 {
		src = " (source: " + strings.Join(e.sources, ", ") + ")"
	}
	read := fmt.Sprintf("%q was read by the regimen-abbreviation table as %s%s", e.label, strings.Join(e.ingr, " + "), src)
	switch {
	case len(r.Drugs) == 0:
		r.Status = engine.DrugStatusNotRecognised
		r.Notes = append(r.Notes, read+"; none of these has pharmacogenomic guidance in the knowledge: nothing was checked")
	case len(r.Unrecognised) > 0:
		r.Status = engine.DrugStatusPartial
		r.Notes = append(r.Notes, fmt.Sprintf("%s; %s checked; %s not checked (no pharmacogenomic guidance in the knowledge)",
			read, strings.Join(r.Drugs, ", "), strings.Join(r.Unrecognised, ", ")))
	default:
		r.Notes = append(r.Notes, read)
	}
}

// ingredientCovered reports whether a listed ingredient is one of drugs.
func (k *Reader) ingredientCovered(ingredient string, drugs []string) bool {
	es, _, ok := k.lookupTokens(nameTokens(ingredient))
	if !ok {
		return false
	}
	for _, d := range entryDrugs(es) {
		if slices.Contains(drugs, d) {
			return true
		}
	}
	return false
}

// scanEntries finds trusted names inside free text, longest first. It
// returns the entries in the order found, the strength/form/salt words set
// aside, and the other words left over.
func (k *Reader) scanEntries(toks []string) (found []*nameEntry, removed, rest []string) {
	kept, removed := stripForm(toks)
	for i := 0; i < len(kept); i++ {
		matched := false
		for _, sq := range k.idx.names.seqs[kept[i]] {
			if i+len(sq.tokens) > len(kept) {
				continue
			}
			ok := true
			for j, t := range sq.tokens {
				if kept[i+j] != t {
					ok = false
					break
				}
			}
			if ok {
				found = append(found, sq.e)
				i += len(sq.tokens) - 1
				matched = true
				break
			}
		}
		if !matched {
			if saltWords[kept[i]] {
				removed = append(removed, kept[i])
			} else {
				rest = append(rest, kept[i])
			}
		}
	}
	return found, removed, rest
}

// scan reads a drug named inside free text ("Clopidogrel 75 MG Oral Tablet
// [Plavix]"); the words left over are noted.
func (k *Reader) scan(toks []string, r *engine.DrugReading) bool {
	found, removed, rest := k.scanEntries(toks)
	if len(found) == 0 {
		return false
	}
	var labels []string
	for _, e := range found {
		labels = appendUnique(labels, e.label)
		for _, d := range e.drugs {
			r.Drugs = appendUnique(r.Drugs, d)
		}
	}
	r.Via, r.Matched = "name in text", strings.Join(labels, "; ")
	r.Status = engine.DrugStatusRecognised
	r.Ignored = removed
	if len(rest) > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("words not read as a drug: %s", strings.Join(rest, " ")))
	}
	return true
}

// didYouMean offers covered drugs the input may have meant. The offer is
// a question and never a reading: the input stays not-recognised, nothing
// is checked for the drugs offered, and the answer says so. The rule:
//
//   - Generic names (a drug's name, a generic synonym or a salt) are
//     corrected for misspelling: within two edits (three for inputs longer
//     than eight characters), or the input is the first five or more
//     letters of the name ("clopidog"). A name found inside the other
//     after its first letter ("omeprazole" in "esomeprazole",
//     "venlafaxine" in "desvenlafaxine") is a different substance (a
//     prefixed INN), never a misspelling.
//   - Brand names are coined words: two brands a letter or two apart are
//     routinely different products with different ingredients ("Cytotam"
//     and "Citopam", "Oxotin" and "Oxepin"). A brand's drug is offered only
//     for a one-edit slip of a name of five or more letters, and only when
//     no name of another drug is within two edits of the input.
//   - Abbreviations, regimen abbreviations and combination products are
//     never offered.
//
// Best first (fewest edits, then name), at most three.
func (k *Reader) didYouMean(name string) []string {
	toks, _ := stripForm(nameTokens(name))
	n := nameKey(toks)
	if n == "" {
		return nil
	}
	limit := 2
	if len(n) > 8 {
		limit = 3
	}
	nr := []rune(n)
	prev := make([]int, 64)
	cur := make([]int, 64)
	type near struct {
		drugs   []string
		dist    int
		generic bool
	}
	var nears []near
	for _, sk := range k.idx.names.suggest {
		prefix := sk.generic && len(n) >= 5 && strings.HasPrefix(sk.key, n)
		if abs(len(sk.key)-len(n)) > limit && !prefix {
			continue
		}
		d, ok := withinDistance(nr, []rune(sk.key), limit, &prev, &cur)
		if !ok {
			if !prefix {
				continue
			}
			d = limit // "clopid" → clopidogrel
		}
		if strings.Index(n, sk.key) > 0 || strings.Index(sk.key, n) > 0 {
			continue // esomeprazole / omeprazol(e): another substance
		}
		nears = append(nears, near{drugs: sk.drugs, dist: d, generic: sk.generic})
	}
	bestDist := map[string]int{}
	offer := func(drugs []string, d int) {
		for _, drug := range drugs {
			if old, ok := bestDist[drug]; !ok || d < old {
				bestDist[drug] = d
			}
		}
	}
	for _, x := range nears {
		switch {
		case x.generic:
			offer(x.drugs, x.dist)
		case x.dist <= 1 && len(nr) >= 5:
			alone := true
			for _, y := range nears {
				if y.dist <= 2 && !sameSet(y.drugs, x.drugs) {
					alone = false
				}
			}
			if alone {
				offer(x.drugs, x.dist)
			}
		}
	}
	out := make([]string, 0, len(bestDist))
	for d := range bestDist {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if bestDist[out[i]] != bestDist[out[j]] {
			return bestDist[out[i]] < bestDist[out[j]]
		}
		return out[i] < out[j]
	})
	if len(out) > 3 {
		out = out[:3]
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func containsFold(ss []string, s string) bool {
	for _, x := range ss {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// withinDistance returns the Levenshtein distance of a and b when it is at
// most limit; it stops as soon as every cell of a row exceeds limit. prev
// and cur are reused buffers.
func withinDistance(a, b []rune, limit int, prev, cur *[]int) (int, bool) {
	if len(b)+1 > len(*prev) {
		*prev, *cur = make([]int, len(b)+1), make([]int, len(b)+1)
	}
	p, c := (*prev)[:len(b)+1], (*cur)[:len(b)+1]
	for j := range p {
		p[j] = j
	}
	for i := 1; i <= len(a); i++ {
		c[0] = i
		rowMin := c[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			c[j] = min(p[j]+1, c[j-1]+1, p[j-1]+cost)
			rowMin = min(rowMin, c[j])
		}
		if rowMin > limit {
			return 0, false
		}
		p, c = c, p
	}
	if d := p[len(b)]; d <= limit {
		return d, true
	}
	return 0, false
}
