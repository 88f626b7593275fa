package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

var (
	reCPICData    = regexp.MustCompile(`\| CPICDATA \|[^\n]*?\((\d{4}-\d{2}-\d{2}); release (\d+\.\d+\.\d+)`)
	rePairsLog    = regexp.MustCompile(`\(CPIC (\d{4}-\d{2}-\d{2})\)`)
	reCPICDBApprx = regexp.MustCompile(`CPIC database ≈ (v[\d.]+)`)
	reFreqDB      = regexp.MustCompile(`^cpic_db_(v[\d.]+)_population_frequency_view$`)
	reFiledate    = regexp.MustCompile(`filedate=(\d{8})`)
)

// buildMeta fills meta.json from the data: release and dates are read from
// the data pack (SOURCES.md, record data_version fields, source columns),
// not typed here.
func (b *builder) buildMeta() error {
	m := b.meta
	m.DataVersions = map[string]string{}
	cd := reCPICData.FindStringSubmatch(b.sourcesMD)
	if cd == nil {
		return fmt.Errorf("pgx/SOURCES.md: no CPICDATA release line")
	}
	m.CPICRelease = cd[2]
	m.DataVersions["cpic-data"] = fmt.Sprintf("release %s (%s)", cd[2], cd[1])
	if p := rePairsLog.FindStringSubmatch(b.sourcesMD); p != nil {
		m.DataVersions["cpic-gene-drug-pairs"] = "cpic_gene-drug_pairs.xlsx, change log to " + p[1]
	} else {
		return fmt.Errorf("pgx/SOURCES.md: no pairs change-log date")
	}
	if a := reCPICDBApprx.FindStringSubmatch(b.sourcesMD); a != nil {
		m.DataVersions["cpic-database"] = "≈ " + a[1]
	}

	// ClinPGx date: the data version of the ClinPGx-format CPIC rows.
	clinpgx := map[string]bool{}
	cpicVersions := map[string]int{}
	dpwgVersions := map[string]int{}
	b.eachIncludedRec(func(r *recRecord) {
		if r.Source == "DPWG" {
			dpwgVersions[r.DataVersion]++
			return
		}
		cpicVersions[r.DataVersion]++
		if r.SourceFormat == "ClinPGx/PharmGKB guideline annotation" {
			clinpgx[r.DataVersion] = true
		}
	})
	if len(clinpgx) != 1 {
		return fmt.Errorf("recommendations.json: ClinPGx rows have %d data versions", len(clinpgx))
	}
	for v := range clinpgx {
		d, ok := strings.CutPrefix(v, "ClinPGx ")
		if !ok || len(d) < 10 {
			return fmt.Errorf("recommendations.json: data_version %q", v)
		}
		m.ClinPGxDate = d[:10]
	}
	m.DataVersions["recommendations-cpic"] = countList(cpicVersions)
	m.DataVersions["recommendations-dpwg"] = countList(dpwgVersions)

	headVersion := ""
	for _, n := range b.phenoOrder {
		p := b.pheno[n]
		if p.Source.Commit == b.phenoHead {
			headVersion = p.DataVersion
		} else {
			m.DataVersions["phenotype-"+n] = p.DataVersion + " (PharmCAT " + p.Source.Commit[:8] + ")"
		}
	}
	if b.pcatVersion != headVersion {
		return fmt.Errorf("PharmCAT definitions are data %s but the phenotype files are %s", b.pcatVersion, headVersion)
	}
	m.DataVersions["pharmcat-allele-definitions"] = b.pcatVersion + " (PharmCAT " + b.phenoHead[:8] + ")"
	m.DataVersions["pharmcat"] = b.pcatVersion

	freq := map[string]bool{}
	for _, r := range b.freqCSV.rows {
		if f := reFreqDB.FindStringSubmatch(r.s("source")); f != nil {
			freq[f[1]] = true
		}
	}
	if len(freq) != 1 {
		return fmt.Errorf("allele_frequencies.csv: %d CPIC database versions", len(freq))
	}
	for v := range freq {
		m.DataVersions["cpic-frequencies-db"] = v
	}
	filedates := map[string]bool{}
	clinvar := map[string]bool{}
	for _, r := range b.globalCSV.rows {
		if f := reFiledate.FindStringSubmatch(r.s("source")); f != nil {
			filedates[f[1]] = true
		}
		if c := reClinVar.FindStringSubmatch(r.s("clinvar_source")); c != nil {
			clinvar[c[1]] = true
		}
	}
	if len(filedates) != 1 || len(clinvar) != 1 {
		return fmt.Errorf("global_frequencies.csv: %d 1000 Genomes file dates, %d ClinVar dates", len(filedates), len(clinvar))
	}
	m.DataVersions["1000-genomes"] = "phase 3 (filedate " + sortedKeys(filedates)[0] + "); 30x high-coverage NYGC GRCh38"
	m.DataVersions["clinvar"] = sortedKeys(clinvar)[0]
	b.meta = m
	return nil
}

