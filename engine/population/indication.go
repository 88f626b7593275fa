package population

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// This file chooses the guideline population of a drug from the clinical
// context: coded indications first (ICD-10, ICD-10-CM, ICD-10-PCS, SNOMED
// CT through indications.json), then the patient's age and months on the
// drug, and free text only as a fallback, read with negation ("no PCI",
// "without stent", "ACS ruled out" do not count). When the context cannot
// decide, every population is evaluated and the most severe answer is
// shown (the caller says so).

// indicationSystem maps a system URL or name (any case) to the system
// names of indications.json; "" when it is not one of them.
func indicationSystem(s string) string {
	switch strings.ToLower(strings.TrimRight(strings.TrimSpace(s), "/")) {
	case engine.SystemICD10URL, "icd-10", "icd10", "who icd-10":
		return engine.SystemICD10
	case engine.SystemICD10CMURL, "icd-10-cm", "icd10cm", "icd-10cm":
		return engine.SystemICD10CM
	case strings.ToLower(engine.SystemICD10PCSURL), "icd-10-pcs", "icd10pcs", "http://hl7.org/fhir/sid/icd-10-pcs":
		return engine.SystemICD10PCS
	case engine.SystemSNOMEDURL, "snomed ct", "snomed", "sct", "snomedct":
		return engine.SystemSNOMED
	}
	return ""
}

// codeKey folds a code for matching: upper case, no dots or spaces.
func codeKey(c string) string {
	return strings.NewReplacer(".", "", " ", "").Replace(strings.ToUpper(strings.TrimSpace(c)))
}

type indicationIndex struct {
	exact  map[string][]*engine.IndicationCode // system|codeKey → rows
	prefix map[string][]*engine.IndicationCode // system → prefix rows
}

func buildIndicationIndex(k *engine.Knowledge) *indicationIndex {
	ix := &indicationIndex{exact: map[string][]*engine.IndicationCode{}, prefix: map[string][]*engine.IndicationCode{}}
	for i := range k.Indications {
		c := &k.Indications[i]
		ix.exact[c.System+"|"+codeKey(c.Code)] = append(ix.exact[c.System+"|"+codeKey(c.Code)], c)
		if c.Match == "prefix" {
			ix.prefix[c.System] = append(ix.prefix[c.System], c)
		}
	}
	return ix
}

// IndicationRows returns the indications.json rows a coding falls under:
// the exact code, else the longest category header ("prefix" row) that
// the code starts with. ICD-10 and ICD-10-CM are matched in their own
// system only.
func (k *Selector) IndicationRows(c engine.Coding) []*engine.IndicationCode {
	sys := indicationSystem(c.System)
	key := codeKey(c.Code)
	if sys == "" || key == "" {
		return nil
	}
	if rows := k.idx.indication.exact[sys+"|"+key]; len(rows) > 0 {
		return rows
	}
	var best []*engine.IndicationCode
	bestLen := 0
	for _, r := range k.idx.indication.prefix[sys] {
		pk := codeKey(r.Code)
		if strings.HasPrefix(key, pk) && len(pk) >= bestLen {
			if len(pk) > bestLen {
				best, bestLen = nil, len(pk)
			}
			best = append(best, r)
		}
	}
	return best
}

// PopulationContext is the clinical context the population selector reads.
type PopulationContext struct {
	// Codes are coded indications, conditions and procedures (REST
	// indication_codes; FHIR reasonCode codings, active Condition codes,
	// Procedure codes).
	Codes []engine.Coding
	// Text is the free-text indication, read only when no code decides.
	Text string
	// AgeYears and MonthsOnDrug are the patient's age and the months the
	// patient has already taken the drug; nil when unknown.
	AgeYears     *float64
	MonthsOnDrug *float64
}

// MatchedCode is a coding the selector read, with the population it
// points to.
type MatchedCode struct {
	engine.Coding
	Population string `json:"population"`
	// Basis is the cpic_basis of the knowledge row ("named", "related",
	// "not-named").
	Basis string `json:"cpic_basis"`
	// Row is the code of the knowledge row that matched (a category
	// header for a more specific code).
	Row string `json:"row"`
}

