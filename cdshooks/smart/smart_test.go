package smart_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pgxsafety/pgxsafety/cdshooks/smart"
	"github.com/pgxsafety/pgxsafety/cdshooks/smart/smarttest"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/knowledge"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

var kb *evaluate.Engine

func TestMain(m *testing.M) {
	var err error
	kb, err = knowledge.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// app is the review app under test, served over HTTP in front of a fake
// EHR.
type app struct {
	t     testing.TB
	srv   *httptest.Server
	ehr   *smarttest.EHR
	store *audittest.Memory
	cfg   smart.Config
	logs  *observer.ObservedLogs
}

// logText is every log entry with its fields, as text.
func (a *app) logText() string {
	var b strings.Builder
	for _, e := range a.logs.All() {
		b.WriteString(e.Message)
		for k, v := range e.ContextMap() {
			fmt.Fprintf(&b, " %s=%v", k, v)
		}
		b.WriteString("\n")
	}
	return b.String()
}

type failingAppender struct{}

func (failingAppender) Append(context.Context, audit.Entry) (audit.Entry, error) {
	return audit.Entry{}, errors.New("disk full")
}

// newApp starts a fake EHR and the app registered with it (edit adjusts
// the app's registration of the EHR).
func newApp(t testing.TB, edit func(*smart.EHR, *smarttest.EHR)) *app {
	t.Helper()
	ehr := smarttest.New()
	t.Cleanup(ehr.Close)
	ehr.Resources = smarttest.Fixture(ehr.Patient)
	a := &app{t: t, ehr: ehr}
	a.srv = httptest.NewUnstartedServer(nil)
	public := "http://" + a.srv.Listener.Addr().String()
	ehr.RedirectURI = public + smart.PathCallback
	reg := smart.EHR{Name: "Fake EHR", ISS: ehr.ISS(), ClientID: ehr.ClientID, ClientType: smart.ClientPublic}
	if edit != nil {
		edit(&reg, ehr)
	}
	a.store = audittest.NewMemory()
	var app audit.Appender = a.store
	if reg.Name == "failing audit" {
		app = failingAppender{}
	}
	a.cfg = smart.Config{PublicURL: public, EHRs: []smart.EHR{reg}}
	core, logs := observer.New(zap.DebugLevel)
	a.logs = logs
	log := zap.New(core)
	s, err := smart.New(a.cfg, service.New(kb, nil, app, time.Now), log)
	if err != nil {
		t.Fatal(err)
	}
	router := httpx.NewRouter()
	s.Register(router)
	a.srv.Config.Handler = httpx.Chain(router, httpx.Options{Log: log})
	a.srv.Start()
	t.Cleanup(a.srv.Close)
	return a
}

// browser is a cookie-keeping HTTP client that follows redirects.
func browser(t testing.TB) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 30 * time.Second}
}

func get(t testing.TB, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (a *app) launchURL(launch string) string {
	q := url.Values{"iss": {a.ehr.ISS()}}
	if launch != "" {
		q.Set("launch", launch)
	}
	return a.srv.URL + smart.PathLaunch + "?" + q.Encode()
}

func mustContain(t *testing.T, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("page lacks %q", w)
		}
	}
}

