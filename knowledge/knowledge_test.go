package knowledge

import (
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/knowledge/internal/kbfile"
)

func mustLoad(t testing.TB) *evaluate.Engine {
	t.Helper()
	kb, err := Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return kb
}

// mustLoadBase loads the whole embedded knowledge afresh (tests may
// corrupt it).
func mustLoadBase(t testing.TB) *Base {
	t.Helper()
	b, err := LoadBase()
	if err != nil {
		t.Fatalf("LoadBase: %v", err)
	}
	return b
}

func TestLoad(t *testing.T) {
	b := mustLoadBase(t)
	kb := b.Engine
	if p := Validate(b); len(p) != 0 {
		t.Fatalf("Validate found %d problems on the embedded knowledge: %v", len(p), p)
	}
	if got := len(kb.Variants); got != TrackedVariantCount {
		t.Errorf("tracked variants = %d, want %d", got, TrackedVariantCount)
	}
	for _, v := range kb.Variants {
		if len(v.SourceIDs) == 0 {
			t.Errorf("variant %s has no source ids", v.RsID)
		}
		for name, f := range map[string]*float64{"af_india": v.AFIndia, "af_south_asian": v.AFSouthAsian, "af_global": v.AFGlobal} {
			if f != nil && (*f < 0 || *f > 1) {
				t.Errorf("variant %s %s = %v outside [0,1]", v.RsID, name, *f)
			}
		}
	}
	if got := len(kb.States); got != StateCount {
		t.Errorf("states = %d, want %d", got, StateCount)
	}
	if got := len(kb.Genes); got < 20 {
		t.Errorf("genes = %d, want at least 20", got)
	}
	// drugs.csv holds every drug with a CPIC pair at level A, A/B or B.
	levelAB := 0
	for _, d := range kb.Drugs {
		for _, p := range d.Pairs {
			if p.CPICLevel == "A" || p.CPICLevel == "A/B" || p.CPICLevel == "B" {
				levelAB++
				break
			}
		}
	}
	if levelAB != 105 {
		t.Errorf("drugs with a CPIC pair at level A, A/B or B = %d, want the 105 of drugs.csv", levelAB)
	}
	for _, h := range kb.HLAAlleles {
		if f := h.AFCentralSouthAsian; f != nil && (*f < 0 || *f > 1) {
			t.Errorf("HLA %s%s frequency %v outside [0,1]", h.Gene, h.Allele, *f)
		}
	}
	if !strings.HasPrefix(kb.Version.Label, "kb-"+kb.Version.Digest[:12]+"+cpic-") {
		t.Errorf("version label %q does not start with the digest", kb.Version.Label)
	}
}

