package calling

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// PhenotypeCall is the CPIC phenotype of one diplotype (or, for a
// hemizygous gene, one allele).
type PhenotypeCall struct {
	Phenotype     string
	ActivityScore string // empty for genes without activity values
	// LookupKey is what CPIC recommendations match on: the activity score
	// for activity-score genes, else the phenotype.
	LookupKey string
	Functions []string
}

// Phenotype translates alleles of a gene into the CPIC phenotype with the
// gene's rules: activity score (CYP2D6, CYP2C9, DPYD) or the unordered
// pair of allele functions; one allele means hemizygous (G6PD in males,
// MT-RNR1).
func (k *Caller) Phenotype(gene string, alleles ...string) (PhenotypeCall, error) {
	g, ok := k.Gene(gene)
	if !ok {
		return PhenotypeCall{}, fmt.Errorf("unknown gene %q", gene)
	}
	if len(alleles) < 1 || len(alleles) > 2 {
		return PhenotypeCall{}, fmt.Errorf("%s: need one or two alleles, got %d", gene, len(alleles))
	}
	call := PhenotypeCall{Functions: make([]string, 0, len(alleles))}
	for _, name := range alleles {
		a, ok := k.Allele(gene, name)
		if !ok {
			return PhenotypeCall{}, fmt.Errorf("%s: unknown allele %q", gene, name)
		}
		call.Functions = append(call.Functions, a.Function)
	}
	var ruleType, key string
	switch {
	case g.Method == engine.MethodActivityScore:
		score, err := k.activityScore(gene, alleles)
		if err != nil {
			return PhenotypeCall{}, err
		}
		call.ActivityScore = score
		ruleType, key = engine.MethodActivityScore, score
	case len(alleles) == 1:
		ruleType, key = "hemizygous_function", call.Functions[0]
		if !hasRuleType(g, ruleType) {
			// A gene without hemizygous rules (MT-RNR1 is listed as one
			// allele in the CPIC table) is read as a homoplasmic pair.
			ruleType, key = engine.MethodFunctionPair, functionPairKey(call.Functions[0], call.Functions[0])
		}
	default:
		ruleType, key = engine.MethodFunctionPair, functionPairKey(call.Functions[0], call.Functions[1])
	}
	for _, r := range g.Rules {
		if r.Type == ruleType && r.Key == key {
			call.Phenotype = r.Phenotype
			break
		}
	}
	if call.Phenotype == "" {
		return PhenotypeCall{}, fmt.Errorf("%s: no CPIC rule for %s %q", gene, ruleType, key)
	}
	call.LookupKey = call.Phenotype
	if call.ActivityScore != "" {
		call.LookupKey = call.ActivityScore
	}
	return call, nil
}

func hasRuleType(g *engine.Gene, t string) bool {
	for _, r := range g.Rules {
		if r.Type == t {
			return true
		}
	}
	return false
}

// functionPairKey is the rule key of two allele functions: the two in
// sorted order, joined by " + ".
func functionPairKey(a, b string) string {
	if b < a {
		a, b = b, a
	}
	return a + " + " + b
}

// activityScore sums the CPIC activity values of the alleles. A value
// written "≥3.0" makes the sum a lower bound ("≥3.0"); an allele without a
// value ("n/a") makes the score "n/a".
func (k *Caller) activityScore(gene string, alleles []string) (string, error) {
	sum := 0.0
	atLeast := false
	for _, name := range alleles {
		a, _ := k.Allele(gene, name)
		v := a.Activity
		if v == "" || v == "n/a" {
			return "n/a", nil
		}
		if strings.HasPrefix(v, "≥") {
			atLeast = true
			v = strings.TrimPrefix(v, "≥")
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return "", fmt.Errorf("%s %s: activity value %q: %w", gene, name, v, err)
		}
		sum += f
	}
	s := FormatScore(sum)
	if atLeast {
		s = "≥" + s
	}
	return s, nil
}

// FormatScore writes an activity score the way CPIC keys it: at least one
// decimal, at most two ("1.0", "0.25", "2.75").
func FormatScore(f float64) string {
	s := strconv.FormatFloat(f, 'f', 2, 64)
	s = strings.TrimSuffix(s, "0")
	return s
}
