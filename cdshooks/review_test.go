package cdshooks_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/cdshooks"
)

// Regression tests for the review of the CDS Hooks service: selections
// that match no draft (rule 1), duplicate drafts and uuids (rule 2), and
// genomic results that could not be retrieved (rule 3); docs/cds-hooks.md
// §4.

const (
	clopidogrelPM = "order-select-clopidogrel-cyp2c19-pm"
	pmSummary     = "CYP2C19 Poor Metabolizer"
	unretrieved   = "Clopidogrel: CYP2C19 results could not be retrieved — check the lab record before ordering a test"
	// genomicsNotFetched is the summary of the warning card when the
	// patient's genomic results could not be had from the EHR.
	genomicsNotFetched = "The patient's genomic results could not be fetched from the EHR — this order was not checked against them"
)

// draftEntries returns the draftOrders entries of a decoded request.
func draftEntries(m map[string]any) []any {
	return m["context"].(map[string]any)["draftOrders"].(map[string]any)["entry"].([]any)
}

func setDraftEntries(m map[string]any, es []any) {
	m["context"].(map[string]any)["draftOrders"].(map[string]any)["entry"] = es
}

// deepCopy copies a decoded JSON value.
func deepCopy(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func cardsWith(r cdshooks.Response, substr string) []cdshooks.Card {
	var out []cdshooks.Card
	for _, c := range r.Cards {
		if strings.Contains(c.Summary, substr) {
			out = append(out, c)
		}
	}
	return out
}

// assertUniqueUUIDs checks that every card and suggestion uuid of a
// response is unique, and that a SMART link names its own card.
func assertUniqueUUIDs(t *testing.T, r cdshooks.Response) {
	t.Helper()
	seen := map[string]string{}
	add := func(id, what string) {
		if id == "" {
			t.Errorf("%s has no uuid", what)
			return
		}
		if prev, ok := seen[id]; ok {
			t.Errorf("uuid %s used by %s and by %s", id, prev, what)
		}
		seen[id] = what
	}
	for _, c := range r.Cards {
		add(c.UUID, "card "+c.Summary)
		for _, s := range c.Suggestions {
			add(s.UUID, "suggestion "+s.Label+" of card "+c.Summary)
		}
		for _, l := range c.Links {
			if l.Type != "smart" {
				continue
			}
			var ac map[string]string
			if err := json.Unmarshal([]byte(l.AppContext), &ac); err != nil || ac["cardUuid"] != c.UUID {
				t.Errorf("card %s: SMART link appContext %q does not name the card", c.UUID, l.AppContext)
			}
			if ac["drug"] == "" {
				t.Errorf("card %s: SMART link appContext %q does not name the card's drug", c.UUID, l.AppContext)
			}
		}
	}
}

// TestSelectionMatching (rule 1): selections match draft orders by id in
// any of the spellings EHRs use; a selection that matches no readable
// draft gives a warning card saying that order was not checked, so an
// empty answer never reads as "no PGx concern"; a draft with no id is
// checked and its card says so.
func TestSelectionMatching(t *testing.T) {
	e := newEnv(t)
	base := readRequest(t, clopidogrelPM)
	long := "https://ehr.example.org/fhir/R4/tenants/" + strings.Repeat("a", 120) + "/MedicationRequest/nonexistent"
	withSel := func(sels ...string) []byte {
		return editJSON(t, base, func(m map[string]any) { m["context"].(map[string]any)["selections"] = sels })
	}
	noID := func(sels ...string) []byte {
		return editJSON(t, withSel(sels...), func(m map[string]any) {
			delete(draftEntries(m)[0].(map[string]any)["resource"].(map[string]any), "id")
		})
	}
	tests := []struct {
		name      string
		body      []byte
		checked   bool     // the clopidogrel draft was checked (critical card)
		unmatched []string // summaries of the "was not checked" cards
		noIDNote  bool     // the critical card says the draft had no id
		instead   bool     // the unmatched card says id-less drafts were checked
	}{
		{name: "relative reference", body: withSel("MedicationRequest/draft-clopidogrel-1"), checked: true},
		{name: "bare id", body: withSel("draft-clopidogrel-1"), checked: true},
		{name: "absolute URL", body: withSel("https://ehr.example.org/fhir/MedicationRequest/draft-clopidogrel-1"), checked: true},
		{name: "versioned reference", body: withSel("MedicationRequest/draft-clopidogrel-1/_history/3"), checked: true},
		{name: "surrounding spaces", body: withSel("  MedicationRequest/draft-clopidogrel-1 "), checked: true},
		{name: "no such draft", body: withSel("MedicationRequest/nonexistent"),
			unmatched: []string{"Selected order MedicationRequest/nonexistent was not checked for pharmacogenomic risk"}},
		{name: "another resource type with the same id", body: withSel("ServiceRequest/draft-clopidogrel-1"),
			unmatched: []string{"Selected order ServiceRequest/draft-clopidogrel-1 was not checked for pharmacogenomic risk"}},
		{name: "one matching, one not", body: withSel("MedicationRequest/draft-clopidogrel-1", "MedicationRequest/nonexistent"), checked: true,
			unmatched: []string{"Selected order MedicationRequest/nonexistent was not checked for pharmacogenomic risk"}},
		{name: "long unmatched URL", body: withSel(long),
			unmatched: []string{"A selected order was not checked for pharmacogenomic risk — see why"}},
		{name: "draft without id", body: noID("MedicationRequest/draft-clopidogrel-1"), checked: true, noIDNote: true, instead: true,
			unmatched: []string{"Selected order MedicationRequest/draft-clopidogrel-1 was not checked for pharmacogenomic risk"}},
		{name: "draft without id, nonexistent selection", body: noID("MedicationRequest/nonexistent"), checked: true, noIDNote: true, instead: true,
			unmatched: []string{"Selected order MedicationRequest/nonexistent was not checked for pharmacogenomic risk"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := decodeResponse(t, e.hook(tc.body))
			assertUniqueUUIDs(t, r)
			if len(r.Cards) == 0 {
				t.Fatal(`{"cards": []} although a selected order was or was not checked`)
			}
			crit := cardsWith(r, pmSummary)
			if tc.checked != (len(crit) == 1) {
				t.Fatalf("checked = %v, critical cards = %d: %+v", tc.checked, len(crit), r.Cards)
			}
			if tc.checked {
				if crit[0].Indicator != cdshooks.IndicatorCritical {
					t.Errorf("indicator %s", crit[0].Indicator)
				}
				if got := strings.Contains(crit[0].Detail, "has no id"); got != tc.noIDNote {
					t.Errorf("no-id note = %v, want %v:\n%s", got, tc.noIDNote, crit[0].Detail)
				}
			}
			var got []string
			for _, c := range cardsWith(r, "was not checked for pharmacogenomic risk") {
				got = append(got, c.Summary)
				if c.Indicator != cdshooks.IndicatorWarning {
					t.Errorf("%q: indicator %s, want warning", c.Summary, c.Indicator)
				}
				if n := utf8.RuneCountInString(c.Summary); n >= 140 {
					t.Errorf("summary has %d runes", n)
				}
				if !strings.Contains(c.Detail, "**not** checked") {
					t.Errorf("detail does not say the order was not checked: %s", c.Detail)
				}
				if got := strings.Contains(c.Detail, "without an id were checked instead"); got != tc.instead {
					t.Errorf("id-less note = %v, want %v: %s", got, tc.instead, c.Detail)
				}
			}
			if diff := cmp.Diff(tc.unmatched, got); diff != "" {
				t.Errorf("not-checked cards (-want +got):\n%s", diff)
			}
		})
	}

	// The official order-select example selects a NutritionOrder that is
	// among the drafts (pgxsafety has no guidance for it: no card) and an
	// amoxicillin/clavulanate MedicationRequest, a drug outside the
	// knowledge: one card says that order was not checked.
	r := decodeResponse(t, e.hook(readRequest(t, "official-order-select-R4-repaired")))
	if len(r.Cards) != 1 || !strings.HasPrefix(r.Cards[0].Summary, "pgxsafety could not identify “Amoxicillin") ||
		!strings.HasSuffix(r.Cards[0].Summary, "this order was not checked") {
		t.Errorf("official example: %+v", r.Cards)
	}

	// The unmatched selection is in the audit entry.
	entries := e.auditEntries()
	found := false
	for _, en := range entries {
		if bytes.Contains(en.Request, []byte(`matches no draft order pgxsafety could read`)) {
			found = true
		}
	}
	if !found {
		t.Error("no audit entry records an unmatched selection")
	}
}

// TestDuplicateDrafts (rule 2): the same draft order twice gives its cards
// once; two different drafts that share an id are both checked and their
// cards get distinct uuids, the first keeping its stable one.
func TestDuplicateDrafts(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name    string
		fixture string
		edit    func(m map[string]any)
		cards   int // cards with pmSummary
	}{
		{"order-select, same draft twice", clopidogrelPM, func(m map[string]any) {
			es := draftEntries(m)
			setDraftEntries(m, append(es, deepCopy(t, es[0])))
		}, 1},
		{"order-sign, same draft three times", "order-sign-clopidogrel-cyp2c19-pm", func(m map[string]any) {
			es := draftEntries(m)
			setDraftEntries(m, append(es, deepCopy(t, es[0]), deepCopy(t, es[0])))
		}, 1},
		{"order-sign, identical drafts without id", "order-sign-clopidogrel-cyp2c19-pm", func(m map[string]any) {
			es := draftEntries(m)
			delete(es[0].(map[string]any)["resource"].(map[string]any), "id")
			setDraftEntries(m, append(es, deepCopy(t, es[0])))
		}, 1},
		{"order-select, different drafts sharing an id", clopidogrelPM, func(m map[string]any) {
			es := draftEntries(m)
			other := deepCopy(t, es[0]).(map[string]any)
			other["resource"].(map[string]any)["medicationCodeableConcept"].(map[string]any)["text"] = "clopidogrel 75 mg oral tablet"
			setDraftEntries(m, append(es, other))
		}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			single := decodeResponse(t, e.hook(readRequest(t, tc.fixture)))
			r := decodeResponse(t, e.hook(editJSON(t, readRequest(t, tc.fixture), tc.edit)))
			assertUniqueUUIDs(t, r)
			got := cardsWith(r, pmSummary)
			if len(got) != tc.cards {
				t.Fatalf("%d %q cards, want %d: %+v", len(got), pmSummary, tc.cards, r.Cards)
			}
			if strings.Contains(tc.name, "without id") {
				return // the single-draft answer names the order by its id
			}
			if tc.cards == 1 {
				if diff := cmp.Diff(single.Cards, r.Cards); diff != "" {
					t.Errorf("cards differ from the single-draft answer (-single +duplicated):\n%s", diff)
				}
			}
			if want := cardsWith(single, pmSummary); got[0].UUID != want[0].UUID {
				t.Errorf("the first card's uuid changed: %s, want %s", got[0].UUID, want[0].UUID)
			}
		})
	}
}

