package pgxapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/pgxapi"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// stallingAppender holds every append until its caller's context ends,
// then fails as the SQLite/PostgreSQL store does when the caller leaves.
type stallingAppender struct{ entered chan struct{} }

func (a stallingAppender) Append(ctx context.Context, _ audit.Entry) (audit.Entry, error) {
	a.entered <- struct{}{}
	<-ctx.Done()
	return audit.Entry{}, fmt.Errorf("audit store: append: %w", ctx.Err())
}

// TestClientCancellationIsNotAnAuditFailure: a client that disconnects
// while its answer waits for the audit log is logged at info level and
// counted under status 499, never as an error or a 503 audit-unavailable.
func TestClientCancellationIsNotAnAuditFailure(t *testing.T) {
	app := stallingAppender{entered: make(chan struct{}, 1)}
	svc := service.New(kb, ck, httpx.AuditIDs(app), fixedClock)
	router := httpx.NewRouter()
	pgxapi.New(svc, nil, zap.NewNop(), pgxapi.Config{}).Register(router)
	core, logs := observer.New(zapcore.DebugLevel)
	metrics := httpx.NewMetrics()
	srv := httptest.NewServer(httpx.Chain(router, httpx.Options{Log: zap.New(core), Metrics: metrics}))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/pgx/check",
		strings.NewReader(`{"drug":"clopidogrel","diplotypes":{"CYP2C19":"*2/*2"},"genes_tested":["CYP2C19"]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-app.entered
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled request got an answer")
	}
	// Closing the server waits for the handler to return.
	srv.Close()

	for _, e := range logs.All() {
		if e.Level >= zapcore.ErrorLevel {
			t.Errorf("logged at %v: %q %v", e.Level, e.Message, e.ContextMap())
		}
	}
	if n := logs.FilterMessage("request cancelled by the client").Len(); n != 1 {
		t.Errorf("%d cancellation log lines, want 1", n)
	}
	mfs, err := metrics.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() != "pgxsafety_http_request_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "status" {
					statuses[l.GetValue()] = true
				}
			}
		}
	}
	if !statuses["499"] || statuses["503"] {
		t.Errorf("request statuses recorded %v, want 499 and no 503", statuses)
	}
}
