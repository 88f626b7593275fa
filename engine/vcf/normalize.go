package vcf

// An allele can be written in more than one way in VCF: an insertion in a
// repeat may be placed at any copy of the repeat unit and padded with any
// number of reference bases (GATK writes the UGT1A1 TA repeat as C>CAT at
// the first base of the repeat, PharmCAT's definitions as CAT>CATAT). Two
// writings are the same allele exactly when they turn the same stretch of
// reference into the same sequence; Equivalent decides that from the bases
// the two REF columns themselves give, without a reference genome.

// Allele is one alternate allele as a VCF record writes it: its position,
// its REF bases and the ALT bases that replace them.
type Allele struct {
	Pos int
	Ref string // upper-case bases
	Alt string // upper-case bases; a symbolic or '*' allele never compares
}

// end is the last reference position the allele replaces.
func (a Allele) end() int { return a.Pos + len(a.Ref) - 1 }

// Equivalent reports whether a and b are the same change to the reference.
// Comparable is false when the two REF columns disagree where they overlap
// (a different build or a wrong position), when they do not overlap or touch
// so that the reference between them is unknown, or when an allele is not a
// run of bases; same is then false. Identical writings are always the same.
func Equivalent(a, b Allele) (same, comparable bool) {
	if a == b && isBases(a.Ref) && isBases(a.Alt) {
		return true, true
	}
	if !isBases(a.Ref) || !isBases(a.Alt) || !isBases(b.Ref) || !isBases(b.Alt) || a.Pos < 1 || b.Pos < 1 {
		return false, false
	}
	start, end := min(a.Pos, b.Pos), max(a.end(), b.end())
	// The two REFs must cover the window between them without a gap.
	if b.Pos > a.end()+1 || a.Pos > b.end()+1 {
		return false, false
	}
	window := make([]byte, end-start+1)
	for _, x := range []Allele{a, b} {
		for i := 0; i < len(x.Ref); i++ {
			at := x.Pos - start + i
			if window[at] != 0 && window[at] != x.Ref[i] {
				return false, false
			}
			window[at] = x.Ref[i]
		}
	}
	apply := func(x Allele) string {
		return string(window[:x.Pos-start]) + x.Alt + string(window[x.end()-start+1:])
	}
	return apply(a) == apply(b), true
}
