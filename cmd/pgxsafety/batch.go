package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/labcsv"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

const batchSynopsis = `batch FILE.csv [--out FILE] [--format json|ndjson] [--max-rows N]

Evaluates every row of a lab CSV (header ` + labcsv.Header + `)
offline with the same engine as POST /pgx/batch_csv, on all cores, and
writes one result per row. FILE "-" reads standard input. A failing row
fails alone; the exit status is 0 when the file was read to its end, even
if rows failed (the summary on stderr and the output say which). No audit
entry is written: an offline answer never leaves this machine through the
service. Progress goes to stderr: a bar when it is a terminal, a line every
few seconds otherwise.`

// batchNow is the clock of the progress display (tests replace it).
var batchNow = time.Now

// batchPlainEvery is how often progress lines are written when stderr is
// not a terminal; batchBarEvery how often the bar is redrawn.
const (
	batchPlainEvery = 5 * time.Second
	batchBarEvery   = 100 * time.Millisecond
	// batchFailuresShown bounds the failed rows listed in the summary.
	batchFailuresShown = 20
)

// parseInterspersed parses flags that may follow positional arguments
// ("batch FILE --out x") and returns the positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func runBatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("batch", stderr, batchSynopsis)
	var (
		outPath = fs.String("out", "", "write the results to FILE (default standard output); written in full or not at all")
		format  = fs.String("format", "json", "json (one document) or ndjson (one line per row, then a summary line)")
		maxRows = fs.Int("max-rows", 0, "refuse files with more data rows than this (0: no limit)")
	)
	name, err := parseOneFile(fs, args, "batch", "CSV", format)
	if err != nil {
		return err
	}
	if *maxRows < 0 {
		return usageError("batch: --max-rows must not be negative")
	}

	var (
		in   io.Reader
		size int64
	)
	if name == "-" {
		in = os.Stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("batch: %w", err)
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
		in = f
	}
	kb, err := loadKnowledge(stderr)
	if err != nil {
		return err
	}

	out, commit, abort, err := openBatchOutput(*outPath, stdout)
	if err != nil {
		return err
	}
	w := &batchWriter{streamWriter{w: bufio.NewWriterSize(out, 1<<20), ndjson: *format == "ndjson", kb: kb}}
	counter := &countingReader{r: in, h: sha256.New()}
	prog := newProgress(stderr, size)
	proc := labcsv.NewProcessor(kb, labcsv.Options{MaxRows: *maxRows, Wire: pgxapi.WireResult, NoDigest: true})
	w.begin()
	st, err := proc.Run(ctx, counter, func(c *labcsv.Chunk) error {
		if err := w.rows(c); err != nil {
			return err
		}
		prog.update(c, counter.n.Load())
		return nil
	})
	prog.done()
	if err != nil {
		abort()
		return batchError(err)
	}
	w.end(st, filepath.Base(name), hex.EncodeToString(counter.h.Sum(nil)))
	if err := w.commit("batch", commit, abort); err != nil {
		return err
	}
	prog.summary(st)
	return nil
}

// batchError turns a processing error into a readable message.
func batchError(err error) error {
	var ve *engine.ValidationError
	if errors.As(err, &ve) {
		return fieldErrors(err, "batch: the file cannot be processed:", sameName)
	}
	return fmt.Errorf("batch: %w", err)
}

// openBatchOutput returns the writer of the results. For a file, the
// results go to a temporary file beside it that commit renames into place
// and abort removes, so a failed run never leaves a partial file.
func openBatchOutput(path string, stdout io.Writer) (w io.Writer, commit func() error, abort func(), err error) {
	if path == "" || path == "-" {
		return stdout, func() error { return nil }, func() {}, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("batch: %w", err)
	}
	commit = func() error {
		if err := tmp.Close(); err != nil {
			_ = os.Remove(tmp.Name())
			return fmt.Errorf("batch: write %s: %w", path, err)
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			_ = os.Remove(tmp.Name())
			return fmt.Errorf("batch: %w", err)
		}
		return nil
	}
	abort = func() {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
	}
	return tmp, commit, abort, nil
}

