package vcfcall

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/vcf"
)

// This file turns the records of a VCF or gVCF that cover a definition
// site into the one observation the matcher reads there, per sample:
//
//   - a variant record written at the site's position is used (over any
//     reference block overlapping it: GATK writes GQ-0 blocks just after
//     indels), its alleles matched to the definitions' writing with
//     vcf.Equivalent when the caller pads or places an indel differently;
//   - else a variant record written elsewhere whose allele changes the
//     site's REF is used when its allele is one of the definitions' at the
//     site, and withheld (a no-call, and a review) when it is not;
//   - else reference blocks (no base ALT: only <NON_REF>, <*> or none,
//     over POS..END) are evidence of the reference allele when together
//     they cover every base of the definition's REF (a deletion's "TG"
//     needs both bases), with the weakest quality among them; a variant
//     record written at another definition site inside the REF, with
//     alleles documented there (a SNP inside a deletion's REF), covers its
//     bases (they are present: this site's deletion is not). A variant
//     record written elsewhere where the sample is reference is no
//     evidence at the site (it genotypes its own alleles).
//
// A genotype is withheld (a no-call at the site, named) when its GQ or
// depth is below the thresholds, its record's FILTER is not PASS, or it
// selects a symbolic allele (<NON_REF>, '*').

// Default quality thresholds (the project's choice, see docs/vcf.md): a
// genotype quality of 20 (a 1 % chance, on the Phred scale, that the
// genotype is wrong) and a depth of 10 reads are common minimums of
// clinical sequencing pipelines; a weaker genotype is a no-call.
const (
	DefaultMinGQ = 20
	DefaultMinDP = 10
)

// keptRecord is one record that covers a definition site, with the
// group's calls copied out of the reader's buffers.
type keptRecord struct {
	line     int
	source   string // "line 12", or "record chr10:94781859" in a region read
	pos, end int
	ref      string
	alts     []string
	filter   []string
	block    bool
	calls    []vcf.Call
	// site is the definition site the record is written at, if any.
	site *calling.DefinitionSite
}

// documentedAt reports whether the record is written at a definition site
// of its own and every allele the genotype names is one of that site's
// (in the definitions' writing or an equivalent one): it is evidence
// there, where it is read, and says of an overlapping site only that the
// bases it covers are present.
func (kr *keptRecord) documentedAt(gt []int) bool {
	if kr.site == nil || kr.block {
		return false
	}
	_, ok := translate(*kr.site, kr, gt)
	return ok
}

// isBlock reports whether a record is a reference block: no base ALT
// allele (only <NON_REF>, <*> or none).
func isBlock(rec *vcf.Record) bool {
	for _, a := range rec.Alts {
		if isBases(a) {
			return false
		}
	}
	return true
}

// siteKey identifies a definition site.
type siteKey struct {
	chrom string
	pos   int
}

// siteRecords collects, per definition site, the kept records covering it.
type siteRecords struct {
	order []calling.DefinitionSite
	recs  map[siteKey][]*keptRecord
}

func (sr *siteRecords) add(s calling.DefinitionSite, kr *keptRecord) {
	if sr.recs == nil {
		sr.recs = map[siteKey][]*keptRecord{}
	}
	k := siteKey{s.Chrom, s.Pos}
	if _, ok := sr.recs[k]; !ok {
		sr.order = append(sr.order, s)
	}
	sr.recs[k] = append(sr.recs[k], kr)
}

// thresholds are the quality thresholds of a run; a negative value is off.
type thresholds struct{ minGQ, minDP int }

func (o Options) thresholds() thresholds {
	t := thresholds{o.MinGQ, o.MinDP}
	if t.minGQ == 0 {
		t.minGQ = DefaultMinGQ
	}
	if t.minDP == 0 {
		t.minDP = DefaultMinDP
	}
	return t
}

// observations builds sample j's observations from the records of every
// site, in site order.
func (sr *siteRecords) observations(j int, th thresholds) []calling.PositionObservation {
	var out []calling.PositionObservation
	for _, s := range sr.order {
		out = append(out, siteObservations(s, sr.recs[siteKey{s.Chrom, s.Pos}], j, th)...)
	}
	return out
}

func lineSource(kr *keptRecord) string { return kr.source }

