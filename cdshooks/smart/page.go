package smart

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/fhir"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

//go:embed templates/*.html templates/style.css
var templateFS embed.FS

var (
	templates = template.Must(template.New("").Funcs(template.FuncMap{
		"lower": strings.ToLower,
	}).ParseFS(templateFS, "templates/*.html"))
	// styleSheet is inlined in every page; the Content-Security-Policy
	// allows exactly it (no script at all).
	styleSheet = mustRead("templates/style.css")
	csp        = "default-src 'none'; style-src " + httpx.CSPHashSource(styleSheet) + "; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

func mustRead(name string) string {
	b, err := templateFS.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// pageError is an error the app shows as an HTML page: its kind chooses
// the status (httpx's table of kinds), Title is the page's heading.
type pageError struct {
	Kind   httpx.Kind
	Title  string
	Detail string
	// Link, when set, is a same-site path offered to go on.
	Link string
	Err  error
}

func (e *pageError) Error() string {
	s := fmt.Sprintf("%d %s: %s", e.Kind.Status(), e.Title, e.Detail)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *pageError) Unwrap() error { return e.Err }

// errorPage is the model of the error template.
type errorPage struct {
	Title     string
	Status    int
	Heading   string
	Detail    string
	Link      string
	RequestID string
	Style     template.CSS
}

// page adapts a handler that returns an error: the error becomes an HTML
// page (a pageError as given; anything else through the one error table
// of httpx, so an audit failure is a 503 that says no advice was given).
func (s *Server) page(h httpx.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("Cache-Control", "no-store")
		err := h(w, r)
		if err == nil {
			return
		}
		pe, ok := err.(*pageError)
		if !ok {
			he := httpx.ProblemFor(err)
			pe = &pageError{Kind: he.Kind, Title: he.Kind.Title(), Detail: he.Detail, Err: err}
		}
		status := pe.Kind.Status()
		log := httpx.Logger(r.Context())
		if status >= 500 {
			log.Error("SMART page failed", zap.Int("status", status), zap.String("title", pe.Title), zap.Error(err))
		} else {
			log.Info("SMART page refused", zap.Int("status", status), zap.String("title", pe.Title))
		}
		_ = s.render(w, status, "error", errorPage{Title: pe.Title + " — pgxsafety", Status: status, Heading: pe.Title,
			Detail: pe.Detail, Link: pe.Link, RequestID: httpx.RequestID(r.Context())})
	})
}

// render executes a template completely before writing anything.
func (s *Server) render(w http.ResponseWriter, status int, name string, data any) error {
	var buf bytes.Buffer
	switch d := data.(type) {
	case errorPage:
		d.Style = template.CSS(styleSheet)
		data = d
	case *reviewPage:
		d.Style = template.CSS(styleSheet)
	case indexPage:
		d.Style = template.CSS(styleSheet)
		data = d
	}
	if err := templates.ExecuteTemplate(&buf, name, data); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}

// indexPage lists the registered EHRs for a standalone launch.
type indexPage struct {
	EHRs  []indexEHR
	Style template.CSS
}

type indexEHR struct {
	Name string
	URL  string
}

func (s *Server) index(w http.ResponseWriter, _ *http.Request) error {
	var p indexPage
	for _, e := range s.order {
		p.EHRs = append(p.EHRs, indexEHR{Name: e.Name, URL: PathLaunch + "?iss=" + url.QueryEscape(e.ISS)})
	}
	return s.render(w, http.StatusOK, "index", p)
}

// reviewPage is the model of the review template.
type reviewPage struct {
	Style            template.CSS
	Banner           *bannerView
	PatientProblem   string
	AuditID          string
	KnowledgeVersion string
	Generated        string
	Viewer           string
	CardDrug         string
	Genes            []geneView
	GenotypeNotes    []string
	GenotypeError    string
	Unreadable       []fhir.Issue
	Meds             []medView
	PreTest          []preTestView
	India            indiaView
	Notes            []string
}

type bannerView struct {
	Name, ID, Sex, Age, BirthDate, State string
}

// patientName reads the display name of a Patient (its official or first
// name: text, else given and family names) for the banner.
func patientName(raw []byte) string {
	var p struct {
		Name []struct {
			Use    string   `json:"use"`
			Text   string   `json:"text"`
			Family string   `json:"family"`
			Given  []string `json:"given"`
		} `json:"name"`
	}
	if json.Unmarshal(raw, &p) != nil || len(p.Name) == 0 {
		return ""
	}
	n := p.Name[0]
	for _, x := range p.Name {
		if x.Use == "official" {
			n = x
			break
		}
	}
	if n.Text != "" {
		return clip(n.Text, 200)
	}
	return clip(strings.TrimSpace(strings.Join(append(n.Given, n.Family), " ")), 200)
}

