package evaluate

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// indianContext fills the India-specific part of the result.
func (ev *evaluation) indianContext() {
	ic := engine.IndianContext{
		State:                 ev.req.State,
		Ethnicity:             ev.req.Ethnicity,
		EndemicRisks:          []engine.EndemicRisk{},
		PopulationFrequencies: []engine.PopulationFrequency{},
		CommunityNotes:        []engine.CommunityNote{},
		TraditionalMedicine:   []engine.HerbNote{},
	}
	if strings.TrimSpace(ev.req.State) != "" {
		st, ok := ev.state()
		ic.StateRecognised = &ok
		if ok {
			ic.StateNormalised = st.Name
			if ev.drug != nil {
				for _, r := range st.Risks {
					if slices.Contains(r.Drugs, ev.drug.Name) {
						ic.EndemicRisks = append(ic.EndemicRisks, engine.EndemicRisk{Risk: r.Risk, Disease: r.Disease, Drugs: r.Drugs, Note: r.Note})
					}
				}
			}
		} else {
			ev.res.Warnings = append(ev.res.Warnings, fmt.Sprintf(
				"state %q is not one of the 36 Indian states and union territories the knowledge covers; no state context was applied", ev.req.State))
		}
	}
	if strings.TrimSpace(ev.req.Ethnicity) != "" {
		cs := ev.communities
		recognised := len(cs) > 0
		ic.EthnicityRecognised = &recognised
		if !recognised {
			ev.res.Warnings = append(ev.res.Warnings, fmt.Sprintf(
				"ethnicity %q matches no community of the knowledge; no community context was applied", ev.req.Ethnicity))
		}
		if ev.drug != nil {
			genes := ev.drugGenes()
			for _, c := range cs {
				relevant := slices.Contains(c.Drugs, ev.drug.Name)
				for _, g := range c.Genes {
					relevant = relevant || slices.Contains(genes, g)
				}
				if relevant {
					ic.CommunityNotes = append(ic.CommunityNotes, engine.CommunityNote{Community: c.Name, Trait: c.Trait, Finding: c.Finding})
				}
			}
		}
	}
	if ev.drug != nil {
		pf, ok := ev.kb.popFreqs[ev.drug]
		if !ok {
			pf = ev.kb.populationFrequencies(ev.drugGenes())
		}
		ic.PopulationFrequencies = append(make([]engine.PopulationFrequency, 0, len(pf)), pf...)
		herbs, ok := ev.kb.herbs[ev.drug]
		if !ok {
			herbs = ev.kb.herbNotes(ev.drug.Name)
		}
		ic.TraditionalMedicine = append(ic.TraditionalMedicine, herbs...)
	}
	ev.res.IndianContext = ic
}

// alternatives lists the safer alternatives named by the matched
// recommendations, re-checking each against the same genotype: one the
// genotype makes HIGH is dropped with a warning.
func (ev *evaluation) alternatives() {
	seen := map[string]bool{}
	for _, a := range ev.res.Alerts {
		r := ev.byAlert[a.ID]
		if r == nil {
			continue
		}
		for _, name := range r.Alternatives {
			if seen[name] || name == ev.drug.Name {
				continue
			}
			seen[name] = true
			var sub engine.Result
			if _, covered := ev.kb.names.Drug(name); covered {
				alt := ev.req
				alt.Drug = name
				sub = ev.kb.evaluate(alt, ev.gt)
			} // else the re-check would only say DrugRecognised false
			if !sub.DrugRecognised {
				ev.res.SaferAlternatives = append(ev.res.SaferAlternatives, engine.Alternative{
					Name: name,
					Rationale: "named by the " + r.Source + " recommendation for " + r.GuidelineName +
						"; it has no pharmacogenomic guideline in the knowledge, so this genotype is not known to affect it",
				})
				continue
			}
			if sub.OverallSeverity == engine.SeverityHigh && hasConfirmed(sub.Alerts) {
				ev.res.Warnings = append(ev.res.Warnings,
					name+" is named as an alternative by the "+r.Source+" guideline but this genotype also makes it HIGH risk, so it is not suggested")
				continue
			}
			why := "named by the " + r.Source + " recommendation (" + r.GuidelineName + ")"
			switch {
			case hasConfirmed(sub.Alerts):
				why += "; re-checked against this genotype: " + severityWord(sub.OverallSeverity)
			case len(sub.Alerts) > 0:
				why += "; its own pharmacogenes were not all genotyped (see a check of " + name + ")"
			default:
				why += "; re-checked against this genotype: no pharmacogenomic alert"
			}
			ev.res.SaferAlternatives = append(ev.res.SaferAlternatives, engine.Alternative{Name: name, Rationale: why})
		}
	}
}

