package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/knowledge/internal/kbfile"
)

// dataPack returns the shared data pack directory (PGXSAFETY_DATA_PACK or
// ../shared/data beside the repository); tests skip when it is absent,
// except in CI (CI=true), where they fail.
func dataPack(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PGXSAFETY_DATA_PACK")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "..", "shared", "data")
	}
	if _, err := os.Stat(filepath.Join(dir, "pgx", "SOURCES.md")); err != nil {
		if os.Getenv("CI") == "true" {
			// In CI the staleness tests must run: a missing data pack is a
			// broken CI set-up, not a reason to skip.
			t.Fatalf("CI=true but the data pack is not at %s (%v); set PGXSAFETY_DATA_PACK", dir, err)
		}
		t.Skipf("data pack not found at %s (%v); set PGXSAFETY_DATA_PACK to run the generator tests (in CI, with CI=true, this fails)", dir, err)
	}
	return dir
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func names(m map[string][]byte) []string {
	n := make([]string, 0, len(m))
	for k := range m {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// TestDeterministic runs the generator twice into temporary directories and
// requires byte-identical output.
func TestDeterministic(t *testing.T) {
	data := dataPack(t)
	var outs [2]map[string][]byte
	var gzs [2][]byte
	for i := range outs {
		dir := t.TempDir()
		if err := run(data, filepath.Join(dir, "data"), filepath.Join(dir, "testdata")); err != nil {
			t.Fatal(err)
		}
		outs[i] = readDir(t, filepath.Join(dir, "data"))
		gz, err := os.ReadFile(filepath.Join(dir, "testdata", DiplotypeGz))
		if err != nil {
			t.Fatal(err)
		}
		gzs[i] = gz
	}
	if diff := cmp.Diff(names(outs[0]), names(outs[1])); diff != "" {
		t.Fatalf("file sets differ (-first +second):\n%s", diff)
	}
	for _, n := range names(outs[0]) {
		if !bytes.Equal(outs[0][n], outs[1][n]) {
			t.Errorf("%s differs between two runs", n)
		}
	}
	if !bytes.Equal(gzs[0], gzs[1]) {
		t.Errorf("%s differs between two runs", DiplotypeGz)
	}
}

// TestCommittedFilesUpToDate fails when knowledge/data or the testdata copy
// is stale: regenerate with "go generate ./knowledge".
func TestCommittedFilesUpToDate(t *testing.T) {
	data := dataPack(t)
	files, err := Generate(data)
	if err != nil {
		t.Fatal(err)
	}
	committed := readDir(t, filepath.Join("..", "..", "data"))
	// classifier_profiles.json is written by knowledge/internal/profilegen
	// (outside CI), not by this generator; knowledge.TestProfilesFile checks it.
	delete(committed, kbfile.ClassifierProfiles)
	gz, err := os.ReadFile(filepath.Join("..", "..", "testdata", DiplotypeGz))
	if err != nil {
		t.Fatal(err)
	}
	committed[DiplotypeGz] = gz
	if diff := cmp.Diff(names(files), names(committed)); diff != "" {
		t.Fatalf("knowledge/data file set is stale (-generated +committed):\n%s\nrun: go generate ./knowledge", diff)
	}
	for _, n := range names(files) {
		if !bytes.Equal(files[n], committed[n]) {
			t.Errorf("%s is stale; run: go generate ./knowledge", n)
		}
	}
}

func TestRiskDisease(t *testing.T) {
	tests := map[string]string{
		"malaria: high burden (Category 3, API >1 per 1000) in 2023":                                           "malaria",
		"G6PD deficiency 2.97% (SW Odisha: Kalahandi, Rayagada; n=1981); tribal 4.8% vs non-tribal 2.4%":       "g6pd deficiency",
		"beta-thalassaemia trait among schoolchildren (Delhi+Mumbai overall 4.05%; Mumbai 2.68%)":              "beta-thalassaemia trait among schoolchildren",
		"HbE trait 23.9% in Dibrugarh; 41.1-66.7% in six Assamese ethnic groups":                               "hbe trait",
		"visceral leishmaniasis (kala-azar) endemic":                                                           "visceral leishmaniasis (kala-azar) endemic",
		"beta-thalassaemia trait: surveyed state in 6-city ICMR study (state range 1.48-3.64%; overall 2.78%)": "beta-thalassaemia trait",
	}
	for in, want := range tests {
		if got := riskDisease(in); got != want {
			t.Errorf("riskDisease(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseDrugNames(t *testing.T) {
	b := &builder{vocabulary: map[string]string{}}
	for _, n := range []string{"dapsone", "rasburicase", "tafenoquine", "methylene blue", "pegloticase", "primaquine",
		"carbamazepine", "phenytoin", "citalopram", "escitalopram", "sertraline", "clopidogrel", "warfarin", "isoniazid", "paromomycin"} {
		b.vocabulary[n] = n
	}
	b.vocabulary["suxamethonium"] = "succinylcholine"
	b.vocabulary["succinylcholine"] = "succinylcholine"
	tests := []struct {
		in   string
		want []string
	}{
		{"primaquine, tafenoquine (G6PD testing)", []string{"primaquine", "tafenoquine"}},
		{"carbamazepine (phenytoin association not observed)", []string{"carbamazepine"}},
		{"any prescribing: authors advise knowing G6PD status first; CPIC G6PD high-risk drugs (dapsone, rasburicase, tafenoquine, methylene blue, pegloticase)",
			[]string{"dapsone", "methylene blue", "pegloticase", "rasburicase", "tafenoquine"}},
		{"clopidogrel, citalopram/escitalopram, sertraline (CPIC CYP2C19 guideline drugs per PharmCAT definition files)",
			[]string{"citalopram", "clopidogrel", "escitalopram", "sertraline"}},
		{"succinylcholine (suxamethonium); mivacurium", []string{"mivacurium", "succinylcholine"}},
		{"hydroxyurea (sickle cell disease)", []string{"hydroxyurea"}},
		{"paracetamol for fever/pain", nil},
		{"warfarin (bleeding risk), isoniazid, caffeine/carcinogens", []string{"caffeine", "isoniazid", "warfarin"}},
		{"(drug linkage not sourced)", nil},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, b.parseDrugNames(tc.in)); diff != "" {
			t.Errorf("parseDrugNames(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestCompositionNames checks the curated Indian brand rows' composition
// check: a page's spelling of the INN is accepted for its drug only.
func TestCompositionNames(t *testing.T) {
	b := &builder{coveredNames: map[string]string{
		"peginterferon alfa-2b": "peginterferon alfa-2b",
		"peginterferon alfa-2a": "peginterferon alfa-2a",
		"hydroxychloroquine":    "hydroxychloroquine",
		"vortioxetine":          "vortioxetine",
	}}
	tests := []struct {
		drug        string
		ingredients []string
		ok          bool
	}{
		{"peginterferon alfa-2b", []string{"Pegylated Interferon Alpha-2b"}, true},
		{"peginterferon alfa-2b", []string{"Peginterferon alfa-2b"}, true},
		{"peginterferon alfa-2a", []string{"Pegylated Interferon Alpha-2b"}, false},
		{"peginterferon alfa-2b", []string{"Interferon Alpha-2b"}, false},
		{"hydroxychloroquine", []string{"Hydroxychloroquine Sulfate"}, true},
		{"vortioxetine", []string{"Vortioxetine"}, true},
		{"vortioxetine", []string{"Vortioxetine Hydrobromide Extra"}, false},
		{"sulfamethoxazole / trimethoprim", []string{"Trimethoprim", "Sulfamethoxazole"}, true},
		{"sulfamethoxazole / trimethoprim", []string{"Trimethoprim", "Ornidazole"}, false},
	}
	for _, tc := range tests {
		if err := b.compositionNames(tc.drug, tc.ingredients); (err == nil) != tc.ok {
			t.Errorf("compositionNames(%q, %q) = %v, want ok %v", tc.drug, tc.ingredients, err, tc.ok)
		}
	}
}

func TestHelpers(t *testing.T) {
	if diff := cmp.Diff([]string{"g.154536019G>A; g.154536019G>T", "rs1050829"}, splitVariantList("g.154536019G>A; g.154536019G>T;rs1050829")); diff != "" {
		t.Errorf("splitVariantList (-want +got):\n%s", diff)
	}
	sorted := []string{"*10", "*2", "*1", "*1x2", "Reference", "*3A"}
	sort.Slice(sorted, func(i, j int) bool { return naturalCompare(sorted[i], sorted[j]) < 0 })
	if diff := cmp.Diff([]string{"*1", "*1x2", "*2", "*3A", "*10", "Reference"}, sorted); diff != "" {
		t.Errorf("naturalCompare order (-want +got):\n%s", diff)
	}
	urls := map[string]string{
		"Indian J Med Sci 2005;59(2):51-6 (PMID 15738610), abstract via identifiers.org/pubmed/15738610": "https://identifiers.org/pubmed/15738610",
		"Borse & Kamble 2015 J Integr Med 13(3):165-172 doi:10.1016/S2095-4964(15)60173-X":               "https://doi.org/10.1016/S2095-4964(15)60173-X",
		"PMC5068113 (Gymnema sylvestre CYP cocktail study)":                                              "https://pmc.ncbi.nlm.nih.gov/articles/PMC5068113/",
		"Hindustan Times 2017-05-16": "",
	}
	for in, want := range urls {
		if got := firstURL(in); got != want {
			t.Errorf("firstURL(%q) = %q, want %q", in, got, want)
		}
	}
	got, err := lookupValue([]byte(`{"*28": 1, "*1": 1}`))
	if err != nil || got != "*1/*28" {
		t.Errorf("lookupValue diplotype = %q, %v; want *1/*28", got, err)
	}
	if !strings.HasPrefix(indiaLicence("af_cpic_*: CPIC CYP2C9 frequency table"), "CC0") {
		t.Error("CPIC table source is not CC0")
	}
	if l := indiaLicence("af_south_asian: Pakistani cohort, Rajput et al. 2014 (PMID 25140206) — NOT 1000G"); l != licLiterature {
		t.Errorf("literature source licence = %q", l)
	}
}
