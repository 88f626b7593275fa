package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/pgxsafety/pgxsafety/knowledge"
)

// Licence statements, as the data pack's SOURCES.md files give them.
const (
	licCC0          = "CC0 1.0 (CPIC content; CPIC asks for attribution: CPIC®, cpicpgx.org, date accessed, data version)"
	licCCBYSA       = "CC BY-SA 4.0 (ClinPGx/PharmGKB guideline annotations; attribute ClinPGx/PharmGKB, share alike)"
	licPharmCATDocs = "MPL-2.0 (PharmCAT repository file; facts only were taken, no text or code)"
	licPharmCAT     = "CPIC/ClinPGx/PharmVar allele definitions as packaged in PharmCAT data files (CC0 CPIC content; PharmCAT code MPL-2.0 not used)"
	licPyPGx        = "MIT (PyPGx variant table)"
	licSummix       = "MIT (Summix manuscript data)"
	lic1000G        = "open (1000 Genomes data: no restrictions, Fort Lauderdale principles)"
	licClinVar      = "public domain (US government work; ClinVar is not intended for direct diagnostic use)"
	licLiterature   = "facts only; no text copied beyond short figures"
	licCitation     = "bibliographic citation only; no text copied"
)

// fixedSources are the upstream snapshots named in data/pgx/SOURCES.md and
// data/india/SOURCES.md. Titles and dates are copied from those files.
var fixedSources = map[string]knowledge.Source{
	"cpic-pairs": {
		ID: "cpic-pairs", Title: "CPIC gene–drug pairs (cpic_gene-drug_pairs.xlsx, sheet \"CPIC Gene-Drug Pairs\"; change log to 2026-02-04)",
		Publisher: "Clinical Pharmacogenetics Implementation Consortium (CPIC®)", Year: "2026",
		URL: "https://files.cpicpgx.org/data/report/current/pair/cpic_gene-drug_pairs.xlsx", Licence: licCC0,
	},
	"cpic-data": {
		ID: "cpic-data", Title: "cpicpgx/cpic-data release 1.56.0 (commit 459e3ebd, 2026-04-30): drug, guideline and publication tables; warfarin recommendation diagram",
		Publisher: "Clinical Pharmacogenetics Implementation Consortium (CPIC®)", Year: "2026",
		URL: "https://github.com/cpicpgx/cpic-data", Licence: licCC0,
	},
	"pcat-alleles": {
		ID: "pcat-alleles", Title: "PharmCAT allele definitions (*_translation.json; ClinPGx data 2025-11-05), PharmCAT commit 5431bf11",
		Publisher: "PharmGKB/ClinPGx (PharmCAT)", Year: "2025",
		URL: "https://github.com/PharmGKB/PharmCAT/tree/5431bf1187e50383df7e7db18ef67b36fc8b562e/src/main/resources/org/pharmgkb/pharmcat/definition/alleles", Licence: licPharmCAT,
	},
	"pcat-exemptions": {
		ID: "pcat-exemptions", Title: "PharmCAT allele-definition exemptions (exemptions.json: required, ignored and extra positions, ignored alleles, NAT2 unphased priorities, AMP tier-1 alleles and positions; data 2025-11-05), PharmCAT commit 5431bf11",
		Publisher: "PharmGKB/ClinPGx (PharmCAT)", Year: "2025",
		URL: "https://github.com/PharmGKB/PharmCAT/blob/5431bf1187e50383df7e7db18ef67b36fc8b562e/src/main/resources/org/pharmgkb/pharmcat/definition/alleles/exemptions.json", Licence: licPharmCATDocs,
	},
	"pcat-nam-docs": {
		ID: "pcat-nam-docs", Title: "PharmCAT methods: Named Allele Matcher 101 (undocumented variations in CACNA1S, DPYD, G6PD, NUDT15, RYR1, TPMT read as reference) and Gene Definition Exceptions (DPYD/RYR1 variant lists), PharmCAT commit 5431bf11",
		Publisher: "PharmGKB/ClinPGx (PharmCAT)", Year: "2025",
		URL: "https://github.com/PharmGKB/PharmCAT/blob/5431bf1187e50383df7e7db18ef67b36fc8b562e/docs/methods/NamedAlleleMatcher-101.md", Licence: licPharmCATDocs,
	},
	"pcat-ryr1-current": {
		ID: "pcat-ryr1-current", Title: "CPIC RYR1 allele functions as displayed by PharmCAT with data 2025-11-05-00-25 (docs/examples/pharmcat.example.report.html, pharmcat.example2.report.html), PharmCAT commit 5431bf11; agrees with the 2026 phenotype data",
		Publisher: "PharmGKB/ClinPGx (PharmCAT), CPIC®", Year: "2025",
		URL: "https://github.com/PharmGKB/PharmCAT/tree/5431bf1187e50383df7e7db18ef67b36fc8b562e/docs/examples", Licence: licCC0,
	},
	"pcat-cyp2d6-additions": {
		ID: "pcat-cyp2d6-additions", Title: "CYP2D6 tandem and hybrid alleles with CPIC activity values missing from the 2024-08 phenotype file: names from PharmCAT docs/phenotypes.tsv (commit 5431bf11), values from PharmCAT phenotype/CYP2D6.json data 2026-05-05 (fork madhavajay/PharmCAT 162d746c)",
		Publisher: "PharmGKB/ClinPGx (PharmCAT), CPIC®", Year: "2026",
		URL: "https://github.com/PharmGKB/PharmCAT/blob/5431bf1187e50383df7e7db18ef67b36fc8b562e/docs/phenotypes.tsv", Licence: licCC0,
	},
	"cpic-recs-clinpgx": {
		ID: "cpic-recs-clinpgx", Title: "CPIC guideline recommendations as ClinPGx/PharmGKB guideline annotations (PharmCAT commit 30f8cfb7; ClinPGx data 2024-03-25-16-13; CPIC database ≈ v1.38)",
		Publisher: "ClinPGx/PharmGKB; CPIC®", Year: "2024",
		URL: "https://www.clinpgx.org/", Licence: licCCBYSA,
	},
	"cpic-recs-v130": {
		ID: "cpic-recs-v130", Title: "CPIC API recommendation export (cpicVersion v1.30.0) packaged in PharmCAT v2.6.0",
		Publisher: "Clinical Pharmacogenetics Implementation Consortium (CPIC®)", Year: "2023",
		URL: "https://github.com/PharmGKB/PharmCAT/tree/v2.6.0/src/main/resources/org/pharmgkb/pharmcat/reporter/guidelines/cpic", Licence: licCC0,
	},
	"clinpgx-2025-11": {
		ID: "clinpgx-2025-11", Title: "ClinPGx guideline annotations as matched in the PharmCAT v3.1 example reports (data 2025-11-05; partial: only phenotypes present in the example samples)",
		Publisher: "ClinPGx/PharmGKB (PharmCAT)", Year: "2025",
		URL: "https://github.com/PharmGKB/PharmCAT/tree/5431bf1187e50383df7e7db18ef67b36fc8b562e/docs/examples", Licence: licCCBYSA,
	},
	"dpwg-clinpgx": {
		ID: "dpwg-clinpgx", Title: "DPWG (Dutch Pharmacogenetics Working Group) guideline annotations curated by ClinPGx/PharmGKB (PharmCAT commit 30f8cfb7; data 2024-03-25-16-13); supplementary, not CPIC",
		Publisher: "ClinPGx/PharmGKB; DPWG", Year: "2024",
		URL: "https://www.clinpgx.org/", Licence: licCCBYSA,
	},
	"cpic-freq-db-v1.38": {
		ID: "cpic-freq-db-v1.38", Title: "CPIC database v1.38.0 population_frequency_view (freq_weighted_avg by biogeographic group, rounded to 4 dp), via KarlKeat/PGx-LLM-Eval 387a41eb",
		Publisher: "Clinical Pharmacogenetics Implementation Consortium (CPIC®)", Year: "2024",
		URL: "https://github.com/KarlKeat/PGx-LLM-Eval", Licence: licCC0,
	},
	"1kg-phase3": {
		ID: "1kg-phase3", Title: "1000 Genomes Project phase 3 genotypes (2,504 samples; GRCh37; filedate 20151210) as packaged in sbslee/pypgx-bundle @ 919279ac; allele counts computed for the data pack",
		Publisher: "International Genome Sample Resource (1000 Genomes Project)", Year: "2015",
		URL: "https://www.internationalgenome.org/", Licence: lic1000G,
	},
	"1kg-30x": {
		ID: "1kg-30x", Title: "1000 Genomes 30x high-coverage call set (NYGC; GRCh38; 3,202 samples) as packaged in sbslee/pypgx-bundle @ 919279ac",
		Publisher: "International Genome Sample Resource (1000 Genomes Project); New York Genome Center", Year: "2022",
		URL: "https://www.internationalgenome.org/data-portal/data-collection/30x-grch38", Licence: lic1000G,
	},
	"clinvar-2016-12-21": {
		ID: "clinvar-2016-12-21", Title: "ClinVar VCF as of 2016-12-21 (GRCh37), macarthur-lab/clinvar @ fad39e91 (old; labels may have changed since)",
		Publisher: "NCBI ClinVar", Year: "2016",
		URL: "https://www.ncbi.nlm.nih.gov/clinvar/", Licence: licClinVar,
	},
}

