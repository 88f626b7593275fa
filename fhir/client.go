package fhir

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client limits (defaults of ClientOptions).
const (
	DefaultRequestTimeout   = 5 * time.Second
	DefaultMaxResponseBytes = 4 << 20
	DefaultMaxPages         = 20
	DefaultMaxResources     = 1000
	// searchPageSize is the _count asked of the server per page.
	searchPageSize = 100
)

// ClientOptions configure a Client. Zero values take the defaults.
type ClientOptions struct {
	// HTTPClient is used for every request; nil means a client with no
	// redirects followed (the access token must not travel elsewhere).
	HTTPClient *http.Client
	// RequestTimeout bounds each HTTP request.
	RequestTimeout time.Duration
	// MaxResponseBytes bounds each response body.
	MaxResponseBytes int64
	// MaxPages bounds the pages of one search.
	MaxPages int
	// MaxResources bounds the resources of one search.
	MaxResources int
}

// Client is a small FHIR R4 REST client: read and search with Bundle
// paging through link[next]. The access token is sent only to the base
// URL's origin: a next link elsewhere is refused and redirects are not
// followed.
type Client struct {
	base  *url.URL
	token string
	hc    *http.Client
	opt   ClientOptions
}

// ErrFHIRServer is the kind of every error of the FHIR server or of the
// exchange with it (status, size, paging, body).
var ErrFHIRServer = errors.New("FHIR server error")

// StatusError is a FHIR server answer with an unexpected status.
type StatusError struct {
	Status int
	// Outcome is the OperationOutcome text when the body held one.
	Outcome string
}

// Error describes the status and the outcome.
func (e *StatusError) Error() string {
	s := fmt.Sprintf("FHIR server answered %d", e.Status)
	if e.Outcome != "" {
		s += ": " + e.Outcome
	}
	return s
}

// Unwrap makes errors.Is(err, ErrFHIRServer) true.
func (e *StatusError) Unwrap() error { return ErrFHIRServer }

// Unauthorized reports whether the server refused the credentials.
func (e *StatusError) Unauthorized() bool {
	return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
}

