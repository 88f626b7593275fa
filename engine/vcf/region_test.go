package vcf_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pgxsafety/pgxsafety/engine/vcf"
	"github.com/pgxsafety/pgxsafety/engine/vcf/vcftest"
)

// synthGVCF writes a gVCF-like file: reference blocks with END (some long,
// crossing many 16 kb tiles), SNVs and deletions, on three contigs.
func synthGVCF(seed uint64, contigs []string, perContig int) string {
	rng := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	b.WriteString("##fileformat=VCFv4.2\n##reference=GRCh38\n")
	b.WriteString("#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\n")
	for _, c := range contigs {
		pos := 1 + rng.IntN(1000)
		for i := 0; i < perContig; i++ {
			switch rng.IntN(4) {
			case 0, 1: // a reference block, sometimes long
				n := 1 + rng.IntN(300)
				if rng.IntN(20) == 0 {
					n = 20000 + rng.IntN(100000)
				}
				fmt.Fprintf(&b, "%s\t%d\t.\tA\t<NON_REF>\t.\t.\tEND=%d\tGT:DP:GQ:MIN_DP\t0/0:30:60:25\n", c, pos, pos+n-1)
				pos += n
			case 2:
				fmt.Fprintf(&b, "%s\t%d\trs%d\tC\tT,<NON_REF>\t50\tPASS\tDP=30\tGT:DP:GQ\t0/1:30:99\n", c, pos, pos)
				pos++
			default:
				fmt.Fprintf(&b, "%s\t%d\t.\tCAGT\tC,<NON_REF>\t50\tPASS\t.\tGT:GQ\t1/1:40\n", c, pos)
				pos += 4
			}
		}
	}
	return b.String()
}

type indexed struct {
	text      string
	gz, index []byte
}

func makeIndexed(t testing.TB, text string) indexed {
	t.Helper()
	var gz, idx bytes.Buffer
	if _, err := vcftest.Write(&gz, &idx, strings.NewReader(text), gzip.DefaultCompression); err != nil {
		t.Fatal(err)
	}
	return indexed{text: text, gz: gz.Bytes(), index: idx.Bytes()}
}

func readAll(t *testing.T, rd *vcf.Reader) []vcf.Record {
	t.Helper()
	var out []vcf.Record
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		rec.Line = 0
		out = append(out, rec)
	}
}

func overlapsAny(regions []vcf.Region, chrom string, start, end int) bool {
	for _, g := range regions {
		if vcf.NormChrom(g.Chrom) == chrom && start <= g.End && end >= g.Start {
			return true
		}
	}
	return false
}

// TestRegionReadEqualsFilteredWholeRead: reading by region through a tabix
// or CSI index gives exactly the records of a whole read whose span
// overlaps a region, in file order (regions unsorted, overlapping, on
// contigs written "10" or "chr10", or absent).
func TestRegionReadEqualsFilteredWholeRead(t *testing.T) {
	contigs := []string{"chr1", "chr2", "chr10"}
	text := synthGVCF(7, contigs, 3000)
	cases := []struct {
		name    string
		regions []vcf.Region
	}{
		{"one small", []vcf.Region{{"chr2", 50000, 50100}}},
		{"several, unsorted and overlapping", []vcf.Region{{"chr10", 90000, 120000}, {"chr1", 5, 10}, {"chr10", 100000, 130000}, {"chr1", 400000, 410000}}},
		{"contig named without chr", []vcf.Region{{"2", 1, 30000}}},
		{"whole contigs", []vcf.Region{{"chr1", 1, 1 << 29}, {"chr10", 1, 1 << 29}}},
		{"beyond the last record", []vcf.Region{{"chr2", 1 << 28, 1<<28 + 10}}},
		{"unknown contig", []vcf.Region{{"chr7", 1, 1000}}},
		{"none", nil},
	}
	// Random small regions: many land inside long reference blocks.
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 30; i++ {
		s := 1 + rng.IntN(600000)
		cases = append(cases, struct {
			name    string
			regions []vcf.Region
		}{fmt.Sprintf("random %d", i), []vcf.Region{{contigs[rng.IntN(3)], s, s + rng.IntN(2000)}}})
	}
	hts, err := os.ReadFile(filepath.Join("testdata", "htslib", "blocks.g.vcf.gz"))
	if err != nil {
		t.Fatal(err)
	}
	htsTBI, err := os.ReadFile(filepath.Join("testdata", "htslib", "blocks.g.vcf.gz.tbi"))
	if err != nil {
		t.Fatal(err)
	}
	htsCSI, err := os.ReadFile(filepath.Join("testdata", "htslib", "blocks.g.vcf.gz.csi"))
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"vcftest-tbi", "htslib-tbi", "htslib-csi"} {
		ix, wantKind := makeIndexed(t, text), "tabix"
		switch kind {
		case "htslib-tbi":
			ix = indexed{gz: hts, index: htsTBI}
		case "htslib-csi":
			ix, wantKind = indexed{gz: hts, index: htsCSI}, "csi"
		}
		idx, err := vcf.ReadIndex(bytes.NewReader(ix.index), 0)
		if err != nil {
			t.Fatal(err)
		}
		if idx.Kind != wantKind {
			t.Fatalf("kind %q", idx.Kind)
		}
		for _, tc := range cases {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				whole, err := vcf.NewReader(bytes.NewReader(ix.gz), vcf.Options{Keep: func(chrom string, start, end int) bool {
					return overlapsAny(tc.regions, chrom, start, end)
				}})
				if err != nil {
					t.Fatal(err)
				}
				want := readAll(t, whole)
				rd, err := vcf.NewRegionReader(bytes.NewReader(ix.gz), idx, tc.regions, vcf.Options{})
				if err != nil {
					t.Fatal(err)
				}
				got := readAll(t, rd)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("region read differs from the filtered whole read (-whole +region):\n%s", diff)
				}
				if len(rd.Samples()) != 1 {
					t.Errorf("samples %v", rd.Samples())
				}
			})
		}
	}
}

