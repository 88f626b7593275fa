// Command gen builds the knowledge base files under knowledge/data from the
// shared data pack (data/pgx and data/india beside DESIGN.md).
//
//	go run ./knowledge/internal/gen [-data ../shared/data] [-out knowledge/data] [-testdata DIR]
//
// Nothing is typed in here that is a clinical fact: every drug, gene,
// allele, function, rule, recommendation, frequency, state risk, herb
// interaction and citation is read from the data pack, and every row names
// the ids of its sources (sources.json). A figure the data pack does not
// have is left absent, never 0. The output is deterministic: the same input
// gives byte-identical files (rows sorted or in source order, map keys
// sorted, no timestamps). The generator also writes a gzip copy of
// pgx/diplotype_phenotype.csv to knowledge/testdata for the engine's tests.
//
// Selection and derivation rules (also written to knowledge/data/README.md):
//
// Drugs. The union of (a) every drug of pgx/drugs.csv (CPIC level A, A/B or
// B), (b) every drug with a CPIC row in pgx/recommendations.json and (c)
// every drug that has DPWG rows in pgx/dpwg_recommendations.json and no
// CPIC row. A drug carries all its pairs of pgx/gene_drug_pairs.csv.
// Synonyms are only names that a data-pack row links to the drug (see
// synonymEvidence). Guidance is "CPIC" when the drug has a CPIC
// recommendation row, else "DPWG" when it has DPWG rows, else "none".
//
// Sensitivity tier:
//   - "high": the drug has a pair at CPIC level A or A/B, and at least one of
//     its recommendation rows (CPIC rows; DPWG rows for a drug whose
//     Guidance is "DPWG") has actionability "yes" and says to avoid the drug
//     or use an alternative: its actionable_basis includes "text:Avoid",
//     "text:alternative", "text:do not use", "text:contraindicat",
//     "text:not recommended" or "clinpgx_flag:alternateDrugAvailable", or
//     its ClinPGx flag alternateDrugAvailable is set;
//   - "moderate": otherwise, when it has any actionable row (actionability
//     "yes" or "conditional") or a pair at CPIC level B;
//   - "none": otherwise.
//
// Recommendations. Every record of pgx/recommendations.json (Source
// "CPIC") except those marked pharmcat_specific_lookup (PharmCAT-only
// "No Result" and "xN combinations" lookups), plus the records of
// pgx/dpwg_recommendations.json (Source "DPWG") for drugs that have no CPIC
// record. A DPWG diplotype lookup ({"*1": 1, "*28": 1}) is written as the
// diplotype "*1/*28".
//
// Genes. The 20 genes of pgx/phenotype_rules.json (method, allele
// functions and activity values, rules, data version), plus every other
// gene that a covered drug's pair or a recommendation names (CYP4F2 with
// its allele definitions; HLA-A and HLA-B, whose method "allele_status" is
// the lookup type of their recommendation rows; the other pair genes with
// no method, because the data pack has no CPIC phenotype translation for
// them). Alleles are the union of the phenotype file's allele_function map
// (authoritative for function and activity) and pgx/allele_summary.csv.
// Phenotype rules the data pack lacks come from cited/phenotype_rules.csv,
// each row citing its public guideline table (cited.go; IFNL3, PMID
// 24096968 Table 1): the one place a rule is not read from the data pack.
//
// Tracked variants. Exactly 61: the rows of india/variant_frequencies.csv
// whose rsid is a dbSNP id (rs<digits>). The two other rows (CYP2D6*5 gene
// deletion and HLA-B*15:02) are not addressable by rsID; they are covered by
// diplotype and HLA input instead. af_india is the first figure available
// of: af_indian (India-resident studies); af_south_asian; the 1000 Genomes
// 30x South Asian figure (489 unrelated) for the row's alt allele; the CPIC
// Central/South Asian figure — except for HLA tag rows, whose CPIC columns
// are HLA allele frequencies, not SNP frequencies. A cell that is not a
// number ("<0.001") is skipped. af_india_kind is "carrier" when the metric
// says it is a carrier frequency. A variant's function is the function of
// the allele(s) its alt defines alone (rsid_index.csv) when they agree, else
// the function shared by every allele carrying the alt, else absent.
//
// States. The 36 states and union territories of india/state_context.csv;
// a risk's disease is its leading phrase, its drugs the drug names of the
// affected-drugs text (see riskDisease and parseDrugNames).
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/knowledge"
	"github.com/pgxsafety/pgxsafety/knowledge/internal/kbfile"
)

