package vcfcall_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/engine/vcf"
	"github.com/pgxsafety/pgxsafety/engine/vcf/vcftest"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

// seekFile is an in-memory file that can seek (so Run may read it by
// region).
type seekFile struct{ *bytes.Reader }

func (seekFile) Close() error { return nil }

// bgzipWithIndex re-compresses a VCF (plain or gzip) into BGZF and indexes
// it (tabix), in memory.
func bgzipWithIndex(t testing.TB, src []byte) (gz []byte, idx *vcf.Index) {
	t.Helper()
	var text io.Reader = bytes.NewReader(src)
	if len(src) > 2 && src[0] == 0x1f && src[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		text = zr
	}
	var out, ix bytes.Buffer
	if _, err := vcftest.Write(&out, &ix, text, gzip.DefaultCompression); err != nil {
		t.Fatal(err)
	}
	idx, err := vcf.ReadIndex(&ix, 0)
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), idx
}

// runResults runs every sample and returns their result JSON.
func runResults(t testing.TB, kb *evaluate.Engine, open vcfcall.Opener, opt vcfcall.Options) ([]string, vcfcall.Stats) {
	t.Helper()
	var out []string
	st, err := vcfcall.Run(context.Background(), kb, open, opt, func(c *vcfcall.Chunk) error {
		for _, s := range c.Samples {
			out = append(out, string(s.Result))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, st
}

// recordRef matches how an answer names the record an observation comes
// from: "line N" in a whole read, "record CHROM:POS" in a read by region.
var recordRef = regexp.MustCompile(`line \d+|record chr[0-9XYMT]+:\d+`)

// TestRegionReadSameAnswers: every GeT-RM development genome (re-compressed
// into BGZF and indexed in memory; the data pack's files are plain gzip)
// gets the same answer for every gene read whole and read by region, but
// for how the record an observation comes from is named (its line, or its
// position: line numbers are not known in a read by region).
func TestRegionReadSameAnswers(t *testing.T) {
	dir := datapacktest.Path(t, "pgx", "getrm-dev")
	files, err := filepath.Glob(filepath.Join(dir, "*.g.vcf.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no GeT-RM genomes in %s (%v)", dir, err)
	}
	kb := loadKB(t)
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			gz, idx := bgzipWithIndex(t, src)
			open := func() (io.ReadCloser, error) { return seekFile{bytes.NewReader(gz)}, nil }
			whole, wst := runResults(t, kb, open, vcfcall.Options{})
			region, rst := runResults(t, kb, open, vcfcall.Options{Index: idx})
			if !rst.ReadByRegion || wst.ReadByRegion || rst.IndexNote != "" {
				t.Fatalf("read by region %v (%q), whole %v", rst.ReadByRegion, rst.IndexNote, wst.ReadByRegion)
			}
			if rst.RecordsUsed != wst.RecordsUsed {
				t.Errorf("records used: whole %d, by region %d", wst.RecordsUsed, rst.RecordsUsed)
			}
			if rst.Records >= wst.Records {
				t.Errorf("the read by region read %d records of %d", rst.Records, wst.Records)
			}
			for i := range whole {
				w := recordRef.ReplaceAllString(whole[i], "RECORD")
				r := recordRef.ReplaceAllString(region[i], "RECORD")
				if diff := cmp.Diff(w, r); diff != "" {
					t.Errorf("sample %d differs (-whole +region):\n%s", i, diff)
				}
			}
			t.Logf("%s: %d of %d records read by region, %d used", filepath.Base(path), rst.Records, wst.Records, rst.RecordsUsed)
		})
	}
}

// TestRegionReadFallsBack: an index with a file that cannot be read by
// region (plain gzip, or an opener that cannot seek) streams the file and
// says why; the answers are those of a whole read.
func TestRegionReadFallsBack(t *testing.T) {
	kb := loadKB(t)
	_, idx := bgzipWithIndex(t, []byte(threeSamples))
	var plain bytes.Buffer
	zw := gzip.NewWriter(&plain)
	zw.Write([]byte(threeSamples))
	zw.Close()
	want, _ := runResults(t, kb, func() (io.ReadCloser, error) { return seekFile{bytes.NewReader(plain.Bytes())}, nil }, vcfcall.Options{})
	for name, open := range map[string]vcfcall.Opener{
		"plain gzip":  func() (io.ReadCloser, error) { return seekFile{bytes.NewReader(plain.Bytes())}, nil },
		"cannot seek": func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(plain.Bytes())), nil },
		"plain text":  func() (io.ReadCloser, error) { return seekFile{bytes.NewReader([]byte(threeSamples))}, nil },
	} {
		got, st := runResults(t, kb, open, vcfcall.Options{Index: idx})
		if st.ReadByRegion || !strings.HasPrefix(st.IndexNote, "the file was read whole: ") {
			t.Errorf("%s: read by region %v, note %q", name, st.ReadByRegion, st.IndexNote)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: %s", name, diff)
		}
	}
}

func TestRegionsCoverEveryDefinitionPosition(t *testing.T) {
	kb := loadKB(t)
	c := kb.Caller()
	regions := vcfcall.Regions(c, 0)
	for _, gene := range c.DefinitionGenes() {
		d, _ := c.Definition(gene)
		for _, p := range d.Positions {
			in := false
			for _, g := range regions {
				in = in || g.Chrom == d.Chromosome && p.Pos >= g.Start && p.Pos <= g.End
			}
			if !in {
				t.Errorf("%s %s:%d is in no region", gene, d.Chromosome, p.Pos)
			}
		}
	}
	t.Logf("%d regions: %v", len(regions), fmt.Sprint(regions))
}
