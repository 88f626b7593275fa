package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/cdshooks/smart"
	"github.com/pgxsafety/pgxsafety/cdshooks/smart/smarttest"
)

// smartEnv is the real server (configured from the environment as serve
// is) with the SMART app registered with a fake EHR, listening on
// loopback.
type smartEnv struct {
	ehr    *smarttest.EHR
	srv    *httptest.Server
	public string
	s      *server
}

// newSMARTEnv starts a fake EHR and the real server; with register false
// no EHR is registered (PGXSAFETY_SMART_EHRS unset).
func newSMARTEnv(t *testing.T, register bool) *smartEnv {
	t.Helper()
	clearEnv(t)
	ehr := smarttest.New()
	t.Cleanup(ehr.Close)
	ehr.Patient = "CGPatientExample01"
	ehr.Resources = smarttest.Fixture(ehr.Patient)
	e := &smartEnv{ehr: ehr}
	e.srv = httptest.NewUnstartedServer(nil)
	e.public = "http://" + e.srv.Listener.Addr().String()
	ehr.RedirectURI = e.public + smart.PathCallback
	dir := t.TempDir()
	t.Setenv("PGXSAFETY_PUBLIC_URL", e.public)
	t.Setenv("PGXSAFETY_CDS_DEV_UNAUTHENTICATED", "true")
	if register {
		reg, _ := json.Marshal([]map[string]string{{"name": "Fake EHR", "iss": ehr.ISS(), "client_id": ehr.ClientID, "client_type": "public"}})
		f := filepath.Join(dir, "ehrs.json")
		if err := os.WriteFile(f, reg, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PGXSAFETY_SMART_EHRS", f)
	}
	cfg, err := loadServeConfig([]string{"--addr", "127.0.0.1:0", "--data-dir", dir}, io.Discard)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	e.s, err = newServer(context.Background(), cfg, zap.NewNop(), io.Discard, serverOptions{})
	if err != nil {
		t.Fatalf("newServer: %v", err)
	}
	t.Cleanup(e.s.close)
	e.srv.Config.Handler = e.s.handler
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	return e
}

// cards calls order-select with the clopidogrel / CYP2C19 poor
// metabolizer request.
func (e *smartEnv) cards(t *testing.T) cdshooks.Response {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "testdata", "cds", "requests", "order-select-clopidogrel-cyp2c19-pm.json"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(e.public+"/cds-services/"+cdshooks.ServiceOrderSelect, "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("hook: %d %s", resp.StatusCode, b)
	}
	var out cdshooks.Response
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCardLinksResolve follows every link the CDS cards carry: links to
// this server are requested against the real router (none may answer
// 404; a smart link, launched as an EHR launches it, redirects to the
// EHR's authorization endpoint and completes into the review page), and
// links elsewhere must be absolute https URLs (the machines running the
// tests have no internet to fetch them).
func TestCardLinksResolve(t *testing.T) {
	e := newSMARTEnv(t, true)
	res := e.cards(t)
	if len(res.Cards) == 0 {
		t.Fatal("no cards")
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	smartLinks, followed := 0, 0
	for _, c := range res.Cards {
		urls := []string{}
		if c.Source.URL != "" {
			urls = append(urls, c.Source.URL)
		}
		for _, l := range c.Links {
			urls = append(urls, l.URL)
			if l.Type == "smart" {
				smartLinks++
				if l.URL != e.public+smart.PathLaunch || l.AppContext == "" {
					t.Errorf("card %s: smart link %q appContext %q", c.UUID, l.URL, l.AppContext)
				}
				// As the EHR launches it: iss and launch appended.
				resp, err := noRedirect.Get(l.URL + "?" + url.Values{"iss": {e.ehr.ISS()}, "launch": {"card-launch"}}.Encode())
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				loc := resp.Header.Get("Location")
				if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, e.ehr.Server.URL+"/auth/authorize?") {
					t.Errorf("smart link launch: %d to %q", resp.StatusCode, loc)
				}
			}
		}
		for _, u := range urls {
			if strings.HasPrefix(u, e.public) {
				resp, err := noRedirect.Get(u)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				followed++
				if resp.StatusCode == http.StatusNotFound || resp.StatusCode >= 500 {
					t.Errorf("card %s: link %s answers %d", c.UUID, u, resp.StatusCode)
				}
				continue
			}
			pu, err := url.Parse(u)
			if err != nil || pu.Scheme != "https" || pu.Host == "" {
				t.Errorf("card %s: link %q is not an absolute https URL", c.UUID, u)
			}
		}
	}
	if smartLinks == 0 || followed == 0 {
		t.Fatalf("no smart link on the cards (%d links followed)", followed)
	}
	// The whole flow from a card: the EHR hands the card's appContext back
	// in the token response, and the review shows the card's drug.
	var link cdshooks.Link
	for _, l := range res.Cards[0].Links {
		if l.Type == "smart" {
			link = l
		}
	}
	e.ehr.AppContext = link.AppContext
	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Jar: jar}).Get(link.URL + "?" + url.Values{"iss": {e.ehr.ISS()}, "launch": {"card-launch"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "Opened from a pgxsafety card about <strong>clopidogrel</strong>") {
		t.Errorf("card launch: %d %s", resp.StatusCode, b)
	}
}

// TestNoSMARTLinksWithoutEHRs: with no EHR registered the app cannot be
// launched, so the cards do not offer it.
func TestNoSMARTLinksWithoutEHRs(t *testing.T) {
	e := newSMARTEnv(t, false)
	for _, c := range e.cards(t).Cards {
		for _, l := range c.Links {
			if l.Type == "smart" {
				t.Errorf("card %s carries a smart link with no EHR registered", c.UUID)
			}
		}
	}
	resp, err := http.Get(e.public + smart.PathIndex)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("index: %d", resp.StatusCode)
	}
}

// headlessChromium starts headless Chromium (at path) for the test, with
// a fresh profile and no background traffic, and returns a browser tab's
// context, ended after 90 s or with the test.
func headlessChromium(t *testing.T, path string, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
	}, extra...)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelA)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancelT)
	return ctx
}

