package evaluate

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
)

// evaluateCombination answers a request whose drug reads as more than one
// covered drug (a combination product such as clopidogrel + atorvastatin,
// an ingredient list, or a name listed for two drugs). Each covered drug
// is evaluated on its own with the same patient facts, and the answers are
// merged into one:
//
//   - alerts: every ingredient's alerts, each naming its drug in "drug",
//     ordered by severity as usual, so overall_severity is the most severe
//     of any ingredient;
//   - sensitivity: the highest tier of the ingredients;
//   - safer_alternatives, indian_context lists, warnings: the union;
//   - confidence: the lowest of the ingredients;
//   - source_citations: each ingredient's, re-pointed at the merged alerts
//     (fresh IDs in merged order) and lists.
//
// drug_normalised is the covered drugs joined with " + ". gt is a genotype
// interpreted elsewhere (EvaluateSample), or nil to interpret req's.
func (k *Engine) evaluateCombination(req engine.Request, rd engine.DrugReading, gt *calling.Genotype) engine.Result {
	parts := make([]engine.Result, len(rd.Drugs))
	for i, d := range rd.Drugs {
		sub := req
		sub.Drug = d
		parts[i] = k.evaluateDrug(sub, gt, nil, true)
	}
	out := parts[0]
	out.Drug = req.Drug
	out.DrugNormalised = strings.Join(rd.Drugs, " + ")
	out.DrugRecognised = true
	out.DidYouMean = nil
	out.DrugReading = &rd
	out.Warnings = append([]string{}, readingWarnings(&rd)...)
	out.Warnings = append(out.Warnings, fmt.Sprintf("%q contains %d drugs with pharmacogenomic guidance (%s): each was checked and the alerts of all are shown, each naming its drug",
		req.Drug, len(rd.Drugs), strings.Join(rd.Drugs, ", ")))

	tier := map[string]int{"none": 0, "moderate": 1, "high": 2}
	conf := map[string]int{"low": 0, "medium": 1, "high": 2}
	type ref struct{ part, idx int }
	alertIDs := map[partID]string{}
	var alerts []engine.Alert
	var alertRefs []ref
	altIdx := map[ref]int{}
	var alts []engine.Alternative
	lists := map[string]map[ref]int{}
	var ic engine.IndianContext = parts[0].IndianContext
	ic.EndemicRisks, ic.PopulationFrequencies, ic.CommunityNotes, ic.TraditionalMedicine = []engine.EndemicRisk{}, []engine.PopulationFrequency{}, []engine.CommunityNote{}, []engine.HerbNote{}
	addList := func(name string, r ref, key string, seen map[string]int, appendFn func() int) {
		if lists[name] == nil {
			lists[name] = map[ref]int{}
		}
		if i, ok := seen[key]; ok {
			lists[name][r] = i
			return
		}
		i := appendFn()
		seen[key] = i
		lists[name][r] = i
	}
	seenAlt, seenRisk, seenFreq, seenNote, seenHerb := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	for p, res := range parts {
		if tier[res.Sensitivity] > tier[out.Sensitivity] {
			out.Sensitivity = res.Sensitivity
		}
		if conf[res.Confidence] < conf[out.Confidence] {
			out.Confidence = res.Confidence
		}
		for i, a := range res.Alerts {
			a.Drug = rd.Drugs[p]
			alerts = append(alerts, a)
			alertRefs = append(alertRefs, ref{p, i})
		}
		for i, a := range res.SaferAlternatives {
			r := ref{p, i}
			if j, ok := seenAlt[a.Name]; ok {
				altIdx[r] = j
				continue
			}
			seenAlt[a.Name] = len(alts)
			altIdx[r] = len(alts)
			alts = append(alts, a)
		}
		for i, x := range res.IndianContext.EndemicRisks {
			addList("indian_context.endemic_risks", ref{p, i}, x.Risk, seenRisk, func() int {
				ic.EndemicRisks = append(ic.EndemicRisks, x)
				return len(ic.EndemicRisks) - 1
			})
		}
		for i, x := range res.IndianContext.PopulationFrequencies {
			addList("indian_context.population_frequencies", ref{p, i}, x.Variant+"|"+x.Gene, seenFreq, func() int {
				ic.PopulationFrequencies = append(ic.PopulationFrequencies, x)
				return len(ic.PopulationFrequencies) - 1
			})
		}
		for i, x := range res.IndianContext.CommunityNotes {
			addList("indian_context.community_notes", ref{p, i}, x.Community+"|"+x.Finding, seenNote, func() int {
				ic.CommunityNotes = append(ic.CommunityNotes, x)
				return len(ic.CommunityNotes) - 1
			})
		}
		for i, x := range res.IndianContext.TraditionalMedicine {
			addList("indian_context.traditional_medicine", ref{p, i}, x.Herb+"|"+x.Effect, seenHerb, func() int {
				ic.TraditionalMedicine = append(ic.TraditionalMedicine, x)
				return len(ic.TraditionalMedicine) - 1
			})
		}
		for _, w := range res.Warnings {
			if !contains(out.Warnings, w) {
				out.Warnings = append(out.Warnings, w)
			}
		}
	}
	// Order the merged alerts; remember where each went.
	order := make([]int, len(alerts))
	for i := range order {
		order[i] = i
	}
	rank := map[engine.Category]int{engine.CategoryConfirmed: 0, engine.CategoryUnknown: 1, engine.CategoryPopulationRisk: 2, engine.CategoryNotInterpreted: 3}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := alerts[order[i]], alerts[order[j]]
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		return rank[a.Category] < rank[b.Category]
	})
	// Merged alerts get fresh IDs in their merged order; citations follow.
	out.Alerts = make([]engine.Alert, len(alerts))
	for newI, oldI := range order {
		a := alerts[oldI]
		r := alertRefs[oldI]
		oldID := parts[r.part].Alerts[r.idx].ID
		a.ID = "alert-" + strconv.Itoa(newI+1)
		alertIDs[partID{r.part, oldID}] = a.ID
		out.Alerts[newI] = a
	}
	out.SaferAlternatives = alts
	if out.SaferAlternatives == nil {
		out.SaferAlternatives = []engine.Alternative{}
	}
	out.IndianContext = ic
	out.OverallSeverity = engine.SeverityNone
	if len(out.Alerts) > 0 {
		out.OverallSeverity = out.Alerts[0].Severity
	}
	listOf := map[engine.CitationKind]string{
		engine.CitesAlternative:         "safer_alternatives",
		engine.CitesEndemicRisk:         "indian_context.endemic_risks",
		engine.CitesPopulationFrequency: "indian_context.population_frequencies",
		engine.CitesCommunityNote:       "indian_context.community_notes",
		engine.CitesTraditionalMedicine: "indian_context.traditional_medicine",
	}
	lists["safer_alternatives"] = altIdx
	out.SourceCitations = []engine.Citation{}
	seenCite := map[engine.Citation]bool{}
	for p, res := range parts {
		for _, c := range res.SourceCitations {
			switch c.Target.Kind {
			case engine.CitesAlert, engine.CitesAlertFrequencyIndia, engine.CitesAlertFrequencyGlobal:
				id, ok := alertIDs[partID{p, c.Target.Alert}]
				if !ok {
					continue
				}
				c.Target.Alert = id
			default:
				i, ok := lists[listOf[c.Target.Kind]][ref{p, c.Target.Index}]
				if !ok {
					continue
				}
				c.Target.Index = i
			}
			if seenCite[c] {
				continue
			}
			seenCite[c] = true
			out.SourceCitations = append(out.SourceCitations, c)
		}
	}
	return out
}

// partID names an alert of one ingredient's answer.
type partID struct {
	part int
	id   string
}
