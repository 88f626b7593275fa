package engine_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/engine/population"
)

// rowSeverity grades a recommendation row as the engine's recSeverity
// does (DESIGN.md §3): avoid / alternative → HIGH, other actionable and
// conditional rows → MODERATE, otherwise none. It is written out again
// here so that the walk below does not test the engine against itself.
func rowSeverity(r *engine.Recommendation) engine.Severity {
	switch r.Actionability {
	case "yes":
		if r.AlternateDrug {
			return engine.SeverityHigh
		}
		for _, b := range r.Basis {
			switch b {
			case "text:Avoid", "text:alternative", "text:do not use", "text:contraindicat", "text:not recommended":
				return engine.SeverityHigh
			}
		}
		return engine.SeverityModerate
	case "conditional":
		return engine.SeverityModerate
	}
	return engine.SeverityNone
}

// diplotypeFor returns, for every gene with phenotype rules, one diplotype
// (as the request's diplotypes field takes it) per lookup value it
// reaches: the phenotype, and the activity score for activity-score
// genes. The first pair in allele order wins.
func diplotypeFor(k *evaluate.Engine) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, g := range k.Genes {
		if len(g.Rules) == 0 {
			continue
		}
		m := map[string]string{}
		for i := range g.Alleles {
			for j := i; j < len(g.Alleles); j++ {
				a, b := g.Alleles[i].Name, g.Alleles[j].Name
				call, err := k.Caller().Phenotype(g.Symbol, a, b)
				if err != nil {
					continue
				}
				for _, v := range []string{call.Phenotype, call.ActivityScore} {
					if _, ok := m[v]; v != "" && !ok {
						m[v] = a + "/" + b
					}
				}
			}
		}
		out[g.Symbol] = m
	}
	return out
}

// multiGeneTable is one multi-gene CPIC table of one drug and population.
type multiGeneTable struct {
	drug, population string
	genes            []string
	rows             []*engine.Recommendation
}

func multiGeneTables(k *evaluate.Engine) []multiGeneTable {
	idx := map[string]int{}
	var out []multiGeneTable
	for i := range k.Recommendations {
		r := &k.Recommendations[i]
		if len(r.Genes) < 2 {
			continue
		}
		key := r.Drug + "|" + r.Population + "|" + strings.Join(r.Genes, "+")
		j, ok := idx[key]
		if !ok {
			j = len(out)
			idx[key] = j
			out = append(out, multiGeneTable{drug: r.Drug, population: r.Population, genes: r.Genes})
		}
		out[j].rows = append(out[j].rows, r)
	}
	return out
}

// referenceValue is the lookup value of a gene's reference result: an HLA
// allele negative, else the phenotype or activity score of the default
// diplotype, as the row writes it.
func referenceValue(k *evaluate.Engine, gene, rowValue, lookupType string) bool {
	if lookupType == "allele_status" {
		return strings.HasSuffix(rowValue, " negative")
	}
	g, ok := k.Gene(gene)
	if !ok {
		return false
	}
	call, err := k.Caller().Phenotype(gene, g.DefaultAllele, g.DefaultAllele)
	return err == nil && (rowValue == call.Phenotype || rowValue == call.ActivityScore)
}

