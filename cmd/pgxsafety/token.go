package main

import (
	"fmt"
	"io"
	"time"

	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// defaultTokenSubject is the subject of development tokens when --subject
// is not given.
const defaultTokenSubject = "local-developer"

// runToken prints a local development ID token that "serve" with the same
// data directory accepts (when no PGXSAFETY_OIDC_ISSUER is configured).
// Only the token goes to stdout, so $(pgxsafety token) works in a shell.
func runToken(args []string, stdout, stderr io.Writer) error {
	env, err := readEnvironment()
	if err != nil {
		return err
	}
	fs := newFlagSet("token", stderr, "token [--subject NAME] [--ttl DURATION] [--data-dir DIR]")
	subject := fs.String("subject", defaultTokenSubject, "the token's subject (the caller recorded in the audit log)")
	ttl := fs.Duration("ttl", time.Hour, "lifetime of the token (at most 24h)")
	dataDir := fs.String("data-dir", env.DataDir, "data directory holding the development signing key (env PGXSAFETY_DATA_DIR)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if env.OIDCIssuer != "" {
		return usageError("token mints local development tokens only, and PGXSAFETY_OIDC_ISSUER is set: " +
			"get an ID token from that issuer instead")
	}
	if *ttl <= 0 || *ttl > httpx.DevMaxTTL {
		return usageError("token: --ttl must be positive and at most %s, got %s", httpx.DevMaxTTL, *ttl)
	}
	key, err := httpx.LoadOrCreateDevKey(*dataDir)
	if err != nil {
		return err
	}
	tok, err := httpx.MintDevToken(key, *subject, *ttl, time.Now())
	if err != nil {
		return usageError("token: %v", err)
	}
	_, err = fmt.Fprintln(stdout, tok)
	return err
}
