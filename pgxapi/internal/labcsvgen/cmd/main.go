// Command labcsvgen writes a synthetic lab CSV (see package labcsvgen) for
// benchmarks, e.g.
//
//	go run ./pgxapi/internal/labcsvgen/cmd -rows 1000000 -o $TMPDIR/lab_1m.csv
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/pgxsafety/pgxsafety/pgxapi/internal/labcsvgen"
)

func main() {
	var (
		rows     = flag.Int("rows", 1000, "data rows")
		seed     = flag.Uint64("seed", 1, "pseudo-random seed")
		out      = flag.String("o", "", "output file (default stdout)")
		distinct = flag.Bool("distinct", false, "make every row's input unique (no two rows share a result)")
		badEvery = flag.Int("bad-every", 0, "write a bad row every N rows (0: none)")
	)
	flag.Parse()
	opt := labcsvgen.Options{Rows: *rows, Seed: *seed, Distinct: *distinct}
	if *badEvery > 0 {
		for r := *badEvery; r <= *rows; r += *badEvery {
			opt.BadRows = append(opt.BadRows, r)
		}
	}
	w := os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "labcsvgen:", err)
			os.Exit(1)
		}
		defer f.Close()
		w = f
	}
	if err := labcsvgen.Write(w, opt); err != nil {
		fmt.Fprintln(os.Stderr, "labcsvgen:", err)
		os.Exit(1)
	}
}
