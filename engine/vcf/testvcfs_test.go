package vcf

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// PharmCATTestVCFs returns the folder of PharmCAT's test VCFs in the shared
// data pack (PGXSAFETY_DATA_PACK, or ../shared/data beside the repository).
// When it is absent the test fails under CI=true and skips otherwise.
func pharmcatTestVCFs(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("PGXSAFETY_DATA_PACK")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "data")
	}
	dir = filepath.Join(dir, "pgx", "pharmcat", "test-vcfs")
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("PharmCAT test VCFs not found at %s (%v); CI must have the data pack (PGXSAFETY_DATA_PACK)", dir, err)
		}
		tb.Skipf("PharmCAT test VCFs not found at %s (%v); set PGXSAFETY_DATA_PACK to run this test", dir, err)
	}
	return dir
}

// testVCFFiles lists every .vcf and .vcf.bgz file under dir, relative to it.
func testVCFFiles(tb testing.TB, dir string) []string {
	tb.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".vcf") || strings.HasSuffix(path, ".vcf.bgz")) {
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// pharmcatRefused reads testdata/vcf/pharmcat-refused.tsv: the PharmCAT
// test VCFs the reader refuses, each with its exact refusal and why.
func pharmcatRefused(tb testing.TB) map[string]string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vcf", "pharmcat-refused.tsv"))
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]string{}
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "file\t") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 || f[2] == "" {
			tb.Fatalf("pharmcat-refused.tsv line %d: want file, error and why", i+1)
		}
		out[f[0]] = f[1]
	}
	return out
}

// TestPharmCATTestVCFs reads every PharmCAT test VCF: each reads to the end
// without error, or gives exactly its documented refusal.
func TestPharmCATTestVCFs(t *testing.T) {
	dir := pharmcatTestVCFs(t)
	files := testVCFFiles(t, dir)
	if len(files) < 150 {
		t.Fatalf("found %d test VCFs under %s; expected the whole PharmCAT set (155)", len(files), dir)
	}
	refusedFiles := pharmcatRefused(t)
	seen := map[string]bool{}
	records := 0
	for _, name := range files {
		seen[name] = true
		n, err := readFile(filepath.Join(dir, name), Options{})
		records += n
		want, refused := refusedFiles[name]
		switch {
		case refused && err == nil:
			t.Errorf("%s: read without error, but it is listed as refused (%s)", name, want)
		case refused && err.Error() != want:
			t.Errorf("%s: refused with %q, want %q", name, err, want)
		case !refused && err != nil:
			t.Errorf("%s: %v", name, err)
		}
	}
	for name := range refusedFiles {
		if !seen[name] {
			t.Errorf("%s is listed as refused but is not in the test set", name)
		}
	}
	t.Logf("%d files, %d records, %d refused", len(files), records, len(refusedFiles))
}

// TestPharmCATTestVCFsUnsorted reads the test VCFs with AllowUnsorted, as a
// test of PharmCAT's cases may: only the bad-allele file is refused then.
func TestPharmCATTestVCFsUnsorted(t *testing.T) {
	dir := pharmcatTestVCFs(t)
	for _, name := range testVCFFiles(t, dir) {
		_, err := readFile(filepath.Join(dir, name), Options{AllowUnsorted: true})
		if name == "org/pharmgkb/pharmcat/haplotype/VcfReaderTest-badAllele.vcf" {
			if err == nil {
				t.Errorf("%s: read without error", name)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// readFile reads a whole VCF and checks the invariants of every record.
func readFile(path string, opt Options) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r, err := NewReader(f, opt)
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if len(rec.Calls) != len(r.Samples()) {
			return n, errors.New("a record's calls do not match the samples")
		}
		n++
	}
}
