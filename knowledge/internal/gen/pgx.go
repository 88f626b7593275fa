package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/knowledge"
)

// phenoGene is one gene of pgx/phenotype_rules.json.
type phenoGene struct {
	Gene        string `json:"gene"`
	DataVersion string `json:"data_version"`
	Source      struct {
		Repository string `json:"repository"`
		Commit     string `json:"commit"`
		Path       string `json:"path"`
	} `json:"source"`
	Method         string `json:"method"`
	AlleleFunction map[string]struct {
		ClinicalFunction *string `json:"clinical_function"`
		ActivityValue    *string `json:"activity_value"`
	} `json:"allele_function"`
	Rules []struct {
		RuleType  string `json:"rule_type"`
		Key       string `json:"key"`
		Phenotype string `json:"phenotype"`
	} `json:"rules"`

	sourceID string
}

// recFile is pgx/recommendations.json or pgx/dpwg_recommendations.json.
type recFile struct {
	Guidelines      []recGuideline             `json:"guidelines"`
	Recommendations []recRecord                `json:"recommendations"`
	SpecialGuidance map[string]json.RawMessage `json:"special_guidance"`
}

type recGuideline struct {
	AnnotationID string   `json:"pharmgkb_annotation_id"`
	Name         string   `json:"name"`         // DPWG
	URL          string   `json:"url"`          // DPWG: ClinPGx annotation page
	PharmgkbURL  string   `json:"pharmgkb_url"` // CPIC: ClinPGx annotation page
	CPICName     *string  `json:"cpic_guideline_name"`
	CPICURL      *string  `json:"cpic_guideline_url"`
	PMIDs        []string `json:"pmids"`
}