// NewClient returns a client for the FHIR server at base. base must be an
// absolute https URL without user information, query or fragment; http is
// accepted for loopback hosts only (local sandboxes and tests).
// accessToken (may be empty) is sent as a Bearer token.
func NewClient(base, accessToken string, opt ClientOptions) (*Client, error) {
	u, err := CheckServerURL(base)
	if err != nil {
		return nil, err
	}
	if opt.RequestTimeout <= 0 {
		opt.RequestTimeout = DefaultRequestTimeout
	}
	if opt.MaxResponseBytes <= 0 {
		opt.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if opt.MaxPages <= 0 {
		opt.MaxPages = DefaultMaxPages
	}
	if opt.MaxResources <= 0 {
		opt.MaxResources = DefaultMaxResources
	}
	hc := opt.HTTPClient
	if hc == nil {
		hc = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return &Client{base: u, token: accessToken, hc: hc, opt: opt}, nil
}

// CheckServerURL parses and checks a FHIR base URL (see NewClient).
func CheckServerURL(base string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || u.Host == "" || !u.IsAbs() {
		return nil, errors.New("fhirServer must be an absolute URL")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("fhirServer must not carry user information, a query or a fragment")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !loopbackHost(u.Hostname()) {
			return nil, errors.New("fhirServer must use https (http is accepted for loopback hosts only)")
		}
	default:
		return nil, errors.New("fhirServer must be an https URL")
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u, nil
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Base returns the server's base URL.
func (c *Client) Base() string { return c.base.String() }

var resourceTypePattern = func(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// Read fetches one resource by type and id. A resource that does not
// exist (404, 410) gives nil and no error.
func (c *Client) Read(ctx context.Context, resourceType, id string) (json.RawMessage, error) {
	if !resourceTypePattern(resourceType) || !fhirID.MatchString(id) {
		return nil, fmt.Errorf("fhir: invalid read %s/%s", resourceType, id)
	}
	u := *c.base
	u.Path = c.base.Path + "/" + resourceType + "/" + id
	body, status, err := c.get(ctx, u.String())
	if err != nil {
		return nil, err
	}
	if status == http.StatusNotFound || status == http.StatusGone {
		return nil, nil
	}
	if status != http.StatusOK {
		return nil, statusError(status, body)
	}
	return body, nil
}

// ReadReference reads a relative reference ("Medication/123").
func (c *Client) ReadReference(ctx context.Context, reference string) (json.RawMessage, error) {
	typ, id, ok := strings.Cut(reference, "/")
	if !ok {
		return nil, fmt.Errorf("fhir: %q is not a relative reference", reference)
	}
	return c.Read(ctx, typ, id)
}

// Search runs a type-level search and follows the Bundle's next links,
// returning every entry's resource (OperationOutcome entries included).
// It fails when the results exceed MaxPages or MaxResources: a truncated
// result could hide a finding.
func (c *Client) Search(ctx context.Context, resourceType string, params url.Values) ([]json.RawMessage, error) {
	if !resourceTypePattern(resourceType) {
		return nil, fmt.Errorf("fhir: invalid resource type %q", resourceType)
	}
	q := url.Values{}
	for k, v := range params {
		q[k] = append([]string(nil), v...)
	}
	if q.Get("_count") == "" {
		q.Set("_count", fmt.Sprint(searchPageSize))
	}
	u := *c.base
	u.Path = c.base.Path + "/" + resourceType
	u.RawQuery = q.Encode()
	next := u.String()
	seen := map[string]bool{}
	var out []json.RawMessage
	for page := 0; next != ""; page++ {
		if page >= c.opt.MaxPages {
			return nil, fmt.Errorf("%w: the search has more than %d pages", ErrFHIRServer, c.opt.MaxPages)
		}
		if seen[next] {
			return nil, fmt.Errorf("%w: the search's next link repeats a page", ErrFHIRServer)
		}
		seen[next] = true
		body, status, err := c.get(ctx, next)
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, statusError(status, body)
		}
		var b bundle
		var h rawHead
		if err := json.Unmarshal(body, &h); err != nil || h.ResourceType != "Bundle" {
			return nil, fmt.Errorf("%w: a search answered something other than a Bundle", ErrFHIRServer)
		}
		if err := json.Unmarshal(body, &b); err != nil {
			return nil, fmt.Errorf("%w: the search Bundle is not readable", ErrFHIRServer)
		}
		for _, e := range b.Entry {
			if r := bytes.TrimSpace(e.Resource); len(r) > 0 && !bytes.Equal(r, []byte("null")) {
				out = append(out, e.Resource)
			}
		}
		if len(out) > c.opt.MaxResources {
			return nil, fmt.Errorf("%w: the search returned more than %d resources", ErrFHIRServer, c.opt.MaxResources)
		}
		next = ""
		for _, l := range b.Link {
			if l.Relation == "next" && strings.TrimSpace(l.URL) != "" {
				n, err := c.sameOrigin(l.URL)
				if err != nil {
					return nil, err
				}
				next = n
			}
		}
	}
	return out, nil
}

// sameOrigin resolves a next link and refuses one that leaves the server.
func (c *Client) sameOrigin(link string) (string, error) {
	u, err := c.base.Parse(strings.TrimSpace(link))
	if err != nil {
		return "", fmt.Errorf("%w: unreadable next link", ErrFHIRServer)
	}
	if u.Scheme != c.base.Scheme || u.Host != c.base.Host || u.User != nil ||
		!(u.Path == c.base.Path || strings.HasPrefix(u.Path, c.base.Path+"/")) {
		return "", fmt.Errorf("%w: the next link leaves the FHIR server; not followed", ErrFHIRServer)
	}
	return u.String(), nil
}

func (c *Client) get(ctx context.Context, u string) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opt.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("fhir: build request: %w", err)
	}
	req.Header.Set("Accept", "application/fhir+json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		// The URL is ours (base + path); the error never holds the token.
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return nil, 0, fmt.Errorf("%w: no answer within %s", ErrFHIRServer, c.opt.RequestTimeout)
		}
		return nil, 0, fmt.Errorf("%w: %s", ErrFHIRServer, clip(transportError(err)))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.opt.MaxResponseBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: reading the answer: %s", ErrFHIRServer, clip(transportError(err)))
	}
	if int64(len(body)) > c.opt.MaxResponseBytes {
		return nil, 0, fmt.Errorf("%w: an answer exceeds %d bytes", ErrFHIRServer, c.opt.MaxResponseBytes)
	}
	if resp.StatusCode == http.StatusOK {
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if mt != "application/fhir+json" && mt != "application/json" && mt != "application/json+fhir" {
			return nil, 0, fmt.Errorf("%w: the answer is not FHIR JSON (Content-Type %q)", ErrFHIRServer, clip(mt))
		}
	}
	return body, resp.StatusCode, nil
}

// transportError describes a transport failure without the URL (which is
// ours and harmless, but long).
func transportError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

func statusError(status int, body []byte) error {
	se := &StatusError{Status: status}
	var oe *OutcomeError
	if errors.As(outcomeIfAny(body), &oe) {
		se.Outcome = oe.Text
	}
	return se
}

func outcomeIfAny(body []byte) error {
	var h rawHead
	if json.Unmarshal(body, &h) == nil && h.ResourceType == "OperationOutcome" {
		return outcomeError(body)
	}
	return nil
}
