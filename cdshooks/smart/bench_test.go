package smart_test

import (
	"io"
	"net/http"
	"testing"
)

// BenchmarkReviewView measures one view of the review page end to end:
// three FHIR reads from the fake EHR over loopback, the FHIR mapping, the
// genotype interpretation and every check, the audit append (SQLite, one
// entry per view) and the HTML rendering.
func BenchmarkReviewView(b *testing.B) {
	a := newApp(b, nil)
	c := browser(b)
	resp, _ := get(b, c, a.launchURL("bench"))
	if resp.StatusCode != 200 {
		b.Fatalf("launch: %d", resp.StatusCode)
	}
	page := resp.Request.URL.String()
	b.ResetTimer()
	for b.Loop() {
		r, err := c.Get(page)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			b.Fatalf("view: %d", r.StatusCode)
		}
	}
}
