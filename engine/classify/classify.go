package classify

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
)

// EngineVersion identifies the classification engine (the rules, the
// formula and its constants). Change it whenever a result can change for
// the same knowledge.
const EngineVersion = "pgxsafety-classify/3.0.0"

// Method descriptions of the metadata document (interface spec §2.8).
var MethodDescriptions = map[string]string{
	"esm": "Protein-level conservation without any language model: a per-position residue profile of homologous " +
		"Swiss-Prot sequences (jackhmmer + hmmalign, 80%-identity weights, BLOSUM62-derived pseudocounts that " +
		"dominate where a column is thin), scored as the site-independent log-odds ln(p_alt/p_ref) of the column " +
		"with the column's Shannon entropy as its conservation; conservation_score = p_ref/(p_ref+p_alt) " +
		"(higher = more likely damaging) with a stated confidence.",
	"population": "Indian (or South-Asian) and global allele frequencies and the ClinVar significance of the variant " +
		"allele where the knowledge holds them, with a rarity class (rare < 1%, common ≥ 5%).",
	"graph": "The rows of the PGx knowledge graph that touch the variant, its gene and the gene's drugs: " +
		"pharmacogenomic (CPIC allele function of the allele the variant defines), guideline (CPIC gene–drug " +
		"pairs) and natural-product (herb–drug interactions) rows, each with its source.",
	"synthesis": "A deterministic rule table: tier 1 actionable (defines a CPIC No/Decreased-function allele of a " +
		"level-A gene), tier 4 likely benign (Normal-function allele, or common and not damaging), tier 2 likely " +
		"functional (damaging at a conserved position and rare, or damaging by an adequately supported profile and " +
		"not common), otherwise tier 3 uncertain; every rule is reported with its threshold and the evidence that decided.",
}

// Request is one classification question: a missense substitution of a
// substrate protein, as an HGVS protein change or as an rsID that the
// knowledge maps to one (or both, when they agree).
type Request struct {
	Gene          string `json:"gene"`
	ProteinChange string `json:"protein_change,omitempty"`
	Variant       string `json:"variant,omitempty"`
}

// Classifier classifies missense substitutions of the substrate proteins.
// It is safe for concurrent use.
type Classifier struct {
	kb       *engine.Knowledge
	ck       *Knowledge
	model    *Model
	v        *view
	proteins map[string]*ProteinSequence
	genes    []string
	byGene   map[string][]*ProteinChange
	demos    map[string]*DemoCase
	profiles map[string]*profile
	// profiled are the proteins with a profile that are not substrate
	// proteins (their sequence is the profile's residues).
	profiled map[string]*ProteinSequence
}

// New returns a Classifier over the classifier knowledge ck, reading the
// pharmacogenomic facts it cross-references (alleles, guideline pairs,
// herbs, sources) from kb. Both are required.
func New(kb *engine.Knowledge, ck *Knowledge) (*Classifier, error) {
	if kb == nil || ck == nil {
		return nil, errors.New("classify: the knowledge has no classifier data")
	}
	m, err := NewModel(ck.Matrix)
	if err != nil {
		return nil, fmt.Errorf("classify: %w", err)
	}
	profiles, err := buildProfiles(m, ck.Profiles)
	if err != nil {
		return nil, fmt.Errorf("classify: %w", err)
	}
	c := &Classifier{
		kb: kb, ck: ck, model: m, v: newView(kb, nil), profiles: profiles,
		proteins: map[string]*ProteinSequence{},
		byGene:   map[string][]*ProteinChange{},
		demos:    map[string]*DemoCase{},
	}
	for i := range c.ck.Proteins {
		p := &c.ck.Proteins[i]
		c.proteins[p.Gene] = p
		c.genes = append(c.genes, p.Gene)
	}
	sort.Strings(c.genes)
	for i := range c.ck.Changes {
		ch := &c.ck.Changes[i]
		c.byGene[ch.Gene] = append(c.byGene[ch.Gene], ch)
	}
	c.profiled = profiledProteins(c.ck, c.proteins)
	for i := range c.ck.Substrate.DemoCases {
		d := &c.ck.Substrate.DemoCases[i]
		c.demos[d.ID] = d
	}
	return c, nil
}

