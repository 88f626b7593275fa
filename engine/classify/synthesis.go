package classify

import (
	"fmt"
	"strings"
)

// Tiers.
const (
	Tier1Actionable = 1
	Tier2Functional = 2
	Tier3Uncertain  = 3
	Tier4Benign     = 4
)

// TierLabels names each tier.
var TierLabels = map[int]string{
	Tier1Actionable: "Tier 1 — actionable PGx variant",
	Tier2Functional: "Tier 2 — likely functional",
	Tier3Uncertain:  "Tier 3 — uncertain significance",
	Tier4Benign:     "Tier 4 — likely benign",
}

// Rule ids, in order of precedence: the first rule that fires sets the
// tier. Every rule is evaluated and reported.
const (
	RuleCPICNonNormal    = "cpic_no_or_decreased_function"
	RuleCPICNormal       = "cpic_normal_function"
	RuleConservedRare    = "conserved_damaging_rare"
	RuleCommonTolerated  = "common_tolerated"
	RuleProfileDamaging  = "profile_damaging"
	RuleDefault          = "uncertain_default"
	EvidenceGraph        = "graph"
	EvidenceConservation = "conservation"
	EvidencePopulation   = "population"
)

// RuleTable is the synthesis rule table, in precedence order. It is the
// table docs/classifier.md shows next to its test table.
var RuleTable = []RuleSpec{
	{ID: RuleCPICNonNormal, Tier: Tier1Actionable, Evidence: []string{EvidenceGraph},
		Condition: "the substitution is the protein change of a known variant allele that alone defines a CPIC allele of No function or Decreased function, and the gene has a CPIC level A gene–drug pair",
		Threshold: "allele function ∈ {No function, Decreased function}; CPIC level = A"},
	{ID: RuleCPICNormal, Tier: Tier4Benign, Evidence: []string{EvidenceGraph},
		Condition: "the substitution is the protein change of a known variant allele that alone defines a CPIC allele of Normal function",
		Threshold: "allele function = Normal function"},
	{ID: RuleConservedRare, Tier: Tier2Functional, Evidence: []string{EvidenceConservation, EvidencePopulation},
		Condition: "damaging substitution at a conserved position, scored with adequate confidence, and rare in every population figure the knowledge has (at least one figure)",
		Threshold: fmt.Sprintf("site_log_odds ≤ %g; column_conservation ≥ %g; column Neff ≥ %g; every allele frequency < %g", DamagingLogOdds, ConservedColumn, LowConfidenceNeff, RareBelow)},
	{ID: RuleCommonTolerated, Tier: Tier4Benign, Evidence: []string{EvidencePopulation, EvidenceConservation},
		Condition: "common in a population figure of the knowledge and not a damaging substitution",
		Threshold: fmt.Sprintf("an allele frequency ≥ %g; site_log_odds > %g", CommonAtLeast, DamagingLogOdds)},
	{ID: RuleProfileDamaging, Tier: Tier2Functional, Evidence: []string{EvidenceConservation},
		Condition: "damaging substitution by the homolog profile, scored with adequate confidence, and not common in any population figure of the knowledge (a substitution the knowledge has no figure for qualifies)",
		Threshold: fmt.Sprintf("site_log_odds ≤ %g (calibrated on the CPIC allele functions, docs/classifier.md §5); column Neff ≥ %g; rarity ≠ common", DamagingLogOdds, LowConfidenceNeff)},
	{ID: RuleDefault, Tier: Tier3Uncertain,
		Condition: "no other rule fires",
		Threshold: "—"},
}

// RuleSpec is one row of the rule table.
type RuleSpec struct {
	ID        string `json:"id"`
	Tier      int    `json:"tier"`
	Condition string `json:"condition"`
	Threshold string `json:"threshold"`
	// Evidence names the kinds of evidence the rule reads (graph,
	// conservation, population); none for the default rule.
	Evidence []string `json:"evidence_kinds"`
}

// RuleResult is one evaluated rule.
type RuleResult struct {
	RuleSpec
	Fired bool
	// Values states the values the rule was evaluated on.
	Values string
}

