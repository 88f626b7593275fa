package httpx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwk"
)

// The one JSON Web Key Set cache of the process. cmd builds it and hands
// it to the OpenID Connect verifier (the identity provider's keys) and to
// the CDS Hooks authenticator (each trusted client's keys). The fetching,
// parsing and storing is jwx's jwk.Cache (which also refreshes registered
// sets in the background); this type adds what the callers' policies need
// and jwk.Cache does not offer: the time a set was fetched on the
// injected clock, Get with a maximum age, Refresh with a minimum interval
// between attempts, "file:" sources, size and time limits, and failure
// reasons safe to show a client.

// Limits of a key-set fetch.
const (
	// MaxKeySetBytes bounds one JWKS document.
	MaxKeySetBytes = 1 << 20
	// KeySetTimeout bounds one fetch.
	KeySetTimeout = 10 * time.Second
)

// KeySetError says why a key set could not be had. Reason is safe to show
// a client ("key set cannot be fetched (status 404)").
type KeySetError struct{ Reason string }

func (e *KeySetError) Error() string { return "key set: " + e.Reason }

// ErrKeySetThrottled is returned by Refresh when the last attempt is more
// recent than the interval allowed; the cached set is returned with it.
var ErrKeySetThrottled = errors.New("key set refresh throttled")

// KeySetCache fetches and caches JSON Web Key Sets by source: an http(s)
// URL, or "file:" followed by a path (read again on each fetch, so
// replacing the file rotates keys). It is safe for concurrent use; one
// fetch of a source runs at a time.
type KeySetCache struct {
	cache  *jwk.Cache
	source keySetSource
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]*keySetEntry
}

// keySetEntry is the callers' view of one source: when its set was
// fetched and last attempted, on the injected clock.
type keySetEntry struct {
	mu        sync.Mutex // held during a fetch
	fetched   time.Time
	attempted time.Time
}