func hasConfirmed(as []engine.Alert) bool {
	for _, a := range as {
		if a.Category == engine.CategoryConfirmed && a.Severity >= engine.SeverityHigh {
			return true
		}
	}
	return false
}

func (ev *evaluation) completeness() engine.DataCompleteness {
	r := ev.req
	dc := engine.DataCompleteness{
		GenotypeProvided: len(r.Variants) > 0 || len(r.Diplotypes) > 0 || len(r.HLA) > 0 || len(r.GenesTested) > 0 ||
			len(r.Calls) > 0 || len(r.OutsideCalls) > 0,
		StateProvided:      strings.TrimSpace(r.State) != "",
		EthnicityProvided:  strings.TrimSpace(r.Ethnicity) != "",
		IndicationProvided: strings.TrimSpace(r.Indication) != "" || len(r.IndicationCodes) > 0,
		FieldsTotal:        4,
	}
	for _, b := range []bool{dc.GenotypeProvided, dc.StateProvided, dc.EthnicityProvided, dc.IndicationProvided} {
		if b {
			dc.FieldsPopulated++
		}
	}
	return dc
}

// confidence applies the rule of DESIGN.md §3, decided here exactly:
//
//	high   – the drug is recognised, every gene that matters for it is
//	         covered by the input, and either there is no alert or the top
//	         alert is genotype-confirmed with evidence level 1A or 1B;
//	low    – the drug is unknown, or no genotype was given and fewer than
//	         two context fields (state, ethnicity, indication) were given;
//	medium – otherwise.
func (ev *evaluation) confidence() string {
	dc := ev.res.DataCompleteness
	ctx := dc.FieldsPopulated
	if dc.GenotypeProvided {
		ctx--
	}
	if ev.drug == nil || (!dc.GenotypeProvided && ctx < 2) {
		return "low"
	}
	for _, a := range ev.res.Alerts {
		if a.Category == engine.CategoryUnknown {
			return "medium"
		}
	}
	if !dc.GenotypeProvided {
		return "medium"
	}
	if len(ev.res.Alerts) == 0 {
		return "high"
	}
	top := ev.res.Alerts[0]
	if top.Category == engine.CategoryConfirmed && (top.EvidenceLevel == "1A" || top.EvidenceLevel == "1B") {
		return "high"
	}
	return "medium"
}

// populationFrequencies lists the population frequencies of the tracked
// variants of genes, in knowledge order (Engine.popFreqs).
func (k *Engine) populationFrequencies(genes []string) []engine.PopulationFrequency {
	var out []engine.PopulationFrequency
	for _, v := range k.Variants {
		if !slices.Contains(genes, v.Gene) || (v.AFIndia == nil && v.AFGlobal == nil) {
			continue
		}
		out = append(out, engine.PopulationFrequency{
			Variant: v.RsID, Gene: v.Gene, Allele: v.AlleleLabel,
			AFIndia: v.AFIndia, AFIndiaBasis: v.AFIndiaBasis, AFGlobal: v.AFGlobal,
		})
	}
	return out
}

// herbNotes lists the herb interactions naming drug, in knowledge order
// (Engine.herbs).
func (k *Engine) herbNotes(drug string) []engine.HerbNote {
	var out []engine.HerbNote
	for _, h := range k.Herbs {
		if slices.Contains(h.Drugs, drug) {
			out = append(out, engine.HerbNote{
				Herb: h.Herb, Botanical: h.Botanical, Mechanism: h.Mechanism, Effect: h.Effect, Evidence: h.Evidence,
			})
		}
	}
	return out
}