// TestPartnerGeneEveryTable walks every multi-gene table of the knowledge
// (TPMT + NUDT15, RYR1 + CACNA1S, CYP2C9 + HLA-B, CYP2D6 + CYP2C19,
// CYP2B6 + CYP2C19, CYP2C9 + SLCO1B1, ABCG2 + SLCO1B1, HLA-A + HLA-B) ×
// one gene given, the other not: for every value the given gene takes in
// the table,
//
//   - when the row for a reference result of the untested gene is
//     actionable (or the table has no such row), the given result is
//     actionable: a genotype-confirmed alert is never less severe than the
//     least severe actionable row for that value, and it names the
//     untested gene and says testing it could change the advice;
//   - otherwise (the clean twin) the answer is not escalated: no
//     genotype-confirmed alert above INFO; a pre-test alert asks for the
//     untested gene (CPIC level A) or the alert or warning names it as
//     untested (level B partners, the tricyclics' CYP2C19).
//
// The population is fixed through the request's context where the
// selector can fix it, and left open (every population evaluated, the
// most severe shown) otherwise. Warfarin (CYP2C9 + VKORC1 + CYP4F2) has
// no lookup table and is walked in TestPartnerGeneWarfarin. CYP3A5 +
// CYP3A4 has no multi-gene table in the knowledge (tacrolimus is keyed on
// CYP3A5 alone).
func TestPartnerGeneEveryTable(t *testing.T) {
	k := kb(t)
	dips := diplotypeFor(k)
	tables := multiGeneTables(k)
	seen := map[string]bool{}
	walked, actionable := 0, 0
	for _, tb := range tables {
		ctx, fixed := contextFor(k, tb.drug, tb.population)
		for _, given := range tb.genes {
			var partner string
			for _, g := range tb.genes {
				if g != given {
					partner = g
				}
			}
			values := map[string][]*engine.Recommendation{}
			var order []string
			for _, r := range tb.rows {
				v := r.Lookup[given]
				if _, ok := values[v]; !ok {
					order = append(order, v)
				}
				values[v] = append(values[v], r)
			}
			for _, v := range order {
				rows := values[v]
				req := engine.Request{Drug: tb.drug, Patient: &engine.Patient{}}
				if ctx != nil {
					req.Patient.MonthsOnDrug = ctx
				}
				lt := rows[0].LookupType[given]
				switch {
				case lt == "allele_status":
					allele, status, _ := strings.Cut(v, " ")
					req.HLA = map[string]string{given + allele: status}
				case dips[given][v] != "":
					req.Diplotypes = map[string]string{given: dips[given][v]}
				default:
					// A value no allele pair reaches (CYP2D6 "≥6.0"; a
					// "Likely" phenotype only a lab assigns).
					continue
				}
				// With the population open, every population's rows for v
				// count (the engine shows the most severe).
				all := rows
				if !fixed {
					all = nil
					for _, other := range tables {
						if other.drug == tb.drug && strings.Join(other.genes, "+") == strings.Join(tb.genes, "+") {
							for _, r := range other.rows {
								if r.Lookup[given] == v {
									all = append(all, r)
								}
							}
						}
					}
				}
				floor := engine.Severity(-1)
				refActionable, refRow := false, false
				for _, r := range all {
					if referenceValue(k, partner, r.Lookup[partner], r.LookupType[partner]) {
						refRow = true
						refActionable = refActionable || rowSeverity(r) > engine.SeverityNone
					}
					if s := rowSeverity(r); s > engine.SeverityNone && (floor < 0 || s < floor) {
						floor = s
					}
				}
				key := fmt.Sprintf("%s|%v|%s=%s", tb.drug, req.Patient.MonthsOnDrug != nil, given, v)
				if seen[key] {
					continue
				}
				seen[key] = true
				walked++
				name := fmt.Sprintf("%s (%s) %s %s, %s untested", tb.drug, tb.population, given, v, partner)
				res, err := k.Evaluate(req)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				cs := confirmed(res)
				if refActionable || !refRow {
					if floor < 0 {
						continue // no actionable row for v at all
					}
					actionable++
					if len(cs) == 0 {
						t.Errorf("%s: no genotype-confirmed alert, want at least %s; alerts %v", name, floor, alertSummaries(res))
						continue
					}
					if cs[0].Severity < floor {
						t.Errorf("%s: %s, lower than the least severe actionable row (%s)", name, cs[0].Severity, floor)
					}
					if !strings.Contains(cs[0].Message, partner+" was not tested") || !strings.Contains(cs[0].Message, "could change") {
						t.Errorf("%s: message does not name %s as untested: %q", name, partner, cs[0].Message)
					}
					continue
				}
				for _, a := range cs {
					if a.Severity > engine.SeverityInfo {
						t.Errorf("%s: the clean twin is escalated to %s: %s", name, a.Severity, a.Message)
					}
				}
				if !hasPreTest(res, partner) && !namesUntested(res, partner) {
					t.Errorf("%s: %s is not named as untested (no pre-test alert, alert or warning): %v %v", name, partner, alertSummaries(res), res.Warnings)
				}
			}
		}
	}
	if len(tables) < 20 || walked < 200 || actionable < 100 {
		t.Errorf("walked %d tables, %d values, %d actionable: the walk lost its tables", len(tables), walked, actionable)
	}
	t.Logf("%d tables, %d values walked, %d actionable", len(tables), walked, actionable)
}