// lineNumber is the record's line for a list of lines, or its source when
// the line is not known (a region read through an index).
func lineNumber(kr *keptRecord) string {
	if kr.line > 0 {
		return strconv.Itoa(kr.line)
	}
	return kr.source
}

// siteObservations is the evidence of sample j at site s (see the top of
// the file).
func siteObservations(s calling.DefinitionSite, recs []*keptRecord, j int, th thresholds) []calling.PositionObservation {
	var out []calling.PositionObservation
	// over are the variant records written elsewhere whose allele carried
	// by the sample changes the site's REF.
	var over []*keptRecord
	for _, kr := range recs {
		if !kr.block && kr.pos != s.Pos && !kr.documentedAt(kr.calls[j].Alleles) && changesSite(s, kr, kr.calls[j].Alleles) {
			over = append(over, kr)
		}
	}
	for _, kr := range recs {
		if !kr.block && kr.pos == s.Pos {
			o := variantObservation(s, kr, j, th)
			if len(over) > 0 && o.Withheld == "" {
				o.Withheld, o.WithheldVariant = "another variant overlaps the definition's REF "+s.Ref+": "+describe(s, over), true
			}
			out = append(out, o)
		}
	}
	if len(out) > 0 {
		return out
	}
	switch {
	case len(over) == 1:
		o := variantObservation(s, over[0], j, th)
		if o.Ref != s.Ref || o.Pos != s.Pos {
			o.Pos, o.Ref, o.Alts = s.Pos, s.Ref, nil
			o.Withheld, o.WithheldVariant = fmt.Sprintf("a variant written at %s:%d (%s>%s) changes the definition's REF %s and is none of its alleles", s.Chrom, over[0].pos, over[0].ref, strings.Join(over[0].alts, ","), s.Ref), true
		}
		return []calling.PositionObservation{o}
	case len(over) > 1:
		var lines []string
		for _, kr := range over {
			lines = append(lines, lineNumber(kr))
		}
		return []calling.PositionObservation{{Chrom: s.Chrom, Pos: s.Pos, Ref: s.Ref, Source: "lines " + strings.Join(lines, ", "),
			Withheld: "several variants overlap the definition's REF " + s.Ref + ": " + describe(s, over), WithheldVariant: true}}
	}
	if o, ok := referenceObservation(s, recs, j, th); ok {
		return []calling.PositionObservation{o}
	}
	return nil
}

// describe names variant records for messages.
func describe(s calling.DefinitionSite, recs []*keptRecord) string {
	var what []string
	for _, kr := range recs {
		what = append(what, fmt.Sprintf("%s:%d %s>%s (%s)", s.Chrom, kr.pos, kr.ref, strings.Join(kr.alts, ","), kr.source))
	}
	return strings.Join(what, "; ")
}

// changesSite reports whether an ALT allele the genotype names changes a
// base of the site's REF span [Pos, End] (an insertion counts when it
// falls between two of its bases). A symbolic allele (<NON_REF>, '*',
// <DEL>) counts when the record's REF overlaps the span: what it changes
// is not written.
func changesSite(s calling.DefinitionSite, kr *keptRecord, gt []int) bool {
	for _, g := range gt {
		if g <= 0 || g > len(kr.alts) {
			continue
		}
		alt := kr.alts[g-1]
		if !isBases(alt) {
			if kr.pos <= s.End() && kr.end >= s.Pos && (alt != "<NON_REF>" || !kr.block) {
				return true
			}
			continue
		}
		ref := kr.ref
		i := 0
		for i < len(ref) && i < len(alt) && ref[i] == alt[i] {
			i++
		}
		k := 0
		for k < len(ref)-i && k < len(alt)-i && ref[len(ref)-1-k] == alt[len(alt)-1-k] {
			k++
		}
		lo, hi := kr.pos+i, kr.pos+len(ref)-1-k // changed reference bases [lo, hi]; hi < lo: an insertion before lo
		if hi >= lo {
			if lo <= s.End() && hi >= s.Pos {
				return true
			}
			continue
		}
		if lo-1 >= s.Pos && lo <= s.End() {
			return true
		}
	}
	return false
}

// carriesAlt reports whether a genotype names an ALT allele.
func carriesAlt(gt []int) bool {
	for _, g := range gt {
		if g > 0 {
			return true
		}
	}
	return false
}