// citations adds one citation per supported field.
func (ev *evaluation) citations() {
	res := ev.res
	// Room for every citation below, so the slice is allocated once (a
	// bound only: append still grows it if the count is passed).
	n := len(res.SaferAlternatives) + len(res.IndianContext.EndemicRisks) + len(res.IndianContext.PopulationFrequencies) +
		len(ev.communities) + len(res.IndianContext.TraditionalMedicine)
	for _, a := range res.Alerts {
		n += 4
		if r := ev.byAlert[a.ID]; r != nil {
			n += len(r.PMIDs)
		}
	}
	if len(res.SourceCitations) == 0 && n > cap(res.SourceCitations) {
		res.SourceCitations = make([]engine.Citation, 0, n)
	}
	cite := func(target engine.CitationTarget, source, level, url string) {
		if url == "" {
			return // nothing to point at: the field stays uncited rather than cited falsely
		}
		// evidence_level takes only the spec's values (1A, 1B, 2A, 2B); a
		// ClinPGx level 3 or 4 is named in the source text instead.
		if level != "" && !SpecEvidenceLevel(level) {
			source += " (ClinPGx level of evidence " + level + ")"
			level = ""
		}
		res.SourceCitations = append(res.SourceCitations, engine.Citation{Target: target, Source: source, EvidenceLevel: level, URL: url})
	}
	for _, a := range res.Alerts {
		target := engine.CitationTarget{Kind: engine.CitesAlert, Alert: a.ID}
		r := ev.byAlert[a.ID]
		if a.Guideline != nil {
			src := a.GuidanceSource + " guideline: " + a.Guideline.Name
			if r != nil && r.Source == "DPWG" {
				src += " (ClinPGx/PharmGKB annotation of the DPWG guideline, CC BY-SA 4.0)"
			}
			cite(target, src, a.EvidenceLevel, a.Guideline.URL)
			if r != nil {
				for _, pmid := range r.PMIDs {
					cite(target, "Guideline publication", "", "PMID:"+pmid)
				}
			}
		}
		if a.Variant != "" {
			if tv, ok := ev.kb.TrackedVariant(a.Variant); ok {
				if a.AFIndia != nil {
					cite(engine.CitationTarget{Kind: engine.CitesAlertFrequencyIndia, Alert: a.ID},
						tv.AFIndiaBasis+": "+ev.sourceText(tv.AFIndiaSourceIDs, ""), "", ev.sourceURL(tv.AFIndiaSourceIDs, ""))
				}
				if a.AFGlobal != nil {
					cite(engine.CitationTarget{Kind: engine.CitesAlertFrequencyGlobal, Alert: a.ID},
						tv.AFGlobalBasis+": "+ev.sourceText(tv.AFGlobalSourceIDs, ""), "", ev.sourceURL(tv.AFGlobalSourceIDs, ""))
				}
			}
		}
		if a.Category == engine.CategoryPopulationRisk {
			cite(target, ev.sourceText(ev.sourcesByAlert[a.ID], ""), "", ev.sourceURL(ev.sourcesByAlert[a.ID], ""))
		}
	}
	for i, alt := range res.SaferAlternatives {
		for _, a := range res.Alerts {
			if r := ev.byAlert[a.ID]; r != nil && slices.Contains(r.Alternatives, alt.Name) {
				cite(engine.CitationTarget{Kind: engine.CitesAlternative, Index: i}, r.Source+" guideline: "+r.GuidelineName, a.EvidenceLevel, r.GuidelineURL)
				break
			}
		}
	}
	if st, ok := ev.state(); ok {
		n := 0
		for _, r := range st.Risks {
			if ev.drug == nil || !slices.Contains(r.Drugs, ev.drug.Name) {
				continue
			}
			cite(engine.CitationTarget{Kind: engine.CitesEndemicRisk, Index: n}, ev.sourceText(r.SourceIDs, ""), "", ev.sourceURL(r.SourceIDs, ""))
			n++
		}
	}
	if cs, ok := ev.kb.pfCites[ev.drug]; ok && ev.drug != nil {
		// The drug's population frequencies are Engine.popFreqs[drug].
		res.SourceCitations = append(res.SourceCitations, cs...)
	} else {
		res.SourceCitations = append(res.SourceCitations, ev.kb.frequencyCitations(res.IndianContext.PopulationFrequencies)...)
	}
	ci := 0
	for _, c := range ev.communities {
		for _, n := range res.IndianContext.CommunityNotes {
			if n.Community == c.Name && n.Finding == c.Finding {
				cite(engine.CitationTarget{Kind: engine.CitesCommunityNote, Index: ci}, ev.sourceText(c.SourceIDs, ""), "", ev.sourceURL(c.SourceIDs, ""))
				ci++
				break
			}
		}
	}
	if ev.drug != nil {
		cs, ok := ev.kb.herbCites[ev.drug]
		if !ok {
			cs = ev.kb.herbCitations(ev.drug.Name)
		}
		res.SourceCitations = append(res.SourceCitations, cs...)
	}
}

