// Package vcf reads Variant Call Format files (VCF 4.x, plain text or
// gzip/BGZF) one record at a time, for genotype calling on GRCh38.
//
// It validates what a clinical answer depends on and refuses the rest with a
// *ParseError naming the line: the header (##fileformat, the #CHROM line, the
// sample names, the genome build when the header names one), the columns of
// every record, sorting within a contig, line length and genotypes (GT).
// Memory stays flat: one line is held at a time, and records the caller does
// not want (Options.Keep) are skipped before their sample columns are read.
//
// A BGZF file with its tabix index can be read by region (ReadIndex,
// NewRegionReader), with github.com/biogo/hts's bgzf and tabix packages.
//
// The package is pure: the standard library and biogo/hts's pure-Go BGZF
// and index packages.
package vcf

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DefaultMaxLineBytes is the line length limit when Options.MaxLineBytes is 0.
const DefaultMaxLineBytes = 1 << 20

// Options bound what the reader accepts.
type Options struct {
	// MaxLineBytes limits one line (header or record, without its newline);
	// 0 means DefaultMaxLineBytes. A longer line is a *ParseError.
	MaxLineBytes int
	// Keep selects records by contig and the span of reference positions
	// they cover; nil keeps all. The span runs from POS to the last base of
	// REF, or to INFO/END when that is further (a gVCF reference block, a
	// symbolic deletion), so a block or a deletion that starts before a
	// position of interest and covers it is kept. Records for which it
	// returns false are skipped after their first eight columns are cut
	// (sorting is still checked) and before anything else is parsed. The
	// contig is passed normalised by NormChrom ("10" → "chr10").
	Keep func(chrom string, start, end int) bool
	// SelectSample chooses the sample columns to read (index in the #CHROM
	// line, 0-based, and name); nil reads all. Samples() then lists only the
	// selected samples and Record.Calls holds one Call per selected sample.
	// Unselected sample columns are counted but not parsed.
	SelectSample func(index int, name string) bool
	// AllowUnsorted accepts records out of order within a contig and a
	// contig's records split by another contig. Off by default: unsorted
	// input is refused naming the line. Meant for fixtures written out of
	// order (several of PharmCAT's test VCFs are).
	AllowUnsorted bool
	// MaxBytes limits the decompressed input; 0 means no limit. Reading past
	// it is a *ParseError (a guard against decompression bombs).
	MaxBytes int64
}

// Record is one VCF data line.
type Record struct {
	// Line is the 1-based line number in the (decompressed) file; 0 in an
	// indexed read (NewRegionReader), where it is not known without
	// decompressing everything before the record. Where describes the
	// record in both cases.
	Line  int
	Chrom string // as written ("chr10" or "10"); NormChrom gives "chr10"
	Pos   int    // 1-based
	// End is the last reference position the record covers: INFO/END when
	// given (a gVCF reference block covers POS..END), else the last base of
	// REF. Never less than Pos.
	End    int
	IDs    []string // ID column split on ';' ('.' → nil)
	Ref    string   // upper case
	Alts   []string // '.' → nil; base alleles upper case; symbolic alleles like <DEL> and breakends kept verbatim
	Filter []string // '.' → nil; "PASS" → ["PASS"]
	Calls  []Call   // one per (selected) sample, in Samples() order
}

// Call is one sample's genotype at a record.
type Call struct {
	// Alleles are the GT allele indexes (0 = REF, i = Alts[i-1]), -1 for
	// '.'; len 1 haploid, 2 diploid; nil if the record has no GT field.
	Alleles []int
	// Phased is true when every separator was '|' (a VCF 4.4 leading phase
	// prefix counts as a separator). A haploid call without a prefix has no
	// separator and is reported unphased.
	Phased bool
	// GQ, DP and MinDP are the FORMAT genotype quality, read depth and a
	// gVCF block's minimum depth (MIN_DP); not Known when absent or '.'.
	GQ, DP, MinDP Number
	// PS is the phase set (FORMAT/PS) of a phased call; "" when absent or
	// '.'. Calls phased with '|' are in phase with each other only within
	// one phase set.
	PS string
	// PGT and PID are GATK HaplotypeCaller's physical phasing: the phased
	// genotype ("0|1") and the id of the group of records it is phased
	// within; "" when absent or '.'.
	PGT, PID string
}

