package main

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStreamWriterItems: items built in place in the output buffer or in
// the scratch buffer (items larger than the free space, of growing and
// shrinking sizes, across many buffer sizes) come out exactly as the
// items appended one after another, in both formats.
func TestStreamWriterItems(t *testing.T) {
	var items []string
	for i, n := range []int{1, 5, 40, 3, 200, 0, 17, 64, 65, 2, 500, 1, 33} {
		items = append(items, fmt.Sprintf(`{"i":%d,"s":%q}`, i, strings.Repeat("x", n)))
	}
	for _, ndjson := range []bool{false, true} {
		var want strings.Builder
		for i, it := range items {
			switch {
			case ndjson:
				want.WriteString(`{"kind":"k",` + it[1:] + "\n")
			case i > 0:
				want.WriteString("," + it)
			default:
				want.WriteString(it)
			}
		}
		for size := 16; size <= 1024; size += 7 {
			var out bytes.Buffer
			s := &streamWriter{w: bufio.NewWriterSize(&out, size), ndjson: ndjson}
			for _, it := range items {
				if err := s.item("k", func(buf []byte, kind string) []byte {
					if kind != "" {
						buf = append(buf, `{"kind":"`+kind+`",`...)
						return append(buf, it[1:]...)
					}
					return append(buf, it...)
				}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.w.Flush(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.String(), out.String()); diff != "" {
				t.Fatalf("ndjson %v, buffer %d (-want +got):\n%s", ndjson, size, diff)
			}
		}
	}
}
