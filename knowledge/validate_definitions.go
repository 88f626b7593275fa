package knowledge

import (
	"fmt"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/knowledge/internal/kbfile"
)

// validateDefinitions checks the allele definitions (definitions.json):
// one per known gene; positions ascending and unique with a reference
// base; every cell at a defining position and written as the reference,
// one of the alternates or (for SNVs) an IUPAC code; the reference allele
// first and defined at every position that is not ignored; unique allele
// names; required, extra and priority entries that resolve.
func (v *validator) validateDefinitions(kb *engine.Knowledge) {
	const f = kbfile.Definitions
	seen := map[string]bool{}
	for i := range kb.Definitions {
		d := &kb.Definitions[i]
		row := i + 1
		v.cite(f, row, "source_ids", d.SourceIDs)
		switch {
		case d.Gene == "":
			v.add(f, row, "gene", "empty gene")
		case seen[d.Gene]:
			v.add(f, row, "gene", "duplicate definition of %s", d.Gene)
		case v.genes[d.Gene] == nil:
			v.add(f, row, "gene", "gene %s is not in genes.json", d.Gene)
		}
		seen[d.Gene] = true
		if !strings.HasPrefix(d.Chromosome, "chr") {
			v.add(f, row, "chromosome", "chromosome %q must be written chrN", d.Chromosome)
		}
		if d.DataVersion == "" {
			v.add(f, row, "data_version", "missing data version")
		}
		pos := map[int]engine.DefinedPosition{}
		last := 0
		for j, p := range d.Positions {
			field := fmt.Sprintf("positions[%d]", j)
			if p.Pos <= last {
				v.add(f, row, field+".pos", "positions must ascend (%d after %d)", p.Pos, last)
			}
			last = p.Pos
			if p.Ref == "" {
				v.add(f, row, field+".ref", "empty reference allele")
			}
			for _, a := range p.Alts {
				if a == "" || a == p.Ref {
					v.add(f, row, field+".alts", "bad alternate %q", a)
				}
			}
			pos[p.Pos] = p
		}
		if len(d.Alleles) == 0 {
			v.add(f, row, "alleles", "no alleles")
			continue
		}
		names := map[string]bool{}
		for j, a := range d.Alleles {
			field := fmt.Sprintf("alleles[%d]", j)
			if a.Name == "" || names[a.Name] {
				v.add(f, row, field+".name", "empty or duplicate allele name %q", a.Name)
			}
			names[a.Name] = true
			cells := map[int]bool{}
			for k, c := range a.Cells {
				p, ok := pos[c.Pos]
				cf := fmt.Sprintf("%s.cells[%d]", field, k)
				if !ok {
					v.add(f, row, cf, "position %d is not a defining position", c.Pos)
					continue
				}
				if cells[c.Pos] {
					v.add(f, row, cf, "position %d given twice", c.Pos)
				}
				cells[c.Pos] = true
				if !validCell(p, c.Allele) {
					v.add(f, row, cf, "allele %q at %d is neither the reference %q, an alternate %v nor an IUPAC code of an SNV", c.Allele, c.Pos, p.Ref, p.Alts)
				}
			}
			if j == 0 {
				for _, p := range d.Positions {
					if !cells[p.Pos] && !p.Ignored {
						v.add(f, row, field, "reference allele %s has no allele at %d", a.Name, p.Pos)
					}
				}
			}
		}
		for _, p := range d.RequiredPositions {
			if _, ok := pos[p]; !ok {
				v.add(f, row, "required_positions", "%d is not a defining position", p)
			}
		}
		for _, p := range d.Tier1Positions {
			if dp, ok := pos[p]; !ok || dp.Ignored {
				v.add(f, row, "tier1_positions", "%d is not a defining position", p)
			}
		}
		for _, n := range d.Tier1Alleles {
			if !names[n] {
				v.add(f, row, "tier1_alleles", "%q is not an allele", n)
			}
		}
		if len(d.Tier1Alleles) > 0 != (len(d.Tier1Positions) > 0) {
			v.add(f, row, "tier1_positions", "tier-1 alleles and positions must be given together")
		}
		for _, n := range d.IgnoredAlleles {
			if !names[n] {
				v.add(f, row, "ignored_alleles", "%q is not an allele", n)
			}
		}
		for j, r := range d.UnphasedPriorities {
			for _, dip := range append(append([]string{}, r.List...), r.Pick) {
				for _, n := range strings.Split(dip, "/") {
					if !names[n] {
						v.add(f, row, fmt.Sprintf("unphased_priorities[%d]", j), "%q is not an allele", n)
					}
				}
			}
		}
	}
}

// validCell reports whether a definition cell is the reference, one of the
// alternates or, at an SNV, an IUPAC code.
func validCell(p engine.DefinedPosition, c string) bool {
	if c == p.Ref {
		return true
	}
	for _, a := range p.Alts {
		if c == a {
			return true
		}
	}
	return len(c) == 1 && len(p.Ref) == 1 && strings.Contains("RYSWKMBDHVN", c)
}
