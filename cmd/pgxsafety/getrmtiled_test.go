package main

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/knowledge"
)

// A multi-sample VCF built from the eight GeT-RM development genomes
// (../shared/data/pgx/getrm-dev: single-sample GATK gVCFs) and tiled to
// any number of samples, for the biobank-scale measurement
// (BenchmarkCallGetRMTiled, docs/workflows.md) and the workflow.
//
// gVCF reference blocks cannot be merged across samples (each sample's
// blocks end elsewhere), so the genomes are genotyped at the allele
// definition positions, as a joint caller's all-sites output would be:
//
//   - every variant record (not a reference block) whose REF span overlaps
//     a definition site is kept, the records of several genomes at one
//     position merged into one (REF the longest, each ALT extended by the
//     rest of it; AD, PL and other per-allele fields dropped, the engine
//     reads GT, GQ, DP, MIN_DP, PGT, PID and PS);
//   - a genome without a record there reads 0/0 (0 on a male's chrX) when its reference
//     blocks cover the whole REF (GQ and MIN_DP the lowest of those
//     blocks), else ./.; a genome whose own variant record overlaps the
//     position reads ./. there (its record is written too);
//   - a definition site where no genome has a variant record is written as
//     a one-site reference block (REF its first base, END its last), 0/0
//     or ./. per genome as above.
//
// Sample j (0-based) of the tiled file is genome j mod 8, named
// GENOME_tN with N = j/8 + 1. TestGetRMTiledSameCalls checks that every
// genome's calls from the tiled file are those of its own gVCF.

// gvcfRecord is one record of a single-sample gVCF.
type gvcfRecord struct {
	pos, end int
	ref      string
	alts     []string
	filter   string
	block    bool
	format   map[string]string
}

// gvcfGenome is one genome's records, by chromosome, in file order.
type gvcfGenome struct {
	name   string
	header []string // the ## lines
	recs   map[string][]gvcfRecord
}

func readGVCF(path string) (*gvcfGenome, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	g := &gvcfGenome{recs: map[string][]gvcfRecord{}}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "##") {
			g.header = append(g.header, line)
			continue
		}
		fields := strings.Split(line, "\t")
		if strings.HasPrefix(line, "#") {
			if len(fields) != 10 {
				return nil, fmt.Errorf("%s: not a single-sample VCF", path)
			}
			g.name = fields[9]
			continue
		}
		pos, err := strconv.Atoi(fields[1])
		if err != nil {
			return nil, fmt.Errorf("%s: POS %q", path, fields[1])
		}
		r := gvcfRecord{pos: pos, ref: fields[3], alts: strings.Split(fields[4], ","), filter: fields[6], format: map[string]string{}}
		r.end = pos + len(r.ref) - 1
		r.block = true
		for _, a := range r.alts {
			if a != "<NON_REF>" && a != "<*>" && a != "." {
				r.block = false
			}
		}
		if r.block {
			for _, kv := range strings.Split(fields[7], ";") {
				if v, ok := strings.CutPrefix(kv, "END="); ok {
					if r.end, err = strconv.Atoi(v); err != nil {
						return nil, fmt.Errorf("%s: END %q", path, v)
					}
				}
			}
		}
		keys, vals := strings.Split(fields[8], ":"), strings.Split(fields[9], ":")
		for i, k := range keys {
			if i < len(vals) {
				r.format[k] = vals[i]
			}
		}
		g.recs[fields[0]] = append(g.recs[fields[0]], r)
	}
	return g, sc.Err()
}

