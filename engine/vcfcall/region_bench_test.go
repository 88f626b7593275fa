package vcfcall_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/engine/vcf"
	"github.com/pgxsafety/pgxsafety/engine/vcf/vcftest"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

// grch38 are the GRCh38 lengths of the primary chromosomes.
var grch38 = []struct {
	name string
	len  int
}{
	{"chr1", 248956422}, {"chr2", 242193529}, {"chr3", 198295559}, {"chr4", 190214555}, {"chr5", 181538259},
	{"chr6", 170805979}, {"chr7", 159345973}, {"chr8", 145138636}, {"chr9", 138394717}, {"chr10", 133797422},
	{"chr11", 135086622}, {"chr12", 133275309}, {"chr13", 114364328}, {"chr14", 107043718}, {"chr15", 101991189},
	{"chr16", 90338345}, {"chr17", 83257441}, {"chr18", 80373285}, {"chr19", 58617616}, {"chr20", 64444167},
	{"chr21", 46709983}, {"chr22", 50818468}, {"chrX", 156040895}, {"chrY", 57227415},
}

// writeSyntheticGenome writes a single-sample whole-genome gVCF of about
// lines records, as GATK HaplotypeCaller -ERC GVCF writes them: reference
// blocks (END, MIN_DP) alternating with variant records carrying the
// usual INFO and FORMAT fields, spread over the primary chromosomes in
// proportion to their length. A record at an allele-definition position
// gets its GRCh38 base as REF (refAt), as a GRCh38 file has.
func writeSyntheticGenome(w io.Writer, lines int, refAt func(chrom string, pos int) (string, string, bool)) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString("##fileformat=VCFv4.2\n##reference=GRCh38\n")
	bw.WriteString("##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">\n")
	total := 0
	for _, c := range grch38 {
		fmt.Fprintf(bw, "##contig=<ID=%s,length=%d>\n", c.name, c.len)
		total += c.len
	}
	bw.WriteString("#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tSYNTH\n")
	step := max(total/max(lines, 1)*2, 8) // one block and one variant per step, on average
	bases := "ACGT"
	rng := rand.New(rand.NewPCG(1, 2))
	n := 0
	for _, c := range grch38 {
		for pos := 10001; pos+2*step < c.len-10000; {
			end := pos + 1 + rng.IntN(2*step-4)
			dp := 10 + rng.IntN(50)
			blockRef := bases[rng.IntN(4)]
			if r, _, ok := refAt(c.name, pos); ok && len(r) == 1 && strings.Contains(bases, r) {
				blockRef = r[0]
			}
			fmt.Fprintf(bw, "%s\t%d\t.\t%c\t<NON_REF>\t.\t.\tEND=%d\tGT:DP:GQ:MIN_DP:PL\t0/0:%d:%d:%d:0,%d,%d\n",
				c.name, pos, blockRef, end, dp, rng.IntN(99), dp-rng.IntN(10), rng.IntN(120), rng.IntN(1800))
			ref := rng.IntN(4)
			if r, _, ok := refAt(c.name, end+1); ok && len(r) == 1 && strings.Contains(bases, r) {
				ref = strings.Index(bases, r)
			}
			ad := rng.IntN(dp)
			fmt.Fprintf(bw, "%s\t%d\t.\t%c\t%c,<NON_REF>\t%d.%02d\t.\tBaseQRankSum=%.3f;DP=%d;ExcessHet=3.0103;MLEAC=1,0;MLEAF=0.5,0;RAW_MQandDP=%d,%d\tGT:AD:DP:GQ:PL:SB\t0/1:%d,%d,0:%d:%d:%d,0,%d,%d,%d,%d:%d,%d,%d,%d\n",
				c.name, end+1, bases[ref], bases[(ref+1+rng.IntN(3))%4], rng.IntN(2000), rng.IntN(100), rng.Float64()*4-2, dp, dp*3600, dp,
				ad, dp-ad, dp, rng.IntN(99), rng.IntN(2000), rng.IntN(2000), rng.IntN(2000), rng.IntN(2000), rng.IntN(3000),
				rng.IntN(20), rng.IntN(20), rng.IntN(20), rng.IntN(20))
			n += 2
			pos = end + 2
		}
	}
	return bw.Flush()
}

