package engine

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is the kind of every input-validation error; transports map
// it to 422.
var ErrInvalid = errors.New("invalid input")

// FieldError names one invalid input field and why.
type FieldError struct {
	Field  string `json:"name"`
	Reason string `json:"reason"`
}

// ValidationError lists every invalid field of a request.
type ValidationError struct {
	Fields []FieldError
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = fmt.Sprintf("%s: %s", f.Field, f.Reason)
	}
	return "invalid input: " + strings.Join(parts, "; ")
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Unwrap() error { return ErrInvalid }
