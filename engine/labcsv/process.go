package labcsv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
)

// This file is the engine side of a lab CSV batch, shared by
// POST /pgx/batch_csv and "pgxsafety batch": it reads the file record by
// record, evaluates every row with evaluate.Engine.Evaluate on all cores, and hands
// the results back in file order, a chunk at a time. Memory is flat in the
// number of rows: at most a few chunks are in flight, and the result cache
// has a fixed byte budget.

// Defaults of a Processor.
const (
	// DefaultChunkRows is the number of rows per chunk. A chunk is the unit
	// of audit (one entry per chunk) and of release (NDJSON lines are
	// flushed per chunk).
	DefaultChunkRows = 500
	// DefaultResultCacheBytes is the byte budget of the per-run result
	// cache.
	DefaultResultCacheBytes = 16 << 20
)

// MaxDrugBytes bounds the drug column of a row.
const MaxDrugBytes = engine.MaxDrugNameBytes

// Options configures a Processor.
type Options struct {
	// MaxRows is the largest number of data rows accepted; 0 means no
	// limit. More rows end the run with a *RowLimitError.
	MaxRows int
	// Workers evaluating rows; 0 means GOMAXPROCS.
	Workers int
	// ChunkRows is the number of rows per chunk; 0 means DefaultChunkRows.
	ChunkRows int
	// CacheBytes is the byte budget of the result cache; 0 means
	// DefaultResultCacheBytes, a negative value disables the cache.
	CacheBytes int
	// Wire maps a row's result to the value encoded as the row's result
	// JSON: the REST wire form (pgxapi.WireResult). Required.
	Wire func(engine.Result) any
	// NoDigest leaves Row.ResultDigest empty. Only for a caller that
	// neither audits nor shows the digest ("pgxsafety batch", which writes
	// no audit entry): hashing every result costs a few per cent of a
	// row's CPU. The service's audited batch never sets it.
	NoDigest bool
}

// Processor evaluates lab CSV files. It is safe for concurrent use;
// each Run has its own cache.
type Processor struct {
	kb   *evaluate.Engine
	opts Options
}

