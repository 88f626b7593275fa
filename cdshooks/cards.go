package cdshooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/fhir"
)

// MaxSummaryRunes bounds a card summary: CDS Hooks requires fewer than 140
// characters.
const MaxSummaryRunes = 139

// Coding systems of the codings pgxsafety writes on cards.
const (
	TopicSystem          = "urn:pgxsafety:cds-topic"
	OverrideReasonSystem = "urn:pgxsafety:override-reason"
)

// checked is one drug of one order with its engine result.
type checked struct {
	order fhir.MedicationOrder
	drug  fhir.DrugMatch
	req   engine.Request
	res   engine.Result
}

// failedCheck is a drug the engine could not evaluate.
type failedCheck struct {
	order fhir.MedicationOrder
	drug  fhir.DrugMatch
	err   error
}

// cardBuilder turns the results of one hook call into cards.
type cardBuilder struct {
	s                *Server
	call             *hookCall
	data             map[string]*keyData
	patient          fhir.PatientFacts
	genomics         fhir.Genomics
	active           fhir.Orders
	conditions       []fhir.Condition
	results          []checked
	failed           []failedCheck
	unreadableDrafts []fhir.Issue
	// unidentified are the draft orders whose medication names no drug of
	// the knowledge; partlyRead those of which a part names none.
	unidentified []fhir.MedicationOrder
	partlyRead   []fhir.MedicationOrder
	// unmatched are the order-select selections that name no draft order
	// pgxsafety could read.
	unmatched []string
	// idlessChecked counts the draft orders without an id checked at
	// order-select (they cannot be matched to a selection).
	idlessChecked int
}

// indication is the order's reasonCode text; without one, the patient's
// active Conditions (the conditions prefetch) stand for it.
func (b *cardBuilder) indication(o fhir.MedicationOrder) string {
	if o.Indication != "" {
		return o.Indication
	}
	var texts []string
	for _, c := range b.conditions {
		if c.Text != "" {
			texts = append(texts, c.Text)
		}
	}
	return strings.Join(texts, "; ")
}

// indicationCodes are the order's reasonCode codings and the codings of
// the patient's active Conditions, for the engine's code-based population
// selection (which decides across all of them). Codings without a system
// or a code are left out: the engine refuses them.
func (b *cardBuilder) indicationCodes(o fhir.MedicationOrder) []engine.Coding {
	var out []engine.Coding
	seen := map[string]bool{}
	add := func(c fhir.Coding) {
		if c.System == "" || c.Code == "" || seen[c.System+"|"+c.Code] {
			return
		}
		seen[c.System+"|"+c.Code] = true
		out = append(out, engine.Coding{System: c.System, Code: c.Code, Display: c.Display})
	}
	for _, c := range o.IndicationCodes {
		add(c)
	}
	for _, cd := range b.conditions {
		for _, c := range cd.Codes {
			add(c)
		}
	}
	return out
}

// uninterpreted returns the genomic results present but not interpreted
// that may concern gene.
func (b *cardBuilder) uninterpreted(gene string) []fhir.Uninterpreted {
	if gene == "" {
		return nil
	}
	return b.genomics.UninterpretedFor(gene)
}

// genomicsUnavailable reports whether the patient's genomic results could
// not be retrieved (an OperationOutcome prefetch with no FHIR server to ask
// instead, or a failing FHIR server): a result may exist.
func (b *cardBuilder) genomicsUnavailable() bool {
	kd := b.data[KeyGenomics]
	return kd != nil && kd.Error != ""
}

// build makes the cards: one per engine alert (finding), one per lab
// implication pgxsafety could not check, one for genomic data that could
// not be used, one per draft order that could not be read or checked.
// Critical cards come first, then warnings, then information.
func (b *cardBuilder) build() []Card {
	var cards []Card
	pgxRelevant := false
	for _, c := range b.results {
		if c.res.DrugRecognised && c.res.Sensitivity != "none" {
			pgxRelevant = true
		}
		for i := range c.res.Alerts {
			cards = append(cards, b.alertCard(c, i))
		}
		for _, im := range b.genomics.Implications {
			if im.Drug == c.drug.Drug && !im.Resolved {
				cards = append(cards, b.implicationCard(c, im))
			}
		}
	}
	if pgxRelevant {
		if card, ok := b.genomicDataCard(); ok {
			cards = append(cards, card)
		}
	}
	for _, f := range b.failed {
		cards = append(cards, b.failedCard(f))
	}
	for _, sel := range b.unmatched {
		cards = append(cards, b.unmatchedCard(sel))
	}
	for _, is := range b.unreadableDrafts {
		cards = append(cards, b.unreadableCard(is))
	}
	for _, o := range b.unidentified {
		cards = append(cards, b.unidentifiedCard(o))
	}
	for _, o := range b.partlyRead {
		cards = append(cards, b.partlyReadCard(o))
	}
	rank := map[string]int{IndicatorCritical: 0, IndicatorWarning: 1, IndicatorInfo: 2}
	sort.SliceStable(cards, func(i, j int) bool { return rank[cards[i].Indicator] < rank[cards[j].Indicator] })
	cards = b.uniqueUUIDs(cards)
	if cards == nil {
		cards = []Card{}
	}
	return cards
}