// contextFor returns months on the drug that make the selector choose
// exactly pop for drug, and whether one was found.
func contextFor(k *evaluate.Engine, drug, pop string) (*float64, bool) {
	for _, m := range []float64{0, 4} {
		ch := k.Populations().SelectPopulation(drug, population.PopulationContext{MonthsOnDrug: f(m)})
		if len(ch.Populations) == 1 && ch.Populations[0] == pop {
			return f(m), true
		}
	}
	ch := k.Populations().SelectPopulation(drug, population.PopulationContext{})
	return nil, len(ch.Populations) == 1 && ch.Populations[0] == pop
}

func hasPreTest(res engine.Result, gene string) bool {
	for _, a := range res.Alerts {
		if a.Category == engine.CategoryUnknown && a.TestRecommended && a.Gene == gene {
			return true
		}
		// HLA pre-test alerts name the gene.
		if a.Category == engine.CategoryUnknown && a.TestRecommended && strings.HasPrefix(gene, "HLA-") && strings.Contains(a.Message, gene) {
			return true
		}
	}
	return false
}

// namesUntested reports whether an alert or a warning of res names gene as
// not tested.
func namesUntested(res engine.Result, gene string) bool {
	for _, a := range res.Alerts {
		if strings.Contains(a.Message, gene+" was not tested") {
			return true
		}
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, gene+" was not given") {
			return true
		}
	}
	return false
}

func alertSummaries(res engine.Result) []string {
	var out []string
	for _, a := range res.Alerts {
		out = append(out, fmt.Sprintf("%s %s %s: %s", a.Severity, a.Category, a.Gene, a.Message))
	}
	sort.Strings(out)
	return out
}

// TestPartnerGeneWarfarin: warfarin has no lookup table; CPIC's flow chart
// needs CYP2C9 and VKORC1. Either one given alone still gets the flow
// chart's MODERATE "calculate the dose with a pharmacogenetic algorithm",
// names the other as not given, and a pre-test alert asks for it.
func TestPartnerGeneWarfarin(t *testing.T) {
	for _, tc := range []struct {
		gene, diplotype, partner string
	}{
		{"CYP2C9", "*3/*3", "VKORC1"},
		{"CYP2C9", "*1/*1", "VKORC1"},
		{"VKORC1", "rs9923231 variant (T)/rs9923231 variant (T)", "CYP2C9"},
	} {
		res := check(t, engine.Request{Drug: "warfarin", Diplotypes: map[string]string{tc.gene: tc.diplotype}})
		cs := confirmed(res)
		if len(cs) != 1 || cs[0].Severity != engine.SeverityModerate {
			t.Errorf("warfarin %s %s: confirmed alerts %v", tc.gene, tc.diplotype, alertSummaries(res))
			continue
		}
		if !strings.Contains(strings.Join(cs[0].Assumptions, " "), "only "+tc.gene+" was given") {
			t.Errorf("warfarin %s %s: assumptions do not say %s was not given: %v", tc.gene, tc.diplotype, tc.partner, cs[0].Assumptions)
		}
		if !hasPreTest(res, tc.partner) {
			t.Errorf("warfarin %s %s: no pre-test alert for %s", tc.gene, tc.diplotype, tc.partner)
		}
	}
}