// variantObservation is sample j's genotype at a variant record, its
// alleles written as the definitions write them at s when the record
// writes them otherwise.
func variantObservation(s calling.DefinitionSite, kr *keptRecord, j int, th thresholds) calling.PositionObservation {
	c := kr.calls[j]
	o := calling.PositionObservation{Chrom: s.Chrom, Pos: kr.pos, Ref: kr.ref, Alts: kr.alts, GT: c.Alleles, Phased: c.Phased, Source: lineSource(kr)}
	phase(&o, c, len(kr.alts))
	if kr.ref != s.Ref || kr.pos != s.Pos {
		if alts, ok := translate(s, kr, o.GT); ok {
			o.Pos, o.Ref, o.Alts = s.Pos, s.Ref, alts
			o.Source += fmt.Sprintf(", %s:%d %s>%s read as the definition writes it (REF %s at %d)", s.Chrom, kr.pos, kr.ref, strings.Join(kr.alts, ","), s.Ref, s.Pos)
		}
	}
	withhold(&o, []*keptRecord{kr}, j, th)
	return o
}

// translate writes a record's alleles as the definitions write them at s:
// its REF must agree with the definition's where they overlap, and every
// base ALT allele the genotype names must be the same change as one of the
// definition's alleles (vcf.Equivalent). ALT alleles the genotype does not
// name are kept as written (they are never read).
func translate(s calling.DefinitionSite, kr *keptRecord, gt []int) ([]string, bool) {
	if _, comparable := vcf.Equivalent(vcf.Allele{Pos: kr.pos, Ref: kr.ref, Alt: kr.ref}, vcf.Allele{Pos: s.Pos, Ref: s.Ref, Alt: s.Ref}); !comparable {
		return nil, false
	}
	alts := slices.Clone(kr.alts)
	for i, a := range kr.alts {
		if !isBases(a) {
			continue
		}
		found := false
		for _, d := range s.Alts {
			if same, _ := vcf.Equivalent(vcf.Allele{Pos: kr.pos, Ref: kr.ref, Alt: a}, vcf.Allele{Pos: s.Pos, Ref: s.Ref, Alt: d}); same {
				alts[i], found = d, true
				break
			}
		}
		if !found && slices.Contains(gt, i+1) {
			return nil, false
		}
	}
	return alts, true
}

// phase sets the observation's phase from the call: a '|' genotype is in
// its PS phase set (the file's default set without PS); an unphased
// genotype with GATK's physical phasing (PGT with the same alleles, and a
// PID) is phased within the PID group.
func phase(o *calling.PositionObservation, c vcf.Call, nAlts int) {
	if c.Phased {
		if c.PS != "" {
			o.PhaseSet = "PS " + c.PS
		}
		return
	}
	if c.PGT == "" || c.PID == "" || len(c.Alleles) != 2 {
		return
	}
	a, b, ok := strings.Cut(c.PGT, "|")
	if !ok {
		return
	}
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || x < 0 || y < 0 || x > nAlts || y > nAlts {
		return
	}
	if !(x == c.Alleles[0] && y == c.Alleles[1] || x == c.Alleles[1] && y == c.Alleles[0]) {
		return // PGT does not name the genotype's alleles: not used
	}
	o.GT, o.Phased, o.PhaseSet = []int{x, y}, true, "PID "+c.PID
}

// withhold marks the observation a no-call when the records it rests on
// fail a threshold, are filtered, or the genotype selects a symbolic
// allele.
func withhold(o *calling.PositionObservation, used []*keptRecord, j int, th thresholds) {
	if o.Withheld != "" || len(o.GT) == 0 || !slices.ContainsFunc(o.GT, func(g int) bool { return g >= 0 }) {
		return
	}
	var why []string
	variant := false
	for _, kr := range used {
		c := kr.calls[j]
		for _, g := range c.Alleles {
			if g > 0 && g <= len(kr.alts) && !isBases(kr.alts[g-1]) {
				why = append(why, fmt.Sprintf("the genotype selects %s (%s), a non-base ALT allele: which allele it stands for is not written out", kr.alts[g-1], lineSource(kr)))
				variant = true
				break
			}
		}
		if carriesAlt(c.Alleles) {
			variant = true
		}
		if len(kr.filter) > 0 && !(len(kr.filter) == 1 && kr.filter[0] == "PASS") {
			why = append(why, fmt.Sprintf("FILTER %s (%s)", strings.Join(kr.filter, ";"), lineSource(kr)))
		}
		if c.GQ.Known && th.minGQ > 0 && c.GQ.Value < th.minGQ {
			why = append(why, fmt.Sprintf("GQ %d is below the minimum %d (%s)", c.GQ.Value, th.minGQ, lineSource(kr)))
		}
		depth, name := c.DP, "DP"
		if kr.block && c.MinDP.Known {
			depth, name = c.MinDP, "MIN_DP"
		}
		if depth.Known && th.minDP > 0 && depth.Value < th.minDP {
			why = append(why, fmt.Sprintf("%s %d is below the minimum %d (%s)", name, depth.Value, th.minDP, lineSource(kr)))
		}
	}
	if len(why) > 0 {
		o.Withheld, o.WithheldVariant = strings.Join(why, "; "), variant
	}
}