// TestDrugsCSVCovered checks that every drug of the data pack's
// pgx/drugs.csv is a knowledge drug (without the data pack it skips,
// except with CI=true, where it fails).
func TestDrugsCSVCovered(t *testing.T) {
	f, err := os.Open(datapacktest.Path(t, "pgx", "drugs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	kb := mustLoad(t)
	if len(rows)-1 != 105 {
		t.Errorf("drugs.csv has %d drugs, want 105", len(rows)-1)
	}
	for _, r := range rows[1:] {
		if d, ok := kb.Drug(r[0]); !ok || d.Name != r[0] {
			t.Errorf("drugs.csv drug %q is not in the knowledge", r[0])
		}
	}
}

func ptr(f float64) *float64 { return &f }

func TestVariantSpotChecks(t *testing.T) {
	kb := mustLoad(t)
	type figures struct {
		AFIndia, AFSouthAsian, AFGlobal *float64
		Kind                            string
		Basis                           string
	}
	tests := []struct {
		rsid string
		want figures
	}{
		// No 1000 Genomes record: af_global absent, not 0; af_india from
		// the CPIC Central/South Asian group.
		{"rs2279343", figures{AFIndia: ptr(0.099), Kind: "allele", Basis: "CPIC Central/South Asian biogeographic group"}},
		// India-resident median 0.0 is a figure; "<0.001" is not a number.
		{"rs28399504", figures{AFIndia: ptr(0), AFGlobal: ptr(0.000798722), Kind: "allele", Basis: "star-allele frequency; median of India-resident studies listed in CPIC table (India)"}},
		// HLA-B*57:01 carrier prevalence on its tag SNP.
		{"rs2395029", figures{AFIndia: ptr(0.1225), Kind: "carrier", Basis: "HLA-B*57:01 CARRIER prevalence by HLA typing (49/400, eastern India), not SNP allele frequency (India)"}},
		// HLA tag row without Indian figure: the CPIC column is an HLA
		// allele frequency and is not used.
		{"rs9263726", figures{}},
		{"rs4244285", figures{AFIndia: ptr(0.3649), AFSouthAsian: ptr(0.34), AFGlobal: ptr(0.221446), Kind: "allele", Basis: "star-allele frequency; median of India-resident studies listed in CPIC table (India)"}},
	}
	byID := map[string]engine.TrackedVariant{}
	for _, v := range kb.Variants {
		byID[v.RsID] = v
	}
	for _, tc := range tests {
		t.Run(tc.rsid, func(t *testing.T) {
			v, ok := byID[tc.rsid]
			if !ok {
				t.Fatalf("%s is not a tracked variant", tc.rsid)
			}
			got := figures{AFIndia: v.AFIndia, AFSouthAsian: v.AFSouthAsian, AFGlobal: v.AFGlobal, Kind: v.AFIndiaKind, Basis: v.AFIndiaBasis}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s figures (-want +got):\n%s", tc.rsid, diff)
			}
		})
	}
}

func TestLookups(t *testing.T) {
	kb := mustLoad(t)
	drugs := []struct{ in, want string }{
		{"suxamethonium", "succinylcholine"},
		{"Clopidogrel", "clopidogrel"},
		{"siponimod", "siponimod"},
	}
	for _, tc := range drugs {
		d, ok := kb.Drug(tc.in)
		if !ok || d.Name != tc.want {
			t.Errorf("Drug(%q) = %v, %v; want %q", tc.in, d, ok, tc.want)
		}
	}
	states := []struct{ in, want string }{
		{"Orissa", "Odisha"},
		{"Pondicherry", "Puducherry"},
		{"Jammu & Kashmir", "Jammu and Kashmir"},
		{"Daman and Diu", "Dadra and Nagar Haveli and Daman and Diu"},
	}
	for _, tc := range states {
		s, ok := kb.State(tc.in)
		if !ok || s.Name != tc.want {
			t.Errorf("State(%q) = %v, %v; want %q", tc.in, s, ok, tc.want)
		}
	}
	if _, ok := kb.State("Bombay"); ok {
		t.Error(`State("Bombay") found: Bombay is a city, not a state`)
	}
	type tier struct{ Guidance, Sensitivity string }
	tiers := map[string]tier{
		"clopidogrel": {"CPIC", "high"},
		"siponimod":   {"DPWG", "high"},
		"warfarin":    {"DPWG", "moderate"},
		"metoprolol":  {"CPIC", "moderate"},
		"pitolisant":  {"none", "none"},
	}
	got := map[string]tier{}
	for name := range tiers {
		if d, ok := kb.Drug(name); ok {
			got[name] = tier{d.Guidance, d.Sensitivity}
		}
	}
	if diff := cmp.Diff(tiers, got); diff != "" {
		t.Errorf("drug tiers (-want +got):\n%s", diff)
	}
}

// TestDiplotypeTestdata checks the gzip copy of the CPIC diplotype table
// that the engine's tests use.
func TestDiplotypeTestdata(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "diplotype_phenotype.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(zr)
	header, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"gene", "diplotype", "n_alleles", "allele_functions", "activity_score", "phenotype", "cpic_lookup_key"}
	if diff := cmp.Diff(want, header); diff != "" {
		t.Fatalf("header (-want +got):\n%s", diff)
	}
	kb := mustLoad(t)
	n := 0
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		if _, ok := kb.Gene(rec[0]); !ok {
			t.Fatalf("diplotype row %d: unknown gene %q", n, rec[0])
		}
	}
	if n != 51107 {
		t.Errorf("diplotype rows = %d, want 51107", n)
	}
}

