package engine_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pgxsafety/pgxsafety/engine"
)

var (
	updatePin = flag.Bool("update-evaluate-pin", false, "rewrite testdata/evaluate_pin.tsv from the current engine")
	dumpPin   = flag.String("dump-evaluate-pin", "", "write each pinned Evaluate result as JSON into this directory")
)

// pinCase is one request whose Evaluate result is pinned.
type pinCase struct {
	name string
	req  engine.Request
}

// pinCases are the requests of TestEvaluatePinned: for every covered drug,
// no genotype, and for each gene of its pairs a few diplotypes (or HLA
// statuses) with and without context; then rsID, position-call and
// drug-name readings. Built from the knowledge in a fixed order.
func pinCases(k interface {
	Gene(string) (*engine.Gene, bool)
}, drugs []engine.Drug) []pinCase {
	age := 55.0
	ctx := func(r engine.Request) engine.Request {
		r.State, r.Ethnicity, r.Indication = "Tamil Nadu", "Tamil", "Acute coronary syndrome with PCI"
		r.Patient = &engine.Patient{Sex: "male", AgeYears: &age}
		return r
	}
	var out []pinCase
	for _, d := range drugs {
		out = append(out, pinCase{d.Name + "|none", engine.Request{Drug: d.Name}})
		out = append(out, pinCase{d.Name + "|none+ctx", ctx(engine.Request{Drug: d.Name})})
		seen := map[string]bool{}
		for _, p := range d.Pairs {
			if seen[p.Gene] {
				continue
			}
			seen[p.Gene] = true
			g, ok := k.Gene(p.Gene)
			if !ok {
				continue
			}
			n := 0
			for _, a := range g.Alleles {
				if a.Name == g.DefaultAllele || n == 4 {
					continue
				}
				n++
				if g.Method == engine.MethodAlleleStatus {
					for _, st := range []string{"positive", "negative"} {
						name := fmt.Sprintf("%s|%s %s", d.Name, a.Name, st)
						out = append(out, pinCase{name, engine.Request{Drug: d.Name, HLA: map[string]string{a.Name: st}}})
					}
					continue
				}
				for _, dip := range []string{g.DefaultAllele + "/" + a.Name, a.Name + "/" + a.Name} {
					name := fmt.Sprintf("%s|%s %s", d.Name, p.Gene, dip)
					req := engine.Request{Drug: d.Name, Diplotypes: map[string]string{p.Gene: dip}, GenesTested: []string{p.Gene}}
					out = append(out, pinCase{name, req}, pinCase{name + "+ctx", ctx(req)})
				}
			}
		}
	}
	fixed := []pinCase{
		{"rsids clopidogrel", engine.Request{Drug: "clopidogrel", Variants: []string{"rs12769205", "rs4244285"},
			Zygosity:    map[string]engine.Zygosity{"rs12769205": engine.Hom, "rs4244285": engine.Hom},
			GenesTested: []string{"CYP2C19"}, State: "Tamil Nadu", Ethnicity: "Tamil", Indication: "acute coronary syndrome, PCI"}},
		{"rsids cyp2d6 panel", engine.Request{Drug: "codeine", Variants: []string{"rs16947", "rs1135840", "rs1065852", "rs3892097"}, GenesTested: []string{"CYP2D6"}}},
		{"rsids unknown", engine.Request{Drug: "warfarin", Variants: []string{"rs9923231", "rs1057910", "rs1"}, GenesTested: []string{"CYP2C9", "VKORC1"}}},
		{"calls clopidogrel", engine.Request{Drug: "clopidogrel", GenesTested: []string{"CYP2C19"}, Calls: []engine.PositionCall{
			{Chrom: "chr10", Pos: 94781859, Ref: "G", Alt: "A", Genotype: "0/1"},
			{Chrom: "chr10", Pos: 94775367, Ref: "A", Alt: "G", Genotype: "0/1"},
			{Chrom: "chr10", Pos: 94842866, Ref: "A", Alt: "G", Genotype: "1/1"}}}},
		{"g6pd female het", engine.Request{Drug: "rasburicase", Diplotypes: map[string]string{"G6PD": "B (reference)/A- 202A_376G"}, Patient: &engine.Patient{Sex: "female"}}},
		{"g6pd no sex", engine.Request{Drug: "rasburicase", Diplotypes: map[string]string{"G6PD": "A- 202A_376G"}}},
		{"brand name", engine.Request{Drug: "Plavix", Diplotypes: map[string]string{"CYP2C19": "*2/*2"}}},
		{"salt", engine.Request{Drug: "Warfarin Sodium", Diplotypes: map[string]string{"CYP2C9": "*1/*3"}}},
		{"combination", engine.Request{Drug: "tramadol + paracetamol", Diplotypes: map[string]string{"CYP2D6": "*4/*4"}}},
		{"not recognised", engine.Request{Drug: "clopidogrl"}},
		{"ordinary word", engine.Request{Drug: "aspirin"}},
		{"codes", engine.Request{Drug: "clopidogrel", Diplotypes: map[string]string{"CYP2C19": "*1/*2"},
			IndicationCodes: []engine.Coding{{System: "http://hl7.org/fhir/sid/icd-10", Code: "I21.9"}}, Indication: "stable angina"}},
	}
	return append(out, fixed...)
}

// TestEvaluatePinned pins the Evaluate result of many requests (the
// SHA-256 of its JSON) so that work on the engine's speed cannot change
// an answer. Invalid requests pin their error text.
func TestEvaluatePinned(t *testing.T) {
	k := kb(t)
	cases := pinCases(k, k.Drugs)
	var got bytes.Buffer
	names := map[string]bool{}
	for _, c := range cases {
		if names[c.name] {
			t.Fatalf("duplicate case %q", c.name)
		}
		names[c.name] = true
		var b []byte
		res, err := k.Evaluate(c.req)
		if err != nil {
			b = []byte("error: " + err.Error())
		} else if b, err = json.MarshalIndent(res, "", " "); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		fmt.Fprintf(&got, "%s\t%s\n", c.name, hex.EncodeToString(sum[:8]))
		if *dumpPin != "" {
			f := strings.NewReplacer("/", "_", " ", "_", "|", "__", "*", "s").Replace(c.name) + ".json"
			if err := os.WriteFile(filepath.Join(*dumpPin, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	golden := filepath.Join("testdata", "evaluate_pin.tsv")
	if *updatePin {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(lines(want), lines(got.Bytes())); diff != "" {
		t.Errorf("Evaluate results differ from %s (-want +got); run with -dump-evaluate-pin DIR before and after to compare:\n%s", golden, diff)
	}
}

func lines(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
