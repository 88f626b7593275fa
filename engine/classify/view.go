package classify

import (
	"slices"
	"sort"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// view indexes the parts of the knowledge the pipeline reads. It is built
// from the knowledge's tables alone (not from the engine's private
// indexes), so that the knowledge generator can apply the curation rules
// to knowledge it has not finished building.
type view struct {
	kb      *engine.Knowledge
	genes   map[string]*engine.Gene
	alleles map[string]map[string]*engine.Allele // gene → name → allele
	rsids   map[string][]*engine.RsID            // rsid → rows
	tracked map[string]*engine.TrackedVariant    // rsid → tracked variant
	pairs   map[string][]genePair                // gene → pairs, by drug name
	herbs   map[string][]*engine.HerbInteraction // drug → herb rows, knowledge order
	sources map[string]engine.Source
}

// genePair is one CPIC gene–drug pair.
type genePair struct {
	drug string
	pair *engine.DrugPair
}

func newView(kb *engine.Knowledge, sources map[string]engine.Source) *view {
	v := &view{
		kb:      kb,
		genes:   map[string]*engine.Gene{},
		alleles: map[string]map[string]*engine.Allele{},
		rsids:   map[string][]*engine.RsID{},
		tracked: map[string]*engine.TrackedVariant{},
		pairs:   map[string][]genePair{},
		herbs:   map[string][]*engine.HerbInteraction{},
		sources: sources,
	}
	if v.sources == nil {
		v.sources = make(map[string]engine.Source, len(kb.Sources))
		for _, s := range kb.Sources {
			v.sources[s.ID] = s
		}
	}
	for i := range kb.Genes {
		g := &kb.Genes[i]
		v.genes[g.Symbol] = g
		m := map[string]*engine.Allele{}
		for j := range g.Alleles {
			m[g.Alleles[j].Name] = &g.Alleles[j]
		}
		v.alleles[g.Symbol] = m
	}
	for i := range kb.RsIDs {
		r := &kb.RsIDs[i]
		v.rsids[r.RsID] = append(v.rsids[r.RsID], r)
	}
	for i := range kb.Variants {
		v.tracked[kb.Variants[i].RsID] = &kb.Variants[i]
	}
	for i := range kb.Drugs {
		d := &kb.Drugs[i]
		for j := range d.Pairs {
			p := &d.Pairs[j]
			v.pairs[p.Gene] = append(v.pairs[p.Gene], genePair{drug: d.Name, pair: p})
		}
	}
	for g := range v.pairs {
		sort.SliceStable(v.pairs[g], func(i, j int) bool { return v.pairs[g][i].drug < v.pairs[g][j].drug })
	}
	for i := range kb.Herbs {
		h := &kb.Herbs[i]
		for _, d := range h.Drugs {
			v.herbs[d] = append(v.herbs[d], h)
		}
	}
	return v
}

// CPIC allele-function terms the rules use (as the CPIC allele
// functionality tables write them).
const (
	FunctionNo        = "No function"
	FunctionDecreased = "Decreased function"
	FunctionNormal    = "Normal function"
	FunctionIncreased = "Increased function"
)

// knownFunction reports whether f is a definite CPIC function (not
// "Uncertain", "Unknown" or absent).
func knownFunction(f string) bool {
	switch f {
	case FunctionNo, FunctionDecreased, FunctionNormal, FunctionIncreased:
		return true
	}
	return false
}

// nonNormal reports whether f is No or Decreased function.
func nonNormal(f string) bool { return f == FunctionNo || f == FunctionDecreased }

// alleleFunction is what the knowledge says about the allele a variant
// defines on its own.
type alleleFunction struct {
	Alleles []string
	// Function is the function the alleles share; empty when the variant
	// defines no allele alone, when an allele has no function or when the
	// alleles disagree.
	Function  string
	SourceIDs []string
}

// soleFunction returns the CPIC alleles that (rsid, alt) of gene defines
// alone and their shared function.
func (v *view) soleFunction(gene, rsid, ref, alt string) alleleFunction {
	var out alleleFunction
	var ids []string
	for _, r := range v.rsids[rsid] {
		if r.Gene != gene || r.Ref != ref || r.Alt != alt {
			continue
		}
		ids = append(ids, r.SourceIDs...)
		out.Alleles = append(out.Alleles, r.Sole...)
	}
	funcs := map[string]bool{}
	for _, name := range out.Alleles {
		a := v.alleles[gene][name]
		if a == nil {
			funcs[""] = true
			continue
		}
		funcs[a.Function] = true
		ids = append(ids, a.SourceIDs...)
	}
	if len(funcs) == 1 {
		for f := range funcs {
			out.Function = f
		}
	}
	out.SourceIDs = uniqueSorted(ids)
	return out
}

// frequencies returns the tracked variant whose figures the knowledge
// attributes to (rsid, alt) of a protein change, or nil. A tracked row with
// one alternate allele applies to that allele; a row listing several
// applies to the one whose protein change its allele label names
// ("p.Y240C"); otherwise the figures are not attributed.
func (v *view) frequencies(c ProteinChange) *engine.TrackedVariant {
	t := v.tracked[c.RsID]
	if t == nil || t.Gene != c.Gene || t.Ref != c.Ref {
		return nil
	}
	alts := strings.Split(t.Alt, ",")
	if len(alts) == 1 {
		if alts[0] == c.Alt {
			return t
		}
		return nil
	}
	if !slices.Contains(alts, c.Alt) || c.Change == "" {
		return nil
	}
	if strings.Contains(t.AlleleLabel, "p."+c.Change) {
		return t
	}
	return nil
}

// hasLevelA reports whether gene has a CPIC level A gene–drug pair.
func (v *view) hasLevelA(gene string) bool {
	for _, p := range v.pairs[gene] {
		if p.pair.CPICLevel == "A" {
			return true
		}
	}
	return false
}

func uniqueSorted(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := slices.Clone(ss)
	sort.Strings(out)
	return slices.Compact(out)
}