// countList renders version counts as "v (n rows); …", most rows first.
func countList(m map[string]int) string {
	keys := sortedKeys(m)
	sort.SliceStable(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s (%d rows)", k, m[k])
	}
	return strings.Join(parts, "; ")
}

// readme writes knowledge/data/README.md: the files, the selection rules
// and the counts, all computed.
func (b *builder) readme() string {
	kb := &b.kb
	var w strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&w, format, a...) }
	nAlleles, nRules := 0, 0
	for _, g := range kb.Genes {
		nAlleles += len(g.Alleles)
		nRules += len(g.Rules)
	}
	nPairs := 0
	tier := map[string]int{}
	guidance := map[string]int{}
	for _, d := range kb.Drugs {
		nPairs += len(d.Pairs)
		tier[d.Sensitivity]++
		guidance[d.Guidance]++
	}
	recBy := map[string]int{}
	for _, r := range kb.Recommendations {
		recBy[r.Source]++
	}
	nRisks := 0
	for _, s := range kb.States {
		nRisks += len(s.Risks)
	}
	var withAF, without []string
	for _, v := range kb.Variants {
		if v.AFIndia != nil {
			withAF = append(withAF, v.RsID)
		} else {
			without = append(without, fmt.Sprintf("%s (%s)", v.RsID, v.AlleleLabel))
		}
	}

	p("# knowledge/data — the curated knowledge base\n\n")
	p("Generated by `go generate ./knowledge` (`go run ./internal/gen -data ../../shared/data -out data`)\n")
	p("from the data pack (`data/pgx`, `data/india`; see their `SOURCES.md`). Do not edit by hand: change the\n")
	p("generator or the data pack and regenerate; a test fails when these files are stale. Every row names the ids\n")
	p("of its sources (`sources.json`); a figure the data pack does not have is absent, never 0. Licences:\n")
	p("`LICENCE.md`. Each JSON file holds one value (an array with one row per line, or an object).\n\n")
	p("Data versions (`meta.json`): CPIC data release %s; recommendations from ClinPGx %s (CPIC database %s);\n",
		b.meta.CPICRelease, b.meta.ClinPGxDate, b.meta.DataVersions["cpic-database"])
	p("PharmCAT allele definitions %s. Guidelines change: check cpicpgx.org / clinpgx.org for the current version.\n\n",
		b.meta.DataVersions["pharmcat-allele-definitions"])

	p("## Files and counts\n\n")
	p("| file | rows | content |\n|---|---|---|\n")
	p("| `sources.json` | %d | every cited source: id, title, publisher, year, URL or PMID, licence |\n", len(kb.Sources))
	p("| `drugs.json` | %d | covered drugs with %d CPIC gene–drug pairs; guidance: %s; sensitivity: %s |\n", len(kb.Drugs), nPairs, mapList(guidance), mapList(tier))
	p("| `genes.json` | %d | genes with %d alleles and %d CPIC phenotype rules |\n", len(kb.Genes), nAlleles, nRules)
	p("| `rsids.json` | %d | (rsID, alt) of the CPIC allele definitions → the alleles carrying it |\n", len(kb.RsIDs))
	p("| `recommendations.json` | %d | %s |\n", len(kb.Recommendations), mapList(recBy))
	p("| `variants.json` | %d | tracked variants with Indian frequencies (%d with af_india, %d without) |\n", len(kb.Variants), len(withAF), len(without))
	p("| `hla.json` | %d | HLA-A/HLA-B alleles with their CPIC Central/South Asian frequency |\n", len(kb.HLAAlleles))
	p("| `states.json` | %d | states and union territories with %d endemic risks |\n", len(kb.States), nRisks)
	p("| `communities.json` | %d | community-specific pharmacogenomic facts |\n", len(kb.Communities))
	p("| `herbs.json` | %d | traditional-medicine herb–drug interactions |\n", len(kb.Herbs))
	p("| `warfarin.json` | 1 | CPIC warfarin dosing flow chart (%d boxes; the diagram's arrows are not kept) |\n", len(kb.Warfarin.Nodes))
	nDefAlleles := 0
	for _, d := range kb.Definitions {
		nDefAlleles += len(d.Alleles)
	}
	p("| `definitions.json` | %d | PharmCAT allele definitions in VCF space (data %s): GRCh38 positions with REF/ALT and the CPIC→VCF allele map, %d named alleles, exemptions (required, ignored and extra positions, ignored alleles, NAT2 unphased priorities, AMP tier-1 alleles and positions); the allele matcher's input |\n", len(kb.Definitions), b.pcatVersion, nDefAlleles)
	p("| `drug_names.json` | %d | brands (US, IN, unknown market), salts, generic synonyms, abbreviations and combination products of the covered drugs (data/names), regimen abbreviations and Indian brands read from cited public pages (the generator's curated/ tables) |\n", len(kb.DrugNames))
	p("| `indications.json` | %d | ICD-10, ICD-10-CM, ICD-10-PCS and SNOMED CT codes of the CPIC clopidogrel populations (data/names) |\n", len(kb.Indications))
	p("| `meta.json` | 1 | upstream data versions; the parts of the knowledge_version label |\n\n")
	p("**PharmCAT data.** `definitions.json` is generated from `pgx/pharmcat/definition/*_translation.json` and\n")
	p("`exemptions.json` (copied unchanged from PharmCAT; facts only were taken). The RYR1 allele functions in `genes.json`\n")
	p("are the current ones of `pgx/pharmcat/current-functions/RYR1_functions_current.json` (the 2023-12 phenotype file is\n")
	p("stale for 4 alleles); the CYP2D6 tandem and hybrid alleles of `CYP2D6_phenotype_additions.json` (`*36 + *10`, …)\n")
	p("are added to CYP2D6 with their CPIC activity values.\n\n")
	p("The loader computes `knowledge_version` = `kb-<first 12 hex of the SHA-256 of these files>+cpic-<release>+clinpgx-<date>`.\n\n")

	p("## Selection and derivation rules\n\n")
	p("**Drugs.** The union of (a) the %d drugs of `pgx/drugs.csv` (a CPIC pair at level A, A/B or B), (b) every drug\n", len(b.drugsCSV.rows))
	p("with a CPIC row in `pgx/recommendations.json` (%d) and (c) the drugs that have DPWG rows in\n", len(b.cpicRecDrugs))
	p("`pgx/dpwg_recommendations.json` and no CPIC row (%d: %s). A drug carries all its pairs of\n", len(b.dpwgOnlyDrugs), strings.Join(sortedKeys(b.dpwgOnlyDrugs), ", "))
	p("`pgx/gene_drug_pairs.csv`. RxNorm CUIs and ATC codes are the union over `drugs.csv`, the pairs and the\n")
	p("recommendation rows. Synonyms are only names a data-pack row links to the drug:\n")
	for _, s := range synonymEvidence {
		p("%s ← %s (india/ethnicity_context.csv: \"%s\").", s.drug, s.synonym, s.evidence)
	}
	p(" No brand names. Guidance is `CPIC` when the drug has a CPIC recommendation row, else `DPWG` when\n")
	p("it has DPWG rows, else `none`.\n\n")
	p("**Sensitivity tier.** `high`: the drug has a pair at CPIC level A or A/B, and at least one of its\n")
	p("recommendation rows (CPIC rows; DPWG rows for a DPWG-only drug) has actionability `yes` and says to avoid\n")
	p("the drug or use an alternative (actionable_basis includes `text:Avoid`, `text:alternative`, `text:do not use`,\n")
	p("`text:contraindicat`, `text:not recommended` or `clinpgx_flag:alternateDrugAvailable`, or the ClinPGx flag\n")
	p("alternateDrugAvailable is set). `moderate`: otherwise, any actionable row (`yes` or `conditional`) or a pair\n")
	p("at CPIC level B. `none`: otherwise. Drugs with a level-A pair but tier `none` (no structured rows):\n")
	var aNone []string
	for _, d := range kb.Drugs {
		if d.Sensitivity == "none" && (d.BestCPICLevel == "A" || d.BestCPICLevel == "A/B") {
			aNone = append(aNone, d.Name+" ("+d.BestCPICLevel+")")
		}
	}
	p("%s.\n\n", listOrNone(aNone))
	p("**Recommendations.** Every record of `pgx/recommendations.json` (Source `CPIC`) except the %d records marked\n", b.skippedPCAT)
	p("`pharmcat_specific_lookup` (PharmCAT-only \"No Result\" and CYP2D6 \"xN combinations\" lookups, which are not\n")
	p("CPIC phenotypes), plus the DPWG records for drugs with no CPIC record (Source `DPWG`; supplementary, not\n")
	p("CPIC). `other_considerations` \"n/a\" and null become empty; a null population or classification is empty;\n")
	p("DPWG implications (a list) are joined under their single gene; a DPWG diplotype lookup `{\"*1\": 1, \"*28\": 1}`\n")
	p("is written `*1/*28`. `actionability`, `actionable_basis` and `alternatives_named` are derived fields of the\n")
	p("data pack (not CPIC fields); see `data/pgx/SOURCES.md`.\n\n")
	p("**Genes.** The %d genes of `pgx/phenotype_rules.json` (method, allele functions and activity values as written,\n", len(b.phenoOrder))
	p("e.g. \"1.0\", \"n/a\", \"≥3.0\"; rules; data version), plus every other gene named by a covered drug's pair or a\n")
	p("recommendation: CYP4F2 (allele definitions, no CPIC function assignments), HLA-A and HLA-B (method\n")
	p("`allele_status`, the lookup type of their recommendation rows; no allele definitions: HLA is entered as allele\n")
	p("status), and the other pair genes with no method (the data pack has no CPIC phenotype translation for them).\n")
	p("Alleles are the union of the phenotype file's `allele_function` (authoritative for function and activity) and\n")
	p("`pgx/allele_summary.csv` (function where the phenotype file lacks the allele; key variants vs the default\n")
	p("allele as rsid:base, IUPAC codes flagged ambiguous, non-rsID keys kept as text; defining variants). The\n")
	p("default allele is the summary row with is_default_allele=yes, the reference allele the row with\n")
	p("is_reference_allele=yes; chromosome from `pgx/allele_definitions.csv`.\n")
	p("Phenotype rules the data pack lacks are added from `knowledge/internal/gen/cited/phenotype_rules.csv`, each row\n")
	p("citing its guideline table (PMID, URL, table): IFNL3 rs12979860 CC → Favorable response genotype, CT or TT →\n")
	p("Unfavorable response genotype (CPIC IFNL3 guideline, PMID 24096968, Table 1; the data pack has the IFNL3 allele\n")
	p("functions only). A cited rule must use the gene's allele functions and may not repeat a data-pack rule.\n\n")
	p("**rsIDs.** The rows of `pgx/rsid_index.csv`, one per (rsID, alt); allele lists are `;`-separated (G6PD\n")
	p("allele names contain commas).\n\n")
	p("**Tracked variants.** Exactly 61: the rows of `india/variant_frequencies.csv` whose rsid is a dbSNP id\n")
	p("(`rs<digits>`). Not included, because they are not addressable by rsID (they are covered by diplotype and\n")
	p("HLA input): %s. `af_india` is the first available of: `af_indian` (India-resident studies; basis = the\n", strings.Join(b.excludedVariants, "; "))
	p("metric text + \"(India)\"); `af_south_asian` (basis = its basis column); the 1000 Genomes 30x South Asian\n")
	p("figure (489 unrelated) for the row's alt; the CPIC Central/South Asian figure — except for HLA tag rows, whose\n")
	p("CPIC columns are HLA allele frequencies. Cells that are not numbers (\"<0.001\") are skipped. `af_india_kind` is\n")
	p("`carrier` when the metric text says so (DPYD HapB3, DPYD*9A, HLA-B*57:01 prevalence), else `allele`. Where a\n")
	p("row lists two alt alleles, the 1000 Genomes figures name the allele they count. `af_global` is the 1000 Genomes\n")
	p("figure of `india/global_frequencies.csv` (absent where that file has none); ClinVar significance is as of\n")
	p("%s. Variants without any af_india figure (%d): %s.\n", b.meta.DataVersions["clinvar"], len(without), listOrNone(without))
	p("A repeat variant whose ref and alt are clinical counts (`(TA)6`, `(TA)7`) gets its count convention stated in\n")
	p("its label when the allele definitions write the label's star allele with another count (UGT1A1 `*28`: `TA(8)`\n")
	p("at rs3064744), derived from the two rows (`repeatCountNote`).\n\n")
	p("**HLA.** The HLA-A and HLA-B alleles of `pgx/allele_frequencies.csv` (CPIC database) with their\n")
	p("\"Central/South Asian\" frequency.\n\n")
	p("**States.** The 36 states and union territories of `india/state_context.csv`. A risk's disease is its leading\n")
	p("phrase (text before the first `:` or `;` outside parentheses, cut before the first number), lower case. Drugs\n")
	p("are parsed from the affected-drugs text: data-pack drug names outside parentheses, parenthetical lists made\n")
	p("only of drug names, and single-word items (\"hydroxyurea\"); other parenthetical notes are ignored. Aliases are\n")
	p("well-known former or alternative names only (Orissa, Pondicherry, Uttaranchal, …).\n\n")
	p("**Communities** (`india/ethnicity_context.csv`): genes are the known gene symbols (or HLA genes) named in\n")
	p("gene_or_trait; drugs parsed as for states. **Herbs** (`india/herb_drug_interactions.csv`): drugs are the\n")
	p("covered drug names that literally occur in interacting_drug_or_class.\n\n")
	p("**Drug names** (`names/drug_synonyms.csv`): every row, grouped by (name, kind) case-insensitively; a name\n")
	p("several sources or markets list is one row naming them all, a combination product listed under each covered\n")
	p("ingredient is one row with every covered ingredient in `drugs`. The data pack's `short`, `english_word`,\n")
	p("`stem_english_word` and `research_code` flags are kept (the engine does not trust short names alone and never\n")
	p("looks for English-word names inside free text); `also:` flags are carried by `drugs`. A drug without an Indian\n")
	p("brand here was not found in the partial Indian lists read — a gap in the data, not a fact.\n\n")
	p("**Curated names** (`knowledge/internal/gen/curated/`, each row citing the public page it was read from,\n")
	p("one source per page): `regimens.csv` — abbreviations of HIV, TB and cancer prescribing (`EFV`, `ATV/r`,\n")
	p("`FOLFOX`, `HRZE`, …) as rows of kind `regimen` whose `ingredients` are the page's expansion and whose `drugs`\n")
	p("are the ingredients the knowledge covers by name or synonym (possibly none); `short` is computed (three\n")
	p("characters or fewer). `in_brands.csv` — Indian brands of knowledge drugs, each with its composition as the\n")
	p("page writes it, checked against the row's drug; merged with the data pack's rows of the same name.\n\n")
	p("**Indication codes** (`names/indications.csv`): every row; `cpic_basis` says whether CPIC's population text\n")
	p("names the condition (`named`) or the extraction assigned it (`related`, `not-named`: review). Each row is\n")
	p("re-checked against its code title (issue 21, `recheckIndication` in the generator): a `CVI non-ACS non-PCI` row\n")
	p("whose title names unstable angina is moved to `CVI ACS PCI`; one whose title names an infarction is kept and\n")
	p("also listed under `CVI ACS PCI` (`related`), so the code decides nothing alone. Such rows say why in `recheck`.\n\n")
	p("## Data problems found in the data pack\n\n")
	if len(b.dataProblems) == 0 {
		p("None.\n")
	}
	for _, r := range b.dataProblems {
		p("- %s\n", r)
	}
	return w.String()
}