type recRecord struct {
	RecID               string                     `json:"rec_id"`
	Source              string                     `json:"source"`
	SourceFormat        string                     `json:"source_format"`
	Drug                string                     `json:"drug"`
	DrugRxNorm          *string                    `json:"drug_rxnorm_cui"`
	Genes               []string                   `json:"genes"`
	LookupKey           map[string]json.RawMessage `json:"lookup_key"`
	LookupType          map[string]string          `json:"lookup_type"`
	Phenotypes          map[string]string          `json:"phenotypes"`
	Population          *string                    `json:"population"`
	Implications        json.RawMessage            `json:"implications"`
	Recommendation      string                     `json:"recommendation"`
	OtherConsiderations *string                    `json:"other_considerations"`
	Classification      *string                    `json:"classification"`
	Flags               *struct {
		Dosing    bool `json:"dosingInformation"`
		Alternate bool `json:"alternateDrugAvailable"`
	} `json:"pharmgkb_flags"`
	Actionability    string       `json:"actionability"`
	Basis            []string     `json:"actionable_basis"`
	Alternatives     []string     `json:"alternatives_named"`
	Guideline        recGuideline `json:"guideline"`
	DataVersion      string       `json:"data_version"`
	PharmcatSpecific bool         `json:"pharmcat_specific_lookup"`
	Partial          *bool        `json:"partial_guideline"`
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// loadPGx reads the files of data/pgx.
func (b *builder) loadPGx() error {
	dir := filepath.Join(b.dir, "pgx")
	var err error
	if b.drugsCSV, err = readCSV(dir, "drugs.csv", []string{"drug", "rxnorm_cui", "atc_codes", "atc_class_name", "guideline_drug_group", "best_cpic_level"}, nil); err != nil {
		return err
	}
	if b.pairsCSV, err = readCSV(dir, "gene_drug_pairs.csv", []string{"gene", "drug", "drug_rxnorm_cui", "drug_atc_codes", "cpic_level", "cpic_level_status", "pharmgkb_level_of_evidence", "guideline_name", "guideline_name_source", "guideline_url", "guideline_pmids"}, nil); err != nil {
		return err
	}
	if b.summaryCSV, err = readCSV(dir, "allele_summary.csv", []string{"gene", "allele", "is_reference_allele", "is_default_allele", "structural_variant", "clinical_function", "activity_value", "defining_variants", "key_variants_vs_default_allele"}, nil); err != nil {
		return err
	}
	if b.defsCSV, err = readCSV(dir, "allele_definitions.csv", []string{"gene", "chromosome"}, nil); err != nil {
		return err
	}
	if b.rsidCSV, err = readCSV(dir, "rsid_index.csv", []string{"rsid", "gene", "ref_grch38", "alt", "named_alleles_containing_alt", "alleles_defined_by_this_variant_alone"}, nil); err != nil {
		return err
	}
	if b.freqCSV, err = readCSV(dir, "allele_frequencies.csv", []string{"gene", "allele", "biogeographic_group", "frequency", "source"}, nil); err != nil {
		return err
	}
	md, err := os.ReadFile(filepath.Join(dir, "SOURCES.md"))
	if err != nil {
		return err
	}
	b.sourcesMD = string(md)
	b.src.addRepoLinks(b.sourcesMD)
	imd, err := os.ReadFile(filepath.Join(b.dir, "india", "SOURCES.md"))
	if err != nil {
		return err
	}
	b.src.addRepoLinks(string(imd))

	raw := map[string]json.RawMessage{}
	if err := readJSON(filepath.Join(dir, "phenotype_rules.json"), &raw); err != nil {
		return err
	}
	b.pheno = map[string]*phenoGene{}
	for name, msg := range raw {
		if strings.HasPrefix(name, "_") {
			continue
		}
		g := &phenoGene{}
		if err := json.Unmarshal(msg, g); err != nil {
			return fmt.Errorf("phenotype_rules.json %s: %w", name, err)
		}
		if g.Gene != name {
			return fmt.Errorf("phenotype_rules.json: key %s holds gene %q", name, g.Gene)
		}
		b.pheno[name] = g
		b.phenoOrder = append(b.phenoOrder, name)
	}
	sort.Strings(b.phenoOrder)
	if err := b.phenoSources(); err != nil {
		return err
	}

	b.cpic, b.dpwg = &recFile{}, &recFile{}
	if err := readJSON(filepath.Join(dir, "recommendations.json"), b.cpic); err != nil {
		return err
	}
	return readJSON(filepath.Join(dir, "dpwg_recommendations.json"), b.dpwg)
}

// phenoSources builds one source per phenotype-file snapshot: the commit
// most genes come from is "pcat-phenotype"; genes taken from older commits
// get "pcat-phenotype-<gene>-<commit>".
func (b *builder) phenoSources() error {
	b.phenoSrc = map[string]knowledge.Source{}
	count := map[string]int{}
	for _, g := range b.pheno {
		count[g.Source.Commit]++
	}
	head := ""
	for _, c := range sortedKeys(count) {
		if count[c] > count[head] {
			head = c
		}
	}
	repoURL := func(repo string) (string, error) {
		r, ok := strings.CutPrefix(repo, "github:")
		if !ok {
			return "", fmt.Errorf("phenotype_rules.json: unexpected repository %q", repo)
		}
		return "https://github.com/" + r, nil
	}
	for _, name := range b.phenoOrder {
		g := b.pheno[name]
		if len(g.Source.Commit) < 8 || g.Source.Path == "" {
			return fmt.Errorf("phenotype_rules.json %s: incomplete source", name)
		}
		u, err := repoURL(g.Source.Repository)
		if err != nil {
			return err
		}
		year := ""
		if len(g.DataVersion) >= 4 && g.DataVersion[0] >= '0' && g.DataVersion[0] <= '9' {
			year = g.DataVersion[:4]
		}
		var src knowledge.Source
		if g.Source.Commit == head {
			dir := filepath.ToSlash(filepath.Dir(g.Source.Path))
			src = knowledge.Source{
				ID:        "pcat-phenotype",
				Title:     fmt.Sprintf("PharmCAT CPIC phenotype files (allele function and diplotype→phenotype), %s/ @ %s (data %s)", dir, g.Source.Commit[:8], g.DataVersion),
				Publisher: "PharmGKB/ClinPGx (PharmCAT), CPIC®", Year: year,
				URL: u + "/tree/" + g.Source.Commit + "/" + dir, Licence: licCC0,
			}
		} else {
			src = knowledge.Source{
				ID:        "pcat-phenotype-" + strings.ToLower(name) + "-" + g.Source.Commit[:8],
				Title:     fmt.Sprintf("PharmCAT CPIC phenotype file %s @ %s (data %s)", g.Source.Path, g.Source.Commit[:8], g.DataVersion),
				Publisher: "PharmGKB/ClinPGx (PharmCAT), CPIC®", Year: year,
				URL: u + "/blob/" + g.Source.Commit + "/" + g.Source.Path, Licence: licCC0,
			}
		}
		g.sourceID = src.ID
		b.phenoSrc[src.ID] = src
	}
	b.phenoHead = head
	return nil
}

// levelRank orders CPIC levels from strongest to weakest.
var levelRank = map[string]int{"A": 0, "A/B": 1, "B": 2, "B/C": 3, "C": 4, "C/D": 5, "D": 6}

// synonymEvidence lists the only drug synonyms: names that a data-pack row
// literally links to a drug. Each entry is checked against the named file.
var synonymEvidence = []struct {
	drug, synonym string
	// evidence must occur literally in the drugs column of a row of
	// india/ethnicity_context.csv or india/state_context.csv.
	evidence string
}{
	{"succinylcholine", "suxamethonium", "succinylcholine (suxamethonium)"},
}

// recSourceID maps a recommendation record to the id of its source.
func recSourceID(r *recRecord) (string, error) {
	switch {
	case r.Source == "DPWG":
		return "dpwg-clinpgx", nil
	case r.SourceFormat == "ClinPGx/PharmGKB guideline annotation":
		return "cpic-recs-clinpgx", nil
	case strings.HasPrefix(r.SourceFormat, "CPIC API recommendation export (cpicVersion v1.30.0)"):
		return "cpic-recs-v130", nil
	case strings.HasPrefix(r.SourceFormat, "ClinPGx annotation as matched in PharmCAT v3.1 example report"):
		return "clinpgx-2025-11", nil
	}
	return "", fmt.Errorf("recommendation %s: unknown source_format %q", r.RecID, r.SourceFormat)
}

// avoidBasis are the actionable_basis entries that say to avoid the drug or
// to use an alternative (sensitivity "high").
var avoidBasis = map[string]bool{
	"text:Avoid": true, "text:alternative": true, "text:do not use": true,
	"text:contraindicat": true, "text:not recommended": true,
	"clinpgx_flag:alternateDrugAvailable": true,
}

func saysAvoid(r *recRecord) bool {
	if r.Flags != nil && r.Flags.Alternate {
		return true
	}
	for _, b := range r.Basis {
		for _, p := range strings.Split(b, "; ") {
			if avoidBasis[strings.TrimSpace(p)] {
				return true
			}
		}
	}
	return false
}

// buildDrugs builds drugs.json rows and the drug vocabularies.
func (b *builder) buildDrugs() error {
	b.drugSet = map[string]*knowledge.Drug{}
	b.cpicRecDrugs = map[string]bool{}
	b.dpwgOnlyDrugs = map[string]bool{}
	get := func(name string) *knowledge.Drug {
		d := b.drugSet[name]
		if d == nil {
			d = &knowledge.Drug{Name: name}
			b.drugSet[name] = d
		}
		return d
	}
	sources := map[string]map[string]bool{}
	cite := func(drug, id string) {
		if sources[drug] == nil {
			sources[drug] = map[string]bool{}
		}
		sources[drug][id] = true
	}
	cuis := map[string]map[string]bool{}
	atcs := map[string]map[string]bool{}
	addSet := func(m map[string]map[string]bool, drug string, vals ...string) {
		if m[drug] == nil {
			m[drug] = map[string]bool{}
		}
		for _, v := range vals {
			if v = strings.TrimSpace(v); v != "" {
				m[drug][v] = true
			}
		}
	}

	// (a) drugs.csv
	for _, r := range b.drugsCSV.rows {
		name := r.s("drug")
		if name == "" || name != strings.ToLower(name) {
			return fmt.Errorf("%s: bad drug name %q", r.where(), name)
		}
		if _, dup := b.drugSet[name]; dup {
			return fmt.Errorf("%s: duplicate drug %q", r.where(), name)
		}
		d := get(name)
		d.ATCClass = r.s("atc_class_name")
		d.GuidelineGroup = r.s("guideline_drug_group")
		d.BestCPICLevel = r.s("best_cpic_level")
		addSet(cuis, name, r.s("rxnorm_cui"))
		addSet(atcs, name, splitList(r.s("atc_codes"), ";")...)
		cite(name, b.src.fixed("cpic-pairs"))
	}
	if len(b.drugSet) != len(b.drugsCSV.rows) {
		return fmt.Errorf("drugs.csv: %d rows, %d drugs", len(b.drugsCSV.rows), len(b.drugSet))
	}
	// (b) CPIC recommendation drugs, (c) DPWG-only drugs
	for i := range b.cpic.Recommendations {
		r := &b.cpic.Recommendations[i]
		if r.Source != "CPIC" {
			return fmt.Errorf("recommendations.json %s: source %q", r.RecID, r.Source)
		}
		b.cpicRecDrugs[r.Drug] = true
		get(r.Drug)
		if r.DrugRxNorm != nil {
			addSet(cuis, r.Drug, *r.DrugRxNorm)
		}
	}
	for i := range b.dpwg.Recommendations {
		r := &b.dpwg.Recommendations[i]
		if r.Source != "DPWG" {
			return fmt.Errorf("dpwg_recommendations.json %s: source %q", r.RecID, r.Source)
		}
		if !b.cpicRecDrugs[r.Drug] {
			b.dpwgOnlyDrugs[r.Drug] = true
			get(r.Drug)
		}
	}
	// pairs
	for _, r := range b.pairsCSV.rows {
		d := b.drugSet[r.s("drug")]
		if d == nil {
			continue
		}
		if _, ok := levelRank[r.s("cpic_level")]; !ok {
			return fmt.Errorf("%s: unknown CPIC level %q", r.where(), r.s("cpic_level"))
		}
		p := knowledge.DrugPair{
			Gene:          r.s("gene"),
			CPICLevel:     r.s("cpic_level"),
			LevelStatus:   r.s("cpic_level_status"),
			EvidenceLevel: r.s("pharmgkb_level_of_evidence"),
			GuidelineName: r.s("guideline_name"),
			GuidelineURL:  r.s("guideline_url"),
			PMIDs:         splitList(r.s("guideline_pmids"), ";"),
		}
		ids := []string{b.src.fixed("cpic-pairs")}
		if r.s("guideline_name_source") == "cpic-data guideline table" {
			ids = append(ids, b.src.fixed("cpic-data"))
		}
		for _, n := range p.PMIDs {
			ids = append(ids, b.src.pmid(n, p.GuidelineName))
		}
		p.SourceIDs = sortUnique(ids)
		d.Pairs = append(d.Pairs, p)
		addSet(cuis, d.Name, r.s("drug_rxnorm_cui"))
		addSet(atcs, d.Name, splitList(r.s("drug_atc_codes"), ";")...)
		cite(d.Name, "cpic-pairs")
	}

	// synonyms, checked against the row that links them
	for _, s := range synonymEvidence {
		d := b.drugSet[s.drug]
		if d == nil {
			return fmt.Errorf("synonym %q: drug %q is not covered", s.synonym, s.drug)
		}
		srcText := b.evidenceRow(s.evidence)
		if srcText == "" {
			return fmt.Errorf("synonym %q of %q: evidence %q not found in the India drug columns", s.synonym, s.drug, s.evidence)
		}
		d.Synonyms = append(d.Synonyms, s.synonym)
		cite(d.Name, b.src.text(srcText))
	}

	// guidance, sensitivity
	for _, name := range sortedKeys(b.drugSet) {
		d := b.drugSet[name]
		sort.SliceStable(d.Pairs, func(i, j int) bool {
			if ri, rj := levelRank[d.Pairs[i].CPICLevel], levelRank[d.Pairs[j].CPICLevel]; ri != rj {
				return ri < rj
			}
			return d.Pairs[i].Gene < d.Pairs[j].Gene
		})
		if d.Pairs == nil {
			d.Pairs = []knowledge.DrugPair{}
		}
		if d.BestCPICLevel == "" && len(d.Pairs) > 0 {
			d.BestCPICLevel = d.Pairs[0].CPICLevel
		}
		var rows []*recRecord
		switch {
		case b.cpicRecDrugs[name]:
			d.Guidance = "CPIC"
			for i := range b.cpic.Recommendations {
				if r := &b.cpic.Recommendations[i]; r.Drug == name && !r.PharmcatSpecific {
					rows = append(rows, r)
				}
			}
		case b.dpwgOnlyDrugs[name]:
			d.Guidance = "DPWG"
			for i := range b.dpwg.Recommendations {
				if r := &b.dpwg.Recommendations[i]; r.Drug == name {
					rows = append(rows, r)
				}
			}
		default:
			d.Guidance = "none"
		}
		for _, r := range rows {
			id, err := recSourceID(r)
			if err != nil {
				return err
			}
			cite(name, b.src.fixed(id))
		}
		d.Sensitivity = sensitivity(d, rows)
		d.RxNormCUIs = sortedKeys(cuis[name])
		d.ATCCodes = sortedKeys(atcs[name])
		d.SourceIDs = sortedKeys(sources[name])
		b.kb.Drugs = append(b.kb.Drugs, *d)
	}

	// vocabularies
	b.coveredNames = map[string]string{}
	b.vocabulary = map[string]string{}
	for _, d := range b.kb.Drugs {
		b.coveredNames[d.Name] = d.Name
		for _, s := range d.Synonyms {
			b.coveredNames[strings.ToLower(s)] = d.Name
		}
	}
	addVocab := func(n string) {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
			if _, ok := b.vocabulary[n]; !ok {
				b.vocabulary[n] = n
			}
		}
	}
	for _, r := range b.pairsCSV.rows {
		addVocab(r.s("drug"))
	}
	for _, f := range []*recFile{b.cpic, b.dpwg} {
		for _, r := range f.Recommendations {
			addVocab(r.Drug)
			for _, a := range r.Alternatives {
				addVocab(a)
			}
		}
	}
	for n, c := range b.coveredNames {
		b.vocabulary[n] = c
	}
	return nil
}

