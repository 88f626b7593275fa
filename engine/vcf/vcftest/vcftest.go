// Package vcftest writes BGZF-compressed VCFs (github.com/biogo/hts's bgzf
// writer) with their tabix (.tbi) index, for tests and benchmarks of
// indexed reading. It is not used by the service. (CSI indexes are tested
// with an htslib-written fixture, engine/vcf/testdata/htslib: biogo's CSI
// writer gave indexes in which its own reader found no chunks.)
//
// Records are indexed as htslib's tabix indexes a VCF: by their span, from
// POS to the last base of REF or to INFO/END when that is further, so a
// gVCF reference block is found by any region it reaches into.
package vcftest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"

	"github.com/biogo/hts/bgzf"
	"slices"
)

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

type span struct {
	name       string
	id         int
	start, end int // 0-based, half-open
}

func (s span) RefName() string { return s.name }
func (s span) Start() int      { return s.start }
func (s span) End() int        { return s.end }

// Stats describes what Write wrote.
type Stats struct {
	Records          int
	Decompressed     int64 // bytes of VCF text
	Compressed       int64 // bytes of BGZF
	IndexBytes       int64
	Contigs          []string
	CompressionLevel int
}

// Write reads VCF text from src and writes it BGZF-compressed to dst and
// its tabix index to idx. Lines are never split across BGZF
// blocks. level is the deflate level (gzip.DefaultCompression is -1).
func Write(dst, idx io.Writer, src io.Reader, level int) (Stats, error) {
	cw := &countWriter{w: dst}
	bw, err := bgzf.NewWriterLevel(cw, level, 1)
	if err != nil {
		return Stats{}, err
	}
	var (
		st      = Stats{CompressionLevel: level}
		tbi     = &tbiWriter{}
		block   []byte
		pending []struct {
			s          span
			begin, end int
		}
		ids = map[string]int{}
	)
	flush := func() error {
		if len(block) == 0 {
			return nil
		}
		start := cw.n
		if _, err := bw.Write(block); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if err := bw.Wait(); err != nil {
			return err
		}
		for _, p := range pending {
			c := bgzf.Chunk{Begin: bgzf.Offset{File: start, Block: uint16(p.begin)}, End: bgzf.Offset{File: start, Block: uint16(p.end)}}
			if p.end == len(block) {
				c.End = bgzf.Offset{File: cw.n, Block: 0}
			}
			tbi.add(p.s, c)
		}
		block, pending = block[:0], pending[:0]
		return nil
	}
	sc := bufio.NewScanner(src)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := append(sc.Bytes(), '\n')
		st.Decompressed += int64(len(line))
		if len(line) > bgzf.BlockSize {
			return st, fmt.Errorf("a line of %d bytes does not fit one BGZF block", len(line))
		}
		if len(block)+len(line) > bgzf.BlockSize {
			if err := flush(); err != nil {
				return st, err
			}
		}
		begin := len(block)
		block = append(block, line...)
		if line[0] == '#' {
			continue
		}
		s, err := spanOf(line)
		if err != nil {
			return st, err
		}
		id, ok := ids[s.name]
		if !ok {
			id = len(st.Contigs)
			ids[s.name] = id
			st.Contigs = append(st.Contigs, s.name)
		}
		s.id = id
		st.Records++
		pending = append(pending, struct {
			s          span
			begin, end int
		}{s, begin, len(block)})
	}
	if err := sc.Err(); err != nil {
		return st, err
	}
	if err := flush(); err != nil {
		return st, err
	}
	if err := bw.Close(); err != nil {
		return st, err
	}
	st.Compressed = cw.n
	icw := &countWriter{w: idx}
	iw := bgzf.NewWriter(icw, 1)
	if err := tbi.write(iw, st.Contigs); err != nil {
		return st, err
	}
	if err := iw.Close(); err != nil {
		return st, err
	}
	st.IndexBytes = icw.n
	return st, nil
}

// tabixAux is the tabix configuration (VCF: format 2, columns 1, 2, 0,
// meta '#', no lines skipped) and the contig names.
func tabixAux(names []string) []byte {
	var b bytes.Buffer
	for _, v := range []int32{2, 1, 2, 0, '#', 0} {
		_ = binary.Write(&b, binary.LittleEndian, v)
	}
	var nm bytes.Buffer
	for _, n := range names {
		nm.WriteString(n)
		nm.WriteByte(0)
	}
	_ = binary.Write(&b, binary.LittleEndian, int32(nm.Len()))
	b.Write(nm.Bytes())
	return b.Bytes()
}

