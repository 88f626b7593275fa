package calling

import (
	"fmt"

	"github.com/pgxsafety/pgxsafety/engine"
)

// AddSample puts the genes one sample call holds (CallSample, a VCF
// sample) into gt, the genotype interpreted from req. A gene req gives as
// a diplotype keeps it and says that the sample's call was not used;
// genes the sample has no data for are left out.
func (k *Caller) AddSample(gt *Genotype, req engine.Request, sc SampleCall) {
	for i := range sc.Genes {
		gc := &sc.Genes[i]
		g, ok := k.Gene(gc.Gene)
		if !ok || gc.Status == CallNoData {
			continue
		}
		if prev, given := gt.Genes[gc.Gene]; given && prev.FromDiplotype {
			prev.Assumptions = append(prev.Assumptions, fmt.Sprintf("%s diplotype %s was supplied; the sample's %s call was not used", gc.Gene, req.Diplotypes[gc.Gene], gc.Gene))
			continue
		}
		ro := &requestObs{items: map[string][]string{gc.Gene: gc.Observations}, notes: map[string][]string{}, review: map[string][]string{}}
		gg := k.fromCall(g, gc, ro, len(gc.MissingPositions) == 0, sexOf(req) != "")
		if gg == nil {
			continue
		}
		gt.Genes[gc.Gene] = gg
		gt.Covered[gc.Gene] = true
	}
}
