package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkCLIBatch measures "pgxsafety batch FILE --format ndjson"
// end to end in the process (knowledge load, read, evaluate on all cores,
// NDJSON output to a discarded standard output) and reports rows/s. The
// files: "patient-distinct", the bench command's CSV (every row its own
// patient_ref, 64 distinct engine inputs); "input-distinct", the same with
// the row number in the indication (every row evaluated). For CPU per row,
// run with a fixed count and compare user time, e.g.
//
//	go test -c -o $TMPDIR/cmd.test ./cmd/pgxsafety
//	$TMPDIR/cmd.test -test.run '^$' -test.bench 'CLIBatch/input' -test.benchtime 3x
func BenchmarkCLIBatch(b *testing.B) {
	const rows = 20000
	for _, bc := range []struct {
		name string
		data []byte
	}{{"patient-distinct", benchCSV(rows)}, {"input-distinct", benchCSVDistinctInputs(rows)}} {
		b.Run(bc.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "rows.csv")
			if err := os.WriteFile(path, bc.data, 0o600); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(bc.data)))
			n := 0
			for b.Loop() {
				if err := run(context.Background(), []string{"batch", path, "--format", "ndjson"}, io.Discard, io.Discard); err != nil {
					b.Fatal(err)
				}
				n += rows
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