// at returns the genome's variant record starting at pos, whether one of
// its variant records overlaps [pos, end], and the reading of its
// reference blocks over [pos, end]: covered, with the lowest GQ and
// MIN_DP (or DP) of the blocks, and the reference genotype in the blocks'
// ploidy ("0" for a male's chrX, else "0/0").
func (g *gvcfGenome) at(chrom string, pos, end int) (rec *gvcfRecord, overlap, covered bool, gq, dp int, ref string) {
	recs := g.recs[chrom]
	i := sort.Search(len(recs), func(i int) bool { return recs[i].end >= pos-200 })
	next := pos // the first base not yet covered by blocks
	gq, dp, ref = -1, -1, "0/0"
	for ; i < len(recs) && recs[i].pos <= end; i++ {
		r := &recs[i]
		if r.end < pos {
			continue
		}
		if !r.block {
			if r.pos == pos && rec == nil {
				rec = r
			} else {
				overlap = true
			}
			continue
		}
		if r.pos <= next && r.end >= next {
			next = r.end + 1
		}
		if !strings.ContainsAny(r.format["GT"], "/|") {
			ref = "0"
		}
		for _, v := range []struct {
			key string
			min *int
		}{{"GQ", &gq}, {"MIN_DP", &dp}} {
			n, err := strconv.Atoi(r.format[v.key])
			if v.key == "MIN_DP" && err != nil {
				n, err = strconv.Atoi(r.format["DP"])
			}
			if err == nil && (*v.min < 0 || n < *v.min) {
				*v.min = n
			}
		}
	}
	return rec, overlap, next > end, gq, dp, ref
}

// tiledKeys are the FORMAT keys written, in order.
var tiledKeys = []string{"GT", "GQ", "DP", "MIN_DP", "PGT", "PID", "PS"}

// writeGetRMTiled writes the tiled multi-sample VCF (gzip) of n samples.
func writeGetRMTiled(w io.Writer, c *calling.Caller, genomes []*gvcfGenome, n int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintln(bw, "##fileformat=VCFv4.2")
	for _, h := range genomes[0].header {
		if strings.HasPrefix(h, "##FORMAT=") || strings.HasPrefix(h, "##FILTER=") || strings.HasPrefix(h, "##ALT=") ||
			strings.HasPrefix(h, "##INFO=<ID=END,") {
			fmt.Fprintln(bw, h)
		}
	}
	fmt.Fprintln(bw, "##source=pgxsafety GeT-RM development genomes genotyped at the allele-definition positions and tiled (cmd/pgxsafety/getrmtiled_test.go)")
	bw.WriteString("#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT")
	for j := 0; j < n; j++ {
		fmt.Fprintf(bw, "\t%s_t%d", genomes[j%len(genomes)].name, j/len(genomes)+1)
	}
	bw.WriteString("\n")

	// The chromosomes in the definitions' order of first appearance.
	var chroms []string
	for _, gene := range c.DefinitionGenes() {
		if d, ok := c.Definition(gene); ok && !slices.Contains(chroms, d.Chromosome) {
			chroms = append(chroms, d.Chromosome)
		}
	}
	sort.Slice(chroms, func(a, b int) bool { return chromRank(chroms[a]) < chromRank(chroms[b]) })
	cols := make([]string, len(genomes))
	for _, chrom := range chroms {
		sites := c.DefinitionSitesIn(chrom, 0, 1<<31-1)
		// The positions written: every site's, and every variant record's
		// whose REF overlaps a site.
		posSet := map[int]bool{}
		for _, s := range sites {
			posSet[s.Pos] = true
		}
		for _, g := range genomes {
			for _, r := range g.recs[chrom] {
				if !r.block && len(c.DefinitionSitesIn(chrom, r.pos, r.end)) > 0 {
					posSet[r.pos] = true
				}
			}
		}
		positions := make([]int, 0, len(posSet))
		for p := range posSet {
			positions = append(positions, p)
		}
		sort.Ints(positions)
		siteAt := map[int]calling.DefinitionSite{}
		for _, s := range sites {
			siteAt[s.Pos] = s
		}
		for _, pos := range positions {
			// The genomes' variant records at pos, merged.
			ref, filter := "", ""
			recs := make([]*gvcfRecord, len(genomes))
			for i, g := range genomes {
				r, _, _, _, _, _ := g.at(chrom, pos, pos)
				recs[i] = r
				if r != nil {
					if len(r.ref) > len(ref) {
						ref = r.ref
					}
					if filter == "" || r.filter != "PASS" && r.filter != "." {
						filter = r.filter
					}
				}
			}
			var alts []string
			block := ref == ""
			if block {
				s := siteAt[pos]
				ref, filter, alts = s.Ref, ".", []string{"<NON_REF>"}
			}
			for i, g := range genomes {
				r := recs[i]
				if r == nil {
					end := pos + len(ref) - 1
					_, overlap, covered, gq, dp, refGT := g.at(chrom, pos, end)
					cols[i] = "./.:.:.:.:.:.:."
					if covered && !overlap {
						cols[i] = fmt.Sprintf("%s:%s:%s:%s:.:.:.", refGT, orDot(gq), orDot(dp), orDot(dp))
					}
					continue
				}
				if !strings.HasPrefix(ref, r.ref) {
					return fmt.Errorf("%s:%d: REF %s of %s is not a prefix of %s", chrom, pos, r.ref, g.name, ref)
				}
				index := []int{0}
				for _, a := range r.alts {
					if !strings.HasPrefix(a, "<") && a != "*" {
						a += ref[len(r.ref):]
					}
					k := slices.Index(alts, a)
					if k < 0 {
						alts = append(alts, a)
						k = len(alts) - 1
					}
					index = append(index, k+1)
				}
				gt := remapGT(r.format["GT"], index)
				vals := []string{gt}
				for _, k := range tiledKeys[1:] {
					v := r.format[k]
					if v == "" {
						v = "."
					}
					vals = append(vals, v)
				}
				cols[i] = strings.Join(vals, ":")
			}
			info := "."
			writeRef := ref
			if block {
				info = "END=" + strconv.Itoa(pos+len(ref)-1)
				writeRef = ref[:1]
			}
			fmt.Fprintf(bw, "%s\t%d\t.\t%s\t%s\t.\t%s\t%s\t%s", chrom, pos, writeRef, strings.Join(alts, ","), filter, info, strings.Join(tiledKeys, ":"))
			for j := 0; j < n; j++ {
				bw.WriteByte('\t')
				bw.WriteString(cols[j%len(cols)])
			}
			bw.WriteByte('\n')
		}
	}
	return bw.Flush()
}

