// Package medlist summarises a medication list: one patient's check
// results, one per drug, ordered by severity, with the genes whose
// testing would change advice and the genes that two or more of the drugs
// have actionable guidance for. It is pure: the engine root and the
// standard library only; the wire form belongs to the REST surface
// (pgxapi, POST /pgx/batch).
package medlist

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// Summary summarises the results of a medication list.
type Summary struct {
	// Confidence is the lowest confidence of the results.
	Confidence string
	// OverallSeverity is the highest severity of any drug.
	OverallSeverity engine.Severity
	// Drugs lists every drug, most severe first, then by sensitivity
	// tier, then in the order listed.
	Drugs []Drug
	// GenesToTest are the genes of the genotype-unknown alerts that
	// recommend a test: testing them would change the advice for the
	// drugs named. Most severe first, then by the number of drugs, then
	// by gene.
	GenesToTest []GeneToTest
	// SharedGenes are the genes two or more listed (covered) drugs both
	// have actionable guidance for, by gene.
	SharedGenes []SharedGene
	// NotCovered are the listed names the knowledge does not cover, in
	// the order listed, each once.
	NotCovered []string
}

// Drug is one drug of the severity ordering.
type Drug struct {
	// Index is the drug's position in the list.
	Index           int
	Drug            string
	DrugNormalised  string
	DrugRecognised  bool
	OverallSeverity engine.Severity
	Sensitivity     string
	// Genes are the genes of the drug's alerts, in alert order.
	Genes []string
	// Action is the action of the drug's first (most severe) alert.
	Action string
}

// GeneToTest is a gene whose result would change advice.
type GeneToTest struct {
	Gene string
	// Drugs are the normalised names of the drugs with a genotype-unknown
	// alert for the gene.
	Drugs []string
	// HighestSeverity is the most severe of those alerts.
	HighestSeverity engine.Severity
}

// SharedGene says that listed drugs share an actionable gene: one result
// for that gene applies to all of them. It is about shared guidance, not a
// drug–drug interaction check.
type SharedGene struct {
	Gene  string
	Drugs []string
	// PatientGenotype is the patient's call for the gene, when the input
	// gave one.
	PatientGenotype *engine.GenotypeCall
	// Note says so in a sentence.
	Note       string
	Guidelines []DrugGuideline
}

// DrugGuideline names the guideline behind one drug's actionable
// recommendations for a gene.
type DrugGuideline struct {
	Drug string
	Guidance
	// EvidenceLevel is the ClinPGx level of the drug's CPIC pair with
	// the gene, when there is one.
	EvidenceLevel string
}

// Guidance is one drug's actionable guidance for one gene: the guideline
// of its first actionable recommendation keyed by the gene and the
// sources of all of them (sorted).
type Guidance struct {
	Source, Name, URL string
	SourceIDs         []string
}

// severityOf is the typed severity of a severity's wire name.
//

var confidenceRank = map[string]int{"low": 0, "medium": 1, "high": 2}

var sensitivityRank = map[string]int{"none": 0, "moderate": 1, "high": 2}

// Summarise summarises results, the check results of one patient's
// medication list (one per drug, in the order listed), against kb.
func Summarise(kb *engine.Knowledge, results []engine.Result) Summary {
	sum := Summary{Confidence: "high", OverallSeverity: engine.SeverityNone, Drugs: make([]Drug, 0, len(results))}
	tests := map[string]*GeneToTest{}
	var testOrder []string
	for i := range results {
		r := &results[i]
		if confidenceRank[r.Confidence] < confidenceRank[sum.Confidence] {
			sum.Confidence = r.Confidence
		}
		item := Drug{Index: i, Drug: r.Drug, DrugNormalised: r.DrugNormalised, DrugRecognised: r.DrugRecognised,
			OverallSeverity: r.OverallSeverity, Sensitivity: r.Sensitivity}
		sum.OverallSeverity = max(sum.OverallSeverity, item.OverallSeverity)
		for j := range r.Alerts {
			a := &r.Alerts[j]
			if j == 0 {
				item.Action = a.Action
			}
			if a.Gene != "" && !slices.Contains(item.Genes, a.Gene) {
				item.Genes = append(item.Genes, a.Gene)
			}
			if a.Category != engine.CategoryUnknown || !a.TestRecommended || a.Gene == "" {
				continue
			}
			t, ok := tests[a.Gene]
			if !ok {
				t = &GeneToTest{Gene: a.Gene, HighestSeverity: a.Severity}
				tests[a.Gene] = t
				testOrder = append(testOrder, a.Gene)
			}
			if !slices.Contains(t.Drugs, r.DrugNormalised) {
				t.Drugs = append(t.Drugs, r.DrugNormalised)
			}
			t.HighestSeverity = max(t.HighestSeverity, a.Severity)
		}
		if !r.DrugRecognised && !slices.Contains(sum.NotCovered, r.Drug) {
			sum.NotCovered = append(sum.NotCovered, r.Drug)
		}
		sum.Drugs = append(sum.Drugs, item)
	}
	sort.SliceStable(sum.Drugs, func(i, j int) bool {
		a, b := sum.Drugs[i], sum.Drugs[j]
		if a.OverallSeverity != b.OverallSeverity {
			return a.OverallSeverity > b.OverallSeverity
		}
		return sensitivityRank[a.Sensitivity] > sensitivityRank[b.Sensitivity]
	})
	for _, g := range testOrder {
		sum.GenesToTest = append(sum.GenesToTest, *tests[g])
	}
	sort.SliceStable(sum.GenesToTest, func(i, j int) bool {
		a, b := sum.GenesToTest[i], sum.GenesToTest[j]
		if a.HighestSeverity != b.HighestSeverity {
			return a.HighestSeverity > b.HighestSeverity
		}
		if len(a.Drugs) != len(b.Drugs) {
			return len(a.Drugs) > len(b.Drugs)
		}
		return a.Gene < b.Gene
	})
	sum.SharedGenes = sharedGenes(kb, results)
	return sum
}