// sourceSet collects the sources that rows cite. Only cited sources are
// written to sources.json.
type sourceSet struct {
	// repos maps "owner/repo" of the data pack's SOURCES.md tables to a
	// link to the commit read (see repoLinks).
	repos     map[string]string
	m         map[string]knowledge.Source
	pmidNames map[string]map[string]bool // pmid → guideline names citing it
	err       []string
}

func newSourceSet() *sourceSet {
	return &sourceSet{m: map[string]knowledge.Source{}, pmidNames: map[string]map[string]bool{}}
}

// fixed cites one of fixedSources.
func (s *sourceSet) fixed(id string) string {
	src, ok := fixedSources[id]
	if !ok {
		s.err = append(s.err, fmt.Sprintf("unknown fixed source %q", id))
		return id
	}
	s.m[id] = src
	return id
}

// add cites a source built elsewhere (the phenotype files).
func (s *sourceSet) add(src knowledge.Source) string {
	if prev, ok := s.m[src.ID]; ok && prev != src {
		s.err = append(s.err, fmt.Sprintf("source id %q built twice with different content", src.ID))
	}
	s.m[src.ID] = src
	return src.ID
}

var pmidDigits = regexp.MustCompile(`^\d+$`)

// pmid cites a guideline publication by PubMed id; guideline is the name of
// the guideline that cites it (collected into the title).
func (s *sourceSet) pmid(n, guideline string) string {
	n = strings.TrimSpace(n)
	if !pmidDigits.MatchString(n) {
		s.err = append(s.err, fmt.Sprintf("bad PMID %q (%s)", n, guideline))
	}
	id := "pmid-" + n
	if s.pmidNames[n] == nil {
		s.pmidNames[n] = map[string]bool{}
	}
	if guideline = strings.TrimSpace(guideline); guideline != "" {
		s.pmidNames[n][guideline] = true
	}
	s.m[id] = knowledge.Source{ID: id} // completed in list()
	return id
}

