package vcfcall

import (
	"errors"
	"fmt"
	"io"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/vcf"
)

// RegionPad is added on both sides of each gene's span of definition
// positions when a file is read by region: a left-aligned indel's record
// starts before the position it changes, and a gVCF block or deletion that
// starts before the span and reaches into it is found by its own span.
const RegionPad = 1000

// Regions returns the spans to read for the caller's genes: per gene, its
// contig from the first to the last defining, ignored or extra position,
// padded by pad on both sides; merged and sorted (vcf.MergeRegions).
func Regions(c *calling.Caller, pad int) []vcf.Region {
	var out []vcf.Region
	for _, gene := range c.DefinitionGenes() {
		d, ok := c.Definition(gene)
		if !ok {
			continue
		}
		lo, hi := 0, 0
		for _, list := range [][]int{positions(d.Positions), positions(d.IgnoredPositions), positions(d.ExtraPositions)} {
			for _, p := range list {
				if lo == 0 || p < lo {
					lo = p
				}
				hi = max(hi, p)
			}
		}
		if lo == 0 {
			continue
		}
		out = append(out, vcf.Region{Chrom: d.Chromosome, Start: max(lo-pad, 1), End: hi + pad})
	}
	return vcf.MergeRegions(out)
}

func positions(ps []engine.DefinedPosition) []int {
	out := make([]int, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.Pos)
	}
	return out
}

// countingSeeker counts the bytes read from a seekable file.
type countingSeeker struct {
	f io.ReadSeeker
	n *int64
}

func (c countingSeeker) Read(p []byte) (int, error) {
	n, err := c.f.Read(p)
	*c.n += int64(n)
	return n, err
}

func (c countingSeeker) Seek(off int64, whence int) (int64, error) { return c.f.Seek(off, whence) }

// newReader opens the pass's reader: by region through Options.Index when
// it is set and the opened file can seek, else the whole file as a stream.
// A file that cannot be read by region (not BGZF, no seeking) is streamed,
// and Stats.IndexNote says why.
func (r *run) newReader(f io.ReadCloser, cr *countingReader, opt vcf.Options) (*vcf.Reader, error) {
	if r.opt.Index == nil {
		return vcf.NewReader(cr, opt)
	}
	rs, ok := f.(io.ReadSeeker)
	if !ok {
		r.st.IndexNote = "the file was read whole: it cannot be read by region (the opened file cannot seek)"
		return vcf.NewReader(cr, opt)
	}
	if r.regions == nil {
		r.regions = Regions(r.kb.Caller(), RegionPad)
	}
	rd, err := vcf.NewRegionReader(countingSeeker{f: rs, n: &cr.n}, r.opt.Index, r.regions, opt)
	if errors.Is(err, vcf.ErrIndex) {
		if _, serr := rs.Seek(0, io.SeekStart); serr != nil {
			return nil, serr
		}
		r.st.IndexNote = fmt.Sprintf("the file was read whole: %v", err)
		return vcf.NewReader(cr, opt)
	}
	if err == nil {
		r.st.ReadByRegion = true
	}
	return rd, err
}

// recordSource names the record an observation comes from: its line, or
// in a read by region (where line numbers are not known) its position.
func recordSource(rec vcf.Record) string {
	if rec.Line > 0 {
		return fmt.Sprintf("line %d", rec.Line)
	}
	return fmt.Sprintf("record %s:%d", rec.Chrom, rec.Pos)
}
