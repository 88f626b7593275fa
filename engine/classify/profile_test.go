package classify_test

import (
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/classify"
)

// profileDigest is Classifier.ProfileDigest of the committed
// classifier_profiles.json: a regenerated file, or a change of the
// pseudocount arithmetic, changes it (update it, docs/classifier.md §2 and
// the goldens together).
const profileDigest = "e2ff0a4aafb1b07bc73a84b42af840f1f1f4b4fa0d94adbe554076bb119b2352"

// TestProfileDigest pins the regularised profiles the classifier scores
// with, and prints the table of docs/classifier.md §2.1 (-v).
func TestProfileDigest(t *testing.T) {
	c := classifier(t)
	for _, s := range c.ProfileSummaries() {
		t.Logf("| %s | %s | %d | %s | %d | %d | %.1f | %.1f | %d |", s.Gene, s.UniProt, s.Length,
			strings.TrimPrefix(s.ReleaseEntry, "identical to the release's entry "), s.Hits, s.Sequences,
			s.EffectiveSequences, s.MedianColumnNeff, s.LowConfidencePositions)
	}
	if got := c.ProfileDigest(); got != profileDigest {
		t.Errorf("profile digest = %s, want %s", got, profileDigest)
	}
}

// TestLowConfidenceStated classifies a substitution of a protein with few
// homologs (VKORC1) and of a well-covered one (CYP2C9): the first states
// its low confidence in the esm section and in a warning, and no
// conservation rule decides its tier; the second has adequate confidence.
func TestLowConfidenceStated(t *testing.T) {
	c := classifier(t)
	res, err := c.Classify(classify.Request{Gene: "VKORC1", ProteinChange: "p.Arg58Gly"})
	if err != nil {
		t.Fatal(err)
	}
	e := res.ESM
	if e.Confidence != classify.ConfidenceLow || !strings.Contains(e.ConfidenceReason, "few homologs") ||
		!strings.Contains(strings.Join(res.Warnings, "\n"), "low-confidence conservation") {
		t.Errorf("VKORC1 R58G: confidence %s (%s), warnings %v", e.Confidence, e.ConfidenceReason, res.Warnings)
	}
	for _, r := range res.Synthesis.Rules {
		if r.Fired && (r.ID == classify.RuleProfileDamaging || r.ID == classify.RuleConservedRare) {
			t.Errorf("VKORC1 R58G: %s fired on a low-confidence score", r.ID)
		}
	}
	res, err = c.Classify(classify.Request{Gene: "CYP2C9", ProteinChange: "p.Arg144Cys"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ESM.Confidence != classify.ConfidenceAdequate || res.ESM.ColumnNeff < classify.LowConfidenceNeff {
		t.Errorf("CYP2C9 R144C: confidence %s, Neff %v", res.ESM.Confidence, res.ESM.ColumnNeff)
	}
}
