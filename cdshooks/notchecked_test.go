package cdshooks_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pgxsafety/pgxsafety/cdshooks"
)

// Harness cases of issue 21 item 5: a draft order pgxsafety did not (fully)
// check never gets an empty answer — an unreadable or unsupported drug or
// the unread part of a combination gets an info card saying what was not
// checked, with the text it saw (sanitised, bounded); docs/cds-hooks.md §4.

// notChecked are the two hook fixtures every case runs on: an order-select
// for an HLA-B*15:02 carrier and an order-sign for a CYP2C19 *2/*2 patient.
var notCheckedFixtures = []string{"order-select-carbamazepine-hla-b1502", "order-sign-clopidogrel-cyp2c19-pm"}

// withDraftMedication replaces the medication[x] of the fixture's draft
// order with med (medicationCodeableConcept unless ref is set) and adds
// contained resources.
func withDraftMedication(t testing.TB, body []byte, med map[string]any, ref map[string]any, contained []any) []byte {
	t.Helper()
	return editJSON(t, body, func(m map[string]any) {
		mr := draftEntries(m)[0].(map[string]any)["resource"].(map[string]any)
		delete(mr, "medicationCodeableConcept")
		delete(mr, "medicationReference")
		if ref != nil {
			mr["medicationReference"] = ref
		} else {
			mr["medicationCodeableConcept"] = med
		}
		if contained != nil {
			mr["contained"] = contained
		}
	})
}

func rxnorm(code, display string) map[string]any {
	c := map[string]any{"system": "http://www.nlm.nih.gov/research/umls/rxnorm", "code": code}
	if display != "" {
		c["display"] = display
	}
	return c
}

const notCheckedTopic = "order-not-checked"

