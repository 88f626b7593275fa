package fhir_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
	"github.com/pgxsafety/pgxsafety/fhir"
	"github.com/pgxsafety/pgxsafety/fhir/internal/igvalidate"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// reportDrugs are checked for every sample whose Bundle is validated:
// clopidogrel (a confirmed CYP2C19 finding gives a Therapeutic Implication
// and a Medication Recommendation), codeine (CYP2D6, in review from a VCF
// without copy number) and warfarin (three genes).
var reportDrugs = []string{"clopidogrel", "codeine", "warfarin"}

var reportTime = time.Date(2025, 6, 1, 8, 30, 0, 0, time.UTC)

// sampleBundle is one sample's answer and its Bundle.
type sampleBundle struct {
	report fhir.SampleReport
	bundle json.RawMessage
}

// sampleBundles calls every sample of the VCF at path with reportDrugs and
// returns each sample's answer and Bundle (JSON), keyed "file sample".
func sampleBundles(t testing.TB, path, name string) map[string]sampleBundle {
	t.Helper()
	out := map[string]sampleBundle{}
	open := func() (io.ReadCloser, error) { return os.Open(path) }
	_, err := vcfcall.Run(context.Background(), kb, open, vcfcall.Options{Drugs: reportDrugs, Wire: pgxapi.WireResult}, func(c *vcfcall.Chunk) error {
		for _, s := range c.Samples {
			r, err := fhir.SampleReportFromJSON(s.Result)
			if err != nil {
				return err
			}
			b, err := fhir.BuildGenomicsBundle(r, fhir.ReportMeta{AuditID: "test-audit-1", RequestID: "req-1",
				KnowledgeVersion: kb.Version.Label, Issued: reportTime, Source: "test " + name})
			if err != nil {
				return err
			}
			out[name+" "+s.Name] = sampleBundle{r, b}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// TestReportBundlesValidate: every resource of the Bundle of every
// GeT-RM development sample and of every sample of the PharmCAT test VCFs
// the reader accepts parses as R4 (google/fhir, with its validation) and
// passes the IG 3.0.0 profiles it claims, as do the Bundles of four
// /pgx/check answers (igvalidate: cardinalities,
// patterns, bindings, slicing, invariants): 0 errors. Every Observation,
// DiagnosticReport and Task must claim one of the profiles. Under the race
// detector the 100-sample file is left out (see below).
func TestReportBundlesValidate(t *testing.T) {
	ps, err := igvalidate.Load(filepath.Join("internal", "igvalidate", "testdata", "ig"))
	if err != nil {
		t.Fatal(err)
	}
	v := igvalidate.New(ps)
	files := map[string]string{}
	getrm, _ := filepath.Glob(filepath.Join(datapacktest.Path(t, "pgx", "getrm-dev"), "*.g.vcf.gz"))
	for _, f := range getrm {
		files["getrm-dev/"+filepath.Base(f)] = f
	}
	refused := datapacktest.PharmCATRefused(t)
	root := datapacktest.PharmCATTestVCFs(t)
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".vcf") || strings.HasSuffix(p, ".vcf.bgz") || strings.HasSuffix(p, ".vcf.gz")) {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if raceBuild && strings.HasSuffix(rel, "100samples.vcf.bgz") {
			// Under the race detector (CI) its 100 samples, called by the
			// same code as the others, would take most of a minute; the
			// plain go test ./... validates them.
			return nil
		}
		if _, ok := refused[filepath.ToSlash(rel)]; !ok {
			files["pharmcat/"+filepath.ToSlash(rel)] = p
		}
		return nil
	})
	if len(getrm) < 8 || len(files) < 140 {
		t.Fatalf("%d GeT-RM samples and %d files in all: the data pack is incomplete", len(getrm), len(files))
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var targets []*igvalidate.Target
	counts := map[string]int{}
	bundles := 0
	start := time.Now()
	for _, n := range names {
		for key, sb := range sampleBundles(t, files[n], n) {
			b := sb.bundle
			bundles++
			if err := fhir.StrictR4(b); err != nil {
				t.Errorf("%s: %v", key, err)
			}
			es, err := igvalidate.Entries(b)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				counts[e.Resource["resourceType"].(string)]++
			}
			probs, ts, _ := v.CheckSet(es, "Observation", "DiagnosticReport", "Task")
			for _, p := range probs {
				t.Errorf("%s: %s", key, p)
			}
			for _, tg := range ts {
				tg.Name = key + " " + tg.Name
			}
			targets = append(targets, ts...)
		}
	}
	t.Logf("called and checked without invariants in %v", time.Since(start))
	start = time.Now()
	// /pgx/check answers: a confirmed finding, a review, several genes.
	for i, req := range []engine.Request{
		{Drug: "clopidogrel", Diplotypes: map[string]string{"CYP2C19": "*2/*2"}},
		{Drug: "clopidogrel", Diplotypes: map[string]string{"CYP2C19": "*1/*1"}, Variants: []string{"rs4244285"}, Zygosity: map[string]engine.Zygosity{"rs4244285": "hom"}},
		{Drug: "warfarin", Diplotypes: map[string]string{"CYP2C9": "*1/*3", "VKORC1": "rs9923231 variant (T)/rs9923231 variant (T)"}},
		{Drug: "codeine", Diplotypes: map[string]string{"CYP2D6": "*4/*4"}},
	} {
		res, err := kb.Evaluate(req)
		if err != nil {
			t.Fatal(err)
		}
		wire, err := json.Marshal(pgxapi.ResultOf(res))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := fhir.CheckReport(wire)
		if err != nil {
			t.Fatal(err)
		}
		b, err := fhir.BuildGenomicsBundle(rep, fhir.ReportMeta{AuditID: "a", KnowledgeVersion: kb.Version.Label, Issued: reportTime})
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("check %d %s", i, req.Drug)
		if err := fhir.StrictR4(b); err != nil {
			t.Errorf("%s: %v", key, err)
		}
		es, err := igvalidate.Entries(b)
		if err != nil {
			t.Fatal(err)
		}
		probs, ts, _ := v.CheckSet(es, "Observation", "DiagnosticReport", "Task")
		for _, p := range probs {
			t.Errorf("%s: %s", key, p)
		}
		for _, tg := range ts {
			tg.Name = key + " " + tg.Name
		}
		targets = append(targets, ts...)
	}
	errs, warns, err := igvalidate.Invariants(filepath.Join("internal", "igvalidate", "testdata"), targets)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("invariants in %v", time.Since(start))
	for _, p := range errs {
		t.Error(p)
	}
	warned := map[string]int{}
	for _, w := range warns {
		warned[w.Rule]++
	}
	t.Logf("%d files, %d sample Bundles, resources %v, %d checked against a profile; invariant warnings by key %v; required bindings not checkable: %v",
		len(files), bundles, counts, len(targets), warned, v.UncheckedList())
}

// TestReportReadBack: the Bundle of each GeT-RM development sample (and
// of PharmCAT's CYP2C19 *2/*2 test VCF, whose tier-1 position is missing),
// read back as a CDS prefetch would be (fhir.Resources, ReadGenomics),
// gives every called gene with one diplotype (or a review's actionable
// reading) as that diplotype, with what its Genotype says beside it (the
// caveat components: review reasons, positions not called, untested
// alleles) exactly as the answer said it, and every other gene in review
// as present but not interpreted for the answer's reasons — never as a
// diplotype. The card round trip is cdshooks.TestFHIRRoundTrip.
func TestReportReadBack(t *testing.T) {
	getrm, _ := filepath.Glob(filepath.Join(datapacktest.Path(t, "pgx", "getrm-dev"), "*.g.vcf.gz"))
	if len(getrm) < 8 {
		t.Fatalf("%d GeT-RM samples", len(getrm))
	}
	files := append(getrm, filepath.Join(datapacktest.PharmCATTestVCFs(t), "org", "pharmgkb", "pharmcat", "haplotype", "cyp2c19", "s2s2.vcf"))
	kinds := map[string]int{}
	for _, f := range files {
		for key, sb := range sampleBundles(t, f, filepath.Base(f)) {
			rep, b := sb.report, sb.bundle
			raws, err := fhir.Resources(b)
			if err != nil {
				t.Fatal(err)
			}
			g := mapper.ReadGenomics(raws, "", key)
			for _, gene := range rep.Genes {
				got, read := g.Diplotypes[gene.Gene]
				inReview := gene.NeedsReview || gene.Interpretation != "called"
				review := inReview
				if review && len(gene.Diplotypes) == 1 && gene.Diplotypes[0].Phenotype != "" {
					// An actionable reading kept beside the review is the value.
					review = false
				}
				switch {
				case review && read:
					t.Errorf("%s %s: in review, read back as the diplotype %q", key, gene.Gene, got)
				case review && gene.Status != "no_data" && len(g.UninterpretedFor(gene.Gene)) == 0:
					t.Errorf("%s %s: in review, not read back as present but not interpreted", key, gene.Gene)
				case review && len(gene.Uninterpreted) > 0 && gene.Status != "no_data":
					if u := g.UninterpretedFor(gene.Gene); !strings.Contains(u[0].Reason, gene.Uninterpreted[0]) {
						t.Errorf("%s %s: not interpreted for %q, want the answer's reason %q", key, gene.Gene, u[0].Reason, gene.Uninterpreted[0])
					}
				case !review && len(gene.Diplotypes) == 1 && got == "":
					t.Errorf("%s %s: called %s, not read back (%v)", key, gene.Gene, gene.Diplotypes[0].Diplotype, g.UninterpretedFor(gene.Gene))
				}
				if !read {
					continue
				}
				want := engine.DiplotypeCaveat{PositionsNotCalled: gene.MissingPositions, UntestedAlleles: gene.UntestedAlleles}
				if inReview {
					want.Review = gene.Uninterpreted
					if len(want.Review) == 0 {
						want.Review = []string{gene.Summary} // the review said only in the summary
					}
					kinds["review beside a reading"]++
				}
				if len(want.PositionsNotCalled) > 0 {
					kinds["positions not called"]++
				}
				if d := cmp.Diff(want, g.Caveats[gene.Gene], cmpopts.EquateEmpty()); d != "" {
					t.Errorf("%s %s: caveats read back (-answer +read):\n%s", key, gene.Gene, d)
				}
			}
		}
	}
	t.Logf("genes read back with caveats, by kind: %v", kinds)
	for _, k := range []string{"review beside a reading", "positions not called"} {
		if kinds[k] == 0 {
			t.Errorf("no gene read back with %s: that part of the round trip is untested (%v)", k, kinds)
		}
	}
}
