package evaluate

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/drugnames"
	"github.com/pgxsafety/pgxsafety/engine/population"
)

// Evaluate answers one request from the knowledge alone. It is pure and
// deterministic: the same knowledge and request give the same result.
func (k *Engine) Evaluate(req engine.Request) (engine.Result, error) {
	if err := k.calls.Validate(req); err != nil {
		return engine.Result{}, err
	}
	if err := population.ValidateContext(req); err != nil {
		return engine.Result{}, err
	}
	return k.evaluate(req, nil), nil
}

// EvaluateSample answers req — its drug, context and any diplotypes or HLA
// statuses — with the genotype called from one sample by CallSample (a VCF
// sample). Genes the sample call holds replace nothing given as a
// diplotype: a supplied diplotype wins and says so. req must not carry
// variants, calls or genes_tested (the sample is the genotype).
func (k *Engine) EvaluateSample(req engine.Request, sc calling.SampleCall) (engine.Result, error) {
	var fe []engine.FieldError
	if len(req.Variants) > 0 {
		fe = append(fe, engine.FieldError{Field: "variants", Reason: "must be empty when the genotype comes from a sample"})
	}
	if len(req.Calls) > 0 {
		fe = append(fe, engine.FieldError{Field: "calls", Reason: "must be empty when the genotype comes from a sample"})
	}
	if len(req.GenesTested) > 0 {
		fe = append(fe, engine.FieldError{Field: "genes_tested", Reason: "must be empty when the genotype comes from a sample"})
	}
	if len(fe) > 0 {
		return engine.Result{}, &engine.ValidationError{Fields: fe}
	}
	if err := k.calls.Validate(req); err != nil {
		return engine.Result{}, err
	}
	gt := k.calls.InterpretGenotype(req)
	k.calls.AddSample(gt, req, sc)
	gt.Warnings = append(gt.Warnings, sc.Warnings...)
	return k.evaluateWith(req, gt), nil
}

// evaluation carries the intermediate state of one evaluation.
type evaluation struct {
	kb   *Engine
	req  engine.Request
	drug *engine.Drug
	gt   *calling.Genotype
	res  *engine.Result
	// matched holds the recommendations that produced alerts, per alert
	// (nil until one does).
	matched map[int]*engine.Recommendation
	// byAlert holds the same recommendations by alert ID, once the
	// alerts have IDs (identifyAlerts): alerts are sorted after.
	byAlert map[string]*engine.Recommendation
	// sources holds the knowledge rows behind each population-risk alert,
	// by alert index (addSources), and sourcesByAlert the same by alert
	// ID; nil while empty.
	sources        map[int][]string
	sourcesByAlert map[string][]string
	// communities are the communities the ethnicity matches.
	communities []*engine.Community
	// genes caches drugGenes.
	genes []string
	// forms caches lookupValues per gene outside HLA allele-status rows
	// (the genotype does not change during an evaluation); read only.
	forms []geneForms
	// st is the request's state (Knowledge.State), looked up once.
	st           *engine.State
	stOK, stDone bool
}

// state returns Knowledge.State of the request's state, looking it up
// once per evaluation.
func (ev *evaluation) state() (*engine.State, bool) {
	if !ev.stDone {
		ev.st, ev.stOK = ev.kb.State(ev.req.State)
		ev.stDone = true
	}
	return ev.st, ev.stOK
}

// evaluate answers req. gt is nil for a full answer; a re-check of an
// alternative passes the genotype already interpreted and gets only the
// genotype alerts (DrugRecognised, Alerts, OverallSeverity). The drug is read with ReadDrug; a combination (more
// than one covered drug) is answered by evaluating each covered drug and
// merging the answers (combination.go).
func (k *Engine) evaluate(req engine.Request, gt *calling.Genotype) engine.Result {
	if gt != nil {
		return k.evaluateDrug(req, gt, nil, false)
	}
	return k.evaluateRead(req, nil)
}

