package cdshooks

import (
	"unicode/utf8"

	"errors"
	"github.com/google/go-cmp/cmp"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/fhir"
	"github.com/pgxsafety/pgxsafety/knowledge"
)

// newTestBuilder returns a card builder over the embedded knowledge for an
// order-sign call.
func newTestBuilder(t *testing.T) (*cardBuilder, *evaluate.Engine) {
	t.Helper()
	kb, err := knowledge.Default()
	if err != nil {
		t.Fatal(err)
	}
	p, err := fhir.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{kb: kb.Knowledge, names: kb.Names(), parser: p, mapper: fhir.NewMapper(p, kb.Names(), kb.Caller())}
	call := &hookCall{hook: HookOrderSign, instance: "hook-1", service: "pgx-order-sign", patientID: "p1"}
	return &cardBuilder{s: s, call: call, data: map[string]*keyData{}}, kb
}

// TestPopulationRiskCard: a population-risk alert (an endemic risk of the
// patient's state for the drug) becomes a card of that topic whose source
// links the alert's own citation and whose detail lists its sources.
func TestPopulationRiskCard(t *testing.T) {
	b, kb := newTestBuilder(t)
	req := engine.Request{Drug: "primaquine", State: "Andaman and Nicobar Islands"}
	res, err := kb.Evaluate(req)
	if err != nil {
		t.Fatal(err)
	}
	var pop *engine.Alert
	for i := range res.Alerts {
		if res.Alerts[i].Category == engine.CategoryPopulationRisk {
			pop = &res.Alerts[i]
			break
		}
	}
	if pop == nil {
		t.Fatalf("no population-risk alert for %+v: %+v", req, res.Alerts)
	}
	cites := res.AlertCitations(pop.ID)
	if len(cites) == 0 {
		t.Fatalf("the population-risk alert %s has no citation", pop.ID)
	}
	order := fhir.MedicationOrder{Ref: "MedicationRequest/mr1", ID: "mr1", Identified: true}
	b.results = []checked{{order: order, drug: fhir.DrugMatch{Drug: "primaquine", Via: "name in text"}, req: req, res: res}}
	var card *Card
	cards := b.build()
	for i := range cards {
		if cards[i].Source.Topic != nil && cards[i].Source.Topic.Code == CategoryCode(engine.CategoryPopulationRisk) {
			card = &cards[i] // the first: cards keep the alerts' order
			break
		}
	}
	if card == nil {
		t.Fatalf("no population-risk card among %d cards", len(cards))
	}
	if card.Indicator != IndicatorInfo {
		t.Errorf("indicator %q, want info", card.Indicator)
	}
	for _, ct := range cites {
		if !strings.Contains(card.Detail, esc(ct.Source)) {
			t.Errorf("detail does not list the citation %q:\n%s", ct.Source, card.Detail)
		}
		if httpsURL(ct.URL) && card.Source.URL != ct.URL && card.Source.URL == "" {
			t.Errorf("source URL empty although the alert cites %s", ct.URL)
		}
	}
}

// TestFailedCard: a drug the engine could not evaluate gets a warning card
// that says the check was not run and why — never silence. An input the
// engine refused is named (it is the patient's data); any other error is
// internal and does not reach the card.
func TestFailedCard(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		want      string
		forbidden string
	}{
		{"refused input", &engine.ValidationError{Fields: []engine.FieldError{{Field: "variants[0]", Reason: "is not an rsID"}}},
			"the patient's data sent with the order could not be used (variants[0]: is not an rsID)", ""},
		{"internal error", errors.New("pq: connection refused at 10.0.0.7:5432"),
			"an internal error stopped the check", "10.0.0.7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := newTestBuilder(t)
			order := fhir.MedicationOrder{Ref: "MedicationRequest/mr2", ID: "mr2", Identified: true}
			b.failed = []failedCheck{{order: order, drug: fhir.DrugMatch{Drug: "warfarin", Via: "RxNorm 11289"}, err: tc.err}}
			cards := b.build()
			if len(cards) != 1 {
				t.Fatalf("%d cards, want the one failed-check card: %+v", len(cards), cards)
			}
			c := cards[0]
			if c.Indicator != IndicatorWarning {
				t.Errorf("indicator %q, want warning", c.Indicator)
			}
			if !strings.Contains(c.Summary, "Warfarin") || !strings.Contains(c.Summary, "could not be run") {
				t.Errorf("summary %q does not say the check was not run", c.Summary)
			}
			if !strings.Contains(c.Detail, esc(tc.want)) || !strings.Contains(c.Detail, esc("MedicationRequest/mr2")) {
				t.Errorf("detail %q does not name the order and %q", c.Detail, tc.want)
			}
			if tc.forbidden != "" && (strings.Contains(c.Detail, tc.forbidden) || strings.Contains(c.Summary, tc.forbidden)) {
				t.Errorf("the card quotes the internal error: %q", c.Detail)
			}
			if c.Source.Topic == nil || c.Source.Topic.Code != "data-quality" {
				t.Errorf("topic %+v, want data-quality", c.Source.Topic)
			}
		})
	}
}

