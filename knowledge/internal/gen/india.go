package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/pgxsafety/pgxsafety/knowledge"
)

// loadIndia reads the files of data/india.
func (b *builder) loadIndia() error {
	dir := filepath.Join(b.dir, "india")
	var err error
	if b.variantCSV, err = readCSV(dir, "variant_frequencies.csv", []string{"rsid", "gene", "allele_label", "ref", "alt", "af_south_asian", "af_indian", "source_for_each_figure", "af_south_asian_basis", "af_indian_metric", "af_cpic_central_south_asian", "notes"}, nil); err != nil {
		return err
	}
	if b.globalCSV, err = readCSV(dir, "global_frequencies.csv", []string{"rsid", "ref", "alt", "af_global", "population_basis", "source", "af_1000g30x_sas_unrel_489", "onekg30x_source", "clinvar_significance", "clinvar_source", "notes"}, nil); err != nil {
		return err
	}
	if b.stateCSV, err = readCSV(dir, "state_context.csv", []string{"state", "state_type", "risk", "affected_drugs", "note", "source"}, nil); err != nil {
		return err
	}
	if b.ethnicCSV, err = readCSV(dir, "ethnicity_context.csv", []string{"community_or_group", "region", "gene_or_trait", "finding", "drugs_affected", "metric_value", "n", "source", "notes"}, nil); err != nil {
		return err
	}
	b.herbCSV, err = readCSV(dir, "herb_drug_interactions.csv", []string{"herb_common", "herb_botanical", "traditional_names", "interacting_drug_or_class", "mechanism", "effect", "severity_as_stated", "evidence_type", "source", "notes"}, b.repairHerb)
	return err
}

// repairHerb repairs the one known defect of herb_drug_interactions.csv:
// a traditional_names cell "X (traditional name, unsourced)" written
// without quotes, which splits it in two and adds an empty field at the
// end. Any other field-count mismatch is an error.
func (b *builder) repairHerb(rec []string, line int) ([]string, error) {
	if len(rec) == 11 && strings.HasSuffix(rec[3], " unsourced)") && strings.HasSuffix(rec[2], "(traditional name") && rec[10] == "" {
		out := append([]string{rec[0], rec[1], rec[2] + "," + rec[3]}, rec[4:]...)
		b.dataProblems = append(b.dataProblems, fmt.Sprintf("herb_drug_interactions.csv line %d (%s): unquoted comma in traditional_names %q; fields re-joined", line, rec[0], out[2]))
		return out, nil
	}
	return nil, fmt.Errorf("%d fields; not the known unquoted-comma defect", len(rec))
}

var (
	reRsID    = regexp.MustCompile(`^rs\d+$`)
	reClinVar = regexp.MustCompile(`ClinVar as of (\d{4}-\d{2}-\d{2})`)
)

// Bases of af_india other than the source's own metric text.
const (
	basis1000GSAS = "1000 Genomes 30x, South Asian (489 unrelated)"
	basisCPICCSA  = "CPIC Central/South Asian biogeographic group"
)

