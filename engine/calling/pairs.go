package calling

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// This file finds the diplotypes a gene's sites allow: the candidate alleles,
// their pairs and scores, and the SLCO1B1 fallback.

// compatible returns the score of allele a against the sample (the number
// of its defined cells at called positions) and whether it can be one of
// the sample's haplotypes: at each called position its base is observed.
// An IUPAC ("wobble") cell scores only where it stands for a non-reference
// base; at heterozygous sites that depends on the pair, and callPairs adds
// it (PharmCAT testWobbleScoringWithMultipleSequenceMatches: CYP2B6
// *6/*18 and *9/*18 score the same).
func compatible(di *defIndex, a *matchAllele, sites []site, nonRef []int) (int, bool) {
	score := 0
	covered := 0
	for _, c := range a.cells {
		s := &sites[c.i]
		if s.missing {
			continue
		}
		if !cellMatches(c.allele, s.alleles[0]) && (len(s.alleles) < 2 || !cellMatches(c.allele, s.alleles[1])) {
			return 0, false
		}
		if isWobble(c.allele) {
			if !s.het() && s.alleles[0] != di.refCells[c.i] {
				score++
			}
		} else {
			score++
		}
		if !s.refSeen {
			covered++
		}
	}
	if !a.isRef {
		// Blank cells carry the reference base: every position where the
		// reference was not seen must be one of a's own cells.
		if covered < len(nonRef) {
			return 0, false
		}
	} else if len(nonRef) > 0 {
		return 0, false
	}
	return score, true
}

// cand is an allele that can be one of the sample's haplotypes, with its
// score (compatible).
type cand struct{ idx, score int }

// candidates appends to out, in allele order, every allele that is not
// ignored, is compatible with the sites and scores (the reference allele
// may score 0). compatible runs only on the alleles the bitsets leave: an
// allele with a base other than the reference at a homozygous reference
// site, or without a cell at a site where the reference was not seen,
// is not compatible. candidatesReference (tests) is the plain loop.
func (di *defIndex) candidates(sites []site, nonRef []int, out []cand) []cand {
	var stack [8]uint64
	var ok []uint64
	if di.words <= len(stack) {
		ok = stack[:di.words]
	} else {
		ok = make([]uint64, di.words)
	}
	for w := range ok {
		ok[w] = ^di.skip[w]
	}
	for i := range sites {
		s := &sites[i]
		if s.missing || len(s.alleles) == 0 || !allEqual(s.alleles, di.refCells[i]) {
			continue
		}
		for w, m := range di.refMismatch[i] {
			ok[w] &^= m
		}
	}
	for _, i := range nonRef {
		for w, m := range di.hasCell[i] {
			ok[w] &= m
		}
	}
	for w, set := range ok {
		for set != 0 {
			b := set & -set
			set &^= b
			ai := w*64 + bitIndex(b)
			if ai >= len(di.alleles) {
				break
			}
			a := &di.alleles[ai]
			if len(nonRef) > 0 && a.isRef {
				continue // compatible refuses it
			}
			sc, fits := compatible(di, a, sites, nonRef)
			if !fits || (sc == 0 && !a.isRef) {
				continue
			}
			out = append(out, cand{ai, sc})
		}
	}
	return out
}

type pair struct {
	a, b  int // indexes into di.alleles; b == -1 for haploid
	score int
}

// callPairs is PharmCAT's diplotype matcher: every pair of compatible
// alleles that explains each heterozygous site, scored by defined cells;
// the top-scoring pairs are reported.
func (k *Caller) callPairs(di *defIndex, sites []site, gc *GeneCall, haploid, phased bool) {
	d := di.def
	var nonRef, hetIdx []int
	for i, s := range sites {
		if s.missing {
			continue
		}
		if !s.refSeen {
			nonRef = append(nonRef, i)
		}
		if s.het() {
			hetIdx = append(hetIdx, i)
		}
	}
	var buf [16]cand
	cands := di.candidates(sites, nonRef, buf[:0])
	pairs := di.pairsOf(cands, sites, hetIdx, haploid, phased)
	if len(pairs) == 0 {
		gc.Status = CallNotCalled
		gc.NeedsReview = true
		gc.Notes = append(gc.Notes, fmt.Sprintf("no pair of %s alleles defined by PharmCAT explains the genotypes", d.Gene))
		gc.Uninterpreted = append(gc.Uninterpreted, fmt.Sprintf("%s genotypes fit no defined allele pair: %s", d.Gene, strings.Join(gc.Observations, "; ")))
		k.slco1b1Fallback(di, sites, gc)
		return
	}
	top, alts := di.rankPairs(pairs)
	if !phased && !haploid && len(d.UnphasedPriorities) > 0 {
		top, alts = unphasedPriority(d, top, alts, gc)
	}
	k.reportPairs(d.Gene, top, alts, gc)
}

