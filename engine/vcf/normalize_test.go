package vcf

import "testing"

func TestEquivalent(t *testing.T) {
	for _, tc := range []struct {
		name           string
		a, b           Allele
		same, compares bool
	}{
		{"identical SNV", Allele{100, "C", "T"}, Allele{100, "C", "T"}, true, true},
		{"other base", Allele{100, "C", "T"}, Allele{100, "C", "G"}, false, true},
		// UGT1A1 rs3064744 (TA)7: GATK pads the insertion with one base, the
		// definitions with the whole first repeat unit.
		{"TA insertion, GATK vs definition", Allele{233760233, "C", "CAT"}, Allele{233760233, "CAT", "CATAT"}, true, true},
		{"TA insertion vs TA deletion", Allele{233760233, "C", "CAT"}, Allele{233760233, "CAT", "C"}, false, true},
		{"deletion shifted in a repeat", Allele{100, "GAA", "GA"}, Allele{101, "AA", "A"}, true, true},
		{"padded deletion", Allele{97450065, "TG", "T"}, Allele{97450064, "CTG", "CT"}, true, true},
		{"padding with a trailing base", Allele{100, "C", "T"}, Allele{100, "CA", "TA"}, true, true},
		{"REFs disagree", Allele{100, "CA", "C"}, Allele{101, "G", "T"}, false, false},
		{"gap between REFs", Allele{100, "C", "T"}, Allele{105, "G", "A"}, false, false},
		{"touching REFs, different changes", Allele{100, "C", "T"}, Allele{101, "G", "A"}, false, true},
		{"symbolic ALT", Allele{100, "C", "<NON_REF>"}, Allele{100, "C", "<NON_REF>"}, false, false},
		{"spanning deletion", Allele{100, "C", "*"}, Allele{100, "C", "T"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, order := range [][2]Allele{{tc.a, tc.b}, {tc.b, tc.a}} {
				same, compares := Equivalent(order[0], order[1])
				if same != tc.same || compares != tc.compares {
					t.Errorf("Equivalent(%+v, %+v) = %v, %v; want %v, %v", order[0], order[1], same, compares, tc.same, tc.compares)
				}
			}
		})
	}
}

// FuzzEquivalent: the relation is symmetric, reflexive on base alleles, and
// never both unequal and "same".
func FuzzEquivalent(f *testing.F) {
	f.Add(100, "C", "CAT", 100, "CAT", "CATAT")
	f.Add(100, "GAA", "GA", 101, "AA", "A")
	f.Add(5, "A", "<DEL>", 3, "GTA", "G")
	f.Fuzz(func(t *testing.T, ap int, ar, aa string, bp int, br, ba string) {
		if ap > 1<<30 || bp > 1<<30 || len(ar)+len(br)+len(aa)+len(ba) > 4096 {
			return
		}
		a, b := Allele{ap, ar, aa}, Allele{bp, br, ba}
		s1, c1 := Equivalent(a, b)
		s2, c2 := Equivalent(b, a)
		if s1 != s2 || c1 != c2 {
			t.Fatalf("not symmetric: %v,%v vs %v,%v", s1, c1, s2, c2)
		}
		if s1 && !c1 {
			t.Fatal("same but not comparable")
		}
		if ap >= 1 && isBases(ar) && isBases(aa) {
			if s, c := Equivalent(a, a); !s || !c {
				t.Fatalf("%+v is not the same as itself", a)
			}
		}
	})
}
