package knowledge

import (
	"slices"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/knowledge/internal/kbfile"
)

// TestProfilesFile checks the committed classifier_profiles.json (written
// by knowledge/internal/profilegen, outside CI): one profile per protein
// sequence of the data pack, in gene order, each of its protein's length;
// the substrate proteins' profiles are of their sequences (validation);
// the provenance names the command, the tools and a source of the
// knowledge.
func TestProfilesFile(t *testing.T) {
	b := mustLoadBase(t)
	kb := b.Engine
	ps := b.Classifier.Profiles
	if ps == nil {
		t.Fatal("no profiles")
	}
	var genes []string
	for _, p := range ps.Proteins {
		genes = append(genes, p.Gene)
		if len(p.Columns) != p.Length || p.EffectiveSequences <= 0 {
			t.Errorf("%s: %d columns, length %d, Neff %g", p.Gene, len(p.Columns), p.Length, p.EffectiveSequences)
		}
	}
	want := []string{"CYP2C19", "CYP2C9", "CYP2D6", "DPYD", "G6PD", "NUDT15", "SLCO1B1", "TPMT", "VKORC1"}
	if !slices.Equal(genes, want) {
		t.Errorf("profiled genes = %v, want the data pack's %v", genes, want)
	}
	pv := ps.Provenance
	if !strings.Contains(pv.Command, "go run ./knowledge/internal/profilegen") || len(pv.Tools) != 3 || len(pv.DatabaseSHA256) != 64 {
		t.Errorf("provenance incomplete: %+v", pv)
	}
	for _, id := range pv.SourceIDs {
		if _, ok := kb.Source(id); !ok {
			t.Errorf("provenance cites unknown source %q", id)
		}
	}
}

func TestCorruptProfiles(t *testing.T) {
	m := copyFS(t)
	mutate(t, m, kbfile.ClassifierProfiles, func(ps *classify.ConservationProfiles) {
		ps.Provenance.Command = ""
		for i := range ps.Proteins {
			p := &ps.Proteins[i]
			switch p.Gene {
			case "TPMT":
				p.Columns[0].Ref = "W" // no longer the stated MD5
			case "NUDT15":
				p.Columns[3].Freq[0] += 100
				p.Columns[4].Neff = 0
			case "CYP2C9":
				p.Columns = p.Columns[:len(p.Columns)-1]
			}
		}
	})
	_, err := LoadFS(m)
	if err == nil {
		t.Fatal("LoadFS accepted corrupt profiles")
	}
	f := kbfile.ClassifierProfiles
	want := []struct{ field, message string }{
		{"provenance.command", "is required"},
		{"md5", "TPMT: the columns' residues have MD5"},
		{"columns[3].freq", "NUDT15 position 4: frequencies sum to"},
		{"columns[4].neff", "NUDT15 position 5: Neff must be positive"},
		{"columns", "CYP2C9: 489 columns for length 490"},
	}
	problems := Problems(err)
	for _, w := range want {
		found := false
		for _, p := range problems {
			if p.File == f && p.Field == w.field && strings.Contains(p.Message, w.message) {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem %s %s: %s in\n%v", f, w.field, w.message, err)
		}
	}
}