// Number is an optional non-negative FORMAT value: the zero value is an
// absent one (GQ 0 is a value, and a weak one, not an absence).
type Number struct {
	Value int
	Known bool
}

// ParseError is a refusal of the input, naming the line (1-based, in the
// decompressed file; 0 when no line applies), the field and the reason.
type ParseError struct {
	Line int
	// At says where the refusal is when the line number is not known: in
	// an indexed read (NewRegionReader) a record's line number in the
	// decompressed file is not known, so At names the region read and the
	// last position reached, and Line is 0.
	At     string
	Field  string
	Reason string
}

// Error formats the refusal as "line N: FIELD: reason", or "AT: FIELD:
// reason" when At is set.
func (e *ParseError) Error() string {
	if e.At != "" {
		return fmt.Sprintf("%s: %s: %s", e.At, e.Field, e.Reason)
	}
	return fmt.Sprintf("line %d: %s: %s", e.Line, e.Field, e.Reason)
}

// fixedColumns are the eight mandatory columns of the #CHROM line.
var fixedColumns = []string{"#CHROM", "POS", "ID", "REF", "ALT", "QUAL", "FILTER", "INFO"}

// Reader reads VCF records one at a time. It is not safe for concurrent use.
type Reader struct {
	br      *bufio.Reader
	gz      bool
	opt     Options
	maxLine int
	line    []byte // current line buffer, reused
	lineNo  int
	nread   int64
	err     error // sticky error

	all      []string // every sample of the #CHROM line
	selected []int    // indexes into all of the selected samples
	names    []string // names of the selected samples
	pick     []bool   // pick[i]: sample column i is selected

	reg *regionRead // set by NewRegionReader

	curChrom  string // raw contig of the previous record
	normChrom string // NormChrom(curChrom)
	lastPos   int
	seen      map[string]int // contigs already finished → line where they started
}

// NewReader reads plain VCF or gzip/BGZF (detected by magic bytes), parses
// and validates the header (##fileformat, #CHROM line, sample names,
// assembly: refuses a non-GRCh38 build it can detect from ##reference,
// ##assembly or ##contig assembly/length lines with a *ParseError naming the
// line).
func NewReader(r io.Reader, opt Options) (*Reader, error) {
	rd := &Reader{opt: opt, maxLine: opt.MaxLineBytes, seen: map[string]int{}}
	if rd.maxLine <= 0 {
		rd.maxLine = DefaultMaxLineBytes
	}
	br := bufio.NewReaderSize(r, 64<<10)
	magic, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, rd.gzipError(err)
		}
		// Multistream is on by default: BGZF is a series of gzip members.
		rd.gz = true
		br = bufio.NewReaderSize(zr, 64<<10)
	}
	rd.br = br
	if err := rd.readHeader(); err != nil {
		return nil, err
	}
	return rd, nil
}

// Samples returns the sample names (only the selected ones when
// Options.SelectSample is set), in column order.
func (r *Reader) Samples() []string { return append([]string(nil), r.names...) }

// AllSamples returns every sample name of the #CHROM line, in column order.
func (r *Reader) AllSamples() []string { return append([]string(nil), r.all...) }

// LineNumber is the number of the last line read (1-based).
func (r *Reader) LineNumber() int { return r.lineNo }

// BytesRead is the number of (decompressed) bytes read so far.
func (r *Reader) BytesRead() int64 { return r.nread }

