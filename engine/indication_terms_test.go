package engine

import "testing"

// TestWordTermsKeepTheirExpressions pins the compiled expressions of the
// clopidogrel indication terms to the ones written out by hand before
// the stem prefilter, so the prefilter is the only change.
func TestWordTermsKeepTheirExpressions(t *testing.T) {
	for _, tc := range []struct {
		w    wordTerms
		want string
	}{
		{textACSPCI, `\b(acs|acute coronary|pci|ptca|percutaneous coronary|percutaneous transluminal|coronary angioplasty|angioplasty|stent|stents|stented|stenting|myocardial infarction|heart attack|stemi|nstemi|n-stemi|unstable angina)\b`},
		{textNeuro, `\b(stroke|tia|transient ischaemic|transient ischemic|neurovascular|cerebrovascular|carotid|intracranial|neurointervention\w*)\b`},
		{textCVI, `\b(coronary|cardiac|cardiovascular|peripheral arter\w*|pad|angina|atrial fibrillation|atherosclero\w*|ischaemic heart|ischemic heart)\b`},
	} {
		if got := tc.w.re.String(); got != tc.want {
			t.Errorf("expression %s, want %s", got, tc.want)
		}
	}
}

// TestWordTermsPrefilterAgreesWithExpression checks on mixed texts that
// a clause the stems reject has no match of the expression.
func TestWordTermsPrefilterAgreesWithExpression(t *testing.T) {
	texts := []string{"acute coronary syndrome", "stented last year", "nstemi", "neurointerventional", "no stroke", "TIA", "peripheral arterial disease", "atherosclerotic", "pad", "padding", "fever", "", "coronaryangioplasty", "n-stemi, but pci planned"}
	for _, w := range []wordTerms{textACSPCI, textNeuro, textCVI} {
		for _, s := range texts {
			if !w.mayMatch(s) && w.re.MatchString(s) {
				t.Errorf("%q matches %s but the stems reject it", s, w.re)
			}
		}
	}
}

// FuzzSplitClauses holds the hand-written clause splitter to the regular
// expression it replaces.
func FuzzSplitClauses(f *testing.F) {
	for _, s := range []string{"", "acute coronary syndrome, pci", "no stroke but tia; however.", "but", "abut but_ butter\nalthough", "x,", ",x", "é but, héhowever although", "HOWEVER But"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := clauseSep.Split(s, -1)
		got := splitClauses(s)
		if len(got) != len(want) {
			t.Fatalf("%q: %q, want %q", s, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: %q, want %q", s, got, want)
			}
		}
	})
}