// buildVariants builds variants.json (see the package comment for the
// rules). It fails unless exactly 61 rows are rsID-addressable.
func (b *builder) buildVariants() error {
	global := map[string][]row{}
	for _, r := range b.globalCSV.rows {
		global[r.s("rsid")] = append(global[r.s("rsid")], r)
	}
	rsids := map[string]*knowledge.RsID{}
	for i := range b.kb.RsIDs {
		x := &b.kb.RsIDs[i]
		rsids[x.RsID+" "+x.Alt] = x
	}
	alleles := map[string]map[string]*knowledge.Allele{}
	for i := range b.kb.Genes {
		g := &b.kb.Genes[i]
		alleles[g.Symbol] = map[string]*knowledge.Allele{}
		for j := range g.Alleles {
			alleles[g.Symbol][g.Alleles[j].Name] = &g.Alleles[j]
		}
	}
	seen := map[string]bool{}
	var excluded []string
	for _, r := range b.variantCSV.rows {
		rsid := r.s("rsid")
		if !reRsID.MatchString(rsid) {
			excluded = append(excluded, fmt.Sprintf("%s (%s)", rsid, r.s("allele_label")))
			continue
		}
		if seen[rsid] {
			return fmt.Errorf("%s: duplicate rsid %s", r.where(), rsid)
		}
		seen[rsid] = true
		v := knowledge.TrackedVariant{
			RsID: rsid, Gene: r.s("gene"), AlleleLabel: r.s("allele_label"),
			Ref: r.s("ref"), Alt: r.s("alt"),
		}
		v.AlleleLabel += repeatCountNote(v, b.kb.Definitions)
		alts := splitList(v.Alt, ",")
		multi := len(alts) > 1
		tag := strings.Contains(strings.ToLower(v.Gene), "tag")
		genes := geneComponents(v.Gene)
		ids := []string{}
		// figureSource maps a figure's label ("af_indian", "af_south_asian",
		// "af_cpic_*") to the sources the row names for it.
		figureSource := map[string][]string{}
		for _, piece := range strings.Split(r.s("source_for_each_figure"), " | ") {
			piece = strings.TrimSpace(piece)
			// "ref/alt: not sourced" and "ref/alt: see notes" cite nothing.
			if piece == "" || strings.HasSuffix(piece, ": not sourced") || strings.HasSuffix(piece, ": see notes") {
				continue
			}
			id := b.src.text(piece)
			ids = append(ids, id)
			if label, _, ok := strings.Cut(piece, ":"); ok && len(strings.Fields(label)) > 0 {
				// "af_cpic_* (G6PD Orissa)" is the af_cpic_* figure.
				key := strings.Fields(label)[0]
				figureSource[key] = append(figureSource[key], id)
			}
		}

		// Star alleles and function from the CPIC allele definitions.
		var functions, carried []string
		for _, alt := range alts {
			x := rsids[rsid+" "+alt]
			if x == nil || !slices.Contains(genes, x.Gene) {
				continue
			}
			v.StarAlleles = append(v.StarAlleles, x.Alleles...)
			for _, s := range x.Alleles {
				f := ""
				if a := alleles[x.Gene][s]; a != nil {
					f = a.Function
				}
				if !slices.Contains(carried, f) {
					carried = append(carried, f)
				}
			}
			for _, s := range x.Sole {
				if a := alleles[x.Gene][s]; a != nil && a.Function != "" && !slices.Contains(functions, a.Function) {
					functions = append(functions, a.Function)
				}
			}
		}
		v.StarAlleles = slices.Compact(v.StarAlleles)
		switch {
		case len(functions) == 1:
			v.Function = functions[0]
		case len(functions) == 0 && len(carried) == 1 && carried[0] != "":
			// No allele is defined by this variant alone, but every allele
			// carrying it has the same function.
			v.Function = carried[0]
		}

		// Global rows of this variant's alt alleles, in the row's alt order.
		var grows []row
		for _, alt := range alts {
			for _, g := range global[rsid] {
				if g.s("alt") == alt {
					if g.s("ref") != v.Ref {
						return fmt.Errorf("%s: ref %q differs from variant_frequencies.csv ref %q", g.where(), g.s("ref"), v.Ref)
					}
					grows = append(grows, g)
				}
			}
		}
		alleleNote := func(g row) string {
			if multi {
				return " (allele " + g.s("alt") + ")"
			}
			return ""
		}

		// af_india: the first available figure.
		if f, ok := parseAF(r.s("af_indian")); ok {
			v.AFIndia = f
			metric := r.s("af_indian_metric")
			if metric == "" {
				v.AFIndiaBasis = "India"
			} else {
				v.AFIndiaBasis = metric + " (India)"
			}
			v.AFIndiaKind = "allele"
			if strings.Contains(strings.ToLower(metric), "carrier") {
				v.AFIndiaKind = "carrier"
			}
			v.AFIndiaSourceIDs = figureSource["af_indian"]
		} else if f, ok := parseAF(r.s("af_south_asian")); ok {
			v.AFIndia, v.AFIndiaKind = f, "allele"
			v.AFIndiaSourceIDs = figureSource["af_south_asian"]
			v.AFIndiaBasis = r.s("af_south_asian_basis")
			if v.AFIndiaBasis == "" {
				v.AFIndiaBasis = "South Asian"
			}
		} else {
			for _, g := range grows {
				if f, ok := parseAF(g.s("af_1000g30x_sas_unrel_489")); ok {
					v.AFIndia, v.AFIndiaKind = f, "allele"
					v.AFIndiaBasis = basis1000GSAS + alleleNote(g)
					ids = append(ids, b.src.fixed("1kg-30x"))
					v.AFIndiaSourceIDs = []string{b.src.fixed("1kg-30x")}
					break
				}
			}
			if v.AFIndia == nil && !tag {
				if f, ok := parseAF(r.s("af_cpic_central_south_asian")); ok {
					v.AFIndia, v.AFIndiaKind = f, "allele"
					v.AFIndiaBasis = basisCPICCSA
					v.AFIndiaSourceIDs = figureSource["af_cpic_*"]
				}
			}
		}
		if f, ok := parseAF(r.s("af_south_asian")); ok {
			v.AFSouthAsian = f
		}

		// af_global and ClinVar from global_frequencies.csv.
		for _, g := range grows {
			if f, ok := parseAF(g.s("af_global")); ok {
				v.AFGlobal = f
				v.AFGlobalBasis = g.s("population_basis") + alleleNote(g)
				id, err := onekgSource(g.s("source"))
				if err != nil {
					return fmt.Errorf("%s: %w", g.where(), err)
				}
				ids = append(ids, b.src.fixed(id))
				v.AFGlobalSourceIDs = []string{b.src.fixed(id)}
				break
			}
		}
		var clinvar []string
		clinvarDate := ""
		for _, g := range grows {
			sig := g.s("clinvar_significance")
			if sig == "" {
				continue
			}
			m := reClinVar.FindStringSubmatch(g.s("clinvar_source"))
			if m == nil {
				return fmt.Errorf("%s: ClinVar source without date", g.where())
			}
			if clinvarDate != "" && clinvarDate != m[1] {
				return fmt.Errorf("%s: second ClinVar date", g.where())
			}
			clinvarDate = m[1]
			if multi {
				sig = g.s("ref") + ">" + g.s("alt") + ": " + sig
			}
			clinvar = append(clinvar, sig)
		}
		if len(clinvar) > 0 {
			id := "clinvar-" + clinvarDate
			v.ClinVar = strings.Join(clinvar, "; ") + " (ClinVar " + clinvarDate + ")"
			ids = append(ids, b.src.fixed(id))
		}
		var notes []string
		if n := r.s("notes"); n != "" {
			notes = append(notes, n)
		}
		for _, g := range grows {
			if n := g.s("notes"); n != "" {
				notes = append(notes, "1000 Genomes/ClinVar"+alleleNote(g)+": "+n)
			}
		}
		v.Notes = strings.Join(notes, " | ")
		v.SourceIDs = sortUnique(ids)
		b.kb.Variants = append(b.kb.Variants, v)
	}
	if len(b.kb.Variants) != 61 {
		return fmt.Errorf("variant_frequencies.csv: %d rsID-addressable rows, want exactly 61 (excluded: %v)", len(b.kb.Variants), excluded)
	}
	b.excludedVariants = excluded
	return nil
}

