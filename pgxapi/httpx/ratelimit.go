package httpx

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine/audit"
)

// Limit is a GCRA (generic cell rate algorithm) limit: Rate requests per
// Period on average, of which up to Burst may come at once. With Burst ==
// Rate a caller may spend a whole period's budget at once and then one
// request every Period/Rate: the (Rate+1)-th request of a burst is
// refused.
type Limit struct {
	Rate   int
	Period time.Duration
	Burst  int
}

// PerMinute returns the limit of n requests per minute with a burst of
// burst (n when burst <= 0).
func PerMinute(n, burst int) Limit {
	if burst <= 0 {
		burst = n
	}
	return Limit{Rate: n, Period: time.Minute, Burst: burst}
}

func (l Limit) valid() bool { return l.Rate > 0 && l.Period > 0 && l.Burst > 0 }

// Decision is the outcome of charging a caller's budget.
type Decision struct {
	// Allowed reports whether the request may proceed.
	Allowed bool
	// Remaining is how many more units could be charged now.
	Remaining int
	// RetryAfter is how long to wait before the refused charge would be
	// allowed (0 when allowed).
	RetryAfter time.Duration
	// ResetAfter is how long until the budget is full again.
	ResetAfter time.Duration
}

// RateStore charges budgets kept somewhere (memory, Redis).
type RateStore interface {
	// AllowN charges n units to key under limit l; a refused charge
	// costs nothing.
	AllowN(ctx context.Context, key string, l Limit, n int) (Decision, error)
}

// MemoryRateStore is a GCRA RateStore in this process's memory, with the
// same arithmetic as the Redis store (redis_rate). Safe for concurrent
// use.
type MemoryRateStore struct {
	now   func() time.Time
	mu    sync.Mutex
	tat   map[string]time.Time // theoretical arrival time per key
	calls int
}

// NewMemoryRateStore returns an empty store using the clock now
// (time.Now when nil).
func NewMemoryRateStore(now func() time.Time) *MemoryRateStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryRateStore{now: now, tat: map[string]time.Time{}}
}

// sweepEvery is how many calls pass between removals of idle keys.
const sweepEvery = 4096

// AllowN implements RateStore.
func (m *MemoryRateStore) AllowN(_ context.Context, key string, l Limit, n int) (Decision, error) {
	if !l.valid() || n <= 0 {
		return Decision{}, fmt.Errorf("rate limit: invalid limit %+v or cost %d", l, n)
	}
	interval := l.Period / time.Duration(l.Rate)
	increment := interval * time.Duration(n)
	burstOffset := interval * time.Duration(l.Burst)

	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.calls++
	if m.calls%sweepEvery == 0 {
		for k, t := range m.tat {
			if !t.After(now) {
				delete(m.tat, k) // a key at or before now is a full budget
			}
		}
	}
	tat := m.tat[key]
	if tat.Before(now) {
		tat = now
	}
	newTat := tat.Add(increment)
	allowAt := newTat.Add(-burstOffset)
	diff := now.Sub(allowAt)
	if diff < 0 {
		return Decision{Allowed: false, RetryAfter: -diff, ResetAfter: tat.Sub(now)}, nil
	}
	m.tat[key] = newTat
	return Decision{Allowed: true, Remaining: int(diff / interval), ResetAfter: newTat.Sub(now)}, nil
}

// RateOverride is a negotiated limit for one client (a lab pilot, a
// hospital contract), in the overrides file.
type RateOverride struct {
	// Issuer, when set, restricts the override to tokens of that issuer.
	Issuer string `json:"issuer,omitempty"`
	// Subject is the token subject ("sub") of the client.
	Subject string `json:"subject"`
	// PerMinute is the sustained limit.
	PerMinute int `json:"per_minute"`
	// Burst is the largest burst (PerMinute when 0).
	Burst int `json:"burst,omitempty"`
	// Note says why (contract reference); it is not used.
	Note string `json:"note,omitempty"`
}