// spanOf reads a record's contig and span: [POS-1, max(POS-1+len(REF), END)).
func spanOf(line []byte) (span, error) {
	cols := bytes.SplitN(bytes.TrimRight(line, "\r\n"), []byte("\t"), 9)
	if len(cols) < 8 {
		return span{}, fmt.Errorf("a record with %d columns", len(cols))
	}
	pos, err := strconv.Atoi(string(cols[1]))
	if err != nil || pos < 1 {
		return span{}, fmt.Errorf("POS %q", cols[1])
	}
	end := pos - 1 + max(len(cols[3]), 1)
	for _, kv := range bytes.Split(cols[7], []byte(";")) {
		if v, ok := bytes.CutPrefix(kv, []byte("END=")); ok {
			if e, err := strconv.Atoi(string(v)); err == nil && e > end {
				end = e
			}
		}
	}
	return span{name: string(cols[0]), start: pos - 1, end: end}, nil
}

// tbiWriter builds a tabix index. biogo/hts v1.4.5's tabix.Index.Add is
// not usable for VCF: it does not remember a contig's name (every record
// starts a new reference) and it panics on a record whose span crosses
// 16 kb tiles ("unexpected alignment length"), which every long gVCF
// block does. This follows htslib's hts_idx_push: a record goes into the
// bin of its span (reg2bin, min_shift 14, depth 5), consecutive chunks of a
// bin merge (as do chunks meeting in one BGZF block), and every 16 kb tile the span touches gets the smallest
// record offset seen there.
type tbiWriter struct {
	refs []tbiRef
}

type tbiRef struct {
	bins   map[uint32][]bgzf.Chunk
	linear []int64
}

func (w *tbiWriter) add(s span, c bgzf.Chunk) {
	for len(w.refs) <= s.id {
		w.refs = append(w.refs, tbiRef{bins: map[uint32][]bgzf.Chunk{}})
	}
	ref := &w.refs[s.id]
	b := reg2bin(s.start, s.end)
	cs := ref.bins[b]
	// As htslib's hts_idx_finish: a chunk that starts in the BGZF block
	// where the bin's last chunk ends is merged with it.
	if n := len(cs); n > 0 && cs[n-1].End.File >= c.Begin.File {
		cs[n-1].End = c.End
	} else {
		ref.bins[b] = append(cs, c)
	}
	for t := s.start >> 14; t <= (s.end-1)>>14; t++ {
		for len(ref.linear) <= t {
			ref.linear = append(ref.linear, 0)
		}
		if ref.linear[t] == 0 || voff(c.Begin) < ref.linear[t] {
			ref.linear[t] = voff(c.Begin)
		}
	}
}

func voff(o bgzf.Offset) int64 { return o.File<<16 | int64(o.Block) }

// reg2bin is the tabix/BAI bin of the 0-based half-open span [beg, end).
func reg2bin(beg, end int) uint32 {
	end--
	switch {
	case beg>>14 == end>>14:
		return uint32(((1<<15)-1)/7 + (beg >> 14))
	case beg>>17 == end>>17:
		return uint32(((1<<12)-1)/7 + (beg >> 17))
	case beg>>20 == end>>20:
		return uint32(((1<<9)-1)/7 + (beg >> 20))
	case beg>>23 == end>>23:
		return uint32(((1<<6)-1)/7 + (beg >> 23))
	case beg>>26 == end>>26:
		return uint32(((1<<3)-1)/7 + (beg >> 26))
	}
	return 0
}

func (w *tbiWriter) write(out io.Writer, names []string) error {
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("TBI\x01")
	le(int32(len(names)))
	aux := tabixAux(names)
	b.Write(aux)
	for _, ref := range w.refs {
		keys := make([]uint32, 0, len(ref.bins))
		for k := range ref.bins {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		le(int32(len(keys)))
		for _, k := range keys {
			le(k)
			le(int32(len(ref.bins[k])))
			for _, c := range ref.bins[k] {
				le(uint64(voff(c.Begin)))
				le(uint64(voff(c.End)))
			}
		}
		le(int32(len(ref.linear)))
		for _, o := range ref.linear {
			le(uint64(o))
		}
	}
	_, err := out.Write(b.Bytes())
	return err
}