// TestUUIDsUnique (rule 2, property): in every fixture's answer, and in
// the answers to each fixture with its draft orders repeated and with
// their ids removed, every card and suggestion uuid is unique.
func TestUUIDsUnique(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testdataCD, "requests", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	e := newEnv(t)
	variants := map[string]func(t *testing.T, m map[string]any){
		"as is": func(*testing.T, map[string]any) {},
		"drafts repeated": func(t *testing.T, m map[string]any) {
			es := draftEntries(m)
			setDraftEntries(m, append(es, deepCopy(t, es).([]any)...))
		},
		"ids removed and repeated": func(t *testing.T, m map[string]any) {
			es := draftEntries(m)
			for _, x := range es {
				if r, ok := x.(map[string]any)["resource"].(map[string]any); ok {
					delete(r, "id")
				}
			}
			setDraftEntries(m, append(es, deepCopy(t, es).([]any)...))
		},
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		for vname, edit := range variants {
			t.Run(name+"/"+vname, func(t *testing.T) {
				body := editJSON(t, readRequest(t, name), func(m map[string]any) { edit(t, m) })
				assertUniqueUUIDs(t, decodeResponse(t, e.hook(body)))
			})
		}
	}
}

// checkUnretrievedPreTest (rule 3): when the genomic results could not be
// retrieved the pre-test card does not say "no result available" nor
// recommend a test: it says the results could not be retrieved, offers
// the test order without recommending it, and the warning card about the
// data stays.
func checkUnretrievedPreTest(t *testing.T, r cdshooks.Response) {
	t.Helper()
	if cs := cardsWith(r, "no CYP2C19 result available"); len(cs) > 0 {
		t.Errorf("a card says no result is available although none could be retrieved: %q", cs[0].Summary)
	}
	c, ok := findCard(r, "could not be retrieved")
	if !ok {
		t.Fatalf("no pre-test card saying the results could not be retrieved: %+v", r.Cards)
	}
	if c.Summary != unretrieved {
		t.Errorf("summary = %q, want %q", c.Summary, unretrieved)
	}
	if n := utf8.RuneCountInString(c.Summary); n >= 140 {
		t.Errorf("summary has %d runes", n)
	}
	if !strings.Contains(c.Detail, "a result may exist") {
		t.Errorf("detail does not say a result may exist:\n%s", c.Detail)
	}
	if len(c.Suggestions) != 1 || c.Suggestions[0].IsRecommended || len(c.Suggestions[0].Actions) != 1 ||
		!bytes.Contains(c.Suggestions[0].Actions[0].Resource, []byte(`"ServiceRequest"`)) {
		t.Errorf("want one ServiceRequest suggestion, not recommended: %+v", c.Suggestions)
	}
	if w, ok := findCard(r, genomicsNotFetched); !ok || w.Indicator != cdshooks.IndicatorWarning {
		t.Errorf("no warning card about the genomic data: %+v", r.Cards)
	}
}