var (
	rePMID   = regexp.MustCompile(`PMID[: ]*(\d+)`)
	reURL    = regexp.MustCompile(`https?://[^\s;,()"'<>]+`)
	reDomain = regexp.MustCompile(`(?i)\b(?:[a-z0-9][a-z0-9-]*\.)+(?:com|org|net|gov|edu|in|io|info|us|site|wiki|news|ai|uk|co|me|life|ir)\b(?:/[^\s;,()"'<>]*)?`)
	reDOI    = regexp.MustCompile(`\b(10\.\d{4,9}/[^\s;,"'<>]+)`)
	rePMC    = regexp.MustCompile(`\bPMC\d+\b`)
)

// text cites a free-text source string of the India CSVs. Its id is
// "india-" + the first 8 hex digits of SHA-256(text); Title is the text;
// URL is the first URL, domain (https:// added) or DOI (doi.org link) found
// in the text, else a PubMed Central link; PMID is the first "PMID n" found.
func (s *sourceSet) text(text string) string {
	text = strings.TrimSpace(text)
	sum := sha256.Sum256([]byte(text))
	id := "india-" + hex.EncodeToString(sum[:])[:8]
	src := knowledge.Source{ID: id, Title: text, Licence: indiaLicence(text)}
	if m := rePMID.FindStringSubmatch(text); m != nil {
		src.PMID = m[1]
	}
	src.URL = firstURL(text)
	if prev, ok := s.m[id]; ok && prev.Title != text {
		s.err = append(s.err, fmt.Sprintf("source id collision %s: %q vs %q", id, prev.Title, text))
	}
	s.m[id] = src
	return id
}