// frequencyCitations are the citations of population frequencies pfs
// (IndianContext.PopulationFrequencies), one per frequency whose source
// has a URL; computed at New per drug (Engine.pfCites).
func (k *Engine) frequencyCitations(pfs []engine.PopulationFrequency) []engine.Citation {
	var out []engine.Citation
	for i, pf := range pfs {
		if tv, ok := k.TrackedVariant(pf.Variant); ok {
			ids := tv.AFIndiaSourceIDs
			if len(ids) == 0 {
				ids = tv.AFGlobalSourceIDs
			}
			if url := k.sourceURL(ids, ""); url != "" {
				out = append(out, engine.Citation{Target: engine.CitationTarget{Kind: engine.CitesPopulationFrequency, Index: i}, Source: k.sourceText(ids, ""), URL: url})
			}
		}
	}
	return out
}

// herbCitations are the citations of the herb notes of drug
// (IndianContext.TraditionalMedicine); computed at New per drug
// (Engine.herbCites).
func (k *Engine) herbCitations(drug string) []engine.Citation {
	var out []engine.Citation
	hi := 0
	for _, h := range k.Herbs {
		if slices.Contains(h.Drugs, drug) {
			if url := k.sourceURL(h.SourceIDs, ""); url != "" {
				out = append(out, engine.Citation{Target: engine.CitationTarget{Kind: engine.CitesTraditionalMedicine, Index: hi}, Source: k.sourceText(h.SourceIDs, ""), URL: url})
			}
			hi++
		}
	}
	return out
}

// sourceText is Engine.sourceText.
func (ev *evaluation) sourceText(ids []string, prefer string) string {
	return ev.kb.sourceText(ids, prefer)
}

// sourceURL is Engine.sourceURL.
func (ev *evaluation) sourceURL(ids []string, prefer string) string {
	return ev.kb.sourceURL(ids, prefer)
}

// sourceText names the sources of a row, preferring ids with prefix.
func (k *Engine) sourceText(ids []string, prefer string) string {
	var parts []string
	for _, id := range sortPreferred(ids, prefer) {
		if s, ok := k.Source(id); ok {
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

// sourceURL returns the first URL or PMID among a row's sources.
func (k *Engine) sourceURL(ids []string, prefer string) string {
	for _, id := range sortPreferred(ids, prefer) {
		if s, ok := k.Source(id); ok {
			if s.URL != "" {
				return s.URL
			}
			if s.PMID != "" {
				return "PMID:" + s.PMID
			}
		}
	}
	// No source of the row has a link or PMID: the literature or press
	// reference itself stands in the url (spec §2.4 allows a literature
	// identifier there), e.g. "Lambert & Cormier 2001 Pharmacotherapy
	// 21(4):509-512".
	for _, id := range sortPreferred(ids, prefer) {
		if s, ok := k.Source(id); ok && s.Title != "" {
			return s.Title
		}
	}
	return ""
}

func sortPreferred(ids []string, prefer string) []string {
	if prefer == "" {
		return ids
	}
	out := append([]string{}, ids...)
	sort.SliceStable(out, func(i, j int) bool {
		return prefer != "" && strings.HasPrefix(out[i], prefer) && !strings.HasPrefix(out[j], prefer)
	})
	return out
}

// SpecEvidenceLevel reports whether level is one of the evidence levels a
// citation may carry (interface spec §2.4): 1A, 1B, 2A, 2B.
func SpecEvidenceLevel(level string) bool {
	switch level {
	case "1A", "1B", "2A", "2B":
		return true
	}
	return false
}

// severityWord names a severity in the prose of a rationale, in the words
// the rationale has always used (the spec's severity names).
func severityWord(s engine.Severity) string {
	switch s {
	case engine.SeverityHigh:
		return "HIGH"
	case engine.SeverityModerate:
		return "MODERATE"
	case engine.SeverityInfo:
		return "INFO"
	}
	return "NONE"
}