// TestOrdersNotChecked: unreadable, unsupported and partly known draft
// orders, at order-select and order-sign.
func TestOrdersNotChecked(t *testing.T) {
	tests := []struct {
		name      string
		med       map[string]any
		ref       map[string]any
		contained []any
		// summary is the not-checked card's summary; quoted the text the
		// detail must quote.
		summary string
		quoted  string
		// checked are drugs the audit entry must record as evaluated.
		checked []string
		// noNotChecked: every part was read; no not-checked card.
		noNotChecked bool
	}{
		{name: "unknown brand, text only", med: map[string]any{"text": "Qorvantel 200 Tablet"},
			summary: "pgxsafety could not identify “Qorvantel 200 Tablet” — this order was not checked", quoted: "Qorvantel 200 Tablet"},
		{name: "another unknown brand, text only", med: map[string]any{"text": "Xentiqor 500 Tablet"},
			summary: "pgxsafety could not identify “Xentiqor 500 Tablet” — this order was not checked", quoted: "Xentiqor 500 Tablet"},
		{name: "misspelt generic", med: map[string]any{"text": "clopidogral 75"},
			summary: "pgxsafety could not identify “clopidogral 75” — this order was not checked", quoted: "clopidogral 75"},
		{name: "unknown code, no text or display", med: map[string]any{"coding": []any{rxnorm("999999999", "")}},
			summary: "pgxsafety could not identify “RxNorm 999999999” — this order was not checked", quoted: "RxNorm 999999999"},
		{name: "drug outside the knowledge, coded (the official example's order)",
			med:     map[string]any{"coding": []any{rxnorm("617993", "Amoxicillin 120 MG/ML / clavulanate potassium 8.58 MG/ML Oral Suspension")}},
			summary: "pgxsafety could not identify “Amoxicillin 120 MG/ML / clavulanate potassium 8.58 MG/ML Or…” — this order was not checked",
			quoted:  "Amoxicillin 120 MG/ML / clavulanate potassium 8.58 MG/ML Oral Suspension"},
		{name: "ingredient list, one ingredient unknown", med: map[string]any{"text": "clopidogrel 75 mg + foozole 10 mg"},
			summary: "pgxsafety could not identify “foozole 10 mg” in this order — that part was not checked", quoted: "foozole 10 mg",
			checked: []string{"clopidogrel"}},
		{name: "contained Medication, one ingredient unknown", ref: map[string]any{"reference": "#med1"},
			contained: []any{map[string]any{"resourceType": "Medication", "id": "med1", "ingredient": []any{
				map[string]any{"itemCodeableConcept": map[string]any{"coding": []any{rxnorm("32968", "clopidogrel")}}},
				map[string]any{"itemCodeableConcept": map[string]any{"text": "foozole"}},
			}}},
			summary: "pgxsafety could not identify “foozole” in this order — that part was not checked", quoted: "foozole",
			checked: []string{"clopidogrel"}},
		// The Indian brand table lists Clopitab-A with the ingredients
		// Aspirin and Clopidogrel but marks only clopidogrel as covered;
		// aspirin is a knowledge drug and is checked too.
		{name: "combination product, a listed ingredient read as a knowledge drug", med: map[string]any{"text": "Clopitab-A 75"},
			checked: []string{"aspirin", "clopidogrel"}, noNotChecked: true},
	}
	for _, fx := range notCheckedFixtures {
		for _, tc := range tests {
			t.Run(fx+"/"+tc.name, func(t *testing.T) {
				e := newEnv(t)
				body := withDraftMedication(t, readRequest(t, fx), tc.med, tc.ref, tc.contained)
				r := decodeResponse(t, e.hook(body))
				if len(r.Cards) == 0 {
					t.Fatal("empty answer for an order that was not fully checked")
				}
				for _, c := range r.Cards {
					if n := utf8.RuneCountInString(c.Summary); n >= 140 {
						t.Errorf("summary of %d runes: %q", n, c.Summary)
					}
				}
				var nc []cdshooks.Card
				for _, c := range r.Cards {
					if c.Source.Topic != nil && c.Source.Topic.Code == notCheckedTopic {
						nc = append(nc, c)
					}
				}
				if tc.noNotChecked {
					if len(nc) > 0 {
						t.Errorf("a not-checked card for an order read in full: %+v", nc)
					}
				} else {
					if len(nc) != 1 {
						t.Fatalf("%d not-checked cards, want 1: %+v", len(nc), r.Cards)
					}
					c := nc[0]
					if c.Summary != tc.summary {
						t.Errorf("summary = %q, want %q", c.Summary, tc.summary)
					}
					if c.Indicator != cdshooks.IndicatorInfo {
						t.Errorf("indicator %q, want info", c.Indicator)
					}
					if !strings.Contains(c.Detail, tc.quoted) || !strings.Contains(c.Detail, "not a statement that") {
						t.Errorf("detail does not quote %q or does not say it is no statement of safety:\n%s", tc.quoted, c.Detail)
					}
				}
				entries := e.auditEntries()
				if len(entries) != 1 {
					t.Fatalf("%d audit entries", len(entries))
				}
				if !tc.noNotChecked && !bytes.Contains(entries[0].Request, []byte("names no drug of the knowledge")) {
					t.Errorf("the audit entry records no issue for the order not checked: %s", entries[0].Request)
				}
				for _, d := range tc.checked {
					if !bytes.Contains(entries[0].Request, []byte(`"drug":"`+d+`"`)) {
						t.Errorf("%s was not evaluated: %s", d, entries[0].Request)
					}
				}
			})
		}
	}
}

// TestNotCheckedCardOnRecord: the card of an order not checked lists the
// patient's genomic results, so the prescriber can check the drug against
// them by hand (an HLA-B*15:02 carrier given a brand the name reader does
// not know).
func TestNotCheckedCardOnRecord(t *testing.T) {
	e := newEnv(t)
	body := withDraftMedication(t, readRequest(t, "order-select-carbamazepine-hla-b1502"), map[string]any{"text": "Qorvantel 200 Tablet"}, nil, nil)
	r := decodeResponse(t, e.hook(body))
	c, ok := findCard(r, "Qorvantel")
	if !ok {
		t.Fatalf("no card: %+v", r.Cards)
	}
	if !strings.Contains(c.Detail, "Genomic results on record") || !strings.Contains(c.Detail, `HLA-B\*15:02`) {
		t.Errorf("the detail does not list the HLA-B\\*15:02 result:\n%s", c.Detail)
	}
}