// cellAt is allele ai's cell at position i (the reference cell where the
// allele defines none).
func (di *defIndex) cellAt(ai, i int) string {
	for _, c := range di.alleles[ai].cells {
		if c.i == i {
			return c.allele
		}
	}
	return di.refCells[i]
}

// pairsOf lists the candidate pairs that explain every heterozygous site
// (each candidate alone for a haploid gene), with their scores.
func (di *defIndex) pairsOf(cands []cand, sites []site, hetIdx []int, haploid, phased bool) []pair {
	var pairs []pair
	if haploid {
		for _, c := range cands {
			pairs = append(pairs, pair{c.idx, -1, c.score})
		}
		return pairs
	}
	for x := 0; x < len(cands); x++ {
		for y := x; y < len(cands); y++ {
			if bonus, ok := di.pairFits(cands[x].idx, cands[y].idx, sites, hetIdx, phased); ok {
				pairs = append(pairs, pair{cands[x].idx, cands[y].idx, cands[x].score + cands[y].score + bonus})
			}
		}
	}
	return pairs
}

// pairFits reports whether alleles a and b, one per strand, explain every
// heterozygous site (in either orientation when unphased), and the bonus
// for wobble cells that stand for a non-reference base.
func (di *defIndex) pairFits(a, b int, sites []site, hetIdx []int, phased bool) (bonus int, ok bool) {
	fwd, rev := true, true
	for _, i := range hetIdx {
		ca, cb := di.cellAt(a, i), di.cellAt(b, i)
		g := sites[i].alleles
		f := cellMatches(ca, g[0]) && cellMatches(cb, g[1])
		r := cellMatches(ca, g[1]) && cellMatches(cb, g[0])
		if isWobble(ca) || isWobble(cb) {
			// The base each wobble cell stands for in this pair.
			ba, bb := g[1], g[0]
			if f {
				ba, bb = g[0], g[1]
			}
			if isWobble(ca) && ba != di.refCells[i] {
				bonus++
			}
			if isWobble(cb) && bb != di.refCells[i] {
				bonus++
			}
		}
		if !phased {
			f = f || r
			r = f
		}
		fwd = fwd && f
		rev = rev && r
		if !fwd && !rev {
			break
		}
	}
	return bonus, fwd || rev
}

// rankPairs sorts the pairs by score and names them: the top-scoring
// diplotypes and the others, each once (sub-alleles such as SLCO1B1
// *45.001 and *45.002 are reported as their allele).
func (di *defIndex) rankPairs(pairs []pair) (top, alts []CalledDiplotype) {
	slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(b.score, a.score) })
	seen := map[string]bool{}
	for _, p := range pairs {
		cd := CalledDiplotype{Alleles: pairNames(di, p), Score: p.score}
		key := diplotypeKey(cd.Alleles)
		if seen[key] {
			continue
		}
		seen[key] = true
		if p.score == pairs[0].score {
			top = append(top, cd)
		} else {
			alts = append(alts, cd)
		}
	}
	return top, alts
}

// unphasedPriority applies the gene's unphased priority list (NAT2): for
// unphased data, the first entry whose diplotypes all fit picks one
// diplotype, and every other becomes an alternative.
func unphasedPriority(d *engine.GeneDefinition, top, alts []CalledDiplotype, gc *GeneCall) ([]CalledDiplotype, []CalledDiplotype) {
	all := append(append([]CalledDiplotype(nil), top...), alts...)
	have := map[string]int{}
	for i, cd := range all {
		have[diplotypeKey(cd.Alleles)] = i
	}
	for _, r := range d.UnphasedPriorities {
		ok := true
		for _, l := range r.List {
			if _, in := have[diplotypeKey(strings.Split(l, "/"))]; !in {
				ok = false
				break
			}
		}
		pi, in := have[diplotypeKey(strings.Split(r.Pick, "/"))]
		if !ok || !in {
			continue
		}
		picked := all[pi]
		var others []CalledDiplotype
		for i, cd := range all {
			if i != pi {
				others = append(others, cd)
			}
		}
		gc.Notes = append(gc.Notes, fmt.Sprintf("%s: %s is picked by PharmCAT's unphased priority list among %s", d.Gene, r.Pick, strings.Join(r.List, ", ")))
		return []CalledDiplotype{picked}, others
	}
	return top, alts
}

