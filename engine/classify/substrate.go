package classify

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// DemoCaseCount is the number of demonstration cases (interface spec §2.8).
const DemoCaseCount = 4

// The curation rules, stated as the substrate file states them.
const (
	ProteinRule = "A protein sequence of the data pack is a substrate protein when at least one missense " +
		"change of the protein-change table on it defines, on its own, a CPIC allele whose function is " +
		"\"No function\" or \"Decreased function\" (clinical missense content ≥ 1)."
	CohortRule = "Every missense change (rsID and alternate allele) of the protein-change table on a substrate " +
		"protein that defines, on its own, a CPIC allele with a definite function (No, Decreased, Normal or " +
		"Increased function; \"Uncertain\" and \"Unknown\" excluded), ordered by gene, position and alternate residue."
	DemoRule = "For each substrate protein, its cohort variant with the highest Indian allele frequency " +
		"(af_india of kind \"allele\"; carrier frequencies are not comparable and are skipped; ties: lower " +
		"position); the four such variants with the highest af_india, in descending order."
	GraphRule = "Three layers: (1) pharmacogenomic — each cohort variant to the CPIC function class of the " +
		"allele it defines alone (the row names gene and allele); (2) guideline — each substrate gene to each " +
		"of its CPIC gene–drug pairs, every CPIC level (the pair node names drug, level, evidence and " +
		"guideline); (3) natural-product — each herb of the knowledge's herb–drug interactions to every pair " +
		"whose drug it interacts with. Nodes are unique by type and key; every row names its sources."
	CitationRule = "(a) For each CPIC guideline named by a pair row of the graph, its most recent publication " +
		"in the knowledge (highest PubMed id among the pair rows' PMIDs); (b) each publication with a PubMed " +
		"id among the sources of the substitution matrix; (c) each distinct publication with a PubMed id or a " +
		"DOI among the sources of the cohort variants' tracked frequency rows."
)

// SelectionInput is what the curation rules read.
type SelectionInput struct {
	// Knowledge holds the genes, rsIDs, tracked variants, drugs and herbs;
	// its Sources need not be complete (see Sources).
	Knowledge *engine.Knowledge
	// Sources are the sources by id (the generator's, before sources.json
	// is written).
	Sources map[string]engine.Source
	// Matrix is the substitution matrix (its sources are cited).
	Matrix SubstitutionMatrix
	// Sequences are every protein sequence of the data pack.
	Sequences []ProteinSequence
	// Changes is the whole protein-change table.
	Changes []ProteinChange
}

// Selection is the curated substrate.
type Selection struct {
	Proteins  []ProteinSequence
	Substrate Substrate
	Citations []PublicationCitation
}