// NewProcessor returns a processor evaluating against kb.
func NewProcessor(kb *evaluate.Engine, opts Options) *Processor {
	if opts.Wire == nil {
		panic("labcsv: Options.Wire is required")
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.ChunkRows <= 0 {
		opts.ChunkRows = DefaultChunkRows
	}
	if opts.CacheBytes == 0 {
		opts.CacheBytes = DefaultResultCacheBytes
	}
	return &Processor{kb: kb, opts: opts}
}

// RowLimitError ends a run whose file has more than the allowed number of
// data rows.
type RowLimitError struct{ Limit int }

// Error names the limit.
func (e *RowLimitError) Error() string {
	return fmt.Sprintf("the file has more than %d data rows (the limit)", e.Limit)
}

// RowInput is the parsed input of one row.
type RowInput struct {
	Drug       string `json:"drug"`
	Variants   string `json:"variants"`
	State      string `json:"state"`
	Ethnicity  string `json:"ethnicity"`
	Indication string `json:"indication"`
	PatientRef string `json:"patient_ref"`
}

// Row is the outcome of one data row.
type Row struct {
	// Row is the 1-based data row number (blank lines and the header are
	// not counted); Line is the physical line on which the row starts.
	Row  int
	Line int
	// Input is nil when the record could not be split into fields.
	Input *RowInput
	OK    bool
	// Result is the compact JSON of the row's result in its wire form
	// (Options.Wire; read only; it
	// may be shared with other rows). ResultDigest is "sha256:" and the
	// hex SHA-256 of exactly these bytes ("" with Options.NoDigest).
	Result       []byte
	ResultDigest string
	// OverallSeverity is the result's overall severity (when OK).
	OverallSeverity engine.Severity
	Error           *RowError
}

// PatientRef returns the row's patient_ref, or "" when the row could not
// be split into fields.
func (r *Row) PatientRef() string {
	if r.Input == nil {
		return ""
	}
	return r.Input.PatientRef
}

// Chunk is a run of consecutive rows, in file order.
type Chunk struct {
	// Index counts chunks from 0.
	Index int
	Rows  []Row

	records []rawRecord
	done    chan struct{}
}

// rawRecord is a record as the reader hands it to a worker.
type rawRecord struct {
	row, line int
	fields    [len(Columns)]string
	nfields   int
	err       *RowError
}

// Stats counts the rows of a run.
type Stats struct {
	Rows      int
	Succeeded int
	Failed    int
	// CacheHits counts rows answered from the run's result cache.
	CacheHits int
}

// Run reads a lab CSV from r, evaluates every row and calls emit with each
// chunk, in file order, from the calling goroutine. Chunks are not reused:
// emit may keep one after it returns (its Rows are read only). Run returns
// after every goroutine it started has stopped.
//
// Errors: a bad header, an empty file or a file with a header and no data
// rows is an *engine.ValidationError naming "file" or "header", reported
// before emit is first called; more than MaxRows rows is a
// *RowLimitError, and an error reading r is returned as it is, in both
// cases after the chunks read before it were emitted; an error of emit
// stops the run and is returned as it is; a cancelled ctx is returned
// wrapped.
func (p *Processor) Run(ctx context.Context, r io.Reader, emit func(*Chunk) error) (Stats, error) {
	var stats Stats
	lr := newLabCSVReader(r)
	if err := lr.readHeader(); err != nil {
		return stats, err
	}
	// The first chunk is read here, so that a header-only file is a
	// validation error before anything is emitted.
	first, err := p.readChunk(lr, 0, 0)
	if err != nil {
		return stats, err
	}
	if len(first.records) == 0 {
		return stats, fileError("file", "has a header but no data rows")
	}

	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cache := newResultCache(p.opts.CacheBytes)
	work := make(chan *Chunk, p.opts.Workers)
	order := make(chan *Chunk, p.opts.Workers+1)
	var (
		wg      sync.WaitGroup
		readErr error
		hits    = make([]int, p.opts.Workers)
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(work)
		defer close(order)
		c := first
		rows := len(first.records)
		for len(c.records) > 0 {
			select {
			case order <- c:
			case <-ctx.Done():
				return
			}
			select {
			case work <- c:
			case <-ctx.Done():
				return
			}
			if len(c.records) < p.opts.ChunkRows {
				return // the file ended inside this chunk
			}
			next, err := p.readChunk(lr, c.Index+1, rows)
			if err != nil {
				// The chunks already read are still emitted (in NDJSON
				// they are valid rows before the problem); Run returns
				// readErr after them.
				readErr = err
				return
			}
			rows += len(next.records)
			c = next
		}
	}()
	for w := 0; w < p.opts.Workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			ev := newRowEvaluator(p.kb, cache, p.opts.Wire)
			ev.noDigest = p.opts.NoDigest
			for c := range work {
				c.Rows = make([]Row, len(c.records))
				for i := range c.records {
					if ctx.Err() != nil {
						break
					}
					ev.evaluate(&c.records[i], &c.Rows[i])
				}
				close(c.done)
			}
			hits[w] = ev.hits
		}(w)
	}

	var emitErr error
	for c := range order {
		select {
		case <-c.done:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		if err := emit(c); err != nil {
			emitErr = err
			cancel()
			break
		}
		for i := range c.Rows {
			stats.Rows++
			if c.Rows[i].OK {
				stats.Succeeded++
			} else {
				stats.Failed++
			}
		}
	}
	cancel()
	for range order {
		// Drain so the reader can stop.
	}
	wg.Wait()
	for _, h := range hits {
		stats.CacheHits += h
	}
	switch {
	case emitErr != nil:
		return stats, emitErr
	case readErr != nil:
		return stats, readErr
	}
	if err := parent.Err(); err != nil {
		return stats, fmt.Errorf("batch stopped after %d rows: %w", stats.Rows, err)
	}
	return stats, nil
}

// readChunk reads up to ChunkRows data records. rowsBefore is the number of
// data rows already read.
func (p *Processor) readChunk(lr *labCSVReader, index, rowsBefore int) (*Chunk, error) {
	c := &Chunk{Index: index, done: make(chan struct{})}
	for len(c.records) < p.opts.ChunkRows {
		rec, err := lr.nextRecord()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		n := rowsBefore + len(c.records) + 1
		if p.opts.MaxRows > 0 && n > p.opts.MaxRows {
			return nil, &RowLimitError{Limit: p.opts.MaxRows}
		}
		raw := rawRecord{row: n, line: rec.line, err: rec.err}
		if rec.err == nil {
			raw.nfields = len(rec.fields)
			copy(raw.fields[:], rec.fields)
		}
		c.records = append(c.records, raw)
	}
	return c, nil
}

// rowEvaluator evaluates rows for one worker.
type rowEvaluator struct {
	kb    *evaluate.Engine
	cache *resultCache
	wire  func(engine.Result) any
	// noDigest: Options.NoDigest.
	noDigest bool
	buf      bytes.Buffer
	enc      *json.Encoder
	// scratch is where a jsonAppender wire form encodes itself.
	scratch []byte
	key     []byte
	hits    int
}

func newRowEvaluator(kb *evaluate.Engine, cache *resultCache, wire func(engine.Result) any) *rowEvaluator {
	ev := &rowEvaluator{kb: kb, cache: cache, wire: wire}
	ev.enc = json.NewEncoder(&ev.buf)
	ev.enc.SetEscapeHTML(false)
	return ev
}

