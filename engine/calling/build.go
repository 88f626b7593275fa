package calling

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// This file refuses hand-entered evidence on another genome build
// (DESIGN.md §3, "Evidence ledger": wrong build is refused, never
// answered). The definitions are GRCh38; an item that names another build
// gets a 422 saying which build it looks like.

// grch37RefSeq maps the RefSeq accession of each primary chromosome in
// GRCh37 (NCBI assembly GCF_000001405.25, GRCh37.p13 assembly report) to
// its chromosome. GRCh38 (GCF_000001405.26 onwards) carries the next
// version of each accession (NC_000010.10 → NC_000010.11); the GRCh38
// accessions the engine reads come from the definitions' RefSeq column.
var grch37RefSeq = map[string]string{
	"NC_000001.10": "chr1", "NC_000002.11": "chr2", "NC_000003.11": "chr3", "NC_000004.11": "chr4",
	"NC_000005.9": "chr5", "NC_000006.11": "chr6", "NC_000007.13": "chr7", "NC_000008.10": "chr8",
	"NC_000009.11": "chr9", "NC_000010.10": "chr10", "NC_000011.9": "chr11", "NC_000012.11": "chr12",
	"NC_000013.10": "chr13", "NC_000014.8": "chr14", "NC_000015.9": "chr15", "NC_000016.9": "chr16",
	"NC_000017.10": "chr17", "NC_000018.9": "chr18", "NC_000019.9": "chr19", "NC_000020.10": "chr20",
	"NC_000021.8": "chr21", "NC_000022.10": "chr22", "NC_000023.10": "chrX", "NC_000024.9": "chrY",
}

// accessionBuild says why an HGVS item's RefSeq accession is not a GRCh38
// chromosome the definitions use, or "" when it is one (or names no
// chromosome the engine knows of, which leaves it unplaced, not refused).
func (k *Caller) accessionBuild(acc string) string {
	if _, ok := k.idx.refSeqChrom[acc]; ok {
		return ""
	}
	if chrom, ok := grch37RefSeq[acc]; ok {
		want := k.grch38Accession(chrom)
		if want == "" {
			want = "the next version"
		}
		return fmt.Sprintf("looks like GRCh37 (%s): that is the GRCh37 accession of %s, GRCh38's is %s; only GRCh38 coordinates are read", acc, chrom, want)
	}
	base, _, _ := strings.Cut(acc, ".")
	for ref, chrom := range k.idx.refSeqChrom {
		if b, _, _ := strings.Cut(ref, "."); b == base {
			return fmt.Sprintf("%s is not the GRCh38 accession of %s (%s): the item is on another genome build; only GRCh38 coordinates are read", acc, chrom, ref)
		}
	}
	return ""
}

// grch38Accession returns the definitions' RefSeq accession of chrom.
func (k *Caller) grch38Accession(chrom string) string {
	for ref, c := range k.idx.refSeqChrom {
		if c == chrom {
			return ref
		}
	}
	return ""
}

// definitionRef returns the GRCh38 reference allele the definitions give
// at chrom:pos, the gene, and whether chrom:pos is a definition position.
func (k *Caller) definitionRef(chrom string, pos int) (ref, gene string, ok bool) {
	for _, di := range k.idx.defPos[chrom][pos] {
		if i, found := di.posIdx[pos]; found {
			return di.def.Positions[i].Ref, di.def.Gene, true
		}
		for _, p := range di.def.ExtraPositions {
			if p.Pos == pos {
				return p.Ref, di.def.Gene, true
			}
		}
	}
	return "", "", false
}

// refDisagrees reports whether a stated REF disagrees with the GRCh38
// reference at a definition position. Only the first base is compared: it
// is the base at the position itself whatever the representation of an
// indel (a longer or shorter anchored REF), and N states nothing.
func refDisagrees(stated, grch38 string) bool {
	stated, grch38 = strings.ToUpper(strings.TrimSpace(stated)), strings.ToUpper(grch38)
	if stated == "" || grch38 == "" || stated[0] == 'N' || grch38[0] == 'N' {
		return false
	}
	return stated[0] != grch38[0]
}

// wrongBuildCall says why a position-level call's REF shows another build,
// or "".
func (k *Caller) wrongBuildCall(c engine.PositionCall) string {
	chrom := NormChrom(c.Chrom)
	ref, gene, ok := k.definitionRef(chrom, c.Pos)
	if !ok || !refDisagrees(c.Ref, ref) {
		return ""
	}
	return fmt.Sprintf("%s does not match the GRCh38 reference %s at %s:%d (a position of the %s allele definitions): the call may be on GRCh37 or another build; only GRCh38 coordinates are read", strings.TrimSpace(c.Ref), ref, chrom, c.Pos, gene)
}

// DefinitionRef returns the GRCh38 reference allele the definitions give
// at chrom:pos ("chr10" form) and the gene; ok is false when chrom:pos is
// no definition position.
func (k *Caller) DefinitionRef(chrom string, pos int) (ref, gene string, ok bool) {
	return k.definitionRef(chrom, pos)
}

// RefDisagrees reports whether a stated REF's first base (the base at the
// position itself) is not the GRCh38 base grch38; N states nothing.
func RefDisagrees(stated, grch38 string) bool { return refDisagrees(stated, grch38) }

// accessionChrom returns the chromosome a RefSeq chromosome accession
// names (NC_000001 to NC_000022, NC_000023 X, NC_000024 Y, NC_012920 the
// mitochondrion), whatever its version, or "".
func accessionChrom(acc string) string {
	base, _, _ := strings.Cut(acc, ".")
	if base == "NC_012920" {
		return "chrM"
	}
	n, err := strconv.Atoi(strings.TrimPrefix(base, "NC_0000"))
	if !strings.HasPrefix(base, "NC_0000") || len(base) != 9 || err != nil {
		return ""
	}
	switch {
	case n >= 1 && n <= 22:
		return "chr" + strconv.Itoa(n)
	case n == 23:
		return "chrX"
	case n == 24:
		return "chrY"
	}
	return ""
}
