// Package calling calls alleles from genotype evidence: it places each
// observation (a position-level call, an rsID with its zygosity, a genomic
// HGVS name, a VCF sample's genotypes) on PharmCAT's allele definitions,
// matches diplotypes by PharmCAT's rules and derives the CPIC phenotype;
// it also reads diplotype notations and validates a request's genotype.
// It imports only the engine root.
package calling

import (
	"sort"

	"github.com/pgxsafety/pgxsafety/engine"
)

// Caller calls alleles against one knowledge base. Build it once with New;
// it is read-only afterwards and safe for concurrent use.
type Caller struct {
	*engine.Knowledge
	idx *index
}

// index holds the allele caller's lookups over the knowledge rows.
type index struct {
	// alleleAliases maps the parts of composite allele names ("c.1905+1G>A"
	// and "*2A" of "c.1905+1G>A (*2A)") to the full name, per gene.
	alleleAliases map[string]map[string]string
	defs          map[string]*defIndex           // gene → allele definition (definitions.go)
	defPos        map[string]map[int][]*defIndex // chrom → position → definitions using it
	defGenes      []string                       // genes with definitions, sorted
	defRsid       map[string][]defLocus          // rsID → definition positions (observe.go)
	refSeqChrom   map[string]string              // "NC_000010.11" → "chr10"
	sites         siteIndex                      // definition sites by chromosome, for span lookups (sites.go)
}

// New indexes k's genes and allele definitions for calling. k must be
// built (Knowledge.Build).
func New(k *engine.Knowledge) (*Caller, error) {
	ix := &index{alleleAliases: map[string]map[string]string{}}
	for i := range k.Genes {
		g := &k.Genes[i]
		m := map[string]*engine.Allele{}
		for j := range g.Alleles {
			a := &g.Alleles[j]
			m[a.Name] = a
		}
		ix.alleleAliases[g.Symbol] = compositeAliases(m)
	}
	defs, defPos, err := buildDefinitions(k)
	if err != nil {
		return nil, err
	}
	ix.defs, ix.defPos = defs, defPos
	ix.sites = buildSiteIndex(defs)
	for g := range defs {
		ix.defGenes = append(ix.defGenes, g)
	}
	sort.Strings(ix.defGenes)
	ix.defRsid, ix.refSeqChrom = map[string][]defLocus{}, map[string]string{}
	for _, di := range defs {
		ix.refSeqChrom[di.def.RefSeq] = di.def.Chromosome
		for i, p := range di.def.Positions {
			if p.RsID != "" {
				ix.defRsid[p.RsID] = append(ix.defRsid[p.RsID], defLocus{di, i})
			}
		}
	}
	return &Caller{Knowledge: k, idx: ix}, nil
}
