package engine_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/engine/vcf"
)

type pcCase struct {
	ID           string `json:"id"`
	Kind         string `json:"kind"`
	Gene         string `json:"gene"`
	Phased       bool   `json:"phased_input_to_pharmcat"`
	PharmcatMode struct {
		TopOnly bool `json:"top_candidate_only"`
	} `json:"pharmcat_mode"`
	Source struct {
		VCF  string `json:"vcf"`
		Test string `json:"test"`
	} `json:"source"`
	NonRef []struct {
		Gene    string   `json:"gene"`
		RsID    *string  `json:"rsid"`
		Chrom   string   `json:"chrom"`
		Pos     int      `json:"pos"`
		Ref     string   `json:"ref"`
		Alleles []string `json:"alleles"`
		Ploidy  int      `json:"ploidy"`
	} `json:"vcf_nonref_genotypes"`
	Input struct {
		Drug        string            `json:"drug"`
		Variants    []string          `json:"variants"`
		Zygosity    map[string]string `json:"zygosity"`
		GenesTested []string          `json:"genes_tested"`
		Diplotypes  map[string]string `json:"diplotypes"`
		Patient     *struct {
			Sex string `json:"sex"`
		} `json:"patient"`
	} `json:"input"`
	Expected struct {
		Status         string   `json:"status"`
		Diplotypes     []string `json:"diplotypes"`
		Phenotypes     []string `json:"phenotypes"`
		ActivityScores []string `json:"activity_scores"`
	} `json:"expected"`
	FormLimits []string `json:"form_limits"`
}

func loadCases(t testing.TB) []pcCase {
	dir := datapacktest.PharmCATDir(t)
	b, err := os.ReadFile(filepath.Join(dir, "cases-dev.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []pcCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 295 {
		t.Fatalf("cases-dev.json has %d cases, want 295", len(f.Cases))
	}
	return f.Cases
}

var missingRe = regexp.MustCompile(`definition position\(s\) missing from the VCF \(([^)]*)\)`)

// caseObservations builds the position observations PharmCAT saw for a
// VCF-derived case: its test VCF when the case names one, else the
// non-reference genotypes plus reference calls at every other definition
// position of the tested genes, except the positions the case says were
// missing.
func caseObservations(t *testing.T, k *evaluate.Engine, dir string, c pcCase) ([]calling.PositionObservation, calling.CallOptions) {
	opt := calling.CallOptions{Genes: []string{c.Gene}}
	if c.Input.Patient != nil {
		opt.Sex = c.Input.Patient.Sex
	}
	if c.Source.VCF != "" {
		return readTestVCF(t, k, filepath.Join(dir, "test-vcfs", c.Source.VCF)), opt
	}
	missing := map[string]bool{}
	for _, fl := range c.FormLimits {
		if m := missingRe.FindStringSubmatch(fl); m != nil {
			for _, item := range strings.Split(m[1], ",") {
				missing[strings.TrimSpace(item)] = true
			}
		}
	}
	haploid := false
	for _, n := range c.NonRef {
		if n.Ploidy == 1 {
			haploid = true
		}
	}
	var obs []calling.PositionObservation
	seen := map[string]bool{}
	for _, n := range c.NonRef {
		o := calling.PositionObservation{Chrom: n.Chrom, Pos: n.Pos, Ref: n.Ref, Phased: c.Phased, Source: "case"}
		for _, a := range n.Alleles {
			switch {
			case a == ".":
				o.GT = append(o.GT, -1)
			case a == n.Ref:
				o.GT = append(o.GT, 0)
			default:
				i := -1
				for j, x := range o.Alts {
					if x == a {
						i = j
					}
				}
				if i < 0 {
					o.Alts = append(o.Alts, a)
					i = len(o.Alts) - 1
				}
				o.GT = append(o.GT, i+1)
			}
		}
		obs = append(obs, o)
		seen[fmt.Sprintf("%s:%d", n.Chrom, n.Pos)] = true
	}
	for _, g := range c.Input.GenesTested {
		d, ok := k.Caller().Definition(g)
		if !ok {
			continue
		}
		hap := haploid && d.Chromosome == "chrX" || d.Chromosome == "chrX" && opt.Sex == "male"
		for _, p := range d.Positions {
			key := fmt.Sprintf("%s:%d", d.Chromosome, p.Pos)
			if seen[key] || missing[p.RsID] || missing[key] || (p.RsID == "" && missing[key]) {
				continue
			}
			gt := []int{0, 0}
			if hap {
				gt = []int{0}
			}
			obs = append(obs, calling.PositionObservation{Chrom: d.Chromosome, Pos: p.Pos, Ref: p.Ref, Alts: p.Alts, GT: gt, Source: "case"})
			seen[key] = true
		}
	}
	return obs, opt
}

// readTestVCF reads the first sample of a PharmCAT test VCF with the
// engine's VCF reader (several PharmCAT fixtures are written out of order,
// which only AllowUnsorted accepts).
func readTestVCF(t *testing.T, k *evaluate.Engine, path string) []calling.PositionObservation {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	r, err := vcf.NewReader(fh, vcf.Options{AllowUnsorted: true, Keep: func(c string, pos, _ int) bool { return k.Caller().IsDefinitionPosition(c, pos) },
		SelectSample: func(i int, _ string) bool { return i == 0 }})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var obs []calling.PositionObservation
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return obs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		obs = append(obs, observation(rec, 0))
	}
}

