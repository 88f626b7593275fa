package main

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"slices"
	"strings"

	"github.com/pgxsafety/pgxsafety/knowledge"
)

// citedPhenotypeRules are CPIC phenotype rules the data pack does not
// carry, each row citing the public guideline table it comes from (PMID,
// URL, table). The data pack has the IFNL3 allele functions only
// (data/pgx/SOURCES.md: "Only the allele functions are available"); the
// genotype → phenotype assignment is Table 1 of the CPIC IFNL3 guideline.
//
//go:embed cited/phenotype_rules.csv
var citedPhenotypeRules []byte

// addCitedPhenotypeRules adds the rules of cited/phenotype_rules.csv to
// their genes and cites the guideline publication on the gene. A rule
// whose key names a function no allele of the gene has, or that the gene
// already has, is an error: the file only fills a gap of the data pack.
func (b *builder) addCitedPhenotypeRules() error {
	cr := csv.NewReader(bytes.NewReader(citedPhenotypeRules))
	rows, err := cr.ReadAll()
	if err != nil {
		return fmt.Errorf("cited/phenotype_rules.csv: %w", err)
	}
	want := []string{"gene", "rule_type", "key", "phenotype", "pmid", "url", "locator"}
	if len(rows) == 0 || !slices.Equal(rows[0], want) {
		return fmt.Errorf("cited/phenotype_rules.csv: header must be %v", want)
	}
	for n, r := range rows[1:] {
		where := fmt.Sprintf("cited/phenotype_rules.csv:%d", n+2)
		gene, typ, key, phen, pmid, url, locator := r[0], r[1], r[2], r[3], r[4], r[5], r[6]
		if url == "" || locator == "" {
			return fmt.Errorf("%s: url and locator are required", where)
		}
		if typ != "function_pair" {
			return fmt.Errorf("%s: rule_type %q (only function_pair rules are cited here)", where, typ)
		}
		gi := slices.IndexFunc(b.kb.Genes, func(g knowledge.Gene) bool { return g.Symbol == gene })
		if gi < 0 {
			return fmt.Errorf("%s: unknown gene %s", where, gene)
		}
		g := &b.kb.Genes[gi]
		fa, fb, ok := strings.Cut(key, " + ")
		if !ok || fa > fb {
			return fmt.Errorf("%s: key %q must be two functions in sorted order joined by \" + \"", where, key)
		}
		for _, f := range []string{fa, fb} {
			if !slices.ContainsFunc(g.Alleles, func(a knowledge.Allele) bool { return a.Function == f }) {
				return fmt.Errorf("%s: no %s allele has the function %q", where, gene, f)
			}
		}
		if slices.ContainsFunc(g.Rules, func(x knowledge.PhenotypeRule) bool { return x.Type == typ && x.Key == key }) {
			return fmt.Errorf("%s: %s already has a %s rule for %q in the data pack", where, gene, typ, key)
		}
		g.Rules = append(g.Rules, knowledge.PhenotypeRule{Type: typ, Key: key, Phenotype: phen})
		g.SourceIDs = sortUnique(append(g.SourceIDs, b.src.pmid(pmid, "")))
	}
	return nil
}
