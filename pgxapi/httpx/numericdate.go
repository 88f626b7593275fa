package httpx

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// NumericDateClaims are the JWT claims that must be NumericDates.
var NumericDateClaims = []string{"exp", "nbf", "iat"}

// CheckNumericDates refuses a JWT payload in which "exp", "nbf" or "iat"
// is present but not a JSON number (RFC 7519 §2 NumericDate). jwx reads a
// string of digits as a date too; every token path calls this first so
// that none accepts what another refuses. Presence is not checked here.
func CheckNumericDates(payload []byte) error {
	var cl map[string]json.RawMessage
	if err := json.Unmarshal(payload, &cl); err != nil {
		return fmt.Errorf("the payload is not a JSON object")
	}
	for _, name := range NumericDateClaims {
		raw, ok := cl[name]
		if !ok {
			continue
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
			return fmt.Errorf("%q must be a JSON number (NumericDate)", name)
		}
	}
	return nil
}
