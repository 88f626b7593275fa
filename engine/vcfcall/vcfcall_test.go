package vcfcall_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/engine/vcf"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
	"github.com/pgxsafety/pgxsafety/knowledge"
)

func loadKB(t testing.TB) *evaluate.Engine {
	t.Helper()
	k, err := knowledge.Default()
	if err != nil {
		t.Fatalf("load knowledge: %v", err)
	}
	return k
}

// memOpener opens an in-memory file and counts the readings.
func memOpener(data []byte, opened *int) vcfcall.Opener {
	return func() (io.ReadCloser, error) {
		*opened++
		return io.NopCloser(bytes.NewReader(data)), nil
	}
}

// runAll runs and collects every chunk.
func runAll(t *testing.T, kb *evaluate.Engine, data []byte, opt vcfcall.Options) ([]*vcfcall.Chunk, vcfcall.Stats, int, error) {
	t.Helper()
	var chunks []*vcfcall.Chunk
	opened := 0
	st, err := vcfcall.Run(context.Background(), kb, memOpener(data, &opened), opt, func(c *vcfcall.Chunk) error {
		chunks = append(chunks, c)
		return nil
	})
	return chunks, st, opened, err
}

// cyp2c19 is CYP2C19's rs4244285 (*2), a definition position.
const cyp2c19Chrom, cyp2c19Pos = "chr10", 94781859

const threeSamples = "##fileformat=VCFv4.2\n" +
	"##contig=<ID=chr10,length=133797422>\n" +
	"#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\tS2\tS3\n" +
	"chr1\t1000\t.\tA\tG\t.\tPASS\t.\tGT\t0/1\t0/0\t1/1\n" + // not a definition position
	"chr10\t94781859\trs4244285\tG\tA\t.\tLowQual\t.\tGT\t0/1\t0/0\t1|1\n"

