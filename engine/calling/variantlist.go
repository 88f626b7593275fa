package calling

import (
	"fmt"
	"sort"
	"strings"
)

// This file reports genes called as a list of variants (DPYD, RYR1, CACNA1S)
// when unphased data has several heterozygous sites.

// variantHit is one defined variant found in the sample.
type variantHit struct {
	ai      int
	copies  int
	strands [2]bool // phased: on strand 0 / 1
}

// callVariantList calls DPYD, RYR1 and CACNA1S as PharmCAT does: the
// defined variants found are listed; the lookup diplotype is the lowest
// function variant on each strand (phased or effectively phased data) or
// the two lowest-function variants, presumed in trans (unphased data with
// more than one heterozygous site).
func (k *Caller) callVariantList(di *defIndex, sites []site, gc *GeneCall, haploid, phased bool) {
	d := di.def
	hets := 0
	for _, s := range sites {
		if !s.missing && !s.partial && s.het() {
			hets++
		}
	}
	// Strands are read from the genotype order when the data is phased or
	// effectively phased (at most one heterozygous site; a partial "1/."
	// genotype counts as its written order).
	vl := variantListing{di: di, sites: sites, strandMode: phased || hets <= 1}
	vl.countRemaining()
	nStrands := 1
	if vl.strandMode {
		nStrands = 2
	}
	var hits []variantHit
	for strand := 0; strand < nStrands; strand++ {
		for {
			best := vl.bestAllele(strand)
			if best < 0 {
				break
			}
			vl.take(best, strand)
			hits = addHit(hits, best, strand)
		}
	}
	vl.unexplained(gc)
	name := func(h variantHit) string { return di.alleles[h.ai].name }
	sort.SliceStable(hits, func(x, y int) bool { return naturalLess(name(hits[x]), name(hits[y])) })
	gc.Status = CallCalled
	var lookup []string
	if vl.strandMode {
		lookup = k.strandLookup(di, hits, haploid, gc)
	} else {
		lookup = k.pooledLookup(di, hits, gc)
		gc.Notes = append(gc.Notes, fmt.Sprintf("%s: unphased data with %d heterozygous sites; the two lowest-function variants (%s) are presumed on different copies and used for the phenotype, as CPIC and PharmCAT do", d.Gene, hets, strings.Join(lookup, "; ")))
	}
	if haploid && len(lookup) > 1 {
		lookup = lookup[:1]
	}
	// Reference first, as CPIC writes these diplotypes.
	ref := di.alleles[0].name
	if len(lookup) == 2 && lookup[1] == ref && lookup[0] != ref {
		lookup[0], lookup[1] = lookup[1], lookup[0]
	}
	cd := CalledDiplotype{Alleles: lookup}
	k.phenotypeInto(d.Gene, &cd)
	gc.Diplotypes = []CalledDiplotype{cd}
}

// variantListing is the state of explaining a variant-list gene's sites
// with its defined variants (callVariantList).
type variantListing struct {
	di    *defIndex
	sites []site
	// strandMode: strands are read from the genotype order.
	strandMode bool
	// remain holds the non-reference copies left to explain, per site and
	// strand (pooled in [0] outside strandMode).
	remain [][2]int
}

// countRemaining counts every site's non-reference copies.
func (vl *variantListing) countRemaining() {
	vl.remain = make([][2]int, len(vl.sites))
	for i, s := range vl.sites {
		if s.missing {
			continue
		}
		for si, a := range s.alleles {
			if a == "." || a == vl.di.refCells[i] {
				continue
			}
			if vl.strandMode {
				vl.remain[i][si]++
			} else {
				vl.remain[i][0]++
			}
		}
	}
}

// bestAllele returns the allele explaining the most remaining
// non-reference cells on strand (HapB3 before its intronic part), then the
// one with fewer cells (the exact one when a HapB3 position is not known);
// -1 when none explains any.
func (vl *variantListing) bestAllele(strand int) int {
	di := vl.di
	best, bestN, bestCells := -1, 0, 0
	for ai := range di.alleles {
		a := &di.alleles[ai]
		if a.isRef || a.ignored {
			continue
		}
		n, ok := vl.explains(a, strand)
		if !ok || n == 0 {
			continue
		}
		if n > bestN || n == bestN && len(a.cells) < bestCells {
			best, bestN, bestCells = ai, n, len(a.cells)
		}
	}
	return best
}

