package main

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/engine/vcf/vcftest"
)

// TestCallByRegion: a bgzip genome with FILE.tbi beside it is read by
// region, with the same samples' answers as the file read whole (but for
// how records are named), the index's SHA-256 and the bytes read (the
// whole file's SHA-256 with --file-sha256); a stale or corrupt
// .tbi is named on stderr and the file read whole; --index with an
// unreadable file is an error.
func TestCallByRegion(t *testing.T) {
	src := filepath.Join(datapacktest.Path(t, "pgx", "getrm-dev"), "NA12878.g.vcf.gz")
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "NA12878.g.vcf.gz")
	gz, _ := os.Create(path)
	ix, _ := os.Create(path + ".tbi")
	if _, err := vcftest.Write(gz, ix, zr, gzip.DefaultCompression); err != nil {
		t.Fatal(err)
	}
	gz.Close()
	ix.Close()
	data, _ := os.ReadFile(path)
	sum := sha256.Sum256(data)

	call := func(args ...string) (callDoc, string) {
		t.Helper()
		out := filepath.Join(dir, "out.json")
		_, stderr, err := runArgs(t, append([]string{"call", "--out", out}, args...)...)
		if err != nil {
			t.Fatalf("call %v: %v\n%s", args, err, stderr)
		}
		b, _ := os.ReadFile(out)
		var doc callDoc
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		return doc, stderr
	}
	tbi, _ := os.ReadFile(path + ".tbi")
	tbiSum := sha256.Sum256(tbi)
	region, stderr := call(path)
	// By region the whole file is not read, so its SHA-256 is not given;
	// the index's is, with the bytes read.
	rr := region.File.ReadByRegion
	if !strings.Contains(stderr, "read by region through the index") || region.File.SHA256 != "" || rr == nil ||
		rr.Index != "NA12878.g.vcf.gz.tbi" || rr.IndexSHA256 != hex.EncodeToString(tbiSum[:]) || rr.BytesRead <= 0 || rr.BytesRead >= int64(len(data)) {
		t.Errorf("by region: file %+v read by region %+v, stderr:\n%s", region.File, rr, stderr)
	}
	if summed, _ := call(path, "--file-sha256"); summed.File.SHA256 != hex.EncodeToString(sum[:]) || summed.File.ReadByRegion == nil {
		t.Errorf("by region with --file-sha256: file %+v", summed.File)
	}
	os.Rename(path+".tbi", filepath.Join(dir, "elsewhere.tbi"))
	whole, stderr := call(path)
	if whole.File.SHA256 != hex.EncodeToString(sum[:]) || whole.File.ReadByRegion != nil {
		t.Errorf("whole: file %+v", whole.File)
	}
	if strings.Contains(stderr, "read by region") || whole.Records <= region.Records || whole.RecordsUsed != region.RecordsUsed {
		t.Errorf("whole: %d/%d records, by region %d/%d; stderr:\n%s", whole.Records, whole.RecordsUsed, region.Records, region.RecordsUsed, stderr)
	}
	refs := regexp.MustCompile(`line \d+|record chr[0-9XYMT]+:\d+`)
	w, _ := json.Marshal(whole.Samples)
	r, _ := json.Marshal(region.Samples)
	if diff := cmp.Diff(refs.ReplaceAllString(string(w), "RECORD"), refs.ReplaceAllString(string(r), "RECORD")); diff != "" {
		t.Errorf("answers differ (-whole +region):\n%s", diff)
	}
	// --index names it explicitly.
	flagged, stderr := call(path, "--index", filepath.Join(dir, "elsewhere.tbi"))
	if !strings.Contains(stderr, "read by region") || flagged.Records != region.Records {
		t.Errorf("--index: stderr:\n%s", stderr)
	}
	// A .tbi older than the file, or corrupt, is named and the file read whole.
	os.Rename(filepath.Join(dir, "elsewhere.tbi"), path+".tbi")
	old := time.Now().Add(-time.Hour)
	os.Chtimes(path+".tbi", old, old)
	if _, stderr := call(path); !strings.Contains(stderr, "NA12878.g.vcf.gz.tbi is older than the file; the file is read whole") {
		t.Errorf("stale index: stderr:\n%s", stderr)
	}
	os.WriteFile(path+".tbi", []byte("not an index"), 0o644)
	if _, stderr := call(path); !strings.Contains(stderr, "tbi: vcf index: not a tabix (.tbi) or CSI (.csi) index") {
		t.Errorf("corrupt index: stderr:\n%s", stderr)
	}
	if _, stderr, err := runArgs(t, "call", path, "--index", path+".tbi"); err == nil || !strings.Contains(err.Error(), "--index") {
		t.Errorf("--index corrupt: %v\n%s", err, stderr)
	}
}

// TestCallByRegionCSI: htslib's .csi beside the file is used.
func TestCallByRegionCSI(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{"", ".csi"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "engine", "vcf", "testdata", "htslib", "blocks.g.vcf.gz"+ext))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "blocks.g.vcf.gz"+ext), b, 0o644)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(dir, "blocks.g.vcf.gz"), old, old)
	_, stderr, err := runArgs(t, "call", filepath.Join(dir, "blocks.g.vcf.gz"), "--out", filepath.Join(dir, "o.json"))
	if err != nil || !strings.Contains(stderr, "read by region through the index") {
		t.Errorf("%v\n%s", err, stderr)
	}
}