func TestEHRLaunchReview(t *testing.T) {
	a := newApp(t, nil)
	c := browser(t)
	resp, body := get(t, c, a.launchURL("launch-123"))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s\nEHR log: %v", resp.StatusCode, body, a.ehr.Log)
	}
	if !strings.HasPrefix(resp.Request.URL.Path, smart.PathReview) {
		t.Fatalf("ended at %s", resp.Request.URL)
	}
	if got := resp.Header.Get("Content-Type"); got != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", got)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Errorf("CSP %q", csp)
	}
	mustContain(t, body,
		`data-drug="clopidogrel" data-severity="HIGH"`, // the critical row
		"Poor Metabolizer", "*2/*2", // the CYP2C19 phenotype
		`data-alternative="prasugrel"`,       // an alternative
		"Example Genomics Lab", "2024-02-10", // result date and lab
		"CYP2D6 *4/*999 (novel)", "Could not interpret — review", // the uninterpretable result, raw
		"Calamine lotion 8%", "not in pgxsafety&#39;s knowledge", // an uncovered drug is shown
		"SLCO1B1", // pre-test gene for simvastatin
		"Tamil Nadu", "Ravi Iyer", "pat-1", "Acute coronary syndrome with PCI",
		"https://cpicpgx.org/", // guideline link
	)
	if strings.Index(body, `data-drug="clopidogrel"`) > strings.Index(body, `data-drug="simvastatin"`) {
		t.Error("the critical clopidogrel row should come before simvastatin")
	}
	// The audit entry names the clinician from the id_token's fhirUser.
	id := resp.Header.Get("X-Audit-Log-ID")
	e, err := a.store.Entry(context.Background(), id)
	if err != nil {
		t.Fatalf("audit entry %q: %v", id, err)
	}
	if e.Principal.Subject != "Practitioner/dr-rao" || e.Endpoint != smart.EndpointReview {
		t.Errorf("audit principal %+v endpoint %q", e.Principal, e.Endpoint)
	}
	if !strings.Contains(string(e.Request), `"launch":"ehr"`) || !strings.Contains(string(e.Request), "geno-cyp2d6") {
		t.Errorf("audit request lacks the launch or the results read: %s", e.Request)
	}
	// Tokens never reach the browser: the only cookie is the opaque
	// browser binding, and the page holds no token.
	u, _ := url.Parse(a.srv.URL + "/smart/")
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name != "pgxsafety_smart" || len(ck.Value) != 43 {
			t.Errorf("unexpected cookie %s", ck.Name)
		}
	}
	if strings.Contains(body, "eyJ") {
		t.Error("the page holds something that looks like a JWT")
	}
	// Tokens never reach the logs (nor the page).
	logs := a.logText()
	if !strings.Contains(logs, "SMART launch completed") {
		t.Errorf("no launch log line:\n%s", logs)
	}
	secrets := a.ehr.Secrets()
	if len(secrets) < 2 {
		t.Fatalf("the fake EHR issued %d secrets", len(secrets))
	}
	for _, sec := range secrets {
		if strings.Contains(logs, sec) || strings.Contains(body, sec) || strings.Contains(string(e.Request)+string(e.Response), sec) {
			t.Errorf("a token (%s…) is in the logs, the page or the audit entry", sec[:8])
		}
	}
	// A second view is audited again.
	resp2, _ := get(t, c, resp.Request.URL.String())
	if resp2.StatusCode != 200 || resp2.Header.Get("X-Audit-Log-ID") == id || resp2.Header.Get("X-Audit-Log-ID") == "" {
		t.Errorf("second view: %d audit %q", resp2.StatusCode, resp2.Header.Get("X-Audit-Log-ID"))
	}
}

func TestCardLaunchShowsCardDrugFirst(t *testing.T) {
	a := newApp(t, nil)
	a.ehr.AppContext = `{"hookInstance":"h-1","cardUuid":"c-1","drug":"simvastatin"}`
	no := false
	a.ehr.NeedBanner = &no
	resp, body := get(t, browser(t), a.launchURL("launch-9"))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if strings.Index(body, `data-drug="simvastatin"`) > strings.Index(body, `data-drug="clopidogrel"`) {
		t.Error("the card's drug should come first")
	}
	mustContain(t, body, "from the card", "Opened from a pgxsafety card about <strong>simvastatin</strong>")
	if strings.Contains(body, `aria-label="Patient"`) {
		t.Error("need_patient_banner false, but the banner is shown")
	}
}

