package evaluate

import (
	"fmt"
	"slices"
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
	m := newMerge(req, rd, parts)
	for p, res := range parts {
		m.addPart(p, res)
	}
	m.orderAlerts()
	m.citations()
	return m.out
}

// partRef names an item of a list of one ingredient's answer.
type partRef struct{ part, idx int }

// merge is the state of merging the ingredients' answers
// (evaluateCombination).
type merge struct {
	drugs []string
	parts []engine.Result
	out   engine.Result
	// alerts are every ingredient's alerts, unordered, and alertRefs where
	// each came from.
	alerts    []engine.Alert
	alertRefs []partRef
	// alertIDs maps an ingredient's alert ID to its merged ID.
	alertIDs map[partID]string
	// lists maps, per citation list kind, an ingredient's item to its
	// merged index; seen maps a list item's key to its merged index.
	lists map[engine.CitationKind]map[partRef]int
	seen  map[engine.CitationKind]map[string]int
}

// newMerge starts the merged answer from the first ingredient's.
func newMerge(req engine.Request, rd engine.DrugReading, parts []engine.Result) *merge {
	m := &merge{drugs: rd.Drugs, parts: parts, out: parts[0], alertIDs: map[partID]string{},
		lists: map[engine.CitationKind]map[partRef]int{}, seen: map[engine.CitationKind]map[string]int{}}
	out := &m.out
	out.Drug = req.Drug
	out.DrugNormalised = strings.Join(rd.Drugs, " + ")
	out.DrugRecognised = true
	out.DidYouMean = nil
	out.DrugReading = &rd
	out.Warnings = append([]string{}, readingWarnings(&rd)...)
	out.Warnings = append(out.Warnings, fmt.Sprintf("%q contains %d drugs with pharmacogenomic guidance (%s): each was checked and the alerts of all are shown, each naming its drug",
		req.Drug, len(rd.Drugs), strings.Join(rd.Drugs, ", ")))
	out.SaferAlternatives = nil
	ic := &out.IndianContext
	ic.EndemicRisks, ic.PopulationFrequencies, ic.CommunityNotes, ic.TraditionalMedicine = []engine.EndemicRisk{}, []engine.PopulationFrequency{}, []engine.CommunityNote{}, []engine.HerbNote{}
	return m
}

// addItem records item r of a list of kind under key: the merged index
// of an equal item already merged, else the index append gives it.
func (m *merge) addItem(kind engine.CitationKind, r partRef, key string, appendFn func() int) {
	if m.lists[kind] == nil {
		m.lists[kind] = map[partRef]int{}
		m.seen[kind] = map[string]int{}
	}
	if i, ok := m.seen[kind][key]; ok {
		m.lists[kind][r] = i
		return
	}
	i := appendFn()
	m.seen[kind][key] = i
	m.lists[kind][r] = i
}