// chromium finds Debian's Chromium (or another Chrome) on PATH.
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestReviewInBrowser is the end-to-end test: headless Chromium goes
// launch → the EHR's authorize → callback → review page, and checks what
// a clinician sees: the critical clopidogrel row, the CYP2C19 phenotype
// and the alternative. It saves a PNG screenshot in the test's temp dir
// (and at PGXSAFETY_E2E_SCREENSHOT when set). Without Chromium it skips,
// except in CI, where it fails.
func TestReviewInBrowser(t *testing.T) {
	path := chromium()
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("Chromium is not installed (CI must install Debian's chromium: see .ci/run)")
		}
		t.Skip("no Chromium found (apt-get install chromium); skipped outside CI")
	}
	e := newSMARTEnv(t, true)
	e.ehr.AppContext = `{"hookInstance":"e2e","cardUuid":"e2e-card","drug":"clopidogrel"}`
	ctx := headlessChromium(t, path, chromedp.WindowSize(1280, 1600))

	launch := e.public + smart.PathLaunch + "?" + url.Values{"iss": {e.ehr.ISS()}, "launch": {"e2e-launch"}}.Encode()
	row := chromedp.CSS(`article[data-drug="clopidogrel"]`)
	if err := chromedp.Do(ctx, chromedp.Navigate(launch), chromedp.WaitVisible(row)); err != nil {
		t.Fatalf("the review page did not show the clopidogrel row: %v (EHR saw %v)", err, e.ehr.Log)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || !strings.HasPrefix(loc, e.public+smart.PathReview) {
		t.Errorf("the browser ended at %q (%v)", loc, err)
	}
	sev, err := chromedp.Run(ctx, chromedp.AttributeValue(row, "data-severity"))
	if err != nil || sev.Value != "HIGH" {
		t.Errorf("clopidogrel severity %q (%v), want HIGH", sev.Value, err)
	}
	class, _ := chromedp.Run(ctx, chromedp.AttributeValue(row, "class"))
	text, err := chromedp.Run(ctx, chromedp.Text(row))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(class.Value, "critical") || !strings.Contains(text, "from the card") {
		t.Errorf("clopidogrel row: class %q text %q", class.Value, text)
	}
	if !strings.Contains(text, "Poor Metabolizer") {
		t.Errorf("the clopidogrel row does not name the CYP2C19 phenotype: %q", text)
	}
	alt, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`article[data-drug="clopidogrel"] li[data-alternative]`)))
	if err != nil || !(strings.Contains(alt, "prasugrel") || strings.Contains(alt, "ticagrelor")) {
		t.Errorf("alternative %q (%v)", alt, err)
	}
	gene, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`tr[data-gene="CYP2C19"]`)))
	if err != nil || !strings.Contains(gene, "Poor Metabolizer") || !strings.Contains(gene, "*2/*2") || !strings.Contains(gene, "Example Genomics Lab") {
		t.Errorf("CYP2C19 genotype row %q (%v)", gene, err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if len(png) < 8 || string(png[1:4]) != "PNG" {
		t.Fatal("the screenshot is not a PNG")
	}
	shot := filepath.Join(t.TempDir(), "smart-review.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))
	if extra := os.Getenv("PGXSAFETY_E2E_SCREENSHOT"); extra != "" {
		if err := os.WriteFile(extra, png, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// TestSessionKeyFile: the key file is created once (mode 0600) and read
// back by the next replica; a key readable by others, or not 32 bytes of
// base64, refuses the start naming the variable.
func TestSessionKeyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keys", smartSessionKeyFileName)
	k1, err := loadOrCreateSessionKey(path)
	if err != nil || len(k1) != smart.SessionKeySize {
		t.Fatalf("create: %d bytes, %v", len(k1), err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", fi.Mode(), err)
	}
	k2, err := loadOrCreateSessionKey(path)
	if err != nil || string(k1) != string(k2) {
		t.Fatalf("the second replica reads another key (%v)", err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadOrCreateSessionKey(path); err == nil || !strings.Contains(err.Error(), "PGXSAFETY_SMART_SESSION_KEY_FILE") {
		t.Errorf("a key readable by others: %v", err)
	}
	bad := filepath.Join(dir, "short.key")
	if err := os.WriteFile(bad, []byte("c2hvcnQ=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadOrCreateSessionKey(bad); err == nil || !strings.Contains(err.Error(), "32 random bytes") {
		t.Errorf("a short key: %v", err)
	}
}