func TestConfidentialClients(t *testing.T) {
	priv, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := jwk.FromRaw(priv)
	_ = k.Set(jwk.KeyIDKey, "app-key-1")
	_ = k.Set(jwk.AlgorithmKey, jwa.ES384)
	kb, _ := json.Marshal(k)
	signing, err := smart.ParseSigningKey(kb)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := k.PublicKey()
	for name, edit := range map[string]func(*smart.EHR, *smarttest.EHR){
		"symmetric": func(r *smart.EHR, e *smarttest.EHR) {
			e.ClientType, e.ClientSecret = smarttest.Symmetric, "s3cret-value"
			r.ClientType, r.ClientSecret = smart.ClientConfidentialSymmetric, "s3cret-value"
		},
		"asymmetric": func(r *smart.EHR, e *smarttest.EHR) {
			e.ClientType, e.ClientKey = smarttest.Asymmetric, pub
			r.ClientType, r.Key = smart.ClientConfidentialAsymmetric, signing
		},
		"wrong secret": func(r *smart.EHR, e *smarttest.EHR) {
			e.ClientType, e.ClientSecret = smarttest.Symmetric, "s3cret-value"
			r.ClientType, r.ClientSecret = smart.ClientConfidentialSymmetric, "another"
		},
	} {
		t.Run(name, func(t *testing.T) {
			a := newApp(t, edit)
			resp, body := get(t, browser(t), a.launchURL("l-1"))
			if name == "wrong secret" {
				if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "invalid_client") {
					t.Errorf("status %d: %s", resp.StatusCode, body)
				}
				if strings.Contains(body, "another") {
					t.Error("the page shows the client secret")
				}
				return
			}
			if resp.StatusCode != 200 || !strings.Contains(body, `data-drug="clopidogrel"`) {
				t.Errorf("status %d: %s\n%v", resp.StatusCode, body, a.ehr.Log)
			}
		})
	}
	// The public key of the private_key_jwt client is published.
	a := newApp(t, func(r *smart.EHR, e *smarttest.EHR) {
		r.ClientType, r.Key = smart.ClientConfidentialAsymmetric, signing
	})
	_, body := get(t, browser(t), a.srv.URL+smart.PathJWKS)
	if !strings.Contains(body, `"kid":"app-key-1"`) || strings.Contains(body, `"d":`) {
		t.Errorf("JWKS: %s", body)
	}
}

