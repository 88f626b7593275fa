package classify

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRuleTable is the test table of the synthesis rule table (RuleTable;
// docs/classifier.md shows both). Each row gives the inputs the rules read
// and the tier and fired rules expected.
func TestRuleTable(t *testing.T) {
	no := []knownAllele{{rsid: "rs1", ref: "C", alt: "T", alleles: []string{"*3"}, function: FunctionNo}}
	dec := []knownAllele{{rsid: "rs1", ref: "C", alt: "T", alleles: []string{"*2"}, function: FunctionDecreased}}
	normal := []knownAllele{{rsid: "rs1", ref: "C", alt: "T", alleles: []string{"*37"}, function: FunctionNormal}}
	uncertain := []knownAllele{{rsid: "rs1", ref: "G", alt: "T", alleles: []string{"*27"}, function: "Uncertain function"}}
	increased := []knownAllele{{rsid: "rs1", ref: "G", alt: "T", alleles: []string{"*4"}, function: FunctionIncreased}}
	adequate, low := ConfidenceAdequate, ConfidenceLow
	damagingConserved := Conservation{LogOdds: -4, Damaging: true, Conserved: true, Confidence: adequate}
	damagingNotConserved := Conservation{LogOdds: -3.5, Damaging: true, Conserved: false, Confidence: adequate}
	damagingThin := Conservation{LogOdds: -4, Damaging: true, Conserved: true, Confidence: low}
	tolerated := Conservation{LogOdds: -0.5, Damaging: false, Conserved: true, Confidence: adequate}
	pop := func(r string) Population { return Population{Rarity: r} }

	tests := []struct {
		name     string
		in       synthesisInput
		tier     int
		fired    []string
		evidence []string
	}{
		{"no-function allele of a level-A gene", synthesisInput{functions: no, levelA: true, cons: damagingConserved, pop: pop(RarityRare)},
			1, []string{RuleCPICNonNormal, RuleConservedRare, RuleProfileDamaging}, []string{EvidenceGraph}},
		{"decreased-function allele, tolerated and common (CPIC outranks the heuristics)", synthesisInput{functions: dec, levelA: true, cons: tolerated, pop: pop(RarityCommon)},
			1, []string{RuleCPICNonNormal, RuleCommonTolerated}, []string{EvidenceGraph}},
		{"no-function allele of a gene without a level-A pair", synthesisInput{functions: no, levelA: false, cons: tolerated, pop: pop(RarityUnknown)},
			3, []string{RuleDefault}, []string{}},
		{"normal-function allele although damaging and conserved", synthesisInput{functions: normal, levelA: true, cons: damagingConserved, pop: pop(RarityCommon)},
			4, []string{RuleCPICNormal}, []string{EvidenceGraph}},
		{"normal-function allele, common and tolerated", synthesisInput{functions: normal, levelA: true, cons: tolerated, pop: pop(RarityCommon)},
			4, []string{RuleCPICNormal, RuleCommonTolerated}, []string{EvidenceGraph}},
		{"normal and no-function alleles of the same substitution: the no-function one decides", synthesisInput{functions: append(append([]knownAllele{}, normal...), no...), levelA: true, cons: tolerated, pop: pop(RarityRare)},
			1, []string{RuleCPICNonNormal}, []string{EvidenceGraph}},
		{"conserved, damaging, rare, no CPIC function", synthesisInput{functions: uncertain, levelA: true, cons: damagingConserved, pop: pop(RarityRare)},
			2, []string{RuleConservedRare, RuleProfileDamaging}, []string{EvidenceConservation, EvidencePopulation}},
		{"damaging and rare but not conserved: the profile alone decides", synthesisInput{cons: damagingNotConserved, pop: pop(RarityRare), levelA: true},
			2, []string{RuleProfileDamaging}, []string{EvidenceConservation}},
		{"conserved and damaging, low-frequency", synthesisInput{cons: damagingConserved, pop: pop(RarityLowFrequency), levelA: true},
			2, []string{RuleProfileDamaging}, []string{EvidenceConservation}},
		{"conserved and damaging, frequency unknown (novel substitution)", synthesisInput{cons: damagingConserved, pop: pop(RarityUnknown), levelA: true},
			2, []string{RuleProfileDamaging}, []string{EvidenceConservation}},
		{"damaging but few homologs (low confidence), novel", synthesisInput{cons: damagingThin, pop: pop(RarityUnknown), levelA: true},
			3, []string{RuleDefault}, []string{}},
		{"damaging but few homologs (low confidence), rare", synthesisInput{cons: damagingThin, pop: pop(RarityRare), levelA: true},
			3, []string{RuleDefault}, []string{}},
		{"common and tolerated, no CPIC function", synthesisInput{functions: increased, cons: tolerated, pop: pop(RarityCommon), levelA: true},
			4, []string{RuleCommonTolerated}, []string{EvidencePopulation, EvidenceConservation}},
		{"common but damaging", synthesisInput{cons: damagingConserved, pop: pop(RarityCommon), levelA: true},
			3, []string{RuleDefault}, []string{}},
		{"tolerated, rare", synthesisInput{cons: tolerated, pop: pop(RarityRare), levelA: true},
			3, []string{RuleDefault}, []string{}},
	}
	for _, tc := range tests {
		got := synthesise(tc.in)
		var fired []string
		for _, r := range got.Rules {
			if r.Fired {
				fired = append(fired, r.ID)
			}
		}
		if got.Tier != tc.tier || got.TierLabel != TierLabels[tc.tier] {
			t.Errorf("%s: tier %d (%q), want %d", tc.name, got.Tier, got.TierLabel, tc.tier)
		}
		if diff := cmp.Diff(tc.fired, fired); diff != "" {
			t.Errorf("%s: fired rules (-want +got):\n%s", tc.name, diff)
		}
		if len(got.Rules) != len(RuleTable) {
			t.Errorf("%s: %d rules reported, want every rule (%d)", tc.name, len(got.Rules), len(RuleTable))
		}
		if diff := cmp.Diff(tc.evidence, got.DecidingEvidence); diff != "" {
			t.Errorf("%s: deciding evidence (-want +got):\n%s", tc.name, diff)
		}
		if got.DecidedBy != fired[0] {
			t.Errorf("%s: decided by %q, want the first fired rule %q", tc.name, got.DecidedBy, fired[0])
		}
	}
}
