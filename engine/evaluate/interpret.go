package evaluate

import (
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// GenotypeCalls interprets the genotype fields of req (variants, zygosity,
// diplotypes, HLA, genes tested, patient sex) without a drug: the
// per-gene calls of a genotype overview, and the interpretation's
// warnings. The drug and context fields are ignored. It returns a
// *ValidationError when a genotype field is invalid.
func (k *Engine) GenotypeCalls(req engine.Request) ([]engine.GenotypeCall, []string, error) {
	req.Drug, req.State, req.Ethnicity, req.Indication = "-", "", "", ""
	if err := k.calls.Validate(req); err != nil {
		return nil, nil, err
	}
	ev := &evaluation{kb: k, req: req, gt: k.calls.InterpretGenotype(req)}
	warnings := append([]string{}, ev.gt.Warnings...)
	if len(ev.gt.Unrecognised) > 0 {
		warnings = append(warnings, "variants not in any CPIC allele definition or the tracked panel were not used: "+
			strings.Join(ev.gt.Unrecognised, ", "))
	}
	return ev.genotypeCalls(), warnings, nil
}
