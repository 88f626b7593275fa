package fhir_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pgxsafety/pgxsafety/fhir"
)

// fakeFHIR is a FHIR server double: Patient reads and paged Observation
// searches, recording the Authorization headers it saw.
type fakeFHIR struct {
	mu       sync.Mutex
	auth     []string
	pages    int    // pages of the Observation search
	perPage  int    // entries per page
	nextHost string // when set, page 1's next link points there
	srv      *httptest.Server
}

func newFakeFHIR(t *testing.T) *fakeFHIR {
	f := &fakeFHIR{pages: 3, perPage: 2}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /fhir/Patient/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.record(r)
		switch r.PathValue("id") {
		case "p1":
			writeFHIR(w, 200, `{"resourceType":"Patient","id":"p1","gender":"female"}`)
		case "secret":
			writeFHIR(w, 401, `{"resourceType":"OperationOutcome","issue":[{"severity":"error","code":"login","diagnostics":"token expired"}]}`)
		case "html":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(200)
			fmt.Fprint(w, "<html></html>")
		case "moved":
			http.Redirect(w, r, "https://elsewhere.example/Patient/p1", http.StatusFound)
		default:
			writeFHIR(w, 404, `{"resourceType":"OperationOutcome","issue":[{"severity":"error","code":"not-found"}]}`)
		}
	})
	mux.HandleFunc("GET /fhir/Observation", func(w http.ResponseWriter, r *http.Request) {
		f.record(r)
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		var entries []string
		for i := 0; i < f.perPage; i++ {
			entries = append(entries, fmt.Sprintf(`{"resource":{"resourceType":"Observation","id":"o%d-%d"}}`, page, i))
		}
		link := ""
		if page+1 < f.pages {
			next := fmt.Sprintf("%s/fhir/Observation?patient=%s&page=%d", f.srv.URL, url.QueryEscape(r.URL.Query().Get("patient")), page+1)
			if f.nextHost != "" && page == 0 {
				next = "https://" + f.nextHost + "/fhir/Observation?page=1"
			}
			if page == 1 {
				// a relative next link is resolved against the base
				next = fmt.Sprintf("/fhir/Observation?page=%d", page+1)
			}
			link = fmt.Sprintf(`,"link":[{"relation":"self","url":"x"},{"relation":"next","url":%q}]`, next)
		}
		writeFHIR(w, 200, fmt.Sprintf(`{"resourceType":"Bundle","type":"searchset","entry":[%s]%s}`, strings.Join(entries, ","), link))
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeFHIR) record(r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auth = append(f.auth, r.Header.Get("Authorization"))
}

func writeFHIR(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/fhir+json; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

func TestClientRead(t *testing.T) {
	f := newFakeFHIR(t)
	c, err := fhir.NewClient(f.srv.URL+"/fhir/", "tok-123", fhir.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	raw, err := c.Read(ctx, "Patient", "p1")
	if err != nil || !strings.Contains(string(raw), `"p1"`) {
		t.Fatalf("read: %s, %v", raw, err)
	}
	if raw, err := c.Read(ctx, "Patient", "nobody"); err != nil || raw != nil {
		t.Errorf("missing resource: %s, %v; want nil, nil", raw, err)
	}
	_, err = c.Read(ctx, "Patient", "secret")
	var se *fhir.StatusError
	if !errors.As(err, &se) || !se.Unauthorized() || !strings.Contains(se.Outcome, "token expired") || !errors.Is(err, fhir.ErrFHIRServer) {
		t.Errorf("401: %v", err)
	}
	if _, err := c.Read(ctx, "Patient", "html"); err == nil {
		t.Error("an HTML answer was accepted")
	}
	if _, err := c.Read(ctx, "Patient", "moved"); !errors.As(err, &se) || se.Status != http.StatusFound {
		t.Errorf("a redirect was followed or misreported: %v", err)
	}
	if _, err := c.Read(ctx, "Patient", "../x"); err == nil {
		t.Error("an id with a path was accepted")
	}
	if raw, err := c.ReadReference(ctx, "Patient/p1"); err != nil || raw == nil {
		t.Errorf("read reference: %v", err)
	}
	for _, a := range f.auth {
		if a != "Bearer tok-123" {
			t.Errorf("Authorization = %q", a)
		}
	}
}

func TestClientSearchPaging(t *testing.T) {
	f := newFakeFHIR(t)
	c, err := fhir.NewClient(f.srv.URL+"/fhir", "tok", fhir.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Search(context.Background(), "Observation", url.Values{"patient": {"p1"}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		var h struct{ ID string }
		_ = json.Unmarshal(r, &h)
		ids = append(ids, h.ID)
	}
	if want := "o0-0 o0-1 o1-0 o1-1 o2-0 o2-1"; strings.Join(ids, " ") != want {
		t.Errorf("ids = %v, want %s", ids, want)
	}
}

func TestClientSearchLimits(t *testing.T) {
	tests := []struct {
		name  string
		setup func(f *fakeFHIR)
		opt   fhir.ClientOptions
		want  string
	}{
		{"next link to another host", func(f *fakeFHIR) { f.nextHost = "evil.example" }, fhir.ClientOptions{}, "leaves the FHIR server"},
		{"too many pages", func(f *fakeFHIR) { f.pages = 5 }, fhir.ClientOptions{MaxPages: 2}, "more than 2 pages"},
		{"too many resources", func(f *fakeFHIR) {}, fhir.ClientOptions{MaxResources: 3}, "more than 3 resources"},
		{"answer too large", func(f *fakeFHIR) { f.perPage = 50 }, fhir.ClientOptions{MaxResponseBytes: 512}, "exceeds 512 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeFHIR(t)
			tc.setup(f)
			c, err := fhir.NewClient(f.srv.URL+"/fhir", "tok", tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Search(context.Background(), "Observation", url.Values{"patient": {"p1"}})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, fhir.ErrFHIRServer) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestCheckServerURL(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"https://ehr.example/fhir", true},
		{"http://127.0.0.1:8080/fhir", true},
		{"http://localhost/fhir", true},
		{"http://[::1]:9/fhir", true},
		{"http://ehr.example/fhir", false},
		{"https://user:pw@ehr.example/fhir", false},
		{"https://ehr.example/fhir?x=1", false},
		{"ftp://ehr.example/fhir", false},
		{"/fhir", false},
		{"", false},
	}
	for _, tc := range tests {
		_, err := fhir.CheckServerURL(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("%q: err = %v, want ok %v", tc.in, err, tc.ok)
		}
	}
}