func main() {
	data := flag.String("data", "../shared/data", "data pack directory (holding pgx/ and india/)")
	out := flag.String("out", "knowledge/data", "output directory for the knowledge files")
	testdata := flag.String("testdata", "", "directory for diplotype_phenotype.csv.gz (default: <out>/../testdata)")
	flag.Parse()
	if *testdata == "" {
		*testdata = filepath.Join(*out, "..", "testdata")
	}
	if err := run(*data, *out, *testdata); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// DiplotypeGz is the name of the gzip copy of pgx/diplotype_phenotype.csv.
const DiplotypeGz = "diplotype_phenotype.csv.gz"

// run generates the files and writes them to outDir and testdataDir.
func run(dataDir, outDir, testdataDir string) error {
	files, err := Generate(dataDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	for _, name := range sortedKeys(files) {
		if name == DiplotypeGz {
			continue
		}
		if err := os.WriteFile(filepath.Join(outDir, name), files[name], 0o644); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(testdataDir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(testdataDir, DiplotypeGz), files[DiplotypeGz], 0o644)
}

// Generate reads the data pack in dataDir and returns the generated files
// by name: the knowledge files (JSON and Markdown) and DiplotypeGz.
func Generate(dataDir string) (map[string][]byte, error) {
	b := &builder{dir: dataDir, src: newSourceSet()}
	steps := []func() error{
		b.loadPGx,
		b.loadIndia,
		b.buildDrugs,
		b.buildNames, // names.go
		b.buildGenes,
		b.addCitedPhenotypeRules, // cited.go
		b.overlayRYR1,            // pharmcat.go
		b.addCYP2D6Combinations,  // pharmcat.go
		b.buildDefinitions,       // pharmcat.go
		b.buildRsIDs,
		b.buildRecommendations,
		b.buildHLA,
		b.buildWarfarin,
		b.buildVariants,
		b.buildStates,
		b.buildCommunities,
		b.buildHerbs,
		b.buildMeta,
		b.buildClassifier, // classifier.go
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	sources, err := b.src.list()
	if err != nil {
		return nil, err
	}
	b.kb.Sources = sources
	if err := b.checkCitations(); err != nil {
		return nil, err
	}

	files := map[string][]byte{}
	put := func(name string, v any) {
		if err == nil {
			files[name], err = encodeJSON(v)
		}
	}
	put(kbfile.Sources, b.kb.Sources)
	put(kbfile.Drugs, b.kb.Drugs)
	put(kbfile.Genes, b.kb.Genes)
	put(kbfile.RsIDs, b.kb.RsIDs)
	put(kbfile.Recommendations, b.kb.Recommendations)
	put(kbfile.Variants, b.kb.Variants)
	put(kbfile.HLA, b.kb.HLAAlleles)
	put(kbfile.States, b.kb.States)
	put(kbfile.Communities, b.kb.Communities)
	put(kbfile.Herbs, b.kb.Herbs)
	put(kbfile.Warfarin, b.kb.Warfarin)
	put(kbfile.MetaFile, b.meta)
	put(kbfile.Definitions, b.kb.Definitions)
	put(kbfile.DrugNames, b.kb.DrugNames)
	put(kbfile.Indications, b.kb.Indications)
	if err != nil {
		return nil, err
	}
	if err := b.classifierFiles(files); err != nil { // classifier.go
		return nil, err
	}
	files[kbfile.Readme] = []byte(b.readme())
	files[kbfile.Licence] = []byte(b.licence())
	gz, err := gzipFile(filepath.Join(dataDir, "pgx", "diplotype_phenotype.csv"))
	if err != nil {
		return nil, err
	}
	files[DiplotypeGz] = gz
	return files, nil
}

// builder holds the inputs and the knowledge being built.
type builder struct {
	dir string
	src *sourceSet
	kb  knowledge.Rows

	// pgx inputs
	drugsCSV, pairsCSV, summaryCSV, defsCSV, rsidCSV, freqCSV *table
	pheno                                                     map[string]*phenoGene
	phenoOrder                                                []string
	phenoHead                                                 string // commit most phenotype files come from
	phenoSrc                                                  map[string]knowledge.Source
	cpic                                                      *recFile
	dpwg                                                      *recFile
	sourcesMD                                                 string

	// india inputs
	variantCSV, globalCSV, stateCSV, ethnicCSV, herbCSV *table
	dataProblems                                        []string // found in the data pack; listed in README.md
	excludedVariants                                    []string

	// derived
	drugSet       map[string]*knowledge.Drug
	vocabulary    map[string]string // drug name or synonym (lower case) → canonical name
	coveredNames  map[string]string // covered drug name or synonym → canonical name
	skippedPCAT   int
	cpicRecDrugs  map[string]bool
	dpwgOnlyDrugs map[string]bool
	meta          kbfile.Meta
	pcatVersion   string              // PharmCAT data version of the definition files
	cls           *classify.Knowledge // classifier.go
}

// checkCitations makes sure every row names at least one source and only
// sources that sources.json lists.
func (b *builder) checkCitations() error {
	known := map[string]bool{}
	for _, s := range b.kb.Sources {
		known[s.ID] = true
	}
	var errs []string
	check := func(what string, ids []string) {
		if len(ids) == 0 {
			errs = append(errs, what+": no source ids")
		}
		for _, id := range ids {
			if !known[id] {
				errs = append(errs, fmt.Sprintf("%s: unknown source id %q", what, id))
			}
		}
	}
	for _, d := range b.kb.Drugs {
		check("drug "+d.Name, d.SourceIDs)
		for _, p := range d.Pairs {
			check("drug "+d.Name+" pair "+p.Gene, p.SourceIDs)
		}
	}
	for _, g := range b.kb.Genes {
		check("gene "+g.Symbol, g.SourceIDs)
		for _, a := range g.Alleles {
			check("gene "+g.Symbol+" allele "+a.Name, a.SourceIDs)
		}
	}
	for _, r := range b.kb.RsIDs {
		check("rsid "+r.RsID, r.SourceIDs)
	}
	for _, r := range b.kb.Recommendations {
		check("recommendation "+r.ID, r.SourceIDs)
	}
	for _, v := range b.kb.Variants {
		check("variant "+v.RsID, v.SourceIDs)
	}
	for _, h := range b.kb.HLAAlleles {
		check("hla "+h.Gene+h.Allele, h.SourceIDs)
	}
	for _, s := range b.kb.States {
		for _, r := range s.Risks {
			check("state "+s.Name+" risk "+r.Risk, r.SourceIDs)
		}
	}
	for _, c := range b.kb.Communities {
		check("community "+c.Name, c.SourceIDs)
	}
	for _, h := range b.kb.Herbs {
		check("herb "+h.Herb, h.SourceIDs)
	}
	if b.kb.Warfarin != nil {
		check("warfarin", b.kb.Warfarin.SourceIDs)
	}
	for _, n := range b.kb.DrugNames {
		check("drug name "+n.Name, n.SourceIDs)
	}
	for _, c := range b.kb.Indications {
		check("indication "+c.System+" "+c.Code, c.SourceIDs)
	}
	if len(errs) > 0 {
		return errors.New("citations:\n  " + strings.Join(errs, "\n  "))
	}
	return nil
}

// encodeJSON writes v compactly without HTML escaping; a slice is written
// one element per line for readable diffs.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	writeElems := func(n int, elem func(i int) any) error {
		buf.WriteString("[")
		for i := range n {
			if i > 0 {
				buf.WriteString(",")
			}
			buf.WriteString("\n")
			b, err := marshal(elem(i))
			if err != nil {
				return err
			}
			buf.Write(b)
		}
		if n > 0 {
			buf.WriteString("\n")
		}
		buf.WriteString("]\n")
		return nil
	}
	var err error
	switch s := v.(type) {
	case []knowledge.Source:
		err = writeElems(len(s), func(i int) any { return s[i] })
	case []knowledge.Drug:
		err = writeElems(len(s), func(i int) any { return s[i] })
	case []knowledge.Gene:
		err = writeElems(len(s), func(i int) any { return s[i] })
	case []knowledge.RsID:
		err = writeElems(len(s), func(i int) any { return s[i] })
	case []knowledge.Recommendation:
		err = writeElems(len(s), func(i int) any { return s[i] })
	case []knowledge.TrackedVariant:
		err = writeElems(len(s), func(i int) any { return s[i] })
	case []knowledge.HLAAllele:
		err = writeElems(len(s), func(i int) any { return s[i] })
	case []knowledge.State:
		err = writeElems(len(s), func(i int) any { return s[i] })
	case []knowledge.Community:
		err = writeElems(len(s), func(i int) any { return s[i] })
	case []knowledge.GeneDefinition:
		err = writeElems(len(s), func(i int) any { return s[i] })
	case []knowledge.HerbInteraction:
		err = writeElems(len(s), func(i int) any { return s[i] })
	case []knowledge.DrugName:
		err = writeElems(len(s), func(i int) any { return s[i] })
	case []knowledge.IndicationCode:
		err = writeElems(len(s), func(i int) any { return s[i] })
	default:
		var b []byte
		if b, err = marshal(v); err == nil {
			buf.Write(b)
			buf.WriteString("\n")
		}
	}
	return buf.Bytes(), err
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// gzipFile compresses a file deterministically: no name and no
// modification time in the header, fixed compression level.
func gzipFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(zw, f); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
