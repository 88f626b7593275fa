package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
)

// TestG6PDSexRefusals (issue 21 item 2): genotype input that the patient's
// sex makes impossible for the X-linked G6PD is a 422 naming the field;
// each refusal has a clean twin that reads normally.
func TestG6PDSexRefusals(t *testing.T) {
	k := kb(t)
	const (
		aminus = "A- 202A_376G"
		bref   = "B (reference)"
	)
	male, female := &engine.Patient{Sex: "male"}, &engine.Patient{Sex: "female"}
	zyg := func(z engine.Zygosity) map[string]engine.Zygosity { return map[string]engine.Zygosity{"rs1050828": z} }
	call := func(gt string) []engine.PositionCall {
		return []engine.PositionCall{{Chrom: "chrX", Pos: 154536002, Ref: "C", Alt: "T", Genotype: gt}}
	}
	tests := []struct {
		name  string
		req   engine.Request
		field string // the refused field; "" when the twin reads
	}{
		{"male, two different alleles in a diplotype", engine.Request{Diplotypes: map[string]string{"G6PD": bref + "/" + aminus}, Patient: male}, "diplotypes.G6PD"},
		{"male, one allele (twin)", engine.Request{Diplotypes: map[string]string{"G6PD": aminus}, Patient: male}, ""},
		{"male, the same allele twice (twin: hemizygous)", engine.Request{Diplotypes: map[string]string{"G6PD": aminus + "/" + aminus}, Patient: male}, ""},
		{"male, zygosity het", engine.Request{Variants: []string{"rs1050828"}, Zygosity: zyg(engine.Het), Patient: male}, "zygosity.rs1050828"},
		{"male, zygosity hemi (twin)", engine.Request{Variants: []string{"rs1050828"}, Zygosity: zyg(engine.Hemi), Patient: male}, ""},
		{"male, HGVS het", engine.Request{Variants: []string{"NC_000023.11:g.154536002C>T"}, Zygosity: map[string]engine.Zygosity{"NC_000023.11:g.154536002C>T": engine.Het}, Patient: male}, "zygosity.NC_000023.11:g.154536002C>T"},
		{"male, heterozygous call", engine.Request{Calls: call("0/1"), Patient: male}, "calls[0].genotype"},
		{"male, haploid call (twin)", engine.Request{Calls: call("1"), Patient: male}, ""},
		{"female, zygosity hemi", engine.Request{Variants: []string{"rs1050828"}, Zygosity: zyg(engine.Hemi), Patient: female}, "zygosity.rs1050828"},
		{"female, zygosity het (twin)", engine.Request{Variants: []string{"rs1050828"}, Zygosity: zyg(engine.Het), Patient: female}, ""},
		{"female, haploid call", engine.Request{Calls: call("1"), Patient: female}, "calls[0].genotype"},
		{"female, heterozygous call (twin)", engine.Request{Calls: call("0/1"), Patient: female}, ""},
		{"female, one allele", engine.Request{Diplotypes: map[string]string{"G6PD": aminus}, Patient: female}, "diplotypes.G6PD"},
		{"female, two alleles (twin)", engine.Request{Diplotypes: map[string]string{"G6PD": bref + "/" + aminus}, Patient: female}, ""},
		{"autosomal het in a male is not refused", engine.Request{Variants: []string{"rs4244285"}, Zygosity: map[string]engine.Zygosity{"rs4244285": engine.Het}, Patient: male}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Drug = "rasburicase"
			_, err := k.Evaluate(tc.req)
			var fields []string
			var ve *engine.ValidationError
			if errors.As(err, &ve) {
				for _, fe := range ve.Fields {
					fields = append(fields, fe.Field)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			var want []string
			if tc.field != "" {
				want = []string{tc.field}
			}
			if diff := cmp.Diff(want, fields); diff != "" {
				t.Errorf("refused fields (-want +got):\n%s\nerr: %v", diff, err)
			}
		})
	}
}

// TestG6PDReadingAndSeverity (issue 21 item 2): the reading of G6PD by sex
// (unknown sex stated in the alert's summary; a variant without zygosity
// read both ways) and the severity of a result that must be measured: a
// heterozygous female (Variable) on a drug whose Deficient row says avoid
// is MODERATE with CPIC's measurement instruction as the recommendation —
// before, INFO "no dose or drug change". Each rule has its clean twin.
func TestG6PDReadingAndSeverity(t *testing.T) {
	const (
		aminus  = "A- 202A_376G"
		bref    = "B (reference)"
		measure = "To ascertain G6PD status, enzyme activity must be measured. Drug use should be guided per the recommendations based on the activity-based phenotype."
	)
	male, female := &engine.Patient{Sex: "male"}, &engine.Patient{Sex: "female"}
	tests := []struct {
		name     string
		req      engine.Request
		sev      engine.Severity
		rec      string   // the G6PD genotype alert's recommendation, "" = no such alert
		has      []string // substrings of its summary
		hasNot   []string
		phenoSet []string // the G6PD phenotypes read
	}{
		{name: "heterozygous female, rasburicase: MODERATE, measure first",
			req: engine.Request{Drug: "rasburicase", Diplotypes: map[string]string{"G6PD": bref + "/" + aminus}, Patient: female},
			sev: engine.SeverityModerate, rec: measure,
			has:    []string{"G6PD Variable (B (reference)/A- 202A_376G)", "enzyme activity must be measured before use", `deficient result: "Avoid use"`},
			hasNot: []string{"no dose or drug change", "Patient sex not given"}, phenoSet: []string{"Variable"}},
		{name: "heterozygous female by rsID, primaquine: MODERATE",
			req: engine.Request{Drug: "primaquine", Variants: []string{"rs1050828"}, Zygosity: map[string]engine.Zygosity{"rs1050828": engine.Het}, GenesTested: []string{"G6PD"}, Patient: female},
			sev: engine.SeverityModerate, rec: measure, has: []string{"must be measured before use"}, phenoSet: []string{"Variable"}},
		{name: "heterozygous female by HGVS, tafenoquine: MODERATE",
			req: engine.Request{Drug: "tafenoquine", Variants: []string{"NC_000023.11:g.154536002C>T"}, Zygosity: map[string]engine.Zygosity{"NC_000023.11:g.154536002C>T": engine.Het}, GenesTested: []string{"G6PD"}, Patient: female},
			sev: engine.SeverityModerate, rec: measure, has: []string{"must be measured before use"}, phenoSet: []string{"Variable"}},
		{name: "twin: heterozygous female, nitrofurantoin (Deficient row is not avoid) stays INFO",
			req: engine.Request{Drug: "nitrofurantoin", Diplotypes: map[string]string{"G6PD": bref + "/" + aminus}, Patient: female},
			sev: engine.SeverityInfo, rec: "If deemed necessary to ascertain G6PD status, enzyme activity must be measured. Drug use should be guided per the recommendations based on the activity-based phenotype.",
			has: []string{"no dose or drug change"}, phenoSet: []string{"Variable"}},
		{name: "twin: normal female, rasburicase: no alert",
			req: engine.Request{Drug: "rasburicase", Diplotypes: map[string]string{"G6PD": bref + "/" + bref}, Patient: female},
			sev: engine.SeverityNone, phenoSet: []string{"Normal"}},
		{name: "hemizygous male, rasburicase: HIGH avoid, no sex note",
			req: engine.Request{Drug: "rasburicase", Diplotypes: map[string]string{"G6PD": aminus}, Patient: male},
			sev: engine.SeverityHigh, rec: "Avoid use", hasNot: []string{"Patient sex not given"}, phenoSet: []string{"Deficient"}},
		{name: "sex not given, two alleles: read as a female's and said so in the summary",
			req: engine.Request{Drug: "rasburicase", Diplotypes: map[string]string{"G6PD": bref + "/" + aminus}},
			sev: engine.SeverityModerate, rec: measure,
			has: []string{"Patient sex not given: the G6PD genotype has two alleles, so it was read as a female's"}, phenoSet: []string{"Variable"}},
		{name: "sex not given, one allele: read as a male's and said so",
			req: engine.Request{Drug: "rasburicase", Diplotypes: map[string]string{"G6PD": aminus}},
			sev: engine.SeverityHigh, rec: "Avoid use",
			has: []string{"Patient sex not given: the G6PD genotype has one allele, so it was read as a male's"}, phenoSet: []string{"Deficient"}},
		{name: "sex not given, a variant without zygosity: both readings, the most severe applies",
			req: engine.Request{Drug: "rasburicase", Variants: []string{"rs1050828"}, GenesTested: []string{"G6PD"}},
			sev: engine.SeverityHigh, rec: "Avoid use",
			has: []string{"read both as a male's", "give patient.sex"}, phenoSet: []string{"Deficient", "Variable"}},
		{name: "twin: female, a variant without zygosity: heterozygous only",
			req: engine.Request{Drug: "rasburicase", Variants: []string{"rs1050828"}, GenesTested: []string{"G6PD"}, Patient: female},
			sev: engine.SeverityModerate, rec: measure, hasNot: []string{"Patient sex not given"}, phenoSet: []string{"Variable"}},
		{name: "twin: male, a variant without zygosity: hemizygous only",
			req: engine.Request{Drug: "rasburicase", Variants: []string{"rs1050828"}, GenesTested: []string{"G6PD"}, Patient: male},
			sev: engine.SeverityHigh, rec: "Avoid use", hasNot: []string{"Patient sex not given"}, phenoSet: []string{"Deficient"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := check(t, tc.req)
			if res.OverallSeverity != tc.sev {
				t.Errorf("overall %s, want %s", res.OverallSeverity, tc.sev)
			}
			var alert *engine.Alert
			for i, a := range res.Alerts {
				if a.Gene == "G6PD" && a.Category == engine.CategoryConfirmed {
					alert = &res.Alerts[i]
				}
			}
			if tc.rec == "" {
				if alert != nil {
					t.Errorf("unexpected alert %q", alert.Message)
				}
			} else if alert == nil {
				t.Fatalf("no G6PD genotype alert; alerts %+v", res.Alerts)
			} else {
				if alert.Recommendation != tc.rec {
					t.Errorf("recommendation %q, want %q", alert.Recommendation, tc.rec)
				}
				for _, s := range tc.has {
					if !strings.Contains(alert.Message, s) {
						t.Errorf("summary %q lacks %q", alert.Message, s)
					}
				}
				for _, s := range tc.hasNot {
					if strings.Contains(alert.Message, s) {
						t.Errorf("summary %q has %q", alert.Message, s)
					}
				}
			}
			seen := map[string]bool{}
			var phen []string
			for _, g := range res.Genotype {
				if g.Gene == "G6PD" && !seen[g.Phenotype] {
					seen[g.Phenotype] = true
					phen = append(phen, g.Phenotype)
				}
			}
			if diff := cmp.Diff(tc.phenoSet, sortedCopy(phen)); diff != "" {
				t.Errorf("G6PD phenotypes (-want +got):\n%s", diff)
			}
		})
	}
}

func sortedCopy(ss []string) []string {
	out := append([]string(nil), ss...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
