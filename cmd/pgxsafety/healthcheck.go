package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// healthcheckTimeout bounds one probe (the container's HEALTHCHECK has its
// own, longer timeout).
const healthcheckTimeout = 5 * time.Second

// runHealthcheck probes the readiness endpoint of a running server: the
// image has no curl, so its HEALTHCHECK runs this. Exit status 0 when the
// answer is 200, 1 otherwise (the status or the failure is printed).
func runHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	env, err := readEnvironment()
	if err != nil {
		return err
	}
	fs := newFlagSet("healthcheck", stderr, "healthcheck [--url URL]")
	target := fs.String("url", readyzURL(env.Addr), "URL to probe (default: /readyz at PGXSAFETY_ADDR)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	u, err := url.Parse(*target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError("healthcheck: --url must be an absolute http(s) URL, got %q", *target)
	}
	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return usageError("healthcheck: %v", err)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %s: no answer: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", u.Redacted(), resp.Status)
	}
	fmt.Fprintf(stdout, "%s: %s\n", u.Redacted(), resp.Status)
	return nil
}

// readyzURL is the /readyz URL of a server listening on addr: an
// unspecified host (0.0.0.0, ::, empty) is probed on loopback.
func readyzURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr + "/readyz"
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz"
}