type geneView struct {
	Gene    string
	Calls   []engine.GenotypeCall
	Problem string
	Results []resultView
}

type resultView struct {
	Ref, Kind, Value, Date, Lab, Status, Note string
	Used                                      bool
}

type medView struct {
	Drug        string
	FromCard    bool
	Orders      []string
	Indication  string
	Severity    string
	Class       string
	Sensitivity string
	Alerts      []alertView
	Alternative []engine.Alternative
	Citations   []citeView
	Warnings    []string
	Problem     string
	// rank orders the medicines, most severe first.
	rank engine.Severity
}

type alertView struct {
	Severity, Class, Category, Gene, Genotype string
	Message, Recommendation, Action           string
	Classification, EvidenceLevel, Source     string
	GuidelineName, GuidelineURL               string
	Implications, Assumptions                 []string
	// ResultUnreadable: a result of the gene exists but could not be
	// interpreted; Untied: some genomic results could not be read or
	// tied to a gene. Either way "no result" must not read as final.
	ResultUnreadable, Untied bool
}

type citeView struct {
	Source, EvidenceLevel, Field, URL, Text string
}

type preTestView struct {
	Gene    string
	Drugs   []string
	Levels  []string
	Problem string
}

type indiaView struct {
	State           string
	StateRecognised bool
	Drugs           []indiaDrug
}

type indiaDrug struct {
	Drug        string
	Risks       []engine.EndemicRisk
	Frequencies []freqView
	Herbs       []engine.HerbNote
}

type freqView struct {
	Variant, Gene, Allele, India, Basis, Global string
}

// severityClass is the page's style class of a severity.
func severityClass(sev engine.Severity) string {
	switch sev {
	case engine.SeverityHigh:
		return "critical"
	case engine.SeverityModerate:
		return "warning"
	case engine.SeverityInfo:
		return "info"
	}
	return "none"
}

// citeURL returns a link for a citation: an http(s) URL as given, a PMID
// as its PubMed page; "" otherwise.
func citeURL(u string) string {
	u = strings.TrimSpace(u)
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return u
	}
	if p, ok := strings.CutPrefix(u, "PMID:"); ok && p != "" && strings.Trim(p, "0123456789") == "" {
		return "https://pubmed.ncbi.nlm.nih.gov/" + p + "/"
	}
	return ""
}