// sensitivity applies the tier rule of the package comment.
func sensitivity(d *knowledge.Drug, rows []*recRecord) string {
	levelA := false
	levelB := false
	for _, p := range d.Pairs {
		switch p.CPICLevel {
		case "A", "A/B":
			levelA = true
		case "B":
			levelB = true
		}
	}
	actionable := false
	for _, r := range rows {
		if r.Actionability == "yes" && saysAvoid(r) && levelA {
			return "high"
		}
		if r.Actionability == "yes" || r.Actionability == "conditional" {
			actionable = true
		}
	}
	if actionable || levelB {
		return "moderate"
	}
	return "none"
}

// evidenceRow returns the source text of the India row whose drugs column
// contains evidence literally, or "".
func (b *builder) evidenceRow(evidence string) string {
	for _, r := range b.ethnicCSV.rows {
		if strings.Contains(r.s("drugs_affected"), evidence) {
			return r.s("source")
		}
	}
	for _, r := range b.stateCSV.rows {
		if strings.Contains(r.s("affected_drugs"), evidence) {
			return r.s("source")
		}
	}
	return ""
}

// iupacAmbiguous are the IUPAC codes that mean "either base".
const iupacAmbiguous = "RYSWKMBDHVN"

// buildGenes builds genes.json.
func (b *builder) buildGenes() error {
	chrom := map[string]map[string]bool{}
	for _, r := range b.defsCSV.rows {
		if chrom[r.s("gene")] == nil {
			chrom[r.s("gene")] = map[string]bool{}
		}
		if c := r.s("chromosome"); c != "" {
			chrom[r.s("gene")][c] = true
		}
	}
	summary := map[string][]row{}
	for _, r := range b.summaryCSV.rows {
		summary[r.s("gene")] = append(summary[r.s("gene")], r)
	}

	// Genes named by pairs of covered drugs and by recommendations.
	symbols := map[string]bool{}
	for _, n := range b.phenoOrder {
		symbols[n] = true
	}
	for g := range summary {
		symbols[g] = true
	}
	for _, d := range b.kb.Drugs {
		for _, p := range d.Pairs {
			symbols[p.Gene] = true
		}
	}
	recLookupTypes := map[string]map[string]bool{}
	recSources := map[string]map[string]bool{}
	b.eachIncludedRec(func(r *recRecord) {
		id, _ := recSourceID(r)
		for _, g := range r.Genes {
			symbols[g] = true
			if recLookupTypes[g] == nil {
				recLookupTypes[g] = map[string]bool{}
				recSources[g] = map[string]bool{}
			}
			recLookupTypes[g][r.LookupType[g]] = true
			recSources[g][id] = true
		}
	})

	headVersion := ""
	for _, n := range b.phenoOrder {
		if b.pheno[n].Source.Commit == b.phenoHead {
			headVersion = b.pheno[n].DataVersion
			break
		}
	}

	for _, sym := range sortedKeys(symbols) {
		g := knowledge.Gene{Symbol: sym, Alleles: []knowledge.Allele{}, Rules: []knowledge.PhenotypeRule{}}
		gsrc := map[string]bool{}
		alleles := map[string]*knowledge.Allele{}
		if p := b.pheno[sym]; p != nil {
			g.Method = p.Method
			g.DataVersion = p.DataVersion
			gsrc[b.src.add(b.phenoSource(p))] = true
			for name, af := range p.AlleleFunction {
				a := &knowledge.Allele{Name: name, SourceIDs: []string{p.sourceID}}
				if af.ClinicalFunction != nil {
					a.Function = *af.ClinicalFunction
				}
				if af.ActivityValue != nil {
					a.Activity = *af.ActivityValue
				}
				alleles[name] = a
			}
			for _, r := range p.Rules {
				g.Rules = append(g.Rules, knowledge.PhenotypeRule{Type: r.RuleType, Key: r.Key, Phenotype: r.Phenotype})
			}
		}
		if rows := summary[sym]; len(rows) > 0 {
			if g.DataVersion == "" {
				g.DataVersion = headVersion
			}
			seen := map[string]bool{}
			for _, r := range rows {
				name := r.s("allele")
				if seen[name] {
					return fmt.Errorf("%s: duplicate allele %s %s", r.where(), sym, name)
				}
				seen[name] = true
				a := alleles[name]
				if a == nil {
					a = &knowledge.Allele{Name: name, Function: r.s("clinical_function"), Activity: r.s("activity_value")}
					alleles[name] = a
				}
				a.SourceIDs = sortUnique(append(a.SourceIDs, b.src.fixed("pcat-alleles")))
				switch r.s("structural_variant") {
				case "yes":
					a.Structural = true
				case "no", "":
				default:
					return fmt.Errorf("%s: structural_variant %q", r.where(), r.s("structural_variant"))
				}
				a.Defining = splitVariantList(r.s("defining_variants"))
				for _, item := range splitVariantList(r.s("key_variants_vs_default_allele")) {
					i := strings.LastIndex(item, ":")
					if i <= 0 || i == len(item)-1 {
						return fmt.Errorf("%s: key variant %q is not id:base", r.where(), item)
					}
					base := item[i+1:]
					a.Key = append(a.Key, knowledge.AlleleVariant{
						RsID: item[:i], Base: base,
						Ambiguous: len(base) == 1 && strings.Contains(iupacAmbiguous, base),
					})
				}
				if r.s("is_default_allele") == "yes" {
					if g.DefaultAllele != "" {
						return fmt.Errorf("%s: second default allele for %s", r.where(), sym)
					}
					g.DefaultAllele = name
				}
				if r.s("is_reference_allele") == "yes" {
					if g.ReferenceAllele != "" {
						return fmt.Errorf("%s: second reference allele for %s", r.where(), sym)
					}
					g.ReferenceAllele = name
				}
			}
			gsrc["pcat-alleles"] = true
		}
		if cs := chrom[sym]; len(cs) == 1 {
			g.Chromosome = sortedKeys(cs)[0]
		} else if len(cs) > 1 {
			return fmt.Errorf("allele_definitions.csv: gene %s on several chromosomes %v", sym, sortedKeys(cs))
		}
		if b.pheno[sym] == nil {
			// The data pack has no CPIC phenotype translation for this gene.
			// Genes whose recommendation rows all look up an allele status
			// (HLA-A, HLA-B) get that method.
			if lt := recLookupTypes[sym]; len(lt) == 1 && lt["allele_status"] {
				g.Method = engine.MethodAlleleStatus
				for id := range recSources[sym] {
					gsrc[b.src.fixed(id)] = true
				}
			}
			if len(summary[sym]) == 0 {
				gsrc[b.src.fixed("cpic-pairs")] = true
			}
		}
		names := sortedKeys(alleles)
		slices.SortFunc(names, naturalCompare)
		for _, n := range names {
			g.Alleles = append(g.Alleles, *alleles[n])
		}
		g.SourceIDs = sortedKeys(gsrc)
		b.kb.Genes = append(b.kb.Genes, g)
	}
	return nil
}