// onekgSource maps a global_frequencies.csv source text to the 1000
// Genomes source it names.
func onekgSource(text string) (string, error) {
	switch {
	case strings.Contains(text, "1kgp/GRCh37/"):
		return "1kg-phase3", nil
	case strings.Contains(text, "1kgp/GRCh38/"):
		return "1kg-30x", nil
	}
	return "", fmt.Errorf("af_global source names neither 1000 Genomes file: %q", text)
}

// geneComponents splits a variant's gene cell ("IFNL3/IFNL4",
// "HCP5 (HLA-B*57:01 tag)") into gene symbols.
func geneComponents(s string) []string {
	s = stripParens(s)
	var out []string
	for _, p := range strings.Split(s, "/") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// stateAliases are well-known former or alternative names of states and
// union territories (names only; no clinical content). Each key must be a
// state of state_context.csv. Spellings with "&" for "and" are not listed:
// name matching folds "&" to "and".
var stateAliases = map[string][]string{
	"Andaman and Nicobar Islands":              {"Andaman and Nicobar", "A&N Islands"},
	"Dadra and Nagar Haveli and Daman and Diu": {"Dadra and Nagar Haveli", "Daman and Diu"},
	"Delhi":             {"NCT of Delhi", "Delhi NCT", "National Capital Territory of Delhi"},
	"Jammu and Kashmir": {"J&K"},
	"Odisha":            {"Orissa"},
	"Puducherry":        {"Pondicherry"},
	"Tamil Nadu":        {"Tamilnadu"},
	"Uttarakhand":       {"Uttaranchal"},
}

// buildStates builds states.json. It fails unless there are exactly 36
// states and union territories.
func (b *builder) buildStates() error {
	byName := map[string]*knowledge.State{}
	for _, r := range b.stateCSV.rows {
		name := r.s("state")
		s := byName[name]
		if s == nil {
			s = &knowledge.State{Name: name, Type: r.s("state_type"), Risks: []knowledge.StateRisk{}}
			byName[name] = s
		}
		if s.Type != r.s("state_type") {
			return fmt.Errorf("%s: %s is both %q and %q", r.where(), name, s.Type, r.s("state_type"))
		}
		if s.Type != "state" && s.Type != "union territory" {
			return fmt.Errorf("%s: state_type %q", r.where(), s.Type)
		}
		risk := knowledge.StateRisk{
			Risk:         r.s("risk"),
			Disease:      riskDisease(r.s("risk")),
			Drugs:        b.parseDrugNames(r.s("affected_drugs")),
			AffectedText: r.s("affected_drugs"),
			Note:         r.s("note"),
			SourceIDs:    []string{b.src.text(r.s("source"))},
		}
		if risk.Risk == "" || risk.Disease == "" {
			return fmt.Errorf("%s: empty risk", r.where())
		}
		// A note naming the source's spelling of another state was copied to
		// the wrong rows in the data pack; kept as is, reported in README.md.
		if m := reSourceNames.FindStringSubmatch(risk.Note); m != nil && !strings.HasPrefix(foldName(name), foldName(m[1])) {
			b.dataProblems = append(b.dataProblems, fmt.Sprintf("state_context.csv line %d (%s, %q): note %q names another state", r.line, name, risk.Risk, risk.Note))
		}
		s.Risks = append(s.Risks, risk)
	}
	if len(byName) != 36 {
		return fmt.Errorf("state_context.csv: %d states/UTs, want exactly 36", len(byName))
	}
	for name, aliases := range stateAliases {
		s := byName[name]
		if s == nil {
			return fmt.Errorf("alias table names unknown state %q", name)
		}
		s.Aliases = slices.Clone(aliases)
		sort.Strings(s.Aliases)
	}
	for _, name := range sortedKeys(byName) {
		b.kb.States = append(b.kb.States, *byName[name])
	}
	return nil
}

var reSourceNames = regexp.MustCompile(`^Source names "([^"]+)"`)

// foldName lower-cases a name and writes "&" as "and".
func foldName(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.ToLower(s), "&", " and ")), " ")
}

