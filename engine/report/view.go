package report

import (
	"fmt"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

// sampleJSON is a sample's audited answer (vcfcall.SampleResult), with each
// check's result in the REST wire form of POST /pgx/check (the spec's field
// names, docs/rest-api.md); only the fields the report shows are read.
type sampleJSON struct {
	Sample   string               `json:"sample"`
	Genes    []vcfcall.GeneResult `json:"genes"`
	Warnings []string             `json:"warnings"`
	Checks   []checkJSON          `json:"checks"`
}

type checkJSON struct {
	Drug   string      `json:"drug"`
	Result *resultJSON `json:"result"`
	Error  string      `json:"error"`
}

type resultJSON struct {
	Drug              string         `json:"drug"`
	DrugNormalised    string         `json:"drug_normalised"`
	DrugRecognised    bool           `json:"drug_recognised"`
	DidYouMean        []string       `json:"did_you_mean"`
	Sensitivity       string         `json:"sensitivity"`
	OverallSeverity   string         `json:"overall_severity"`
	Alerts            []alertJSON    `json:"alerts"`
	SaferAlternatives []altJSON      `json:"safer_alternatives"`
	IndianContext     indiaJSON      `json:"indian_context"`
	SourceCitations   []citationJSON `json:"source_citations"`
	Warnings          []string       `json:"warnings"`
	KnowledgeVersion  string         `json:"knowledge_version"`
}

type alertJSON struct {
	Drug            string         `json:"drug"`
	Severity        string         `json:"severity"`
	Gene            string         `json:"gene"`
	Category        string         `json:"category"`
	Message         string         `json:"message"`
	Action          string         `json:"action"`
	Alternatives    []string       `json:"alternatives"`
	TestRecommended bool           `json:"test_recommended"`
	Genotype        []genotypeJSON `json:"genotype"`
	Recommendation  string         `json:"recommendation"`
	Implications    []string       `json:"implications"`
	Classification  string         `json:"classification"`
	EvidenceLevel   string         `json:"evidence_level"`
	Population      string         `json:"population"`
	Guideline       *struct {
		Name string `json:"name"`
		URL  string `json:"url"`
	} `json:"guideline"`
	GuidanceSource string   `json:"guidance_source"`
	Assumptions    []string `json:"assumptions"`
}

type genotypeJSON struct {
	Gene            string   `json:"gene"`
	Diplotype       string   `json:"diplotype"`
	Phenotype       string   `json:"phenotype"`
	ActivityScore   string   `json:"activity_score"`
	UntestedAlleles []string `json:"untested_alleles"`
}

type altJSON struct {
	Name      string `json:"name"`
	Rationale string `json:"rationale"`
}

type indiaJSON struct {
	State           string `json:"state"`
	StateRecognised *bool  `json:"state_recognised"`
	EndemicRisks    []struct {
		Risk    string `json:"risk"`
		Disease string `json:"disease"`
		Note    string `json:"note"`
	} `json:"endemic_risks"`
	PopulationFrequencies []struct {
		Variant      string   `json:"variant"`
		Gene         string   `json:"gene"`
		Allele       string   `json:"allele"`
		AFIndia      *float64 `json:"af_india"`
		AFIndiaBasis string   `json:"af_india_basis"`
		AFGlobal     *float64 `json:"af_global"`
	} `json:"population_frequencies"`
	CommunityNotes []struct {
		Community string `json:"community"`
		Trait     string `json:"trait"`
		Finding   string `json:"finding"`
	} `json:"community_notes"`
	TraditionalMedicine []struct {
		Herb      string `json:"herb"`
		Botanical string `json:"botanical"`
		Mechanism string `json:"mechanism"`
		Effect    string `json:"effect"`
		Evidence  string `json:"evidence"`
	} `json:"traditional_medicine"`
}

type citationJSON struct {
	Field         string `json:"field"`
	Source        string `json:"source"`
	EvidenceLevel string `json:"evidence_level"`
	URL           string `json:"url"`
}

// sampleView is the model of one sample's section.
type sampleView struct {
	NewPage     bool
	Meta        Meta
	Generated   string
	Sample      string
	AuditID     string
	Digest      string
	ReviewGenes []string
	Genes       []geneView
	Drugs       []drugView
	India       []indiaView
	Sources     []sourceView
	Warnings    []string
}

// geneView is one gene's row and, below the table, its details.
type geneView struct {
	Gene string
	// Label is the state shown ("called", "REVIEW", …); Class its style.
	Label, Class string
	Review       bool
	Calls        []callView
	// Evidence describes the quality of the evidence behind the call.
	Evidence []string
	// Reasons say why the gene is in review or not called (never empty
	// then); Notes are the matcher's notes on a called gene.
	Reasons, Notes []string
	Untested       []string
	Alternatives   []string
	Source         []string
}

// callView is one diplotype; PhenotypeError says why a called diplotype
// has no CPIC phenotype.
type callView struct{ Diplotype, Phenotype, ActivityScore, PhenotypeError string }

type drugView struct {
	Drug, Severity, Class, Sensitivity string
	Error                              string
	Unrecognised                       bool
	DidYouMean                         []string
	Alerts                             []alertView
	Alternatives                       []altJSON
	Warnings                           []string
}

type alertView struct {
	Severity, Class, Gene, Genotype, Category, Message string
	Recommendation, Action, Strength, EvidenceLevel    string
	Population, Guideline, GuidelineURL, Source        string
	TestRecommended                                    bool
	Implications, Assumptions, Alternatives            []string
}

type indiaView struct {
	Drug  string
	India indiaJSON
	// Frequencies are formatted from the answer's numbers.
	Frequencies []freqView
}

type freqView struct{ Variant, Gene, Allele, India, Basis, Global string }

type sourceView struct {
	Source, EvidenceLevel, URL string
	// Supports lists the drug and answer field each citation supports.
	Supports []string
}

func sampleViewOf(m Meta, s Sample) (sampleView, error) {
	r, err := decode(s.Result)
	if err != nil {
		return sampleView{}, err
	}
	v := sampleView{Meta: m, Generated: formatTime(m.Generated), Sample: r.Sample, AuditID: s.AuditID,
		Digest: s.Digest, Warnings: r.Warnings}
	for _, g := range r.Genes {
		gv := geneViewOf(g)
		if gv.Review {
			v.ReviewGenes = append(v.ReviewGenes, g.Gene)
		}
		v.Genes = append(v.Genes, gv)
	}
	sources := map[string]int{}
	for _, c := range r.Checks {
		d := drugView{Drug: c.Drug, Error: c.Error}
		if c.Result != nil {
			res := c.Result
			d.Severity, d.Class, d.Sensitivity = res.OverallSeverity, severityClass(res.OverallSeverity), res.Sensitivity
			d.Unrecognised, d.DidYouMean = !res.DrugRecognised, res.DidYouMean
			d.Alternatives, d.Warnings = res.SaferAlternatives, res.Warnings
			for _, a := range res.Alerts {
				d.Alerts = append(d.Alerts, alertViewOf(a))
			}
			if iv := indiaViewOf(c.Drug, res.IndianContext); iv != nil {
				v.India = append(v.India, *iv)
			}
			for _, cit := range res.SourceCitations {
				key := cit.Source + "\x00" + cit.URL + "\x00" + cit.EvidenceLevel
				i, ok := sources[key]
				if !ok {
					i = len(v.Sources)
					sources[key] = i
					v.Sources = append(v.Sources, sourceView{Source: cit.Source, EvidenceLevel: cit.EvidenceLevel, URL: cit.URL})
				}
				v.Sources[i].Supports = append(v.Sources[i].Supports, c.Drug+": "+cit.Field)
			}
		} else {
			d.Class = "review"
		}
		v.Drugs = append(v.Drugs, d)
	}
	return v, nil
}

// geneViewOf shows a gene as the answer reads it. A gene that needs
// review, is provisional, not called or without data is labelled so and
// carries its reasons (the answer's uninterpreted items and notes, else its
// summary), never the look of a result.
func geneViewOf(g vcfcall.GeneResult) geneView {
	v := geneView{Gene: g.Gene, Untested: g.UntestedAlleles, Alternatives: g.Alternatives, Source: g.Source}
	for _, d := range g.Diplotypes {
		v.Calls = append(v.Calls, callView{Diplotype: d.Diplotype, Phenotype: d.Phenotype, ActivityScore: d.ActivityScore, PhenotypeError: d.PhenotypeError})
	}
	switch {
	case g.Status == "provisional":
		v.Label, v.Class, v.Review = "PROVISIONAL — review", "review", true
	case g.NeedsReview:
		v.Label, v.Class, v.Review = "REVIEW", "review", true
	case g.Status == "no_data":
		v.Label, v.Class, v.Review = "NO DATA", "nodata", true
	case g.Status != "called":
		v.Label, v.Class, v.Review = "NOT CALLED", "nodata", true
	default:
		v.Label, v.Class = "called", "called"
	}
	if v.Review {
		v.Reasons = append(append([]string(nil), g.Uninterpreted...), g.Notes...)
		if len(v.Reasons) == 0 {
			v.Reasons = []string{g.Summary}
		}
	} else {
		v.Notes = g.Notes
	}
	v.Evidence = append(v.Evidence, g.Interpretation)
	if len(g.Diplotypes) > 0 {
		if g.Phased {
			v.Evidence = append(v.Evidence, "phased")
		} else {
			v.Evidence = append(v.Evidence, "unphased")
		}
	}
	if n := len(g.Diplotypes); n > 1 {
		v.Evidence = append(v.Evidence, fmt.Sprintf("%d diplotypes fit equally", n))
	}
	if n := len(g.MissingPositions); n > 0 {
		v.Evidence = append(v.Evidence, fmt.Sprintf("%d definition position(s) not in the file", n))
	}
	if n := len(g.UntestedAlleles); n > 0 {
		v.Evidence = append(v.Evidence, fmt.Sprintf("%d allele(s) untested", n))
	}
	return v
}

func alertViewOf(a alertJSON) alertView {
	v := alertView{Severity: a.Severity, Class: severityClass(a.Severity), Gene: a.Gene, Category: a.Category,
		Message: a.Message, Recommendation: a.Recommendation, Action: a.Action, Strength: a.Classification,
		EvidenceLevel: a.EvidenceLevel, Population: a.Population, Source: a.GuidanceSource,
		TestRecommended: a.TestRecommended, Implications: a.Implications, Assumptions: a.Assumptions,
		Alternatives: a.Alternatives}
	if a.Guideline != nil {
		v.Guideline, v.GuidelineURL = a.Guideline.Name, a.Guideline.URL
	}
	var gts []string
	for _, g := range a.Genotype {
		gts = append(gts, joinNonEmpty(" ", g.Gene, g.Diplotype, g.Phenotype, activity(g.ActivityScore)))
	}
	v.Genotype = strings.Join(gts, "; ")
	return v
}

func activity(s string) string {
	if s == "" {
		return ""
	}
	return "(activity score " + s + ")"
}

func indiaViewOf(drug string, c indiaJSON) *indiaView {
	if len(c.EndemicRisks)+len(c.PopulationFrequencies)+len(c.CommunityNotes)+len(c.TraditionalMedicine) == 0 {
		return nil
	}
	v := &indiaView{Drug: drug, India: c}
	for _, f := range c.PopulationFrequencies {
		v.Frequencies = append(v.Frequencies, freqView{Variant: f.Variant, Gene: f.Gene, Allele: f.Allele,
			India: frequency(f.AFIndia), Basis: f.AFIndiaBasis, Global: frequency(f.AFGlobal)})
	}
	return v
}

// frequency prints an allele frequency as the answer gives it; an absent
// one is "not known" (never a zero).
func frequency(f *float64) string {
	if f == nil {
		return "not known"
	}
	return fmt.Sprint(*f)
}

func severityClass(s string) string {
	switch s {
	case "HIGH":
		return "critical"
	case "MODERATE":
		return "warning"
	case "INFO":
		return "info"
	}
	return "none"
}

// joinNonEmpty joins the non-empty strings with sep.
func joinNonEmpty(sep string, s ...string) string {
	var out []string
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return strings.Join(out, sep)
}
