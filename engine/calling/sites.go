package calling

import (
	"slices"
	"sort"
)

// DefinitionSite is one definition position in VCF space, as a reader
// needs it to turn records into observations: the GRCh38 REF the
// definitions write there (its span runs from Pos to Pos+len(Ref)-1) and
// every alternate allele a definition uses there, in the definitions'
// writing.
type DefinitionSite struct {
	Chrom string
	Pos   int
	Ref   string
	Alts  []string
}

// End is the last reference position the site's REF covers.
func (s DefinitionSite) End() int { return s.Pos + len(s.Ref) - 1 }

// siteIndex holds every definition (and extra) position per chromosome,
// sorted, for span lookups.
type siteIndex struct {
	byChrom map[string][]DefinitionSite
	maxRef  int // the longest REF of any site
}

// buildSiteIndex indexes the definition positions of every gene; two
// genes using one position share one site (their alleles joined).
func buildSiteIndex(defs map[string]*defIndex) siteIndex {
	ix := siteIndex{byChrom: map[string][]DefinitionSite{}, maxRef: 1}
	at := map[string]map[int]int{}
	add := func(chrom string, pos int, ref string, alts []string) {
		if at[chrom] == nil {
			at[chrom] = map[int]int{}
		}
		if j, ok := at[chrom][pos]; ok {
			s := &ix.byChrom[chrom][j]
			for _, a := range alts {
				if !slices.Contains(s.Alts, a) {
					s.Alts = append(s.Alts, a)
				}
			}
			return
		}
		at[chrom][pos] = len(ix.byChrom[chrom])
		ix.byChrom[chrom] = append(ix.byChrom[chrom], DefinitionSite{Chrom: chrom, Pos: pos, Ref: ref, Alts: slices.Clone(alts)})
		ix.maxRef = max(ix.maxRef, len(ref))
	}
	for _, di := range defs {
		d := di.def
		for i, p := range d.Positions {
			alts := slices.Clone(p.Alts)
			for _, c := range di.used[i] {
				if c != p.Ref && !isWobble(c) && !slices.Contains(alts, c) {
					alts = append(alts, c)
				}
			}
			add(d.Chromosome, p.Pos, p.Ref, alts)
		}
		for _, p := range d.ExtraPositions {
			add(d.Chromosome, p.Pos, p.Ref, p.Alts)
		}
	}
	// Sort each chromosome's sites by position; the position map is not
	// needed afterwards.
	for chrom, ss := range ix.byChrom {
		sort.Slice(ss, func(a, b int) bool { return ss[a].Pos < ss[b].Pos })
		for i := range ss {
			sort.Strings(ss[i].Alts)
		}
		ix.byChrom[chrom] = ss
	}
	return ix
}

// DefinitionSitesIn returns the definition sites of chrom whose REF span
// overlaps [start, end], in position order (a record covering any base of
// a definition's REF is evidence there). The slice is shared: do not
// modify it.
func (k *Caller) DefinitionSitesIn(chrom string, start, end int) []DefinitionSite {
	ss := k.idx.sites.byChrom[chrom]
	if len(ss) == 0 || end < start {
		return nil
	}
	lo := sort.Search(len(ss), func(i int) bool { return ss[i].Pos >= start-k.idx.sites.maxRef+1 })
	first, last := -1, -1
	for i := lo; i < len(ss) && ss[i].Pos <= end; i++ {
		if ss[i].End() < start {
			continue
		}
		if first < 0 {
			first = i
		}
		last = i
	}
	if first < 0 {
		return nil
	}
	// Sites between first and last whose span ends before start (a short
	// site after a long one) are filtered by the caller's own overlap
	// test; return the exact list when that happens.
	out := ss[first : last+1]
	for _, s := range out {
		if s.End() < start {
			exact := make([]DefinitionSite, 0, len(out))
			for _, s := range out {
				if s.End() >= start {
					exact = append(exact, s)
				}
			}
			return exact
		}
	}
	return out
}