// phenoSource returns the source of a phenotype-file gene.
func (b *builder) phenoSource(p *phenoGene) knowledge.Source { return b.phenoSrc[p.sourceID] }

// eachIncludedRec calls f for every recommendation record that goes into
// recommendations.json.
func (b *builder) eachIncludedRec(f func(r *recRecord)) {
	for i := range b.cpic.Recommendations {
		if r := &b.cpic.Recommendations[i]; !r.PharmcatSpecific {
			f(r)
		}
	}
	for i := range b.dpwg.Recommendations {
		if r := &b.dpwg.Recommendations[i]; b.dpwgOnlyDrugs[r.Drug] {
			f(r)
		}
	}
}

// buildRsIDs builds rsids.json from pgx/rsid_index.csv.
func (b *builder) buildRsIDs() error {
	seen := map[string]bool{}
	for _, r := range b.rsidCSV.rows {
		x := knowledge.RsID{
			RsID:      r.s("rsid"),
			Gene:      r.s("gene"),
			Ref:       r.s("ref_grch38"),
			Alt:       r.s("alt"),
			Alleles:   splitList(r.s("named_alleles_containing_alt"), ";"),
			Sole:      splitList(r.s("alleles_defined_by_this_variant_alone"), ";"),
			SourceIDs: []string{b.src.fixed("pcat-alleles")},
		}
		key := x.RsID + " " + x.Alt
		if seen[key] {
			return fmt.Errorf("%s: duplicate rsid+alt %s", r.where(), key)
		}
		seen[key] = true
		b.kb.RsIDs = append(b.kb.RsIDs, x)
	}
	sort.Slice(b.kb.RsIDs, func(i, j int) bool {
		a, c := b.kb.RsIDs[i], b.kb.RsIDs[j]
		if n := naturalCompare(a.RsID, c.RsID); n != 0 {
			return n < 0
		}
		return a.Alt < c.Alt
	})
	return nil
}

