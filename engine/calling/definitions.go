package calling

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"github.com/pgxsafety/pgxsafety/engine"
)

// This file indexes PharmCAT's allele definitions for matching: per gene, its
// positions, the alleles' cells and bitsets, and the IUPAC cell rules.

// defIndex is a gene definition prepared for matching.
type defIndex struct {
	def      *engine.GeneDefinition
	posIdx   map[int]int // position → index in def.Positions
	refCells []string    // reference allele per position index
	alleles  []matchAllele
	required map[int]bool
	// used[i] are the alleles any named allele uses at position i.
	used [][]string
	// ignored maps ignored positions to their reference allele.
	ignored map[int]string
	// defaultCells are the default allele's bases (*1 for CYP2C19, else
	// the reference allele's).
	defaultCells []string

	// The rest is derived at Build for the matcher's hot path.

	// ord is the definition's index in Knowledge.Definitions.
	ord int
	// labels[i] is posLabel of position i.
	labels []string
	// defaultSites[i] and defaultHemi[i] are the alleles of an absent
	// position read as the default allele (diploid, and hemizygous); they
	// are shared and never written.
	defaultSites, defaultHemi [][]string
	// words is the length of the allele bitsets below (64 alleles a word).
	words int
	// hasCell[i] has bit ai set when allele ai has a cell at position i;
	// refMismatch[i] when one of its cells at i does not match the
	// reference base (cellMatches), so it cannot explain a homozygous
	// reference site there; skip has the ignored alleles' bits.
	hasCell, refMismatch [][]uint64
	skip                 []uint64
	// sitePool holds *[]site of len(Positions) for callGene (a CYP2D6
	// call needs 156 sites; they do not outlive the call).
	sitePool sync.Pool
}

// getSites returns zeroed sites for one call of the gene.
func (di *defIndex) getSites() *[]site {
	if v, ok := di.sitePool.Get().(*[]site); ok {
		clear(*v)
		return v
	}
	s := make([]site, len(di.def.Positions))
	return &s
}

type matchAllele struct {
	name    string
	isRef   bool
	ignored bool
	cells   []idxCell // explicit cells, by position index
}

type idxCell struct {
	i      int
	allele string
}

// buildDefinitions indexes the gene definitions.
func buildDefinitions(k *engine.Knowledge) (map[string]*defIndex, map[string]map[int][]*defIndex, error) {
	defs := map[string]*defIndex{}
	byPos := map[string]map[int][]*defIndex{}
	for gi := range k.Definitions {
		d := &k.Definitions[gi]
		di := &defIndex{def: d, posIdx: map[int]int{}, required: map[int]bool{}, ignored: map[int]string{}}
		for _, p := range d.IgnoredPositions {
			di.ignored[p.Pos] = p.Ref
		}
		for i, p := range d.Positions {
			di.posIdx[p.Pos] = i
			if byPos[d.Chromosome] == nil {
				byPos[d.Chromosome] = map[int][]*defIndex{}
			}
			byPos[d.Chromosome][p.Pos] = append(byPos[d.Chromosome][p.Pos], di)
		}
		for _, p := range d.ExtraPositions {
			if byPos[d.Chromosome] == nil {
				byPos[d.Chromosome] = map[int][]*defIndex{}
			}
			byPos[d.Chromosome][p.Pos] = append(byPos[d.Chromosome][p.Pos], di)
		}
		for _, p := range d.RequiredPositions {
			di.required[p] = true
		}
		if len(d.Alleles) == 0 {
			return nil, nil, fmt.Errorf("definition %s has no alleles", d.Gene)
		}
		ignored := map[string]bool{}
		for _, n := range d.IgnoredAlleles {
			ignored[n] = true
		}
		di.refCells = make([]string, len(d.Positions))
		di.used = make([][]string, len(d.Positions))
		for ai, a := range d.Alleles {
			ma := matchAllele{name: a.Name, isRef: ai == 0, ignored: ignored[a.Name] || a.Structural}
			for _, c := range a.Cells {
				i, ok := di.posIdx[c.Pos]
				if !ok {
					return nil, nil, fmt.Errorf("definition %s allele %s: position %d is not a defining position", d.Gene, a.Name, c.Pos)
				}
				ma.cells = append(ma.cells, idxCell{i, c.Allele})
				if ai == 0 {
					di.refCells[i] = c.Allele
				}
				if !ma.ignored && !slices.Contains(di.used[i], c.Allele) {
					di.used[i] = append(di.used[i], c.Allele)
				}
			}
			di.alleles = append(di.alleles, ma)
		}
		for i, c := range di.refCells {
			if c == "" && !d.Positions[i].Ignored {
				return nil, nil, fmt.Errorf("definition %s: reference allele has no cell at %d", d.Gene, d.Positions[i].Pos)
			}
		}
		di.defaultCells = append([]string(nil), di.refCells...)
		for gi := range k.Genes {
			g := &k.Genes[gi]
			if g.Symbol != d.Gene || g.DefaultAllele == "" || g.DefaultAllele == d.Alleles[0].Name {
				continue
			}
			for _, a := range di.alleles {
				if a.name == g.DefaultAllele {
					for _, c := range a.cells {
						if !isWobble(c.allele) {
							di.defaultCells[c.i] = c.allele
						}
					}
				}
			}
		}
		di.prepare(gi)
		defs[d.Gene] = di
	}
	return defs, byPos, nil
}

