// Package labcsv is the lab CSV pipeline (spec §2.6, §2.7) shared by
// POST /pgx/batch_csv and "pgxsafety batch": a reader that splits a file
// into records so that a malformed row fails alone, and a Processor that
// evaluates every row with the engine on all cores and hands the results
// back in file order, a chunk at a time. It does not audit: the service
// layer (engine/service) audits each chunk before an adapter releases it.
package labcsv

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pgxsafety/pgxsafety/engine"
)

// This file splits a lab CSV (spec §2.6) into records. Parsing is done by
// encoding/csv, one record at a time; in front of it a small scanner that
// follows the same quoting rules finds where each record ends, so that a
// malformed row fails alone:
//
//   - encoding/csv lets a quoted field run to the end of the file when its
//     closing quote is missing, swallowing every later row (and holding them
//     all in memory). Here a quoted field may hold line breaks, but a record
//     may span at most MaxRecordLines lines and MaxRecordBytes bytes;
//     a quote still open after that, or at the end of the file, fails the
//     row where it opened, and reading resumes on the line after that row's
//     first line.
//   - A stray quote inside an unquoted field, or text after a closing
//     quote, fails its row (the record ends at the end of that line, as
//     encoding/csv reads it).
//
// Only records the scanner found well formed are handed to encoding/csv,
// which then reads exactly those bytes; a disagreement between the two is
// detected through csv.Reader.InputOffset and fails the row rather than
// misaligning the rest of the file.

// Columns is the required header of a lab CSV, in order (spec §2.6).
var Columns = [...]string{"drug", "variants", "state", "ethnicity", "indication", "patient_ref"}

// Header is Columns joined by commas, as a lab writes it.
const Header = "drug,variants,state,ethnicity,indication,patient_ref"

// Record limits of the lab CSV reader.
const (
	// MaxRecordBytes bounds one record (one row, all its lines).
	MaxRecordBytes = 64 << 10
	// MaxRecordLines bounds the physical lines one record may span
	// (quoted fields may contain line breaks).
	MaxRecordLines = 32
)

// Row error codes (the "code" of a failed row's error).
const (
	// RowErrMissingValue: a required column (drug) is empty.
	RowErrMissingValue = "missing_value"
	// RowErrInvalidValue: a value the engine rejects (a bad rsID).
	RowErrInvalidValue = "invalid_value"
	// RowErrColumnCount: the row does not have the six columns.
	RowErrColumnCount = "column_count"
	// RowErrBadQuoting: the row's quoting is malformed.
	RowErrBadQuoting = "bad_quoting"
	// RowErrTooLong: the row exceeds MaxRecordBytes.
	RowErrTooLong = "record_too_long"
	// RowErrEncoding: a field is not valid UTF-8.
	RowErrEncoding = "invalid_encoding"
)

