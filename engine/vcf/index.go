package vcf

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/biogo/hts/bgzf"
	"github.com/biogo/hts/csi"
	"github.com/biogo/hts/tabix"
)

// DefaultMaxIndexBytes bounds a decompressed index when ReadIndex is given
// 0. A tabix index of a 30x whole-genome gVCF is a few MiB.
const DefaultMaxIndexBytes = 256 << 20

// ErrIndex is wrapped by every refusal of an index (ReadIndex) and of a
// file that cannot be read through one (NewRegionReader: not BGZF, no
// seeking).
var ErrIndex = errors.New("vcf index")

// Index is a tabix (.tbi) or coordinate-sorted (.csi) index of a
// BGZF-compressed VCF, read with github.com/biogo/hts. It is safe for
// concurrent use once read only in the sense that queries do not modify it
// after the first one; do not share one Index between goroutines.
type Index struct {
	// Kind is "tabix" or "csi".
	Kind string
	// refs maps a normalised contig (NormChrom) to its reference id and
	// name as written in the index.
	refs  map[string]int
	names []string
	tbi   *tabix.Index
	csi   *csi.Index
}

// Contigs lists the index's contigs as written in the file, in file order.
func (x *Index) Contigs() []string { return append([]string(nil), x.names...) }

// ReadIndex reads a .tbi or .csi index (BGZF-compressed, as tabix and
// bcftools write it; uncompressed is accepted too), detecting the kind by
// its magic bytes. maxBytes bounds the decompressed index (0:
// DefaultMaxIndexBytes). The structure is checked before the library parses
// it (every count must fit in the bytes that remain), so a corrupt or
// hostile index is an error wrapping ErrIndex, never a huge allocation or a
// panic.
func ReadIndex(r io.Reader, maxBytes int64) (*Index, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxIndexBytes
	}
	raw, err := io.ReadAll(io.LimitReader(r, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrIndex, err)
	}
	data := raw
	if len(raw) >= 2 && raw[0] == 0x1f && raw[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("%w: the index's gzip/BGZF data is corrupt (%v)", ErrIndex, err)
		}
		data, err = io.ReadAll(io.LimitReader(zr, maxBytes+1))
		if err != nil {
			return nil, fmt.Errorf("%w: the index's gzip/BGZF data is corrupt (%v)", ErrIndex, err)
		}
	}
	if int64(len(data)) > maxBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrIndex, maxBytes)
	}
	return parseIndex(data)
}

// parseIndex checks the structure of a decompressed index, then hands it to
// the library. A panic in the library (it trusts its input) is turned into
// an error as a last guard; checkIndex is meant to make it unreachable.
func parseIndex(data []byte) (x *Index, err error) {
	defer func() {
		if p := recover(); p != nil {
			x, err = nil, fmt.Errorf("%w: the index is corrupt (%v)", ErrIndex, p)
		}
	}()
	return parseIndexStrict(data)
}

// parseIndexStrict is parseIndex without the guard (the fuzz target's
// entry: a panic there is a defect of checkIndex).
func parseIndexStrict(data []byte) (*Index, error) {
	names, kind, err := checkIndex(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrIndex, err)
	}
	x := &Index{Kind: kind, refs: map[string]int{}, names: names}
	switch kind {
	case "tabix":
		x.tbi, err = tabix.ReadFrom(bytes.NewReader(data))
	case "csi":
		x.csi, err = csi.ReadFrom(bytes.NewReader(data))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: the %s index is corrupt (%v)", ErrIndex, kind, err)
	}
	for i, n := range names {
		norm := NormChrom(n)
		if _, dup := x.refs[norm]; dup {
			return nil, fmt.Errorf("%w: contig %s is named twice in the index", ErrIndex, n)
		}
		x.refs[norm] = i
	}
	return x, nil
}

// indexWalker reads little-endian fields with bounds checks.
type indexWalker struct {
	b   []byte
	err error
}

func (w *indexWalker) take(n int) []byte {
	if w.err != nil {
		return nil
	}
	if n < 0 || n > len(w.b) {
		w.err = errors.New("the index ends early (truncated or corrupt)")
		return nil
	}
	v := w.b[:n]
	w.b = w.b[n:]
	return v
}

func (w *indexWalker) i32() int {
	b := w.take(4)
	if b == nil {
		return 0
	}
	return int(int32(binary.LittleEndian.Uint32(b)))
}

// count reads a count of elements of at least size bytes each and refuses
// one that is negative or that the remaining bytes cannot hold.
func (w *indexWalker) count(what string, size int) int {
	n := w.i32()
	if w.err == nil && (n < 0 || n > len(w.b)/size) {
		w.err = fmt.Errorf("%s count %d does not fit the index (corrupt)", what, n)
		return 0
	}
	return n
}