// copyFS copies the embedded knowledge files into a MapFS.
func copyFS(t *testing.T) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(Data(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(Data(), path)
		m[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// mutate decodes file name of m into a T, applies f and writes it back.
func mutate[T any](t *testing.T, m fstest.MapFS, name string, f func(*T)) {
	t.Helper()
	var v T
	if err := json.Unmarshal(m[name].Data, &v); err != nil {
		t.Fatal(err)
	}
	f(&v)
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	m[name] = &fstest.MapFile{Data: b}
}

func TestCorruptKnowledge(t *testing.T) {
	m := copyFS(t)
	if _, err := LoadFS(m); err != nil {
		t.Fatalf("LoadFS of the unmodified copy: %v", err)
	}
	// An unknown field.
	m[kbfile.HLA] = &fstest.MapFile{Data: []byte(strings.Replace(string(m[kbfile.HLA].Data), `"gene":`, `"bogus":1,"gene":`, 1))}
	// A recommendation naming an unknown drug.
	mutate(t, m, kbfile.Recommendations, func(r *[]Recommendation) { (*r)[0].Drug = "nosuchdrug" })
	// A frequency of 1.5.
	mutate(t, m, kbfile.Variants, func(v *[]TrackedVariant) { (*v)[0].AFIndia = ptr(1.5) })
	// A duplicate drug.
	mutate(t, m, kbfile.Drugs, func(d *[]Drug) { *d = append(*d, (*d)[0]) })
	// A dangling source id.
	mutate(t, m, kbfile.Herbs, func(h *[]HerbInteraction) { (*h)[0].SourceIDs = []string{"no-such-source"} })

	_, err := LoadFS(m)
	if err == nil {
		t.Fatal("LoadFS accepted corrupt knowledge")
	}
	var kerr *Error
	if !errors.As(err, &kerr) {
		t.Fatalf("LoadFS error %T is not *Error: %v", err, err)
	}
	want := []struct {
		file, field, message string
	}{
		{kbfile.HLA, "", `unknown field "bogus"`},
		{kbfile.Recommendations, "drug", `unknown drug "nosuchdrug"`},
		{kbfile.Variants, "af_india", "frequency 1.5 outside [0,1]"},
		{kbfile.Drugs, "name", "duplicate drug name"},
		{kbfile.Herbs, "source_ids[0]", `unknown source id "no-such-source"`},
	}
	problems := Problems(err)
	for _, w := range want {
		found := false
		for _, p := range problems {
			if p.File == w.file && p.Field == w.field && strings.Contains(p.Message, w.message) {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem %s %s: %s in\n%v", w.file, w.field, w.message, err)
		}
	}
	if len(problems) != len(want) {
		t.Errorf("got %d problems, want %d:\n%v", len(problems), len(want), err)
	}
	// Every problem is on its own line of the error text.
	if got := strings.Count(err.Error(), "\n"); got != len(problems) {
		t.Errorf("error text has %d problem lines, want %d", got, len(problems))
	}
}

// TestValidateListsEveryProblem corrupts a loaded knowledge base in memory.
func TestValidateListsEveryProblem(t *testing.T) {
	b := mustLoadBase(t)
	kb := b.Engine
	kb.Recommendations[3].Genes = append(kb.Recommendations[3].Genes, "NOSUCHGENE")
	kb.Drugs[0].Pairs[0].Gene = "NOSUCHGENE2"
	kb.States = kb.States[1:]
	kb.Variants[2].SourceIDs = nil
	kb.HLAAlleles[0].AFCentralSouthAsian = ptr(-0.1)
	kb.Sources = append(kb.Sources, kb.Sources[0])
	kb.Definitions[0].Tier1Positions = append(append([]int(nil), kb.Definitions[0].Tier1Positions...), 1)
	kb.Definitions[0].Tier1Alleles = append(append([]string(nil), kb.Definitions[0].Tier1Alleles...), "*nosuch")
	got := map[string]bool{}
	for _, p := range Validate(b) {
		got[p.File+" "+p.Field] = true
	}
	want := []string{
		"recommendations.json genes[" + strconv.Itoa(len(kb.Recommendations[3].Genes)-1) + "]",
		"recommendations.json lookup",
		"drugs.json pairs[0].gene",
		"states.json ",
		"variants.json source_ids",
		"hla.json af_central_south_asian",
		"sources.json id",
		"definitions.json tier1_positions",
		"definitions.json tier1_alleles",
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("Validate did not report %q; got %v", w, got)
		}
	}
}

func TestStats(t *testing.T) {
	b := mustLoadBase(t)
	kb := b.Engine
	s := Stats(b)
	rows := map[string]int{}
	for _, tc := range s.Tables {
		rows[tc.Name] = tc.Rows
	}
	if rows["tracked variants"] != 61 || rows["states and union territories"] != 36 || rows["drugs"] != len(kb.Drugs) {
		t.Errorf("unexpected table counts: %v", rows)
	}
	if rows["tracked variants with af_india"]+rows["tracked variants without af_india"] != 61 {
		t.Errorf("af_india counts do not add up: %v", rows)
	}
	for _, src := range s.Sources {
		if src.Rows == 0 {
			t.Errorf("source %s is cited by no row", src.ID)
		}
	}
	text := s.String()
	if !strings.Contains(text, kb.Version.Label) || !strings.Contains(text, "tracked variants") {
		t.Errorf("stats text lacks the version or the tables:\n%s", text)
	}
}

func TestDefaultIsCached(t *testing.T) {
	a, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Default()
	if a != b {
		t.Error("Default returned different values")
	}
}

func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := Load(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPharmCATDefinitions: the allele definitions of all 20 PharmCAT genes
// are loaded at the data version /pgx/version reports.
func TestPharmCATDefinitions(t *testing.T) {
	kb := mustLoad(t)
	if got := kb.Version.DataVersions["pharmcat"]; got != "2025-11-05-00-25" {
		t.Errorf("data_versions.pharmcat = %q", got)
	}
	if len(kb.Definitions) != 20 {
		t.Errorf("%d gene definitions, want 20", len(kb.Definitions))
	}
	for _, d := range kb.Definitions {
		if d.DataVersion != "2025-11-05-00-25" || len(d.Positions) == 0 || len(d.Alleles) < 2 {
			t.Errorf("%s: version %s, %d positions, %d alleles", d.Gene, d.DataVersion, len(d.Positions), len(d.Alleles))
		}
	}
	// The AMP tier-1 lists of exemptions.json; CYP2D6 *5 (the whole-gene
	// deletion) is copy number and has no position definition.
	tier1 := map[string][]string{}
	for _, d := range kb.Definitions {
		if len(d.Tier1Alleles) > 0 {
			tier1[d.Gene] = d.Tier1Alleles
		}
	}
	want := map[string][]string{
		"CYP2C19": {"*2", "*3", "*17"},
		"CYP2C9":  {"*2", "*3", "*5", "*6", "*8", "*11"},
		"CYP2D6":  {"*2", "*3", "*4", "*6", "*9", "*10", "*17", "*29", "*41"},
		"CYP3A4":  {"*22"},
		"CYP3A5":  {"*3", "*6", "*7"},
		"DPYD":    {"c.557A>G", "c.868A>G", "c.1129-5923C>G, c.1236G>A (HapB3)", "c.1679T>G (*13)", "c.1905+1G>A (*2A)", "c.2279C>T", "c.2846A>T"},
		"NUDT15":  {"*3"},
		"TPMT":    {"*2", "*3A", "*3B", "*3C"},
		"VKORC1":  {"rs9923231 variant (T)"},
	}
	if diff := cmp.Diff(want, tier1); diff != "" {
		t.Errorf("tier-1 alleles (-want +got):\n%s", diff)
	}
	g, _ := kb.Gene("RYR1")
	for _, a := range g.Alleles {
		if a.Name == "c.7522C>G" && a.Function != "Uncertain function" {
			t.Errorf("RYR1 c.7522C>G function %q, want the current Uncertain function", a.Function)
		}
	}
}