// NewKeySetCache returns a cache fetching with client (nil: a client with
// KeySetTimeout that follows no redirects, so a key-set URL cannot be
// bounced elsewhere) and timing with now (nil: time.Now). ctx bounds the
// background refreshes of jwk.Cache: cancel it when the cache is no
// longer used.
func NewKeySetCache(ctx context.Context, client *http.Client, now func() time.Time) *KeySetCache {
	if client == nil {
		client = &http.Client{
			Timeout:       KeySetTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if now == nil {
		now = time.Now
	}
	return &KeySetCache{cache: jwk.NewCache(ctx), source: keySetSource{client}, now: now, entries: map[string]*keySetEntry{}}
}

// entry returns the entry of src, registering src with jwk.Cache the
// first time.
func (c *KeySetCache) entry(src string) (*keySetEntry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[src]; e != nil {
		return e, nil
	}
	if !strings.HasPrefix(src, "file:") {
		u, err := url.Parse(src)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
			return nil, &KeySetError{Reason: "key-set URL is invalid"}
		}
	}
	if err := c.cache.Register(src, jwk.WithHTTPClient(c.source)); err != nil {
		return nil, &KeySetError{Reason: "key-set URL is invalid"}
	}
	e := &keySetEntry{}
	c.entries[src] = e
	return e, nil
}

// Get returns the set of src and when it was fetched, fetching it first
// when there is none or it is older than maxAge (0: a cached set is used
// whatever its age). When a refetch fails, the cached set stays in use and
// is returned without error; without a cached set the error is returned.
func (c *KeySetCache) Get(ctx context.Context, src string, maxAge time.Duration) (jwk.Set, time.Time, error) {
	e, err := c.entry(src)
	if err != nil {
		return nil, time.Time{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fetched.IsZero() || (maxAge > 0 && c.now().Sub(e.fetched) > maxAge) {
		if set, err := c.fetchLocked(ctx, src, e); err == nil || e.fetched.IsZero() {
			return set, e.fetched, err
		}
	}
	return c.cached(ctx, src, e)
}

// Refresh fetches src again, unless an attempt started less than
// minInterval ago: then it returns the cached set (which may be nil) with
// ErrKeySetThrottled. A failed fetch returns its error; the cached set,
// if any, stays in the cache.
func (c *KeySetCache) Refresh(ctx context.Context, src string, minInterval time.Duration) (jwk.Set, time.Time, error) {
	before := c.now()
	e, err := c.entry(src)
	if err != nil {
		return nil, time.Time{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if minInterval > 0 && !e.attempted.IsZero() && !e.attempted.Before(before.Add(-minInterval)) {
		set, fetched, _ := c.cached(ctx, src, e)
		return set, fetched, ErrKeySetThrottled
	}
	set, err := c.fetchLocked(ctx, src, e)
	if err != nil {
		set, fetched, _ := c.cached(ctx, src, e)
		return set, fetched, err
	}
	return set, e.fetched, nil
}

// cached is the set jwk.Cache holds for src (nil when none was fetched;
// caller holds e.mu).
func (c *KeySetCache) cached(ctx context.Context, src string, e *keySetEntry) (jwk.Set, time.Time, error) {
	if e.fetched.IsZero() {
		return nil, time.Time{}, nil
	}
	// jwk.Cache does not fetch a source it has fetched before.
	set, err := c.cache.Get(ctx, src)
	if err != nil {
		return nil, time.Time{}, keySetError(err)
	}
	return set, e.fetched, nil
}

// fetchLocked fetches src through jwk.Cache (caller holds e.mu).
func (c *KeySetCache) fetchLocked(ctx context.Context, src string, e *keySetEntry) (jwk.Set, error) {
	e.attempted = c.now()
	set, err := c.cache.Refresh(ctx, src)
	if err != nil {
		return nil, keySetError(err)
	}
	e.fetched = c.now()
	return set, nil
}

// keySetError is the KeySetError of a jwk.Cache failure: keySetSource's
// own, or else the set did not parse.
func keySetError(err error) error {
	var ke *KeySetError
	if errors.As(err, &ke) {
		return ke
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &KeySetError{Reason: "key set cannot be fetched"}
	}
	return &KeySetError{Reason: "key set is not a JWK Set"}
}

// keySetSource is the client jwk.Cache fetches through: it reads
// "file:" sources from disk, bounds each fetch by KeySetTimeout and
// MaxKeySetBytes, and turns every failure into a KeySetError (jwk.Cache
// wraps it), so callers get a reason and never a URL or a file name.
type keySetSource struct{ client *http.Client }

func (s keySetSource) Get(src string) (*http.Response, error) {
	var b []byte
	if path, ok := strings.CutPrefix(src, "file:"); ok {
		f, err := os.Open(path)
		if err != nil {
			return nil, &KeySetError{Reason: "key set cannot be read"}
		}
		defer f.Close()
		if b, err = io.ReadAll(io.LimitReader(f, MaxKeySetBytes+1)); err != nil {
			return nil, &KeySetError{Reason: "key set cannot be read"}
		}
	} else {
		// jwk.Cache's client interface takes no context: its callers'
		// contexts end their wait, KeySetTimeout ends the fetch.
		ctx, cancel := context.WithTimeout(context.Background(), KeySetTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
		if err != nil {
			return nil, &KeySetError{Reason: "key-set URL is invalid"}
		}
		req.Header.Set("Accept", "application/json")
		resp, err := s.client.Do(req)
		if err != nil {
			return nil, &KeySetError{Reason: "key set cannot be fetched"}
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, &KeySetError{Reason: fmt.Sprintf("key set cannot be fetched (status %d)", resp.StatusCode)}
		}
		if b, err = io.ReadAll(io.LimitReader(resp.Body, MaxKeySetBytes+1)); err != nil {
			return nil, &KeySetError{Reason: "key set cannot be fetched"}
		}
	}
	if len(b) > MaxKeySetBytes {
		return nil, &KeySetError{Reason: "key set is too large"}
	}
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{},
		Body: io.NopCloser(bytes.NewReader(b))}, nil
}