// countingReader counts and hashes what the processor reads.
type countingReader struct {
	r io.Reader
	h hash.Hash
	n atomic.Int64
}

// Read implements io.Reader.
func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	c.n.Add(int64(n))
	return n, err
}

// batchWriter writes the results as one JSON document or as NDJSON.
type batchWriter struct{ streamWriter }

func (b *batchWriter) begin() { b.streamWriter.begin("results") }

func (b *batchWriter) rows(c *labcsv.Chunk) error {
	for i := range c.Rows {
		if err := b.item("row", func(buf []byte, kind string) []byte {
			return pgxapi.AppendRowJSON(buf, &c.Rows[i], "", kind)
		}); err != nil {
			return err
		}
	}
	return nil
}

// batchSummary closes the output: the counts and the input file's name and
// SHA-256.
type batchSummary struct {
	streamHead
	File          string `json:"file"`
	FileSHA256    string `json:"file_sha256"`
	RowsTotal     int    `json:"rows_total"`
	RowsSucceeded int    `json:"rows_succeeded"`
	RowsFailed    int    `json:"rows_failed"`
}

func (b *batchWriter) end(st labcsv.Stats, file, sum string) {
	s := batchSummary{File: file, FileSHA256: sum, RowsTotal: st.Rows, RowsSucceeded: st.Succeeded, RowsFailed: st.Failed}
	b.streamWriter.end(&s.streamHead, &s)
}

// progress reports on stderr.
type progress struct {
	progressDisplay
	rows     int
	failures []string
	failed   int
}

func newProgress(w io.Writer, size int64) *progress {
	return &progress{progressDisplay: newProgressDisplay(w, size)}
}

func (p *progress) update(c *labcsv.Chunk, read int64) {
	for i := range c.Rows {
		r := &c.Rows[i]
		p.rows++
		if r.OK || r.Error == nil {
			continue
		}
		p.failed++
		if len(p.failures) < batchFailuresShown {
			p.failures = append(p.failures, fmt.Sprintf("row %d (line %d): %s: %s: %s", r.Row, r.Line, r.Error.Field, r.Error.Code, r.Error.Detail))
		}
	}
	now, ok := p.due()
	if !ok {
		return
	}
	elapsed := now.Sub(p.start).Seconds()
	rate := 0.0
	if elapsed > 0 {
		rate = float64(p.rows) / elapsed
	}
	frac := -1.0
	if p.size > 0 && read > 0 {
		frac = min(float64(read)/float64(p.size), 1)
	}
	eta := progressETA(elapsed, frac)
	if p.tty {
		p.bar(frac, fmt.Sprintf("%s rows  %s rows/s  ETA %s", thousands(p.rows), thousands(int(rate)), eta))
		return
	}
	pct := ""
	if frac >= 0 {
		pct = fmt.Sprintf(" (%.0f%% of the file)", 100*frac)
	}
	fmt.Fprintf(p.w, "batch: %s rows%s, %s rows/s, ETA %s\n", thousands(p.rows), pct, thousands(int(rate)), eta)
}

func (p *progress) summary(st labcsv.Stats) {
	elapsed := batchNow().Sub(p.start)
	rate := ""
	if s := elapsed.Seconds(); s > 0 {
		rate = ", " + thousands(int(float64(st.Rows)/s)) + " rows/s"
	}
	fmt.Fprintf(p.w, "batch: %s rows: %s succeeded, %s failed (%s%s)\n",
		thousands(st.Rows), thousands(st.Succeeded), thousands(st.Failed), elapsed.Round(time.Millisecond), rate)
	if st.CacheHits > 0 {
		fmt.Fprintf(p.w, "  %s rows (%.0f%%) repeated an earlier row's inputs and shared its evaluation\n",
			thousands(st.CacheHits), 100*float64(st.CacheHits)/float64(max(st.Rows, 1)))
	}
	for _, f := range p.failures {
		fmt.Fprintf(p.w, "  %s\n", f)
	}
	if more := p.failed - len(p.failures); more > 0 {
		fmt.Fprintf(p.w, "  … and %s more failed rows (see the output)\n", thousands(more))
	}
}

// thousands formats n with comma separators.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