func orDot(n int) string {
	if n < 0 {
		return "."
	}
	return strconv.Itoa(n)
}

// remapGT rewrites a GT's allele indexes through index.
func remapGT(gt string, index []int) string {
	var b strings.Builder
	num := ""
	flush := func() {
		if num == "" {
			return
		}
		if k, err := strconv.Atoi(num); err == nil && k < len(index) {
			b.WriteString(strconv.Itoa(index[k]))
		} else {
			b.WriteString(num)
		}
		num = ""
	}
	for _, r := range gt {
		if r >= '0' && r <= '9' {
			num += string(r)
			continue
		}
		flush()
		b.WriteRune(r)
	}
	flush()
	return b.String()
}

// chromRank orders chr1…chr22, chrX, chrY, chrM.
func chromRank(c string) int {
	s := strings.TrimPrefix(c, "chr")
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return map[string]int{"X": 23, "Y": 24, "M": 25, "MT": 25}[s] + 100
}

// buildGetRMTiled writes the tiled file of n samples to path.
func buildGetRMTiled(tb testing.TB, path string, n int) {
	tb.Helper()
	dir := datapacktest.Path(tb, "pgx", "getrm-dev")
	files, err := filepath.Glob(filepath.Join(dir, "*.g.vcf.gz"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no GeT-RM genomes in %s: %v", dir, err)
	}
	sort.Strings(files)
	var genomes []*gvcfGenome
	for _, f := range files {
		g, err := readGVCF(f)
		if err != nil {
			tb.Fatal(err)
		}
		genomes = append(genomes, g)
	}
	base, err := knowledge.LoadBase()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(out, gzip.BestSpeed)
	if err := writeGetRMTiled(zw, base.Evaluator.Caller(), genomes, n); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
}

// TestGetRMTiledSameCalls: every genome's calls from a tiled file of 16
// samples (each genome twice) are those of its own gVCF: the same
// diplotypes, phenotypes, activity scores, interpretation, missing
// positions and untested alleles, gene by gene (the notes differ: they
// name the lines of another file).
func TestGetRMTiledSameCalls(t *testing.T) {
	dir := datapacktest.Path(t, "pgx", "getrm-dev")
	tiled := filepath.Join(t.TempDir(), "getrm-16.vcf.gz")
	buildGetRMTiled(t, tiled, 16)
	out, stderr, err := runArgs(t, "call", tiled, "--format", "tsv")
	if err != nil {
		t.Fatalf("call tiled: %v\n%s", err, stderr)
	}
	compared := []string{"Gene", "Source Diplotype", "Phenotype", "Activity Score", "Missing positions", "Interpretation", "Positions Not Called", "Untested Alleles"}
	byGenome := tableBySample(t, out, compared)
	if len(byGenome) != 16 {
		t.Fatalf("%d samples in the tiled answer, want 16", len(byGenome))
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.g.vcf.gz"))
	for _, f := range files {
		one, stderr, err := runArgs(t, "call", f, "--format", "tsv")
		if err != nil {
			t.Fatalf("call %s: %v\n%s", f, err, stderr)
		}
		for name, want := range tableBySample(t, one, compared) {
			for _, tile := range []string{name + "_t1", name + "_t2"} {
				got := byGenome[tile]
				if len(got) != len(want) {
					t.Errorf("%s: %d genes, its gVCF %d", tile, len(got), len(want))
					continue
				}
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("%s differs from its gVCF:\n tiled: %s\n gVCF:  %s", tile, got[i], want[i])
					}
				}
			}
		}
	}
}