// uniqueUUIDs makes every card and suggestion uuid of a response unique: a
// card identical to an earlier one is dropped; a different card whose uuid
// collides with an earlier uuid gets a distinct uuid derived from it (its
// suggestions and SMART link follow), so the first card keeps its stable
// uuid.
func (b *cardBuilder) uniqueUUIDs(cards []Card) []Card {
	seen := map[string]bool{}
	firstJSON := map[string]string{}
	fresh := func(id string) string {
		for n := 1; seen[id]; n++ {
			id = stableUUID(id, "collision", fmt.Sprint(n))
		}
		return id
	}
	var out []Card
	for _, c := range cards {
		js, _ := json.Marshal(c)
		if first, ok := firstJSON[c.UUID]; ok && first == string(js) {
			continue
		}
		if seen[c.UUID] {
			id := fresh(c.UUID)
			for i := range c.Suggestions {
				c.Suggestions[i].UUID = stableUUID(id, "suggestion", c.Suggestions[i].Label)
			}
			for i, l := range c.Links {
				if l.Type == "smart" {
					var ac struct {
						Drug string `json:"drug"`
					}
					_ = json.Unmarshal([]byte(l.AppContext), &ac)
					if nl, ok := b.smartLink(id, ac.Drug); ok {
						c.Links[i] = nl
					}
				}
			}
			c.UUID = id
		} else {
			firstJSON[c.UUID] = string(js)
		}
		seen[c.UUID] = true
		for i := range c.Suggestions {
			c.Suggestions[i].UUID = fresh(c.Suggestions[i].UUID)
			seen[c.Suggestions[i].UUID] = true
		}
		out = append(out, c)
	}
	return out
}

// indicator maps an engine severity to a card indicator.
func indicator(sev engine.Severity) string {
	switch sev {
	case engine.SeverityHigh:
		return IndicatorCritical
	case engine.SeverityModerate:
		return IndicatorWarning
	}
	return IndicatorInfo
}

// SeverityName is the spec's name of a severity ("HIGH"), from which the
// cards' identities are derived and which the review page shows.
func SeverityName(s engine.Severity) string {
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

// CategoryCode is the card topic code of an alert category (the same
// names as the REST answer's category), which the review page shows too.
func CategoryCode(c engine.Category) string {
	switch c {
	case engine.CategoryConfirmed:
		return "genotype-confirmed"
	case engine.CategoryUnknown:
		return "genotype-unknown"
	case engine.CategoryPopulationRisk:
		return "population-risk"
	case engine.CategoryNotInterpreted:
		return "input-not-interpreted"
	}
	return ""
}

// stableUUID derives a UUID (RFC 9562 layout, version 8: custom) from the
// parts. The same finding for the same patient and order gives the same
// uuid in every call, so a retried call is idempotent and order-sign can
// recognise a card shown at order-select.
func stableUUID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	b := h.Sum(nil)[:16]
	b[6] = b[6]&0x0f | 0x80
	b[8] = b[8]&0x3f | 0x80
	x := hex.EncodeToString(b)
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// truncate bounds s to MaxSummaryRunes runes.
func truncate(s string) string { return cutRunes(s, MaxSummaryRunes) }

// cutRunes collapses white space in s and cuts it to max runes, the last
// an ellipsis when anything was cut.
func cutRunes(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return strings.TrimSpace(string([]rune(s)[:max-1])) + "…"
}

// esc escapes text for GitHub-flavoured Markdown inline use.
func esc(s string) string {
	if !needsEsc(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '~', '#':
			b.WriteByte('\\')
		case '\n', '\r':
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}

// needsEsc reports whether esc would change s: a Markdown character, a
// line break, or a byte that is not valid UTF-8 (esc writes U+FFFD for it).
func needsEsc(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '~', '#', '\n', '\r':
			return true
		}
	}
	return !utf8.ValidString(s)
}

func capitalise(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return strings.ToUpper(string(r)) + s[n:]
}

// genotypeText names an alert's genotype ("CYP2C19 Poor Metabolizer (*2/*2)").
func genotypeText(a engine.Alert) string {
	var parts []string
	for _, g := range a.Genotype {
		if g.Diplotype != "" {
			parts = append(parts, fmt.Sprintf("%s %s (%s)", g.Gene, g.Phenotype, g.Diplotype))
		} else {
			parts = append(parts, g.Phenotype)
		}
	}
	return strings.Join(parts, " and ")
}

// alternativesOf returns the alert's alternatives that the engine
// re-checked against the same genotype (safer_alternatives).
func alternativesOf(res engine.Result, a engine.Alert) []engine.Alternative {
	var out []engine.Alternative
	for _, name := range a.Alternatives {
		for _, sa := range res.SaferAlternatives {
			if sa.Name == name {
				out = append(out, sa)
			}
		}
	}
	return out
}

// cardID derives a card's uuid from the patient, the kind of card and its
// content (order, drug, finding). The knowledge version is not part of it:
// a card whose content a new knowledge version leaves unchanged is the
// same card.
func (b *cardBuilder) cardID(kind string, parts ...string) string {
	return stableUUID(append([]string{kind, b.call.patientID}, parts...)...)
}