// buildRecommendations builds recommendations.json.
func (b *builder) buildRecommendations() error {
	dpwgURL := map[string]string{}
	for _, g := range b.dpwg.Guidelines {
		dpwgURL[g.AnnotationID] = g.URL
	}
	var err error
	b.eachIncludedRec(func(r *recRecord) {
		if err != nil {
			return
		}
		var x knowledge.Recommendation
		x, err = b.recommendation(r, dpwgURL)
		b.kb.Recommendations = append(b.kb.Recommendations, x)
	})
	if err != nil {
		return err
	}
	for i := range b.cpic.Recommendations {
		if b.cpic.Recommendations[i].PharmcatSpecific {
			b.skippedPCAT++
		}
	}
	sort.SliceStable(b.kb.Recommendations, func(i, j int) bool {
		a, c := b.kb.Recommendations[i], b.kb.Recommendations[j]
		if a.Drug != c.Drug {
			return a.Drug < c.Drug
		}
		if a.Source != c.Source {
			return a.Source < c.Source
		}
		return a.ID < c.ID
	})
	return nil
}

func (b *builder) recommendation(r *recRecord, dpwgURL map[string]string) (knowledge.Recommendation, error) {
	x := knowledge.Recommendation{
		ID:            r.RecID,
		Source:        r.Source,
		Drug:          r.Drug,
		Genes:         slices.Clone(r.Genes),
		Lookup:        map[string]string{},
		LookupType:    map[string]string{},
		Text:          r.Recommendation,
		Actionability: r.Actionability,
		Basis:         slices.Clone(r.Basis),
		Alternatives:  slices.Clone(r.Alternatives),
		PMIDs:         slices.Clone(r.Guideline.PMIDs),
	}
	for g, raw := range r.LookupKey {
		v, err := lookupValue(raw)
		if err != nil {
			return x, fmt.Errorf("recommendation %s lookup %s: %w", r.RecID, g, err)
		}
		x.Lookup[g] = v
	}
	for g, t := range r.LookupType {
		x.LookupType[g] = t
	}
	if len(r.Phenotypes) > 0 {
		x.Phenotypes = map[string]string{}
		for g, p := range r.Phenotypes {
			x.Phenotypes[g] = p
		}
	}
	if r.Population != nil {
		x.Population = *r.Population
	}
	if r.OtherConsiderations != nil && *r.OtherConsiderations != "n/a" {
		x.OtherConsiderations = *r.OtherConsiderations
	}
	if r.Classification != nil {
		x.Classification = *r.Classification
	}
	if r.Flags != nil {
		x.AlternateDrug = r.Flags.Alternate
		x.Dosing = r.Flags.Dosing
	}
	if r.Partial != nil {
		x.Partial = *r.Partial
	}
	// implications: CPIC gene → text; DPWG a list of texts
	if len(r.Implications) > 0 && !bytes.Equal(r.Implications, []byte("null")) {
		switch r.Implications[0] {
		case '{':
			m := map[string]string{}
			if err := json.Unmarshal(r.Implications, &m); err != nil {
				return x, fmt.Errorf("recommendation %s implications: %w", r.RecID, err)
			}
			if len(m) > 0 {
				x.Implications = m
			}
		case '[':
			var l []string
			if err := json.Unmarshal(r.Implications, &l); err != nil {
				return x, fmt.Errorf("recommendation %s implications: %w", r.RecID, err)
			}
			if len(l) > 0 {
				key := ""
				if len(r.Genes) == 1 {
					key = r.Genes[0]
				}
				x.Implications = map[string]string{key: strings.Join(l, "\n")}
			}
		default:
			return x, fmt.Errorf("recommendation %s: implications %s", r.RecID, r.Implications)
		}
	}
	id, err := recSourceID(r)
	if err != nil {
		return x, err
	}
	ids := []string{b.src.fixed(id)}
	if r.Source == "DPWG" {
		x.GuidelineName = r.Guideline.Name
		x.GuidelineURL = dpwgURL[r.Guideline.AnnotationID]
	} else {
		if r.Guideline.CPICName != nil {
			x.GuidelineName = *r.Guideline.CPICName
		}
		if r.Guideline.CPICURL != nil {
			x.GuidelineURL = *r.Guideline.CPICURL
		}
	}
	for _, p := range x.PMIDs {
		ids = append(ids, b.src.pmid(p, x.GuidelineName))
	}
	x.SourceIDs = sortUnique(ids)
	return x, nil
}