// tableBySample reads a calls table: per sample, one line per gene of the
// columns cols.
func tableBySample(t *testing.T, table string, cols []string) map[string][]string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	header := strings.Split(lines[0], "\t")
	var at []int
	for _, c := range cols {
		i := slices.Index(header, c)
		if i < 0 {
			t.Fatalf("no column %q", c)
		}
		at = append(at, i)
	}
	out := map[string][]string{}
	for _, l := range lines[1:] {
		cells := strings.Split(l, "\t")
		var picked []string
		for _, i := range at {
			picked = append(picked, cells[i])
		}
		out[cells[0]] = append(out[cells[0]], strings.Join(picked, " | "))
	}
	return out
}

// BenchmarkCallGetRMTiled runs "pgxsafety call --format tsv" on the
// GeT-RM genomes tiled to PGXSAFETY_BENCH_TILED_SAMPLES samples (default
// 1,000), built in a temporary directory, or kept in
// PGXSAFETY_BENCH_TILED_DIR (getrm-tiled-N.vcf.gz, reused when present)
// for the measurement of docs/workflows.md with the binary.
// PGXSAFETY_BENCH_TILED_PER_PASS sets --samples-per-pass.
func BenchmarkCallGetRMTiled(b *testing.B) {
	n := 1000
	if v := os.Getenv("PGXSAFETY_BENCH_TILED_SAMPLES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("PGXSAFETY_BENCH_TILED_SAMPLES=%q: want a number of at least 1", v)
		}
	}
	dir := os.Getenv("PGXSAFETY_BENCH_TILED_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	path := filepath.Join(dir, fmt.Sprintf("getrm-tiled-%d.vcf.gz", n))
	if _, err := os.Stat(path); err != nil {
		buildGetRMTiled(b, path, n)
	}
	args := []string{"call", path, "--format", "tsv", "--out", filepath.Join(b.TempDir(), "calls.tsv")}
	if v := os.Getenv("PGXSAFETY_BENCH_TILED_PER_PASS"); v != "" {
		args = append(args, "--samples-per-pass", v)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, stderr, err := runArgs(b, args...); err != nil {
			b.Fatalf("call: %v\n%s", err, stderr)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "samples/s")
}