// firstURL returns the earliest http(s) URL, bare domain (https:// added)
// or DOI (as a doi.org link) in text; else a PubMed Central link for the
// first PMC id; else "".
func firstURL(text string) string {
	best, bestAt := "", len(text)+1
	if loc := reURL.FindStringIndex(text); loc != nil && loc[0] < bestAt {
		best, bestAt = strings.TrimRight(text[loc[0]:loc[1]], ".:"), loc[0]
	}
	for _, loc := range reDomain.FindAllStringIndex(text, -1) {
		// Skip domains inside a URL, a DOI or a path.
		if loc[0] > 0 && (text[loc[0]-1] == '/' || text[loc[0]-1] == '.' || text[loc[0]-1] == '@') {
			continue
		}
		if loc[0] < bestAt {
			d := strings.TrimRight(text[loc[0]:loc[1]], ".:")
			host, path, _ := strings.Cut(d, "/")
			if path != "" {
				path = "/" + path
			}
			best, bestAt = "https://"+strings.ToLower(host)+path, loc[0]
		}
		break
	}
	if loc := reDOI.FindStringSubmatchIndex(text); loc != nil && loc[2] < bestAt {
		best = "https://doi.org/" + trimDOI(text[loc[2]:loc[3]])
	}
	if best != "" {
		return best
	}
	if m := rePMC.FindString(text); m != "" {
		return "https://pmc.ncbi.nlm.nih.gov/articles/" + m + "/"
	}
	return ""
}

// trimDOI drops trailing punctuation and unbalanced closing parentheses
// from a DOI found in running text ("doi:10.1016/S2095-4964(15)60173-X)").
func trimDOI(d string) string {
	for {
		t := strings.TrimRight(d, ".:")
		if strings.HasSuffix(t, ")") && strings.Count(t, ")") > strings.Count(t, "(") {
			t = t[:len(t)-1]
		}
		if t == d {
			return d
		}
		d = t
	}
}