// PopulationChoice is the selector's answer.
type PopulationChoice struct {
	// Populations are the guideline populations to evaluate: one when the
	// context decided, every population of the drug when it did not.
	Populations []string `json:"populations"`
	// Decided is true when the context chose one population.
	Decided bool `json:"decided"`
	// Basis names what decided: "codes", "text", "age", "months on drug";
	// "" when nothing did.
	Basis string `json:"basis,omitempty"`
	// Reason is one sentence for the answer.
	Reason string `json:"reason,omitempty"`
	// Matched are the codings that point to a population.
	Matched []MatchedCode `json:"matched,omitempty"`
	// Notes say what a reader should review (codes whose assignment CPIC
	// does not name, negated text, codes not read).
	Notes []string `json:"notes,omitempty"`
	// Conflict is true when the coded indications and the free text each
	// decide a population and the two differ: both are evaluated and
	// Reason states the disagreement.
	Conflict bool `json:"conflict,omitempty"`
}

// Populations of the CPIC clopidogrel guideline.
const (
	PopACSPCI  = "CVI ACS PCI"
	PopNonACS  = "CVI non-ACS non-PCI"
	PopNeuro   = "NVI"
	popAdults  = "adults"
	popPaediat = "pediatrics"
)

// SelectPopulation chooses, for drug, the guideline population(s) to
// evaluate from ctx. Order: coded indications, then free text (with
// negation) for clopidogrel — codes and text that decide different
// populations give both, with Conflict set; age for adult/paediatric
// rows; months on the drug for the naive / >3 months rows. A drug with
// one population gets it with Decided true and no reason.
func (k *Selector) SelectPopulation(drug string, ctx PopulationContext) PopulationChoice {
	var set map[string]bool
	all := []string{}
	if dp := k.idx.pops[drug]; dp != nil {
		set, all = dp.set, append(all, dp.all...)
	}
	ch := PopulationChoice{Populations: all}
	if len(all) <= 1 {
		ch.Decided = true
		return ch
	}
	pick := func(p, basis, why string) PopulationChoice {
		ch.Populations, ch.Decided, ch.Basis = []string{p}, true, basis
		ch.Reason = "guideline population " + strconv.Quote(p) + " chosen from " + why
		return ch
	}
	switch {
	case set[PopACSPCI]:
		return k.clopidogrelPopulation(ctx, set, ch)
	case set[popAdults] && set[popPaediat]:
		if ctx.AgeYears != nil {
			if *ctx.AgeYears >= 18 {
				return pick(popAdults, "age", "the patient's age (18 or over)")
			}
			return pick(popPaediat, "age", "the patient's age (under 18)")
		}
	case set["PHT naive"], set["CBZ naive"], set["OXC naive"]:
		if m := ctx.MonthsOnDrug; m != nil {
			for _, p := range all {
				naive := strings.Contains(p, "naive")
				long := strings.Contains(p, ">3") || strings.Contains(p, "> 3")
				if *m == 0 && naive || *m > 3 && long {
					return pick(p, "months on drug", "the months already on the drug")
				}
			}
		}
	}
	return ch
}