// reportPairs puts the top diplotypes and the alternatives, with their
// phenotypes, into the call, with notes on ties and lower-scoring fits.
func (k *Caller) reportPairs(gene string, top, alts []CalledDiplotype, gc *GeneCall) {
	gc.Status = CallCalled
	for _, cd := range top {
		k.phenotypeInto(gene, &cd)
		gc.Diplotypes = append(gc.Diplotypes, cd)
		gc.Source = append(gc.Source, cd.String())
	}
	for _, cd := range alts {
		k.phenotypeInto(gene, &cd)
		gc.Alternatives = append(gc.Alternatives, cd)
	}
	if len(gc.Diplotypes) > 1 {
		gc.Notes = append(gc.Notes, fmt.Sprintf("%d %s diplotypes score equally (%s); all are reported and the most severe advice applies", len(gc.Diplotypes), gene, strings.Join(gc.Source, ", ")))
	}
	if n := len(gc.Alternatives); n > 0 {
		var names []string
		for i, cd := range gc.Alternatives {
			if i == 6 {
				names = append(names, fmt.Sprintf("and %d more", n-6))
				break
			}
			s := cd.String()
			if cd.Call.Phenotype != "" {
				s += " (" + cd.Call.Phenotype + ")"
			}
			names = append(names, s)
		}
		gc.Notes = append(gc.Notes, fmt.Sprintf("other %s diplotypes also fit the data, with a lower PharmCAT score: %s; phase or more positions would settle it", gene, strings.Join(names, ", ")))
	}
}

// subAllele matches a PharmVar sub-allele suffix (".001").
func baseAllele(name string) string {
	if i := strings.LastIndex(name, "."); i > 0 && i < len(name)-1 && strings.HasPrefix(name, "*") {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			return name[:i]
		}
	}
	return name
}

// slco1b1Fallback: when no SLCO1B1 star-allele pair fits, PharmCAT gives
// the recommendation from the rs4149056 (c.521T>C) genotype alone; its C
// allele defines *5 (data/pgx/pharmcat/RULES.md §3.4). The gene stays
// marked for review: the other variants are not explained.
func (k *Caller) slco1b1Fallback(di *defIndex, sites []site, gc *GeneCall) {
	if di.def.Gene != "SLCO1B1" {
		return
	}
	for i, p := range di.def.Positions {
		s := sites[i]
		if p.RsID != "rs4149056" || s.missing || s.partial {
			continue
		}
		c := 0
		for _, a := range s.alleles {
			if a == "C" {
				c++
			} else if a != p.Ref {
				return
			}
		}
		dip := []string{"*1", "*1"}
		switch {
		case len(s.alleles) == 1:
			return
		case c == 1:
			dip = []string{"*1", "*5"}
		case c == 2:
			dip = []string{"*5", "*5"}
		}
		cd := CalledDiplotype{Alleles: dip}
		k.phenotypeInto("SLCO1B1", &cd)
		gc.Status = CallCalled
		gc.Diplotypes = []CalledDiplotype{cd}
		gc.Source = []string{fmt.Sprintf("rs4149056 %s", gtString(s.alleles, s.phased))}
		gc.Notes = append(gc.Notes, fmt.Sprintf("no SLCO1B1 star-allele pair fits; as PharmCAT does, the phenotype comes from rs4149056 (c.521T>C) alone: %s, read as %s", gtString(s.alleles, s.phased), cd.String()))
	}
}

// pairNames orders a pair's allele names (reference first, then natural),
// sub-alleles written as their allele.
func pairNames(di *defIndex, p pair) []string {
	if p.b < 0 {
		return []string{baseAllele(di.alleles[p.a].name)}
	}
	x, y := baseAllele(di.alleles[p.a].name), baseAllele(di.alleles[p.b].name)
	// The reference first when it is not a star allele ("Reference/...",
	// "B (reference)/..."), else natural order ("*2/*38").
	switch {
	case p.b == 0 && !strings.HasPrefix(y, "*"):
		x, y = y, x
	case p.a == 0 && !strings.HasPrefix(x, "*"):
	case naturalLess(y, x):
		x, y = y, x
	}
	return []string{x, y}
}

// diplotypeKey is an order-free key of a diplotype.
func diplotypeKey(n []string) string {
	switch len(n) {
	case 1:
		return n[0]
	case 2:
		// sort.Strings of two, joined, in one allocation.
		if n[1] < n[0] {
			return n[1] + "\x00" + n[0]
		}
		return n[0] + "\x00" + n[1]
	}
	c := append([]string(nil), n...)
	sort.Strings(c)
	return strings.Join(c, "\x00")
}
