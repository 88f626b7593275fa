package classify

import (
	"sort"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// Relations of the knowledge-graph edges.
const (
	RelDefinesAllele = "defines_allele_with_function"
	RelHasPair       = "has_cpic_gene_drug_pair"
	RelInteracts     = "interacts_with_drug_of"
)

// The knowledge graph has three layers, one per kind of source:
//
//   - pharmacogenomic: variant —defines_allele_with_function→ allele
//     function class. One row per variant (rsID and alternate allele) that
//     alone defines a CPIC allele with a function; the row names the gene
//     and the allele(s). Sources: the PharmCAT allele definition and the
//     CPIC allele-function table.
//   - guideline: gene —has_cpic_gene_drug_pair→ gene–drug pair. One row per
//     CPIC gene–drug pair of the gene (every CPIC level); the pair node
//     carries the drug, level, ClinPGx evidence level and guideline. Sources:
//     the CPIC pair table and the guideline publications.
//   - natural-product: herb —interacts_with_drug_of→ gene–drug pair. One row
//     per herb of the knowledge's herb–drug interactions and pair whose drug
//     the herb interacts with. Sources: the herb row's sources.
//
// Nodes are identified by type and key, so an entity appears once however
// many rows name it.

// graphBuilder collects nodes and edges without duplicates.
type graphBuilder struct {
	nodes map[string]GraphNode
	edges map[string]GraphEdge
}

func newGraphBuilder() *graphBuilder {
	return &graphBuilder{nodes: map[string]GraphNode{}, edges: map[string]GraphEdge{}}
}

func (g *graphBuilder) node(typ, key, label string) string {
	id := typ + ":" + key
	if _, ok := g.nodes[id]; !ok {
		g.nodes[id] = GraphNode{ID: id, Type: typ, Label: label}
	}
	return id
}

func (g *graphBuilder) edge(e GraphEdge) {
	key := e.From + "\x00" + e.Relation + "\x00" + e.To
	if prev, ok := g.edges[key]; ok {
		prev.SourceIDs = uniqueSorted(append(prev.SourceIDs, e.SourceIDs...))
		g.edges[key] = prev
		return
	}
	e.SourceIDs = uniqueSorted(e.SourceIDs)
	g.edges[key] = e
}

// graph returns the nodes sorted by id and the edges sorted by layer
// (pharmacogenomic, guideline, natural-product), then from, then to.
func (g *graphBuilder) graph() KnowledgeGraph {
	out := KnowledgeGraph{Nodes: []GraphNode{}, Edges: []GraphEdge{}}
	for _, n := range g.nodes {
		out.Nodes = append(out.Nodes, n)
	}
	sort.Slice(out.Nodes, func(i, j int) bool { return out.Nodes[i].ID < out.Nodes[j].ID })
	for _, e := range g.edges {
		out.Edges = append(out.Edges, e)
	}
	rank := map[string]int{LayerPharmacogenomic: 0, LayerGuideline: 1, LayerNaturalProduct: 2}
	sort.Slice(out.Edges, func(i, j int) bool {
		a, b := out.Edges[i], out.Edges[j]
		if rank[a.Layer] != rank[b.Layer] {
			return rank[a.Layer] < rank[b.Layer]
		}
		if a.From != b.From {
			return a.From < b.From
		}
		return a.To < b.To
	})
	return out
}

// variantKey is the node key of a variant allele: "rs1800460:C>T".
func variantKey(c ProteinChange) string { return c.RsID + ":" + c.Ref + ">" + c.Alt }

// variantLabel is the human label of a variant node.
func variantLabel(c ProteinChange) string {
	l := c.Gene + " " + c.RsID + " " + c.Ref + ">" + c.Alt
	if c.HGVSp != "" {
		l += " (" + c.HGVSp + ")"
	}
	return l
}

// addVariant adds the pharmacogenomic row of one known variant, when it
// defines an allele with a function alone. It returns whether a row was
// added.
func (v *view) addVariant(g *graphBuilder, c ProteinChange) bool {
	af := v.soleFunction(c.Gene, c.RsID, c.Ref, c.Alt)
	if af.Function == "" {
		return false
	}
	from := g.node(NodeVariant, variantKey(c), variantLabel(c))
	to := g.node(NodeAlleleFunction, af.Function, af.Function)
	g.edge(GraphEdge{
		From: from, Relation: RelDefinesAllele, To: to, Layer: LayerPharmacogenomic,
		Attributes: map[string]string{"gene": c.Gene, "allele": strings.Join(af.Alleles, ", "), "function": af.Function},
		SourceIDs:  af.SourceIDs,
	})
	return true
}

// pairKey is the node key of a gene–drug pair: "TPMT:azathioprine".
func pairKey(gene, drug string) string { return gene + ":" + drug }

// addGene adds the guideline rows of gene and the natural-product rows of
// its drugs. It returns the pair node ids, by drug.
func (v *view) addGene(g *graphBuilder, gene string) {
	from := g.node(NodeGene, gene, gene)
	for _, gp := range v.pairs[gene] {
		p := gp.pair
		label := gene + "–" + gp.drug + " (CPIC level " + p.CPICLevel + ")"
		to := g.node(NodeGeneDrugPair, pairKey(gene, gp.drug), label)
		attrs := map[string]string{"drug": gp.drug, "cpic_level": p.CPICLevel}
		if p.LevelStatus != "" {
			attrs["level_status"] = p.LevelStatus
		}
		if p.EvidenceLevel != "" {
			attrs["evidence_level"] = p.EvidenceLevel
		}
		if p.GuidelineName != "" {
			attrs["guideline"] = p.GuidelineName
		}
		if p.GuidelineURL != "" {
			attrs["guideline_url"] = p.GuidelineURL
		}
		g.edge(GraphEdge{From: from, Relation: RelHasPair, To: to, Layer: LayerGuideline,
			Attributes: attrs, SourceIDs: p.SourceIDs})
		for _, h := range v.herbs[gp.drug] {
			hn := g.node(NodeHerb, h.Herb, h.Herb)
			attrs := map[string]string{"drug": gp.drug}
			for k, val := range map[string]string{"effect": h.Effect, "severity": h.Severity, "evidence": h.Evidence, "mechanism": h.Mechanism} {
				if val != "" {
					attrs[k] = val
				}
			}
			g.edge(GraphEdge{From: hn, Relation: RelInteracts, To: to, Layer: LayerNaturalProduct,
				Attributes: attrs, SourceIDs: h.SourceIDs})
		}
	}
}

// BuildGraph returns the knowledge graph of a set of variants and genes:
// the pharmacogenomic row of each variant (when it defines an allele with a
// function alone), and the guideline and natural-product rows of each gene.
func BuildGraph(kb *engine.Knowledge, variants []ProteinChange, genes []string) KnowledgeGraph {
	return newView(kb, nil).buildGraph(variants, genes)
}

func (v *view) buildGraph(variants []ProteinChange, genes []string) KnowledgeGraph {
	g := newGraphBuilder()
	for _, c := range variants {
		v.addVariant(g, c)
	}
	for _, gene := range genes {
		v.addGene(g, gene)
	}
	return g.graph()
}
