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
