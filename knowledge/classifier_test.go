package knowledge

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/knowledge/internal/kbfile"
)

func TestClassifierLoaded(t *testing.T) {
	b := mustLoadBase(t)
	ck := b.Classifier
	if ck == nil {
		t.Fatal("no classifier knowledge")
	}
	for _, n := range []struct {
		what      string
		got, want int
	}{
		{"cohort variants", len(ck.Substrate.Cohort), 16},
		{"protein sequences", len(ck.Proteins), 5},
		{"graph nodes", len(ck.Substrate.Graph.Nodes), 62},
		{"graph edges", len(ck.Substrate.Graph.Edges), 54},
		{"publication citations", len(ck.Citations), 10},
		{"demonstration cases", len(ck.Substrate.DemoCases), 4},
	} {
		if n.got != n.want {
			t.Errorf("%s = %d, want %d (interface spec §2.8)", n.what, n.got, n.want)
		}
	}
	if len(ck.Changes) != 67 {
		t.Errorf("protein changes = %d, want the 67 rows of data/classifier/variant_protein_changes.csv", len(ck.Changes))
	}
	rows := map[string]int{}
	for _, tc := range Stats(b).Tables {
		rows[tc.Name] = tc.Rows
	}
	if rows["classifier graph edges"] != 54 || rows["classifier protein sequences"] != 5 {
		t.Errorf("stats tables lack the classifier counts: %v", rows)
	}
}

func TestCorruptClassifierKnowledge(t *testing.T) {
	m := copyFS(t)
	// A reference residue that does not match the sequence.
	mutate(t, m, kbfile.ClassifierChanges, func(cs *[]classify.ProteinChange) {
		for i := range *cs {
			if (*cs)[i].HGVSp == "p.Ala154Thr" {
				(*cs)[i].HGVSp = "p.Gly154Thr"
			}
		}
	})
	// One cohort variant fewer: a demonstration case's.
	mutate(t, m, kbfile.ClassifierSubstrate, func(s *classify.Substrate) {
		var kept []classify.CohortVariant
		for _, c := range s.Cohort {
			if c.ID != "cyp2c9-i359l" {
				kept = append(kept, c)
			}
		}
		s.Cohort = kept
		s.Graph.Edges[0].SourceIDs = []string{"no-such-source"}
	})
	// A sequence that no longer matches its MD5.
	mutate(t, m, kbfile.ClassifierProteins, func(ps *[]classify.ProteinSequence) {
		p := &(*ps)[0]
		p.Sequence = "W" + p.Sequence[1:]
	})
	// An asymmetric matrix.
	mutate(t, m, kbfile.ClassifierMatrix, func(mx *classify.SubstitutionMatrix) { mx.Scores[0][1]++ })
	// An unknown field, and a missing file.
	m[kbfile.ClassifierCitations] = &fstest.MapFile{Data: []byte(strings.Replace(string(m[kbfile.ClassifierCitations].Data), `"id":`, `"bogus":1,"id":`, 1))}
	delete(m, kbfile.ClassifierReadme)

	_, err := LoadFS(m)
	if err == nil {
		t.Fatal("LoadFS accepted corrupt classifier knowledge")
	}
	want := []struct{ file, field, message string }{
		{kbfile.ClassifierChanges, "hgvs_p", "reference residue does not match"},
		{kbfile.ClassifierSubstrate, "", "15 cohort variants, want 16"},
		{kbfile.ClassifierSubstrate, "demo_cases[", "is not a cohort variant"},
		{kbfile.ClassifierSubstrate, "graph.edges[0].source_ids[0]", `unknown source id "no-such-source"`},
		{kbfile.ClassifierProteins, "md5", "sequence MD5"},
		{kbfile.ClassifierMatrix, "scores[1][0]", "not symmetric"},
		{kbfile.ClassifierCitations, "", `unknown field "bogus"`},
		{kbfile.ClassifierReadme, "", "missing file"},
	}
	problems := Problems(err)
	for _, w := range want {
		found := false
		for _, p := range problems {
			if p.File == w.file && strings.HasPrefix(p.Field, w.field) && strings.Contains(p.Message, w.message) {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem %s %s: %s in\n%v", w.file, w.field, w.message, err)
		}
	}
}
