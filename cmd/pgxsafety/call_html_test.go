package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/engine/report/reporttest"
)

// TestCallHTML: "pgxsafety call --format html" writes one report for the
// two samples of PharmCAT's multisample.vcf.bgz: a section per sample, the
// second on a new page, each saying it was produced offline and not
// audited, then the run record with the file's SHA-256; the document is
// self-contained and its genes in review show their reasons.
func TestCallHTML(t *testing.T) {
	path := filepath.Join(datapacktest.PharmCATTestVCFs(t), "org", "pharmgkb", "pharmcat", "multisample.vcf.bgz")
	input, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(input)
	out := filepath.Join(t.TempDir(), "report.html")
	if _, stderr, err := runArgs(t, "call", path, "--format", "html", "--drug", "clopidogrel", "--out", out); err != nil {
		t.Fatalf("call: %v\n%s", err, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	reporttest.CheckSelfContained(t, doc)
	for i, s := range []string{"Sample_1", "Sample_2"} {
		sec, ok := reporttest.Section(doc, s)
		if !ok {
			t.Fatalf("no section for %s", s)
		}
		if newPage := strings.HasPrefix(sec, `<section class="sample newpage"`); newPage != (i > 0) {
			t.Errorf("%s: starts a new page %v", s, newPage)
		}
		for _, want := range []string{"none: produced offline, not audited", `data-drug="clopidogrel"`, "CYP2C19", "sha256:"} {
			if !strings.Contains(sec, want) {
				t.Errorf("%s: the section lacks %q", s, want)
			}
		}
	}
	if !strings.Contains(doc, hex.EncodeToString(sum[:])) || !strings.Contains(doc, "2 answered of 2 in the file") {
		t.Error("the run record lacks the file's SHA-256 or the counts")
	}
	if !strings.Contains(doc, "FILTER other than PASS") {
		t.Error("the file's warnings are not in the report")
	}
}

// TestReportPrintsInBrowser prints the golden lab report
// (testdata/golden/report_vcf_na12003.html, the GeT-RM genome NA12003
// through POST /pgx/vcf) and PharmCAT's two-sample VCF through "call
// --format html" to PDF with headless Chromium on A4, and checks that
// they printed: a PDF of A4 pages, a sample per page at least plus the run
// record, the sample's name and review box rendered. It saves a PNG of the
// first page as printed (print media, A4 width) in the test's temp dir,
// and at PGXSAFETY_REPORT_SCREENSHOT when set (docs/report.png is made
// so). Without Chromium it skips, except in CI, where it fails.
func TestReportPrintsInBrowser(t *testing.T) {
	path := chromium()
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("Chromium is not installed (CI must install Debian's chromium: see .ci/run)")
		}
		t.Skip("no Chromium found (apt-get install chromium); skipped outside CI")
	}
	golden, err := filepath.Abs(filepath.Join("..", "..", "testdata", "golden", "report_vcf_na12003.html"))
	if err != nil {
		t.Fatal(err)
	}
	multi := filepath.Join(t.TempDir(), "multi.html")
	vcf := filepath.Join(datapacktest.PharmCATTestVCFs(t), "org", "pharmgkb", "pharmcat", "multisample.vcf.bgz")
	if _, stderr, err := runArgs(t, "call", vcf, "--format", "html", "--out", multi); err != nil {
		t.Fatalf("call: %v\n%s", err, stderr)
	}

	ctx := headlessChromium(t, path)

	// A4 is 210 x 297 mm: 8.27 x 11.69 in; the report's @page rule sets
	// the size and margins.
	printPDF := func(file string) []byte {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+file), chromedp.WaitVisible(`section.sample`)); err != nil {
			t.Fatalf("open %s: %v", filepath.Base(file), err)
		}
		pdf, err := chromedp.Run(ctx, chromedp.PrintToPDF(chromedp.PDFPaper(chromedp.PaperA4), chromedp.PDFPreferCSSPageSize(), chromedp.PDFPrintBackground()))
		if err != nil {
			t.Fatalf("print %s: %v", filepath.Base(file), err)
		}
		if !strings.HasPrefix(string(pdf), "%PDF-") {
			t.Fatalf("%s: not a PDF", filepath.Base(file))
		}
		return pdf
	}

	pdf := printPDF(golden)
	if os.Getenv("PGXSAFETY_REPORT_PDF") != "" {
		if err := os.WriteFile(os.Getenv("PGXSAFETY_REPORT_PDF"), pdf, 0o644); err != nil {
			t.Error(err)
		}
	}
	pages := pdfPages(t, pdf)
	// One sample whose report runs over pages, then the run record on its
	// own page.
	if pages < 2 || pages > 20 {
		t.Errorf("the golden report printed on %d pages", pages)
	}
	for _, box := range pdfMediaBoxes(pdf) {
		// A4 in points: 595.28 x 841.89 (Chromium rounds).
		if box[0] < 594 || box[0] > 597 || box[1] < 840 || box[1] > 843 {
			t.Errorf("a page of %vx%v points is not A4", box[0], box[1])
		}
	}
	name, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`section.sample td.big`)))
	if err != nil || name != "NA12003" {
		t.Errorf("the sample's name rendered as %q (%v)", name, err)
	}
	box, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`p.reviewbox`)))
	if err != nil || !strings.Contains(box, "CYP2D6") {
		t.Errorf("review box %q (%v)", box, err)
	}

	// The first page as printed: print media at A4 width (96 dpi).
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(794, 1123)); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if len(png) < 8 || string(png[1:4]) != "PNG" {
		t.Fatal("the screenshot is not a PNG")
	}
	shot := filepath.Join(t.TempDir(), "report.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("first page: %s (%d bytes); PDF of %d pages", shot, len(png), pages)
	if extra := os.Getenv("PGXSAFETY_REPORT_SCREENSHOT"); extra != "" {
		if err := os.WriteFile(extra, png, 0o644); err != nil {
			t.Error(err)
		}
	}

	// Two samples: each begins a page, and the run record another.
	if n := pdfPages(t, printPDF(multi)); n < 3 {
		t.Errorf("the two-sample report printed on %d pages, want at least 3 (a page break per sample, then the run record)", n)
	}
}