// buildPage turns the answer into the page model.
func (s *Server) buildPage(ss *session, pf fhir.PatientFacts, name, patientProblem string, g fhir.Genomics, rows []row, checks []engine.Request, ans service.ReviewAnswer, auditID string) *reviewPage {
	p := &reviewPage{AuditID: auditID, KnowledgeVersion: s.kb.Version.Label,
		Generated: s.now().UTC().Format(time.RFC3339), Viewer: firstNonEmpty(ss.principal.Name, ss.principal.Subject),
		CardDrug: ss.cardDrug, PatientProblem: patientProblem, GenotypeError: ans.GenotypeError}
	if ss.needBanner {
		b := &bannerView{Name: firstNonEmpty(name, "Name not recorded"), ID: ss.patient, Sex: pf.Sex, BirthDate: pf.BirthDate, State: pf.State}
		if pf.AgeYears != nil {
			b.Age = fmt.Sprintf("%.0f years", *pf.AgeYears)
		}
		p.Banner = b
	}
	p.GenotypeNotes = ans.GenotypeWarnings
	for _, is := range g.Issues {
		if is.Severity == fhir.IssueError || is.Severity == fhir.IssueWarning {
			p.Unreadable = append(p.Unreadable, is)
		}
	}
	p.Genes = geneTable(ans.Genotype, g.Results)
	// Genes with a result that could not be interpreted: a pre-test or
	// genotype-unknown finding must not read as "no result".
	unread := map[string]bool{}
	for _, gv := range p.Genes {
		if gv.Problem != "" {
			unread[gv.Gene] = true
		}
	}
	untied := false
	for _, r := range g.Results {
		if !r.Used && r.Gene == "" {
			untied = true
		}
	}
	read := map[string]bool{}
	for _, r := range g.Results {
		read[r.Ref] = true
	}
	for _, is := range g.Issues {
		// A genomic resource that could not be parsed at all: its gene is
		// unknown, so no gene may read as "no result".
		if is.Genomic && is.Severity == fhir.IssueError && !read[is.Ref] {
			untied = true
		}
	}
	pre := map[string]*preTestView{}
	ci := 0
	for _, rw := range rows {
		if rw.drug == "" {
			p.Meds = append(p.Meds, medView{Drug: rw.label, Problem: rw.problem, Class: "unreadable"})
			continue
		}
		cr := ans.Results[ci]
		ci++
		mv := medView{Drug: rw.drug, FromCard: rw.fromCard, Orders: rw.orders, Indication: rw.indication}
		if cr.Result == nil {
			mv.Problem = "could not interpret — review: the check could not be run: " + cr.Error
			mv.Class = "unreadable"
			p.Meds = append(p.Meds, mv)
			continue
		}
		res := cr.Result
		mv.Drug = firstNonEmpty(res.DrugNormalised, rw.drug)
		mv.Severity, mv.Class, mv.rank = cdshooks.SeverityName(res.OverallSeverity), severityClass(res.OverallSeverity), res.OverallSeverity
		mv.Sensitivity = res.Sensitivity
		mv.Warnings = res.Warnings
		if !res.DrugRecognised {
			mv.Problem = "could not interpret — review: pgxsafety's knowledge does not cover this drug, so no pharmacogenomic guidance was checked; this does not mean it is safe"
			mv.Class = "unreadable"
		}
		mv.Alternative = res.SaferAlternatives
		for _, a := range res.Alerts {
			av := alertView{Severity: cdshooks.SeverityName(a.Severity), Class: severityClass(a.Severity), Category: cdshooks.CategoryCode(a.Category), Gene: a.Gene,
				Message: a.Message, Recommendation: a.Recommendation, Action: a.Action, Classification: a.Classification,
				EvidenceLevel: a.EvidenceLevel, Source: firstNonEmpty(a.GuidanceSource, "CPIC"), Implications: a.Implications, Assumptions: a.Assumptions}
			var gts []string
			for _, gc := range a.Genotype {
				s := gc.Gene + " " + gc.Phenotype
				if gc.Diplotype != "" {
					s += " (" + gc.Diplotype + ")"
				}
				gts = append(gts, s)
			}
			av.Genotype = strings.Join(gts, "; ")
			if a.Guideline != nil {
				av.GuidelineName = a.Guideline.Name
				av.GuidelineURL = citeURL(a.Guideline.URL)
			}
			if a.Category == engine.CategoryUnknown && a.Gene != "" {
				av.ResultUnreadable = unread[a.Gene]
				av.Untied = untied
				pv := pre[a.Gene]
				if pv == nil {
					pv = &preTestView{Gene: a.Gene}
					pre[a.Gene] = pv
				}
				pv.Drugs = appendUnique(pv.Drugs, mv.Drug)
				if d, ok := s.names.Drug(mv.Drug); ok {
					for _, pr := range d.Pairs {
						if pr.Gene == a.Gene && pr.CPICLevel != "" {
							pv.Levels = appendUnique(pv.Levels, mv.Drug+": CPIC level "+pr.CPICLevel)
						}
					}
				}
				if unread[a.Gene] {
					pv.Problem = "A " + a.Gene + " result exists but could not be interpreted (see the genotype table): review the laboratory report before ordering a test."
				} else if untied {
					pv.Problem = "Some genomic results could not be tied to a gene or read (see above): check them before ordering a test."
				}
			}
			mv.Alerts = append(mv.Alerts, av)
		}
		for _, c := range res.SourceCitations {
			mv.Citations = append(mv.Citations, citeView{Source: c.Source, EvidenceLevel: c.EvidenceLevel, Field: citedPart(res, c.Target), URL: citeURL(c.URL), Text: c.URL})
		}
		p.Meds = append(p.Meds, mv)
		p.India.addDrug(mv.Drug, res.IndianContext)
	}
	sortRows(p.Meds)
	p.India.State, p.India.StateRecognised = pf.State, pf.State != ""
	for _, pv := range pre {
		p.PreTest = append(p.PreTest, *pv)
	}
	sort.Slice(p.PreTest, func(i, j int) bool { return p.PreTest[i].Gene < p.PreTest[j].Gene })
	if len(checks) == 0 {
		p.Notes = append(p.Notes, "The EHR lists no active medication for this patient, and the review was not opened from a card: there is nothing to check yet.")
	}
	return p
}

