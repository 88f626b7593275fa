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
	RuleCPICNonNormal   = "cpic_no_or_decreased_function"
	RuleCPICNormal      = "cpic_normal_function"
	RuleConservedRare   = "conserved_damaging_rare"
	RuleCommonTolerated = "common_tolerated"
	RuleDefault         = "uncertain_default"
)

// RuleTable is the synthesis rule table, in precedence order. It is the
// table docs/classifier.md shows next to its test table.
var RuleTable = []RuleSpec{
	{ID: RuleCPICNonNormal, Tier: Tier1Actionable,
		Condition: "the substitution is the protein change of a known variant allele that alone defines a CPIC allele of No function or Decreased function, and the gene has a CPIC level A gene–drug pair",
		Threshold: "allele function ∈ {No function, Decreased function}; CPIC level = A"},
	{ID: RuleCPICNormal, Tier: Tier4Benign,
		Condition: "the substitution is the protein change of a known variant allele that alone defines a CPIC allele of Normal function",
		Threshold: "allele function = Normal function"},
	{ID: RuleConservedRare, Tier: Tier2Functional,
		Condition: "conserved reference residue, damaging substitution and rare in every population figure the knowledge has (at least one figure)",
		Threshold: fmt.Sprintf("H(ref) < mean entropy; BLOSUM62 < 0; every allele frequency < %g", RareBelow)},
	{ID: RuleCommonTolerated, Tier: Tier4Benign,
		Condition: "common in a population figure of the knowledge and a tolerated substitution",
		Threshold: fmt.Sprintf("an allele frequency ≥ %g; BLOSUM62 ≥ 0", CommonAtLeast)},
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
}

// RuleResult is one evaluated rule.
type RuleResult struct {
	RuleSpec
	Fired bool `json:"fired"`
	// Evidence states the values the rule was evaluated on.
	Evidence string `json:"evidence"`
}

// Synthesis is the synthesis method's section.
type Synthesis struct {
	Tier       int          `json:"tier"`
	TierLabel  string       `json:"tier_label"`
	DecidedBy  string       `json:"decided_by"`
	Rules      []RuleResult `json:"rules"`
	Precedence string       `json:"precedence"`
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
	consEv := fmt.Sprintf("BLOSUM62 %d (%s); H(ref %s) %.4f bits (%s)", in.cons.BLOSUM62, damagingWord(in.cons.Damaging),
		in.cons.Ref, in.cons.RefEntropyBits, conservedWord(in.cons.Conserved))
	popEv := "rarity " + in.pop.Rarity
	for _, spec := range RuleTable {
		r := RuleResult{RuleSpec: spec}
		switch spec.ID {
		case RuleCPICNonNormal:
			r.Fired = len(nonNormal) > 0 && in.levelA
			r.Evidence = knownFuncs + fmt.Sprintf("; %s has a CPIC level A pair: %t", in.gene, in.levelA)
		case RuleCPICNormal:
			r.Fired = len(normal) > 0 && len(nonNormal) == 0
			r.Evidence = knownFuncs
		case RuleConservedRare:
			r.Fired = in.cons.Conserved && in.cons.Damaging && in.pop.Rarity == RarityRare
			r.Evidence = consEv + "; " + popEv
		case RuleCommonTolerated:
			r.Fired = !in.cons.Damaging && in.pop.Rarity == RarityCommon
			r.Evidence = consEv + "; " + popEv
		case RuleDefault:
			r.Evidence = "evaluated last"
		}
		out.Rules = append(out.Rules, r)
	}
	for i := range out.Rules {
		if out.Rules[i].Fired {
			out.Tier, out.DecidedBy = out.Rules[i].Tier, out.Rules[i].ID
			break
		}
	}
	if out.Tier == 0 {
		last := &out.Rules[len(out.Rules)-1]
		last.Fired = true
		out.Tier, out.DecidedBy = last.Tier, last.ID
	}
	out.TierLabel = TierLabels[out.Tier]
	return out
}

func damagingWord(d bool) string {
	if d {
		return "damaging: below 0"
	}
	return "tolerated: 0 or above"
}

func conservedWord(c bool) string {
	if c {
		return "conserved: below the mean entropy"
	}
	return "not conserved: at or above the mean entropy"
}