// evaluateWith is a full answer (with alternatives and context) for a
// genotype interpreted elsewhere (EvaluateSample).
func (k *Engine) evaluateWith(req engine.Request, gt *calling.Genotype) engine.Result {
	return k.evaluateRead(req, gt)
}

// evaluateRead reads req.Drug with ReadDrug and answers it in full. gt is
// a genotype interpreted elsewhere, or nil to interpret req's.
func (k *Engine) evaluateRead(req engine.Request, gt *calling.Genotype) engine.Result {
	rd := k.names.ReadDrug(req.Drug)
	if len(rd.Drugs) > 1 {
		return k.evaluateCombination(req, rd, gt)
	}
	return k.evaluateDrug(req, gt, &rd, true)
}

// evaluateDrug answers req for one drug. rd is the reading of req.Drug;
// nil for the re-check of an alternative or an ingredient (a knowledge
// name). gt nil means: interpret req's genotype. withAlternatives false
// gives only the genotype alerts (the re-check of an alternative).
func (k *Engine) evaluateDrug(req engine.Request, gt *calling.Genotype, rd *engine.DrugReading, withAlternatives bool) engine.Result {
	res := engine.Result{
		Drug:                 req.Drug,
		DrugNormalised:       drugnames.NormaliseDrugName(req.Drug),
		Alerts:               []engine.Alert{},
		SaferAlternatives:    []engine.Alternative{},
		SourceCitations:      []engine.Citation{},
		Genotype:             []engine.GenotypeCall{},
		UnrecognisedVariants: []string{},
		Warnings:             []string{},
		GroundingContract:    engine.GroundingContract,
		KnowledgeVersion:     k.Version.Label,
		Sensitivity:          "none",
	}
	ev := &evaluation{kb: k, req: req, res: &res}
	ev.gt = gt
	if ev.gt == nil {
		ev.gt = k.calls.InterpretGenotype(req)
	}
	if withAlternatives {
		// A re-check of an alternative reads only DrugRecognised, Alerts
		// and OverallSeverity: the genotype's own lists are left out.
		res.UnrecognisedVariants = append(res.UnrecognisedVariants, ev.gt.Unrecognised...)
		res.Warnings = append(res.Warnings, ev.gt.Warnings...)
		if len(ev.gt.Unrecognised) > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf(
				"%d variant(s) are not in any CPIC allele definition or the tracked panel and were not used: %s",
				len(ev.gt.Unrecognised), strings.Join(ev.gt.Unrecognised, ", ")))
		}
		res.Genotype = ev.genotypeCalls()
		res.Evidence = ev.gt.Evidence
	}

	var d *engine.Drug
	ok := false
	if rd == nil {
		d, ok = k.names.Drug(req.Drug)
	} else {
		res.DrugReading = rd
		if len(rd.Drugs) == 1 {
			d, ok = k.names.Covered(rd.Drugs[0])
		}
		res.Warnings = append(res.Warnings, readingWarnings(rd)...)
	}
	if ok {
		ev.drug = d
		res.DrugRecognised = true
		res.DrugNormalised = d.Name
		res.Sensitivity = d.Sensitivity
		ev.genotypeAlerts()
		ev.reviewAlerts() // review.go
		ev.preTestAlerts()
	} else if rd != nil {
		res.DidYouMean = rd.DidYouMean
		res.Alerts = append(res.Alerts, notInterpretedAlert(rd))
	}
	if rd != nil && ok && rd.Via == "ingredient list" && len(rd.Unrecognised) > 0 {
		res.Alerts = append(res.Alerts, notInterpretedAlert(rd))
	}
	if !withAlternatives {
		// A re-check of an alternative needs only its genotype alerts.
		ev.identifyAlerts()
		sortAlerts(res.Alerts)
		res.OverallSeverity = engine.SeverityNone
		if len(res.Alerts) > 0 {
			res.OverallSeverity = res.Alerts[0].Severity
		}
		return res
	}
	ev.communities = k.pops.MatchCommunities(req.Ethnicity)
	ev.indianContext()
	ev.populationAlerts()
	ev.identifyAlerts()
	sortAlerts(res.Alerts)
	ev.alternatives()
	res.OverallSeverity = engine.SeverityNone
	if len(res.Alerts) > 0 {
		res.OverallSeverity = res.Alerts[0].Severity
	}
	res.DataCompleteness = ev.completeness()
	res.Confidence = ev.confidence()
	ev.citations()
	res.Warnings = engine.CapWarnings(res.Warnings)
	return res
}

