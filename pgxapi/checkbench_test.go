package pgxapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// discardLog assigns ids and keeps no entry: the handler benchmark
// measures the surface, not a store.
type discardLog struct{ n atomic.Int64 }

func (d *discardLog) Append(_ context.Context, e audit.Entry) (audit.Entry, error) {
	e.ID = fmt.Sprintf("aud_%026d", d.n.Add(1))
	return e, nil
}

func (d *discardLog) Ping(context.Context) error { return nil }
func (d *discardLog) Backend() string            { return "discard" }
func (d *discardLog) Location() string           { return "discard" }

// BenchmarkCheckHandler measures POST /pgx/check in process through the
// middleware of httpx.Wrap, the router and the handler (intake,
// evaluation, audit entry to a log that keeps nothing, encoding and the
// enveloped write) into a ResponseRecorder: no network, no store.
func BenchmarkCheckHandler(b *testing.B) {
	const body = `{"drug":"clopidogrel","diplotypes":{"CYP2C19":"*2/*2"},"genes_tested":["CYP2C19"],"indication":"ACS PCI"}`
	h := handlerOn(&discardLog{}, ck, pgxapi.Config{RateLimitPerMinute: 60})
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/pgx/check", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}
