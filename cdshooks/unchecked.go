package cdshooks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/fhir"
)

// This file holds the cards of draft orders pgxsafety did not (fully)
// check — a medication it could not identify, the unread part of a
// combination — and the wording of failures that must not reach card text
// as they were raised (docs/cds-hooks.md §4, "Orders not checked").

// MaxQuotedRunes bounds the order text quoted in a card summary; the
// detail quotes up to MaxQuotedDetailRunes.
const (
	MaxQuotedRunes       = 60
	MaxQuotedDetailRunes = 200
)

// quote makes text sent by the EHR safe to show in a card: control and
// format characters (bidirectional overrides, zero-width characters) are
// dropped, white space is collapsed, and the text is cut to max runes
// with an ellipsis.
func quote(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError:
			return -1
		}
		return r
	}, s)
	return cutRunes(s, max)
}

// orderText is how an order names its medication, as quoted in cards.
func orderText(o fhir.MedicationOrder, max int) string {
	if q := quote(o.Label, max); q != "" {
		return q
	}
	return "the medication of " + orderName(o)
}

// genomicResultsLines lists the genomic results read for the patient, for
// cards of orders that were not checked: the clinician checks the drug
// against them by hand.
func (b *cardBuilder) genomicResultsLines() []string {
	var out []string
	for _, r := range b.genomics.UsedResults() {
		if r.Kind == fhir.KindImplication {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s %s", r.Ref, r.Kind, firstNonEmpty(r.Value, r.Gene)))
	}
	return out
}

// unidentifiedCard reports a draft order whose medication names no drug
// of the knowledge (text only, an unknown code, a drug outside the
// knowledge, a name that needs confirmation): it was not checked, and an
// empty answer must not read as "checked and safe".
func (b *cardBuilder) unidentifiedCard(o fhir.MedicationOrder) Card {
	rd := b.s.names.ReadDrug(o.Label)
	id := b.cardID("unidentified", orderName(o), o.Label)
	var d strings.Builder
	fmt.Fprintf(&d, "**Not checked.** pgxsafety could not identify the medication of this draft order as a drug of its knowledge, so no pharmacogenomic check was made. "+
		"This is not a statement that the drug is safe for this patient.\n\n")
	fmt.Fprintf(&d, "**Order:** %s — medication as sent: “%s”.\n\n", esc(orderName(o)), esc(orderText(o, MaxQuotedDetailRunes)))
	if rd.Status == engine.DrugStatusNeedsConfirmation && len(rd.DidYouMean) > 0 {
		fmt.Fprintf(&d, "**May stand for:** %s — the name is also an ordinary word or a short abbreviation, so it was not read as a drug.\n\n", esc(strings.Join(rd.DidYouMean, " or ")))
	} else if len(rd.DidYouMean) > 0 {
		fmt.Fprintf(&d, "**Did you mean** %s? A near name, not a match: nothing was checked for it.\n\n", esc(strings.Join(rd.DidYouMean, " or ")))
	}
	d.WriteString("**What to do:** check this drug for pharmacogenomic guidance by hand, or order it by its generic name, an RxNorm or an ATC code so that pgxsafety can check it.\n\n")
	var notes []string
	for _, n := range rd.Notes {
		notes = append(notes, quote(n, MaxQuotedDetailRunes))
	}
	list(&d, "Notes", notes)
	list(&d, "Genomic results on record for this patient (check the drug against them)", b.genomicResultsLines())
	d.WriteString(strings.TrimSpace(b.noIDNote(o)))
	summary := fmt.Sprintf("pgxsafety could not identify “%s” — this order was not checked", orderText(o, MaxQuotedRunes))
	return Card{
		UUID:      id,
		Summary:   truncate(summary),
		Detail:    strings.TrimSpace(d.String()),
		Indicator: IndicatorInfo,
		Source:    Source{Label: "pgxsafety order check", Topic: &Coding{System: TopicSystem, Code: "order-not-checked", Display: "Order not checked for pharmacogenomic risk"}},
	}
}

// partlyReadCard reports the parts of a draft order's medication that name
// no covered drug when another part was identified and checked (an
// ingredient of a combination product or of an ingredient list).
func (b *cardBuilder) partlyReadCard(o fhir.MedicationOrder) Card {
	parts := make([]string, len(o.Unread))
	for i, p := range o.Unread {
		parts[i] = quote(p, MaxQuotedDetailRunes)
	}
	drugs := make([]string, len(o.Drugs))
	for i, x := range o.Drugs {
		drugs[i] = x.Drug
	}
	id := b.cardID("partly-read", append([]string{orderName(o), o.Label}, o.Unread...)...)
	var d strings.Builder
	pronoun := "them"
	if len(parts) == 1 {
		pronoun = "it"
	}
	fmt.Fprintf(&d, "**Partly checked.** Of “%s”, pgxsafety checked %s; it could not identify %s, so no pharmacogenomic check was made for %s. "+
		"This is not a statement that it is safe for this patient.\n\n",
		esc(orderText(o, MaxQuotedDetailRunes)), esc(strings.Join(drugs, " and ")), esc("“"+strings.Join(parts, "”, “")+"”"), pronoun)
	fmt.Fprintf(&d, "**Order:** %s.\n\n", esc(orderName(o)))
	var dym []string
	for _, p := range o.Unread {
		if rd := b.s.names.ReadDrug(p); len(rd.DidYouMean) > 0 {
			dym = append(dym, fmt.Sprintf("“%s”: did you mean %s? (a near name, not a match)", quote(p, MaxQuotedRunes), strings.Join(rd.DidYouMean, " or ")))
		}
	}
	list(&d, "Near names", dym)
	d.WriteString("**What to do:** check the part not identified for pharmacogenomic guidance by hand, or name it by its generic name, an RxNorm or an ATC code.\n\n")
	d.WriteString(strings.TrimSpace(b.noIDNote(o)))
	what := quote(strings.Join(o.Unread, ", "), MaxQuotedRunes)
	summary := fmt.Sprintf("pgxsafety could not identify “%s” in this order — that part was not checked", what)
	return Card{
		UUID:      id,
		Summary:   truncate(summary),
		Detail:    strings.TrimSpace(d.String()),
		Indicator: IndicatorInfo,
		Source:    Source{Label: "pgxsafety order check", Topic: &Coding{System: TopicSystem, Code: "order-not-checked", Display: "Order not checked for pharmacogenomic risk"}},
	}
}

// fetchFailure says, in words fit for a card, why data could not be had
// from the EHR's FHIR server. The error itself (addresses, the server's
// own text) goes to the log and the audit entry, never to a card.
func fetchFailure(err error) string {
	var se *fhir.StatusError
	switch {
	case errors.As(err, &se) && se.Unauthorized():
		return "the EHR's FHIR server refused pgxsafety's access"
	case errors.As(err, &se) && se.Status == 404:
		return "the EHR's FHIR server did not find it"
	case errors.As(err, &se):
		return "the EHR's FHIR server answered with an error"
	case errors.Is(err, context.DeadlineExceeded):
		return "the EHR's FHIR server did not answer in time"
	case errors.Is(err, fhir.ErrFHIRServer):
		return "the EHR's FHIR server could not be reached or its answer could not be read"
	}
	return "the EHR's FHIR server could not be queried"
}

// checkFailure says, in words fit for a card, why the engine could not
// evaluate a drug: an input the engine refused is named (it is about the
// patient's data); anything else is an internal error and is not shown.
func checkFailure(err error) string {
	var ve *engine.ValidationError
	if errors.As(err, &ve) {
		parts := make([]string, len(ve.Fields))
		for i, f := range ve.Fields {
			parts[i] = f.Field + ": " + f.Reason
		}
		return "the patient's data sent with the order could not be used (" + quote(strings.Join(parts, "; "), MaxQuotedDetailRunes) + ")"
	}
	return "an internal error stopped the check"
}