// alertCard builds the card of one engine alert.
func (b *cardBuilder) alertCard(c checked, i int) Card {
	a := c.res.Alerts[i]
	drug := c.drug.Drug
	alts := alternativesOf(c.res, a)
	parts := []string{orderName(c.order), drug, CategoryCode(a.Category), a.Gene, SeverityName(a.Severity), a.Message, a.Recommendation}
	if a.Category == engine.CategoryUnknown && b.genomicsUnavailable() {
		// A different card from "no result available": order-sign must
		// not suppress one as the other.
		parts = append(parts, "genomics-unavailable")
	}
	if a.Category == engine.CategoryUnknown && len(b.uninterpreted(a.Gene)) > 0 {
		// A result exists but was not interpreted: never the same card
		// as "no result available".
		parts = append(parts, "genomics-uninterpreted")
		for _, u := range b.uninterpreted(a.Gene) {
			parts = append(parts, u.Ref)
		}
	}
	id := b.cardID("alert", parts...)
	card := Card{
		UUID:      id,
		Indicator: indicator(a.Severity),
		Summary:   truncate(b.summary(c, a, alts)),
		Detail:    b.alertDetail(c, i, alts),
		Source:    b.source(c, a),
	}
	card.Suggestions = b.suggestions(c, a, alts, id)
	if len(card.Suggestions) > 0 {
		card.SelectionBehavior = "at-most-one"
	}
	card.OverrideReasons = overrideReasons(a.Category)
	card.Links = b.links(a, id, drug)
	return card
}

// summary is a card's one line: what the finding is and what the matched
// guideline row says (never a verb of another kind of row), within
// MaxSummaryRunes.
func (b *cardBuilder) summary(c checked, a engine.Alert, alts []engine.Alternative) string {
	drug := capitalise(c.drug.Drug)
	src := firstNonEmpty(a.GuidanceSource, "CPIC")
	switch a.Category {
	case engine.CategoryConfirmed:
		return confirmedSummary(drug, src, a, alts)
	case engine.CategoryUnknown:
		level := ""
		if d, ok := b.s.names.Drug(c.drug.Drug); ok {
			for _, p := range d.Pairs {
				if p.Gene == a.Gene {
					level = " (CPIC level " + p.CPICLevel + ")"
				}
			}
		}
		if us := b.uninterpreted(a.Gene); len(us) > 0 {
			// A result is present but was not interpreted: never "no
			// result — order a test".
			for _, u := range us {
				if !u.AnyGene {
					return fmt.Sprintf("%s: %s result present but not interpreted — review the lab report", drug, a.Gene)
				}
			}
			return fmt.Sprintf("%s: no %s result read; a genomic result that may be one was not interpreted — review", drug, a.Gene)
		}
		if !a.TestRecommended {
			// The engine's review alert: a result was given but could not
			// be interpreted.
			return fmt.Sprintf("%s: the %s result given could not be interpreted — review it before prescribing", drug, a.Gene)
		}
		if b.genomicsUnavailable() {
			// A result may exist: do not advise a test the patient may
			// already have had.
			return fmt.Sprintf("%s: %s results could not be retrieved — check the lab record before ordering a test", drug, a.Gene)
		}
		if calledGene(c.res, a.Gene) {
			// A reading from part of the gene's positions.
			return fmt.Sprintf("%s: the %s result may be incomplete (not every position reported) — confirm before relying on it", drug, a.Gene)
		}
		return fmt.Sprintf("%s: no %s result available — consider %s genotyping first%s", drug, a.Gene, a.Gene, level)
	case engine.CategoryNotInterpreted:
		return fmt.Sprintf("%s: part of the drug input could not be identified — it was not checked", drug)
	}
	return fmt.Sprintf("%s: India context — %s", drug, a.Message)
}

// calledGene reports whether the result holds a diplotype of gene.
func calledGene(res engine.Result, gene string) bool {
	for _, g := range res.Genotype {
		if g.Gene == gene && g.Diplotype != "" {
			return true
		}
	}
	return false
}

// confirmedSummary is the summary of a finding from the patient's
// genotype. A HIGH finding says avoid (with the re-checked alternatives);
// any other says what the matched row recommends, in its own words: a
// dose change, a conditional change, or no change with a note (G6PD
// "Variable": measure enzyme activity). The genotype is shortened, then
// the row's text cut, to keep within MaxSummaryRunes; the detail has both
// in full.
func confirmedSummary(drug, src string, a engine.Alert, alts []engine.Alternative) string {
	says := ""
	switch {
	case a.Severity == engine.SeverityHigh && len(alts) > 0:
		names := make([]string, len(alts))
		for i, x := range alts {
			names[i] = x.Name
		}
		says = "avoid; consider " + strings.Join(names, " or ")
	case a.Severity == engine.SeverityHigh:
		says = "avoid or use an alternative"
	case strings.TrimSpace(a.Recommendation) != "":
		says = strings.Join(strings.Fields(a.Recommendation), " ")
	case a.Severity == engine.SeverityModerate:
		says = "change the dose or monitor"
	default:
		says = "see the guideline's note"
	}
	heads := []string{
		fmt.Sprintf("%s: %s — %s: ", drug, genotypeText(a), src),
		fmt.Sprintf("%s: %s — %s: ", drug, phenotypeText(a), src),
		fmt.Sprintf("%s — %s: ", drug, src),
	}
	for _, h := range heads {
		if utf8.RuneCountInString(h)+utf8.RuneCountInString(says) <= MaxSummaryRunes {
			return h + says
		}
	}
	// Cut the row's text at a word, keeping the longest head that leaves
	// room for a useful part of it.
	head := heads[len(heads)-1]
	for _, h := range heads {
		if MaxSummaryRunes-utf8.RuneCountInString(h) >= 60 {
			head = h
			break
		}
	}
	room := MaxSummaryRunes - utf8.RuneCountInString(head) - 1
	cut := string([]rune(says)[:room])
	switch {
	case strings.LastIndex(cut, ". ") > room/2:
		// End at the last whole sentence that fits (the space after it
		// is within room).
		cut = cut[:strings.LastIndex(cut, ". ")+1] + " "
	case strings.LastIndexByte(cut, ' ') > room/2:
		cut = strings.TrimRight(cut[:strings.LastIndexByte(cut, ' ')], " ,;:")
	}
	return head + cut + "…"
}

