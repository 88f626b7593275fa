package population

import (
	"strings"
	"testing"
)

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
	// The negation cues, as they were written before the phrase matcher,
	// without "non" (a prefix of one word: nonPrefixed, issue 21).
	for _, tc := range []struct {
		w    wordPhrases
		want string
	}{
		{negBefore, `\b(no|not|without|denies|denied|negative for|excluded|ruled out|rule out|r/o|absence of|free of|never had|no history of|no evidence of)\b`},
		{negAfter, `\b(ruled out|excluded|negative|not confirmed|unlikely|was not done|not done|not performed|not planned|declined)\b`},
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

// FuzzWordTermsMatchExpression holds the hand-written term matcher to the
// regular expression of each term list: the same matches, in order.
func FuzzWordTermsMatchExpression(f *testing.F) {
	for _, s := range []string{"", "acute coronary syndrome, pci", "stents stented stenting stent_", "n-stemi nstemi stemis", "neurointerventional neurointervention", "peripheral arterial disease", "atherosclerotic9 x", "pad padding _pad", "coronaryangioplasty coronary angioplasty", "é-acs acsé tia.tia", "ACS acs"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, w := range []wordTerms{textACSPCI, textNeuro, textCVI} {
			want := w.re.FindAllStringIndex(s, -1)
			got := w.findAll(s)
			if len(got) != len(want) {
				t.Fatalf("%s on %q: %v, want %v", w.re, s, got, want)
			}
			for i := range got {
				if got[i][0] != want[i][0] || got[i][1] != want[i][1] {
					t.Fatalf("%s on %q: %v, want %v", w.re, s, got, want)
				}
			}
		}
	})
}

// FuzzWordPhrasesMatchExpression holds the negation cue matcher to the
// regular expressions it replaces.
func FuzzWordPhrasesMatchExpression(f *testing.F) {
	for _, s := range []string{"", "no", "not ruled out", "r/o acs", "xr/o", "r/ox", "negative for", "negative fore", "nonacs", "non-acs", "é no", "never had it", "was not done."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, w := range []wordPhrases{negBefore, negAfter} {
			if got, want := w.in(s), w.re.MatchString(s); got != want {
				t.Fatalf("%s on %q: %v, want %v", w.re, s, got, want)
			}
		}
	})
}

// TestNegatedAt is the table of the negation rule on one mention: the
// cue words, the prefix "non" bound to its word, and the medical names
// that start with "non" (nonTerms). Each rule both ways.
func TestNegatedAt(t *testing.T) {
	tests := []struct {
		clause, term string
		want         bool
	}{
		// Cues before and after, as whole words.
		{"no history of acs", "acs", true},
		{"denies chest pain", "chest pain", true},
		{"negative for stemi", "stemi", true},
		{"acs ruled out", "acs", true},
		{"pci not performed", "pci", true},
		{"known acs", "acs", false},
		{"nothing suggests acs", "acs", false}, // "no" inside "nothing" is not a cue
		{"notable acs", "acs", false},
		// The prefix "non" negates the term it is attached to.
		{"non-acs", "acs", true},
		{"non acs", "acs", true},
		{"non–acs", "acs", true}, // en dash
		{"non-cardiac chest pain", "cardiac", true},
		{"non-acute coronary syndrome", "acute coronary", true},
		// … and nothing else.
		{"non-invasive testing before pci", "pci", false},
		{"non-hodgkin lymphoma with stent", "stent", false},
		{"non-small cell lung cancer with stent", "stent", false},
		{"canon acs", "acs", false}, // "non" ending another word
		// Names that start with "non" negate nothing.
		{"non-stemi", "stemi", false},
		{"non stemi", "stemi", false},
		{"non–stemi", "stemi", false},
		{"non-st elevation myocardial infarction", "myocardial infarction", false},
		{"non-st-elevation acs", "acs", false},
		{"non-st segment elevation myocardial infarction", "myocardial infarction", false},
		{"non-q wave myocardial infarction", "myocardial infarction", false},
		{"myocardial infarction with non-obstructive coronary arteries", "coronary", false},
		{"non-rheumatic atrial fibrillation", "atrial fibrillation", false},
		// A cue word still negates a name that starts with "non".
		{"no non-stemi", "stemi", true},
		{"non-stemi ruled out", "stemi", true},
	}
	for _, tc := range tests {
		b := strings.Index(tc.clause, tc.term)
		if b < 0 {
			t.Fatalf("%q not in %q", tc.term, tc.clause)
		}
		if got := negatedAt(tc.clause, b, b+len(tc.term)); got != tc.want {
			t.Errorf("%q in %q: negated %v, want %v", tc.term, tc.clause, got, tc.want)
		}
	}
}

// TestNonTermsAreFolded: every name of nonTerms is written as foldDashes
// leaves text (no hyphen), starts with "non " and is unique, so none can
// silently never match.
func TestNonTermsAreFolded(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range nonTerms {
		if foldDashes.Replace(n) != n || !strings.HasPrefix(n, "non ") || strings.ToLower(n) != n || seen[n] {
			t.Errorf("name %q: not lower case, folded, starting with \"non \" and unique", n)
		}
		seen[n] = true
	}
}
