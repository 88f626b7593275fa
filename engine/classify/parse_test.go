package classify_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/classify"
)

func TestParseProteinChange(t *testing.T) {
	ok := []struct {
		in   string
		want classify.Substitution
	}{
		{"p.Ala154Thr", classify.Substitution{Ref: 'A', Pos: 154, Alt: 'T'}},
		{"p.(Arg139Cys)", classify.Substitution{Ref: 'R', Pos: 139, Alt: 'C'}},
		{"Arg139Cys", classify.Substitution{Ref: 'R', Pos: 139, Alt: 'C'}},
		{"p.ARG139CYS", classify.Substitution{Ref: 'R', Pos: 139, Alt: 'C'}},
		{"p.arg139cys", classify.Substitution{Ref: 'R', Pos: 139, Alt: 'C'}},
		{"R139C", classify.Substitution{Ref: 'R', Pos: 139, Alt: 'C'}},
		{"p.R139C", classify.Substitution{Ref: 'R', Pos: 139, Alt: 'C'}},
		{"r139c", classify.Substitution{Ref: 'R', Pos: 139, Alt: 'C'}},
		{"  A154T  ", classify.Substitution{Ref: 'A', Pos: 154, Alt: 'T'}},
		{"M1V", classify.Substitution{Ref: 'M', Pos: 1, Alt: 'V'}},
		{"p.Trp1025Gly", classify.Substitution{Ref: 'W', Pos: 1025, Alt: 'G'}},
	}
	for _, tc := range ok {
		got, err := classify.ParseProteinChange(tc.in)
		if err != nil {
			t.Errorf("ParseProteinChange(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseProteinChange(%q) (-want +got):\n%s", tc.in, diff)
		}
	}

	bad := []struct {
		in          string
		kind        error
		consequence string
		reason      string // substring
	}{
		{"", classify.ErrMalformed, "", "empty"},
		{"p.", classify.ErrMalformed, "", "not a protein substitution"},
		{"154", classify.ErrMalformed, "", "not a protein substitution"},
		{"Ala", classify.ErrMalformed, "", "not a protein substitution"},
		{"p.Ala154", classify.ErrMalformed, "", "not a protein substitution"},
		{"p.Ala154T", classify.ErrMalformed, "", "not a protein substitution"},
		{"A154Thr", classify.ErrMalformed, "", "not a protein substitution"},
		{"p.Xyz154Thr", classify.ErrMalformed, "", "not an amino-acid code"},
		{"p.Sec154Thr", classify.ErrMalformed, "", "not one of the 20 standard"},
		{"B154T", classify.ErrMalformed, "", "not one of the 20 standard"},
		{"A154B", classify.ErrMalformed, "", "not one of the 20 standard"},
		{"Al154T", classify.ErrMalformed, "", "not an amino-acid code"},
		{"A0T", classify.ErrMalformed, "", "out of range"},
		{"A1234567T", classify.ErrMalformed, "", "out of range"},
		{"A 154T", classify.ErrMalformed, "", "not a protein substitution"},
		{"c.460G>A", classify.ErrMalformed, "", ""},
		{"Splice Defect", classify.ErrMalformed, "", ""},
		{strings.Repeat("A", 100), classify.ErrMalformed, "", "longer than"},
		{"p.Trp212Ter", classify.ErrNotMissense, "stop-gain", "not a missense"},
		{"p.Trp212*", classify.ErrNotMissense, "stop-gain", ""},
		{"W212X", classify.ErrNotMissense, "stop-gain", ""},
		{"W212*", classify.ErrNotMissense, "stop-gain", ""},
		{"p.Ala154=", classify.ErrNotMissense, "synonymous", ""},
		{"A154A", classify.ErrNotMissense, "synonymous", ""},
		{"p.Ala154Ala", classify.ErrNotMissense, "synonymous", ""},
		{"K273fs", classify.ErrNotMissense, "frameshift", ""},
		{"p.Lys273fs", classify.ErrNotMissense, "frameshift", ""},
		{"p.Arg259GlyfsTer5", classify.ErrNotMissense, "frameshift", ""},
		{"p.Lys273del", classify.ErrNotMissense, "deletion", ""},
		{"p.Lys273dup", classify.ErrNotMissense, "duplication", ""},
		{"p.Lys273delinsAla", classify.ErrNotMissense, "deletion-insertion", ""},
		{"p.Lys273_Ala274insGly", classify.ErrNotMissense, "insertion", ""},
		{"p.Ter491GlnextTer5", classify.ErrMalformed, "", "not an amino-acid code"},
		{"p.Met1?", classify.ErrNotMissense, "unknown-consequence", ""},
	}
	for _, tc := range bad {
		_, err := classify.ParseProteinChange(tc.in)
		if !errors.Is(err, tc.kind) {
			t.Errorf("ParseProteinChange(%q) = %v, want %v", tc.in, err, tc.kind)
			continue
		}
		var pe *classify.ParseError
		if !errors.As(err, &pe) {
			t.Errorf("ParseProteinChange(%q): error %T is not a *ParseError", tc.in, err)
			continue
		}
		if pe.Consequence != tc.consequence {
			t.Errorf("ParseProteinChange(%q) consequence = %q, want %q", tc.in, pe.Consequence, tc.consequence)
		}
		if !strings.Contains(pe.Reason, tc.reason) {
			t.Errorf("ParseProteinChange(%q) reason %q lacks %q", tc.in, pe.Reason, tc.reason)
		}
	}
}

func TestSubstitutionFormats(t *testing.T) {
	s := classify.Substitution{Ref: 'Y', Pos: 240, Alt: 'C'}
	if got := s.HGVS(); got != "p.Tyr240Cys" {
		t.Errorf("HGVS = %q", got)
	}
	if got := s.Short(); got != "Y240C" {
		t.Errorf("Short = %q", got)
	}
}

// FuzzParseProteinChange checks that the parser never panics, that every
// accepted change is a substitution of two different standard residues at
// a positive position, and that both notations it prints parse back to the
// same substitution.
func FuzzParseProteinChange(f *testing.F) {
	for _, s := range []string{"p.Ala154Thr", "R139C", "p.(Arg139Cys)", "W212X", "p.Trp212Ter", "K273fs", "p.Ala154=",
		"", "p.", "A0T", "p.Lys273_Ala274insGly", "c.460G>A", "p.Sec1Ala", "a154t", "Y240S", "p.Met1?"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := classify.ParseProteinChange(in)
		if err != nil {
			if !errors.Is(err, classify.ErrMalformed) && !errors.Is(err, classify.ErrNotMissense) {
				t.Fatalf("ParseProteinChange(%q): error of unknown kind: %v", in, err)
			}
			return
		}
		if s.Pos < 1 || s.Ref == s.Alt || !strings.ContainsRune(classify.StandardResidues, rune(s.Ref)) ||
			!strings.ContainsRune(classify.StandardResidues, rune(s.Alt)) {
			t.Fatalf("ParseProteinChange(%q) = %+v: not a substitution of two standard residues", in, s)
		}
		for _, back := range []string{s.HGVS(), s.Short()} {
			s2, err := classify.ParseProteinChange(back)
			if err != nil || s2 != s {
				t.Fatalf("ParseProteinChange(%q) = %+v; re-parsing %q gives %+v, %v", in, s, back, s2, err)
			}
		}
	})
}