// cachedResult is the outcome of one distinct row input.
type cachedResult struct {
	result   []byte
	digest   string
	severity engine.Severity
	err      *RowError
}

func (ev *rowEvaluator) evaluate(raw *rawRecord, out *Row) {
	out.Row, out.Line = raw.row, raw.line
	if raw.err != nil {
		out.Error = raw.err
		return
	}
	f := raw.fields
	if raw.nfields != len(Columns) {
		// The fields cannot be told apart, so none is echoed (not even
		// patient_ref): Row and Line identify the row.
		detail := fmt.Sprintf("the row has %d fields; %d are required (%s)", raw.nfields, len(Columns), Header)
		field := "record"
		if raw.nfields < len(Columns) {
			field = Columns[raw.nfields]
			detail += "; " + field + " is missing"
		}
		if raw.nfields > len(Columns) {
			detail += "; an unquoted comma inside a value (indication?) splits it: quote that value"
		}
		out.Error = &RowError{Code: RowErrColumnCount, Field: field, Detail: detail}
		return
	}
	for i, v := range f {
		if !utf8.ValidString(v) {
			// Not echoed: the row is not text.
			out.Error = &RowError{Code: RowErrEncoding, Field: Columns[i], Detail: "the value is not valid UTF-8 text; save the file as UTF-8"}
			return
		}
	}
	out.Input = &RowInput{Drug: f[0], Variants: f[1], State: f[2], Ethnicity: f[3], Indication: f[4], PatientRef: f[5]}
	if f[0] == "" {
		out.Error = &RowError{Code: RowErrMissingValue, Field: "drug", Detail: "drug is required"}
		return
	}
	if len(f[0]) > MaxDrugBytes {
		// A name this long is not a drug, and matching it against the
		// knowledge for "did you mean" costs time in proportion.
		out.Error = &RowError{Code: RowErrInvalidValue, Field: "drug", Detail: fmt.Sprintf("drug must be at most %d bytes", MaxDrugBytes)}
		return
	}
	ev.key = appendKey(ev.key[:0], f[:5])
	cr, ok := ev.cache.get(ev.key)
	if ok {
		ev.hits++
	} else {
		cr = ev.compute(f)
		ev.cache.put(ev.key, cr)
	}
	out.Result, out.ResultDigest, out.OverallSeverity, out.Error = cr.result, cr.digest, cr.severity, cr.err
	out.OK = cr.err == nil
}

// compute evaluates one row input that is not cached.
func (ev *rowEvaluator) compute(f [len(Columns)]string) *cachedResult {
	variants, zyg, verr := parseVariants(f[1])
	if verr != nil {
		return &cachedResult{err: verr}
	}
	req := engine.Request{
		Drug:       f[0],
		Variants:   variants,
		Zygosity:   zyg,
		State:      f[2],
		Ethnicity:  f[3],
		Indication: f[4],
	}
	res, err := ev.kb.Evaluate(req)
	if err != nil {
		var ve *engine.ValidationError
		if errors.As(err, &ve) && len(ve.Fields) > 0 {
			parts := make([]string, len(ve.Fields))
			for i, fe := range ve.Fields {
				parts[i] = fe.Field + ": " + fe.Reason
			}
			code := RowErrInvalidValue
			if ve.Fields[0].Field == "drug" {
				code = RowErrMissingValue
			}
			return &cachedResult{err: &RowError{Code: code, Field: ve.Fields[0].Field, Detail: strings.Join(parts, "; ")}}
		}
		// Evaluate reports only validation errors; anything else is
		// reported on the row without internals.
		return &cachedResult{err: &RowError{Code: RowErrInvalidValue, Field: "record", Detail: "the row could not be evaluated"}}
	}
	b, err := ev.encode(ev.wire(res))
	if err != nil {
		return &cachedResult{err: &RowError{Code: RowErrInvalidValue, Field: "record", Detail: "the row's result could not be encoded"}}
	}
	result := append(make([]byte, 0, len(b)), b...)
	cr := &cachedResult{result: result, severity: res.OverallSeverity}
	if !ev.noDigest {
		sum := sha256.Sum256(result)
		cr.digest = "sha256:" + hex.EncodeToString(sum[:])
	}
	return cr
}

// jsonAppender is a wire form that encodes itself without reflection
// (pgxapi.Result): AppendJSON with escapeHTML false appends exactly what
// an Encoder with SetEscapeHTML(false) writes, less its newline, or fails
// where encoding/json fails.
type jsonAppender interface {
	AppendJSON(dst []byte, escapeHTML bool) ([]byte, error)
}

