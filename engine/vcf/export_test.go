package vcf

import "github.com/biogo/hts/bgzf"

// ReadIndexNoRecover parses a decompressed index without the panic guard.
func ReadIndexNoRecover(data []byte) (*Index, error) { return parseIndexStrict(data) }

// ChunksFor queries the index without the panic guard.
func (x *Index) ChunksFor(chrom string, start, end int) []bgzf.Chunk {
	return x.chunksStrict(NormChrom(chrom), start, end)
}