// indiaLicence states the licence of an India free-text source from what it
// names (data/india/SOURCES.md, "Upstream data sources and licences"):
// CPIC tables CC0; PharmCAT allele definitions; PyPGx and Summix MIT;
// 1000 Genomes open; ClinVar public domain; literature and web pages
// "facts only". A text that names a data file and also a publication or web
// page gets both statements.
func indiaLicence(text string) string {
	l := strings.ToLower(text)
	l = strings.ReplaceAll(l, "not 1000g", "") // "Pakistani cohort … — NOT 1000G"
	var parts []string
	add := func(p string) {
		if !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	if strings.Contains(l, "cpic") {
		add(licCC0)
	}
	if strings.Contains(l, "pharmcat") {
		add(licPharmCAT)
	}
	if strings.Contains(l, "pypgx/api") || strings.Contains(l, "sbslee/pypgx ") {
		add(licPyPGx)
	}
	if strings.Contains(l, "summix") {
		add(licSummix)
	}
	if strings.Contains(l, "1000 genomes") || strings.Contains(l, "1000g") || strings.Contains(l, "pypgx-bundle") {
		add(lic1000G)
	}
	if strings.Contains(l, "clinvar") {
		add(licClinVar)
	}
	literature := rePMID.MatchString(text) || reDOI.MatchString(text) || rePMC.MatchString(text) ||
		firstURL(text) != "" || strings.Contains(l, " et al") || strings.Contains(l, "review")
	if len(parts) == 0 || literature {
		add(licLiterature)
	}
	return strings.Join(parts, "; ")
}

// list returns the cited sources sorted by id.
func (s *sourceSet) list() ([]knowledge.Source, error) {
	if len(s.err) > 0 {
		return nil, fmt.Errorf("sources:\n  %s", strings.Join(s.err, "\n  "))
	}
	out := make([]knowledge.Source, 0, len(s.m))
	for id, src := range s.m {
		if src.URL == "" && src.PMID == "" {
			src.URL = s.repoLink(src.Title)
		}
		if n, ok := strings.CutPrefix(id, "pmid-"); ok {
			names := make([]string, 0, len(s.pmidNames[n]))
			for g := range s.pmidNames[n] {
				names = append(names, g)
			}
			sort.Strings(names)
			title := "PubMed " + n
			if len(names) > 0 {
				title += " (guideline publication: " + strings.Join(names, "; ") + ")"
			}
			src = knowledge.Source{ID: id, Title: title, URL: "https://pubmed.ncbi.nlm.nih.gov/" + n + "/", PMID: n, Licence: licCitation}
		}
		out = append(out, src)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

var (
	// "`owner/repo` @ <commit>" (india/SOURCES.md) and
	// "github:owner/repo | `<commit>`" (pgx/SOURCES.md).
	reRepoAt  = regexp.MustCompile("`([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)` @ `?([0-9a-f]{40})")
	reRepoCol = regexp.MustCompile("github:([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+) \\| `([0-9a-f]{40})`")
)

// addRepoLinks reads the repositories and commits that a SOURCES.md names.
func (s *sourceSet) addRepoLinks(md string) {
	if s.repos == nil {
		s.repos = map[string]string{}
	}
	for _, re := range []*regexp.Regexp{reRepoAt, reRepoCol} {
		for _, m := range re.FindAllStringSubmatch(md, -1) {
			if _, ok := s.repos[m[1]]; !ok {
				s.repos[m[1]] = "https://github.com/" + m[1] + "/tree/" + m[2]
			}
		}
	}
}

// repoLink returns a link for a source whose text names no URL, DOI or
// PMID but names a repository the data pack read ("github
// dianabar23/TFM_GenoStaR:CYP2C19/…", "PharmGKB/PharmCAT src/…"): the
// repository at the commit that SOURCES.md gives. CPIC database rows
// ("population_frequency_view … allele_frequencies.csv") point to the
// repository pgx/SOURCES.md names for that dump (FREQ_DB). "" when none.
func (s *sourceSet) repoLink(text string) string {
	best, bestLen := "", 0
	for repo, link := range s.repos {
		i := strings.Index(text, repo)
		if i < 0 {
			continue
		}
		// "sbslee/pypgx" must not take "sbslee/pypgx-bundle".
		if end := i + len(repo); end < len(text) && (text[end] == '-' || text[end] == '_') {
			continue
		}
		if len(repo) > bestLen || len(repo) == bestLen && repo < best {
			best, bestLen = link, len(repo)
		}
	}
	if best != "" {
		return best
	}
	if strings.Contains(text, "population_frequency_view") {
		return s.repos["KarlKeat/PGx-LLM-Eval"]
	}
	return ""
}
