// Package outsidetest writes the smallest output of each CYP2D6 caller
// that engine/outside reads, in the layout each tool documents (the
// readers' tests cite the pages), for tests that hand a known call to a
// surface. It is imported only by _test.go files.
package outsidetest

import (
	"archive/zip"
	"bytes"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/outside"
)

// CYP2D6Formats are the formats CYP2D6 writes, in a fixed order.
var CYP2D6Formats = []string{outside.FormatPharmCAT, outside.FormatCyrius, outside.FormatAldy, outside.FormatStellarPGx, outside.FormatPyPGx}

// CYP2D6 is a passing call of diplotype for sample in format.
func CYP2D6(tb testing.TB, format, sample, diplotype string) []byte {
	tb.Helper()
	switch format {
	case outside.FormatPharmCAT:
		// PharmCAT outside-call TSV: gene, diplotype (no sample column).
		return []byte("CYP2D6\t" + diplotype + "\n")
	case outside.FormatCyrius:
		return []byte("Sample\tGenotype\tFilter\n" + sample + "\t" + diplotype + "\tPASS\n")
	case outside.FormatAldy:
		return []byte("#Sample\tGene\tSolutionID\tMajor\tMinor\tCopy\tAllele\tLocation\tType\tCoverage\tEffect\tdbSNP\tCode\tStatus\n" +
			"#Solution 1: x\n" + sample + "\tCYP2D6\t1\t" + diplotype + "\tx\t0\tx\n")
	case outside.FormatStellarPGx:
		return []byte("CYP2D6 Star Allele Calling with StellarPGx\n\nResult:\n" + diplotype + "\n")
	case outside.FormatPyPGx:
		return PyPGxArchive(tb, "Gene=CYP2D6\nAssembly=GRCh38\nSemanticType=SampleTable[Results]\n",
			"\tGenotype\tPhenotype\tHaplotype1\tHaplotype2\tAlternativePhase\tVariantData\tCNV\n"+
				sample+"\t"+diplotype+"\tx\t;\t;\t;\t;\tx\n")
	}
	tb.Fatalf("outsidetest: no CYP2D6 format %q", format)
	return nil
}

// PyPGxArchive is a PyPGx results.zip holding metadata and table.
func PyPGxArchive(tb testing.TB, metadata, table string) []byte {
	tb.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, f := range []struct{ name, body string }{{"tmpdir/metadata.txt", metadata}, {"tmpdir/data.tsv", table}} {
		w, err := zw.Create(f.name)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write([]byte(f.body)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}