// TestSummaryWording: a card's summary says what the matched guideline row
// says, per kind of finding, within the CDS Hooks limit (fewer than 140
// characters). The findings are the engine's for real genotypes; the row
// texts are the knowledge's (CPIC), so the expected summaries are built
// from the alert's own recommendation where the row's words are quoted.
func TestSummaryWording(t *testing.T) {
	b, kb := newTestBuilder(t)
	acs := "acute coronary syndrome"
	tests := []struct {
		name string
		req  engine.Request
		// pick chooses the alert (by category and gene).
		category engine.Category
		gene     string
		sev      engine.Severity
		// want builds the expected summary from the alert; prefix and
		// suffix are checked instead when want is nil (a row's text cut to
		// fit).
		want   func(a engine.Alert) string
		prefix string
		suffix string
	}{
		{name: "avoid, with re-checked alternatives (HIGH)",
			req:      engine.Request{Drug: "clopidogrel", Diplotypes: map[string]string{"CYP2C19": "*2/*2"}, Indication: acs},
			category: engine.CategoryConfirmed, gene: "CYP2C19", sev: engine.SeverityHigh,
			want: func(engine.Alert) string {
				return "Clopidogrel: CYP2C19 Poor Metabolizer (*2/*2) — CPIC: avoid; consider prasugrel or ticagrelor"
			}},
		{name: "avoid, no alternative named (HIGH)",
			req:      engine.Request{Drug: "amitriptyline", Diplotypes: map[string]string{"CYP2D6": "*4/*4"}},
			category: engine.CategoryConfirmed, gene: "CYP2D6", sev: engine.SeverityHigh,
			want: func(engine.Alert) string {
				return "Amitriptyline: CYP2D6 Poor Metabolizer (*4/*4) — CPIC: avoid or use an alternative"
			}},
		{name: "dose change: the row's words (MODERATE)",
			req:      engine.Request{Drug: "efavirenz", Diplotypes: map[string]string{"CYP2B6": "*6/*6"}},
			category: engine.CategoryConfirmed, gene: "CYP2B6", sev: engine.SeverityModerate,
			want: func(a engine.Alert) string {
				return "Efavirenz: CYP2B6 Poor Metabolizer (*6/*6) — CPIC: " + a.Recommendation
			}},
		{name: "dose change too long for the limit: cut after a whole sentence (MODERATE)",
			req:      engine.Request{Drug: "tacrolimus", Diplotypes: map[string]string{"CYP3A5": "*1/*1"}},
			category: engine.CategoryConfirmed, gene: "CYP3A5", sev: engine.SeverityModerate,
			prefix: "Tacrolimus: CYP3A5 Normal Metabolizer (*1/*1) — CPIC: Increase starting dose 1.5 to 2 times recommended starting dose.",
			suffix: ". …"},
		{name: "no dose or drug change, with the row's note (INFO): never 'change the dose or monitor'",
			req:      engine.Request{Drug: "clopidogrel", Diplotypes: map[string]string{"CYP2C19": "*17/*17"}, Indication: acs},
			category: engine.CategoryConfirmed, gene: "CYP2C19", sev: engine.SeverityInfo,
			want: func(a engine.Alert) string {
				return "Clopidogrel: CYP2C19 Ultrarapid Metabolizer (*17/*17) — CPIC: " + a.Recommendation
			}},
		{name: "no result: consider a test (genotype unknown)",
			req:      engine.Request{Drug: "clopidogrel", Indication: acs},
			category: engine.CategoryUnknown, gene: "CYP2C19",
			want: func(engine.Alert) string {
				return "Clopidogrel: no CYP2C19 result available — consider CYP2C19 genotyping first (CPIC level A)"
			}},
		{name: "a result given but not interpretable: review, never 'no result'",
			req:      engine.Request{Drug: "clopidogrel", Variants: []string{"rs12248560"}, Indication: acs},
			category: engine.CategoryUnknown, gene: "CYP2C19", sev: engine.SeverityModerate,
			want: func(engine.Alert) string {
				return "Clopidogrel: the CYP2C19 result given could not be interpreted — review it before prescribing"
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := kb.Evaluate(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			var a *engine.Alert
			for i := range res.Alerts {
				if res.Alerts[i].Category == tc.category && res.Alerts[i].Gene == tc.gene {
					a = &res.Alerts[i]
					break
				}
			}
			if a == nil {
				t.Fatalf("no %v %s alert: %+v", tc.category, tc.gene, res.Alerts)
			}
			if tc.sev != engine.SeverityNone && a.Severity != tc.sev {
				t.Fatalf("severity %v, want %v (the engine's grading changed: revisit this case)", a.Severity, tc.sev)
			}
			order := fhir.MedicationOrder{Ref: "MedicationRequest/mr1", ID: "mr1", Identified: true}
			b.results = []checked{{order: order, drug: fhir.DrugMatch{Drug: tc.req.Drug, Via: "name in text"}, req: tc.req, res: res}}
			var got string
			for _, c := range b.build() {
				if c.Source.Topic != nil && c.Source.Topic.Code == CategoryCode(tc.category) && strings.Contains(c.Summary, tc.gene) {
					got = c.Summary
					break
				}
			}
			if got == "" {
				t.Fatalf("no %s card", tc.gene)
			}
			if n := utf8.RuneCountInString(got); n > MaxSummaryRunes {
				t.Errorf("summary has %d runes (limit %d): %q", n, MaxSummaryRunes, got)
			}
			if tc.want != nil {
				if diff := cmp.Diff(tc.want(*a), got); diff != "" {
					t.Errorf("summary (-want +got):\n%s", diff)
				}
			} else if !strings.HasPrefix(got, tc.prefix) || !strings.HasSuffix(got, tc.suffix) {
				t.Errorf("summary %q, want %q … %q", got, tc.prefix, tc.suffix)
			}
			if a.Severity != engine.SeverityModerate && strings.Contains(got, "change the dose or monitor") {
				t.Errorf("a %v summary says 'change the dose or monitor': %q", a.Severity, got)
			}
		})
	}
}

// TestConfirmedSummaryFit: the fitting of a finding and its row's text to
// the summary limit — the full genotype when all fits, then the phenotype
// without the diplotype, then only the drug, the row's text cut at a word
// or after a sentence and marked with an ellipsis. The texts are
// placeholders: this tests the fitting, not clinical content.
func TestConfirmedSummaryFit(t *testing.T) {
	g := []engine.GenotypeCall{{Gene: "GENE1", Diplotype: "*1/*2", Phenotype: "Example Phenotype"}}
	words := func(n int) string { return strings.TrimSpace(strings.Repeat("word ", n)) }
	tests := []struct {
		name string
		rec  string
		sev  engine.Severity
		want string
	}{
		{"fits whole", "Short text.", engine.SeverityModerate,
			"Drug: GENE1 Example Phenotype (*1/*2) — CPIC: Short text."},
		{"phenotype only", words(19), engine.SeverityInfo,
			"Drug: GENE1 Example Phenotype — CPIC: " + words(19)},
		{"cut at a word", words(40), engine.SeverityInfo,
			"Drug: GENE1 Example Phenotype (*1/*2) — CPIC: " + words(18) + "…"},
		{"cut after a sentence", words(12) + ". " + words(30), engine.SeverityModerate,
			"Drug: GENE1 Example Phenotype (*1/*2) — CPIC: " + words(12) + ". …"},
		{"no row text, MODERATE", "", engine.SeverityModerate,
			"Drug: GENE1 Example Phenotype (*1/*2) — CPIC: change the dose or monitor"},
		{"no row text, INFO", "", engine.SeverityInfo,
			"Drug: GENE1 Example Phenotype (*1/*2) — CPIC: see the guideline's note"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := engine.Alert{Severity: tc.sev, Category: engine.CategoryConfirmed, Gene: "GENE1", Genotype: g, Recommendation: tc.rec}
			got := confirmedSummary("Drug", "CPIC", a, nil)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if n := utf8.RuneCountInString(got); n > MaxSummaryRunes {
				t.Errorf("%d runes", n)
			}
		})
	}
}

// escReference is esc before its fast path: every string through the rune
// loop.
func escReference(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '~', '#':
			b.WriteByte('\\')
		case '\n', '\r':
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}

// FuzzEsc: esc, which returns a string it would not change as it is, gives
// exactly the rune loop's answer (invalid UTF-8 included).
func FuzzEsc(f *testing.F) {
	for _, s := range []string{"", "Poor Metabolizer", "*2/*2", "CYP2C19_x", "a\nb", "é ü —", "\xff", "ok\xe2\x82", "[link](x)", "#1 | 2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := esc(s), escReference(s); got != want {
			t.Fatalf("esc(%q) = %q, want %q", s, got, want)
		}
	})
}