var reGeneToken = regexp.MustCompile(`\b[A-Z][A-Z0-9]+(?:-[A-Z0-9]+)*`)

// buildCommunities builds communities.json.
func (b *builder) buildCommunities() error {
	genes := map[string]bool{}
	for _, g := range b.kb.Genes {
		genes[g.Symbol] = true
	}
	for _, r := range b.ethnicCSV.rows {
		c := knowledge.Community{
			Name:      r.s("community_or_group"),
			Region:    r.s("region"),
			Trait:     r.s("gene_or_trait"),
			Finding:   r.s("finding"),
			DrugsText: r.s("drugs_affected"),
			Drugs:     b.parseDrugNames(r.s("drugs_affected")),
			Metric:    r.s("metric_value"),
			N:         r.s("n"),
			Notes:     r.s("notes"),
			SourceIDs: []string{b.src.text(r.s("source"))},
		}
		if c.Name == "" || c.Trait == "" || c.Finding == "" {
			return fmt.Errorf("%s: empty community, trait or finding", r.where())
		}
		for _, tok := range reGeneToken.FindAllString(c.Trait, -1) {
			if (genes[tok] || strings.HasPrefix(tok, "HLA-")) && !slices.Contains(c.Genes, tok) {
				c.Genes = append(c.Genes, tok)
			}
		}
		b.kb.Communities = append(b.kb.Communities, c)
	}
	return nil
}