// checkIndex walks a decompressed .tbi or .csi and returns the contig
// names (from the tabix header, or from a CSI's auxiliary data in the
// tabix layout that htslib writes for VCF) and the kind.
func checkIndex(data []byte) ([]string, string, error) {
	w := &indexWalker{b: data}
	switch {
	case bytes.HasPrefix(data, []byte("TBI\x01")):
		w.take(4)
		nRef := w.count("reference", 8) // n_bin and n_intv at least
		names, err := tabixHeader(w, nRef)
		if err != nil {
			return nil, "", err
		}
		for i := 0; i < nRef && w.err == nil; i++ {
			nBin := w.count("bin", 8)
			for j := 0; j < nBin && w.err == nil; j++ {
				w.take(4) // bin
				nChunk := w.count("chunk", 16)
				w.take(16 * nChunk)
			}
			nIntv := w.count("interval", 8)
			w.take(8 * nIntv)
		}
		if w.err != nil {
			return nil, "", w.err
		}
		if nRef == 0 {
			return nil, "", errors.New("the tabix index lists no contigs")
		}
		return names, "tabix", nil
	case bytes.HasPrefix(data, []byte("CSI\x01")) || bytes.HasPrefix(data, []byte("CSI\x02")):
		version := data[3]
		w.take(4)
		minShift, depth := w.i32(), w.i32()
		// htslib writes min_shift 14 (bcftools and tabix -m change it;
		// below 10 a query of a whole contig would list millions of bins).
		if w.err == nil && (minShift < 10 || minShift > 32 || depth < 1 || depth > 10 || minShift+3*depth > 62) {
			return nil, "", fmt.Errorf("the CSI index has an unusable shape (min_shift %d, depth %d)", minShift, depth)
		}
		lAux := w.count("auxiliary byte", 1)
		aux := w.take(lAux)
		nRef := w.count("reference", 4)
		if w.err != nil {
			return nil, "", w.err
		}
		if nRef == 0 {
			return nil, "", errors.New("the CSI index lists no contigs")
		}
		aw := &indexWalker{b: aux}
		if len(aux) < 28 {
			return nil, "", errors.New("the CSI index carries no contig names (not a VCF index: its auxiliary data is not in the tabix layout)")
		}
		names, err := tabixHeader(aw, nRef)
		if err != nil {
			return nil, "", err
		}
		binSize := 4 + 8 + 4
		if version == 2 {
			binSize += 8
		}
		for i := 0; i < nRef && w.err == nil; i++ {
			nBin := w.count("bin", binSize)
			for j := 0; j < nBin && w.err == nil; j++ {
				w.take(binSize - 4)
				nChunk := w.count("chunk", 16)
				w.take(16 * nChunk)
			}
		}
		if w.err != nil {
			return nil, "", w.err
		}
		return names, "csi", nil
	case bytes.HasPrefix(data, []byte("BAI\x01")):
		return nil, "", errors.New("this is a BAM index (.bai), not a VCF index (.tbi or .csi)")
	}
	return nil, "", errors.New("not a tabix (.tbi) or CSI (.csi) index: the magic bytes are wrong")
}

// tabixHeader reads the tabix configuration (format, the sequence, begin
// and end columns, the meta character, the lines to skip) and the contig
// names, which must be nRef NUL-terminated names.
func tabixHeader(w *indexWalker, nRef int) ([]string, error) {
	format := w.i32()
	for range 5 {
		w.i32()
	}
	lNm := w.count("name byte", 1)
	nm := w.take(lNm)
	if w.err != nil {
		return nil, w.err
	}
	if format&0xffff != 2 {
		return nil, fmt.Errorf("the index is not for VCF (its format is %d; VCF is 2)", format&0xffff)
	}
	if nRef == 0 {
		return nil, nil
	}
	if lNm == 0 || nm[lNm-1] != 0 {
		return nil, errors.New("the index's contig names are not NUL-terminated")
	}
	names := bytes.Split(nm[:lNm-1], []byte{0})
	if len(names) != nRef {
		return nil, fmt.Errorf("the index names %d contigs but has %d", len(names), nRef)
	}
	out := make([]string, len(names))
	for i, n := range names {
		if len(n) == 0 {
			return nil, errors.New("the index has an empty contig name")
		}
		out[i] = string(n)
	}
	return out, nil
}

// chunks returns the BGZF chunks that may hold records overlapping the
// 1-based inclusive span [start, end] of a normalised contig: none when
// the index does not know the contig or it has no record there.
func (x *Index) chunks(chrom string, start, end int) (cs []bgzf.Chunk, err error) {
	defer func() {
		if p := recover(); p != nil {
			cs, err = nil, fmt.Errorf("%w: the %s index is corrupt (%v)", ErrIndex, x.Kind, p)
		}
	}()
	return x.chunksStrict(chrom, start, end), nil
}

func (x *Index) chunksStrict(chrom string, start, end int) []bgzf.Chunk {
	id, ok := x.refs[chrom]
	if !ok {
		return nil
	}
	beg := max(start-1, 0) // 0-based, half-open
	switch {
	case x.tbi != nil:
		c, err := x.tbi.Chunks(x.names[id], beg, end)
		if err != nil { // index.ErrNoReference, index.ErrInvalid: nothing there
			return nil
		}
		return c
	case x.csi != nil:
		return x.csi.Chunks(id, beg, end)
	}
	return nil
}

// mergeChunks sorts chunks by their start and merges the ones that overlap
// or touch, so each stretch of the file is read once and in order.
func mergeChunks(cs []bgzf.Chunk) []bgzf.Chunk {
	if len(cs) == 0 {
		return nil
	}
	cs = append([]bgzf.Chunk(nil), cs...)
	sortChunks(cs)
	out := cs[:1]
	for _, c := range cs[1:] {
		last := &out[len(out)-1]
		if vOff(c.Begin) <= vOff(last.End) {
			if vOff(c.End) > vOff(last.End) {
				last.End = c.End
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

func sortChunks(cs []bgzf.Chunk) {
	for i := 1; i < len(cs); i++ { // insertion sort: a handful of chunks
		for j := i; j > 0 && vOff(cs[j].Begin) < vOff(cs[j-1].Begin); j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

func vOff(o bgzf.Offset) int64 { return o.File<<16 | int64(o.Block) }