// ActionableGenes returns, for a covered drug, the genes that key at
// least one of its recommendations with actionability "yes" or
// "conditional" (a phenotype of the gene changes the prescription), with
// the guideline of those rows.
func ActionableGenes(kb *engine.Knowledge, drug string) map[string]Guidance {
	byGene := map[string]*Guidance{}
	for _, rec := range kb.RecommendationsFor(drug) {
		if rec.Actionability != "yes" && rec.Actionability != "conditional" {
			continue
		}
		for _, g := range rec.Genes {
			ag, ok := byGene[g]
			if !ok {
				ag = &Guidance{Source: rec.Source, Name: rec.GuidelineName, URL: rec.GuidelineURL}
				byGene[g] = ag
			}
			for _, id := range rec.SourceIDs {
				if !slices.Contains(ag.SourceIDs, id) {
					ag.SourceIDs = append(ag.SourceIDs, id)
				}
			}
		}
	}
	out := make(map[string]Guidance, len(byGene))
	for g, ag := range byGene {
		sort.Strings(ag.SourceIDs)
		out[g] = *ag
	}
	return out
}

// sharedGenes finds the genes for which two or more of the listed
// (covered) drugs have actionable guidance.
func sharedGenes(kb *engine.Knowledge, results []engine.Result) []SharedGene {
	type member struct {
		drug string
		ag   Guidance
	}
	byGene := map[string][]member{}
	var geneOrder []string
	listed := map[string]bool{}
	for _, r := range results {
		if !r.DrugRecognised || listed[r.DrugNormalised] {
			continue
		}
		listed[r.DrugNormalised] = true
		ags := ActionableGenes(kb, r.DrugNormalised)
		genes := make([]string, 0, len(ags))
		for g := range ags {
			genes = append(genes, g)
		}
		sort.Strings(genes)
		for _, g := range genes {
			if _, ok := byGene[g]; !ok {
				geneOrder = append(geneOrder, g)
			}
			byGene[g] = append(byGene[g], member{drug: r.DrugNormalised, ag: ags[g]})
		}
	}
	sort.Strings(geneOrder)
	var genotype []engine.GenotypeCall
	if len(results) > 0 {
		genotype = results[0].Genotype
	}
	var shared []SharedGene
	for _, g := range geneOrder {
		ms := byGene[g]
		if len(ms) < 2 {
			continue
		}
		n := SharedGene{Gene: g, Drugs: make([]string, 0, len(ms)), Guidelines: make([]DrugGuideline, 0, len(ms))}
		for _, m := range ms {
			n.Drugs = append(n.Drugs, m.drug)
			dg := DrugGuideline{Drug: m.drug, Guidance: m.ag}
			if d, ok := kb.DrugNamed(m.drug); ok {
				for _, p := range d.Pairs {
					if p.Gene == g {
						dg.EvidenceLevel = p.EvidenceLevel
					}
				}
			}
			n.Guidelines = append(n.Guidelines, dg)
		}
		for i := range genotype {
			if genotype[i].Gene == g && (genotype[i].Phenotype != "" || genotype[i].Diplotype != "") {
				call := genotype[i]
				n.PatientGenotype = &call
			}
		}
		n.Note = sharedNote(n)
		shared = append(shared, n)
	}
	return shared
}

// sharedNote is the sentence of a shared gene.
func sharedNote(n SharedGene) string {
	list := joinAnd(n.Drugs)
	var note string
	if n.PatientGenotype != nil {
		result := n.PatientGenotype.Phenotype
		if result == "" {
			result = n.PatientGenotype.Diplotype
		}
		note = fmt.Sprintf("%s all have actionable guidance for %s; the patient's %s result (%s) applies to each of them: see each drug's alerts. This is shared pharmacogenomic guidance, not a drug–drug interaction check.",
			list, n.Gene, n.Gene, result)
	} else {
		note = fmt.Sprintf("%s all have actionable guidance for %s, which is not genotyped: one %s result would inform each of these prescriptions. This is shared pharmacogenomic guidance, not a drug–drug interaction check.",
			list, n.Gene, n.Gene)
	}
	if len(n.Drugs) == 2 {
		note = strings.Replace(note, " all have", " both have", 1)
		note = strings.Replace(note, "each of them", "both", 1)
		note = strings.Replace(note, "each of these prescriptions", "both prescriptions", 1)
	}
	return note
}

// joinAnd joins names as "a, b and c".
func joinAnd(ss []string) string {
	switch len(ss) {
	case 0:
		return ""
	case 1:
		return ss[0]
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " and " + ss[len(ss)-1]
}