// Select applies the curation rules.
func Select(in SelectionInput) (Selection, error) {
	if in.Knowledge == nil {
		return Selection{}, errors.New("classify: no knowledge")
	}
	v := newView(in.Knowledge, in.Sources)
	var sel Selection
	sub := &sel.Substrate
	sub.ProteinRule, sub.CohortRule, sub.DemoRule, sub.GraphRule, sub.CitationRule =
		ProteinRule, CohortRule, DemoRule, GraphRule, CitationRule

	// Proteins.
	selected := map[string]bool{}
	for _, p := range in.Sequences {
		ps := ProteinSelection{Gene: p.Gene, UniProt: p.UniProt, ClinicalMissense: []string{}}
		for _, c := range in.Changes {
			if c.Gene != p.Gene || !isMissense(c) {
				continue
			}
			ps.MissenseChanges++
			if af := v.soleFunction(c.Gene, c.RsID, c.Ref, c.Alt); nonNormal(af.Function) {
				ps.ClinicalMissense = append(ps.ClinicalMissense, c.Change)
			}
		}
		ps.Selected = len(ps.ClinicalMissense) > 0
		if ps.Selected {
			selected[p.Gene] = true
			sel.Proteins = append(sel.Proteins, p)
		}
		sub.ProteinSelection = append(sub.ProteinSelection, ps)
	}
	sort.Slice(sub.ProteinSelection, func(i, j int) bool { return sub.ProteinSelection[i].Gene < sub.ProteinSelection[j].Gene })
	sort.Slice(sel.Proteins, func(i, j int) bool { return sel.Proteins[i].Gene < sel.Proteins[j].Gene })

	// Cohort.
	var cohortChanges []ProteinChange
	for _, c := range in.Changes {
		if !selected[c.Gene] || !isMissense(c) {
			continue
		}
		af := v.soleFunction(c.Gene, c.RsID, c.Ref, c.Alt)
		if !knownFunction(af.Function) {
			continue
		}
		s, _ := ParseProteinChange(c.HGVSp)
		cv := CohortVariant{
			ID: strings.ToLower(c.Gene + "-" + c.Change), RsID: c.RsID, Ref: c.Ref, Alt: c.Alt, Gene: c.Gene,
			Change: c.Change, HGVSp: s.HGVS(), Allele: strings.Join(af.Alleles, ", "), Function: af.Function,
			SourceIDs: uniqueSorted(append(slices.Clone(c.SourceIDs), af.SourceIDs...)),
		}
		if t := v.frequencies(c); t != nil && t.AFIndia != nil && t.AFIndiaKind == "allele" {
			f := *t.AFIndia
			cv.AFIndia = &f
			cv.SourceIDs = uniqueSorted(append(cv.SourceIDs, t.AFIndiaSourceIDs...))
		}
		sub.Cohort = append(sub.Cohort, cv)
		cohortChanges = append(cohortChanges, c)
	}
	sortCohort(sub.Cohort)

	// Demonstration cases.
	best := map[string]CohortVariant{}
	for _, cv := range sub.Cohort {
		if cv.AFIndia == nil {
			continue
		}
		b, ok := best[cv.Gene]
		if !ok || *cv.AFIndia > *b.AFIndia {
			best[cv.Gene] = cv
		}
	}
	var tops []CohortVariant
	for _, cv := range best {
		tops = append(tops, cv)
	}
	sort.Slice(tops, func(i, j int) bool {
		if *tops[i].AFIndia != *tops[j].AFIndia {
			return *tops[i].AFIndia > *tops[j].AFIndia
		}
		return tops[i].Gene < tops[j].Gene
	})
	if len(tops) < DemoCaseCount {
		return Selection{}, fmt.Errorf("classify: the demo rule finds %d cases, want %d", len(tops), DemoCaseCount)
	}
	for _, cv := range tops[:DemoCaseCount] {
		sub.DemoCases = append(sub.DemoCases, DemoCase{
			ID: cv.ID, Gene: cv.Gene, HGVSp: cv.HGVSp, RsID: cv.RsID, Allele: cv.Allele, Function: cv.Function,
			Rationale: fmt.Sprintf("%s %s (%s %s>%s; %s, CPIC %s): the most frequent cohort variant of %s in the Indian data (af_india %s)",
				cv.Gene, cv.HGVSp, cv.RsID, cv.Ref, cv.Alt, cv.Allele, strings.ToLower(cv.Function), cv.Gene,
				strconv.FormatFloat(*cv.AFIndia, 'f', -1, 64)),
		})
	}

	// Graph.
	genes := make([]string, 0, len(sel.Proteins))
	for _, p := range sel.Proteins {
		genes = append(genes, p.Gene)
	}
	sub.Graph = v.buildGraph(cohortChanges, genes)

	// Citations.
	cites, err := v.citations(in, sub, cohortChanges)
	if err != nil {
		return Selection{}, err
	}
	sel.Citations = cites
	return sel, nil
}

// isMissense reports whether a protein-change row is a missense
// substitution the parser reads.
func isMissense(c ProteinChange) bool {
	if c.Consequence != ConsequenceMissense {
		return false
	}
	_, err := ParseProteinChange(c.HGVSp)
	return err == nil
}

func sortCohort(cs []CohortVariant) {
	pos := func(c CohortVariant) int {
		s, _ := ParseProteinChange(c.HGVSp)
		return s.Pos
	}
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.Gene != b.Gene {
			return a.Gene < b.Gene
		}
		if pos(a) != pos(b) {
			return pos(a) < pos(b)
		}
		return a.Change < b.Change
	})
}

