package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/term"

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
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: batch: %v", errUsage, err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return usageError("batch: exactly one CSV file is required, got %d arguments", len(pos))
	}
	if *format != "json" && *format != "ndjson" {
		return usageError("batch: --format must be json or ndjson, got %q", *format)
	}
	if *maxRows < 0 {
		return usageError("batch: --max-rows must not be negative")
	}

	name := pos[0]
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
	w := &batchWriter{w: bufio.NewWriterSize(out, 1<<20), ndjson: *format == "ndjson", kb: kb}
	counter := &countingReader{r: in, h: sha256.New()}
	prog := newProgress(stderr, size)
	proc := labcsv.NewProcessor(kb, labcsv.Options{MaxRows: *maxRows, Wire: pgxapi.WireResult})
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
	if err := w.w.Flush(); err != nil {
		abort()
		return fmt.Errorf("batch: write results: %w", err)
	}
	if err := commit(); err != nil {
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
type batchWriter struct {
	w      *bufio.Writer
	ndjson bool
	kb     *engine.Knowledge
	buf    []byte
	n      int
}

func (b *batchWriter) begin() {
	if b.ndjson {
		return
	}
	head, _ := json.Marshal(struct {
		APIVersion        string `json:"api_version"`
		GroundingContract string `json:"grounding_contract"`
		KnowledgeVersion  string `json:"knowledge_version"`
	}{pgxapi.APIVersion, engine.GroundingContract, b.kb.Version.Label})
	b.w.Write(head[:len(head)-1])
	b.w.WriteString(`,"results":[`)
}

func (b *batchWriter) rows(c *labcsv.Chunk) error {
	for i := range c.Rows {
		b.buf = b.buf[:0]
		if b.ndjson {
			b.buf = pgxapi.AppendRowJSON(b.buf, &c.Rows[i], "", "row")
			b.buf = append(b.buf, '\n')
		} else {
			if b.n > 0 {
				b.buf = append(b.buf, ',')
			}
			b.buf = pgxapi.AppendRowJSON(b.buf, &c.Rows[i], "", "")
		}
		b.n++
		if _, err := b.w.Write(b.buf); err != nil {
			return fmt.Errorf("write results: %w", err)
		}
	}
	return nil
}

// batchSummary closes the output: the counts and the input file's name and
// SHA-256.
type batchSummary struct {
	Kind              string `json:"kind,omitempty"`
	APIVersion        string `json:"api_version,omitempty"`
	GroundingContract string `json:"grounding_contract,omitempty"`
	KnowledgeVersion  string `json:"knowledge_version,omitempty"`
	File              string `json:"file"`
	FileSHA256        string `json:"file_sha256"`
	RowsTotal         int    `json:"rows_total"`
	RowsSucceeded     int    `json:"rows_succeeded"`
	RowsFailed        int    `json:"rows_failed"`
}

func (b *batchWriter) end(st labcsv.Stats, file, sum string) {
	s := batchSummary{File: file, FileSHA256: sum, RowsTotal: st.Rows, RowsSucceeded: st.Succeeded, RowsFailed: st.Failed}
	if b.ndjson {
		s.Kind, s.APIVersion, s.GroundingContract, s.KnowledgeVersion = "summary", pgxapi.APIVersion, engine.GroundingContract, b.kb.Version.Label
		line, _ := json.Marshal(s)
		b.w.Write(append(line, '\n'))
		return
	}
	tail, _ := json.Marshal(s)
	b.w.WriteString("],")
	b.w.Write(tail[1:])
	b.w.WriteString("\n")
}

// progress reports on stderr.
type progress struct {
	w        io.Writer
	tty      bool
	size     int64
	start    time.Time
	last     time.Time
	rows     int
	drawn    bool
	failures []string
	failed   int
}

func newProgress(w io.Writer, size int64) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	now := batchNow()
	return &progress{w: w, tty: tty, size: size, start: now, last: now}
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
	now := batchNow()
	every := batchPlainEvery
	if p.tty {
		every = batchBarEvery
	}
	if now.Sub(p.last) < every {
		return
	}
	p.last = now
	elapsed := now.Sub(p.start).Seconds()
	rate := 0.0
	if elapsed > 0 {
		rate = float64(p.rows) / elapsed
	}
	eta := "?"
	frac := -1.0
	if p.size > 0 && read > 0 {
		frac = min(float64(read)/float64(p.size), 1)
		eta = time.Duration(elapsed * (1 - frac) / frac * float64(time.Second)).Round(time.Second).String()
	}
	if p.tty {
		const width = 30
		bar := strings.Repeat("?", width)
		if frac >= 0 {
			n := int(frac * width)
			bar = strings.Repeat("#", n) + strings.Repeat(".", width-n)
		}
		fmt.Fprintf(p.w, "\r\033[K[%s] %s rows  %s rows/s  ETA %s", bar, thousands(p.rows), thousands(int(rate)), eta)
		p.drawn = true
		return
	}
	pct := ""
	if frac >= 0 {
		pct = fmt.Sprintf(" (%.0f%% of the file)", 100*frac)
	}
	fmt.Fprintf(p.w, "batch: %s rows%s, %s rows/s, ETA %s\n", thousands(p.rows), pct, thousands(int(rate)), eta)
}

// done ends the progress bar line.
func (p *progress) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
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