// syntheticGenome writes the genome BGZF-compressed with its .tbi into
// dir (or PGXSAFETY_BENCH_GENOME_DIR, where it is kept);
// PGXSAFETY_BENCH_GENOME_LINES sets its size (default 300,000 records; the
// figures in docs/performance.md use 6,000,000). Values vary at random, so
// it compresses about as a real gVCF does, not 20 times.
func syntheticGenome(b *testing.B, dir string, refAt func(chrom string, pos int) (string, string, bool)) (path string, idx *vcf.Index, st vcftest.Stats) {
	lines := 300_000
	if v := os.Getenv("PGXSAFETY_BENCH_GENOME_LINES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1000 {
			b.Fatalf("PGXSAFETY_BENCH_GENOME_LINES=%q: want a number of at least 1000", v)
		}
		lines = n
	}
	if keep := os.Getenv("PGXSAFETY_BENCH_GENOME_DIR"); keep != "" {
		dir = keep // kept for timing pgxsafety call on it
	}
	path = filepath.Join(dir, "genome.g.vcf.gz")
	gz, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	ix, err := os.Create(path + ".tbi")
	if err != nil {
		b.Fatal(err)
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeSyntheticGenome(pw, lines, refAt)) }()
	st, err = vcftest.Write(gz, ix, pr, gzip.DefaultCompression)
	if err != nil {
		b.Fatal(err)
	}
	gz.Close()
	ix.Close()
	f, err := os.Open(path + ".tbi")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	idx, err = vcf.ReadIndex(f, 0)
	if err != nil {
		b.Fatal(err)
	}
	return path, idx, st
}

// peakRSSMB is the process's peak resident set (VmHWM) in MB.
func peakRSSMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}

// BenchmarkWholeGenome calls every gene of a synthetic whole-genome gVCF
// (see syntheticGenome for its size), read by region through its tabix
// index and streamed whole. Reported: ns/op (one call of every gene),
// MB/s of the compressed file, the bytes read from it, and the process's
// peak RSS after the sub-benchmark (region runs first, so its figure is
// not raised by the stream's).
func BenchmarkWholeGenome(b *testing.B) {
	kb := loadKB(b)
	path, idx, st := syntheticGenome(b, b.TempDir(), kb.Caller().DefinitionRef)
	b.Logf("synthetic genome: %d records, %.0f MB decompressed, %.0f MB BGZF, index %.0f KB", st.Records,
		float64(st.Decompressed)/1e6, float64(st.Compressed)/1e6, float64(st.IndexBytes)/1e3)
	for _, mode := range []string{"region", "stream"} {
		b.Run(mode, func(b *testing.B) {
			opt := vcfcall.Options{}
			if mode == "region" {
				opt.Index = idx
			}
			var read int64
			opt.Progress = func(p vcfcall.Progress) { read = p.FileBytes }
			b.SetBytes(st.Compressed)
			for b.Loop() {
				var stats vcfcall.Stats
				var err error
				stats, err = vcfcall.Run(context.Background(), kb, func() (io.ReadCloser, error) { return os.Open(path) }, opt, func(*vcfcall.Chunk) error { return nil })
				if err != nil {
					b.Fatal(err)
				}
				if stats.ReadByRegion != (mode == "region") {
					b.Fatalf("read by region %v: %s", stats.ReadByRegion, stats.IndexNote)
				}
			}
			b.ReportMetric(float64(read)/1e6, "MB_read/op")
			b.ReportMetric(peakRSSMB(), "peak_RSS_MB")
		})
	}
}

// BenchmarkPGxRegionGVCF calls every gene of one GeT-RM development genome
// (a PGx-region gVCF: about 3 MB of VCF text, 0.45 MB gzip), streamed as
// shipped (plain gzip) and, re-compressed into BGZF with a .tbi, by region.
func BenchmarkPGxRegionGVCF(b *testing.B) {
	kb := loadKB(b)
	src := filepath.Join(datapacktest.Path(b, "pgx", "getrm-dev"), "NA12878.g.vcf.gz")
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	gz, idx := bgzipWithIndex(b, data)
	for _, mode := range []string{"stream-gzip", "region-bgzf"} {
		b.Run(mode, func(b *testing.B) {
			in, opt := data, vcfcall.Options{}
			if mode == "region-bgzf" {
				in, opt.Index = gz, idx
			}
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				_, err := vcfcall.Run(context.Background(), kb, func() (io.ReadCloser, error) { return seekFile{bytes.NewReader(in)}, nil }, opt, func(*vcfcall.Chunk) error { return nil })
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(peakRSSMB(), "peak_RSS_MB")
		})
	}
}
