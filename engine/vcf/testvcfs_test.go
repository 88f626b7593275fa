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

	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
)

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

// TestPharmCATTestVCFs reads every PharmCAT test VCF: each reads to the end
// without error, or gives exactly its documented refusal.
func TestPharmCATTestVCFs(t *testing.T) {
	dir := datapacktest.PharmCATTestVCFs(t)
	files := testVCFFiles(t, dir)
	if len(files) < 150 {
		t.Fatalf("found %d test VCFs under %s; expected the whole PharmCAT set (155)", len(files), dir)
	}
	refusedFiles := datapacktest.PharmCATRefused(t)
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
	dir := datapacktest.PharmCATTestVCFs(t)
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