// prepare derives the per-position labels, default sites and the allele
// bitsets from an indexed definition (bitsets hold no pointers, so they
// add nothing to the garbage collector's marking of the knowledge).
func (di *defIndex) prepare(ord int) {
	d := di.def
	n := len(d.Positions)
	di.ord = ord
	di.labels = make([]string, n)
	di.defaultSites = make([][]string, n)
	di.defaultHemi = make([][]string, n)
	for i, p := range d.Positions {
		di.labels[i] = posLabel(d, p)
		ref := di.defaultCells[i]
		di.defaultSites[i] = []string{ref, ref}[:2:2]
		di.defaultHemi[i] = []string{ref}[:1:1]
	}
	di.words = (len(di.alleles) + 63) / 64
	di.hasCell = make([][]uint64, n)
	di.refMismatch = make([][]uint64, n)
	for i := range n {
		di.hasCell[i] = make([]uint64, di.words)
		di.refMismatch[i] = make([]uint64, di.words)
	}
	di.skip = make([]uint64, di.words)
	for ai := range di.alleles {
		a := &di.alleles[ai]
		w, bit := ai/64, uint64(1)<<(ai%64)
		if a.ignored {
			di.skip[w] |= bit
		}
		for _, c := range a.cells {
			di.hasCell[c.i][w] |= bit
			if !cellMatches(c.allele, di.refCells[c.i]) {
				di.refMismatch[c.i][w] |= bit
			}
		}
	}
}

// iupacBases returns the bases an IUPAC ambiguity code stands for, or "".
func iupacBases(c byte) string {
	switch c {
	case 'R':
		return "AG"
	case 'Y':
		return "CT"
	case 'S':
		return "CG"
	case 'W':
		return "AT"
	case 'K':
		return "GT"
	case 'M':
		return "AC"
	case 'B':
		return "CGT"
	case 'D':
		return "AGT"
	case 'H':
		return "ACT"
	case 'V':
		return "ACG"
	case 'N':
		return "ACGT"
	}
	return ""
}

// cellMatches reports whether a definition cell matches an observed allele.
func cellMatches(cell, obs string) bool {
	if cell == obs {
		return true
	}
	if len(obs) == 1 && len(cell) == 1 {
		return strings.IndexByte(iupacBases(cell[0]), obs[0]) >= 0
	}
	return false
}

// HasDefinitions reports whether the knowledge carries allele definitions.
func (k *Caller) HasDefinitions() bool { return len(k.idx.defs) > 0 }

// Definition returns the allele definition of a gene.
func (k *Caller) Definition(gene string) (*engine.GeneDefinition, bool) {
	di, ok := k.idx.defs[gene]
	if !ok {
		return nil, false
	}
	return di.def, true
}

// DefinitionGenes lists the genes with allele definitions, sorted.
func (k *Caller) DefinitionGenes() []string { return append([]string(nil), k.idx.defGenes...) }

// IsDefinitionPosition reports whether chrom:pos is a defining (or extra)
// position of some gene; readers use it to skip other records cheaply.
func (k *Caller) IsDefinitionPosition(chrom string, pos int) bool {
	_, ok := k.idx.defPos[chrom][pos]
	return ok
}

// bitIndex is the index of the single set bit of b.
func bitIndex(b uint64) int { return bits.TrailingZeros64(b) }

// isWobble reports whether a cell is an IUPAC ambiguity code.
func isWobble(cell string) bool { return len(cell) == 1 && iupacBases(cell[0]) != "" }