// genotypeCalls lists the interpreted genes for the response.
func (ev *evaluation) genotypeCalls() []engine.GenotypeCall {
	var out []engine.GenotypeCall
	for _, gg := range ev.gt.Genes {
		if gg == nil {
			continue
		}
		if len(gg.Diplotypes) == 0 && len(ev.reviewOf(gg.Gene)) > 0 {
			out = append(out, engine.GenotypeCall{Gene: gg.Gene, Phenotype: "Could not interpret — review"})
			continue
		}
		if gg.Uncallable != "" {
			out = append(out, engine.GenotypeCall{Gene: gg.Gene, Phenotype: "Not callable"})
			continue
		}
		for _, d := range gg.Diplotypes {
			out = append(out, engine.GenotypeCall{Gene: gg.Gene, Diplotype: d.String(), Phenotype: d.Call.Phenotype, ActivityScore: d.Call.ActivityScore, UntestedAlleles: gg.UntestedAlleles})
		}
	}
	for allele, pos := range ev.gt.HLA {
		status := "negative"
		if pos {
			status = "positive"
		}
		gene, name, _ := strings.Cut(allele, "*")
		out = append(out, engine.GenotypeCall{Gene: gene, Diplotype: "*" + name, Phenotype: "*" + name + " " + status})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Gene != out[j].Gene {
			return out[i].Gene < out[j].Gene
		}
		return out[i].Diplotype < out[j].Diplotype
	})
	if out == nil {
		out = []engine.GenotypeCall{}
	}
	return out
}

// drugGenes returns the genes that matter for the drug: every gene of its
// recommendation rows and of its CPIC pairs at level A, A/B or B.
func (ev *evaluation) drugGenes() []string {
	if ev.genes != nil {
		return ev.genes
	}
	ev.genes = ev.kb.drugGenes[ev.drug]
	if ev.genes == nil {
		ev.genes = ev.kb.computeDrugGenes(ev.drug)
	}
	return ev.genes
}

