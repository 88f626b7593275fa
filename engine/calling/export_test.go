package calling

import (
	"fmt"
	"math/rand"
	"slices"
)

// candidatesReference is the candidate loop of callPairs before the
// allele bitsets (defIndex.candidates): compatible on every allele.
func candidatesReference(di *defIndex, sites []site, nonRef []int) []cand {
	var cands []cand
	for ai := range di.alleles {
		a := &di.alleles[ai]
		if a.ignored {
			continue
		}
		sc, ok := compatible(di, a, sites, nonRef)
		if !ok || (sc == 0 && !a.isRef) {
			continue
		}
		cands = append(cands, cand{ai, sc})
	}
	return cands
}

// DiffCandidates builds random sites for every gene from seed (mostly
// homozygous reference, with the non-reference cells of one or two
// random alleles, no-calls, haploid and undocumented bases) and compares
// defIndex.candidates with candidatesReference; it returns the first
// difference, or "".
func DiffCandidates(k *Caller, seed int64) string {
	rng := rand.New(rand.NewSource(seed))
	bases := []string{"A", "C", "G", "T", "AT", "."}
	for _, g := range k.idx.defGenes {
		di := k.idx.defs[g]
		n := len(di.def.Positions)
		sites := make([]site, n)
		hemi := rng.Intn(8) == 0
		for i := range sites {
			if di.def.Positions[i].Ignored || rng.Intn(10) == 0 {
				sites[i].missing = true
				continue
			}
			ref := di.refCells[i]
			if hemi {
				sites[i].alleles = []string{ref}
			} else {
				sites[i].alleles = []string{ref, ref}
			}
		}
		// Put one or two alleles' cells on the two strands.
		for strand := range 2 {
			if rng.Intn(3) == 0 {
				continue
			}
			a := &di.alleles[rng.Intn(len(di.alleles))]
			for _, c := range a.cells {
				s := &sites[c.i]
				if s.missing || rng.Intn(6) == 0 {
					continue
				}
				s.alleles[min(strand, len(s.alleles)-1)] = c.allele
			}
		}
		// A few random bases anywhere.
		for range rng.Intn(3) {
			i := rng.Intn(n)
			if s := &sites[i]; !s.missing {
				s.alleles[rng.Intn(len(s.alleles))] = bases[rng.Intn(len(bases))]
			}
		}
		var nonRef []int
		for i := range sites {
			s := &sites[i]
			if s.missing {
				continue
			}
			s.phased = rng.Intn(2) == 0
			s.refSeen = containsAllele(s.alleles, di.refCells[i])
			if !s.refSeen {
				nonRef = append(nonRef, i)
			}
		}
		got := di.candidates(sites, nonRef, nil)
		want := candidatesReference(di, sites, nonRef)
		if !slices.Equal(got, want) {
			return fmt.Sprintf("%s seed %d: candidates %v, reference %v", g, seed, got, want)
		}
	}
	return ""
}
