package cdshooks

import (
	"errors"
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
// that says the check was not run and why — never silence.
func TestFailedCard(t *testing.T) {
	b, _ := newTestBuilder(t)
	order := fhir.MedicationOrder{Ref: "MedicationRequest/mr2", ID: "mr2", Identified: true}
	b.failed = []failedCheck{{order: order, drug: fhir.DrugMatch{Drug: "warfarin", Via: "RxNorm 11289"},
		err: errors.New("variants[0]: is not an rsID")}}
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
	if !strings.Contains(c.Detail, esc("variants[0]: is not an rsID")) || !strings.Contains(c.Detail, esc("MedicationRequest/mr2")) {
		t.Errorf("detail %q does not name the order and the reason", c.Detail)
	}
	if c.Source.Topic == nil || c.Source.Topic.Code != "data-quality" {
		t.Errorf("topic %+v, want data-quality", c.Source.Topic)
	}
}