// clopidogrelPopulation chooses among the clopidogrel populations: coded
// indications first, then the free text; codes and text that each decide
// a different population are both evaluated and the disagreement stated.
//
// A code that the table lists under one population points to it; a code
// listed under several (ICD-10-CM I25.2 "Old myocardial infarction": the
// title names an infarction, the data pack reads it as not current)
// points to each of them and decides none alone. A code of "CVI ACS PCI"
// alone decides that population (CPIC's "ACS and/or PCI"); otherwise codes
// that all point to one population decide it; codes pointing to more than
// one decide nothing, and every population is evaluated.
func (k *Selector) clopidogrelPopulation(ctx PopulationContext, set map[string]bool, ch PopulationChoice) PopulationChoice {
	pick := func(p, basis, why string) PopulationChoice {
		ch.Populations, ch.Decided, ch.Basis = []string{p}, true, basis
		ch.Reason = "guideline population " + strconv.Quote(p) + " chosen from " + why
		return ch
	}
	pops := map[string][]string{} // population → the codes pointing to it
	var acsAlone []string         // codes listed under CVI ACS PCI only
	for _, c := range ctx.Codes {
		rows := k.IndicationRows(c)
		if len(rows) == 0 {
			if strings.TrimSpace(c.Code) != "" {
				ch.Notes = append(ch.Notes, fmt.Sprintf("code %s %s is not one the guideline population table lists; it was not used to choose a population", c.System, c.Code))
			}
			continue
		}
		var these []string
		for _, r := range rows {
			if !set[r.Population] {
				continue
			}
			these = append(these, r.Population)
			name := fmt.Sprintf("%s %s", r.System, c.Code)
			ch.Matched = append(ch.Matched, MatchedCode{Coding: c, Population: r.Population, Basis: r.Basis, Row: r.Code})
			pops[r.Population] = append(pops[r.Population], name)
			switch {
			case r.Recheck != "":
				ch.Notes = append(ch.Notes, fmt.Sprintf("%s %s (%s) under %q: %s", r.System, c.Code, r.Display, r.Population, r.Recheck))
			case r.Basis != "named":
				ch.Notes = append(ch.Notes, fmt.Sprintf("%s %s (%s) is assigned to %q by the code table, not by CPIC's own population text (%s): review", r.System, c.Code, r.Display, r.Population, r.Basis))
			}
		}
		if len(these) == 1 && these[0] == PopACSPCI {
			acsAlone = append(acsAlone, pops[PopACSPCI][len(pops[PopACSPCI])-1])
		}
	}
	var byCodes, codesWhy string
	switch {
	case len(acsAlone) > 0:
		byCodes, codesWhy = PopACSPCI, "the coded indication "+strings.Join(uniq(acsAlone), ", ")+" (acute coronary syndrome or PCI)"
	case len(pops) == 1:
		for p, codes := range pops {
			byCodes, codesWhy = p, "the coded indication "+strings.Join(uniq(codes), ", ")
		}
	case len(pops) > 1:
		var parts []string
		for _, p := range sortedKeys(pops) {
			parts = append(parts, fmt.Sprintf("%s → %q", strings.Join(uniq(pops[p]), ", "), p))
		}
		ch.Reason = "the coded indications point to more than one guideline population (" + strings.Join(parts, "; ") + ")"
		return ch
	}
	// Free text, with negation: the fallback when no code decides, and a
	// check of the codes when one does.
	byText, textWhy, notes := clopidogrelFromText(ctx.Text)
	ch.Notes = append(ch.Notes, notes...)
	switch {
	case byCodes == "" && byText == "":
		return ch
	case byCodes == "":
		return pick(byText, "text", textWhy)
	case byText == "" || byText == byCodes:
		return pick(byCodes, "codes", codesWhy)
	}
	ch.Populations = []string{byCodes, byText}
	sort.Strings(ch.Populations)
	ch.Conflict = true
	textWhy = strings.Replace(textWhy, "the indication text", fmt.Sprintf("the indication text %q", strings.TrimSpace(ctx.Text)), 1)
	ch.Reason = fmt.Sprintf("the coded context and the free text disagree: %s points to %q, %s to %q", codesWhy, byCodes, textWhy, byText)
	return ch
}

