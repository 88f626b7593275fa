package engine_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/engine/vcf"
)

// TestPharmCATTestVCFsCalled calls every gene of every sample of every
// PharmCAT test VCF the reader accepts (out-of-order fixtures included)
// and checks the matcher's invariants: a known status, phenotypes only on
// called genes, and "needs review" exactly when something is named as not
// interpreted.
func TestPharmCATTestVCFsCalled(t *testing.T) {
	k := kb(t)
	root := filepath.Join(datapacktest.PharmCATDir(t), "test-vcfs")
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".vcf") || strings.HasSuffix(p, ".vcf.bgz")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 150 {
		t.Fatalf("only %d test VCFs found", len(files))
	}
	samples, genes, refused := 0, 0, 0
	for _, f := range files {
		obsBySample, err := readAllSamples(k, f)
		var pe *vcf.ParseError
		if errors.As(err, &pe) {
			refused++ // the reader's documented refusals (engine/vcf tests)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, obs := range obsBySample {
			samples++
			sc := k.Caller().CallSample(obs, calling.CallOptions{})
			for _, gc := range sc.Genes {
				genes++
				switch gc.Status {
				case calling.CallCalled, calling.CallNotCalled:
				case calling.CallProvisional:
					// CYP2D6 from position data: alleles without a
					// phenotype, and a review asking for copy number.
					if gc.Gene != "CYP2D6" || !gc.NeedsReview || len(gc.Diplotypes) == 0 {
						t.Errorf("%s %s: provisional (review %v) with diplotypes %v", f, gc.Gene, gc.NeedsReview, gc.Diplotypes)
					}
					for _, d := range gc.Diplotypes {
						if d.Call.Phenotype != "" {
							t.Errorf("%s %s: provisional %v with phenotype %q", f, gc.Gene, d, d.Call.Phenotype)
						}
					}
				default:
					t.Errorf("%s %s: status %q", f, gc.Gene, gc.Status)
				}
				if gc.Status != calling.CallCalled && gc.Status != calling.CallProvisional && len(gc.Diplotypes) > 0 {
					t.Errorf("%s %s: %s with diplotypes %v", f, gc.Gene, gc.Status, gc.Diplotypes)
				}
				if len(gc.Uninterpreted) > 0 && !gc.NeedsReview {
					t.Errorf("%s %s: uninterpreted %v without needs-review", f, gc.Gene, gc.Uninterpreted)
				}
				if gc.Status == calling.CallNotCalled && !gc.NeedsReview {
					t.Errorf("%s %s: not called without needs-review (%v)", f, gc.Gene, gc.Notes)
				}
			}
		}
	}
	t.Logf("%d files (%d refused by the reader), %d samples, %d gene calls", len(files), refused, samples, genes)
}

// readAllSamples reads every sample's observations at definition positions.
func readAllSamples(k *evaluate.Engine, path string) ([][]calling.PositionObservation, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var in io.Reader = fh
	r, err := vcf.NewReader(in, vcf.Options{AllowUnsorted: true, Keep: func(c string, pos, _ int) bool { return k.Caller().IsDefinitionPosition(c, pos) }})
	if err != nil {
		return nil, err
	}
	out := make([][]calling.PositionObservation, len(r.Samples()))
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		for i := range out {
			out[i] = append(out[i], observation(rec, i))
		}
	}
}

// BenchmarkCall100SamplesBGZF reads PharmCAT's 100-sample bgzip test VCF
// with engine/vcf and calls all 20 genes for every sample, per iteration;
// it reports samples per second.
func BenchmarkCall100SamplesBGZF(b *testing.B) {
	k := kb(b)
	path := filepath.Join(datapacktest.PharmCATDir(b), "test-vcfs", "org", "pharmgkb", "pharmcat", "100samples.vcf.bgz")
	samples := 0
	for b.Loop() {
		obs, err := readAllSamples(k, path)
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range obs {
			k.Caller().CallSample(o, calling.CallOptions{})
		}
		samples += len(obs)
	}
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
}