// Model returns the conservation model.
func (c *Classifier) Model() *Model { return c.model }

// Knowledge returns the knowledge the classifier reads.
func (c *Classifier) Knowledge() *engine.Knowledge { return c.kb }

// Data returns the classifier knowledge the classifier was built from. It
// must not be modified.
func (c *Classifier) Data() *Knowledge { return c.ck }

// Genes returns the substrate genes, sorted.
func (c *Classifier) Genes() []string { return slices.Clone(c.genes) }

// Protein returns the substrate protein of gene.
func (c *Classifier) Protein(gene string) (*ProteinSequence, bool) {
	p, ok := c.proteins[gene]
	return p, ok
}

// DemoCases returns the demonstration cases in their curated order.
func (c *Classifier) DemoCases() []DemoCase { return slices.Clone(c.ck.Substrate.DemoCases) }

// DemoCase returns the demonstration case id.
func (c *Classifier) DemoCase(id string) (DemoCase, bool) {
	d, ok := c.demos[id]
	if !ok {
		return DemoCase{}, false
	}
	return *d, true
}

// DemoRequest is the classification request of demonstration case d.
func DemoRequest(d DemoCase) Request {
	return Request{Gene: d.Gene, ProteinChange: d.HGVSp, Variant: d.RsID}
}

// VariantInfo describes the classified substitution.
type VariantInfo struct {
	Gene          string
	UniProt       string
	ProteinLength int
	Position      int
	Ref           string
	Alt           string
	HGVSp         string
	Short         string
	// ReferenceVerified is true: the reference residue was checked against
	// the substrate sequence (a mismatch is an error, never re-based).
	ReferenceVerified bool
	// KnownVariants are the variant alleles of the knowledge whose protein
	// change this substitution is.
	KnownVariants []KnownVariant
}

// KnownVariant is a variant allele of the protein-change table.
type KnownVariant struct {
	RsID        string
	Ref         string
	Alt         string
	GRCh38      string
	HGVSc       string
	AlleleLabel string
	Alleles     []string
	Function    string
	InCohort    bool
}

// ESM is the conservation method's section.
type ESM struct {
	Method string
	Conservation
	Alignment     AlignmentStatus
	EntropySource string
	Formula       string
	Constants     ESMConstants
	Notes         []string
}

// AlignmentStatus says whether a homologous-sequence profile was used and
// what it was built from.
type AlignmentStatus struct {
	Available bool
	Reason    string
	// Source names the sequence database of the profile.
	Source string
	// Hits, Sequences and EffectiveSequences describe the protein's
	// profile (ProteinProfile).
	Hits               int
	Sequences          int
	EffectiveSequences float64
}

// ESMConstants are the constants of the formula.
type ESMConstants struct {
	PseudocountWeight      float64 `json:"pseudocount_weight"`
	LowConfidenceNeff      float64 `json:"low_confidence_neff_below"`
	ConservedColumnAtLeast float64 `json:"conserved_column_at_least"`
	DamagingLogOddsAtMost  float64 `json:"damaging_log_odds_at_most"`
	ImpliedLambda          float64 `json:"implied_lambda"`
	NominalLambda          float64 `json:"nominal_lambda"`
}

// Formula is the conservation_score formula.
const Formula = "p = (α·f + β·g)/(α + β) at the variant's position: f = weighted residue frequencies of the homologs (80%-identity weights), " +
	"α = Neff − 1, β = 10, g_a = Σ_b f_b·P(a|b), P(a|b) = p_a·exp(λ·s_ab) from BLOSUM62 (the prior, dominant where Neff is small); " +
	"site_log_odds = ln(p_alt/p_ref); conservation_score = 1/(1 + exp(site_log_odds)) = p_ref/(p_ref + p_alt); " +
	"column_entropy_bits = −Σ p log2 p; column_conservation = 1 − H/log2 20; damaging ⇔ site_log_odds ≤ −2.5; conserved ⇔ column_conservation ≥ 0.5"