// uniq returns ss without repeats, in first-seen order.
func uniq(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Free-text terms of the clopidogrel populations (plain clinical words,
// matched as whole words).
var (
	textACSPCI = newWordTerms(`acs`, `acute coronary`, `pci`, `ptca`, `percutaneous coronary`, `percutaneous transluminal`, `coronary angioplasty`, `angioplasty`, `stent`, `stents`, `stented`, `stenting`, `myocardial infarction`, `heart attack`, `stemi`, `nstemi`, `n-stemi`, `unstable angina`)
	textNeuro  = newWordTerms(`stroke`, `tia`, `transient ischaemic`, `transient ischemic`, `neurovascular`, `cerebrovascular`, `carotid`, `intracranial`, `neurointervention\w*`)
	textCVI    = newWordTerms(`coronary`, `cardiac`, `cardiovascular`, `peripheral arter\w*`, `pad`, `angina`, `atrial fibrillation`, `atherosclero\w*`, `ischaemic heart`, `ischemic heart`)
	// textNonACS names the population outright.
	textNonACS = regexp.MustCompile(`\bnon[- ]?acs\b.*\bnon[- ]?pci\b`)
	// Negation cues before a term (in its clause) and after it, as
	// whole-word phrases; negBefore.re and negAfter.re are the expressions
	// they answer for (FuzzWordPhrasesMatchExpression). "non" is not one of
	// them: it is a prefix that negates only the word it is attached to
	// (nonPrefixed).
	negBefore = newWordPhrases(`no`, `not`, `without`, `denies`, `denied`, `negative for`, `excluded`, `ruled out`, `rule out`, `r/o`, `absence of`, `free of`, `never had`, `no history of`, `no evidence of`)
	negAfter  = newWordPhrases(`ruled out`, `excluded`, `negative`, `not confirmed`, `unlikely`, `was not done`, `not done`, `not performed`, `not planned`, `declined`)
	// clauseSep splits text into clauses; negation does not cross them.
	clauseSep = regexp.MustCompile(`[.;,\n]|\bbut\b|\bhowever\b|\balthough\b`)
)

// splitClauses is clauseSep.Split(t, -1) without the regular expression
// engine: it cuts at '.', ';', ',', '\n' and at the whole words "but",
// "however" and "although" (ASCII word boundaries, as \b), leaving the
// empty pieces Split leaves. FuzzSplitClauses holds it to clauseSep.
func splitClauses(t string) []string {
	if t == "" {
		return []string{""}
	}
	var out []string
	beg := 0
	for i := 0; i < len(t); {
		n := 0
		switch c := t[i]; {
		case c == '.' || c == ';' || c == ',' || c == '\n':
			n = 1
		case (c == 'b' || c == 'h' || c == 'a') && (i == 0 || !isWordByte(t[i-1])):
			for _, w := range [...]string{"but", "however", "although"} {
				if strings.HasPrefix(t[i:], w) && (i+len(w) == len(t) || !isWordByte(t[i+len(w)])) {
					n = len(w)
					break
				}
			}
		}
		if n == 0 {
			i++
			continue
		}
		out = append(out, t[beg:i])
		i += n
		beg = i
	}
	return append(out, t[beg:])
}

// isWordByte is \w in ASCII (the bytes of a multi-byte rune are not).
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// wordTerms is a whole-word alternation of plain terms, with the literal
// stems (each term without a trailing \w*) that every match contains:
// a clause holding none of the stems cannot match. findAll matches the
// terms without the regular expression engine; re is the expression it
// answers for (FuzzWordTermsMatchExpression).
type wordTerms struct {
	re    *regexp.Regexp
	stems []string
	// open[i] is true when term i ends in \w*.
	open []bool
	// first lists, per byte, the terms whose stem starts with it, in
	// term order.
	first *[256][]int
}

// newWordTerms compiles \b(term|term...)\b. A term is a literal that
// starts and ends with an ASCII word character, optionally followed by
// \w*; anything else panics at start-up.
func newWordTerms(terms ...string) wordTerms {
	w := wordTerms{re: regexp.MustCompile(`\b(` + strings.Join(terms, "|") + `)\b`), first: new([256][]int)}
	for ti, t := range terms {
		stem := strings.TrimSuffix(t, `\w*`)
		if stem == "" || regexp.QuoteMeta(stem) != stem || !isWordByte(stem[0]) || !isWordByte(stem[len(stem)-1]) {
			panic("engine: indication term " + t + " is not a plain literal")
		}
		w.stems = append(w.stems, stem)
		w.open = append(w.open, stem != t)
		w.first[stem[0]] = append(w.first[stem[0]], ti)
	}
	return w
}

// mayMatch reports whether s holds one of the stems (a necessary
// condition for a match).
func (w wordTerms) mayMatch(s string) bool {
	for _, st := range w.stems {
		if strings.Contains(s, st) {
			return true
		}
	}
	return false
}

// findAll is w.re.FindAllStringIndex(s, -1) (next, from 0 on).
func (w wordTerms) findAll(s string) [][]int {
	var out [][]int
	for i, end := w.next(s, 0); i >= 0; i, end = w.next(s, end) {
		out = append(out, []int{i, end})
	}
	return out
}

// next returns the first match [i, end) of the expression in s at or
// after from, or -1: leftmost-first, as the regular expression engine
// picks it. At each start where \b holds (every term starts with a word
// character) the terms are tried in order; a literal needs \b after it,
// and \w* takes every following word character (the \b after it then
// holds). Matches taken one after another from the end of the last are
// FindAllStringIndex's.
func (w wordTerms) next(s string, from int) (int, int) {
	for i := from; i < len(s); i++ {
		if i > 0 && isWordByte(s[i-1]) || !isWordByte(s[i]) {
			continue
		}
		for _, ti := range w.first[s[i]] {
			st := w.stems[ti]
			if !strings.HasPrefix(s[i:], st) {
				continue
			}
			e := i + len(st)
			if w.open[ti] {
				for e < len(s) && isWordByte(s[e]) {
					e++
				}
			} else if e < len(s) && isWordByte(s[e]) {
				continue
			}
			return i, e
		}
	}
	return -1, -1
}

// wordPhrases is a whole-word alternation of plain phrases: in(s) is
// re.MatchString(s) for \b(phrase|phrase...)\b.
type wordPhrases struct {
	re      *regexp.Regexp
	phrases []string
	// first lists, per byte, the phrases that start with it.
	first *[256][]string
}

// newWordPhrases compiles the phrases; each must be a literal that starts
// and ends with an ASCII word character.
func newWordPhrases(phrases ...string) wordPhrases {
	for _, p := range phrases {
		if p == "" || regexp.QuoteMeta(p) != p || !isWordByte(p[0]) || !isWordByte(p[len(p)-1]) {
			panic("engine: phrase " + p + " is not a plain literal")
		}
	}
	w := wordPhrases{re: regexp.MustCompile(`\b(` + strings.Join(phrases, "|") + `)\b`), phrases: phrases, first: new([256][]string)}
	for _, p := range phrases {
		w.first[p[0]] = append(w.first[p[0]], p)
	}
	return w
}

// in reports whether s holds one of the phrases as whole words: at a
// start with a word boundary before it (every phrase starts with a word
// character), a phrase starting with that byte, a boundary after it.
func (w wordPhrases) in(s string) bool {
	for j := 0; j < len(s); j++ {
		if j > 0 && isWordByte(s[j-1]) {
			continue
		}
		for _, p := range w.first[s[j]] {
			if strings.HasPrefix(s[j:], p) && (j+len(p) == len(s) || !isWordByte(s[j+len(p)])) {
				return true
			}
		}
	}
	return false
}

// nonTerms are medical names that start with the word "non" and do not
// negate the word after it: "non-STEMI" is a myocardial infarction, not
// the absence of a STEMI. The prefix "non" negates the term it is
// attached to ("non-ACS", "non-cardiac") unless the text there is one of
// these names. Hyphens and spaces are interchangeable ("non ST-elevation"
// = "non-ST elevation"). Each name is taken from a source, never guessed:
//
//   - non-st elevation, non-st segment elevation, non-q wave,
//     non-obstructive, non-rheumatic, non-pyogenic: titles of
//     knowledge/data/indications.json (ICD-10-CM I21.4 "Non-ST elevation
//     (NSTEMI) myocardial infarction"; SNOMED CT "Acute non-ST segment
//     elevation myocardial infarction", "Non-Q wave myocardial
//     infarction", "Myocardial infarction with non-obstructive coronary
//     artery", "Non-rheumatic atrial fibrillation", "Cerebral infarction
//     due to cerebral venous thrombosis, non-pyogenic");
//   - non-stemi: GPnotebook, "non STEMI" ("Non-ST elevation MI … often
//     referred to as non-STEMI"),
//     https://gpnotebook.com/en-gb/simplepage.cfm?ID=x20090220222240749131;
//   - non-hodgkin: ICD-10-CM C85.9 "Non-Hodgkin lymphoma, unspecified"
//     and NCI SEER, https://seer.cancer.gov/seertools/hemelymph/51f6cf57e3e27c3994bd5336/;
//   - non-small cell: American Cancer Society glossary, "non-small cell
//     lung cancer",
//     https://www.cancer.org/cancer/glossary/glossary/n/non-small_cell_lungcancer.html.
var nonTerms = []string{
	"non st elevation", "non st segment elevation", "non stemi", "non q wave",
	"non obstructive", "non rheumatic", "non pyogenic", "non hodgkin", "non small cell",
}

// foldDashes maps '-' and the Unicode hyphen, non-breaking hyphen, en
// and em dashes to a space, so "non–ST-elevation" reads as "non st
// elevation" (the text is already lower case).
var foldDashes = strings.NewReplacer("-", " ", "\u2010", " ", "\u2011", " ", "\u2013", " ", "\u2014", " ")

// nonPrefixed reports whether the term at clause[b:] is negated by the
// prefix "non" attached to it ("non-ACS", "non ACS", "non-acute coronary
// syndrome"), and not part of a medical name that starts with "non"
// (nonTerms). A "non" attached to another word ("non-Hodgkin lymphoma
// with stent", "non-invasive test before PCI") negates nothing here.
func nonPrefixed(clause string, b int) bool {
	if !strings.Contains(clause[:b], "non") {
		// Folding turns dashes into spaces only: no "non" before the
		// term, none after folding.
		return false
	}
	before := strings.TrimRight(foldDashes.Replace(clause[:b]), " ")
	if !strings.HasSuffix(before, "non") {
		return false
	}
	i := len(before) - len("non")
	if i > 0 && isWordByte(before[i-1]) {
		return false // "canon ACS" … "non" is the end of another word
	}
	// The folded rest of the clause, from the "non".
	rest := foldDashes.Replace(clause[b:])
	from := "non " + rest
	for _, t := range nonTerms {
		if strings.HasPrefix(from, t) && (len(from) == len(t) || !isWordByte(from[len(t)])) {
			return false
		}
	}
	return true
}

// negatedAt reports whether the term at clause[b:e] is negated: a
// negation cue before it in its clause (negBefore), one after it
// (negAfter), or the prefix "non" attached to it (nonPrefixed).
func negatedAt(clause string, b, e int) bool {
	return negBefore.in(clause[:b]) || negAfter.in(clause[e:]) || nonPrefixed(clause, b)
}

// affirmed reports whether w matches one of the clauses without a
// negation (negatedAt); negated returns the negated mentions.
func affirmed(w wordTerms, clauses []string) (ok bool, negated []string) {
	for _, clause := range clauses {
		for b, e := w.next(clause, 0); b >= 0; b, e = w.next(clause, e) {
			if negatedAt(clause, b, e) {
				negated = append(negated, strings.TrimSpace(clause))
				continue
			}
			ok = true
		}
	}
	return ok, negated
}

// clopidogrelFromText reads a free-text indication for the clopidogrel
// populations: ACS or PCI affirmed → CVI ACS PCI; else "non-ACS non-PCI"
// named → that; else a neurovascular term alone → NVI; else a
// cardiovascular term alone → CVI non-ACS non-PCI. Both neurovascular and
// cardiovascular terms, or none, decide nothing.
func clopidogrelFromText(text string) (pop, why string, notes []string) {
	t := strings.ToLower(strings.TrimSpace(text))
	if t == "" {
		return "", "", nil
	}
	clauses := splitClauses(t)
	acs, negACS := affirmed(textACSPCI, clauses)
	neuro, negNeuro := affirmed(textNeuro, clauses)
	cvi, _ := affirmed(textCVI, clauses)
	for _, n := range append(negACS, negNeuro...) {
		notes = append(notes, fmt.Sprintf("the indication text %q is read as negated", n))
	}
	switch {
	case acs:
		return PopACSPCI, "the indication text (acute coronary syndrome or PCI)", notes
	case textNonACS.MatchString(t):
		return PopNonACS, "the indication text (non-ACS, non-PCI)", notes
	case neuro && !cvi:
		return PopNeuro, "the indication text (neurovascular)", notes
	case cvi && !neuro:
		return PopNonACS, "the indication text (cardiovascular, neither ACS nor PCI)", notes
	}
	return "", "", notes
}

// validateContext checks the coded context of a request: every coding has
// a system and a code. A system the selector does not read is not an
// error (the code is reported in the population notes).
func ValidateContext(req engine.Request) error {
	var fe []engine.FieldError
	for i, c := range req.IndicationCodes {
		if strings.TrimSpace(c.System) == "" {
			fe = append(fe, engine.FieldError{Field: fmt.Sprintf("indication_codes[%d].system", i), Reason: "is required (a code system URL such as " + engine.SystemICD10URL + ")"})
		}
		if strings.TrimSpace(c.Code) == "" {
			fe = append(fe, engine.FieldError{Field: fmt.Sprintf("indication_codes[%d].code", i), Reason: "is required"})
		}
	}
	if len(fe) > 0 {
		return &engine.ValidationError{Fields: fe}
	}
	return nil
}