func (iv *indiaView) addDrug(drug string, ic engine.IndianContext) {
	d := indiaDrug{Drug: drug, Risks: ic.EndemicRisks, Herbs: ic.TraditionalMedicine}
	for _, f := range ic.PopulationFrequencies {
		fv := freqView{Variant: f.Variant, Gene: f.Gene, Allele: f.Allele, Basis: f.AFIndiaBasis, India: "not in the knowledge", Global: "not in the knowledge"}
		if f.AFIndia != nil {
			fv.India = strconv.FormatFloat(*f.AFIndia, 'f', 4, 64)
		}
		if f.AFGlobal != nil {
			fv.Global = strconv.FormatFloat(*f.AFGlobal, 'f', 4, 64)
		}
		d.Frequencies = append(d.Frequencies, fv)
	}
	if len(d.Risks)+len(d.Frequencies)+len(d.Herbs) > 0 {
		iv.Drugs = append(iv.Drugs, d)
	}
}

// geneTable groups the engine's calls and the source Observations by
// gene. A gene whose results were not used, or whose call is "Not
// callable", says it could not be interpreted, with the raw values.
func geneTable(calls []engine.GenotypeCall, results []fhir.GenomicResult) []geneView {
	by := map[string]*geneView{}
	get := func(gene string) *geneView {
		gv := by[gene]
		if gv == nil {
			gv = &geneView{Gene: gene}
			by[gene] = gv
		}
		return gv
	}
	for _, c := range calls {
		gv := get(c.Gene)
		gv.Calls = append(gv.Calls, c)
		if c.Phenotype == "Not callable" {
			gv.Problem = "Could not interpret — review: the reported variants do not determine a phenotype."
		}
	}
	for _, r := range results {
		gene := r.Gene
		if gene == "" {
			gene = "Gene not named"
		}
		if r.Kind == fhir.KindImplication {
			gene = "Laboratory interpretations"
		}
		gv := get(gene)
		date := r.Effective
		if date == "" {
			date = r.Issued
		} else if r.Issued != "" && r.Issued != r.Effective {
			date += " (issued " + r.Issued + ")"
		}
		if r.SpecimenCollected != "" {
			date += "; specimen collected " + r.SpecimenCollected
		}
		gv.Results = append(gv.Results, resultView{Ref: r.Ref, Kind: r.Kind, Value: r.Value, Date: date, Lab: r.Performer,
			Status: r.Status, Note: r.Note, Used: r.Used})
	}
	var out []geneView
	for _, gv := range by {
		if gv.Problem == "" && len(gv.Calls) == 0 && gv.Gene != "Laboratory interpretations" {
			used := false
			for _, r := range gv.Results {
				used = used || r.Used
			}
			if !used {
				gv.Problem = "Could not interpret — review: no result of this gene could be used (see each result's note and raw value)."
			} else if !strings.Contains(gv.Gene, " ") {
				gv.Problem = "No phenotype: pgxsafety's knowledge has no phenotype rules for this gene; its result does not change the advice."
			}
		}
		out = append(out, *gv)
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i].Problem != "") != (out[j].Problem != "") {
			return out[i].Problem != ""
		}
		return out[i].Gene < out[j].Gene
	})
	return out
}

func appendUnique(ss []string, s string) []string {
	for _, x := range ss {
		if x == s {
			return ss
		}
	}
	return append(ss, s)
}

// citedPart names, for the reader, the part of the result a citation
// supports.
func citedPart(res *engine.Result, t engine.CitationTarget) string {
	alert := func() string {
		for _, a := range res.Alerts {
			if a.ID == t.Alert {
				return firstNonEmpty(a.Gene, cdshooks.CategoryCode(a.Category))
			}
		}
		return "finding"
	}
	switch t.Kind {
	case engine.CitesAlert:
		return "finding: " + alert()
	case engine.CitesAlertFrequencyIndia:
		return "Indian allele frequency: " + alert()
	case engine.CitesAlertFrequencyGlobal:
		return "global allele frequency: " + alert()
	case engine.CitesAlternative:
		if t.Index >= 0 && t.Index < len(res.SaferAlternatives) {
			return "alternative: " + res.SaferAlternatives[t.Index].Name
		}
		return "alternative"
	case engine.CitesEndemicRisk:
		return "state risk"
	case engine.CitesPopulationFrequency:
		if pf := res.IndianContext.PopulationFrequencies; t.Index >= 0 && t.Index < len(pf) {
			return "allele frequency: " + pf[t.Index].Variant
		}
		return "allele frequency"
	case engine.CitesCommunityNote:
		return "community note"
	case engine.CitesTraditionalMedicine:
		return "traditional medicine"
	}
	return "result"
}