// RowError says why one row of a batch failed: a machine-readable code,
// the column (or "record" for the row as a whole) and a readable detail.
type RowError struct {
	Code   string `json:"code"`
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

// csvRecord is one logical record of the file.
type csvRecord struct {
	// line is the 1-based physical line on which the record starts.
	line int
	// fields are the trimmed fields (valid until the next call) when err
	// is nil.
	fields []string
	// err is set when the record could not be split into fields.
	err *RowError
}

// physLine is one physical line, its terminator included. long marks a
// line cut at MaxRecordBytes (the rest was discarded).
type physLine struct {
	b    []byte
	line int
	long bool
}

// labCSVReader reads the records of a lab CSV.
type labCSVReader struct {
	br      *bufio.Reader
	started bool
	// next is the number of the next physical line read from br.
	next int
	eof  bool
	// pending holds lines given back after an unterminated quote, in
	// order; they are read again before br.
	pending []physLine

	feed    csvFeed
	cr      *csv.Reader
	fed     int64
	rec     []byte
	lineEnd []int
	fields  []string
}

// csvFeed hands encoding/csv exactly the bytes of one record.
type csvFeed struct{ b []byte }

// Read implements io.Reader.
func (f *csvFeed) Read(p []byte) (int, error) {
	if len(f.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, f.b)
	f.b = f.b[n:]
	return n, nil
}

func newLabCSVReader(r io.Reader) *labCSVReader {
	lr := &labCSVReader{br: bufio.NewReaderSize(r, MaxRecordBytes+1), next: 1}
	lr.resetCSV()
	return lr
}

func (lr *labCSVReader) resetCSV() {
	lr.feed.b = nil
	lr.cr = csv.NewReader(&lr.feed)
	lr.cr.FieldsPerRecord = -1
	lr.cr.TrimLeadingSpace = true
	lr.cr.ReuseRecord = true
	lr.fed = 0
}

// errUTF16 reports a file that starts with a UTF-16 byte-order mark.
var errUTF16 = errors.New("the file is UTF-16 encoded; save it as UTF-8")

// start strips a UTF-8 byte-order mark and rejects UTF-16.
func (lr *labCSVReader) start() error {
	lr.started = true
	b, err := lr.br.Peek(3)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	switch {
	case bytes.HasPrefix(b, []byte("\xEF\xBB\xBF")):
		_, _ = lr.br.Discard(3)
	case bytes.HasPrefix(b, []byte("\xFF\xFE")), bytes.HasPrefix(b, []byte("\xFE\xFF")):
		return errUTF16
	}
	return nil
}

// readLine returns the next physical line (terminator included; the last
// line may lack one). A line longer than MaxRecordBytes is returned
// truncated with long set, the rest of it discarded.
func (lr *labCSVReader) readLine() (physLine, error) {
	if n := len(lr.pending); n > 0 {
		l := lr.pending[0]
		lr.pending = lr.pending[1:]
		return l, nil
	}
	if lr.eof {
		return physLine{}, io.EOF
	}
	b, err := lr.br.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		l := physLine{b: append([]byte(nil), b...), line: lr.next, long: true}
		lr.next++
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = lr.br.ReadSlice('\n')
		}
		if errors.Is(err, io.EOF) {
			lr.eof = true
			err = nil
		}
		return l, err
	case errors.Is(err, io.EOF):
		lr.eof = true
		if len(b) == 0 {
			return physLine{}, io.EOF
		}
	case err != nil:
		return physLine{}, err
	}
	l := physLine{b: b, line: lr.next}
	lr.next++
	return l, nil
}

// quoteScan follows encoding/csv's quoting rules (comma separator,
// TrimLeadingSpace, no LazyQuotes) across the lines of one record.
type quoteScan struct {
	inQuote bool
	field   int
	// quoteField is the field of the first quoted field that was still
	// open at the end of a line.
	quoteField int
	openSeen   bool
	// off is the offset of the current line in the record; cut lists the
	// spans [start, end) of white space between a closing quote and the
	// next separator, which encoding/csv would reject and which are cut
	// before it parses the record.
	off int
	cut [][2]int
	// bad is "" or a description of the first quoting error; badField is
	// the 0-based field it is in.
	bad      string
	badField int
}

// scan consumes one physical line and reports whether the record goes on
// to the next line (an open quoted field).
func (s *quoteScan) scan(b []byte) (more bool) {
	// The terminator is not content: "\n", "\r\n", or a lone "\r" at the
	// end of the file (encoding/csv drops it).
	end := len(b)
	if end > 0 && b[end-1] == '\n' {
		end--
	}
	if end > 0 && b[end-1] == '\r' {
		end--
	}
	i := 0
	if s.inQuote {
		return s.quoted(b, &i, end)
	}
	for {
		// Leading white space is trimmed, as csv.Reader.TrimLeadingSpace
		// does (unicode.IsSpace).
		for i < end {
			r, n := utf8.DecodeRune(b[i:end])
			if !unicode.IsSpace(r) {
				break
			}
			i += n
		}
		if i < end && b[i] == '"' {
			i++
			s.inQuote = true
			if more := s.quoted(b, &i, end); more || s.bad != "" || i >= end {
				return more
			}
			continue
		}
		j := bytes.IndexByte(b[i:end], ',')
		stop := end
		if j >= 0 {
			stop = i + j
		}
		if bytes.IndexByte(b[i:stop], '"') >= 0 {
			s.bad, s.badField = `a quote (") appears inside an unquoted field; quote the whole field and double any quote inside it`, s.field
			return false
		}
		if j < 0 {
			return false
		}
		i = stop + 1
		s.field++
	}
}