// TestNotCheckedTextSanitised: the order's text is shown without format
// characters (a bidirectional override, a zero-width space) or line
// breaks, and bounded: 60 runes in the summary, 200 in the detail. A
// control character, which FHIR strings do not allow, makes the order
// unreadable: its card says it was not checked, without the character.
func TestNotCheckedTextSanitised(t *testing.T) {
	e := newEnv(t)
	nul := withDraftMedication(t, readRequest(t, "order-sign-clopidogrel-cyp2c19-pm"), map[string]any{"text": "Qorvantel\u0000 200"}, nil, nil)
	r := decodeResponse(t, e.hook(nul))
	if len(r.Cards) != 1 || !strings.Contains(r.Cards[0].Summary, "not checked") || strings.Contains(r.Cards[0].Detail, "\u0000") {
		t.Errorf("control character: %+v", r.Cards)
	}
	hostile := "Qorvan\u202etel\u200b 200\nTablet " + strings.Repeat("x", 500)
	body := withDraftMedication(t, readRequest(t, "order-sign-clopidogrel-cyp2c19-pm"), map[string]any{"text": hostile}, nil, nil)
	r = decodeResponse(t, e.hook(body))
	if len(r.Cards) != 1 {
		t.Fatalf("%d cards, want the not-checked card: %+v", len(r.Cards), r.Cards)
	}
	c := r.Cards[0]
	for _, bad := range []string{"\u202e", "\u0000", "\u200b", "\n200"} {
		if strings.Contains(c.Summary, bad) || strings.Contains(c.Detail, bad) {
			t.Errorf("card holds %q", bad)
		}
	}
	if !strings.HasPrefix(c.Summary, "pgxsafety could not identify “Qorvantel 200 Tablet xxx") || utf8.RuneCountInString(c.Summary) >= 140 {
		t.Errorf("summary %q", c.Summary)
	}
	if strings.Contains(c.Detail, strings.Repeat("x", 200)) {
		t.Errorf("the detail quotes more than 200 runes of the order's text")
	}
}

// TestUnresolvedMedicationServerDown: a draft order whose Medication
// reference cannot be read because the FHIR server is down gets one card
// saying the order was not checked, in words without the transport error.
func TestUnresolvedMedicationServerDown(t *testing.T) {
	e := newEnv(t)
	body := readRequest(t, "order-sign-clopidogrel-cyp2c19-pm")
	f := newFakeFHIR(t, prefetchOf(t, body))
	f.srv.Close()
	body = withDraftMedication(t, body, nil, map[string]any{"reference": "Medication/m1", "display": "Qorvantel 200 Tablet"}, nil)
	body = editJSON(t, body, func(m map[string]any) {
		m["fhirServer"] = f.srv.URL + "/fhir"
		m["fhirAuthorization"] = map[string]any{"access_token": "fhir-access-token-123", "token_type": "Bearer", "expires_in": 300, "scope": "patient/*.read", "subject": "s"}
		m["prefetch"].(map[string]any)["conditions"] = nil
	})
	r := decodeResponse(t, e.hook(body))
	if len(r.Cards) != 1 {
		t.Fatalf("%d cards, want one for the order: %+v", len(r.Cards), r.Cards)
	}
	c := r.Cards[0]
	if !strings.Contains(c.Summary, "not checked") || !strings.Contains(c.Detail, "could not be reached") {
		t.Errorf("card %q / %q does not say the order was not checked and why", c.Summary, c.Detail)
	}
	assertNoInternals(t, r, "dial tcp", "connection refused", "127.0.0.1", "fhir-access-token-123")
}

// TestIssueBrandsChecked: the issue's orders that CDS answered with no
// card are now read (the Indian brand table names Carbatol as
// carbamazepine) and checked: an HLA-B*15:02 carrier's order for it gets
// the HIGH card, not a not-checked one.
func TestIssueBrandsChecked(t *testing.T) {
	e := newEnv(t)
	body := withDraftMedication(t, readRequest(t, "order-select-carbamazepine-hla-b1502"), map[string]any{"text": "Carbatol 200 Tablet"}, nil, nil)
	r := decodeResponse(t, e.hook(body))
	found := false
	for _, c := range r.Cards {
		if strings.Contains(c.Summary, "not checked") {
			t.Errorf("Carbatol read as not checked: %s", c.Summary)
		}
		found = found || c.Indicator == "critical" && strings.HasPrefix(c.Summary, "Carbamazepine: HLA-B*15:02 positive")
	}
	if !found {
		t.Errorf("no critical carbamazepine card for Carbatol 200 Tablet: %+v", r.Cards)
	}
}