func TestStandaloneLaunch(t *testing.T) {
	a := newApp(t, nil)
	c := browser(t)
	_, idx := get(t, c, a.srv.URL+smart.PathIndex)
	mustContain(t, idx, "Fake EHR", "/smart/launch?iss=")
	resp, body := get(t, c, a.launchURL(""))
	if resp.StatusCode != 200 || !strings.Contains(body, `data-drug="clopidogrel"`) {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	found := false
	for _, l := range a.ehr.Log {
		if strings.HasPrefix(l, "authorize: ok launch= ") && strings.Contains(l, "launch/patient") {
			found = true
		}
	}
	if !found {
		t.Errorf("standalone authorize not seen with launch/patient: %v", a.ehr.Log)
	}
}

// TestNegative covers the failures a clinician may meet: each gives an
// HTML page that says what happened, and none gives advice.
func TestNegative(t *testing.T) {
	type tc struct {
		edit   func(*smart.EHR, *smarttest.EHR)
		run    func(t *testing.T, a *app) (*http.Response, string)
		status int
		want   string
	}
	launch := func(t *testing.T, a *app) (*http.Response, string) { return get(t, browser(t), a.launchURL("l-1")) }
	cases := map[string]tc{
		"iss not allowlisted": {run: func(t *testing.T, a *app) (*http.Response, string) {
			return get(t, browser(t), a.srv.URL+smart.PathLaunch+"?launch=x&iss="+url.QueryEscape("https://evil.example.org/fhir"))
		}, status: 403, want: "This EHR is not registered"},
		"no iss": {run: func(t *testing.T, a *app) (*http.Response, string) {
			return get(t, browser(t), a.srv.URL+smart.PathLaunch+"?launch=x")
		}, status: 400, want: "names no EHR"},
		"bad state": {run: func(t *testing.T, a *app) (*http.Response, string) {
			c := browser(t)
			get(t, c, a.srv.URL+smart.PathIndex)
			return get(t, c, a.srv.URL+smart.PathCallback+"?code=abc&state=forged-state-value-000000000")
		}, status: 400, want: "This sign-in is not valid"},
		"state from another browser": {run: func(t *testing.T, a *app) (*http.Response, string) {
			// The attacker starts a launch, stops at the callback URL, and
			// sends it to the victim's browser (login CSRF).
			c := browser(t)
			c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
				if req.URL.Path == smart.PathCallback {
					return http.ErrUseLastResponse
				}
				return nil
			}
			resp, _ := get(t, c, a.launchURL("l-1"))
			return get(t, browser(t), resp.Header.Get("Location"))
		}, status: 400, want: "This sign-in is not valid"},
		"authorization refused": {run: func(t *testing.T, a *app) (*http.Response, string) {
			return get(t, browser(t), a.srv.URL+smart.PathCallback+"?error=access_denied&error_description=user+said+no&state=x")
		}, status: 403, want: "access_denied"},
		"token exchange fails": {edit: func(_ *smart.EHR, e *smarttest.EHR) { e.TokenStatus = 500 },
			run: launch, status: 502, want: "The EHR did not issue an access token"},
		"no id_token": {edit: func(_ *smart.EHR, e *smarttest.EHR) { e.NoIDToken = true },
			run: launch, status: 502, want: "did not identify the user"},
		"genomics server error": {edit: func(_ *smart.EHR, e *smarttest.EHR) { e.FHIRStatus["/Observation"] = 500 },
			run: launch, status: 502, want: "Reading the genomic results from the EHR"},
		"medications server error": {edit: func(_ *smart.EHR, e *smarttest.EHR) { e.FHIRStatus["/MedicationRequest"] = 503 },
			run: launch, status: 502, want: "the active medications"},
		"FHIR refuses the token": {edit: func(_ *smart.EHR, e *smarttest.EHR) { e.FHIRStatus["/Observation"] = 401 },
			run: launch, status: 401, want: "refused the access token"},
		"audit unavailable": {edit: func(r *smart.EHR, _ *smarttest.EHR) { r.Name = "failing audit" },
			run: launch, status: 503, want: "no advice was given"},
		"session of another browser": {run: func(t *testing.T, a *app) (*http.Response, string) {
			resp, _ := get(t, browser(t), a.launchURL("l-1"))
			return get(t, browser(t), resp.Request.URL.String())
		}, status: 401, want: "This review session has ended"},
		"code replayed": {run: func(t *testing.T, a *app) (*http.Response, string) {
			c := browser(t)
			var cb string
			c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
				if req.URL.Path == smart.PathCallback {
					cb = req.URL.String()
				}
				return nil
			}
			get(t, c, a.launchURL("l-1"))
			return get(t, c, cb)
		}, status: 400, want: "This sign-in is not valid"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			a := newApp(t, c.edit)
			resp, body := c.run(t, a)
			if resp.StatusCode != c.status {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			mustContain(t, body, c.want)
			if strings.Contains(body, "data-drug=") {
				t.Error("an error page shows advice")
			}
			if name == "iss not allowlisted" && a.ehr.Granted+a.ehr.FHIRHit != 0 {
				t.Error("a refused launch reached the EHR")
			}
		})
	}
}

