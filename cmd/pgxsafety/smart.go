package main

import (
	"time"

	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/cdshooks/smart"
	"github.com/pgxsafety/pgxsafety/engine/service"
)

// smartSettings are the SMART review app's settings (docs/smart.md):
//
//	PGXSAFETY_SMART_EHRS         file of the registered EHRs (JSON); without
//	                             it the app answers but no EHR can launch it
//	                             and the cards carry no smart link
//	PGXSAFETY_SMART_SESSION_TTL  longest review session (default 1h; it also
//	                             ends when the access token expires)
type smartSettings struct {
	ehrs       []smart.EHR
	ehrsFile   string
	sessionTTL time.Duration
}

func loadSMARTSettings(publicURL string) (smartSettings, error) {
	var st smartSettings
	st.ehrsFile = envOr("PGXSAFETY_SMART_EHRS", "")
	if v := envOr("PGXSAFETY_SMART_SESSION_TTL", ""); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > 24*time.Hour {
			return st, usageError("PGXSAFETY_SMART_SESSION_TTL must be a positive duration up to 24h such as 30m, got %q", v)
		}
		st.sessionTTL = d
	}
	if st.ehrsFile == "" {
		return st, nil
	}
	if publicURL == "" {
		return st, usageError("PGXSAFETY_SMART_EHRS needs PGXSAFETY_PUBLIC_URL: the SMART redirect URI is built from it")
	}
	ehrs, err := smart.LoadEHRs(st.ehrsFile)
	if err != nil {
		return st, usageError("PGXSAFETY_SMART_EHRS: %v", err)
	}
	st.ehrs = ehrs
	return st, nil
}

// newSMARTApp builds the review app when a public URL is configured (nil
// otherwise: without it there is no redirect URI and no card links to it).
func newSMARTApp(cfg serveConfig, svc *service.Service, log *zap.Logger) (*smart.Server, error) {
	if cfg.publicURL == "" {
		return nil, nil
	}
	app, err := smart.New(smart.Config{PublicURL: cfg.publicURL, EHRs: cfg.smart.ehrs, SessionTTL: cfg.smart.sessionTTL},
		svc, log.Named("smart"))
	if err != nil {
		return nil, usageError("%v", err)
	}
	if app.Enabled() {
		log.Info("SMART review app enabled", zap.Int("registered_ehrs", len(cfg.smart.ehrs)),
			zap.String("launch_url", app.LaunchURL()), zap.String("redirect_uri", app.RedirectURI()))
	}
	return app, nil
}
