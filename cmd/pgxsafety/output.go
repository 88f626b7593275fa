package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// writeIndentedJSON writes v as indented JSON without HTML escaping,
// encoding it fully before writing anything.
func writeIndentedJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// fieldErrors turns an *engine.ValidationError in err into one readable
// error headed by heading, naming each field through name; other errors
// are returned as they are.
func fieldErrors(err error, heading string, name func(string) string) error {
	var ve *engine.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var b strings.Builder
	b.WriteString(heading)
	for _, f := range ve.Fields {
		fmt.Fprintf(&b, "\n  %s: %s", name(f.Field), f.Reason)
	}
	return errors.New(b.String())
}

func sameName(s string) string { return s }
