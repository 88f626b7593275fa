package cdshooks

import (
	"net/http"

	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// DecodeHookBody runs the hook handler's intake (httpx's JSON helper into
// the hook envelope) and nothing else, for BenchmarkOrderSignIntake.
func DecodeHookBody(w http.ResponseWriter, r *http.Request) error {
	var in hookRequest
	return httpx.DecodeJSONExtensible(w, r, &in, HookBodyLimit)
}
