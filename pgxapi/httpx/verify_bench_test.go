package httpx_test

import (
	"context"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// BenchmarkVerifyToken verifies the same development token over and over,
// as a client reusing its ID token across requests does.
//
//	go test ./pgxapi/httpx -run '^$' -bench BenchmarkVerifyToken -benchmem
func BenchmarkVerifyToken(b *testing.B) {
	key, err := httpx.LoadOrCreateDevKey(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	v, err := httpx.NewDevVerifier(key, time.Now)
	if err != nil {
		b.Fatal(err)
	}
	tok, err := httpx.MintDevToken(key, "bench", time.Hour, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}