// citations applies the citation rule.
func (v *view) citations(in SelectionInput, sub *Substrate, cohort []ProteinChange) ([]PublicationCitation, error) {
	var out []PublicationCitation
	seen := map[string]bool{}
	add := func(c PublicationCitation) {
		if !seen[c.ID] {
			seen[c.ID] = true
			out = append(out, c)
		}
	}
	// (a) Most recent publication of each guideline of the graph.
	latest := map[string]int{}
	for _, e := range sub.Graph.Edges {
		if e.Layer != LayerGuideline || e.Attributes["guideline"] == "" {
			continue
		}
		gene := strings.TrimPrefix(e.From, NodeGene+":")
		drug := e.Attributes["drug"]
		for _, gp := range v.pairs[gene] {
			if gp.drug != drug {
				continue
			}
			for _, pm := range gp.pair.PMIDs {
				n, err := strconv.Atoi(pm)
				if err != nil {
					return nil, fmt.Errorf("classify: pair %s–%s has a bad PMID %q", gene, drug, pm)
				}
				latest[e.Attributes["guideline"]] = max(latest[e.Attributes["guideline"]], n)
			}
		}
	}
	guidelines := make([]string, 0, len(latest))
	for g := range latest {
		guidelines = append(guidelines, g)
	}
	sort.Strings(guidelines)
	for _, g := range guidelines {
		pm := strconv.Itoa(latest[g])
		add(PublicationCitation{
			ID: "pmid-" + pm, Citation: "CPIC guideline publication: " + g + " (PubMed " + pm + ")",
			PMID: pm, URL: pubmedURL(pm), Role: "guideline of the knowledge graph: " + g,
			SourceIDs: []string{"pmid-" + pm},
		})
	}
	// (b) The substitution matrix's publication.
	for _, id := range in.Matrix.SourceIDs {
		s, ok := v.sources[id]
		if !ok {
			return nil, fmt.Errorf("classify: matrix source %q unknown", id)
		}
		if s.PMID == "" {
			continue
		}
		add(PublicationCitation{
			ID: "pmid-" + s.PMID, Citation: s.Title, PMID: s.PMID, URL: pubmedURL(s.PMID),
			Role: "conservation method (esm): the " + in.Matrix.Name + " substitution matrix", SourceIDs: []string{id},
		})
	}
	// (c) Publications of the cohort's frequency figures.
	type pub struct {
		c    PublicationCitation
		rsid []string
	}
	pubs := map[string]*pub{}
	var order []string
	for _, c := range cohort {
		t := v.frequencies(c)
		if t == nil {
			continue
		}
		for _, id := range t.SourceIDs {
			s, ok := v.sources[id]
			if !ok {
				return nil, fmt.Errorf("classify: tracked variant %s cites unknown source %q", t.RsID, id)
			}
			key, pc := "", PublicationCitation{Citation: s.Title, SourceIDs: []string{id}}
			switch {
			case s.PMID != "":
				key, pc.ID, pc.PMID, pc.URL = "pmid-"+s.PMID, "pmid-"+s.PMID, s.PMID, pubmedURL(s.PMID)
			case strings.HasPrefix(s.URL, "https://doi.org/"):
				doi := strings.TrimPrefix(s.URL, "https://doi.org/")
				key, pc.ID, pc.DOI, pc.URL = "doi-"+doi, "doi-"+doi, doi, s.URL
			default:
				continue
			}
			p, ok := pubs[key]
			if !ok {
				p = &pub{c: pc}
				pubs[key] = p
				order = append(order, key)
			} else {
				p.c.SourceIDs = uniqueSorted(append(p.c.SourceIDs, id))
			}
			if !slices.Contains(p.rsid, c.RsID) {
				p.rsid = append(p.rsid, c.RsID)
			}
		}
	}
	sort.Strings(order)
	for _, key := range order {
		p := pubs[key]
		sort.Strings(p.rsid)
		p.c.Role = "population frequency of cohort variant(s) " + strings.Join(p.rsid, ", ")
		add(p.c)
	}
	return out, nil
}

func pubmedURL(pmid string) string { return "https://pubmed.ncbi.nlm.nih.gov/" + pmid + "/" }
