package pgxapi_test

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// TestAPIDocsPage: GET /docs, through the real router and middleware, is
// an HTML page of every operation and every schema of /openapi.json, with
// no script and no resource from elsewhere; its Content-Security-Policy
// allows exactly its inline style sheet; every in-page link resolves.
func TestAPIDocsPage(t *testing.T) {
	fs := newFullServer(t)
	h := httpx.Chain(fs.router, httpx.Options{})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/docs", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /docs: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	page := rec.Body.String()
	style := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindStringSubmatch(page)
	if style == nil {
		t.Fatal("no style sheet")
	}
	sum := sha256.Sum256([]byte(style[1]))
	csp := rec.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "style-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") ||
		strings.Contains(csp, "script-src") {
		t.Errorf("CSP %q does not allow exactly the page's style sheet", csp)
	}
	for _, bad := range []string{"<script", " src=", "style=", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		switch href := m[1]; {
		case href == "/openapi.json":
		case strings.HasPrefix(href, "#"):
			if !strings.Contains(page, `id="`+href[1:]+`"`) {
				t.Errorf("link %s leads nowhere", href)
			}
		default:
			t.Errorf("link %q leaves the page", href)
		}
	}
	doc := openAPIDoc(t, fs)
	ops := 0
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			id := op.(map[string]any)["operationId"].(string)
			ops++
			if !strings.Contains(page, `id="op-`+id+`"`) {
				t.Errorf("%s %s (%s) is not on the page", strings.ToUpper(method), path, id)
			}
		}
	}
	for name := range doc["components"].(map[string]any)["schemas"].(map[string]any) {
		if !strings.Contains(page, `id="schema-`+name+`"`) {
			t.Errorf("schema %s is not on the page", name)
		}
	}
	if ops < 30 {
		t.Errorf("only %d operations documented", ops)
	}
	// Text from the document is escaped, not markup: the check's
	// CheckRequest description names <OpenID Connect ID token>.
	if !strings.Contains(page, "&lt;OpenID Connect ID token&gt;") {
		t.Error("the document's text is not shown escaped")
	}
}