// TestNeverUnderstate is issue 21's table (items 1 and 3), each case with
// its clean twin, evaluated as POST /pgx/check evaluates a request: an
// actionable result of one gene of a multi-gene table with the other gene
// untested gets the actionable row (the untested gene named), and a
// result no row of the knowledge answers is stated at MODERATE (the level
// of a review), never left at NONE. The twins are not escalated.
func TestNeverUnderstate(t *testing.T) {
	naive := &engine.Patient{MonthsOnDrug: f(0)}
	for _, tc := range []struct {
		name string
		req  engine.Request
		// overall is the wanted overall severity.
		overall engine.Severity
		// gene and sev: the genotype-confirmed alert wanted (sev
		// SeverityNone: no confirmed alert above INFO).
		gene string
		sev  engine.Severity
		// says are texts the answer's alerts must hold; never texts no
		// alert may hold.
		says, never []string
	}{
		{"RYR1 MHS, CACNA1S untested, sevoflurane", engine.Request{Drug: "sevoflurane", Diplotypes: map[string]string{"RYR1": "Reference/c.1840C>T"}},
			engine.SeverityHigh, "RYR1", engine.SeverityHigh, []string{"CACNA1S was not tested", "relatively contraindicated"}, nil},
		{"RYR1 MHS from rs118192172, succinylcholine", engine.Request{Drug: "succinylcholine", Variants: []string{"rs118192172"},
			Zygosity: map[string]engine.Zygosity{"rs118192172": engine.Het}, GenesTested: []string{"RYR1"}},
			engine.SeverityHigh, "RYR1", engine.SeverityHigh, []string{"CACNA1S was not tested"}, nil},
		{"CACNA1S MHS, RYR1 untested, succinylcholine", engine.Request{Drug: "succinylcholine", Diplotypes: map[string]string{"CACNA1S": "Reference/c.520C>T"}},
			engine.SeverityHigh, "CACNA1S", engine.SeverityHigh, []string{"RYR1 was not tested"}, nil},
		{"twin: RYR1 Reference/Reference, sevoflurane", engine.Request{Drug: "sevoflurane", Diplotypes: map[string]string{"RYR1": "Reference/Reference"}},
			engine.SeverityInfo, "RYR1", engine.SeverityNone, []string{"Consider CACNA1S genotyping"}, []string{"contraindicated"}},
		{"both genes given, sevoflurane (HIGH as before)", engine.Request{Drug: "sevoflurane", Diplotypes: map[string]string{"RYR1": "Reference/c.1840C>T", "CACNA1S": "Reference/Reference"}},
			engine.SeverityHigh, "RYR1", engine.SeverityHigh, nil, []string{"was not tested"}},
		{"TPMT *3A/*3A, NUDT15 untested, azathioprine", engine.Request{Drug: "azathioprine", Diplotypes: map[string]string{"TPMT": "*3A/*3A"}},
			engine.SeverityHigh, "TPMT", engine.SeverityHigh, []string{"NUDT15 was not tested", "Based on TPMT status"}, nil},
		{"TPMT *1/*3A, NUDT15 untested: CPIC's row for TPMT alone", engine.Request{Drug: "mercaptopurine", Diplotypes: map[string]string{"TPMT": "*1/*3A"}},
			engine.SeverityModerate, "TPMT", engine.SeverityModerate, []string{"NUDT15 was not tested", "Based on TPMT status"}, nil},
		{"twin: TPMT *1/*1, NUDT15 untested", engine.Request{Drug: "azathioprine", Diplotypes: map[string]string{"TPMT": "*1/*1"}},
			engine.SeverityModerate, "TPMT", engine.SeverityNone, []string{"Consider NUDT15 genotyping"}, []string{"reduced starting doses"}},
		{"CYP2C9 *3/*3, HLA-B untested, phenytoin naive: the HLA-B*15:02-positive row", engine.Request{Drug: "phenytoin", Diplotypes: map[string]string{"CYP2C9": "*3/*3"}, Patient: naive},
			engine.SeverityHigh, "CYP2C9", engine.SeverityHigh, []string{"HLA-B was not tested", "HLA-B *15:02 positive"}, nil},
		{"twin: CYP2C9 *1/*1, HLA-B untested, phenytoin naive", engine.Request{Drug: "phenytoin", Diplotypes: map[string]string{"CYP2C9": "*1/*1"}, Patient: naive},
			engine.SeverityModerate, "CYP2C9", engine.SeverityNone, []string{"Consider HLA-B genotyping"}, nil},
		{"CYP2D6 *4/*4, CYP2C19 untested, amitriptyline", engine.Request{Drug: "amitriptyline", Diplotypes: map[string]string{"CYP2D6": "*4/*4"}},
			engine.SeverityHigh, "CYP2D6", engine.SeverityHigh, []string{"CYP2C19 was not tested"}, nil},
		{"ABCG2 poor function, SLCO1B1 untested, rosuvastatin", engine.Request{Drug: "rosuvastatin", Diplotypes: map[string]string{"ABCG2": "rs2231142 variant (T)/rs2231142 variant (T)"}},
			engine.SeverityHigh, "ABCG2", engine.SeverityHigh, []string{"SLCO1B1 was not tested", "Based on ABCG2 status"}, nil},
		{"NAT2 poor metabolizer, hydralazine: no CPIC row", engine.Request{Drug: "hydralazine", Diplotypes: map[string]string{"NAT2": "*5/*5"}},
			engine.SeverityModerate, "", engine.SeverityNone, []string{"No CPIC row for NAT2 Poor Metabolizer (*5/*5) with hydralazine", "only part of the CPIC guideline"}, nil},
		{"NAT2 intermediate metabolizer from rsIDs, hydralazine: no CPIC row", engine.Request{Drug: "hydralazine", Variants: []string{"rs1801280"},
			Zygosity: map[string]engine.Zygosity{"rs1801280": engine.Het}, GenesTested: []string{"NAT2"}},
			engine.SeverityModerate, "", engine.SeverityNone, []string{"No CPIC row for NAT2 Intermediate Metabolizer"}, nil},
		{"twin: NAT2 rapid metabolizer, hydralazine: the row answers", engine.Request{Drug: "hydralazine", Diplotypes: map[string]string{"NAT2": "*4/*4"}},
			engine.SeverityModerate, "NAT2", engine.SeverityModerate, []string{"at least 75 mg"}, []string{"No CPIC row"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := check(t, tc.req)
			if res.OverallSeverity != tc.overall {
				t.Errorf("overall %s, want %s; alerts %v", res.OverallSeverity, tc.overall, alertSummaries(res))
			}
			var got engine.Severity = engine.SeverityNone
			for _, a := range confirmed(res) {
				if a.Gene == tc.gene && a.Severity > got {
					got = a.Severity
				}
			}
			if tc.sev == engine.SeverityNone {
				if got > engine.SeverityInfo {
					t.Errorf("genotype-confirmed %s alert %s, want none above INFO", tc.gene, got)
				}
			} else if got != tc.sev {
				t.Errorf("genotype-confirmed %s alert %s, want %s; alerts %v", tc.gene, got, tc.sev, alertSummaries(res))
			}
			var text strings.Builder
			for _, a := range res.Alerts {
				text.WriteString(a.Message + " " + a.Action + " " + a.Recommendation + " " + strings.Join(a.Assumptions, " ") + "\n")
			}
			for _, s := range tc.says {
				if !strings.Contains(text.String(), s) {
					t.Errorf("no alert says %q:\n%s", s, text.String())
				}
			}
			for _, s := range tc.never {
				if strings.Contains(text.String(), s) {
					t.Errorf("an alert says %q:\n%s", s, text.String())
				}
			}
		})
	}
}