// buildHerbs builds herbs.json. Drugs are the covered drug names (or
// synonyms) that literally occur in interacting_drug_or_class.
func (b *builder) buildHerbs() error {
	for _, r := range b.herbCSV.rows {
		h := knowledge.HerbInteraction{
			Herb:             r.s("herb_common"),
			Botanical:        r.s("herb_botanical"),
			TraditionalNames: r.s("traditional_names"),
			DrugsText:        r.s("interacting_drug_or_class"),
			Mechanism:        r.s("mechanism"),
			Effect:           r.s("effect"),
			Severity:         r.s("severity_as_stated"),
			Evidence:         r.s("evidence_type"),
			Notes:            r.s("notes"),
			SourceIDs:        []string{b.src.text(r.s("source"))},
		}
		if h.Herb == "" || h.DrugsText == "" {
			return fmt.Errorf("%s: empty herb or drug text", r.where())
		}
		set := map[string]bool{}
		lower := strings.ToLower(h.DrugsText)
		for name, canon := range b.coveredNames {
			if containsWord(lower, name) {
				set[canon] = true
			}
		}
		h.Drugs = sortedKeys(set)
		b.kb.Herbs = append(b.kb.Herbs, h)
	}
	return nil
}

var reNumberWord = regexp.MustCompile(`\s\d`)

// riskDisease returns the disease a state risk is about: the risk's leading
// phrase, i.e. the text before the first ':' or ';' outside parentheses,
// cut before the first number and before an unclosed "(", lower case
// ("malaria: high burden …" → "malaria"; "G6PD deficiency 2.97% (SW
// Odisha: …)" → "g6pd deficiency").
func riskDisease(risk string) string {
	depth, end := 0, len(risk)
loop:
	for i, ch := range risk {
		switch ch {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ':', ';':
			if depth == 0 {
				end = i
				break loop
			}
		}
	}
	s := risk[:end]
	if loc := reNumberWord.FindStringIndex(s); loc != nil {
		s = s[:loc[0]]
	}
	if i := strings.LastIndex(s, "("); i >= 0 && !strings.Contains(s[i:], ")") {
		s = s[:i]
	}
	return strings.ToLower(strings.Trim(strings.TrimSpace(s), ",;:-– "))
}

// notDrugWords are single words of the India drug columns that are not
// drug names ("caffeine/carcinogens").
var notDrugWords = map[string]bool{"carcinogens": true}

