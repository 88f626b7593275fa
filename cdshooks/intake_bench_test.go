package cdshooks_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pgxsafety/pgxsafety/cdshooks"
)

// BenchmarkOrderSignIntake measures the JSON intake of the 50-resource
// order-sign body (about 54 KB) alone: reading the body, the duplicate-key
// and case checks and the decode into the hook envelope. Count its
// instructions, not its time (the machine is shared):
//
//	go test -c -o cdshooks.test ./cdshooks
//	GOGC=off valgrind --tool=callgrind ./cdshooks.test -test.run '^$' -test.bench BenchmarkOrderSignIntake -test.benchtime 200x
func BenchmarkOrderSignIntake(b *testing.B) {
	body := fiftyResourceOrderSign(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/cds-services/pgx-order-sign", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if err := cdshooks.DecodeHookBody(httptest.NewRecorder(), req); err != nil {
			b.Fatal(err)
		}
	}
}