// Synthesis is the synthesis method's section.
type Synthesis struct {
	Tier      int
	TierLabel string
	DecidedBy string
	// DecidingEvidence names the kinds of evidence of the rule that set the
	// tier (graph: a curated CPIC allele function; conservation: the homolog
	// profile; population: the knowledge's allele frequencies); empty when
	// the default rule decided.
	DecidingEvidence []string
	Rules            []RuleResult
	Precedence       string
}

// synthesisInput is what the rules read.
type synthesisInput struct {
	gene      string
	functions []knownAllele // known variant alleles of this substitution
	levelA    bool
	cons      Conservation
	pop       Population
}

type knownAllele struct {
	rsid, ref, alt string
	alleles        []string
	function       string
}

// synthesise evaluates the rule table.
func synthesise(in synthesisInput) Synthesis {
	out := Synthesis{Precedence: "rules are evaluated in table order; the first that fires sets the tier (curated CPIC allele function outranks the conservation and population heuristics)"}
	var nonNormal, normal []string
	for _, f := range in.functions {
		desc := fmt.Sprintf("%s %s>%s defines %s (%s)", f.rsid, f.ref, f.alt, strings.Join(f.alleles, ", "), f.function)
		switch f.function {
		case FunctionNo, FunctionDecreased:
			nonNormal = append(nonNormal, desc)
		case FunctionNormal:
			normal = append(normal, desc)
		}
	}
	knownFuncs := "no known variant allele of this substitution defines a CPIC allele with a function on its own"
	if len(in.functions) > 0 {
		var all []string
		for _, f := range in.functions {
			fn := f.function
			if fn == "" {
				fn = "no single function"
			}
			all = append(all, fmt.Sprintf("%s %s>%s: %s", f.rsid, f.ref, f.alt, fn))
		}
		knownFuncs = strings.Join(all, "; ")
	}
	consEv := fmt.Sprintf("site_log_odds %.4f (%s); column_conservation %.4f (%s); confidence %s (column Neff %.2f)",
		in.cons.LogOdds, damagingWord(in.cons.Damaging), in.cons.ColumnConservation, conservedWord(in.cons.Conserved),
		in.cons.Confidence, in.cons.ColumnNeff)
	popEv := "rarity " + in.pop.Rarity
	adequate := in.cons.Confidence == ConfidenceAdequate
	for _, spec := range RuleTable {
		r := RuleResult{RuleSpec: spec}
		switch spec.ID {
		case RuleCPICNonNormal:
			r.Fired = len(nonNormal) > 0 && in.levelA
			r.Values = knownFuncs + fmt.Sprintf("; %s has a CPIC level A pair: %t", in.gene, in.levelA)
		case RuleCPICNormal:
			r.Fired = len(normal) > 0 && len(nonNormal) == 0
			r.Values = knownFuncs
		case RuleConservedRare:
			r.Fired = adequate && in.cons.Conserved && in.cons.Damaging && in.pop.Rarity == RarityRare
			r.Values = consEv + "; " + popEv
		case RuleCommonTolerated:
			r.Fired = !in.cons.Damaging && in.pop.Rarity == RarityCommon
			r.Values = consEv + "; " + popEv
		case RuleProfileDamaging:
			r.Fired = adequate && in.cons.Damaging && in.pop.Rarity != RarityCommon
			r.Values = consEv + "; " + popEv
		case RuleDefault:
			r.Values = "evaluated last"
		}
		out.Rules = append(out.Rules, r)
	}
	for i := range out.Rules {
		if out.Rules[i].Fired {
			out.Tier, out.DecidedBy = out.Rules[i].Tier, out.Rules[i].ID
			out.DecidingEvidence = append([]string{}, out.Rules[i].Evidence...)
			break
		}
	}
	if out.Tier == 0 {
		last := &out.Rules[len(out.Rules)-1]
		last.Fired = true
		out.Tier, out.DecidedBy = last.Tier, last.ID
		out.DecidingEvidence = []string{}
	}
	out.TierLabel = TierLabels[out.Tier]
	return out
}

func damagingWord(d bool) string {
	if d {
		return fmt.Sprintf("damaging: ≤ %g", DamagingLogOdds)
	}
	return fmt.Sprintf("not damaging: > %g", DamagingLogOdds)
}

func conservedWord(c bool) string {
	if c {
		return fmt.Sprintf("conserved: ≥ %g", ConservedColumn)
	}
	return fmt.Sprintf("not conserved: < %g", ConservedColumn)
}