// noProfile is the reason no profile is used.
const noProfile = "the knowledge has no homolog profile for this protein: the score is the BLOSUM62 prior alone (low confidence)"

// GraphSection is the graph method's section.
type GraphSection struct {
	Rows              []GraphEdge
	Nodes             []GraphNode
	NodeCount         int
	EdgeCount         int
	GroundingContract string
	Note              string
}

// Result is the answer to one Request.
type Result struct {
	Variant           VariantInfo
	ESM               ESM
	Population        Population
	Graph             GraphSection
	Synthesis         Synthesis
	Tier              int
	TierLabel         string
	RulesFired        []string
	SourceCitations   []Citation
	GroundingContract string
	EngineVersion     string
	KnowledgeVersion  string
	Warnings          []string
}

// invalid returns a validation error for one field.
func invalid(field, format string, args ...any) error {
	return &engine.ValidationError{Fields: []engine.FieldError{{Field: field, Reason: fmt.Sprintf(format, args...)}}}
}

// resolved is a validated request.
type resolved struct {
	protein *ProteinSequence
	sub     Substitution
	known   []*ProteinChange
}

// resolve validates req against the knowledge. Every rejection is an
// *engine.ValidationError naming the field.
func (c *Classifier) resolve(req Request) (resolved, error) {
	var r resolved
	gene := strings.ToUpper(strings.TrimSpace(req.Gene))
	if gene == "" {
		return r, invalid("gene", "is required (one of %s)", strings.Join(c.genes, ", "))
	}
	p, ok := c.proteins[gene]
	if !ok {
		p, ok = c.profiled[gene]
	}
	if !ok {
		return r, invalid("gene", "%q is not a protein of the classifier; substrate genes are %s%s", req.Gene, strings.Join(c.genes, ", "), c.profiledOnlyText())
	}
	r.protein = p
	pc := strings.TrimSpace(req.ProteinChange)
	vr := strings.TrimSpace(req.Variant)
	if pc == "" && vr == "" {
		return r, invalid("protein_change", "protein_change (e.g. p.Ala154Thr or A154T) or variant (an rsID) is required")
	}
	var fromVariant []*ProteinChange
	if vr != "" {
		rs, ok := calling.NormaliseRsID(vr)
		if !ok {
			return r, invalid("variant", "%q is not an rsID (rs<digits>)", req.Variant)
		}
		var rows []*ProteinChange
		for _, ch := range c.byGene[gene] {
			if ch.RsID == rs {
				rows = append(rows, ch)
			}
		}
		if len(rows) == 0 {
			return r, invalid("variant", "%s is not in the knowledge's rsID → protein-change table for %s; give protein_change instead", rs, gene)
		}
		for _, ch := range rows {
			if isMissense(*ch) {
				fromVariant = append(fromVariant, ch)
			}
		}
		if len(fromVariant) == 0 {
			var cons []string
			for _, ch := range rows {
				cons = append(cons, ch.Consequence)
			}
			return r, invalid("variant", "%s is not a missense variant (%s); only missense substitutions can be classified", rs, strings.Join(uniqueSorted(cons), ", "))
		}
		if pc == "" {
			if len(fromVariant) > 1 {
				var alts []string
				for _, ch := range fromVariant {
					alts = append(alts, ch.HGVSp+" ("+ch.Ref+">"+ch.Alt+")")
				}
				return r, invalid("variant", "%s has %d missense alleles in the knowledge (%s); give protein_change to choose one", rs, len(fromVariant), strings.Join(alts, ", "))
			}
			pc = fromVariant[0].HGVSp
		}
	}
	sub, err := ParseProteinChange(pc)
	if err != nil {
		return r, invalid("protein_change", "%s", err.Error())
	}
	if sub.Pos > p.Length || sub.Pos > len(p.Sequence) {
		return r, invalid("protein_change", "position %d is beyond the end of %s (%s, %d residues)", sub.Pos, gene, p.UniProt, p.Length)
	}
	if have := p.Sequence[sub.Pos-1]; have != sub.Ref {
		return r, invalid("protein_change", "reference residue %s%d does not match the %s sequence (%s, which has %s at %d); the reference is never re-based",
			threeLetter[sub.Ref], sub.Pos, gene, p.UniProt, threeLetter[have], sub.Pos)
	}
	r.sub = sub
	hgvs := sub.HGVS()
	if vr != "" {
		for _, ch := range fromVariant {
			if ch.HGVSp == hgvs {
				r.known = append(r.known, ch)
			}
		}
		if len(r.known) == 0 {
			return r, invalid("variant", "%s does not encode %s in the knowledge (it encodes %s)", fromVariant[0].RsID, hgvs, hgvsList(fromVariant))
		}
		return r, nil
	}
	for _, ch := range c.byGene[gene] {
		if ch.HGVSp == hgvs && isMissense(*ch) {
			r.known = append(r.known, ch)
		}
	}
	return r, nil
}