var (
	pdfPageRE  = regexp.MustCompile(`/Type\s*/Page\b`)
	pdfCountRE = regexp.MustCompile(`/Count\s+(\d+)`)
	pdfBoxRE   = regexp.MustCompile(`/MediaBox\s*\[\s*0\s+0\s+([0-9.]+)\s+([0-9.]+)\s*\]`)
)

// pdfPages counts the page objects of a PDF Chromium wrote (they are not
// compressed), checked against the count of the page tree's root (the
// largest /Count: Chromium writes no outline here).
func pdfPages(t *testing.T, pdf []byte) int {
	t.Helper()
	n := len(pdfPageRE.FindAll(pdf, -1))
	root := 0
	for _, m := range pdfCountRE.FindAllSubmatch(pdf, -1) {
		if c, _ := strconv.Atoi(string(m[1])); c > root {
			root = c
		}
	}
	if root != n {
		t.Errorf("the PDF has %d page objects but its page tree counts %d", n, root)
	}
	if n == 0 {
		t.Fatal("no page in the PDF")
	}
	return n
}

// pdfMediaBoxes returns the width and height of every page's media box.
func pdfMediaBoxes(pdf []byte) [][2]float64 {
	var out [][2]float64
	for _, m := range pdfBoxRE.FindAllSubmatch(pdf, -1) {
		w, _ := strconv.ParseFloat(string(m[1]), 64)
		h, _ := strconv.ParseFloat(string(m[2]), 64)
		out = append(out, [2]float64{w, h})
	}
	return out
}
