package cdshooks

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// TestHookIntakeMatchesEncodingJSON: the hook envelope read by the
// intake helper (one pass; members as sub-slices of the body) is what
// encoding/json gives for every hook request of the test data.
func TestHookIntakeMatchesEncodingJSON(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "cds", "requests", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no requests: %v", err)
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var want hookRequest
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		r := httptest.NewRequest(http.MethodPost, "/cds-services/pgx-order-sign", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		var got hookRequest
		if err := httpx.DecodeJSONExtensible(httptest.NewRecorder(), r, &got, HookBodyLimit); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decoded %+v, encoding/json %+v", filepath.Base(f), got, want)
		}
	}
}