// addPart merges ingredient p's answer: the highest sensitivity, the
// lowest confidence, its alerts (naming the drug), and the union of its
// alternatives, India context lists and warnings.
func (m *merge) addPart(p int, res engine.Result) {
	tier := map[string]int{"none": 0, "moderate": 1, "high": 2}
	conf := map[string]int{"low": 0, "medium": 1, "high": 2}
	out, ic := &m.out, &m.out.IndianContext
	if tier[res.Sensitivity] > tier[out.Sensitivity] {
		out.Sensitivity = res.Sensitivity
	}
	if conf[res.Confidence] < conf[out.Confidence] {
		out.Confidence = res.Confidence
	}
	for i, a := range res.Alerts {
		a.Drug = m.drugs[p]
		m.alerts = append(m.alerts, a)
		m.alertRefs = append(m.alertRefs, partRef{p, i})
	}
	for i, a := range res.SaferAlternatives {
		m.addItem(engine.CitesAlternative, partRef{p, i}, a.Name, func() int {
			out.SaferAlternatives = append(out.SaferAlternatives, a)
			return len(out.SaferAlternatives) - 1
		})
	}
	for i, x := range res.IndianContext.EndemicRisks {
		m.addItem(engine.CitesEndemicRisk, partRef{p, i}, x.Risk, func() int {
			ic.EndemicRisks = append(ic.EndemicRisks, x)
			return len(ic.EndemicRisks) - 1
		})
	}
	for i, x := range res.IndianContext.PopulationFrequencies {
		m.addItem(engine.CitesPopulationFrequency, partRef{p, i}, x.Variant+"|"+x.Gene, func() int {
			ic.PopulationFrequencies = append(ic.PopulationFrequencies, x)
			return len(ic.PopulationFrequencies) - 1
		})
	}
	for i, x := range res.IndianContext.CommunityNotes {
		m.addItem(engine.CitesCommunityNote, partRef{p, i}, x.Community+"|"+x.Finding, func() int {
			ic.CommunityNotes = append(ic.CommunityNotes, x)
			return len(ic.CommunityNotes) - 1
		})
	}
	for i, x := range res.IndianContext.TraditionalMedicine {
		m.addItem(engine.CitesTraditionalMedicine, partRef{p, i}, x.Herb+"|"+x.Effect, func() int {
			ic.TraditionalMedicine = append(ic.TraditionalMedicine, x)
			return len(ic.TraditionalMedicine) - 1
		})
	}
	for _, w := range res.Warnings {
		if !slices.Contains(out.Warnings, w) {
			out.Warnings = append(out.Warnings, w)
		}
	}
}

// orderAlerts orders the merged alerts (severity, then category) and
// gives them fresh IDs in that order, remembering each one's old ID; the
// overall severity is the first's.
func (m *merge) orderAlerts() {
	order := make([]int, len(m.alerts))
	for i := range order {
		order[i] = i
	}
	rank := map[engine.Category]int{engine.CategoryConfirmed: 0, engine.CategoryUnknown: 1, engine.CategoryPopulationRisk: 2, engine.CategoryNotInterpreted: 3}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := m.alerts[order[i]], m.alerts[order[j]]
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		return rank[a.Category] < rank[b.Category]
	})
	out := &m.out
	out.Alerts = make([]engine.Alert, len(m.alerts))
	for newI, oldI := range order {
		a := m.alerts[oldI]
		r := m.alertRefs[oldI]
		oldID := m.parts[r.part].Alerts[r.idx].ID
		a.ID = "alert-" + strconv.Itoa(newI+1)
		m.alertIDs[partID{r.part, oldID}] = a.ID
		out.Alerts[newI] = a
	}
	if out.SaferAlternatives == nil {
		out.SaferAlternatives = []engine.Alternative{}
	}
	out.OverallSeverity = engine.SeverityNone
	if len(out.Alerts) > 0 {
		out.OverallSeverity = out.Alerts[0].Severity
	}
}

// citations re-points every ingredient's citations at the merged alerts
// and lists, once each.
func (m *merge) citations() {
	m.out.SourceCitations = []engine.Citation{}
	seenCite := map[engine.Citation]bool{}
	for p, res := range m.parts {
		for _, c := range res.SourceCitations {
			switch c.Target.Kind {
			case engine.CitesAlert, engine.CitesAlertFrequencyIndia, engine.CitesAlertFrequencyGlobal:
				id, ok := m.alertIDs[partID{p, c.Target.Alert}]
				if !ok {
					continue
				}
				c.Target.Alert = id
			default:
				i, ok := m.lists[c.Target.Kind][partRef{p, c.Target.Index}]
				if !ok {
					continue
				}
				c.Target.Index = i
			}
			if seenCite[c] {
				continue
			}
			seenCite[c] = true
			m.out.SourceCitations = append(m.out.SourceCitations, c)
		}
	}
}

// partID names an alert of one ingredient's answer.
type partID struct {
	part int
	id   string
}
