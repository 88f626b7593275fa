package engine

import "strings"

// GenotypeCalls interprets the genotype fields of req (variants, zygosity,
// diplotypes, HLA, genes tested, patient sex) without a drug: the
// per-gene calls of a genotype overview, and the interpretation's
// warnings. The drug and context fields are ignored. It returns a
// *ValidationError when a genotype field is invalid.
func (k *Knowledge) GenotypeCalls(req Request) ([]GenotypeCall, []string, error) {
	req.Drug, req.State, req.Ethnicity, req.Indication = "-", "", "", ""
	if err := k.Validate(req); err != nil {
		return nil, nil, err
	}
	ev := &evaluation{kb: k, req: req, gt: k.InterpretGenotype(req)}
	warnings := append([]string{}, ev.gt.Warnings...)
	if len(ev.gt.Unrecognised) > 0 {
		warnings = append(warnings, "variants not in any CPIC allele definition or the tracked panel were not used: "+
			strings.Join(ev.gt.Unrecognised, ", "))
	}
	return ev.genotypeCalls(), warnings, nil
}
