package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func write(t *testing.T, name, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadA2M maps query positions to match states (a lower-case query
// residue is an insert: −1) and keeps only match states of every row.
func TestReadA2M(t *testing.T) {
	p := write(t, "ali.a2m", ">query\nMKaLV\n>hit1 desc\nM-LV\n>hit2\nMKxxLA\n")
	rows, qmap, err := readA2M(p, "MKALV")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{0, 1, -1, 2, 3}, qmap); diff != "" {
		t.Errorf("query map (-want +got):\n%s", diff)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.name+":"+string(r.match))
	}
	if diff := cmp.Diff([]string{"query:MKLV", "hit1:M-LV", "hit2:MKLA"}, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if _, _, err := readA2M(write(t, "bad.a2m", ">query\nMK\n>h\nM\n"), "MK"); err == nil {
		t.Error("a row with fewer match states was accepted")
	}
	if _, _, err := readA2M(write(t, "bad2.a2m", ">query\nMK\n"), "MKA"); err == nil {
		t.Error("a first row that is not the whole query was accepted")
	}
}

// TestReadStockholm reads names in file order and unaligned, upper-case
// sequences over interleaved blocks.
func TestReadStockholm(t *testing.T) {
	p := write(t, "a.sto", "# STOCKHOLM 1.0\n#=GS a/1-4 DE x\n\na/1-4 MK-a\nb/2-3 .K-.\n#=GC RF xx.x\n\na/1-4 LV\nb/2-3 L-\n//\n")
	names, seqs, err := readStockholm(p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a/1-4", "b/2-3"}, names); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff([]string{"MKALV", "KL"}, seqs); diff != "" {
		t.Error(diff)
	}
}

// TestWeights: identical rows share their weight; two fragments of
// different regions are not similar because they share gaps.
func TestWeights(t *testing.T) {
	rows := [][]byte{
		[]byte("ACDEFGHIKL"),
		[]byte("ACDEFGHIKL"),
		[]byte("ACDEFGHIKM"), // 90% identical to the first two
		[]byte("AC--------"),
		[]byte("--------KL"),
		[]byte("WWWWWWWWWW"),
	}
	got := weights(rows)
	want := []float64{1.0 / 3, 1.0 / 3, 1.0 / 3, 1, 1, 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("weights (-want +got):\n%s", diff)
	}
}

func TestReleaseName(t *testing.T) {
	if got := releaseName("201401\n"); got != "2014_01" {
		t.Errorf("releaseName = %q", got)
	}
}