// observation converts one sample's call at a VCF record.
func observation(rec vcf.Record, sample int) calling.PositionObservation {
	c := rec.Calls[sample]
	return calling.PositionObservation{Chrom: vcf.NormChrom(rec.Chrom), Pos: rec.Pos, Ref: rec.Ref, Alts: rec.Alts,
		GT: c.Alleles, Phased: c.Phased, Source: fmt.Sprintf("line %d", rec.Line)}
}

// sameSet compares two lists as sets of diplotypes (allele order within
// a diplotype ignored).
func sameDiplotypeSet(got, want []string) bool {
	norm := func(ds []string) []string {
		var out []string
		for _, d := range ds {
			out = append(out, diplotypeNorm(d))
		}
		sort.Strings(out)
		return compactStrings(out)
	}
	g, w := norm(got), norm(want)
	return strings.Join(g, "\n") == strings.Join(w, "\n")
}

func diplotypeNorm(d string) string {
	// G6PD names hold "/" only inside "Telti/Kobe"-style names; none of
	// the cases use them, so a plain split is enough here.
	parts := strings.Split(d, "/")
	sort.Strings(parts)
	return strings.Join(parts, "/")
}

func compactStrings(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func sameSet(got, want []string) bool {
	g := append([]string(nil), got...)
	w := append([]string(nil), want...)
	sort.Strings(g)
	sort.Strings(w)
	return strings.Join(compactStrings(g), "\n") == strings.Join(compactStrings(w), "\n")
}

// knownDisagreements lists the cases that do not agree, each with the
// reason. A case listed here that starts agreeing fails the test too, so
// the list stays exact.
var knownDisagreements = map[string]string{
	// The phenotype agrees (Intermediate Metabolizer, AS 1.0); the lookup
	// diplotype's name differs: PharmCAT writes the normal-function
	// c.1627A>G (*5) as "Reference" (its DPWG rule: normal-function
	// variants DPWG does not know read as Reference), and the service
	// keeps the variant's CPIC name.
	"PC-0167": "DPYD: normal-function variant named instead of Reference; phenotype agrees",
	// DpydTest.psTest3Sets gives PharmCAT three VCF phase sets (PS): the
	// variants are phased only within a set. The case lists the genotypes
	// without their phase sets, so the test reads them as one phased
	// block and the service gives Reference/c.632A>G (Intermediate
	// Metabolizer): the phenotype differs. Unphased, the service gives
	// c.632A>G/c.1679T>G (*13) (Poor Metabolizer) as PharmCAT does.
	"PC-0182": "DPYD: the case does not carry PharmCAT's phase sets (PS); phenotype differs (Intermediate, PharmCAT Poor)",
	// Ryr1Test.cacna1sRef_ryr1Het3 asserts c.4024A>G/c.4178A>G (both
	// Normal function) from c.4024A>G, c.4178A>G and c.4400A>G (Uncertain
	// function). The documented rule (RULES.md §3.2: MHA first, then
	// uncertain, then normal) picks c.4400A>G, as the service does; the
	// phenotype agrees (Uncertain Susceptibility).
	"PC-0188": "RYR1: lookup pair differs from the documented order; phenotype agrees",
}

// TestPharmCATCasesPositions runs every VCF-derived development case
// through the allele matcher from position observations and every
// diplotype case through the phenotype code, and reports agreement per
// gene.
func TestPharmCATCasesPositions(t *testing.T) {
	k := kb(t)
	dir := datapacktest.PharmCATDir(t)
	cases := loadCases(t)
	type tally struct{ agree, total int }
	perGene := map[string]*tally{}
	var disagreements []string
	for _, c := range cases {
		var got []string
		var phen []string
		status := ""
		var detail string
		switch c.Kind {
		case "vcf":
			obs, opt := caseObservations(t, k, dir, c)
			sc := k.Caller().CallSample(obs, opt)
			gc := sc.Gene(c.Gene)
			if gc == nil {
				status = "no gene"
				break
			}
			status = gc.Status
			ds := gc.Diplotypes
			if !c.PharmcatMode.TopOnly {
				// PharmCAT was asked for every matching diplotype: compare
				// with the reported ones plus the alternatives.
				ds = append(append([]calling.CalledDiplotype(nil), ds...), gc.Alternatives...)
			}
			for _, d := range ds {
				got = append(got, d.String())
				phen = append(phen, d.Call.Phenotype)
			}
			detail = fmt.Sprintf("source %v notes %v review %v missing %d", gc.Source, gc.Notes, gc.Uninterpreted, len(gc.MissingPositions))
		case "diplotype":
			d := c.Input.Diplotypes[c.Gene]
			alleles, err := k.Caller().ParseDiplotype(c.Gene, d)
			if err != nil {
				status = "error: " + err.Error()
				break
			}
			call, err := k.Caller().Phenotype(c.Gene, alleles...)
			if err != nil {
				status = "error: " + err.Error()
				break
			}
			status = calling.CallCalled
			got = []string{c.Expected.Diplotypes[0]}
			phen = []string{call.Phenotype}
			if len(c.Expected.ActivityScores) > 0 && call.ActivityScore != c.Expected.ActivityScores[0] {
				phen = append(phen, "AS "+call.ActivityScore)
			}
		}
		ok := false
		switch c.Expected.Status {
		case "no_call":
			ok = status != calling.CallCalled
		case "called":
			ok = status == calling.CallCalled && sameDiplotypeSet(got, c.Expected.Diplotypes) &&
				(c.Expected.Phenotypes == nil || sameSet(phen, c.Expected.Phenotypes))
		}
		tl := perGene[c.Gene]
		if tl == nil {
			tl = &tally{}
			perGene[c.Gene] = tl
		}
		tl.total++
		reason, known := knownDisagreements[c.ID]
		switch {
		case ok && known:
			t.Errorf("%s now agrees; remove it from knownDisagreements (%s)", c.ID, reason)
		case ok:
			tl.agree++
		case known:
		default:
			disagreements = append(disagreements, fmt.Sprintf("%s %s %s: got %s %v %v, want %s %v %v [%s]", c.ID, c.Kind, c.Gene, status, got, phen,
				c.Expected.Status, c.Expected.Diplotypes, c.Expected.Phenotypes, detail))
		}
	}
	genes := make([]string, 0, len(perGene))
	for g := range perGene {
		genes = append(genes, g)
	}
	sort.Strings(genes)
	var b strings.Builder
	agree, total := 0, 0
	for _, g := range genes {
		fmt.Fprintf(&b, "%s %d/%d; ", g, perGene[g].agree, perGene[g].total)
		agree += perGene[g].agree
		total += perGene[g].total
	}
	t.Logf("agreement %d/%d: %s", agree, total, b.String())
	for _, d := range disagreements {
		t.Error(d)
	}
}