// TestGenomicsUnretrieved (rule 3): an OperationOutcome prefetch and a
// failing FHIR server give the "could not be retrieved" pre-test card; a
// null prefetch (no results) still recommends the test. The two cards have
// different uuids, so order-sign never suppresses one as the other.
func TestGenomicsUnretrieved(t *testing.T) {
	e := newEnv(t)
	body := readRequest(t, clopidogrelPM)
	f := newFakeFHIR(t, prefetchOf(t, body))
	f.fail["Observation"] = http.StatusServiceUnavailable
	outcome := map[string]any{"resourceType": "OperationOutcome", "issue": []any{map[string]any{"severity": "error", "code": "timeout", "diagnostics": "genomics search timed out"}}}
	server := func(m map[string]any) {
		m["fhirServer"] = f.srv.URL + "/fhir"
		m["fhirAuthorization"] = map[string]any{"access_token": "tok", "token_type": "Bearer", "expires_in": 300, "scope": "patient/*.read", "subject": "s"}
	}
	nullBody := editJSON(t, body, func(m map[string]any) { m["prefetch"].(map[string]any)["pgxObservations"] = nil })
	none := decodeResponse(t, e.hook(nullBody))
	noneCard, ok := findCard(none, "no CYP2C19 result available")
	if !ok || len(noneCard.Suggestions) != 1 || !noneCard.Suggestions[0].IsRecommended {
		t.Fatalf("null prefetch: no recommended test card: %+v", none.Cards)
	}
	tests := []struct {
		name string
		body []byte
	}{
		{"OperationOutcome prefetch, no server", editJSON(t, body, func(m map[string]any) { m["prefetch"].(map[string]any)["pgxObservations"] = outcome })},
		{"no prefetch, failing server", editJSON(t, body, func(m map[string]any) {
			delete(m["prefetch"].(map[string]any), "pgxObservations")
			server(m)
		})},
		{"OperationOutcome prefetch, failing server", editJSON(t, body, func(m map[string]any) {
			m["prefetch"].(map[string]any)["pgxObservations"] = outcome
			server(m)
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := decodeResponse(t, e.hook(tc.body))
			checkUnretrievedPreTest(t, r)
			assertUniqueUUIDs(t, r)
			c, _ := findCard(r, "could not be retrieved")
			if c.UUID == noneCard.UUID {
				t.Errorf("the unretrieved card has the uuid of the no-result card %s", c.UUID)
			}
		})
	}
}