// gzipError turns a decompression failure into a refusal of the input.
func (r *Reader) gzipError(err error) error {
	var ce flate.CorruptInputError
	switch {
	case errors.Is(err, gzip.ErrHeader), errors.Is(err, gzip.ErrChecksum), errors.As(err, &ce):
		return &ParseError{Line: r.lineNo + 1, Field: "file", Reason: "the gzip/BGZF data is corrupt (" + err.Error() + ")"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &ParseError{Line: r.lineNo + 1, Field: "file", Reason: "the gzip/BGZF data ends early (truncated file)"}
	}
	return err
}

// readLine reads the next line into r.line (without "\n" or "\r\n").
// It returns io.EOF only when no byte is left.
func (r *Reader) readLine() error {
	r.line = r.line[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		if len(r.line)+len(chunk) > r.maxLine+2 { // room for "\r\n"
			r.lineNo++
			return &ParseError{Line: r.lineNo, Field: "line", Reason: fmt.Sprintf("longer than %d bytes", r.maxLine)}
		}
		r.line = append(r.line, chunk...)
		r.nread += int64(len(chunk))
		if r.opt.MaxBytes > 0 && r.nread > r.opt.MaxBytes {
			return &ParseError{Line: r.lineNo + 1, Field: "file", Reason: fmt.Sprintf("larger than %d bytes once decompressed", r.opt.MaxBytes)}
		}
		switch {
		case err == nil:
			r.lineNo++
			r.line = trimEOL(r.line)
			if len(r.line) > r.maxLine {
				return &ParseError{Line: r.lineNo, Field: "line", Reason: fmt.Sprintf("longer than %d bytes", r.maxLine)}
			}
			return nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(r.line) == 0 {
				return io.EOF
			}
			r.lineNo++
			r.line = trimEOL(r.line)
			if len(r.line) > r.maxLine {
				return &ParseError{Line: r.lineNo, Field: "line", Reason: fmt.Sprintf("longer than %d bytes", r.maxLine)}
			}
			return nil
		default:
			if r.reg != nil {
				return r.chunkError(err)
			}
			if r.gz {
				return r.gzipError(err)
			}
			return err
		}
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// readHeader reads the meta-information lines and the #CHROM line.
func (r *Reader) readHeader() error {
	if err := r.readLine(); err != nil {
		if errors.Is(err, io.EOF) {
			return &ParseError{Line: 1, Field: "##fileformat", Reason: "the file is empty"}
		}
		return err
	}
	if bytes.HasPrefix(r.line, []byte("BCF")) {
		return &ParseError{Line: 1, Field: "##fileformat", Reason: "this is BCF (binary VCF); send VCF text, plain or bgzip-compressed"}
	}
	if !bytes.HasPrefix(r.line, []byte("##fileformat=VCFv4.")) {
		return &ParseError{Line: 1, Field: "##fileformat", Reason: fmt.Sprintf("the first line must be ##fileformat=VCFv4.x; got %s", quoteShort(r.line))}
	}
	var build buildCheck
	for {
		if err := r.readLine(); err != nil {
			if errors.Is(err, io.EOF) {
				return &ParseError{Line: r.lineNo, Field: "#CHROM", Reason: "the header has no #CHROM line"}
			}
			return err
		}
		switch {
		case bytes.HasPrefix(r.line, []byte("##")):
			if err := build.meta(r.lineNo, string(r.line)); err != nil {
				return err
			}
		case bytes.HasPrefix(r.line, []byte("#CHROM")):
			return r.columns(string(r.line))
		default:
			return &ParseError{Line: r.lineNo, Field: "#CHROM", Reason: fmt.Sprintf("expected a ## meta line or the #CHROM line; got %s", quoteShort(r.line))}
		}
	}
}

// columns validates the #CHROM line and records the samples.
func (r *Reader) columns(line string) error {
	cols := strings.Split(line, "\t")
	if len(cols) < len(fixedColumns) {
		return &ParseError{Line: r.lineNo, Field: "#CHROM", Reason: fmt.Sprintf("needs the tab-separated columns %s; got %d column(s)", strings.Join(fixedColumns, " "), len(cols))}
	}
	for i, want := range fixedColumns {
		if cols[i] != want {
			return &ParseError{Line: r.lineNo, Field: "#CHROM", Reason: fmt.Sprintf("column %d must be %s; got %q", i+1, want, short(cols[i]))}
		}
	}
	if len(cols) == len(fixedColumns) {
		return &ParseError{Line: r.lineNo, Field: "#CHROM", Reason: "no FORMAT column and no samples: the file holds no genotypes to call"}
	}
	if cols[8] != "FORMAT" {
		return &ParseError{Line: r.lineNo, Field: "#CHROM", Reason: fmt.Sprintf("column 9 must be FORMAT; got %q", short(cols[8]))}
	}
	if len(cols) == 9 {
		return &ParseError{Line: r.lineNo, Field: "#CHROM", Reason: "no sample columns: the file holds no genotypes to call"}
	}
	r.all = cols[9:]
	r.pick = make([]bool, len(r.all))
	index := make(map[string]int, len(r.all))
	for i, name := range r.all {
		if name == "" || strings.TrimSpace(name) != name {
			return &ParseError{Line: r.lineNo, Field: "#CHROM", Reason: fmt.Sprintf("sample %d has an empty name or one with surrounding spaces (%q)", i+1, short(name))}
		}
		if j, dup := index[name]; dup {
			return &ParseError{Line: r.lineNo, Field: "#CHROM", Reason: fmt.Sprintf("sample name %q appears twice (columns %d and %d)", short(name), j+10, i+10)}
		}
		index[name] = i
		if r.opt.SelectSample == nil || r.opt.SelectSample(i, name) {
			r.pick[i] = true
			r.selected = append(r.selected, i)
			r.names = append(r.names, name)
		}
	}
	return nil
}

// Next returns the next kept record, io.EOF at the end, or *ParseError
// (unsorted within a contig, bad columns, bad GT, over-long line, ...). After
// an error every further call returns the same error.
func (r *Reader) Next() (Record, error) {
	if r.err != nil {
		return Record{}, r.err
	}
	rec, err := r.next()
	if err != nil {
		if r.reg != nil {
			err = r.reg.locate(r, err)
		}
		r.err = err
	}
	return rec, err
}

func (r *Reader) next() (Record, error) {
	for {
		if err := r.readLine(); err != nil {
			if r.reg != nil && errors.Is(err, io.EOF) {
				more, err := r.reg.advance(r)
				if err != nil {
					return Record{}, err
				}
				if more {
					continue
				}
			}
			return Record{}, err
		}
		if len(r.line) == 0 {
			continue // a blank line carries nothing
		}
		if r.line[0] == '#' {
			return Record{}, r.errf("line", "a header line after the #CHROM line")
		}
		// CHROM and POS first, from the bytes: enough to check sorting and
		// apply Keep without copying the line.
		chrom, rest, ok := bytes.Cut(r.line, []byte("\t"))
		if !ok {
			return Record{}, r.errf("line", "a record needs tab-separated columns; this line has none")
		}
		posText, rest, _ := bytes.Cut(rest, []byte("\t"))
		if len(chrom) == 0 || bytes.ContainsAny(chrom, " ,<>") {
			return Record{}, r.errf("CHROM", fmt.Sprintf("%q is not a contig name", short(string(chrom))))
		}
		pos, ok := atoi(posText)
		if !ok {
			return Record{}, r.errf("POS", fmt.Sprintf("%q is not a position", short(string(posText))))
		}
		if err := r.order(chrom, pos); err != nil {
			return Record{}, err
		}
		if r.reg != nil || r.opt.Keep != nil {
			end := spanEnd(pos, rest)
			if r.reg != nil && !r.reg.overlaps(r.normChrom, pos, end) {
				continue
			}
			if r.opt.Keep != nil && !r.opt.Keep(r.normChrom, pos, end) {
				continue
			}
		}
		return r.record(r.curChrom, pos, string(rest))
	}
}

// spanEnd is the last reference position a record covers, read from the
// columns after POS without parsing them: the last base of REF, or INFO/END
// when that is further. A malformed line gives pos (the full parse refuses
// it if it is kept).
func spanEnd(pos int, rest []byte) int {
	var cols [6][]byte // ID REF ALT QUAL FILTER INFO
	for i := range cols {
		var ok bool
		cols[i], rest, ok = bytes.Cut(rest, []byte("\t"))
		if !ok && i < len(cols)-1 {
			return pos
		}
	}
	end := pos + len(cols[1]) - 1
	if e, ok := infoEnd(cols[5]); ok && e > end {
		end = e
	}
	if end < pos {
		end = pos
	}
	return end
}

// infoEnd returns the value of END in an INFO column.
func infoEnd(info []byte) (int, bool) {
	for len(info) > 0 {
		var kv []byte
		kv, info, _ = bytes.Cut(info, []byte(";"))
		if v, ok := bytes.CutPrefix(kv, []byte("END=")); ok {
			return atoi(v)
		}
	}
	return 0, false
}

// atoi parses a non-negative decimal of at most 12 digits.
func atoi(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 12 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// order checks that positions rise within a contig and that a contig's
// records are not split by another contig.
func (r *Reader) order(chrom []byte, pos int) error {
	if string(chrom) == r.curChrom {
		if pos < r.lastPos && !r.opt.AllowUnsorted {
			return r.errf("POS", fmt.Sprintf("the file is not sorted: %s:%d comes after %s:%d", r.curChrom, pos, r.curChrom, r.lastPos))
		}
		r.lastPos = pos
		return nil
	}
	if start, ok := r.seen[string(chrom)]; ok && !r.opt.AllowUnsorted {
		return r.errf("CHROM", fmt.Sprintf("the file is not sorted: contig %s appears again after other contigs (its records began on line %d)", chrom, start))
	}
	r.curChrom = string(chrom)
	if _, ok := r.seen[r.curChrom]; !ok {
		r.seen[r.curChrom] = r.lineNo
	}
	r.normChrom = NormChrom(r.curChrom)
	r.lastPos = pos
	return nil
}

// record parses the columns after POS.
func (r *Reader) record(chrom string, pos int, rest string) (Record, error) {
	rec := Record{Line: r.lineNo, Chrom: chrom, Pos: pos}
	if r.reg != nil {
		rec.Line = 0
	}
	var cols [7]string // ID REF ALT QUAL FILTER INFO FORMAT
	n := 0
	more := true // a tab follows the last column cut
	for n < len(cols) && more {
		cols[n], rest, more = strings.Cut(rest, "\t")
		n++
	}
	if n < 6 {
		return Record{}, r.errf("line", fmt.Sprintf("a record needs at least 8 tab-separated columns (CHROM to INFO); this line has %d", n+2))
	}
	// An empty ID, QUAL, FILTER or INFO column (not valid VCF, but written
	// by some tools and by PharmCAT's own test files) reads as '.'; an empty
	// REF, ALT or FORMAT is refused.
	names := []string{"ID", "REF", "ALT", "QUAL", "FILTER", "INFO", "FORMAT"}
	for i := 0; i < n; i++ {
		if cols[i] != "" {
			continue
		}
		switch names[i] {
		case "REF", "ALT", "FORMAT":
			return Record{}, r.errf(names[i], "empty column (use '.' for a missing value)")
		}
		cols[i] = "."
	}
	if cols[0] != "." {
		for _, id := range strings.Split(cols[0], ";") {
			if id == "" || strings.ContainsAny(id, " ") {
				return Record{}, r.errf("ID", fmt.Sprintf("%q is not a list of identifiers", short(cols[0])))
			}
			rec.IDs = append(rec.IDs, strings.Clone(id))
		}
	}
	if !isBases(cols[1]) {
		return Record{}, r.errf("REF", fmt.Sprintf("%q is not a sequence of bases A, C, G, T, N", short(cols[1])))
	}
	// Clone: ToUpper returns its argument when it is already upper case,
	// and a substring would keep the whole line (every sample column)
	// reachable for as long as the caller keeps the record.
	rec.Ref = strings.Clone(strings.ToUpper(cols[1]))
	if cols[2] != "." {
		for _, alt := range strings.Split(cols[2], ",") {
			a, ok := altAllele(alt)
			if !ok {
				return Record{}, r.errf("ALT", fmt.Sprintf("%q is not an alternate allele", short(alt)))
			}
			rec.Alts = append(rec.Alts, a)
		}
	}
	if cols[4] != "." {
		for _, f := range strings.Split(cols[4], ";") {
			if f == "" {
				return Record{}, r.errf("FILTER", fmt.Sprintf("%q has an empty filter name", short(cols[4])))
			}
			rec.Filter = append(rec.Filter, strings.Clone(f))
		}
	}
	rec.End = pos + len(rec.Ref) - 1
	if cols[5] != "." && strings.Contains(cols[5], "END=") {
		for _, kv := range strings.Split(cols[5], ";") {
			v, ok := strings.CutPrefix(kv, "END=")
			if !ok {
				continue
			}
			end, ok := atoi([]byte(v))
			if !ok || end < pos {
				return Record{}, r.errf("INFO", fmt.Sprintf("END=%q is not a position at or after POS %d", short(v), pos))
			}
			rec.End = max(rec.End, end)
		}
	}
	if n < 7 {
		return Record{}, r.errf("line", fmt.Sprintf("the header names %d sample(s) but this record has no FORMAT column", len(r.all)))
	}
	if !more {
		return Record{}, r.errf("line", fmt.Sprintf("the header names %d sample(s) but this record has no sample columns", len(r.all)))
	}
	calls, err := r.samples(cols[6], rest, len(rec.Alts))
	if err != nil {
		return Record{}, err
	}
	rec.Calls = calls
	return rec, nil
}

// formatIndex holds the positions of the FORMAT keys the reader uses; -1
// for an absent key.
type formatIndex struct{ gt, gq, dp, minDP, ps, pgt, pid int }

func parseFormat(format string) formatIndex {
	fi := formatIndex{-1, -1, -1, -1, -1, -1, -1}
	for i, key := range strings.Split(format, ":") {
		switch key {
		case "GT":
			fi.gt = i
		case "GQ":
			fi.gq = i
		case "DP":
			fi.dp = i
		case "MIN_DP":
			fi.minDP = i
		case "PS":
			fi.ps = i
		case "PGT":
			fi.pgt = i
		case "PID":
			fi.pid = i
		}
	}
	return fi
}

// qualities reads a call's GQ, DP, MIN_DP, PS, PGT and PID.
func (r *Reader) qualities(c *Call, fi formatIndex, col, sample string) error {
	for _, q := range []struct {
		idx  int
		name string
		dst  *Number
	}{{fi.gq, "GQ", &c.GQ}, {fi.dp, "DP", &c.DP}, {fi.minDP, "MIN_DP", &c.MinDP}} {
		if q.idx < 0 {
			continue
		}
		v := field(col, q.idx)
		if v == "." || v == "" {
			continue
		}
		n, ok := atoi([]byte(v))
		if !ok {
			return r.errf(q.name, fmt.Sprintf("sample %q: %q is not a non-negative integer", short(sample), short(v)))
		}
		*q.dst = Number{Value: n, Known: true}
	}
	for _, q := range []struct {
		idx int
		dst *string
	}{{fi.ps, &c.PS}, {fi.pgt, &c.PGT}, {fi.pid, &c.PID}} {
		if q.idx < 0 {
			continue
		}
		if v := field(col, q.idx); v != "." && v != "" {
			*q.dst = strings.Clone(v)
		}
	}
	return nil
}

// samples parses the selected sample columns' GT values and qualities.
func (r *Reader) samples(format, rest string, nAlts int) ([]Call, error) {
	fi := parseFormat(format)
	gtIndex := fi.gt
	calls := make([]Call, len(r.selected))
	var alleles []int
	if gtIndex >= 0 {
		alleles = make([]int, 0, 2*len(r.selected))
	}
	k := 0 // next selected index
	for i := 0; i < len(r.all); i++ {
		col, more, ok := strings.Cut(rest, "\t")
		if !ok && i < len(r.all)-1 {
			return nil, r.errf("line", fmt.Sprintf("the header names %d sample(s) but this record has %d sample column(s)", len(r.all), i+1))
		}
		if ok && i == len(r.all)-1 {
			return nil, r.errf("line", fmt.Sprintf("the header names %d sample(s) but this record has more sample columns", len(r.all)))
		}
		rest = more
		if col == "" {
			return nil, r.errf("GT", fmt.Sprintf("sample %q: empty column (use '.' for a missing value)", short(r.all[i])))
		}
		if !r.pick[i] {
			continue
		}
		if gtIndex >= 0 {
			gt := field(col, gtIndex)
			start := len(alleles)
			var phased bool
			var err error
			alleles, phased, err = parseGT(alleles, gt, nAlts)
			if err != nil {
				return nil, r.errf("GT", fmt.Sprintf("sample %q: %s", short(r.all[i]), err.Error()))
			}
			calls[k] = Call{Alleles: alleles[start:len(alleles):len(alleles)], Phased: phased}
		}
		if err := r.qualities(&calls[k], fi, col, r.all[i]); err != nil {
			return nil, err
		}
		k++
	}
	return calls, nil
}

// field returns the i-th ':'-separated field of s, "." when s has fewer
// fields (trailing fields may be dropped in VCF).
func field(s string, i int) string {
	for ; i > 0; i-- {
		j := strings.IndexByte(s, ':')
		if j < 0 {
			return "."
		}
		s = s[j+1:]
	}
	if j := strings.IndexByte(s, ':'); j >= 0 {
		s = s[:j]
	}
	return s
}

// parseGT appends the allele indexes of one GT value to dst.
func parseGT(dst []int, gt string, nAlts int) ([]int, bool, error) {
	if gt == "" {
		return dst, false, errors.New("empty GT")
	}
	start := len(dst)
	phased := true
	seps := 0
	s := gt
	if s[0] == '|' || s[0] == '/' { // VCF 4.4 explicit phase of the first allele
		phased = s[0] == '|'
		seps++
		s = s[1:]
	}
	for {
		if len(dst)-start == 2 {
			return dst, false, fmt.Errorf("%q has more than two alleles; only haploid and diploid calls are read", short(gt))
		}
		j := 0
		for j < len(s) && s[j] != '/' && s[j] != '|' {
			j++
		}
		a := s[:j]
		switch {
		case a == ".":
			dst = append(dst, -1)
		case a != "" && a[0] >= '0' && a[0] <= '9' && (len(a) == 1 || a[0] != '0'):
			v, err := strconv.Atoi(a)
			if err != nil {
				return dst, false, fmt.Errorf("%q is not a genotype", short(gt))
			}
			if v > nAlts {
				return dst, false, fmt.Errorf("%q names allele %d but the record has %d ALT allele(s)", short(gt), v, nAlts)
			}
			dst = append(dst, v)
		default:
			return dst, false, fmt.Errorf("%q is not a genotype", short(gt))
		}
		if j == len(s) {
			break
		}
		seps++
		if s[j] != '|' {
			phased = false
		}
		s = s[j+1:]
	}
	if seps == 0 {
		phased = false
	}
	return dst, phased, nil
}

// isBases reports whether s is a non-empty run of A, C, G, T, N (any case).
func isBases(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 'A', 'C', 'G', 'T', 'N', 'a', 'c', 'g', 't', 'n':
		default:
			return false
		}
	}
	return true
}

// altAllele validates one ALT allele: bases (upper-cased), '*' (an allele
// missing due to an upstream deletion), a symbolic allele <ID> or a breakend
// (kept verbatim).
func altAllele(a string) (string, bool) {
	switch {
	case a == "*":
		return "*", true
	case isBases(a):
		return strings.Clone(strings.ToUpper(a)), true
	case len(a) > 2 && a[0] == '<' && a[len(a)-1] == '>' && !strings.ContainsAny(a[1:len(a)-1], "<> \t,"):
		return strings.Clone(a), true
	case strings.ContainsAny(a, "[]") && !strings.ContainsAny(a, " \t,"):
		return strings.Clone(a), true
	case len(a) > 1 && (a[0] == '.' && isBases(a[1:]) || a[len(a)-1] == '.' && isBases(a[:len(a)-1])):
		return strings.Clone(a), true // single breakend
	}
	return "", false
}

func (r *Reader) errf(field, reason string) error {
	return &ParseError{Line: r.lineNo, Field: field, Reason: reason}
}

// short bounds text quoted in an error message.
func short(s string) string {
	const max = 60
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

func quoteShort(b []byte) string {
	if len(b) > 60 {
		return strconv.Quote(string(b[:60])) + "…"
	}
	return strconv.Quote(string(b))
}