// TestRegionReadRefusals: a record refused in an indexed read names the
// region and position (no line number); the header is checked as in a
// whole read; a file that is not BGZF cannot be read by region.
func TestRegionReadRefusals(t *testing.T) {
	header := "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\n"
	bad := header + "chr1\t100\t.\tA\tG\t.\t.\t.\tGT\t0/1\nchr1\t200\t.\tAX\tG\t.\t.\t.\tGT\t0/1\n"
	ix := makeIndexed(t, bad)
	idx, err := vcf.ReadIndex(bytes.NewReader(ix.index), 0)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := vcf.NewRegionReader(bytes.NewReader(ix.gz), idx, []vcf.Region{{"chr1", 150, 250}}, vcf.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = rd.Next()
	want := `indexed read of chr1:150-250, at or after chr1:200 (line numbers are not known in an indexed read): REF: "AX" is not a sequence of bases A, C, G, T, N`
	var pe *vcf.ParseError
	if !errors.As(err, &pe) || err.Error() != want || pe.Line != 0 {
		t.Errorf("got %v, want %s", err, want)
	}
	// The region that does not reach the bad record reads cleanly.
	rd, _ = vcf.NewRegionReader(bytes.NewReader(ix.gz), idx, []vcf.Region{{"chr1", 1, 150}}, vcf.Options{})
	if recs := readAll(t, rd); len(recs) != 1 || recs[0].Pos != 100 {
		t.Errorf("got %+v", recs)
	}

	// Header refusals keep their line numbers.
	hb := makeIndexed(t, "##fileformat=VCFv4.2\n##reference=hg19\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\nchr1\t1\t.\tA\tG\t.\t.\t.\tGT\t0/1\n")
	hidx, _ := vcf.ReadIndex(bytes.NewReader(hb.index), 0)
	if _, err := vcf.NewRegionReader(bytes.NewReader(hb.gz), hidx, []vcf.Region{{"chr1", 1, 5}}, vcf.Options{}); err == nil || !strings.HasPrefix(err.Error(), "line 2: ##reference:") {
		t.Errorf("header refusal: %v", err)
	}

	// Plain gzip is not BGZF.
	var plain bytes.Buffer
	zw := gzip.NewWriter(&plain)
	zw.Write([]byte(bad))
	zw.Close()
	if _, err := vcf.NewRegionReader(bytes.NewReader(plain.Bytes()), idx, nil, vcf.Options{}); !errors.Is(err, vcf.ErrIndex) {
		t.Errorf("plain gzip: %v", err)
	}
}

// TestReadIndexRefusals: corrupt, truncated or foreign indexes are errors
// wrapping ErrIndex.
func TestReadIndexRefusals(t *testing.T) {
	ix := makeIndexed(t, synthGVCF(2, []string{"chr1", "chr2"}, 200))
	zr, _ := gzip.NewReader(bytes.NewReader(ix.index))
	raw, _ := io.ReadAll(zr)
	csiFile, err := os.ReadFile(filepath.Join("testdata", "htslib", "blocks.g.vcf.gz.csi"))
	if err != nil {
		t.Fatal(err)
	}
	zr, _ = gzip.NewReader(bytes.NewReader(csiFile))
	rawCSI, _ := io.ReadAll(zr)
	for name, data := range map[string][]byte{
		"empty":             nil,
		"not an index":      []byte("hello, world"),
		"BAM index":         []byte("BAI\x01\x00\x00\x00\x00"),
		"truncated tabix":   raw[:len(raw)/2],
		"truncated csi":     rawCSI[:len(rawCSI)/2],
		"truncated gzip":    ix.index[:len(ix.index)/2],
		"huge ref count":    append([]byte("TBI\x01\xff\xff\xff\x7f"), raw[8:]...),
		"negative ref":      append([]byte("TBI\x01\xff\xff\xff\xff"), raw[8:]...),
		"tabix of a BED":    append([]byte("TBI\x01\x02\x00\x00\x00\x00\x00\x00\x00"), raw[12:]...),
		"csi without names": []byte("CSI\x01\x0e\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00"),
	} {
		if _, err := vcf.ReadIndex(bytes.NewReader(data), 0); !errors.Is(err, vcf.ErrIndex) {
			t.Errorf("%s: got %v, want an error wrapping ErrIndex", name, err)
		}
	}
	if _, err := vcf.ReadIndex(bytes.NewReader(raw), 0); err != nil {
		t.Errorf("uncompressed tabix: %v", err)
	}
	if _, err := vcf.ReadIndex(bytes.NewReader(rawCSI), 0); err != nil {
		t.Errorf("uncompressed csi: %v", err)
	}
	if _, err := vcf.ReadIndex(bytes.NewReader(ix.index), 100); !errors.Is(err, vcf.ErrIndex) {
		t.Errorf("size limit: %v", err)
	}
}

func TestMergeRegions(t *testing.T) {
	got := vcf.MergeRegions([]vcf.Region{{"10", 50, 60}, {"chr1", 5, 9}, {"chr10", 61, 70}, {"chr1", 1, 4}, {"chr1", 20, 10}, {"chr2", 8, 8}, {"chr10", 1, 2}})
	want := []vcf.Region{{"chr1", 1, 9}, {"chr10", 1, 2}, {"chr10", 50, 70}, {"chr2", 8, 8}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}

// FuzzReadIndex: no input makes the index reader panic or allocate beyond
// its input; whatever it accepts can be queried.
func FuzzReadIndex(f *testing.F) {
	ix := makeIndexed(f, synthGVCF(5, []string{"chr1", "chr10"}, 100))
	for _, data := range [][]byte{ix.index, mustRead(f, "blocks.g.vcf.gz.tbi"), mustRead(f, "blocks.g.vcf.gz.csi")} {
		zr, _ := gzip.NewReader(bytes.NewReader(data))
		raw, _ := io.ReadAll(zr)
		f.Add(raw)
	}
	f.Add([]byte("TBI\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		idx, err := vcf.ReadIndexNoRecover(data)
		if err != nil {
			return
		}
		for _, c := range idx.Contigs() {
			idx.ChunksFor(c, 1, 1<<20)
			idx.ChunksFor(c, 1<<28, 1<<29)
		}
	})
}

// FuzzRegionRead: a damaged BGZF file read through a good index is refused
// or read, never a panic or a hang.
func FuzzRegionRead(f *testing.F) {
	ix := makeIndexed(f, synthGVCF(9, []string{"chr1", "chr2"}, 400))
	idx, err := vcf.ReadIndex(bytes.NewReader(ix.index), 0)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ix.gz, uint32(0), byte(0))
	f.Add(ix.gz, uint32(len(ix.gz)/2), byte(0xff))
	f.Add(ix.gz, uint32(30), byte(1))
	regions := []vcf.Region{{"chr1", 1000, 40000}, {"chr2", 1, 1 << 20}}
	f.Fuzz(func(t *testing.T, data []byte, at uint32, xor byte) {
		data = bytes.Clone(data)
		if len(data) > 0 {
			data[int(at)%len(data)] ^= xor
		}
		rd, err := vcf.NewRegionReader(bytes.NewReader(data), idx, regions, vcf.Options{MaxBytes: 1 << 24})
		if err != nil {
			return
		}
		for range 100000 {
			if _, err := rd.Next(); err != nil {
				return
			}
		}
		t.Fatal("no end after 100000 records")
	})
}

func mustRead(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "htslib", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
