// Package evaluate answers a drug-safety request: it joins the allele
// caller (engine/calling), the drug-name reader (engine/drugnames) and the
// population selector (engine/population) with the knowledge's
// recommendations, state and community context into an engine.Result
// with alerts, alternatives, confidence and citations. It is pure and
// deterministic.
package evaluate

import (
	"fmt"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/drugnames"
	"github.com/pgxsafety/pgxsafety/engine/population"
)

// Engine evaluates requests against one knowledge base: the knowledge
// with the indexes of every part, built once at start-up by New and
// read-only afterwards (safe for concurrent use).
type Engine struct {
	*engine.Knowledge
	calls *calling.Caller
	names *drugnames.Reader
	pops  *population.Selector
	// drugGenes is computeDrugGenes of every drug.
	drugGenes map[*engine.Drug][]string
	// refLookups is referenceLookups: each gene's lookup values for its
	// default diplotype.
	refLookups map[string][]string
	// popFreqs and herbs are, per drug, the population frequencies of
	// the tracked variants of its genes and the herb notes naming it
	// (indianContext), in knowledge order; shared and read only.
	popFreqs map[*engine.Drug][]engine.PopulationFrequency
	herbs    map[*engine.Drug][]engine.HerbNote
	// pfCites and herbCites are frequencyCitations of popFreqs and
	// herbCitations of every drug.
	pfCites   map[*engine.Drug][]engine.Citation
	herbCites map[*engine.Drug][]engine.Citation
	// pretest is pretestPlan of every drug.
	pretest map[*engine.Drug][]pretestGene
}

// New builds the engine of k, which must be built (Knowledge.Build). It
// fails when the knowledge breaks an invariant a part relies on (a drug
// name naming two drugs, an allele definition that cannot be indexed).
func New(k *engine.Knowledge) (*Engine, error) {
	names, err := drugnames.New(k)
	if err != nil {
		return nil, err
	}
	calls, err := calling.New(k)
	if err != nil {
		return nil, fmt.Errorf("knowledge index: %w", err)
	}
	e := &Engine{Knowledge: k, calls: calls, names: names, pops: population.New(k)}
	e.refLookups = e.referenceLookups()
	e.drugGenes = make(map[*engine.Drug][]string, len(k.Drugs))
	for i := range k.Drugs {
		e.drugGenes[&k.Drugs[i]] = e.computeDrugGenes(&k.Drugs[i])
	}
	e.popFreqs = make(map[*engine.Drug][]engine.PopulationFrequency, len(k.Drugs))
	e.herbs = make(map[*engine.Drug][]engine.HerbNote, len(k.Drugs))
	e.pretest = make(map[*engine.Drug][]pretestGene, len(k.Drugs))
	e.pfCites = make(map[*engine.Drug][]engine.Citation, len(k.Drugs))
	e.herbCites = make(map[*engine.Drug][]engine.Citation, len(k.Drugs))
	for i := range k.Drugs {
		d := &k.Drugs[i]
		e.popFreqs[d] = e.populationFrequencies(e.drugGenes[d])
		e.herbs[d] = e.herbNotes(d.Name)
		e.pretest[d] = e.pretestPlan(d, e.drugGenes[d])
		e.pfCites[d] = e.frequencyCitations(e.popFreqs[d])
		e.herbCites[d] = e.herbCitations(d.Name)
	}
	return e, nil
}

// Caller returns the allele caller of the engine's knowledge.
func (k *Engine) Caller() *calling.Caller { return k.calls }

// Names returns the drug-name reader of the engine's knowledge.
func (k *Engine) Names() *drugnames.Reader { return k.names }

// Populations returns the population selector of the engine's knowledge.
func (k *Engine) Populations() *population.Selector { return k.pops }

// Drug returns the covered drug for a name, synonym or salt form
// (drugnames.Reader.Drug).
func (k *Engine) Drug(name string) (*engine.Drug, bool) { return k.names.Drug(name) }
