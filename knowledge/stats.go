package knowledge

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// Statistics summarises a knowledge base: its version, the number of rows
// of each table and how many rows cite each source. It is computed by
// Stats and printed by "pgxsafety knowledge stats".
type Statistics struct {
	Version Version       `json:"version"`
	Tables  []TableCount  `json:"tables"`
	Sources []SourceCount `json:"sources"`
}

// TableCount is the number of rows of one table (or sub-table, such as the
// alleles of all genes).
type TableCount struct {
	Name string `json:"name"`
	Rows int    `json:"rows"`
}

// SourceCount is the number of rows that cite one source.
type SourceCount struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Licence string `json:"licence"`
	Rows    int    `json:"rows"`
}

// Stats computes the statistics of b. Every count is computed from the
// data.
func Stats(b *Base) Statistics {
	kb := b.Engine
	s := Statistics{Version: Version(kb.Version)}
	cites := map[string]int{}
	cite := func(ids []string) {
		for _, id := range ids {
			cites[id]++
		}
	}
	var pairs, synonyms, alleles, rules, cpic, dpwg, withAF, risks, nodes int
	tier := map[string]int{}
	for _, d := range kb.Drugs {
		cite(d.SourceIDs)
		synonyms += len(d.Synonyms)
		pairs += len(d.Pairs)
		tier[d.Sensitivity]++
		for _, p := range d.Pairs {
			cite(p.SourceIDs)
		}
	}
	for _, g := range kb.Genes {
		cite(g.SourceIDs)
		alleles += len(g.Alleles)
		rules += len(g.Rules)
		for _, a := range g.Alleles {
			cite(a.SourceIDs)
		}
	}
	for _, r := range kb.RsIDs {
		cite(r.SourceIDs)
	}
	for _, r := range kb.Recommendations {
		cite(r.SourceIDs)
		switch r.Source {
		case "CPIC":
			cpic++
		case "DPWG":
			dpwg++
		}
	}
	for _, v := range kb.Variants {
		cite(v.SourceIDs)
		if v.AFIndia != nil {
			withAF++
		}
	}
	for _, h := range kb.HLAAlleles {
		cite(h.SourceIDs)
	}
	for _, st := range kb.States {
		risks += len(st.Risks)
		for _, r := range st.Risks {
			cite(r.SourceIDs)
		}
	}
	for _, c := range kb.Communities {
		cite(c.SourceIDs)
	}
	for _, h := range kb.Herbs {
		cite(h.SourceIDs)
	}
	defAlleles := 0
	for _, d := range kb.Definitions {
		cite(d.SourceIDs)
		defAlleles += len(d.Alleles)
	}
	if kb.Warfarin != nil {
		cite(kb.Warfarin.SourceIDs)
		nodes = len(kb.Warfarin.Nodes)
	}
	for _, n := range kb.DrugNames {
		cite(n.SourceIDs)
	}
	for _, c := range kb.Indications {
		cite(c.SourceIDs)
	}
	s.Tables = []TableCount{
		{"sources", len(kb.Sources)},
		{"drugs", len(kb.Drugs)},
		{"drugs (sensitivity high)", tier["high"]},
		{"drugs (sensitivity moderate)", tier["moderate"]},
		{"drugs (sensitivity none)", tier["none"]},
		{"drug synonyms", synonyms},
		{"gene-drug pairs", pairs},
		{"genes", len(kb.Genes)},
		{"alleles", alleles},
		{"phenotype rules", rules},
		{"rsids", len(kb.RsIDs)},
		{"recommendations", len(kb.Recommendations)},
		{"recommendations (CPIC)", cpic},
		{"recommendations (DPWG)", dpwg},
		{"tracked variants", len(kb.Variants)},
		{"tracked variants with af_india", withAF},
		{"tracked variants without af_india", len(kb.Variants) - withAF},
		{"HLA alleles", len(kb.HLAAlleles)},
		{"states and union territories", len(kb.States)},
		{"state risks", risks},
		{"communities", len(kb.Communities)},
		{"herb interactions", len(kb.Herbs)},
		{"warfarin flow-chart nodes", nodes},
		{"allele definitions (genes)", len(kb.Definitions)},
		{"allele definitions (named alleles)", defAlleles},
		{"drug names (brands, salts, synonyms, abbreviations, combinations)", len(kb.DrugNames)},
		{"indication codes", len(kb.Indications)},
	}
	s.Tables = append(s.Tables, classifierStats(b.Classifier, cite)...) // classifier.go
	for _, src := range kb.Sources {
		s.Sources = append(s.Sources, SourceCount{ID: src.ID, Title: src.Title, Licence: src.Licence, Rows: cites[src.ID]})
	}
	sort.SliceStable(s.Sources, func(i, j int) bool { return s.Sources[i].ID < s.Sources[j].ID })
	return s
}

// WriteText writes the statistics as a readable table.
func (s Statistics) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "knowledge version\t%s\n", s.Version.Label)
	fmt.Fprintf(tw, "digest\t%s\n", s.Version.Digest)
	keys := make([]string, 0, len(s.Version.DataVersions))
	for k := range s.Version.DataVersions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(tw, "data version %s\t%s\n", k, s.Version.DataVersions[k])
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "TABLE\tROWS")
	for _, t := range s.Tables {
		fmt.Fprintf(tw, "%s\t%d\n", t.Name, t.Rows)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "SOURCE\tROWS\tTITLE")
	for _, src := range s.Sources {
		title := src.Title
		if len(title) > 80 {
			title = strings.ToValidUTF8(title[:77], "") + "..."
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\n", src.ID, src.Rows, title)
	}
	return tw.Flush()
}

// String returns the text form of WriteText.
func (s Statistics) String() string {
	var b strings.Builder
	_ = s.WriteText(&b)
	return b.String()
}
