package httpx

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// SecurityHeaders sets the standard hardening headers on every response
// before the handler runs (a handler may override them, for example a
// page that needs a wider Content-Security-Policy):
//
//	X-Content-Type-Options: nosniff
//	X-Frame-Options: DENY
//	Content-Security-Policy: default-src 'none'; frame-ancestors 'none'
//	Referrer-Policy: no-referrer
//	Cross-Origin-Opener-Policy: same-origin
//	Strict-Transport-Security: max-age=31536000 (only when hsts is true,
//	i.e. the public URL is https)
func SecurityHeaders(hsts bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("X-Frame-Options", "DENY")
			h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
			h.Set("Referrer-Policy", "no-referrer")
			h.Set("Cross-Origin-Opener-Policy", "same-origin")
			if hsts {
				h.Set("Strict-Transport-Security", "max-age=31536000")
			}
			next.ServeHTTP(w, r)
		})
	}
}

// CORS is the cross-origin policy. It is off (no CORS header is ever
// sent) unless AllowedOrigins lists origins; then a request whose Origin
// is listed gets Access-Control-Allow-Origin for that origin, and its
// preflight (OPTIONS with Access-Control-Request-Method) is answered 204
// without authentication. Wildcards are not supported.
type CORS struct {
	// AllowedOrigins are exact origins ("https://app.example.org").
	AllowedOrigins []string
}

// corsExposed are the response headers browsers may read.
const corsExposed = "X-Request-ID, Pgxsafety-Receipt, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, WWW-Authenticate"

// ParseCORSOrigins parses a comma-separated allowlist (the
// PGXSAFETY_CORS_ORIGINS setting). Each entry must be an http or https
// origin: scheme, host and optional port, nothing else. "*" is refused.
func ParseCORSOrigins(s string) ([]string, error) {
	var out []string
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		u, err := url.Parse(item)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
			u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return nil, fmt.Errorf("CORS origin %q is not an origin (scheme://host[:port]; wildcards are not supported)", item)
		}
		out = append(out, strings.ToLower(u.Scheme+"://"+u.Host))
	}
	return out, nil
}

// Middleware applies the policy.
func (c CORS) Middleware(next http.Handler) http.Handler {
	if len(c.AllowedOrigins) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Add("Vary", "Origin")
		if !slices.Contains(c.AllowedOrigins, strings.ToLower(origin)) {
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Expose-Headers", corsExposed)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
			h.Set("Access-Control-Allow-Methods", "GET, POST")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-Request-ID")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// CSPHashSource is the Content-Security-Policy source that allows exactly
// the inline text s ('sha256-' and its base64 SHA-256): pages allow their
// own inline style sheet and nothing else.
func CSPHashSource(s string) string {
	h := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'"
}