func TestRefusesPlainOnlyPKCE(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"authorization_endpoint":"https://a.example/auth","token_endpoint":"https://a.example/token","code_challenge_methods_supported":["plain"]}`))
	}))
	defer plain.Close()
	a := newApp(t, func(r *smart.EHR, _ *smarttest.EHR) { r.ISS = plain.URL + "/fhir" })
	resp, body := get(t, browser(t), a.srv.URL+smart.PathLaunch+"?launch=x&iss="+url.QueryEscape(plain.URL+"/fhir"))
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "S256") {
		t.Errorf("status %d: %s", resp.StatusCode, body)
	}
}

func TestLoadEHRs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("secret.txt", "abc123\n")
	good := write("ehrs.json", `[{"name":"A","iss":"https://ehr.example.org/fhir","client_id":"x","client_type":"confidential-symmetric","client_secret_file":"secret.txt"},
		{"iss":"https://other.example.org/r4","client_id":"y","client_type":"public"}]`)
	ehrs, err := smart.LoadEHRs(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(ehrs) != 2 || ehrs[0].ClientSecret != "abc123" || ehrs[1].Name != "https://other.example.org/r4" {
		t.Errorf("%+v", ehrs)
	}
	for name, body := range map[string]string{
		"unknown field":    `[{"iss":"https://e.example/fhir","client_id":"x","client_type":"public","secret":"s"}]`,
		"http iss":         `[{"iss":"http://e.example/fhir","client_id":"x","client_type":"public"}]`,
		"no client id":     `[{"iss":"https://e.example/fhir","client_type":"public"}]`,
		"bad type":         `[{"iss":"https://e.example/fhir","client_id":"x","client_type":"confidential"}]`,
		"symmetric no key": `[{"iss":"https://e.example/fhir","client_id":"x","client_type":"confidential-symmetric"}]`,
	} {
		if _, err := smart.LoadEHRs(write("bad.json", body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestUninterpretableNeverReassures: a gene whose result could not be
// interpreted never reads as "no result — order a test", and a genomic
// resource that cannot be read at all is shown and flags every
// test-first finding.
func TestUninterpretableNeverReassures(t *testing.T) {
	a := newApp(t, nil)
	a.ehr.Resources["MedicationRequest"] = append(a.ehr.Resources["MedicationRequest"], json.RawMessage(`{"resourceType":"MedicationRequest",
		"id":"mr-cod","status":"active","intent":"order","medicationCodeableConcept":{"text":"Codeine 30 mg tablet"},"subject":{"reference":"Patient/pat-1"}}`))
	resp, body := get(t, browser(t), a.launchURL("l-1"))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	i := strings.Index(body, `data-drug="codeine"`)
	if i < 0 {
		t.Fatal("no codeine row")
	}
	codeine := body[i:]
	codeine = codeine[:strings.Index(codeine, "</article>")]
	mustContain(t, codeine, "A CYP2D6 result exists but could not be interpreted")
	// A genomic Observation that does not parse at all.
	a.ehr.Resources["Observation"] = append(a.ehr.Resources["Observation"], json.RawMessage(`{"resourceType":"Observation",
		"id":"broken-1","status":"final","code":{"coding":[{"system":"http://loinc.org","code":"84413-4"}]},"valueString":17,
		"subject":{"reference":"Patient/pat-1"}}`))
	_, body = get(t, browser(t), a.launchURL("l-2"))
	mustContain(t, body, "Observation/broken-1", "Some genomic results could not be read or tied to a gene")
}

// TestIDTokenNumericDates: exp, nbf and iat of the EHR's id_token must be
// JSON numbers, as on the REST and CDS paths. The same claims written as
// numbers (re-signed the same way) sign in, so the refusal is the type's.
func TestIDTokenNumericDates(t *testing.T) {
	now := time.Now()
	num := map[string]any{"exp": now.Add(time.Hour).Unix(), "nbf": now.Add(-time.Minute).Unix(), "iat": now.Unix()}
	for _, name := range []string{"", "exp", "nbf", "iat"} {
		t.Run("string "+name, func(t *testing.T) {
			claims := maps.Clone(num)
			if name != "" {
				claims[name] = strconv.FormatInt(num[name].(int64), 10)
			}
			a := newApp(t, func(_ *smart.EHR, e *smarttest.EHR) { e.IDTokenClaims = claims })
			resp, body := get(t, browser(t), a.launchURL("l-1"))
			if name == "" {
				if resp.StatusCode != 200 {
					t.Fatalf("numbers: status %d: %s", resp.StatusCode, body)
				}
				return
			}
			if resp.StatusCode != 502 {
				t.Errorf("status %d, want 502", resp.StatusCode)
			}
			mustContain(t, body, "did not identify the user")
		})
	}
}