// encode returns w as encoding/json encodes it with HTML escaping off,
// without the newline, in ev's scratch space (valid until the next call).
// A jsonAppender encodes itself; where it fails, encoding/json is asked,
// so the error is encoding/json's.
func (ev *rowEvaluator) encode(w any) ([]byte, error) {
	if a, ok := w.(jsonAppender); ok {
		b, err := a.AppendJSON(ev.scratch[:0], false)
		ev.scratch = b
		if err == nil {
			return b, nil
		}
	}
	ev.buf.Reset()
	if err := ev.enc.Encode(w); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(ev.buf.Bytes(), []byte("\n")), nil
}

// splitVariants splits the variants column: rsIDs separated by
// semicolons; white space around items and empty items are dropped.
func splitVariants(s string) []string {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ";")
	out := parts[:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// parseVariants reads the variants column: items separated by
// semicolons, each an rsID optionally followed by ":" and its zygosity
// (het, hom or hemi, any case): "rs116855232:hom;rs1142345". An rsID given
// twice in one row is an error naming it, never a silent merge (two
// copies are written rs…:hom). Item syntax beyond that (is it an rsID?)
// is left to the engine, which names the bad item.
func parseVariants(s string) ([]string, map[string]engine.Zygosity, *RowError) {
	var variants []string
	var zyg map[string]engine.Zygosity
	seen := map[string]string{}
	for _, item := range splitVariants(s) {
		rs, z, hasZ := strings.Cut(item, ":")
		rs = strings.TrimSpace(rs)
		key, _ := calling.NormaliseRsID(rs)
		if prev, dup := seen[key]; dup {
			return nil, nil, &RowError{Code: RowErrInvalidValue, Field: "variants",
				Detail: fmt.Sprintf("%s appears more than once in the row (%q and %q); give each variant once, with its zygosity for two copies (%s:hom)", rs, prev, item, rs)}
		}
		seen[key] = item
		variants = append(variants, rs)
		if !hasZ {
			continue
		}
		switch zz := engine.Zygosity(strings.ToLower(strings.TrimSpace(z))); zz {
		case engine.Het, engine.Hom, engine.Hemi:
			if zyg == nil {
				zyg = map[string]engine.Zygosity{}
			}
			zyg[rs] = zz
		default:
			return nil, nil, &RowError{Code: RowErrInvalidValue, Field: "variants",
				Detail: fmt.Sprintf("zygosity %q of %s must be het, hom or hemi", strings.TrimSpace(z), rs)}
		}
	}
	return variants, zyg, nil
}

// appendKey appends the cache key of a row's engine inputs: the five
// columns, each length-prefixed so no two inputs share a key.
func appendKey(dst []byte, fields []string) []byte {
	for _, f := range fields {
		dst = strconv.AppendInt(dst, int64(len(f)), 10)
		dst = append(dst, ':')
		dst = append(dst, f...)
	}
	return dst
}

// resultCache memoises row results within one run: evaluate.Engine.Evaluate is
// pure, so equal inputs give equal results (lab files repeat the same
// drug, genotype and context on many rows). It is sharded and has a byte
// budget; a shard that would exceed its share is emptied.
type resultCache struct {
	seed   maphash.Seed
	shards []cacheShard
	max    int
}

type cacheShard struct {
	mu    sync.Mutex
	m     map[string]*cachedResult
	bytes int
}

const cacheShards = 16

func newResultCache(budget int) *resultCache {
	if budget <= 0 {
		return nil
	}
	c := &resultCache{seed: maphash.MakeSeed(), shards: make([]cacheShard, cacheShards), max: budget / cacheShards}
	for i := range c.shards {
		c.shards[i].m = map[string]*cachedResult{}
	}
	return c
}

func (c *resultCache) shard(key []byte) *cacheShard {
	return &c.shards[maphash.Bytes(c.seed, key)%cacheShards]
}

func (c *resultCache) get(key []byte) (*cachedResult, bool) {
	if c == nil {
		return nil, false
	}
	s := c.shard(key)
	s.mu.Lock()
	r, ok := s.m[string(key)]
	s.mu.Unlock()
	return r, ok
}

func (c *resultCache) put(key []byte, r *cachedResult) {
	if c == nil {
		return
	}
	size := len(key) + len(r.result) + len(r.digest) + 64
	if r.err != nil {
		size += len(r.err.Detail) + len(r.err.Field)
	}
	if size > c.max {
		return
	}
	s := c.shard(key)
	s.mu.Lock()
	if s.bytes+size > c.max {
		clear(s.m)
		s.bytes = 0
	}
	if _, ok := s.m[string(key)]; !ok {
		s.m[string(key)] = r
		s.bytes += size
	}
	s.mu.Unlock()
}
