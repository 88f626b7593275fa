package vcfcall

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/outside"
)

// OutsideCallError refuses an outside call that cannot be given to a
// sample of the file (Options.OutsideCalls).
type OutsideCallError struct {
	// Source is the call's Source ("calls.tsv line 3").
	Source string
	Reason string
}

// Error names the call.
func (e *OutsideCallError) Error() string {
	return fmt.Sprintf("outside call at %s: %s", e.Source, e.Reason)
}

// matchOutside gives every outside call to its sample: by name, or, for
// a call that names no sample, to the file's only sample. A call naming a
// sample the file does not hold, a call without a sample in a file of
// several samples and two calls of one gene for one sample are refused.
func (r *run) matchOutside(all []string) error {
	if len(r.opt.OutsideCalls) == 0 {
		return nil
	}
	have := make(map[string]bool, len(all))
	for _, s := range all {
		have[s] = true
	}
	r.outside = map[string]map[string]*outside.Call{}
	for i := range r.opt.OutsideCalls {
		c := &r.opt.OutsideCalls[i]
		sample := c.Sample
		switch {
		case sample == "" && len(all) != 1:
			return &OutsideCallError{Source: c.Source, Reason: fmt.Sprintf("the %s call of %s names no sample and the VCF has %d samples: give the calls of one sample with a VCF of that sample only", c.Caller, c.Gene, len(all))}
		case sample == "":
			sample = all[0]
		case !have[sample]:
			return &OutsideCallError{Source: c.Source, Reason: fmt.Sprintf("the %s call of %s names sample %q, which the VCF does not hold", c.Caller, c.Gene, sample)}
		}
		if r.outside[sample] == nil {
			r.outside[sample] = map[string]*outside.Call{}
		}
		if prev := r.outside[sample][c.Gene]; prev != nil {
			return &OutsideCallError{Source: c.Source, Reason: fmt.Sprintf("sample %q already has an outside call of %s (%s at %s); give one call per gene", sample, c.Gene, prev.Caller, prev.Source)}
		}
		r.outside[sample][c.Gene] = c
	}
	return nil
}

// outsideFor is the sample's outside calls that replace a gene's result
// (every gene but the HLA genes), the HLA alleles the drug checks read as
// positive, and the sample's notes on the HLA calls.
func (r *run) outsideFor(sample string) (map[string]*outside.Call, map[string]string, []string) {
	calls := r.outside[sample]
	if len(calls) == 0 {
		return nil, nil, nil
	}
	genes := map[string]*outside.Call{}
	var hla map[string]string
	var notes []string
	for gene, c := range calls {
		if !strings.HasPrefix(gene, "HLA-") {
			genes[gene] = c
			continue
		}
		from := fmt.Sprintf("%s, %s", c.Caller, c.Source)
		if !c.Passing {
			notes = append(notes, fmt.Sprintf("%s: the outside call %q (%s) is not passing (%s); the drug checks read %s as not typed", gene, c.Diplotype, from, c.Quality, gene))
			continue
		}
		var known []string
		for _, a := range c.HLAAlleles {
			at := strings.IndexByte(a, '*')
			if at < 0 {
				continue
			}
			if _, ok := r.kb.Caller().HLAAllele(a[:at], a[at:]); ok {
				if hla == nil {
					hla = map[string]string{}
				}
				if hla[a] == "" {
					known = append(known, a)
				}
				hla[a] = "positive"
			}
		}
		if len(known) == 0 {
			notes = append(notes, fmt.Sprintf("%s typed %s (%s): no allele the knowledge has rows for; the drug checks read no %s allele from it", gene, strings.Join(c.HLAAlleles, "/"), from, gene))
			continue
		}
		notes = append(notes, fmt.Sprintf("%s typed %s (%s): %s positive in the drug checks; no %s allele is read as negative from the typing (two-field names, some from G groups)", gene, strings.Join(c.HLAAlleles, "/"), from, strings.Join(known, ", "), gene))
	}
	sort.Strings(notes)
	return genes, hla, notes
}

