package evaluate

import (
	"fmt"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// This file presents the drug-name reading in the answer: its warnings and
// the alert for an input that was not read.

// readingWarnings are the sentences the answer's warnings carry for a reading.
func readingWarnings(r *engine.DrugReading) []string {
	var out []string
	switch r.Status {
	case engine.DrugStatusNotRecognised:
		msg := fmt.Sprintf("drug %q was not recognised: no pharmacogenomic guidance was checked, which does not mean it is safe — review", r.Input)
		if r.Via == engine.NameKindRegimen {
			msg = fmt.Sprintf("drug %q was read as %s, none of which has pharmacogenomic guidance in the knowledge: nothing was checked, which does not mean it is safe — review", r.Input, strings.Join(r.Ingredients, " + "))
		}
		if len(r.DidYouMean) > 0 {
			msg += "; did you mean " + strings.Join(r.DidYouMean, " or ") + "?"
		}
		out = append(out, msg)
	case engine.DrugStatusNeedsConfirmation:
		out = append(out, fmt.Sprintf("drug %q could not be interpreted safely: nothing was checked — review", r.Input))
	case engine.DrugStatusPartial:
		if r.Via == "ingredient list" {
			out = append(out, fmt.Sprintf("part of drug %q was not recognised and was not checked: %s — review", r.Input, strings.Join(r.Unrecognised, ", ")))
		}
	}
	if r.Status == engine.DrugStatusRecognised || r.Status == engine.DrugStatusPartial {
		if r.Via != "name" && r.Matched != "" {
			out = append(out, fmt.Sprintf("drug %q was read as %s (%s %q)", r.Input, strings.Join(r.Drugs, " + "), r.Via, r.Matched))
		}
	}
	return append(out, r.Notes...)
}

// notInterpretedAlert is the visible INFO alert for a drug input that was
// not (fully) read: it keeps an unrecognised name from looking like "no
// alerts".
func notInterpretedAlert(r *engine.DrugReading) engine.Alert {
	what := fmt.Sprintf("The drug %q was not recognised", r.Input)
	switch {
	case r.Status == engine.DrugStatusNotRecognised && r.Via == engine.NameKindRegimen:
		what = fmt.Sprintf("The drug %q was read as %s, none of which has pharmacogenomic guidance in the knowledge", r.Input, strings.Join(r.Ingredients, " + "))
	case r.Status == engine.DrugStatusNeedsConfirmation:
		what = fmt.Sprintf("The drug %q may stand for %s but is also an ordinary word or a short abbreviation", r.Input, strings.Join(r.DidYouMean, " or "))
	case len(r.Unrecognised) > 0 && len(r.Drugs) > 0:
		what = fmt.Sprintf("Part of the drug %q was not recognised (%s); %s was checked", r.Input, strings.Join(r.Unrecognised, ", "), strings.Join(r.Drugs, " + "))
	}
	action := "Check the name, or give the generic name, an RxNorm or an ATC code, and check again."
	if len(r.DidYouMean) > 0 {
		action = "Did you mean " + strings.Join(r.DidYouMean, " or ") + "? " + action
	}
	return engine.Alert{
		Severity:     engine.SeverityInfo,
		Category:     engine.CategoryNotInterpreted,
		Message:      what + ": no pharmacogenomic check was made for it, which is not a statement that it is safe. Review.",
		Action:       action,
		Alternatives: []string{},
		Assumptions:  []string{},
	}
}
