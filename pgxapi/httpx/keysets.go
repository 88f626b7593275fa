package httpx

import (
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
// the CDS Hooks authenticator (each trusted client's keys). It fetches a
// set from its source, keeps it with the time it was fetched, and hands it
// out; when to fetch again is each caller's policy (Get with a maximum
// age, Refresh with a minimum interval between attempts).

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
	client *http.Client
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]*keySetEntry
}

type keySetEntry struct {
	mu        sync.Mutex // held during a fetch
	set       jwk.Set
	fetched   time.Time
	attempted time.Time
}

// NewKeySetCache returns a cache fetching with client (nil: a client with
// KeySetTimeout that follows no redirects, so a key-set URL cannot be
// bounced elsewhere) and timing with now (nil: time.Now).
func NewKeySetCache(client *http.Client, now func() time.Time) *KeySetCache {
	if client == nil {
		client = &http.Client{
			Timeout:       KeySetTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if now == nil {
		now = time.Now
	}
	return &KeySetCache{client: client, now: now, entries: map[string]*keySetEntry{}}
}

func (c *KeySetCache) entry(src string) *keySetEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[src]
	if e == nil {
		e = &keySetEntry{}
		c.entries[src] = e
	}
	return e
}

// Get returns the set of src and when it was fetched, fetching it first
// when there is none or it is older than maxAge (0: a cached set is used
// whatever its age). When a refetch fails, the cached set stays in use and
// is returned without error; without a cached set the error is returned.
func (c *KeySetCache) Get(ctx context.Context, src string, maxAge time.Duration) (jwk.Set, time.Time, error) {
	e := c.entry(src)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.set != nil && (maxAge <= 0 || c.now().Sub(e.fetched) <= maxAge) {
		return e.set, e.fetched, nil
	}
	err := c.fetchLocked(ctx, src, e)
	if e.set == nil {
		return nil, time.Time{}, err
	}
	return e.set, e.fetched, nil
}

// Refresh fetches src again, unless an attempt started less than
// minInterval ago: then it returns the cached set (which may be nil) with
// ErrKeySetThrottled. A failed fetch returns its error; the cached set,
// if any, stays in the cache.
func (c *KeySetCache) Refresh(ctx context.Context, src string, minInterval time.Duration) (jwk.Set, time.Time, error) {
	before := c.now()
	e := c.entry(src)
	e.mu.Lock()
	defer e.mu.Unlock()
	if minInterval > 0 && !e.attempted.IsZero() && !e.attempted.Before(before.Add(-minInterval)) {
		return e.set, e.fetched, ErrKeySetThrottled
	}
	if err := c.fetchLocked(ctx, src, e); err != nil {
		return e.set, e.fetched, err
	}
	return e.set, e.fetched, nil
}

// fetchLocked fetches src into e (caller holds e.mu).
func (c *KeySetCache) fetchLocked(ctx context.Context, src string, e *keySetEntry) error {
	e.attempted = c.now()
	b, err := c.read(ctx, src)
	if err != nil {
		return err
	}
	set, err := jwk.Parse(b)
	if err != nil {
		return &KeySetError{Reason: "key set is not a JWK Set"}
	}
	e.set, e.fetched = set, c.now()
	return nil
}

func (c *KeySetCache) read(ctx context.Context, src string) ([]byte, error) {
	var (
		b   []byte
		err error
	)
	if path, ok := strings.CutPrefix(src, "file:"); ok {
		f, ferr := os.Open(path)
		if ferr != nil {
			return nil, &KeySetError{Reason: "key set cannot be read"}
		}
		defer f.Close()
		if b, err = io.ReadAll(io.LimitReader(f, MaxKeySetBytes+1)); err != nil {
			return nil, &KeySetError{Reason: "key set cannot be read"}
		}
	} else {
		u, perr := url.Parse(src)
		if perr != nil || (u.Scheme != "https" && u.Scheme != "http") {
			return nil, &KeySetError{Reason: "key-set URL is invalid"}
		}
		ctx, cancel := context.WithTimeout(ctx, KeySetTimeout)
		defer cancel()
		req, rerr := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if rerr != nil {
			return nil, &KeySetError{Reason: "key-set URL is invalid"}
		}
		req.Header.Set("Accept", "application/json")
		resp, derr := c.client.Do(req)
		if derr != nil {
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
	return b, nil
}