func TestRunSamplesAndPasses(t *testing.T) {
	kb := loadKB(t)
	if !kb.Caller().IsDefinitionPosition(cyp2c19Chrom, cyp2c19Pos) {
		t.Fatalf("%s:%d is not a definition position; the test needs one", cyp2c19Chrom, cyp2c19Pos)
	}
	one, st1, opened1, err := runAll(t, kb, []byte(threeSamples), vcfcall.Options{})
	if err != nil {
		t.Fatal(err)
	}
	each, st3, opened3, err := runAll(t, kb, []byte(threeSamples), vcfcall.Options{SamplesPerPass: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(one) != 1 || opened1 != 1 || len(each) != 3 || opened3 != 3 {
		t.Fatalf("chunks/readings: %d/%d with the default, %d/%d with one sample per pass", len(one), opened1, len(each), opened3)
	}
	// Every pass reads the whole file.
	wantStats := vcfcall.Stats{SamplesInFile: 3, Samples: 3, Records: 2, RecordsUsed: 1, Passes: 1, BytesRead: int64(len(threeSamples)),
		Warnings: []string{"records at allele-definition positions have a FILTER other than PASS; their genotypes are no-calls there (named in the genes' notes): line 5 (chr10:94781859) FILTER LowQual"}}
	if diff := cmp.Diff(wantStats, st1); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	wantStats.Passes, wantStats.BytesRead = 3, 3*int64(len(threeSamples))
	if diff := cmp.Diff(wantStats, st3); diff != "" {
		t.Errorf("stats, one sample per pass (-want +got):\n%s", diff)
	}
	// The same answers, whatever the grouping.
	var flat []vcfcall.Sample
	for _, c := range each {
		flat = append(flat, c.Samples...)
	}
	if diff := cmp.Diff(one[0].Samples, flat); diff != "" {
		t.Errorf("samples differ with one sample per pass (-default +per-sample):\n%s", diff)
	}
	for i, s := range one[0].Samples {
		if s.Index != i || s.Name != []string{"S1", "S2", "S3"}[i] {
			t.Errorf("sample %d = %d %q", i, s.Index, s.Name)
		}
		sum := sha256.Sum256(s.Result)
		if s.ResultDigest != "sha256:"+hex.EncodeToString(sum[:]) {
			t.Errorf("%s: digest %s does not match the result bytes", s.Name, s.ResultDigest)
		}
		var res vcfcall.SampleResult
		if err := json.Unmarshal(s.Result, &res); err != nil {
			t.Fatal(err)
		}
		if res.Sample != s.Name || len(res.Genes) != len(kb.Caller().DefinitionGenes()) {
			t.Errorf("%s: result for %q with %d genes, want every one of the %d definition genes", s.Name, res.Sample, len(res.Genes), len(kb.Caller().DefinitionGenes()))
		}
		if !cmp.Equal(res.Warnings[:1], st1.Warnings) {
			t.Errorf("%s: warnings %q do not start with the file's", s.Name, res.Warnings)
		}
		for _, g := range res.Genes {
			if g.Gene != "CYP2C19" && g.Status != calling.CallNoData {
				t.Errorf("%s: %s has status %q without any record", s.Name, g.Gene, g.Status)
			}
			if g.Gene == "CYP2C19" && g.Status == calling.CallNoData {
				t.Errorf("%s: CYP2C19 has no data although the file has rs4244285", s.Name)
			}
		}
	}
}

func TestRunSampleSelection(t *testing.T) {
	kb := loadKB(t)
	chunks, st, _, err := runAll(t, kb, []byte(threeSamples), vcfcall.Options{Samples: []string{"S3", "S1", "S3"}, SamplesPerPass: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range chunks {
		for _, s := range c.Samples {
			got = append(got, s.Name)
		}
	}
	if diff := cmp.Diff([]string{"S1", "S3"}, got); diff != "" {
		t.Errorf("samples answered, in file order (-want +got):\n%s", diff)
	}
	if st.Samples != 2 || st.Passes != 2 || st.SamplesInFile != 3 {
		t.Errorf("stats %+v", st)
	}
	_, _, _, err = runAll(t, kb, []byte(threeSamples), vcfcall.Options{Samples: []string{"S1", "NA12878"}})
	var se *vcfcall.SampleError
	if !errors.As(err, &se) || se.Error() != `sample "NA12878": the file has no such sample (its samples: S1, S2, S3)` {
		t.Errorf("unknown sample: %v", err)
	}
}

// TestRunRefusesBeforeAnswering: a problem anywhere in the file stops the
// run before any sample is handed over, whichever group it is.
func TestRunRefusesBeforeAnswering(t *testing.T) {
	kb := loadKB(t)
	// NUDT15's rs116855232 (*3), a definition position.
	if !kb.Caller().IsDefinitionPosition("chr13", 48045719) {
		t.Fatal("chr13:48045719 is not a definition position; the test needs one")
	}
	bad := threeSamples + "chr13\t48045719\t.\tC\tT\t.\t.\t.\tGT\t0/1\t0/3\t0/0\n"
	chunks, _, _, err := runAll(t, kb, []byte(bad), vcfcall.Options{SamplesPerPass: 1})
	var pe *vcf.ParseError
	if !errors.As(err, &pe) || pe.Line != 6 || pe.Field != "GT" {
		t.Fatalf("error %v, want a GT ParseError on line 6", err)
	}
	if len(chunks) != 0 {
		t.Errorf("%d chunks handed over before the refusal", len(chunks))
	}
	stop := errors.New("stop")
	opened := 0
	calls := 0
	_, err = vcfcall.Run(context.Background(), kb, memOpener([]byte(threeSamples), &opened), vcfcall.Options{SamplesPerPass: 1},
		func(*vcfcall.Chunk) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 || opened != 1 {
		t.Errorf("emit error: err %v after %d calls and %d readings", err, calls, opened)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = vcfcall.Run(ctx, kb, memOpener([]byte(threeSamples), &opened), vcfcall.Options{}, func(*vcfcall.Chunk) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

// TestPharmCATTestVCFs calls every PharmCAT test VCF: each is answered for
// every sample, or refused with its documented refusal.
func TestPharmCATTestVCFs(t *testing.T) {
	kb := loadKB(t)
	dir := datapacktest.PharmCATTestVCFs(t)
	want := datapacktest.PharmCATRefused(t)
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".vcf") || strings.HasSuffix(path, ".vcf.bgz")) {
			return err
		}
		n++
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		answered := 0
		st, err := vcfcall.Run(context.Background(), kb, func() (io.ReadCloser, error) { return os.Open(path) },
			vcfcall.Options{SamplesPerPass: 7}, func(c *vcfcall.Chunk) error {
				for _, s := range c.Samples {
					if s.Index != answered {
						t.Errorf("%s: sample %d handed over as index %d", rel, answered, s.Index)
					}
					answered++
				}
				return nil
			})
		reason, isRefused := want[rel]
		switch {
		case isRefused && (err == nil || err.Error() != reason):
			t.Errorf("%s: got %v, want the refusal %q", rel, err, reason)
		case !isRefused && err != nil:
			t.Errorf("%s: %v", rel, err)
		case !isRefused && (answered != st.SamplesInFile || st.Samples != answered || answered == 0):
			t.Errorf("%s: %d samples answered of %d (stats %+v)", rel, answered, st.SamplesInFile, st)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 150 {
		t.Errorf("%d test VCFs found; expected the whole PharmCAT set", n)
	}
}

// BenchmarkRun100Samples calls every gene of the 100 samples of PharmCAT's
// bgzip test VCF. Reported: samples/s.
func BenchmarkRun100Samples(b *testing.B) {
	kb := loadKB(b)
	data, err := os.ReadFile(filepath.Join(datapacktest.PharmCATTestVCFs(b), "org", "pharmgkb", "pharmcat", "100samples.vcf.bgz"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	samples := 0
	for b.Loop() {
		opened := 0
		_, err := vcfcall.Run(context.Background(), kb, memOpener(data, &opened), vcfcall.Options{}, func(c *vcfcall.Chunk) error {
			samples += len(c.Samples)
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
}