var reSimpleItems = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*(?:/[a-z0-9][a-z0-9-]*)*$`)

// parseDrugNames returns the drug names of a free-text drugs column, lower
// case, sorted: (1) every drug name of the data pack's vocabulary (all drug
// names of the pgx tables, the alternatives named in recommendations, and
// synonyms, which map to their drug) that occurs as a whole word outside
// parentheses; (2) the items of a parenthetical list that are exactly a
// vocabulary name ("CPIC G6PD high-risk drugs (dapsone, rasburicase, …)");
// (3) each comma- or semicolon-separated item outside parentheses that is a
// single word or a "/"-list of single words ("hydroxyurea",
// "citalopram/escitalopram"), except notDrugWords. Parenthetical notes are
// otherwise ignored ("carbamazepine (phenytoin association not observed)"
// gives only carbamazepine).
func (b *builder) parseDrugNames(text string) []string {
	set := map[string]bool{}
	outside := strings.ToLower(stripParens(text))
	for name, canon := range b.vocabulary {
		if containsWord(outside, name) {
			set[canon] = true
		}
	}
	for _, grp := range parenGroups(text) {
		for _, it := range strings.FieldsFunc(strings.ToLower(grp), func(r rune) bool { return r == ',' || r == ';' || r == '/' }) {
			if c, ok := b.vocabulary[strings.TrimSpace(it)]; ok {
				set[c] = true
			}
		}
	}
	for _, seg := range strings.FieldsFunc(outside, func(r rune) bool { return r == ',' || r == ';' }) {
		seg = strings.TrimSpace(seg)
		if !reSimpleItems.MatchString(seg) {
			continue
		}
		for _, p := range strings.Split(seg, "/") {
			if c, ok := b.vocabulary[p]; ok {
				set[c] = true
			} else if !notDrugWords[p] {
				set[p] = true
			}
		}
	}
	if len(set) == 0 {
		return nil
	}
	return sortedKeys(set)
}

// stripParens removes parenthesised text (with nesting).
func stripParens(s string) string {
	var out strings.Builder
	depth := 0
	for _, ch := range s {
		switch {
		case ch == '(':
			depth++
		case ch == ')':
			if depth > 0 {
				depth--
			}
		case depth == 0:
			out.WriteRune(ch)
		}
	}
	return out.String()
}

// parenGroups returns the contents of the top-level parentheses of s.
func parenGroups(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, ch := range s {
		switch ch {
		case '(':
			if depth == 0 {
				start = i + 1
			}
			depth++
		case ')':
			if depth > 0 {
				depth--
				if depth == 0 {
					out = append(out, s[start:i])
				}
			}
		}
	}
	return out
}

// containsWord reports whether name occurs in text (both lower case) with
// no letter, digit or hyphen on either side.
func containsWord(text, name string) bool {
	isWord := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'
	}
	for from := 0; ; {
		i := strings.Index(text[from:], name)
		if i < 0 {
			return false
		}
		i += from
		j := i + len(name)
		if (i == 0 || !isWord(text[i-1])) && (j == len(text) || !isWord(text[j])) {
			return true
		}
		from = i + 1
	}
}

var (
	reRepeatClinical = regexp.MustCompile(`^\(([A-Z]+)\)([0-9]+)$`)
	reLabelStar      = regexp.MustCompile(`\*[0-9]+[A-Z]?\b`)
)

// repeatCountNote states the count convention of a tracked repeat variant
// whose alt is written as a clinical count ("(TA)7") when the allele
// definitions count the same allele differently: the label's star allele
// (UGT1A1 "*28") has the definitions' cell U(m) at a repeat position and
// m differs from the row's count. "" when nothing needs saying. The note
// is derived from the two data-pack rows, not typed: the panel row's ref
// and alt, and the definitions' CPIC→VCF map and the allele's cell.
func repeatCountNote(v knowledge.TrackedVariant, defs []knowledge.GeneDefinition) string {
	ma := reRepeatClinical.FindStringSubmatch(v.Alt)
	mr := reRepeatClinical.FindStringSubmatch(v.Ref)
	star := reLabelStar.FindString(v.AlleleLabel)
	if ma == nil || mr == nil || ma[1] != mr[1] || star == "" {
		return ""
	}
	unit, n := ma[1], ma[2]
	for _, d := range defs {
		if d.Gene != v.Gene {
			continue
		}
		for _, a := range d.Alleles {
			if a.Name != star {
				continue
			}
			for _, c := range a.Cells {
				for _, p := range d.Positions {
					if p.Pos != c.Pos {
						continue
					}
					for cpic, vcf := range p.CPICToVCF {
						if vcf != c.Allele || !strings.HasPrefix(cpic, unit+"(") || cpic == unit+"("+n+")" {
							continue
						}
						ref := ""
						for rc, rv := range p.CPICToVCF {
							if rv == p.Ref {
								ref = rc
							}
						}
						return fmt.Sprintf(" [clinical repeat count: %s is the reference, %s is %s; the CPIC/PharmCAT allele definitions (%s) count otherwise: %s is the reference, %s is %s]",
							v.Ref, v.Alt, star, p.RsID, ref, cpic, star)
					}
				}
			}
		}
	}
	return ""
}