func mapList(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// licence writes knowledge/data/LICENCE.md.
func (b *builder) licence() string {
	var w strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&w, format, a...) }
	p("# Licences of the knowledge data\n\n")
	p("The files in this folder are derived from the data pack described in `README.md`. Each row names its\n")
	p("sources (`source_ids` → `sources.json`, which states every source's licence).\n\n")
	p("## CPIC content — CC0 1.0\n\n")
	p("Allele definitions and functions, diplotype→phenotype rules, gene–drug pairs, frequencies, the warfarin flow\n")
	p("chart and the CPIC-native recommendation rows (`cpic-recs-v130`) are CPIC content, dedicated to the public\n")
	p("domain under CC0 1.0 (cpicpgx/cpic-data `LICENSE.md`). CPIC asks users to attribute it: **CPIC®**,\n")
	p("https://cpicpgx.org, the date accessed and the data version — here CPIC data release %s, recommendations as of\n", b.meta.CPICRelease)
	p("ClinPGx %s (see `meta.json`). **Guidelines change: check cpicpgx.org / clinpgx.org for the current version\n", b.meta.ClinPGxDate)
	p("before clinical use.**\n\n")
	p("## ClinPGx/PharmGKB guideline annotations — CC BY-SA 4.0\n\n")
	p("Recommendation rows whose source is `cpic-recs-clinpgx` or `clinpgx-2025-11` (CPIC recommendations as\n")
	p("curated in ClinPGx/PharmGKB guideline annotations), all DPWG rows (`dpwg-clinpgx`) and the ClinPGx flags\n")
	p("`alternate_drug` / `dosing` are derived from ClinPGx/PharmGKB annotations, licensed CC BY-SA 4.0\n")
	p("(https://creativecommons.org/licenses/by-sa/4.0/). Attribution: ClinPGx/PharmGKB (https://www.clinpgx.org/).\n")
	p("`recommendations.json` and `drugs.json`, which contain or are derived from these rows, are shared alike under\n")
	p("CC BY-SA 4.0. The `actionability`, `basis` and `alternatives` fields are derived by the data pack.\n\n")
	p("## Other sources\n\n")
	p("- 1000 Genomes Project data: open (no restrictions; Fort Lauderdale principles).\n")
	p("- ClinVar (2016-12-21 snapshot): US-government public domain; not intended for direct diagnostic use.\n")
	p("- PyPGx variant table and Summix data: MIT; used for a few reference/alternate alleles and South Asian figures.\n")
	p("- Literature, government and web pages (the India context): facts only — figures and short phrases, no text\n")
	p("  copied beyond short figures; each row cites its source (title, URL or PMID).\n")
	p("- PharmCAT code (MPL-2.0) was not used; only its data files (CPIC/ClinPGx content) were read.\n")
	p("- `drug_names.json`: PharmGKB/ClinPGx drug names (generic names, trade names, brand mixtures) are CC BY-SA 4.0 —\n")
	p("  attribute PharmGKB/ClinPGx; the file is shared alike under CC BY-SA 4.0. Drugs@FDA names are US-government\n")
	p("  public domain. The Indian product names come from Kaggle datasets scraped from 1mg.com whose licence could not\n")
	p("  be verified: only product names and compositions are kept, as facts; check before redistributing.\n")
	p("- `indications.json`: ICD-10-CM/PCS public domain; VSAC value-set content (eCQM) from a CC0 repository; SNOMED\n")
	p("  CT codes are under the SNOMED CT / UMLS licence (free in member countries; check the deployment country);\n")
	p("  WHO ICD-10 content © WHO (commercial use may need a WHO licence).\n\n")
	p("## Sources by licence\n\n")
	p("| licence | sources |\n|---|---|\n")
	byLic := map[string]int{}
	for _, s := range b.kb.Sources {
		byLic[s.Licence]++
	}
	for _, l := range sortedKeys(byLic) {
		p("| %s | %d |\n", l, byLic[l])
	}
	return w.String()
}
