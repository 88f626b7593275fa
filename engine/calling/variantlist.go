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
	strandMode := phased || hets <= 1
	nStrands := 1
	if strandMode {
		nStrands = 2
	}
	// Non-reference copies left to explain, per strand (or pooled in 0).
	remain := make([][2]int, len(sites))
	for i, s := range sites {
		if s.missing {
			continue
		}
		for si, a := range s.alleles {
			if a == "." || a == di.refCells[i] {
				continue
			}
			if strandMode {
				remain[i][si]++
			} else {
				remain[i][0]++
			}
		}
	}
	var hits []variantHit
	for strand := 0; strand < nStrands; strand++ {
		for {
			// The allele explaining the most remaining non-reference cells
			// (HapB3 before its intronic part), then the one with fewer
			// cells (the exact one when a HapB3 position is not known).
			best, bestN, bestCells := -1, 0, 0
			for ai := range di.alleles {
				a := &di.alleles[ai]
				if a.isRef || a.ignored {
					continue
				}
				n, ok := 0, true
				for _, c := range a.cells {
					s := &sites[c.i]
					if s.missing || c.allele == di.refCells[c.i] {
						continue
					}
					if strandMode {
						if strand >= len(s.alleles) || s.alleles[strand] == "." {
							continue
						}
						if !cellMatches(c.allele, s.alleles[strand]) || remain[c.i][strand] == 0 {
							ok = false
							break
						}
					} else if remain[c.i][0] == 0 || !containsAllele(s.alleles, c.allele) {
						ok = false
						break
					}
					n++
				}
				if !ok || n == 0 {
					continue
				}
				if n > bestN || n == bestN && len(a.cells) < bestCells {
					best, bestN, bestCells = ai, n, len(a.cells)
				}
			}
			if best < 0 {
				break
			}
			for _, c := range di.alleles[best].cells {
				s := &sites[c.i]
				if s.missing || c.allele == di.refCells[c.i] {
					continue
				}
				if strandMode {
					if strand < len(s.alleles) && s.alleles[strand] != "." {
						remain[c.i][strand]--
					}
				} else {
					remain[c.i][0]--
				}
			}
			merged := false
			for hi := range hits {
				if hits[hi].ai == best {
					hits[hi].copies++
					hits[hi].strands[strand] = true
					merged = true
				}
			}
			if !merged {
				h := variantHit{ai: best, copies: 1}
				h.strands[strand] = true
				hits = append(hits, h)
			}
		}
	}
	for i := range remain {
		if remain[i][0] > 0 || remain[i][1] > 0 {
			if d.Gene == "DPYD" && d.Positions[i].RsID == "rs56038477" {
				gc.Uninterpreted = append(gc.Uninterpreted, "DPYD rs56038477 (c.1236G>A) is non-reference while rs75017182 (c.1129-5923C>G), which decides HapB3, is not: PharmCAT then calls no HapB3 and warns; the two disagree")
				continue
			}
			gc.Uninterpreted = append(gc.Uninterpreted, fmt.Sprintf("%s: a non-reference allele seen is not explained by a defined %s variant", di.labels[i], d.Gene))
		}
	}
	ref := di.alleles[0].name
	name := func(h variantHit) string { return di.alleles[h.ai].name }
	sort.SliceStable(hits, func(x, y int) bool { return naturalLess(name(hits[x]), name(hits[y])) })
	gc.Status = CallCalled
	rank := func(names []string) []string {
		sort.SliceStable(names, func(x, y int) bool { return k.lowerFunction(d.Gene, names[x], names[y]) })
		return names
	}
	var lookup []string
	if strandMode {
		var strands [2][]string
		for _, h := range hits {
			for s := 0; s < 2; s++ {
				if h.strands[s] {
					strands[s] = append(strands[s], name(h))
				}
			}
		}
		var disp []string
		for s := 0; s < 2; s++ {
			if haploid && s == 1 {
				break
			}
			list := rank(append([]string(nil), strands[s]...))
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
	} else {
		var all []string
		for _, h := range hits {
			if h.copies == 2 {
				gc.Source = append(gc.Source, name(h)+" (homozygous)")
			} else {
				gc.Source = append(gc.Source, name(h))
			}
			for c := 0; c < h.copies; c++ {
				all = append(all, name(h))
			}
		}
		all = rank(all)
		for len(all) < 2 {
			all = append(all, ref)
		}
		lookup = all[:2]
		gc.Notes = append(gc.Notes, fmt.Sprintf("%s: unphased data with %d heterozygous sites; the two lowest-function variants (%s) are presumed on different copies and used for the phenotype, as CPIC and PharmCAT do", d.Gene, hets, strings.Join(lookup, "; ")))
	}
	if haploid && len(lookup) > 1 {
		lookup = lookup[:1]
	}
	// Reference first, as CPIC writes these diplotypes.
	if len(lookup) == 2 && lookup[1] == ref && lookup[0] != ref {
		lookup[0], lookup[1] = lookup[1], lookup[0]
	}
	cd := CalledDiplotype{Alleles: lookup}
	k.phenotypeInto(d.Gene, &cd)
	gc.Diplotypes = []CalledDiplotype{cd}
}
