package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/cdshooks/smart"
	"github.com/pgxsafety/pgxsafety/cmd/pgxsafety/internal/redisstore"
	"github.com/pgxsafety/pgxsafety/engine/service"
)

// smartSessionKeyFileName is the default session key file in the data
// directory.
const smartSessionKeyFileName = "smart-session.key"

// smartSettings are the SMART review app's settings (docs/smart.md):
//
//	PGXSAFETY_SMART_EHRS             file of the registered EHRs (JSON);
//	                                 without it the app answers but no EHR
//	                                 can launch it and the cards carry no
//	                                 smart link
//	PGXSAFETY_SMART_SESSION_TTL      longest review session (default 1h; it
//	                                 also ends when the access token expires)
//	PGXSAFETY_SMART_SESSION_KEY_FILE the AES-256 key sealing the sessions
//	                                 kept in Redis (default
//	                                 <data dir>/smart-session.key, created
//	                                 when missing; replicas share it)
type smartSettings struct {
	ehrs           []smart.EHR
	ehrsFile       string
	sessionTTL     time.Duration
	sessionKeyFile string
}

// newSMARTApp builds the review app when a public URL is configured (nil
// otherwise: without it there is no redirect URI and no card links to it).
// With Redis (rdb set) launches and sessions are kept there, sealed, so
// any replica serves any step of a launch; without, in this process.
func newSMARTApp(cfg serveConfig, svc *service.Service, rdb *redis.Client, log *zap.Logger) (*smart.Server, error) {
	if cfg.publicURL == "" {
		return nil, nil
	}
	sc := smart.Config{PublicURL: cfg.publicURL, EHRs: cfg.smart.ehrs, SessionTTL: cfg.smart.sessionTTL}
	if rdb != nil {
		key, err := loadOrCreateSessionKey(cfg.smart.sessionKeyFile)
		if err != nil {
			return nil, err
		}
		sc.Shared, sc.SessionKey = redisstore.NewSMARTStore(rdb), key
	}
	app, err := smart.New(sc, svc, log.Named("smart"))
	if err != nil {
		return nil, usageError("%v", err)
	}
	if app.Enabled() {
		store := "memory"
		if rdb != nil {
			store = "redis"
		}
		log.Info("SMART review app enabled", zap.Int("registered_ehrs", len(cfg.smart.ehrs)),
			zap.String("launch_url", app.LaunchURL()), zap.String("redirect_uri", app.RedirectURI()),
			zap.String("session_store", store))
	}
	return app, nil
}

// loadOrCreateSessionKey reads the session key file (the key in standard
// base64 on one line); a missing file is created (mode 0600, in a
// directory of mode 0700) with a new random key. Of replicas creating it
// at once, one writes it and the others read it. A key file readable by
// group or others is refused.
func loadOrCreateSessionKey(path string) ([]byte, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("SMART session key: %w", err)
	}
	if f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		key := make([]byte, smart.SessionKeySize)
		if _, err := rand.Read(key); err != nil {
			f.Close()
			return nil, err
		}
		_, werr := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
		if err := errors.Join(werr, f.Close()); err != nil {
			return nil, fmt.Errorf("SMART session key: %w", err)
		}
		return key, nil
	} else if !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("SMART session key: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("SMART session key: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, usageError("PGXSAFETY_SMART_SESSION_KEY_FILE %s has mode %o: it must be readable by its owner only (chmod 600)", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("SMART session key: %w", err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != smart.SessionKeySize {
		return nil, usageError("PGXSAFETY_SMART_SESSION_KEY_FILE %s must hold %d random bytes in base64 on one line (openssl rand -base64 %d)",
			path, smart.SessionKeySize, smart.SessionKeySize)
	}
	return key, nil
}