// phenotypeText names an alert's genotype by gene and phenotype only
// ("CYP2C19 Poor Metabolizer").
func phenotypeText(a engine.Alert) string {
	var parts []string
	for _, g := range a.Genotype {
		if g.Diplotype != "" {
			parts = append(parts, g.Gene+" "+g.Phenotype)
		} else {
			parts = append(parts, g.Phenotype)
		}
	}
	return strings.Join(parts, " and ")
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

func httpsURL(u string) bool { return strings.HasPrefix(u, "https://") }

func (b *cardBuilder) source(c checked, a engine.Alert) Source {
	topic := &Coding{System: TopicSystem, Code: CategoryCode(a.Category), Display: map[engine.Category]string{
		engine.CategoryConfirmed:      "Pharmacogenomic finding from the patient's genotype",
		engine.CategoryUnknown:        "Pharmacogenomic test recommended before prescribing",
		engine.CategoryPopulationRisk: "India population context",
	}[a.Category]}
	if a.Guideline != nil && a.Guideline.Name != "" {
		s := Source{Label: truncateLabel(firstNonEmpty(a.GuidanceSource, "CPIC") + " guideline: " + a.Guideline.Name), Topic: topic}
		if httpsURL(a.Guideline.URL) {
			s.URL = a.Guideline.URL
		}
		return s
	}
	s := Source{Label: "pgxsafety knowledge base (India context)", Topic: topic}
	for _, ct := range c.res.AlertCitations(a.ID) {
		if httpsURL(ct.URL) {
			s.URL = ct.URL
			break
		}
	}
	return s
}

func truncateLabel(s string) string {
	if utf8.RuneCountInString(s) <= 200 {
		return s
	}
	return string([]rune(s)[:199]) + "…"
}

func (b *cardBuilder) links(a engine.Alert, cardID, drug string) []Link {
	var out []Link
	if a.Guideline != nil && httpsURL(a.Guideline.URL) {
		out = append(out, Link{Label: truncateLabel(firstNonEmpty(a.GuidanceSource, "CPIC") + " guideline: " + firstNonEmpty(a.Guideline.Name, a.Guideline.URL)),
			URL: a.Guideline.URL, Type: "absolute"})
	}
	if l, ok := b.smartLink(cardID, drug); ok {
		out = append(out, l)
	}
	return out
}

// smartLink opens the SMART review app for a card, when a public URL is
// configured and the app is not switched off (WithoutSMARTLinks). The
// appContext names the hook instance, the card and the card's drug, which
// the review page shows first.
func (b *cardBuilder) smartLink(cardID, drug string) (Link, bool) {
	if b.s.public == nil || b.s.noSMART {
		return Link{}, false
	}
	ac := map[string]string{"hookInstance": b.call.instance, "cardUuid": cardID}
	if drug != "" {
		ac["drug"] = drug
	}
	ctx, _ := json.Marshal(ac)
	return Link{Label: "Review in pgxsafety", URL: b.s.public.String() + SMARTLaunchPath, Type: "smart", AppContext: string(ctx)}, true
}

// overrideReasons are the reasons offered when a card is overridden.
func overrideReasons(category engine.Category) []Coding {
	if category == engine.CategoryUnknown {
		return []Coding{
			{Code: "result-held-elsewhere", System: OverrideReasonSystem, Display: "A genotype result exists outside this EHR"},
			{Code: "treatment-cannot-wait", System: OverrideReasonSystem, Display: "Treatment cannot wait for a test result"},
			{Code: "test-unavailable", System: OverrideReasonSystem, Display: "Genotype test not available"},
		}
	}
	return []Coding{
		{Code: "benefit-outweighs-risk", System: OverrideReasonSystem, Display: "Clinical benefit outweighs the pharmacogenomic risk"},
		{Code: "previously-tolerated", System: OverrideReasonSystem, Display: "Patient has taken this drug before without problems"},
		{Code: "alternative-unsuitable", System: OverrideReasonSystem, Display: "Alternatives are contraindicated or unavailable"},
		{Code: "result-disputed", System: OverrideReasonSystem, Display: "Genotype result disputed or outdated"},
	}
}

// suggestions builds a card's suggestions: replace the draft order with
// each re-checked alternative (delete + create), cancel a drug to avoid
// when the guideline names no alternative, or order the genotype test.
func (b *cardBuilder) suggestions(c checked, a engine.Alert, alts []engine.Alternative, cardID string) []Suggestion {
	oc := fhir.OrderContext{PatientID: b.call.patientID, EncounterID: b.call.encounterID, Requester: b.call.userID}
	drug := c.drug.Drug
	var out []Suggestion
	del := func() []Action {
		if c.order.Ref == "" {
			return nil
		}
		return []Action{{Type: "delete", Description: fmt.Sprintf("Cancel the draft order for %s (%s).", drug, c.order.Ref), ResourceID: c.order.Ref}}
	}
	switch {
	case a.Category == engine.CategoryConfirmed && len(alts) > 0:
		for _, alt := range alts {
			var cuis []string
			if d, ok := b.s.names.Drug(alt.Name); ok {
				cuis = d.RxNormCUIs
			}
			res, err := b.s.parser.BuildMedicationRequest(fhir.MedicationSuggestion{
				OrderContext: oc, Drug: alt.Name, RxNormCUIs: cuis,
				Note: fmt.Sprintf("Suggested by pgxsafety in place of %s: %s. Choose the product and dose.", drug, strings.TrimSuffix(a.Message, ".")),
			})
			if err != nil {
				continue
			}
			coded := "coded by name only: pgxsafety's knowledge has no RxNorm code for it; choose the product and dose"
			if len(cuis) > 0 {
				coded = "RxNorm " + strings.Join(cuis, ", ") + " (ingredient); choose the product and dose"
			}
			label := fmt.Sprintf("Replace %s with %s", drug, alt.Name)
			out = append(out, Suggestion{
				Label:         label,
				UUID:          stableUUID(cardID, "suggestion", label),
				IsRecommended: len(alts) == 1 && a.Severity == engine.SeverityHigh,
				Actions:       append(del(), Action{Type: "create", Description: fmt.Sprintf("Order %s (%s).", alt.Name, coded), Resource: res}),
			})
		}
	case a.Category == engine.CategoryConfirmed && a.Severity == engine.SeverityHigh && c.order.Ref != "":
		label := fmt.Sprintf("Cancel the %s order", drug)
		out = append(out, Suggestion{Label: label, UUID: stableUUID(cardID, "suggestion", label), Actions: del()})
	case a.Category == engine.CategoryUnknown && a.Gene != "":
		res, err := b.s.parser.BuildServiceRequest(fhir.TestSuggestion{
			OrderContext: oc,
			Text:         a.Gene + " genotype",
			Reason:       fmt.Sprintf("Pharmacogenomic test before %s (%s)", drug, firstNonEmpty(guidelineName(a), "CPIC guideline")),
			Note:         "Suggested by pgxsafety: " + a.Action,
		})
		if err != nil {
			return nil
		}
		label := fmt.Sprintf("Order a %s genotype test", a.Gene)
		out = append(out, Suggestion{
			// Not recommended when the results could not be retrieved:
			// the patient may already have one.
			Label: label, UUID: stableUUID(cardID, "suggestion", label), IsRecommended: !b.genomicsUnavailable() && len(b.uninterpreted(a.Gene)) == 0,
			Actions: []Action{{Type: "create", Description: fmt.Sprintf("Order a %s genotype test (coded by name only: choose the laboratory's test).", a.Gene), Resource: res}},
		})
	}
	return out
}

func guidelineName(a engine.Alert) string {
	if a.Guideline == nil {
		return ""
	}
	return a.Guideline.Name
}

// alertDetail writes the card detail in GitHub-flavoured Markdown.
func (b *cardBuilder) alertDetail(c checked, i int, alts []engine.Alternative) string {
	a := c.res.Alerts[i]
	var d strings.Builder
	review := a.Category == engine.CategoryUnknown && len(b.uninterpreted(a.Gene)) > 0
	if review {
		fmt.Fprintf(&d, "**Finding.** A genomic result that may be the patient's %s result is present but pgxsafety could not interpret it "+
			"(see *Genomic data*): review the laboratory report before prescribing. Without it: %s\n\n", esc(a.Gene), esc(a.Message))
	} else {
		fmt.Fprintf(&d, "**Finding.** %s\n\n", esc(a.Message))
	}
	fmt.Fprintf(&d, "**Order:** %s — %s (identified by %s).\n\n", esc(orderName(c.order)), esc(firstNonEmpty(c.order.Label, c.drug.Drug)), esc(c.drug.Via))
	d.WriteString(b.noIDNote(c.order))
	if len(a.Genotype) > 0 {
		d.WriteString("| Gene | Diplotype | Phenotype | Activity score |\n|---|---|---|---|\n")
		for _, g := range a.Genotype {
			fmt.Fprintf(&d, "| %s | %s | %s | %s |\n", esc(g.Gene), cell(g.Diplotype), cell(g.Phenotype), cell(g.ActivityScore))
		}
		d.WriteString("\n")
	}
	src := firstNonEmpty(a.GuidanceSource, "CPIC")
	if a.Recommendation != "" {
		var meta []string
		if a.Classification != "" {
			meta = append(meta, "strength: "+a.Classification)
		}
		if a.EvidenceLevel != "" {
			meta = append(meta, "evidence level "+a.EvidenceLevel)
		}
		if a.Population != "" {
			meta = append(meta, "population: "+a.Population)
		}
		fmt.Fprintf(&d, "**%s recommendation**", esc(src))
		if len(meta) > 0 {
			fmt.Fprintf(&d, " (%s)", esc(strings.Join(meta, "; ")))
		}
		fmt.Fprintf(&d, ": %s\n\n", esc(a.Recommendation))
	} else if a.Action != "" {
		if review {
			fmt.Fprintf(&d, "**Action:** Review the laboratory report of the %s result first. If no interpretable result exists: %s", esc(a.Gene), esc(a.Action))
		} else {
			fmt.Fprintf(&d, "**Action:** %s", esc(a.Action))
		}
		if a.EvidenceLevel != "" {
			fmt.Fprintf(&d, " (evidence level %s)", esc(a.EvidenceLevel))
		}
		d.WriteString("\n\n")
	}
	list(&d, "Implications", a.Implications)
	if len(alts) > 0 {
		var xs []string
		for _, x := range alts {
			xs = append(xs, x.Name+": "+x.Rationale)
		}
		list(&d, "Alternatives (each re-checked against this genotype)", xs)
	}
	list(&d, "Laboratory interpretation", b.labNotes(c.drug.Drug))
	if a.Category == engine.CategoryUnknown {
		list(&d, "Genomic data", b.genomicAvailability(a.Gene))
	} else if us := relevantUninterpreted(b.uninterpreted(a.Gene), a); len(us) > 0 {
		list(&d, "Also reported but not interpreted — review", uninterpretedLines(us))
	}
	list(&d, "India context", b.indiaContext(c.res, a))
	list(&d, "Based on", b.basedOn(c))
	list(&d, "Assumptions", a.Assumptions)
	list(&d, "Notes", c.res.Warnings)
	var cites []string
	for _, ct := range c.res.AlertCitations(c.res.Alerts[i].ID) {
		s := ct.Source
		if ct.EvidenceLevel != "" {
			s += " (evidence " + ct.EvidenceLevel + ")"
		}
		if ct.URL != "" {
			s += " — " + ct.URL
		}
		cites = append(cites, s)
	}
	list(&d, "Sources", cites)
	fmt.Fprintf(&d, "Knowledge version %s.", esc(c.res.KnowledgeVersion))
	return d.String()
}

func cell(s string) string {
	if s == "" {
		return "—"
	}
	return esc(s)
}

// list writes a titled bullet list (nothing when items is empty).
func list(d *strings.Builder, title string, items []string) {
	if len(items) == 0 {
		return
	}
	d.WriteString("**")
	d.WriteString(esc(title))
	d.WriteString(":**\n")
	for _, it := range items {
		d.WriteString("- ")
		d.WriteString(esc(it))
		d.WriteString("\n")
	}
	d.WriteString("\n")
}

// labNotes lists the lab's therapeutic implications for the drug.
func (b *cardBuilder) labNotes(drug string) []string {
	var out []string
	for _, im := range b.genomics.Implications {
		if im.Drug != drug {
			continue
		}
		s := fmt.Sprintf("%s reports %q for %s", im.Ref, firstNonEmpty(im.Phenotype, "an implication"), firstNonEmpty(im.Medication, drug))
		if im.Effective != "" {
			s += " (" + im.Effective + ")"
		}
		if im.Resolved {
			s += "; the genotype it derives from was used in this check"
		} else {
			s += "; the genotype it derives from was not among the results sent, so pgxsafety could not check it"
		}
		out = append(out, s)
	}
	return out
}

// genomicAvailability says where the genomic data came from and what
// could not be used, for cards that rest on the absence of a result.
func (b *cardBuilder) genomicAvailability(gene string) []string {
	var out []string
	us := b.uninterpreted(gene)
	if kd := b.data[KeyGenomics]; kd != nil {
		switch {
		case kd.Error != "":
			out = append(out, "The patient's genomic results could not be retrieved ("+kd.Shown+"): a result may exist.")
		case len(b.genomics.Results) == 0:
			out = append(out, fmt.Sprintf("No genomic results (Genotype, Haplotype, Variant, Therapeutic Implication Observations) were found (from %s).", kd.Source))
		case len(us) > 0:
			out = append(out, fmt.Sprintf("%d genomic result(s) were read (from %s); %d may be %s results but could not be interpreted — review the laboratory report:",
				len(b.genomics.Results), kd.Source, len(us), gene))
		default:
			out = append(out, fmt.Sprintf("%d genomic result(s) were read (from %s); none covers this gene.", len(b.genomics.Results), kd.Source))
		}
	}
	out = append(out, uninterpretedLines(us)...)
	listed := map[string]bool{}
	for _, u := range us {
		listed[u.Ref] = true
	}
	for _, is := range b.genomics.Issues {
		if is.Genomic && is.Severity == fhir.IssueError && !listed[is.Ref] {
			out = append(out, is.Ref+" could not be used: "+is.Message)
		}
	}
	return out
}

// relevantUninterpreted drops, for a finding made from the patient's
// genotype, the HLA typings left silent only on alleles the finding is not
// about (an HLA-B*15:02 carbamazepine finding is not changed by an unsaid
// *57:01).
func relevantUninterpreted(us []fhir.Uninterpreted, a engine.Alert) []fhir.Uninterpreted {
	var out []fhir.Uninterpreted
	g := genotypeText(a) + " " + a.StarAllele
	for _, u := range us {
		if len(u.Alleles) > 0 {
			about := false
			for _, al := range u.Alleles {
				_, short, _ := strings.Cut(al, "*")
				if strings.Contains(g, "*"+short) {
					about = true
				}
			}
			if !about {
				continue
			}
		}
		out = append(out, u)
	}
	return out
}

// uninterpretedLines describes results present but not interpreted.
func uninterpretedLines(us []fhir.Uninterpreted) []string {
	var out []string
	for _, u := range us {
		s := u.Ref
		if u.Value != "" && !strings.Contains(u.Reason, u.Value) {
			s += " (" + u.Value + ")"
		}
		out = append(out, s+": not interpreted — "+u.Reason)
	}
	return out
}

// indiaContext lists the Indian context of the result when the patient's
// state is known.
func (b *cardBuilder) indiaContext(res engine.Result, a engine.Alert) []string {
	ic := res.IndianContext
	if ic.StateRecognised == nil || !*ic.StateRecognised {
		return nil
	}
	out := []string{"State (patient's address): " + firstNonEmpty(ic.StateNormalised, ic.State)}
	for _, r := range ic.EndemicRisks {
		s := r.Risk
		if r.Note != "" {
			s += " (" + r.Note + ")"
		}
		out = append(out, s)
	}
	for _, pf := range ic.PopulationFrequencies {
		if a.Gene != "" && pf.Gene != a.Gene {
			continue
		}
		s := fmt.Sprintf("%s %s %s:", pf.Variant, pf.Gene, pf.Allele)
		if pf.AFIndia != nil {
			s += fmt.Sprintf(" India %.4f", *pf.AFIndia)
			if pf.AFIndiaBasis != "" {
				s += " (" + pf.AFIndiaBasis + ")"
			}
		} else {
			s += " no Indian frequency in the knowledge"
		}
		if pf.AFGlobal != nil {
			s += fmt.Sprintf(", global %.4f", *pf.AFGlobal)
		}
		out = append(out, s)
	}
	for _, h := range ic.TraditionalMedicine {
		s := fmt.Sprintf("%s (%s)", h.Herb, h.Botanical)
		if h.Effect != "" {
			s += ": " + h.Effect
		}
		out = append(out, s)
	}
	if len(out) == 1 {
		return nil // the state alone adds nothing to the card
	}
	return out
}

// basedOn lists the inputs of the check: results used, patient facts,
// indication, and the draft order's own problems.
func (b *cardBuilder) basedOn(c checked) []string {
	var out []string
	for _, r := range b.genomics.UsedResults() {
		if r.Kind == fhir.KindImplication {
			continue
		}
		s := fmt.Sprintf("%s: %s %s", r.Ref, r.Kind, firstNonEmpty(r.Value, r.Gene))
		var when []string
		if r.Status != "" {
			when = append(when, r.Status)
		}
		if r.Effective != "" {
			when = append(when, "effective "+r.Effective)
		}
		if r.Issued != "" {
			when = append(when, "issued "+r.Issued)
		}
		if r.SpecimenCollected != "" {
			when = append(when, "specimen collected "+r.SpecimenCollected)
		}
		if len(when) > 0 {
			s += " (" + strings.Join(when, ", ") + ")"
		}
		if r.Note != "" {
			s += " — " + r.Note
		}
		out = append(out, s)
	}
	var facts []string
	if b.patient.Sex != "" {
		facts = append(facts, b.patient.Sex)
	}
	if b.patient.AgeYears != nil {
		facts = append(facts, fmt.Sprintf("%.0f years", *b.patient.AgeYears))
	}
	if b.patient.State != "" {
		facts = append(facts, b.patient.State)
	}
	if len(facts) > 0 {
		out = append(out, fmt.Sprintf("%s: %s", b.patient.Ref, strings.Join(facts, ", ")))
	}
	if c.order.Indication != "" {
		out = append(out, "Indication (order reasonCode): "+c.order.Indication)
	} else if ind := b.indication(c.order); ind != "" {
		var refs []string
		for _, cd := range b.conditions {
			refs = append(refs, cd.Ref)
		}
		out = append(out, fmt.Sprintf("Indication (the patient's active Conditions %s; the order has no reasonCode): %s", strings.Join(refs, ", "), ind))
	}
	if c.order.Partial != "" {
		out = append(out, orderName(c.order)+" was "+c.order.Partial)
	}
	for _, mo := range b.active.Medications {
		for _, d := range mo.Drugs {
			if d.Drug == c.drug.Drug {
				s := fmt.Sprintf("The patient already has an active order for %s (%s", d.Drug, orderName(mo))
				if mo.AuthoredOn != "" {
					s += ", authored " + mo.AuthoredOn
				}
				out = append(out, s+")")
			}
		}
	}
	return out
}

// implicationCard reports a lab's therapeutic implication for a drug being
// ordered whose genotype pgxsafety did not receive.
func (b *cardBuilder) implicationCard(c checked, im fhir.Implication) Card {
	id := b.cardID("implication", orderName(c.order), c.drug.Drug, im.Ref, im.Phenotype)
	var d strings.Builder
	fmt.Fprintf(&d, "The laboratory's Therapeutic Implication %s says **%s** for %s", esc(im.Ref), esc(firstNonEmpty(im.Phenotype, "(no phenotype given)")), esc(firstNonEmpty(im.Medication, c.drug.Drug)))
	if im.Effective != "" {
		fmt.Fprintf(&d, " (%s)", esc(im.Effective))
	}
	d.WriteString(". The genotype it derives from was not among the results sent")
	if len(im.DerivedFrom) > 0 {
		fmt.Fprintf(&d, " (%s)", esc(strings.Join(im.DerivedFrom, ", ")))
	}
	d.WriteString(", so pgxsafety could not check it against its guidelines. Review the laboratory report before signing.\n\n")
	fmt.Fprintf(&d, "**Order:** %s — %s.", esc(orderName(c.order)), esc(firstNonEmpty(c.order.Label, c.drug.Drug)))
	if n := b.noIDNote(c.order); n != "" {
		d.WriteString("\n\n" + strings.TrimSpace(n))
	}
	card := Card{
		UUID:            id,
		Summary:         truncate(fmt.Sprintf("%s: lab reports “%s” — not checked: its genotype was not sent", capitalise(c.drug.Drug), firstNonEmpty(im.Phenotype, "an implication"))),
		Detail:          d.String(),
		Indicator:       IndicatorWarning,
		Source:          Source{Label: "Laboratory Therapeutic Implication (FHIR Genomics Reporting)", Topic: &Coding{System: TopicSystem, Code: "lab-implication", Display: "Laboratory interpretation not checked by pgxsafety"}},
		OverrideReasons: overrideReasons(engine.CategoryConfirmed),
	}
	if l, ok := b.smartLink(id, c.drug.Drug); ok {
		card.Links = []Link{l}
	}
	return card
}

// genomicDataCard reports data the checks ran without: the patient's
// genomic results, record or conditions that could not be had from the
// EHR, and genomic results that could not be used. How the fetch failed is
// said in words fit for a card (keyData.Shown); the error itself is in the
// log and the audit entry.
func (b *cardBuilder) genomicDataCard() (Card, bool) {
	var items []string
	unavailable := b.genomicsUnavailable()
	if unavailable {
		items = append(items, "The patient's genomic results could not be retrieved ("+b.data[KeyGenomics].Shown+"): a result may exist.")
	}
	if kd := b.data[KeyPatient]; kd != nil && kd.Error != "" {
		items = append(items, "The patient's record could not be retrieved ("+kd.Shown+"): sex, age and state were not used.")
	}
	if kd := b.data[KeyConditions]; kd != nil && kd.Error != "" {
		items = append(items, "The patient's active conditions could not be retrieved ("+kd.Shown+"): the indication was read from the order alone.")
	}
	genomicIssues := false
	for _, is := range b.genomics.Issues {
		if is.Genomic && is.Severity == fhir.IssueError {
			items = append(items, is.Ref+": "+is.Message)
			genomicIssues = true
		}
	}
	if len(items) == 0 {
		return Card{}, false
	}
	var d strings.Builder
	d.WriteString("Pharmacogenomic checks of this order ran without the data below; a finding may be missing. Review the laboratory reports.\n\n")
	list(&d, "Not used", items)
	id := b.cardID("genomic-data", strings.Join(items, "\x00"))
	summary := "Some patient data could not be fetched from the EHR — pharmacogenomic checks may be incomplete"
	switch {
	case unavailable:
		summary = "The patient's genomic results could not be fetched from the EHR — this order was not checked against them"
	case genomicIssues:
		summary = "Some genomic results could not be used — pharmacogenomic checks may be incomplete"
	}
	card := Card{
		UUID:            id,
		Summary:         summary,
		Detail:          strings.TrimSpace(d.String()),
		Indicator:       IndicatorWarning,
		Source:          Source{Label: "pgxsafety data check", Topic: &Coding{System: TopicSystem, Code: "data-quality", Display: "Input data could not be used"}},
		OverrideReasons: []Coding{{Code: "reviewed-lab-report", System: OverrideReasonSystem, Display: "Laboratory report reviewed"}},
	}
	return card, true
}

func (b *cardBuilder) failedCard(f failedCheck) Card {
	id := b.cardID("failed", orderName(f.order), f.drug.Drug)
	return Card{
		UUID:      id,
		Summary:   truncate(fmt.Sprintf("%s: the pharmacogenomic check could not be run — review manually", capitalise(f.drug.Drug))),
		Detail:    fmt.Sprintf("pgxsafety could not evaluate %s for %s: %s.", esc(f.drug.Drug), esc(orderName(f.order)), esc(checkFailure(f.err))) + strings.TrimRight(" "+b.noIDNote(f.order), " \n"),
		Indicator: IndicatorWarning,
		Source:    Source{Label: "pgxsafety data check", Topic: &Coding{System: TopicSystem, Code: "data-quality", Display: "Input data could not be used"}},
	}
}

func (b *cardBuilder) unreadableCard(is fhir.Issue) Card {
	id := b.cardID("unreadable", is.Ref, is.Message)
	return Card{
		UUID:      id,
		Summary:   "A draft medication order was not checked for pharmacogenomic risk — see why",
		Detail:    fmt.Sprintf("%s: %s", esc(is.Ref), esc(quote(is.Message, 2*MaxQuotedDetailRunes))),
		Indicator: IndicatorInfo,
		Source:    Source{Label: "pgxsafety data check", Topic: &Coding{System: TopicSystem, Code: "data-quality", Display: "Input data could not be used"}},
	}
}

// noIDNote says, at order-select, that a draft order without an id was
// checked although it could not be matched to context.selections.
func (b *cardBuilder) noIDNote(o fhir.MedicationOrder) string {
	if b.call.hook != HookOrderSelect || o.ID != "" {
		return ""
	}
	return "This draft order has no id, so pgxsafety could not match it to the selected orders (context.selections); it was checked anyway.\n\n"
}

// unmatchedCard reports an order-select selection that names no draft
// order pgxsafety could read: that order was not checked, and the absence
// of other cards must not read as "no pharmacogenomic concern".
func (b *cardBuilder) unmatchedCard(sel string) Card {
	id := b.cardID("unmatched-selection", sel)
	summary := fmt.Sprintf("Selected order %s was not checked for pharmacogenomic risk", sel)
	if utf8.RuneCountInString(summary) > MaxSummaryRunes {
		summary = "A selected order was not checked for pharmacogenomic risk — see why"
	}
	var d strings.Builder
	fmt.Fprintf(&d, "The selected order %s (context.selections) matches no draft order in context.draftOrders that pgxsafety could read, so it was **not** checked. ", esc(sel))
	d.WriteString("Selections are matched to draft orders by id (`MedicationRequest/<id>`, a bare id, or an absolute URL ending in `/MedicationRequest/<id>`).")
	if b.idlessChecked > 0 {
		fmt.Fprintf(&d, " %d draft order(s) without an id were checked instead; they may be the order selected.", b.idlessChecked)
	}
	d.WriteString(" Review the order for pharmacogenomic risk before signing.")
	return Card{
		UUID:      id,
		Summary:   summary,
		Detail:    d.String(),
		Indicator: IndicatorWarning,
		Source:    Source{Label: "pgxsafety data check", Topic: &Coding{System: TopicSystem, Code: "data-quality", Display: "Input data could not be used"}},
	}
}
