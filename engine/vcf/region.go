package vcf

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/biogo/hts/bgzf"
	"github.com/biogo/hts/bgzf/index"
)

// Region is a span of one contig: 1-based, Start and End inclusive.
type Region struct {
	Chrom      string // "chr10" or "10"
	Start, End int
}

func (g Region) String() string { return fmt.Sprintf("%s:%d-%d", g.Chrom, g.Start, g.End) }

// MergeRegions normalises the contigs (NormChrom), drops empty spans and
// merges spans of one contig that overlap or touch, sorted by contig name
// then start.
func MergeRegions(regions []Region) []Region {
	var out []Region
	for _, g := range regions {
		if g.End < g.Start || g.End < 1 {
			continue
		}
		out = append(out, Region{Chrom: NormChrom(g.Chrom), Start: max(g.Start, 1), End: g.End})
	}
	slices.SortFunc(out, func(a, b Region) int {
		if c := strings.Compare(a.Chrom, b.Chrom); c != 0 {
			return c
		}
		return a.Start - b.Start
	})
	merged := out[:0]
	for _, g := range out {
		if n := len(merged); n > 0 && merged[n-1].Chrom == g.Chrom && g.Start <= merged[n-1].End+1 {
			merged[n-1].End = max(merged[n-1].End, g.End)
			continue
		}
		merged = append(merged, g)
	}
	return merged
}

// regionRead is the state of an indexed read: the contigs to visit in
// file order, each with its merged regions and the BGZF chunks that hold
// them.
type regionRead struct {
	f     io.ReadSeeker
	bg    *bgzf.Reader
	cr    *index.ChunkReader
	plan  []contigPlan
	at    int // next plan entry to open
	cur   *contigPlan
	where string // the regions, for errors
}

type contigPlan struct {
	chrom   string // normalised
	regions []Region
	chunks  []bgzf.Chunk
}

// NewRegionReader reads only the records that overlap the regions from a
// BGZF-compressed VCF through its index (ReadIndex). The header is read
// from the start of the file with the same checks as NewReader; then, for
// each contig in the file's order, the index's chunks for its regions are
// merged and read once, in file order. A record is returned when its span
// (POS to the last base of REF, or INFO/END when further: a gVCF block or a
// deletion that starts before a region and reaches into it) overlaps a
// region; tabix and CSI index a VCF record by that same span, so such a
// record is in the chunks. Records read are validated as by NewReader
// (sorting within what is read, columns, genotypes), then Options.Keep
// applies; records outside the regions are not read at all, so a fault
// there is not seen.
//
// Record.Line is 0 (a line number is not known without decompressing
// everything before it); a *ParseError about a record has Line 0 and At
// naming the regions and the last position reached. A header refusal has
// its real line number. A file that is not BGZF (plain gzip, plain text) is
// an error wrapping ErrIndex: it cannot be read by region.
func NewRegionReader(f io.ReadSeeker, idx *Index, regions []Region, opt Options) (*Reader, error) {
	if idx == nil {
		return nil, fmt.Errorf("%w: no index", ErrIndex)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%w: the file cannot be read by region: %v", ErrIndex, err)
	}
	rd, err := NewReader(f, opt)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%w: the file cannot be read by region: %v", ErrIndex, err)
	}
	bg2, err := bgzf.NewReader(f, 1)
	if err != nil {
		return nil, fmt.Errorf("%w: the file is not BGZF-compressed (bgzip), so it cannot be read through an index: %v", ErrIndex, err)
	}
	rr := &regionRead{f: f, bg: bg2}
	merged := MergeRegions(regions)
	var names []string
	for _, g := range merged {
		names = append(names, g.String())
	}
	rr.where = "indexed read of " + strings.Join(names, ",")
	if len(rr.where) > 200 {
		rr.where = rr.where[:200] + "…"
	}
	// Contigs in the order of the index (the file's order), so the
	// reader's sorting check holds across contigs.
	for _, name := range idx.names {
		chrom := NormChrom(name)
		var p contigPlan
		for _, g := range merged {
			if g.Chrom == chrom {
				p.regions = append(p.regions, g)
				cs, err := idx.chunks(chrom, g.Start, g.End)
				if err != nil {
					return nil, err
				}
				p.chunks = append(p.chunks, cs...)
			}
		}
		if len(p.chunks) == 0 {
			continue
		}
		p.chrom, p.chunks = chrom, mergeChunks(p.chunks)
		rr.plan = append(rr.plan, p)
	}
	rd.reg = rr
	rd.gz = true
	rd.br = bufio.NewReaderSize(eofReader{}, 64<<10)
	return rd, nil
}

// eofReader is the empty input before the first contig is opened.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// advance opens the next contig's chunks; false when none is left.
func (rr *regionRead) advance(r *Reader) (bool, error) {
	if rr.cr != nil {
		rr.cr.Close()
		rr.cr = nil
	}
	if rr.at >= len(rr.plan) {
		rr.cur = nil
		return false, nil
	}
	rr.cur = &rr.plan[rr.at]
	rr.at++
	cr, err := index.NewChunkReader(rr.bg, rr.cur.chunks)
	if err != nil {
		return false, r.chunkError(err)
	}
	rr.cr = cr
	r.br.Reset(cr)
	return true, nil
}

// overlaps reports whether a record's span touches a region of the contig
// being read.
func (rr *regionRead) overlaps(chrom string, start, end int) bool {
	if rr.cur == nil || chrom != rr.cur.chrom {
		return false
	}
	for _, g := range rr.cur.regions {
		if start <= g.End && end >= g.Start {
			return true
		}
	}
	return false
}

// locate rewrites a refusal of a record read by region: its line number
// is not known, so it names the regions and the last position reached.
func (rr *regionRead) locate(r *Reader, err error) error {
	var pe *ParseError
	if !errors.As(err, &pe) || pe.At != "" {
		return err
	}
	at := rr.where
	if r.curChrom != "" {
		at += fmt.Sprintf(", at or after %s:%d", r.curChrom, r.lastPos)
	}
	return &ParseError{At: at + " (line numbers are not known in an indexed read)", Field: pe.Field, Reason: pe.Reason}
}

// chunkError turns a failure to seek or decompress into a refusal.
func (r *Reader) chunkError(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &ParseError{Field: "file", Reason: "the BGZF data ends early (truncated file, or the index does not belong to it)"}
	}
	return &ParseError{Field: "file", Reason: "the BGZF data cannot be read where the index points (" + err.Error() + "): corrupt, or the index does not belong to the file"}
}