// explains counts the remaining non-reference cells allele a explains on
// strand; ok is false when one of its cells contradicts the sample or is
// already explained.
func (vl *variantListing) explains(a *matchAllele, strand int) (n int, ok bool) {
	for _, c := range a.cells {
		s := &vl.sites[c.i]
		if s.missing || c.allele == vl.di.refCells[c.i] {
			continue
		}
		if vl.strandMode {
			if strand >= len(s.alleles) || s.alleles[strand] == "." {
				continue
			}
			if !cellMatches(c.allele, s.alleles[strand]) || vl.remain[c.i][strand] == 0 {
				return n, false
			}
		} else if vl.remain[c.i][0] == 0 || !containsAllele(s.alleles, c.allele) {
			return n, false
		}
		n++
	}
	return n, true
}

// take marks the cells of allele best as explained on strand.
func (vl *variantListing) take(best, strand int) {
	for _, c := range vl.di.alleles[best].cells {
		s := &vl.sites[c.i]
		if s.missing || c.allele == vl.di.refCells[c.i] {
			continue
		}
		if vl.strandMode {
			if strand < len(s.alleles) && s.alleles[strand] != "." {
				vl.remain[c.i][strand]--
			}
		} else {
			vl.remain[c.i][0]--
		}
	}
}

// addHit records one more copy of allele ai found on strand.
func addHit(hits []variantHit, ai, strand int) []variantHit {
	merged := false
	for hi := range hits {
		if hits[hi].ai == ai {
			hits[hi].copies++
			hits[hi].strands[strand] = true
			merged = true
		}
	}
	if !merged {
		h := variantHit{ai: ai, copies: 1}
		h.strands[strand] = true
		hits = append(hits, h)
	}
	return hits
}

// unexplained sends every site with a non-reference copy no defined
// variant explains to review.
func (vl *variantListing) unexplained(gc *GeneCall) {
	d := vl.di.def
	for i := range vl.remain {
		if vl.remain[i][0] > 0 || vl.remain[i][1] > 0 {
			if d.Gene == "DPYD" && d.Positions[i].RsID == "rs56038477" {
				gc.Uninterpreted = append(gc.Uninterpreted, "DPYD rs56038477 (c.1236G>A) is non-reference while rs75017182 (c.1129-5923C>G), which decides HapB3, is not: PharmCAT then calls no HapB3 and warns; the two disagree")
				continue
			}
			gc.Uninterpreted = append(gc.Uninterpreted, fmt.Sprintf("%s: a non-reference allele seen is not explained by a defined %s variant", vl.di.labels[i], d.Gene))
		}
	}
}

// rankByFunction sorts allele names lowest function first.
func (k *Caller) rankByFunction(gene string, names []string) []string {
	sort.SliceStable(names, func(x, y int) bool { return k.lowerFunction(gene, names[x], names[y]) })
	return names
}

// strandLookup is the lookup diplotype of strand-read data: the lowest
// function variant of each strand (the reference allele for a strand
// without one); the call's source lists each strand's variants.
func (k *Caller) strandLookup(di *defIndex, hits []variantHit, haploid bool, gc *GeneCall) []string {
	ref := di.alleles[0].name
	var strands [2][]string
	for _, h := range hits {
		for s := 0; s < 2; s++ {
			if h.strands[s] {
				strands[s] = append(strands[s], di.alleles[h.ai].name)
			}
		}
	}
	var disp, lookup []string
	for s := 0; s < 2; s++ {
		if haploid && s == 1 {
			break
		}
		list := k.rankByFunction(di.def.Gene, append([]string(nil), strands[s]...))
		switch len(list) {
		case 0:
			disp = append(disp, ref)
			lookup = append(lookup, ref)
		case 1:
			disp = append(disp, list[0])
			lookup = append(lookup, list[0])
		default:
			disp = append(disp, "["+strings.Join(strands[s], " + ")+"]")
			lookup = append(lookup, list[0])
		}
	}
	gc.Source = []string{strings.Join(disp, "/")}
	return lookup
}

// pooledLookup is the lookup diplotype of unphased data: the two
// lowest-function variant copies (the reference allele for a missing
// one); the call's source lists the variants found.
func (k *Caller) pooledLookup(di *defIndex, hits []variantHit, gc *GeneCall) []string {
	ref := di.alleles[0].name
	var all []string
	for _, h := range hits {
		name := di.alleles[h.ai].name
		if h.copies == 2 {
			gc.Source = append(gc.Source, name+" (homozygous)")
		} else {
			gc.Source = append(gc.Source, name)
		}
		for c := 0; c < h.copies; c++ {
			all = append(all, name)
		}
	}
	all = k.rankByFunction(di.def.Gene, all)
	for len(all) < 2 {
		all = append(all, ref)
	}
	return all[:2]
}