// lookupValue renders a lookup key value: a string as is; a DPWG diplotype
// {"*1": 1, "*28": 1} as "*1/*28" (alleles in natural order, repeated by
// count).
func lookupValue(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var m map[string]float64
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", fmt.Errorf("lookup value %s is neither a string nor a diplotype", raw)
	}
	names := sortedKeys(m)
	slices.SortFunc(names, naturalCompare)
	var parts []string
	for _, n := range names {
		c := m[n]
		if c != float64(int(c)) || c < 1 || c > 2 {
			return "", fmt.Errorf("diplotype %s: count %v", raw, c)
		}
		for range int(c) {
			parts = append(parts, n)
		}
	}
	if len(parts) != 2 {
		return "", fmt.Errorf("diplotype %s does not have two alleles", raw)
	}
	return strings.Join(parts, "/"), nil
}

// buildHLA builds hla.json: the HLA-A and HLA-B alleles of
// pgx/allele_frequencies.csv with their Central/South Asian frequency.
func (b *builder) buildHLA() error {
	type key struct{ gene, allele string }
	rows := map[key]*knowledge.HLAAllele{}
	for _, r := range b.freqCSV.rows {
		g := r.s("gene")
		if g != "HLA-A" && g != "HLA-B" {
			continue
		}
		k := key{g, r.s("allele")}
		h := rows[k]
		if h == nil {
			h = &knowledge.HLAAllele{Gene: g, Allele: k.allele}
			rows[k] = h
		}
		if r.s("source") != "cpic_db_v1.38.0_population_frequency_view" {
			return fmt.Errorf("%s: unexpected source %q", r.where(), r.s("source"))
		}
		h.SourceIDs = []string{b.src.fixed("cpic-freq-db-v1.38")}
		if r.s("biogeographic_group") == "Central/South Asian" {
			if h.AFCentralSouthAsian != nil {
				return fmt.Errorf("%s: second Central/South Asian figure for %s%s", r.where(), g, k.allele)
			}
			f, ok := parseAF(r.s("frequency"))
			if !ok {
				return fmt.Errorf("%s: frequency %q", r.where(), r.s("frequency"))
			}
			h.AFCentralSouthAsian = f
		}
	}
	for _, h := range rows {
		b.kb.HLAAlleles = append(b.kb.HLAAlleles, *h)
	}
	sort.Slice(b.kb.HLAAlleles, func(i, j int) bool {
		a, c := b.kb.HLAAlleles[i], b.kb.HLAAlleles[j]
		if a.Gene != c.Gene {
			return a.Gene < c.Gene
		}
		return naturalCompare(a.Allele, c.Allele) < 0
	})
	return nil
}