// quoted scans inside a quoted field from *i. It returns true when the
// field is still open at the end of the line; otherwise *i is after the
// field's separator (or at end when the record ends).
func (s *quoteScan) quoted(b []byte, i *int, end int) bool {
	for {
		j := bytes.IndexByte(b[*i:end], '"')
		if j < 0 {
			*i = end
			if !s.openSeen {
				s.openSeen, s.quoteField = true, s.field
			}
			return true
		}
		*i += j + 1
		if *i < end && b[*i] == '"' {
			*i++
			continue
		}
		s.inQuote = false
		k := *i
		for k < end && (b[k] == ' ' || b[k] == '\t') {
			k++
		}
		if k > *i && (k == end || b[k] == ',') {
			s.cut = append(s.cut, [2]int{s.off + *i, s.off + k})
			*i = k
		}
		switch {
		case *i == end:
			return false
		case b[*i] == ',':
			*i++
			s.field++
			if *i == end {
				// A trailing comma ends the line with an empty last field.
				*i = end + 1
			}
			return false
		default:
			s.bad, s.badField = `text follows the closing quote of a quoted field`, s.field
			*i = end
			return false
		}
	}
}

// fieldName names the 0-based column i.
func fieldName(i int) string {
	if i >= 0 && i < len(Columns) {
		return Columns[i]
	}
	return "record"
}

// next returns the next record that is not blank. A record is blank when
// every field is empty after trimming (a blank line, or a line of commas
// as spreadsheets write them). It returns io.EOF at the end.
func (lr *labCSVReader) nextRecord() (csvRecord, error) {
	if !lr.started {
		if err := lr.start(); err != nil {
			return csvRecord{}, err
		}
	}
	for {
		rec, blank, err := lr.record()
		if err != nil {
			return csvRecord{}, err
		}
		if !blank {
			return rec, nil
		}
	}
}

// record reads one logical record.
func (lr *labCSVReader) record() (rec csvRecord, blank bool, err error) {
	first, err := lr.readLine()
	if err != nil {
		return csvRecord{}, false, err
	}
	rec.line = first.line
	if first.long {
		return lr.failed(rec, RowErrTooLong, "record", fmt.Sprintf("the line is longer than %d bytes", MaxRecordBytes)), false, nil
	}
	if len(bytes.TrimSpace(first.b)) == 0 {
		return rec, true, nil
	}
	lr.rec = append(lr.rec[:0], first.b...)
	lr.lineEnd = append(lr.lineEnd[:0], len(lr.rec))
	var s quoteScan
	more := s.scan(first.b)
	s.off = len(lr.rec)
	for more {
		l, err := lr.readLine()
		switch {
		case errors.Is(err, io.EOF):
			return lr.unterminated(rec, s.quoteField, "the file ends first"), false, nil
		case err != nil:
			return csvRecord{}, false, err
		case l.long:
			lr.pending = append([]physLine{l}, lr.pending...)
			return lr.unterminated(rec, s.quoteField, fmt.Sprintf("a line longer than %d bytes follows", MaxRecordBytes)), false, nil
		}
		lr.rec = append(lr.rec, l.b...)
		lr.lineEnd = append(lr.lineEnd, len(lr.rec))
		if len(lr.rec) > MaxRecordBytes || len(lr.lineEnd) > MaxRecordLines {
			return lr.unterminated(rec, s.quoteField, fmt.Sprintf("it would run past %d lines or %d bytes", MaxRecordLines, MaxRecordBytes)), false, nil
		}
		more = s.scan(l.b)
		s.off = len(lr.rec)
	}
	if s.bad != "" {
		if n := len(lr.lineEnd); n > 1 {
			// The quote opened on the first line most likely never
			// closed, and a quote further down was taken for its end:
			// fail the first line alone and read the others again.
			return lr.unterminated(rec, s.quoteField, fmt.Sprintf("a malformed quote follows on line %d", rec.line+n-1)), false, nil
		}
		return lr.failed(rec, RowErrBadQuoting, fieldName(s.badField), s.bad), false, nil
	}
	for i := len(s.cut) - 1; i >= 0; i-- {
		lr.rec = append(lr.rec[:s.cut[i][0]], lr.rec[s.cut[i][1]:]...)
	}
	return lr.parse(rec)
}

