package calling

import "testing"

func TestAccessionChrom(t *testing.T) {
	for acc, want := range map[string]string{
		"NC_000010.11": "chr10", "NC_000003.12": "chr3", "NC_000023.11": "chrX", "NC_000024.10": "chrY",
		"NC_012920.1": "chrM", "NC_000025.1": "", "NC_000000.1": "", "NC_0000AB.1": "", "NM_000769.4": "", "": "",
	} {
		if got := accessionChrom(acc); got != want {
			t.Errorf("accessionChrom(%q) = %q, want %q", acc, got, want)
		}
	}
}

func TestRefDisagrees(t *testing.T) {
	for _, c := range []struct {
		stated, grch38 string
		want           bool
	}{
		{"G", "G", false}, {"C", "G", true}, {"g", "G", false}, {"GAT", "G", false}, {"G", "GAT", false},
		{"TAT", "GAT", true}, {"N", "G", false}, {"", "G", false}, {"A", "N", false},
	} {
		if got := refDisagrees(c.stated, c.grch38); got != c.want {
			t.Errorf("refDisagrees(%q, %q) = %v, want %v", c.stated, c.grch38, got, c.want)
		}
	}
}
