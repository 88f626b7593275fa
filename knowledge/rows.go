package knowledge

import "github.com/pgxsafety/pgxsafety/engine"

// Version is the knowledge version as "knowledge stats --json" reports it:
// the engine's Version with its JSON names.
type Version struct {
	// Digest is the SHA-256 of the embedded data files (hex).
	Digest string `json:"digest"`
	// Label is the knowledge_version string reported to clients.
	Label string `json:"label"`
	// DataVersions names each upstream snapshot and its date or release.
	DataVersions map[string]string `json:"data_versions"`
}

// Rows are the rows of the knowledge files other than the classifier's,
// one field per file, as knowledge/internal/gen writes them and decodeFS
// reads them.
type Rows struct {
	Sources         []Source
	Drugs           []Drug
	Genes           []Gene
	Recommendations []Recommendation
	RsIDs           []RsID
	Variants        []TrackedVariant
	HLAAlleles      []HLAAllele
	States          []State
	Communities     []Community
	Herbs           []HerbInteraction
	Warfarin        *FlowChart
	Definitions     []GeneDefinition
	DrugNames       []DrugName
	Indications     []IndicationCode
}

// Engine builds the engine's domain values from the rows, one value per
// row, in file order (so that a problem found on a value names its row).
// The result shares the rows' slices of strings and maps; it has no
// Version and is not indexed (LoadBaseFS sets the one and builds the
// other).
func (r *Rows) Engine() *engine.Knowledge {
	kb := &engine.Knowledge{
		Sources:         convert(r.Sources, func(s Source) engine.Source { return engine.Source(s) }),
		Drugs:           convert(r.Drugs, Drug.engine),
		Genes:           convert(r.Genes, Gene.engine),
		Recommendations: convert(r.Recommendations, func(x Recommendation) engine.Recommendation { return engine.Recommendation(x) }),
		RsIDs:           convert(r.RsIDs, func(x RsID) engine.RsID { return engine.RsID(x) }),
		Variants:        convert(r.Variants, func(x TrackedVariant) engine.TrackedVariant { return engine.TrackedVariant(x) }),
		HLAAlleles:      convert(r.HLAAlleles, func(x HLAAllele) engine.HLAAllele { return engine.HLAAllele(x) }),
		States:          convert(r.States, State.engine),
		Communities:     convert(r.Communities, func(x Community) engine.Community { return engine.Community(x) }),
		Herbs:           convert(r.Herbs, func(x HerbInteraction) engine.HerbInteraction { return engine.HerbInteraction(x) }),
		Definitions:     convert(r.Definitions, GeneDefinition.engine),
		DrugNames:       convert(r.DrugNames, func(x DrugName) engine.DrugName { return engine.DrugName(x) }),
		Indications:     convert(r.Indications, func(x IndicationCode) engine.IndicationCode { return engine.IndicationCode(x) }),
	}
	if r.Warfarin != nil {
		w := r.Warfarin.engine()
		kb.Warfarin = &w
	}
	return kb
}

// convert maps rows to engine values, keeping a nil slice nil.
func convert[R, E any](rs []R, f func(R) E) []E {
	if rs == nil {
		return nil
	}
	out := make([]E, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

func (d Drug) engine() engine.Drug {
	return engine.Drug{
		Name: d.Name, RxNormCUIs: d.RxNormCUIs, ATCCodes: d.ATCCodes, ATCClass: d.ATCClass,
		GuidelineGroup: d.GuidelineGroup, Synonyms: d.Synonyms, BestCPICLevel: d.BestCPICLevel,
		Guidance: d.Guidance, Sensitivity: d.Sensitivity,
		Pairs:     convert(d.Pairs, func(p DrugPair) engine.DrugPair { return engine.DrugPair(p) }),
		SourceIDs: d.SourceIDs,
	}
}

func (g Gene) engine() engine.Gene {
	return engine.Gene{
		Symbol: g.Symbol, Method: g.Method, DefaultAllele: g.DefaultAllele,
		ReferenceAllele: g.ReferenceAllele, Chromosome: g.Chromosome,
		Alleles:     convert(g.Alleles, Allele.engine),
		Rules:       convert(g.Rules, func(r PhenotypeRule) engine.PhenotypeRule { return engine.PhenotypeRule(r) }),
		DataVersion: g.DataVersion, SourceIDs: g.SourceIDs,
	}
}

func (a Allele) engine() engine.Allele {
	return engine.Allele{
		Name: a.Name, Function: a.Function, Activity: a.Activity, Structural: a.Structural,
		Key:      convert(a.Key, func(v AlleleVariant) engine.AlleleVariant { return engine.AlleleVariant(v) }),
		Defining: a.Defining, SourceIDs: a.SourceIDs,
	}
}

func (s State) engine() engine.State {
	return engine.State{
		Name: s.Name, Type: s.Type, Aliases: s.Aliases,
		Risks: convert(s.Risks, func(r StateRisk) engine.StateRisk { return engine.StateRisk(r) }),
	}
}

func (f FlowChart) engine() engine.FlowChart {
	return engine.FlowChart{
		Drug: f.Drug, Genes: f.Genes, Note: f.Note,
		Nodes: convert(f.Nodes, func(n FlowChartNode) engine.FlowChartNode { return engine.FlowChartNode(n) }),
		URL:   f.URL, SourceIDs: f.SourceIDs,
	}
}

func (g GeneDefinition) engine() engine.GeneDefinition {
	pos := func(p DefinedPosition) engine.DefinedPosition { return engine.DefinedPosition(p) }
	return engine.GeneDefinition{
		Gene: g.Gene, Chromosome: g.Chromosome, RefSeq: g.RefSeq, DataVersion: g.DataVersion,
		Positions:               convert(g.Positions, pos),
		IgnoredPositions:        convert(g.IgnoredPositions, pos),
		Alleles:                 convert(g.Alleles, DefinedAllele.engine),
		RequiredPositions:       g.RequiredPositions,
		ExtraPositions:          convert(g.ExtraPositions, pos),
		IgnoredAlleles:          g.IgnoredAlleles,
		UnphasedPriorities:      convert(g.UnphasedPriorities, func(r PriorityRule) engine.PriorityRule { return engine.PriorityRule(r) }),
		Tier1Alleles:            g.Tier1Alleles,
		Tier1Positions:          g.Tier1Positions,
		UndocumentedAsReference: g.UndocumentedAsReference,
		VariantList:             g.VariantList,
		SourceIDs:               g.SourceIDs,
	}
}

func (a DefinedAllele) engine() engine.DefinedAllele {
	return engine.DefinedAllele{
		Name: a.Name, Structural: a.Structural,
		Cells: convert(a.Cells, func(c AlleleCell) engine.AlleleCell { return engine.AlleleCell(c) }),
	}
}