func hgvsList(cs []*ProteinChange) string {
	var s []string
	for _, c := range cs {
		s = append(s, c.HGVSp)
	}
	return strings.Join(s, ", ")
}

// Classify classifies one substitution. Invalid input is an
// *engine.ValidationError naming the field.
func (c *Classifier) Classify(req Request) (Result, error) {
	r, err := c.resolve(req)
	if err != nil {
		return Result{}, err
	}
	gene := r.protein.Gene
	cons, err := c.conservation(gene, r.sub.Pos, r.sub.Ref, r.sub.Alt)
	if err != nil {
		return Result{}, fmt.Errorf("classify: %w", err) // cannot happen: the parser accepts standard residues only and profiles are checked at load
	}
	res := Result{
		GroundingContract: engine.GroundingContract,
		EngineVersion:     EngineVersion,
		KnowledgeVersion:  c.kb.Version.Label,
		Warnings:          []string{},
		RulesFired:        []string{},
	}
	res.Variant = VariantInfo{
		Gene: gene, UniProt: r.protein.UniProt, ProteinLength: r.protein.Length, Position: r.sub.Pos,
		Ref: string(r.sub.Ref), Alt: string(r.sub.Alt), HGVSp: r.sub.HGVS(), Short: r.sub.Short(),
		ReferenceVerified: true, KnownVariants: []KnownVariant{},
	}
	if c.proteins[gene] == nil {
		res.Warnings = append(res.Warnings, gene+" is not a curated substrate protein (no cohort variant is on it): it is classified from its homolog profile, population and graph evidence only; "+r.protein.Provenance)
	}
	if r.sub.Pos == 1 {
		res.Warnings = append(res.Warnings, "position 1 is the initiator methionine: a change there removes the start codon (start-loss), which conservation_score does not model")
	}

	// esm
	res.ESM = ESM{
		Method:        "per-position residue profile of homologous Swiss-Prot sequences with a BLOSUM62 prior; site-independent log-odds and column entropy (no language model)",
		Conservation:  cons,
		Alignment:     AlignmentStatus{Available: false, Reason: noProfile},
		EntropySource: "column_profile",
		Formula:       Formula,
		Constants:     c.esmConstants(),
	}
	if pr, ok := c.profiles[gene]; ok {
		res.ESM.Alignment = AlignmentStatus{
			Available: true,
			Reason: fmt.Sprintf("profile of %s from %d homologous sequences (effective %.1f) found by jackhmmer in %s; built by knowledge/internal/profilegen",
				gene, pr.meta.Sequences, pr.meta.EffectiveSequences, "UniProtKB/Swiss-Prot 2014_01"),
			Source:             c.ck.Profiles.Provenance.Database,
			Hits:               pr.meta.Hits,
			Sequences:          pr.meta.Sequences,
			EffectiveSequences: pr.meta.EffectiveSequences,
		}
	} else {
		res.ESM.EntropySource = "blosum62_prior"
	}
	if cons.Confidence == ConfidenceLow {
		res.Warnings = append(res.Warnings, "low-confidence conservation: "+cons.ConfidenceReason)
	}

	// Known variant alleles: function and population.
	cohort := map[string]bool{}
	for _, cv := range c.ck.Substrate.Cohort {
		cohort[cv.RsID+":"+cv.Ref+">"+cv.Alt] = true
	}
	var funcs []knownAllele
	var recs []PopulationRecord
	g := newGraphBuilder()
	for _, ch := range r.known {
		af := c.v.soleFunction(ch.Gene, ch.RsID, ch.Ref, ch.Alt)
		res.Variant.KnownVariants = append(res.Variant.KnownVariants, KnownVariant{
			RsID: ch.RsID, Ref: ch.Ref, Alt: ch.Alt, GRCh38: ch.GRCh38, HGVSc: ch.HGVSc, AlleleLabel: ch.AlleleLabel,
			Alleles: nonNil(af.Alleles), Function: af.Function, InCohort: cohort[variantKey(*ch)],
		})
		funcs = append(funcs, knownAllele{rsid: ch.RsID, ref: ch.Ref, alt: ch.Alt, alleles: af.Alleles, function: af.Function})
		recs = append(recs, c.v.population(*ch))
		c.v.addVariant(g, *ch)
	}
	res.Population = summarise(recs)

	// graph
	c.v.addGene(g, gene)
	kg := g.graph()
	res.Graph = GraphSection{
		Rows: kg.Edges, Nodes: kg.Nodes, NodeCount: len(kg.Nodes), EdgeCount: len(kg.Edges),
		GroundingContract: engine.GroundingContract,
		Note:              "rows touching the variant (pharmacogenomic), its gene (guideline: every CPIC gene–drug pair) and the gene's drugs (natural-product); the response names no entity outside these rows",
	}
	if len(r.known) == 0 {
		res.Graph.Note += "; the substitution is not a known variant of the knowledge, so no pharmacogenomic row touches it"
	}

	// synthesis
	res.Synthesis = synthesise(synthesisInput{gene: gene, functions: funcs, levelA: c.v.hasLevelA(gene), cons: cons, pop: res.Population})
	res.Tier, res.TierLabel = res.Synthesis.Tier, res.Synthesis.TierLabel
	for _, rr := range res.Synthesis.Rules {
		if rr.Fired {
			res.RulesFired = append(res.RulesFired, rr.ID)
		}
	}
	res.SourceCitations = c.citations(res)
	return res, nil
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// citations returns one citation per supported field of res.
func (c *Classifier) citations(res Result) []Citation {
	out := []Citation{}
	cite := func(target CitationTarget, source, level string, ids []string) {
		url := c.sourceURL(ids)
		if url == "" {
			return
		}
		if source == "" {
			source = c.sourceText(ids)
		}
		out = append(out, Citation{Target: target, Source: source, EvidenceLevel: level, URL: url})
	}
	matrix := c.ck.Matrix.SourceIDs
	cite(CitationTarget{Kind: CitesMatrix}, "", "", matrix)
	for _, id := range matrix {
		if s, ok := c.v.sources[id]; ok && s.PMID != "" {
			cite(CitationTarget{Kind: CitesResidueEntropy}, s.Title, "", []string{id})
		}
	}
	if res.ESM.Profile && c.ck.Profiles != nil {
		cite(CitationTarget{Kind: CitesSiteLogOdds}, "", "", c.ck.Profiles.Provenance.SourceIDs)
	}
	if p, ok := c.proteins[res.Variant.Gene]; ok {
		cite(CitationTarget{Kind: CitesReferenceVerified}, "", "", p.SourceIDs)
	}
	for i, kv := range res.Variant.KnownVariants {
		for _, ch := range c.byGene[res.Variant.Gene] {
			if ch.RsID == kv.RsID && ch.Ref == kv.Ref && ch.Alt == kv.Alt {
				cite(CitationTarget{Kind: CitesKnownVariant, Index: i}, "", "", ch.SourceIDs)
			}
		}
	}
	for i, r := range res.Population.Records {
		if r.AFIndia != nil {
			cite(CitationTarget{Kind: CitesFrequencyIndia, Index: i}, r.AFIndiaBasis+": "+c.sourceText(r.AFIndiaSourceIDs), "", r.AFIndiaSourceIDs)
		}
		if r.AFGlobal != nil {
			cite(CitationTarget{Kind: CitesFrequencyGlobal, Index: i}, r.AFGlobalBasis+": "+c.sourceText(r.AFGlobalSourceIDs), "", r.AFGlobalSourceIDs)
		}
		if r.ClinVarSignificance != "" {
			cite(CitationTarget{Kind: CitesClinVar, Index: i}, "", "", r.ClinVarSourceIDs)
		}
	}
	for i, e := range res.Graph.Rows {
		level := ""
		if e.Layer == LayerGuideline {
			level = guidelineEvidence(e.Attributes["evidence_level"])
		}
		cite(CitationTarget{Kind: CitesGraphRow, Index: i}, "", level, e.SourceIDs)
	}
	return out
}

// guidelineEvidence returns the evidence level when it is one the
// interface allows on citations (1A, 1B, 2A, 2B).
func guidelineEvidence(l string) string {
	switch l {
	case "1A", "1B", "2A", "2B":
		return l
	}
	return ""
}

// sourceText names up to two sources of a row.
func (c *Classifier) sourceText(ids []string) string {
	var parts []string
	for _, id := range ids {
		if s, ok := c.v.sources[id]; ok {
			parts = append(parts, s.Title)
		}
		if len(parts) == 2 {
			break
		}
	}
	if len(parts) == 0 {
		return "knowledge row (no source title)"
	}
	return strings.Join(parts, " | ")
}

// sourceURL returns the first URL or PMID among the sources, else the
// first source's own reference text (a literature identifier may stand in
// a citation's url).
func (c *Classifier) sourceURL(ids []string) string {
	for _, id := range ids {
		if s, ok := c.v.sources[id]; ok {
			if s.URL != "" {
				return s.URL
			}
			if s.PMID != "" {
				return "PMID:" + s.PMID
			}
		}
	}
	for _, id := range ids {
		if s, ok := c.v.sources[id]; ok && s.Title != "" {
			return s.Title
		}
	}
	return ""
}

// SubstrateSize is curated_substrate_size of the metadata document,
// counted from the knowledge.
type SubstrateSize struct {
	CohortVariants   int `json:"cohort_variants"`
	ProteinSequences int `json:"protein_sequences"`
	GraphNodes       int `json:"pgx_graph_nodes"`
	GraphEdges       int `json:"pgx_graph_edges"`
}

// Size counts the curated substrate.
func (c *Classifier) Size() SubstrateSize {
	return SubstrateSize{
		CohortVariants:   len(c.ck.Substrate.Cohort),
		ProteinSequences: len(c.ck.Proteins),
		GraphNodes:       len(c.ck.Substrate.Graph.Nodes),
		GraphEdges:       len(c.ck.Substrate.Graph.Edges),
	}
}

// Substrate returns the curated substrate.
func (c *Classifier) Substrate() Substrate { return c.ck.Substrate }

// Proteins returns the substrate proteins.
func (c *Classifier) Proteins() []ProteinSequence { return slices.Clone(c.ck.Proteins) }

// Citations returns the publication citations.
func (c *Classifier) Citations() []PublicationCitation {
	return slices.Clone(c.ck.Citations)
}