// unterminated fails a record whose quoted field did not close and gives
// back every line after its first, to be read again.
func (lr *labCSVReader) unterminated(rec csvRecord, field int, why string) csvRecord {
	var back []physLine
	for i := 1; i < len(lr.lineEnd); i++ {
		b := append([]byte(nil), lr.rec[lr.lineEnd[i-1]:lr.lineEnd[i]]...)
		back = append(back, physLine{b: b, line: rec.line + i})
	}
	lr.pending = append(back, lr.pending...)
	return lr.failed(rec, RowErrBadQuoting, fieldName(field),
		"a quoted field opened on this line is not closed ("+why+"); reading resumed on the next line")
}

func (lr *labCSVReader) failed(rec csvRecord, code, field, detail string) csvRecord {
	rec.err = &RowError{Code: code, Field: field, Detail: detail}
	return rec
}

// parse hands the record in lr.rec to encoding/csv.
func (lr *labCSVReader) parse(rec csvRecord) (csvRecord, bool, error) {
	if lr.rec[len(lr.rec)-1] != '\n' {
		lr.rec = append(lr.rec, '\n')
	}
	lr.feed.b = lr.rec
	lr.fed += int64(len(lr.rec))
	fields, err := lr.cr.Read()
	if err != nil || len(lr.feed.b) != 0 || lr.cr.InputOffset() != lr.fed {
		// The scanner and encoding/csv disagree: fail the row and start
		// a fresh csv.Reader so the next record is read from its start.
		lr.resetCSV()
		field := "record"
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			field = fieldName(bytes.Count(lr.rec[:min(max(pe.Column-1, 0), len(lr.rec))], []byte(",")))
		}
		return lr.failed(rec, RowErrBadQuoting, field, "the row's quoting is malformed"), false, nil
	}
	lr.fields = lr.fields[:0]
	blank := true
	for _, f := range fields {
		f = strings.TrimSpace(f)
		if f != "" {
			blank = false
		}
		lr.fields = append(lr.fields, f)
	}
	if blank {
		return csvRecord{}, true, nil
	}
	rec.fields = lr.fields
	return rec, false, nil
}

// readHeader reads the first non-blank record and checks it is the lab CSV
// header (case and surrounding white space ignored). Problems are
// *engine.ValidationError naming "file" (empty, not UTF-8) or "header".
func (lr *labCSVReader) readHeader() error {
	rec, err := lr.nextRecord()
	switch {
	case errors.Is(err, errUTF16):
		return fileError("file", err.Error())
	case errors.Is(err, io.EOF):
		return fileError("file", "is empty: a header line ("+Header+") and at least one data row are required")
	case err != nil:
		return err
	}
	if rec.err != nil {
		return fileError("header", fmt.Sprintf("must be %s; line %d: %s", Header, rec.line, rec.err.Detail))
	}
	ok := len(rec.fields) == len(Columns)
	for i := 0; ok && i < len(Columns); i++ {
		ok = strings.EqualFold(rec.fields[i], Columns[i])
	}
	if !ok {
		got := strings.Join(rec.fields, ",")
		if len(got) > 200 || !utf8.ValidString(got) {
			got = strings.ToValidUTF8(got[:min(len(got), 200)], "\uFFFD") + "…"
		}
		return fileError("header", fmt.Sprintf("must be %s (in this order; case and surrounding spaces are ignored); line %d is %q", Header, rec.line, got))
	}
	return nil
}

func fileError(field, reason string) error {
	return &engine.ValidationError{Fields: []engine.FieldError{{Field: field, Reason: reason}}}
}
