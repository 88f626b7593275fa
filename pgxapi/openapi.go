package pgxapi

import (
	_ "embed"
	"net/http"
	"strconv"
)

// openAPIDocument is the OpenAPI 3.1 description of every endpoint the
// server serves (/pgx, /classifier_v2, /cds-services, the operational
// endpoints and /openapi.json itself). It is written by hand;
// openapi_test.go checks that it lists exactly the routes of the router
// and that real responses match its schemas.
//
//go:embed openapi.json
var openAPIDocument []byte

// openAPI serves GET /openapi.json. It needs no token. The document names
// no servers: clients use the URL they fetched it from.
func openAPI(w http.ResponseWriter, _ *http.Request) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(openAPIDocument)))
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(openAPIDocument) // a failed write means the client has gone
	return nil
}