// validOutside checks the call's diplotype as POST /pgx/check checks a
// diplotypes entry; it returns why it cannot be read, or "".
func validOutside(k *calling.Caller, c *outside.Call) string {
	if !c.Passing {
		return ""
	}
	if strings.TrimSpace(c.Diplotype) == "" {
		return "the call gives no diplotype"
	}
	err := k.Validate(engine.Request{Drug: "outside call", Diplotypes: map[string]string{c.Gene: c.Diplotype}})
	var ve *engine.ValidationError
	if errors.As(err, &ve) {
		var why []string
		for _, f := range ve.Fields {
			why = append(why, f.Reason)
		}
		return strings.Join(why, "; ")
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// outsideGene is the gene's result from an outside call, read through
// the same path as a diplotype given to POST /pgx/check
// (calling.Caller.InterpretGenotype). vcf is the VCF-derived result of
// the gene, or nil. A call the caller does not pass, or a diplotype the
// engine cannot read or gives no CPIC value, is a review naming why;
// never a phenotype.
func outsideGene(k *calling.Caller, c *outside.Call, vcf *GeneResult) GeneResult {
	from := fmt.Sprintf("%s, %s", c.Caller, c.Source)
	g := GeneResult{
		Gene: c.Gene, Alternatives: []string{}, MissingPositions: []string{}, Uninterpreted: []string{},
		Observations: []string{}, Diplotypes: []DiplotypeResult{},
		Notes: []string{fmt.Sprintf("from the outside call %s (%s), which replaces the VCF's reading of %s", c.Diplotype, from, c.Gene)},
	}
	if vcf != nil {
		g.Observations = vcf.Observations
		g.MissingPositions = vcf.MissingPositions
	}
	review := func(why string) GeneResult {
		g.Status, g.NeedsReview, g.Interpretation = calling.CallNotCalled, true, InterpretationReview
		g.Uninterpreted = append(g.Uninterpreted, why)
		g.Summary = InterpretationReview + ": " + why
		if vcf != nil {
			g.Notes = append(g.Notes, "the VCF alone reads: "+vcf.Summary)
		}
		return g
	}
	if !c.Passing {
		return review(fmt.Sprintf("the outside call %q of %s is not passing (%s): %s", c.Diplotype, c.Gene, from, c.Quality))
	}
	if why := validOutside(k, c); why != "" {
		return review(fmt.Sprintf("the outside call %q of %s (%s) cannot be read: %s", c.Diplotype, c.Gene, from, why))
	}
	gt := k.InterpretGenotype(engine.Request{Drug: "outside call", Diplotypes: map[string]string{c.Gene: c.Diplotype}})
	gg := gt.Genes[c.Gene]
	if gg == nil {
		return review(fmt.Sprintf("the knowledge has no CPIC phenotype rules for %s: the outside call %q (%s) cannot be interpreted", c.Gene, c.Diplotype, from))
	}
	g.Notes = append(g.Notes, gg.Assumptions...)
	if gg.Uncallable != "" || len(gg.Diplotypes) == 0 {
		why := gg.Uncallable
		if len(gg.Review) > 0 {
			why = strings.Join(gg.Review, "; ")
		}
		g = review(fmt.Sprintf("the outside call %s %s (%s): %s", c.Gene, c.Diplotype, from, why))
		g.Status = calling.CallCalled
		g.Diplotypes = []DiplotypeResult{{Diplotype: c.Diplotype, Alleles: []string{}}}
		return g
	}
	g.Status, g.Interpretation = calling.CallCalled, InterpretationCalled
	var named []string
	for _, d := range gg.Diplotypes {
		dr := DiplotypeResult{Diplotype: d.String(), Alleles: nonNil(d.Alleles), Phenotype: d.Call.Phenotype, ActivityScore: d.Call.ActivityScore}
		text := dr.Diplotype + ": " + dr.Phenotype
		if dr.ActivityScore != "" {
			text += " (activity score " + dr.ActivityScore + ")"
		}
		named = append(named, text)
		g.Diplotypes = append(g.Diplotypes, dr)
	}
	g.Summary = strings.Join(named, " or ") + " (outside call, " + from + ")"
	if c.Phenotype != "" && len(gg.Diplotypes) == 1 && !strings.EqualFold(c.Phenotype, gg.Diplotypes[0].Call.Phenotype) {
		g.Notes = append(g.Notes, fmt.Sprintf("%s gives the phenotype %q; the engine reads %s by CPIC's tables as %s", c.Caller, c.Phenotype, c.Diplotype, gg.Diplotypes[0].Call.Phenotype))
	}
	if vcf != nil {
		if d := disagreement(vcf, gg.Diplotypes); d != "" {
			g.Notes = append(g.Notes, fmt.Sprintf("the VCF alone reads %s differently: %s; the outside call %s is used", c.Gene, d, c.Diplotype))
		}
	}
	return g
}

// disagreement says what the VCF-derived reading was when it is not the
// outside call's diplotype, or "" when they agree.
func disagreement(vcf *GeneResult, out []calling.Diplotype) string {
	if len(vcf.Diplotypes) == len(out) && vcf.Status == calling.CallCalled && !vcf.NeedsReview {
		same := true
		for i, d := range vcf.Diplotypes {
			if !sameAlleles(d.Alleles, out[i].Alleles) {
				same = false
			}
		}
		if same {
			return ""
		}
	}
	return vcf.Summary
}

func sameAlleles(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(x)
	sort.Strings(y)
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}