// buildWarfarin builds warfarin.json from special_guidance.warfarin.
func (b *builder) buildWarfarin() error {
	raw, ok := b.cpic.SpecialGuidance["warfarin"]
	if !ok {
		return fmt.Errorf("recommendations.json: no special_guidance.warfarin")
	}
	var w struct {
		Drug         string   `json:"drug"`
		Genes        []string `json:"genes"`
		Note         string   `json:"note"`
		CPICNotes    string   `json:"cpic_notes_on_usage"`
		GuidelineURL string   `json:"guideline_url"`
		PMIDs        []string `json:"pmids"`
		Nodes        []struct {
			ID       string  `json:"id"`
			Text     string  `json:"text"`
			Strength *string `json:"strength"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return fmt.Errorf("special_guidance.warfarin: %w", err)
	}
	fc := &knowledge.FlowChart{Drug: w.Drug, Genes: w.Genes, Note: w.Note, URL: w.GuidelineURL}
	if w.CPICNotes != "" {
		fc.Note += "\nCPIC notes on usage: " + w.CPICNotes
	}
	for _, n := range w.Nodes {
		node := knowledge.FlowChartNode{ID: n.ID, Text: n.Text}
		if n.Strength != nil {
			node.Strength = *n.Strength
		}
		fc.Nodes = append(fc.Nodes, node)
	}
	ids := []string{b.src.fixed("cpic-data")}
	for _, p := range w.PMIDs {
		ids = append(ids, b.src.pmid(p, "CPIC warfarin guideline (CYP2C9, VKORC1, CYP4F2)"))
	}
	fc.SourceIDs = sortUnique(ids)
	b.kb.Warfarin = fc
	return nil
}

// parseAF parses an allele-frequency cell; ok is false when the cell is
// empty or not a plain number (e.g. "<0.001").
func parseAF(s string) (*float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, false
	}
	return &f, true
}

func sortUnique(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return slices.Compact(out)
}

var digitsRe = regexp.MustCompile(`\d+|\D+`)

// naturalCompare orders strings with embedded numbers numerically ("*2" <
// "*10"); ties are broken by plain comparison.
func naturalCompare(a, b string) int {
	pa, pb := digitsRe.FindAllString(a, -1), digitsRe.FindAllString(b, -1)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, y := pa[i], pb[i]
		if x == y {
			continue
		}
		dx, dy := x[0] >= '0' && x[0] <= '9', y[0] >= '0' && y[0] <= '9'
		if dx && dy {
			tx, ty := strings.TrimLeft(x, "0"), strings.TrimLeft(y, "0")
			if len(tx) != len(ty) {
				return len(tx) - len(ty)
			}
			if tx != ty {
				return strings.Compare(tx, ty)
			}
			continue
		}
		return strings.Compare(x, y)
	}
	if len(pa) != len(pb) {
		return len(pa) - len(pb)
	}
	return strings.Compare(a, b)
}