// referenceObservation is the reference evidence at s from reference
// blocks: it needs every base of the definition's REF covered; a no-call
// there is a no-call at s.
func referenceObservation(s calling.DefinitionSite, recs []*keptRecord, j int, th thresholds) (calling.PositionObservation, bool) {
	covered := make([]bool, len(s.Ref))
	var used []*keptRecord
	var lines []string
	ploidy := 0
	nocall := false
	for _, kr := range recs {
		c := kr.calls[j]
		if !kr.block {
			// A variant record written at another definition site, with
			// alleles documented there, says the bases it covers are
			// present; any other variant record genotypes its own alleles,
			// not this site: no evidence here.
			if kr.documentedAt(c.Alleles) {
				for p := max(kr.pos, s.Pos); p <= min(kr.pos+len(kr.ref)-1, s.End()); p++ {
					covered[p-s.Pos] = true
				}
			}
			continue
		}
		used = append(used, kr)
		lines = append(lines, lineNumber(kr))
		if len(c.Alleles) == 0 || slices.Contains(c.Alleles, -1) {
			if !carriesAlt(c.Alleles) {
				nocall = true
			}
		}
		if ploidy == 0 {
			ploidy = len(c.Alleles)
		}
		for p := max(kr.pos, s.Pos); p <= min(kr.end, s.End()); p++ {
			covered[p-s.Pos] = true
		}
	}
	if len(used) == 0 {
		return calling.PositionObservation{}, false
	}
	src := lineSource(used[0])
	if len(lines) > 1 {
		src = "lines " + strings.Join(lines, ", ")
	}
	if used[0].block {
		src += " (reference block)"
	}
	o := calling.PositionObservation{Chrom: s.Chrom, Pos: s.Pos, Ref: s.Ref, Source: src}
	if nocall || ploidy == 0 {
		return o, true // a no-call: GT nil
	}
	o.GT = make([]int, ploidy)
	// A block genotype naming <NON_REF> is withheld by withhold.
	for _, kr := range used {
		if carriesAlt(kr.calls[j].Alleles) {
			o.GT = slices.Clone(kr.calls[j].Alleles)
			o.Alts = kr.alts
			break
		}
	}
	// A block's REF is the GRCh38 base at its first position: one that
	// disagrees with the definition's REF there is not GRCh38 (a wrong
	// build, a wrong position) and never reads as the reference.
	for _, kr := range used {
		if at := kr.pos - s.Pos; at >= 0 && at < len(s.Ref) && len(kr.ref) > 0 && kr.ref[0] != s.Ref[at] {
			o.Withheld, o.WithheldVariant = fmt.Sprintf("the reference block's REF %c at %s:%d (%s) is not the GRCh38 base %c of the definition's REF %s", kr.ref[0], s.Chrom, kr.pos, lineSource(kr), s.Ref[at], s.Ref), true
			return o, true
		}
	}
	if i := slices.Index(covered, false); i >= 0 {
		o.Withheld = fmt.Sprintf("the records cover %s:%d but not every base of the definition's REF %s (%s:%d-%d; %d not covered)", s.Chrom, used[0].pos, s.Ref, s.Chrom, s.Pos, s.End(), s.Pos+i)
		o.WithheldVariant = carriesAlt(o.GT)
		return o, true
	}
	withhold(&o, used, j, th)
	if carriesAlt(o.GT) && o.Withheld == "" {
		o.Withheld, o.WithheldVariant = "a reference block's genotype names an ALT allele", true
	}
	return o, true
}