// LoadRateOverrides reads a JSON overrides file:
//
//	{"overrides": [{"subject": "lab-pilot-client", "per_minute": 600, "burst": 100, "note": "..."}]}
//
// Unknown fields, duplicate (issuer, subject) pairs and non-positive
// limits are errors.
func LoadRateOverrides(path string) ([]RateOverride, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("rate limit overrides: %w", err)
	}
	var doc struct {
		Overrides []RateOverride `json:"overrides"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("rate limit overrides %s: %w", path, err)
	}
	seen := map[[2]string]bool{}
	for i, o := range doc.Overrides {
		switch {
		case o.Subject == "":
			return nil, fmt.Errorf("rate limit overrides %s: overrides[%d]: subject is required", path, i)
		case o.PerMinute <= 0 || o.Burst < 0:
			return nil, fmt.Errorf("rate limit overrides %s: overrides[%d]: per_minute must be positive and burst not negative", path, i)
		case seen[[2]string{o.Issuer, o.Subject}]:
			return nil, fmt.Errorf("rate limit overrides %s: overrides[%d]: duplicate subject %q", path, i, o.Subject)
		}
		seen[[2]string{o.Issuer, o.Subject}] = true
	}
	return doc.Overrides, nil
}

// RateLimiter charges each authenticated caller — the pair (issuer,
// subject) — against its limit: the default, or an override. It keeps
// budgets in its RateStore; when that store fails (Redis down) it falls
// back to a budget in this replica's memory for a few seconds rather than
// refusing service or dropping the limit, and counts the failure.
type RateLimiter struct {
	store     RateStore
	fallback  *MemoryRateStore
	def       Limit
	overrides map[[2]string]Limit
	metrics   *Metrics
	log       *zap.Logger
	now       func() time.Time

	// After a store failure the limiter uses its memory for
	// storeBackoff instead of waiting on the store for every request.
	mu        sync.Mutex
	skipUntil time.Time
}

// storeBackoff is how long the limiter stays on its memory fallback after
// the store (Redis) failed.
const storeBackoff = 5 * time.Second

// NewRateLimiter returns a limiter charging def (or an override) to each
// caller in store; a nil store means memory. now is the clock of the
// memory stores.
func NewRateLimiter(store RateStore, def Limit, overrides []RateOverride, m *Metrics, log *zap.Logger, now func() time.Time) (*RateLimiter, error) {
	if !def.valid() {
		return nil, fmt.Errorf("rate limit: invalid default limit %+v", def)
	}
	if log == nil {
		log = zap.NewNop()
	}
	if now == nil {
		now = time.Now
	}
	fallback := NewMemoryRateStore(now)
	if store == nil {
		store = fallback
	}
	l := &RateLimiter{store: store, fallback: fallback, def: def, overrides: map[[2]string]Limit{}, metrics: m, log: log, now: now}
	for _, o := range overrides {
		l.overrides[[2]string{o.Issuer, o.Subject}] = PerMinute(o.PerMinute, o.Burst)
	}
	return l, nil
}

// LimitFor returns the limit of p.
func (l *RateLimiter) LimitFor(p audit.Principal) Limit {
	if lim, ok := l.overrides[[2]string{p.Issuer, p.Subject}]; ok {
		return lim
	}
	if lim, ok := l.overrides[[2]string{"", p.Subject}]; ok {
		return lim
	}
	return l.def
}

// rateKey names a caller's budget without putting the identity in clear
// into Redis.
func rateKey(p audit.Principal) string {
	sum := sha256.Sum256([]byte(p.Issuer + "\x00" + p.Subject))
	return "pgxsafety:ratelimit:" + hex.EncodeToString(sum[:16])
}

func (l *RateLimiter) allow(ctx context.Context, key string, lim Limit, n int) Decision {
	l.mu.Lock()
	skip := l.now().Before(l.skipUntil)
	l.mu.Unlock()
	if !skip {
		d, err := l.store.AllowN(ctx, key, lim, n)
		if err == nil {
			return d
		}
		l.metrics.rateBackendError()
		l.mu.Lock()
		l.skipUntil = l.now().Add(storeBackoff)
		l.mu.Unlock()
		l.log.Warn("rate-limit store failed; limiting with this replica's memory",
			zap.Duration("retry_store_after", storeBackoff), zap.Error(err))
	}
	d, err := l.fallback.AllowN(ctx, key, lim, n)
	if err != nil {
		// Only an invalid limit fails in memory, and limits are checked
		// when configured.
		return Decision{Allowed: false, RetryAfter: time.Second}
	}
	return d
}

// rateState lets a handler charge more units to the caller of its
// request (RateLimitCost).
type rateState struct {
	l   *RateLimiter
	key string
	lim Limit
	w   http.ResponseWriter
}

type rateStateKey struct{}

// setHeaders writes the RateLimit headers of d (IETF draft
// "RateLimit header fields for HTTP").
func setRateHeaders(h http.Header, lim Limit, d Decision) {
	h.Set("RateLimit-Limit", strconv.Itoa(lim.Rate))
	h.Set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(ceilSeconds(d.ResetAfter)))
	h.Set("RateLimit-Policy", fmt.Sprintf("%d;w=%d;burst=%d", lim.Rate, int(lim.Period.Seconds()), lim.Burst))
}

func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d.Seconds()))
}

// tooManyRequests is the 429 problem for a refused charge.
func tooManyRequests(lim Limit, d Decision) *Error {
	retry := max(ceilSeconds(d.RetryAfter), 1)
	return &Error{
		Kind:   KindRateLimited,
		Detail: fmt.Sprintf("rate limit of %d requests per %s exceeded; retry after %d s", lim.Rate, lim.Period, retry),
		Header: http.Header{"Retry-After": {strconv.Itoa(retry)}},
	}
}

// RateLimit charges one unit per request to the authenticated caller (the
// principal put into the context by Authenticate); requests without a
// principal (the public endpoints) are not limited. Every limited
// response carries RateLimit-Limit, -Remaining, -Reset and -Policy; a
// refused request gets a 429 problem with Retry-After. A nil limiter
// limits nothing.
func RateLimit(l *RateLimiter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if l == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, ok := Principal(r.Context())
			if !ok {
				next.ServeHTTP(w, r)
				return
			}
			key, lim := rateKey(p), l.LimitFor(p)
			d := l.allow(r.Context(), key, lim, 1)
			setRateHeaders(w.Header(), lim, d)
			if !d.Allowed {
				l.metrics.rateLimited()
				WriteProblem(w, r, tooManyRequests(lim, d))
				return
			}
			st := &rateState{l: l, key: key, lim: lim, w: w}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), rateStateKey{}, st)))
		})
	}
}

// RateLimitCost charges n more units to the caller of r, beyond the one
// unit every request costs, and returns a 429 *Error (with Retry-After)
// when the caller's budget cannot cover them; nothing is charged then.
// Handlers of expensive requests call it after validating the input and
// before doing the work. The documented rule for batches (docs/rest-api.md)
// is: a batch counts as one request plus one unit per started 100 rows or
// drugs, i.e. RateLimitCost(r, (rows+99)/100). n is capped at the caller's
// burst less the request's own unit, so the largest batch a caller may
// send empties a full budget rather than being refused forever. It returns
// nil when no rate limiter applies (public endpoints, tests) or n <= 0.
func RateLimitCost(r *http.Request, n int) error {
	st, ok := r.Context().Value(rateStateKey{}).(*rateState)
	if !ok {
		return nil
	}
	n = min(n, st.lim.Burst-1)
	if n <= 0 {
		return nil
	}
	d := st.l.allow(r.Context(), st.key, st.lim, n)
	if !d.Allowed {
		// The headers set for the request's own unit stay: they say
		// what the caller has left.
		st.l.metrics.rateLimited()
		return tooManyRequests(st.lim, d)
	}
	setRateHeaders(st.w.Header(), st.lim, d)
	return nil
}