// computeDrugGenes is drugGenes of drug d, computed at Build for every
// drug of the knowledge (index.drugGenes); the slices are shared and
// read only.
func (k *Engine) computeDrugGenes(d *engine.Drug) []string {
	set := map[string]bool{}
	for _, r := range k.RecommendationsFor(d.Name) {
		for _, g := range r.Genes {
			set[g] = true
		}
	}
	for _, p := range d.Pairs {
		if p.CPICLevel == "A" || p.CPICLevel == "A/B" || p.CPICLevel == "B" {
			set[p.Gene] = true
		}
	}
	if d.Name == "warfarin" && k.Warfarin != nil {
		for _, g := range k.Warfarin.Genes {
			if _, ok := k.Gene(g); ok {
				set[g] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for g := range set {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

func (ev *evaluation) pair(gene string) *engine.DrugPair {
	for i := range ev.drug.Pairs {
		if ev.drug.Pairs[i].Gene == gene {
			return &ev.drug.Pairs[i]
		}
	}
	return nil
}

// lookupValues returns, for one gene, the values the patient can match in
// a recommendation's lookup: one per consistent diplotype, "No Result"
// when nothing is known.
func (ev *evaluation) lookupValues(gene, recKey, recType string) []string {
	if recType == "allele_status" || recType == "no_result" && strings.HasPrefix(gene, "HLA-") {
		// recKey is "*15:02 positive"; find the allele the row is about.
		allele, _, _ := strings.Cut(recKey, " ")
		if pos, ok := ev.gt.HLA[gene+allele]; ok {
			if pos {
				return []string{allele + " positive"}
			}
			return []string{allele + " negative"}
		}
		return []string{"No Result"}
	}
	for _, f := range ev.forms {
		if f.gene == gene {
			return f.values
		}
	}
	out := ev.geneValues(gene)
	ev.forms = append(ev.forms, geneForms{gene, out})
	return out
}

// geneForms is lookupValues of one gene (a request names few genes: a
// slice searched in order beats a map).
type geneForms struct {
	gene   string
	values []string
}

// geneValues is lookupValues for a gene's diplotypes.
func (ev *evaluation) geneValues(gene string) []string {
	gg := ev.gt.Genes[gene]
	if gg == nil || gg.Uncallable != "" || len(gg.Diplotypes) == 0 {
		return []string{"No Result"}
	}
	// Rows are keyed by phenotype, activity score or (DPWG) diplotype, and
	// the DPWG rows' lookup_type does not always say which: offer every
	// form. They cannot collide ("Poor Metabolizer", "0.0", "*3/*3").
	var out []string
	for _, d := range gg.Diplotypes {
		out = append(out, ev.diplotypeForms(d)...)
	}
	return out
}

// hasForm reports whether v is one of diplotypeForms(d), without
// building them.
func hasForm(d calling.Diplotype, v string) bool {
	if v == d.Call.Phenotype || d.Call.ActivityScore != "" && v == d.Call.ActivityScore {
		return true
	}
	if d.Call.ActivityScore != "" && v == d.Call.ActivityScore+" ("+d.Call.Phenotype+")" {
		return true // DPWG's DPYD keys, "1.0 (Intermediate Metabolizer)"
	}
	if joinedIs(v, d.Alleles...) {
		return true
	}
	return len(d.Alleles) == 2 && joinedIs(v, d.Alleles[1], d.Alleles[0])
}

// joinedIs reports whether v is strings.Join(parts, "/").
func joinedIs(v string, parts ...string) bool {
	for i, p := range parts {
		if i > 0 {
			if v == "" || v[0] != '/' {
				return false
			}
			v = v[1:]
		}
		if !strings.HasPrefix(v, p) {
			return false
		}
		v = v[len(p):]
	}
	return v == ""
}

func (ev *evaluation) diplotypeForms(d calling.Diplotype) []string {
	out := []string{d.Call.Phenotype, d.String()}
	if d.Call.ActivityScore != "" {
		// DPWG keys DPYD rows by score and phenotype together ("1.0
		// (Intermediate Metabolizer)"); its "(Phenotyping)" rows are for
		// a measured enzyme activity and are never matched by a genotype.
		out = append(out, d.Call.ActivityScore, d.Call.ActivityScore+" ("+d.Call.Phenotype+")")
	}
	if len(d.Alleles) == 2 {
		out = append(out, d.Alleles[1]+"/"+d.Alleles[0])
	}
	return out
}

// populations chooses the recommendation populations that apply to the
// request through SelectPopulation. When context cannot decide, every
// population is evaluated and the most severe answer is used, and the
// returned note says so; when coded context and free text disagree, the
// two populations they name are evaluated and the note states the
// disagreement.
func (ev *evaluation) populations(recs []*engine.Recommendation) (pops []string, note string, notes []string) {
	ctx := population.PopulationContext{Codes: ev.req.IndicationCodes, Text: ev.req.Indication}
	if p := ev.req.Patient; p != nil {
		ctx.AgeYears, ctx.MonthsOnDrug = p.AgeYears, p.MonthsOnDrug
	}
	ch := ev.kb.pops.SelectPopulation(ev.drug.Name, ctx)
	if len(ch.Populations) <= 1 {
		return ch.Populations, ch.Reason, ch.Notes
	}
	if ch.Conflict {
		return ch.Populations, ch.Reason + "; both were evaluated and the most severe recommendation is shown", ch.Notes
	}
	note = fmt.Sprintf("the context does not say which guideline population applies (%s); every one was evaluated and the most severe recommendation is shown", strings.Join(quoteEach(ch.Populations), ", "))
	if ch.Reason != "" {
		note = ch.Reason + "; " + note
	}
	return ch.Populations, note, ch.Notes
}

func quoteEach(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		if s == "" {
			s = "general"
		}
		out[i] = s
	}
	return out
}

// recSeverity grades a recommendation (DESIGN.md §3): HIGH when it says to
// avoid the drug or use an alternative, MODERATE for a dose change or a
// conditional change, none otherwise.
func recSeverity(r *engine.Recommendation) engine.Severity {
	switch r.Actionability {
	case "yes":
		if r.AlternateDrug {
			return engine.SeverityHigh
		}
		for _, b := range r.Basis {
			switch b {
			case "text:Avoid", "text:alternative", "text:do not use", "text:contraindicat", "text:not recommended":
				return engine.SeverityHigh
			}
		}
		return engine.SeverityModerate
	case "conditional":
		return engine.SeverityModerate
	}
	return engine.SeverityNone
}

// matchRecs returns the drug's recommendation rows of one population that match
// the patient, one per consistent combination of lookup values, and for
// each row chosen by the partner-gene rule what it assumed.
//
// A gene the input says nothing about matches "No Result" rows. Where the
// guideline has no such row (CPIC's multi-gene tables), the gene is
// untested: the rows consistent with the genes that were given are
// grouped, and partnerChoice picks one per group from the guideline's
// rows, never from the mere existence of a row for a normal result of the
// untested gene; preTestAlerts asks for the untested gene.
func (ev *evaluation) matchRecs(pop string) ([]*engine.Recommendation, map[*engine.Recommendation]partnerNote) {
	var out []*engine.Recommendation
	// The drug's rows of pop, and the genes they look up as "No Result",
	// indexed at Build.
	var noResultRow map[string]bool
	var rows []*engine.Recommendation
	var keys [][]population.RecKey
	if dp := ev.kb.pops.Rows(ev.drug.Name); dp != nil {
		noResultRow, rows, keys = dp.NoResult[pop], dp.Rows[pop], dp.Keys[pop]
	}
	var groups map[string][]candidate
	var order []string
	for ri, r := range rows {
		ok := true
		given := 0
		var missing []population.RecKey
		var group strings.Builder
		for _, rk := range keys[ri] {
			g := rk.Gene
			vals := ev.lookupValues(g, rk.Lookup, rk.LookupType)
			unknown := len(vals) == 1 && vals[0] == "No Result"
			if unknown && !noResultRow[g] && len(r.Genes) > 1 {
				missing = append(missing, rk)
				group.WriteString(g + "?;")
				continue
			}
			if !unknown {
				given++
			}
			if !slices.Contains(vals, rk.Lookup) {
				ok = false
				break
			}
			group.WriteString(g + "=" + rk.Lookup + ";")
		}
		// A row matched only through untested genes says nothing about
		// this patient: with no genotype at all it must not read as "no
		// change needed".
		if !ok || given == 0 {
			continue
		}
		if len(missing) == 0 {
			out = append(out, r)
			continue
		}
		key := group.String()
		if groups == nil {
			groups = map[string][]candidate{}
		}
		if _, seen := groups[key]; !seen {
			order = append(order, key)
		}
		groups[key] = append(groups[key], candidate{r: r, missing: missing})
	}
	var notes map[*engine.Recommendation]partnerNote
	for _, key := range order {
		r, n := ev.partnerChoice(groups[key])
		if notes == nil {
			notes = map[*engine.Recommendation]partnerNote{}
		}
		out = append(out, r)
		notes[r] = n
	}
	return out, notes
}

// normalValue reports whether a lookup value is the normal result of its
// gene: an HLA allele negative, a normal phenotype, activity score 2.0.
func normalValue(v string) bool {
	return strings.HasSuffix(v, " negative") || strings.HasPrefix(v, "Normal") || v == "2.0"
}

// informative reports whether a matched row says anything about the
// patient's genotype (at least one gene is not "No Result").
func informative(r *engine.Recommendation) bool {
	for _, g := range r.Genes {
		if r.Lookup[g] != "No Result" {
			return true
		}
	}
	return false
}

func (ev *evaluation) genotypeAlerts() {
	recs := ev.kb.RecommendationsFor(ev.drug.Name)
	if ev.drug.Name == "warfarin" && ev.kb.Warfarin != nil {
		ev.warfarinAlerts()
		return
	}
	pops, popNote, popNotes := ev.populations(recs)
	var best *engine.Recommendation
	var bestNote partnerNote
	bestSev := engine.Severity(-1)
	ambiguous := false
	var answered []*engine.Recommendation
	for _, p := range pops {
		rows, notes := ev.matchRecs(p)
		for _, r := range rows {
			if !informative(r) {
				continue
			}
			answered = append(answered, r)
			s := recSeverity(r)
			if best != nil && s == bestSev && r.Text != best.Text {
				ambiguous = true
			}
			if s > bestSev {
				best, bestSev, bestNote = r, s, notes[r]
			}
		}
	}
	defer ev.holeAlerts(pops, answered)
	if best == nil {
		return
	}
	if bestSev == engine.SeverityNone {
		if ev.allNormal(best) && len(bestNote.untested) == 0 {
			// A normal result that needs no change: no alert, but say what
			// was checked.
			ev.res.Warnings = append(ev.res.Warnings, fmt.Sprintf(
				"%s: the genotype matches a %s recommendation that needs no change: %s", ev.drug.Name, best.Source, firstSentence(best.Text)))
			return
		}
		if ev.allNormal(best) {
			// A normal result of the genes given, the partner gene
			// untested: the pre-test alert asks for it, and the warning
			// says the advice rests on the genes given.
			ev.res.Warnings = append(ev.res.Warnings, fmt.Sprintf(
				"%s: the genotype matches a %s recommendation that needs no change: %s (%s)", ev.drug.Name, best.Source, firstSentence(best.Text), bestNote.text))
			return
		}
		// A result that is not normal but carries no dose or drug change
		// (an indeterminate phenotype) is shown as INFO with the guideline
		// text; a G6PD result that must be measured before a drug whose
		// deficient row says avoid is MODERATE (g6pdMeasureFirst).
		bestSev = engine.SeverityInfo
	}
	verb := ""
	if bestSev < engine.SeverityModerate {
		if deficient := ev.g6pdMeasureFirst(best); deficient != nil {
			bestSev = engine.SeverityModerate
			verb = fmt.Sprintf("G6PD enzyme activity must be measured before use (its row for a deficient result: %q)", strings.TrimSuffix(firstSentence(deficient.Text), "."))
		}
	}
	a := ev.alertFor(best, bestSev, verb)
	if len(bestNote.untested) > 0 {
		a.Message += fmt.Sprintf(" %s was not tested: testing it could change this recommendation.", strings.Join(bestNote.untested, " and "))
	}
	if popNote != "" {
		a.Assumptions = append(a.Assumptions, popNote)
	}
	a.Assumptions = append(a.Assumptions, popNotes...)
	if ambiguous {
		a.Assumptions = append(a.Assumptions, "more than one recommendation row fits the input; the most severe is shown")
	}
	if bestNote.text != "" {
		a.Assumptions = append(a.Assumptions, bestNote.text)
	}
	if ev.matched == nil {
		ev.matched = map[int]*engine.Recommendation{}
	}
	ev.matched[len(ev.res.Alerts)] = best
	ev.res.Alerts = append(ev.res.Alerts, a)
}

// allNormal reports whether every gene of a matched row that the input gave
// has its normal value.
func (ev *evaluation) allNormal(r *engine.Recommendation) bool {
	for _, g := range r.Genes {
		vals := ev.lookupValues(g, r.Lookup[g], r.LookupType[g])
		if len(vals) == 1 && vals[0] == "No Result" {
			continue
		}
		if !normalValue(r.Lookup[g]) {
			return false
		}
	}
	return true
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

// alertFor builds the genotype-confirmed alert of a matched row.
//
// verb is what the summary says the guideline says; "" words it by
// severity.
func (ev *evaluation) alertFor(r *engine.Recommendation, sev engine.Severity, verb string) engine.Alert {
	a := engine.Alert{
		Severity:       sev,
		Category:       engine.CategoryConfirmed,
		Action:         r.Text,
		Recommendation: r.Text,
		Classification: r.Classification,
		Population:     r.Population,
		Alternatives:   append([]string{}, r.Alternatives...),
		Guideline:      &engine.Guideline{Name: r.GuidelineName, URL: r.GuidelineURL},
		GuidanceSource: r.Source,
		Assumptions:    []string{},
	}
	// The primary gene is the first whose value is not normal, not the
	// gene's reference result (RYR1 "Uncertain Susceptibility") and not
	// No Result.
	given := func(g string) bool {
		vals := ev.lookupValues(g, r.Lookup[g], r.LookupType[g])
		return !(len(vals) == 1 && vals[0] == "No Result")
	}
	primary := ""
	for _, g := range r.Genes {
		v := r.Lookup[g]
		if v == "No Result" || !given(g) {
			continue
		}
		if primary == "" {
			primary = g
		}
		reference := ev.kb.isReference(population.RecKey{Gene: g, Lookup: v, LookupType: r.LookupType[g]})
		if !reference && !containsNormal(v) && !strings.HasSuffix(v, "negative") && v != "2.0" {
			primary = g
			break
		}
	}
	a.Gene = primary
	if p := ev.pair(primary); p != nil {
		a.EvidenceLevel = p.EvidenceLevel
	}
	var phen []string
	for _, g := range r.Genes {
		v := r.Lookup[g]
		if v == "No Result" || !given(g) {
			continue
		}
		call := engine.GenotypeCall{Gene: g}
		if gg := ev.gt.Genes[g]; gg != nil {
			for _, d := range gg.Diplotypes {
				if hasForm(d, v) {
					call.Diplotype, call.Phenotype, call.ActivityScore = d.String(), d.Call.Phenotype, d.Call.ActivityScore
					break
				}
			}
			a.Assumptions = append(a.Assumptions, gg.Assumptions...)
		} else {
			call.Phenotype = g + v
		}
		a.Genotype = append(a.Genotype, call)
		if call.Diplotype != "" {
			phen = append(phen, g+" "+call.Phenotype+" ("+call.Diplotype+")")
		} else {
			phen = append(phen, call.Phenotype)
		}
		if imp := r.Implications[g]; imp != "" && imp != "n/a" {
			a.Implications = append(a.Implications, g+": "+imp)
		}
	}
	ev.variantOf(&a)
	switch {
	case verb != "":
	case sev == engine.SeverityHigh:
		verb = "avoid or use an alternative"
	case sev == engine.SeverityModerate:
		verb = "change the dose or monitor"
	case sev == engine.SeverityInfo:
		verb = "no dose or drug change, with the note shown"
	}
	a.Message = ev.drug.Name + " with " + strings.Join(phen, " and ") + ": " + r.Source + " guideline says " + verb + "." + ev.sexNote(primary)
	return a
}

// containsNormal is strings.Contains(strings.ToLower(v), "normal"),
// without building the lower-case copy when v is ASCII.
func containsNormal(v string) bool {
	const w = "normal"
	for i := 0; i < len(v); i++ {
		if v[i] >= 0x80 {
			return strings.Contains(strings.ToLower(v), w)
		}
	}
	for i := 0; i+len(w) <= len(v); i++ {
		j := 0
		for j < len(w) && v[i+j]|0x20 == w[j] {
			j++
		}
		if j == len(w) {
			return true
		}
	}
	return false
}

// sexNote is " " + how an X-linked gene was read when the patient's sex
// was not given (calling.GeneGenotype.SexAssumption), for an alert's
// summary; "" otherwise.
func (ev *evaluation) sexNote(gene string) string {
	if gg := ev.gt.Genes[gene]; gg != nil && gg.SexAssumption != "" {
		return " " + gg.SexAssumption
	}
	return ""
}

// g6pdMeasureFirst returns, for a matched G6PD row of a result that does
// not decide deficiency (Variable: a heterozygous female; Indeterminate)
// and whose text asks for the enzyme activity to be measured, the same
// drug's and population's row for a deficient result when that row says
// to avoid the drug (HIGH); nil otherwise. CPIC's Variable row carries no
// dose or drug change, but the measurement decides between "no reason to
// avoid" and "avoid", so the alert is at least MODERATE with the
// measurement as its recommendation (issue 21).
func (ev *evaluation) g6pdMeasureFirst(r *engine.Recommendation) *engine.Recommendation {
	if len(r.Genes) != 1 || r.Genes[0] != "G6PD" || !strings.Contains(r.Text, "enzyme activity must be measured") {
		return nil
	}
	if v := r.Lookup["G6PD"]; v != "Variable" && v != "Indeterminate" {
		return nil
	}
	for _, d := range ev.kb.RecommendationsFor(ev.drug.Name) {
		if len(d.Genes) == 1 && d.Genes[0] == "G6PD" && d.Population == r.Population && d.Source == r.Source &&
			d.Lookup["G6PD"] == "Deficient" && recSeverity(d) == engine.SeverityHigh {
			return d
		}
	}
	return nil
}

// variantOf fills the alert's rsID, star allele and frequencies from the
// input variant behind the primary gene's non-default allele, if any.
func (ev *evaluation) variantOf(a *engine.Alert) {
	gg := ev.gt.Genes[a.Gene]
	if gg == nil || len(gg.Diplotypes) == 0 {
		return
	}
	g, _ := ev.kb.Gene(a.Gene)
	var allele string
	for _, n := range gg.Diplotypes[0].Alleles {
		if n != g.DefaultAllele && n != g.ReferenceAllele {
			allele = n
			break
		}
	}
	if allele == "" {
		return
	}
	if strings.HasPrefix(allele, "*") {
		a.StarAllele = allele
	}
	if gg.FromDiplotype {
		return // no rsID lies behind a supplied diplotype
	}
	al, _ := ev.kb.Allele(a.Gene, allele)
	for _, item := range gg.Variants {
		rs, _, _ := strings.Cut(item, ":")
		for _, kv := range al.Key {
			if kv.RsID != rs || kv.Ambiguous {
				continue
			}
			if a.Variant == "" {
				a.Variant = rs
			}
			if tv, ok := ev.kb.TrackedVariant(rs); ok && a.AFIndia == nil {
				a.Variant = rs
				a.AFIndia, a.AFGlobal = tv.AFIndia, tv.AFGlobal
			}
		}
	}
}

// sortAlerts orders alerts by severity, most severe first, then by
// category (categoryRank); equal alerts keep their order.
func sortAlerts(as []engine.Alert) {
	slices.SortStableFunc(as, func(a, b engine.Alert) int {
		if a.Severity != b.Severity {
			return cmp.Compare(b.Severity, a.Severity)
		}
		return cmp.Compare(categoryRank(a.Category), categoryRank(b.Category))
	})
}

// categoryRank orders alerts of one severity by category; an unknown
// category ranks first (0).
func categoryRank(c engine.Category) int {
	switch c {
	case engine.CategoryUnknown:
		return 1
	case engine.CategoryPopulationRisk:
		return 2
	case engine.CategoryNotInterpreted:
		return 3
	}
	return 0
}
