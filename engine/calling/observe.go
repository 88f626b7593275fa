package calling

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// This file maps the request's genotype input forms onto position
// observations for the one allele matcher (match.go):
//
//   - variants items: an rsID ("rs4244285"), an rsID with its allele in
//     VCF notation or the definitions' CPIC notation ("rs3892097:T",
//     "rs3064744:CATAT", "rs72549309:ATGA(1)"; a UGT1A1 repeat count says
//     how it is counted, "rs3064744:TA(8)@definitions" or
//     "rs3064744:(TA)7@clinical", notation.go), or a genomic HGVS SNV on a
//     GRCh38 RefSeq chromosome ("NC_000023.11:g.154532082G>A"); zygosity
//     ("het", "hom", "hemi", or "ref" for an explicit reference call) is
//     keyed by the item or by its rsID;
//   - calls: position-level calls (chromosome, GRCh38 position, ref, alt,
//     genotype "0/1", "1|0", "1/1", "0/0", "./.");
//   - genes_tested: the positions of a tested gene not reported are
//     reference (elsewhere they are missing, as in a VCF).

var (
	hgvsRe     = regexp.MustCompile(`^(NC_0000[0-9]{2}\.[0-9]+):g\.([0-9]+)([ACGT])>([ACGT])$`)
	alleleRe   = regexp.MustCompile(`^[ACGTN]+$`)
	gtRe       = regexp.MustCompile(`^([0-9]+|\.)([/|]([0-9]+|\.))?$`)
	chromRe    = regexp.MustCompile(`^(chr)?([0-9]{1,2}|X|Y|M|MT)$`)
	cpicNameRe = regexp.MustCompile(`^[A-Za-z0-9()\[\]>*+-]+$`)
)

// variantSpec is one parsed variants item.
type variantSpec struct {
	item   string // as given, trimmed
	rsid   string // lower case, "" for HGVS
	allele string // VCF allele or the definitions' notation, or "" when not given
	// ambiguousRepeat is true for a bare repeat count of a variant whose
	// count has two meanings (notation.go): Validate refuses it.
	ambiguousRepeat bool
	// HGVS
	chrom string
	pos   int
	ref   string
}

// parseVariantItem parses one variants item; the error says what is wrong.
func parseVariantItem(s string) (variantSpec, error) {
	s = strings.TrimSpace(s)
	v := variantSpec{item: s}
	if m := hgvsRe.FindStringSubmatch(s); m != nil {
		pos, err := strconv.Atoi(m[2])
		if err != nil || pos <= 0 {
			return v, fmt.Errorf("bad position in %q", s)
		}
		v.chrom, v.pos, v.ref, v.allele = m[1], pos, m[3], m[4]
		return v, nil
	}
	if strings.HasPrefix(s, "NC_") {
		return v, fmt.Errorf("%q: only genomic HGVS substitutions on a GRCh38 RefSeq chromosome are understood, e.g. NC_000023.11:g.154532082G>A", s)
	}
	id, allele, hasAllele := strings.Cut(s, ":")
	rs, ok := NormaliseRsID(id)
	if !ok {
		return v, fmt.Errorf("must be an rsID (rs<digits>), an rsID with its allele (rs3892097:T) or a genomic HGVS substitution (NC_000023.11:g.154532082G>A), got %q", s)
	}
	v.rsid = rs
	if hasAllele {
		allele = strings.TrimSpace(allele)
		v.item = rs + ":" + allele
		written, marker := cutRepeatMarker(allele)
		if written == "" || len(written) > 200 || !cpicNameRe.MatchString(written) {
			return v, fmt.Errorf("%q: the allele after the colon must be a VCF allele such as T or CATAT, or the CPIC notation of the definitions such as ATGA(1); a repeat count of %s says how it is counted (TA(8)%s, (TA)7%s)", s, repeatVariantList(), RepeatMarkerDefinitions, RepeatMarkerClinical)
		}
		a, ambiguous, err := repeatAllele(rs, written, marker)
		if err != nil {
			return v, fmt.Errorf("%q: %v", s, err)
		}
		v.allele, v.ambiguousRepeat = a, ambiguous
	} else {
		v.item = rs
	}
	return v, nil
}

// parseGT parses a VCF-style genotype.
func parseGT(s string) ([]int, bool, error) {
	s = strings.TrimSpace(s)
	m := gtRe.FindStringSubmatch(s)
	if m == nil {
		return nil, false, fmt.Errorf("genotype must be written like 0/1, 1|0, 1/1, 0/0, ./. or 1 (haploid), got %q", s)
	}
	var gt []int
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '|' }) {
		if part == "." {
			gt = append(gt, -1)
			continue
		}
		n, err := strconv.Atoi(part)
		if err != nil || n > 50 {
			return nil, false, fmt.Errorf("bad allele index %q in genotype %q", part, s)
		}
		gt = append(gt, n)
	}
	return gt, strings.Contains(s, "|"), nil
}

// NormChrom writes a chromosome name as "chr10", "chrX", "chrM".
func NormChrom(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "chr"), "Chr")
	switch strings.ToUpper(s) {
	case "M", "MT":
		return "chrM"
	case "X", "Y":
		return "chr" + strings.ToUpper(s)
	}
	return "chr" + s
}

// validateCall checks one position-level call.
func validateCall(c engine.PositionCall) []string {
	var bad []string
	if !chromRe.MatchString(strings.TrimSpace(c.Chrom)) {
		bad = append(bad, fmt.Sprintf("chrom: must be a chromosome such as chr10 or X, got %q", c.Chrom))
	}
	if c.Pos <= 0 || c.Pos > 300_000_000 {
		bad = append(bad, "pos: must be a GRCh38 position (1-based)")
	}
	if !alleleRe.MatchString(c.Ref) || len(c.Ref) > 200 {
		bad = append(bad, fmt.Sprintf("ref: must be bases A, C, G, T or N, got %q", c.Ref))
	}
	alts := splitAlts(c.Alt)
	for _, a := range alts {
		if !alleleRe.MatchString(a) || len(a) > 200 {
			bad = append(bad, fmt.Sprintf("alt: must be bases A, C, G, T or N (comma-separated when several), got %q", c.Alt))
			break
		}
	}
	gt, _, err := parseGT(c.Genotype)
	if err != nil {
		bad = append(bad, "genotype: "+err.Error())
	}
	for _, g := range gt {
		if g > len(alts) {
			bad = append(bad, fmt.Sprintf("genotype: allele index %d has no alt (alt is %q)", g, c.Alt))
			break
		}
	}
	return bad
}

func splitAlts(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" || s == "." {
		return nil
	}
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// defLocus is one definition position an rsID or HGVS names.
type defLocus struct {
	di *defIndex
	i  int
}

// observed input for one request.
type requestObs struct {
	obs []PositionObservation
	// choices are observations whose alternate base is unknown (an rsID of
	// a multi-allelic site given without its allele): each is tried.
	choices [][]PositionObservation
	// per gene: the input items placed on it, notes and review items.
	items  map[string][]string
	notes  map[string][]string
	review map[string][]string
	// unplaced items: unknown ids, tracked variants without definitions.
	unrecognised []string
	warnings     []string
	// unstated are the items read as heterozygous because no zygosity
	// was given (at least one copy).
	unstated map[string]bool
	// unplacedOn are the non-reference items on a chromosome that no
	// definition position and no gene's span takes (a call at a GRCh37
	// position, say): a tested gene on that chromosome goes to review.
	unplacedOn map[string][]string
	// unplacedAnywhere are items that name no gene and no chromosome (an
	// rsID no definition or panel row knows): every gene the request
	// reports as tested goes to review.
	unplacedAnywhere []string
	// ledger, conflicts and sentToReview are the evidence ledger
	// (ledger.go): every input item, the sources that disagree with other
	// evidence, and the tested genes an unplaceable item sent to review.
	ledger       []*ledgerEntry
	conflicts    map[string]string
	sentToReview map[string][]string
}

// unplace records item as unplaced on chrom (unplacedOn).
func (r *requestObs) unplace(chrom, item string) {
	if r.unplacedOn == nil {
		r.unplacedOn = map[string][]string{}
	}
	r.unplacedOn[chrom] = append(r.unplacedOn[chrom], item)
}

// add appends s to gene's list in *m unless it is there, making the map
// on first use.
func (r *requestObs) add(gene string, m *map[string][]string, s string) {
	if *m == nil {
		*m = map[string][]string{}
	}
	if (*m)[gene] == nil || !slices.Contains((*m)[gene], s) {
		(*m)[gene] = append((*m)[gene], s)
	}
}

// observationsFor builds position observations from the request's rsIDs,
// HGVS items and position calls. req has passed Validate.
func (k *Caller) observationsFor(req engine.Request, male bool) *requestObs {
	// The per-gene maps, unstated and unplacedOn are made on first write
	// (add, unplace, and below): nil maps read as empty.
	ro := &requestObs{}
	zyg := map[string]engine.Zygosity{}
	for key, z := range req.Zygosity {
		zyg[strings.ToLower(strings.TrimSpace(key))] = z
	}
	seen := map[string]string{}
	for i, item := range req.Variants {
		v, err := parseVariantItem(item)
		if err != nil {
			continue
		}
		e := ro.entry(fmt.Sprintf("variants[%d]", i), v.item, v.item)
		if first, dup := seen[strings.ToLower(v.item)]; dup {
			e.sameAs = first
			continue
		}
		seen[strings.ToLower(v.item)] = e.field
		z, stated := zyg[strings.ToLower(v.item)]
		if !stated && v.rsid != "" {
			z, stated = zyg[v.rsid]
		}
		var loci []defLocus
		if v.rsid != "" {
			loci = k.idx.defRsid[v.rsid]
		} else {
			loci = k.hgvsLoci(v)
		}
		if len(loci) == 0 {
			var gene string
			e.unplaced, gene = k.unplaced(ro, v)
			if gene != "" {
				e.genes = []string{gene}
			}
			continue
		}
		for _, l := range loci {
			if why := k.placeItem(ro, l, v, z, stated, male); why != "" {
				e.unplaced = why
			}
			if !slices.Contains(e.genes, l.di.def.Gene) {
				e.genes = append(e.genes, l.di.def.Gene)
			}
		}
	}
	for i, c := range req.Calls {
		chrom := NormChrom(c.Chrom)
		gt, phased, _ := parseGT(c.Genotype)
		o := PositionObservation{Chrom: chrom, Pos: c.Pos, Ref: strings.TrimSpace(c.Ref), Alts: splitAlts(c.Alt), GT: gt, Phased: phased,
			Source: fmt.Sprintf("calls[%d]", i)}
		dis := k.idx.defPos[chrom][c.Pos]
		item := fmt.Sprintf("%s:%d:%s>%s %s", chrom, c.Pos, c.Ref, c.Alt, c.Genotype)
		e := ro.entry(o.Source, item, o.Source)
		if len(dis) == 0 {
			if g := k.geneSpanning(chrom, c.Pos); g != "" && !allRef(gt) {
				ro.add(g, &ro.review, fmt.Sprintf("calls[%d] %s:%d %s>%s is inside %s but at no position of its allele definitions", i, chrom, c.Pos, c.Ref, c.Alt, g))
				ro.add(g, &ro.items, fmt.Sprintf("%s:%d", chrom, c.Pos))
				e.genes = []string{g}
				e.unplaced = fmt.Sprintf("inside %s but at no position of its allele definitions; %s is sent to review", g, g)
			} else if !allRef(gt) {
				item := fmt.Sprintf("%s:%d:%s>%s", chrom, c.Pos, c.Ref, c.Alt)
				ro.unrecognised = append(ro.unrecognised, item)
				ro.unplace(chrom, fmt.Sprintf("calls[%d] %s", i, item))
				e.source = fmt.Sprintf("calls[%d] %s", i, item)
				e.unplaced = "at no position of any allele definition and outside every gene's defined span (a coordinate on another build?)"
			} else {
				e.unplaced = "a reference call at no position of any allele definition: it says nothing about a pharmacogene"
			}
			continue
		}
		for _, di := range dis {
			ro.add(di.def.Gene, &ro.items, fmt.Sprintf("%s:%d", chrom, c.Pos))
			if !slices.Contains(e.genes, di.def.Gene) {
				e.genes = append(e.genes, di.def.Gene)
			}
		}
		ro.obs = append(ro.obs, o)
	}
	k.positionConflicts(ro)
	sort.Strings(ro.unrecognised)
	return ro
}

func allRef(gt []int) bool {
	for _, g := range gt {
		if g != 0 {
			return false
		}
	}
	return true
}

// unplaced handles an item no definition position knows and returns why
// it could not be placed and the gene it sent to review, if any.
func (k *Caller) unplaced(ro *requestObs, v variantSpec) (why, gene string) {
	if v.rsid == "" {
		chrom := k.idx.refSeqChrom[v.chrom]
		if chrom == "" {
			chrom = accessionChrom(v.chrom)
		}
		if g := k.geneSpanning(chrom, v.pos); g != "" {
			ro.add(g, &ro.review, fmt.Sprintf("%s is inside %s but at no position of its allele definitions", v.item, g))
			ro.add(g, &ro.items, v.item)
			return fmt.Sprintf("inside %s but at no position of its allele definitions; %s is sent to review", g, g), g
		}
		ro.unrecognised = append(ro.unrecognised, v.item)
		if chrom != "" {
			ro.unplace(chrom, v.item)
			return "at no position of any allele definition and outside every gene's defined span (a coordinate on another build?)", ""
		}
		ro.unplacedAnywhere = append(ro.unplacedAnywhere, v.item)
		return "names no chromosome the definitions use", ""
	}
	if tv, ok := k.TrackedVariant(v.rsid); ok {
		if _, hasDef := k.idx.defs[tv.Gene]; hasDef {
			ro.add(tv.Gene, &ro.review, fmt.Sprintf("%s (%s on the tracked panel) is in no CPIC/PharmCAT allele definition of %s, so its effect on the %s result is not interpreted", v.item, tv.AlleleLabel, tv.Gene, tv.Gene))
			ro.add(tv.Gene, &ro.items, v.item)
			return fmt.Sprintf("%s on the tracked panel, but in no allele definition of %s; %s is sent to review", tv.AlleleLabel, tv.Gene, tv.Gene), tv.Gene
		}
		ro.warnings = append(ro.warnings, fmt.Sprintf("%s (%s) is on the tracked panel but no CPIC allele definition uses it; it does not change the advice", v.rsid, tv.Gene))
		return fmt.Sprintf("on the tracked panel (%s), but no CPIC allele definition uses it; it does not change the advice", tv.Gene), ""
	}
	ro.unrecognised = append(ro.unrecognised, v.item)
	ro.unplacedAnywhere = append(ro.unplacedAnywhere, v.item)
	return "in no allele definition and on no panel row, so its gene is unknown", ""
}

// hgvsLoci finds the definition position of a genomic HGVS item.
func (k *Caller) hgvsLoci(v variantSpec) []defLocus {
	chrom, ok := k.idx.refSeqChrom[v.chrom]
	if !ok {
		return nil
	}
	var out []defLocus
	for _, di := range k.idx.defPos[chrom][v.pos] {
		if i, ok := di.posIdx[v.pos]; ok {
			out = append(out, defLocus{di, i})
		}
	}
	return out
}

// geneSpanning returns the gene whose definition positions span chrom:pos.
func (k *Caller) geneSpanning(chrom string, pos int) string {
	for _, g := range k.DefinitionGenes() {
		d := k.idx.defs[g].def
		if d.Chromosome != chrom || len(d.Positions) == 0 {
			continue
		}
		if pos >= d.Positions[0].Pos && pos <= d.Positions[len(d.Positions)-1].Pos {
			return g
		}
	}
	return ""
}

// placeItem turns one rsID/HGVS item at one definition position into an
// observation (or a set of choices when the alternate base is unknown).
func (k *Caller) placeItem(ro *requestObs, l defLocus, v variantSpec, z engine.Zygosity, stated, male bool) (unplaced string) {
	d := l.di.def
	p := d.Positions[l.i]
	gene := d.Gene
	ro.add(gene, &ro.items, v.item)
	if v.rsid == "" && v.ref != p.Ref {
		ro.add(gene, &ro.review, fmt.Sprintf("%s: the reference base %s is not the GRCh38 base %s at %s:%d", v.item, v.ref, p.Ref, d.Chromosome, p.Pos))
		return fmt.Sprintf("the reference base %s is not the GRCh38 base %s at %s:%d; %s is sent to review", v.ref, p.Ref, d.Chromosome, p.Pos, gene)
	}
	ref := l.di.refCells[l.i]
	// The alternate alleles the definitions use at the position.
	var defined []string
	for _, a := range l.di.used[l.i] {
		if a != ref && !isWobble(a) {
			defined = append(defined, a)
		}
	}
	var alts []string
	switch {
	case z == engine.Ref:
		alts = nil
	case v.allele != "":
		a := v.allele
		if vcf, ok := p.CPICToVCF[a]; ok {
			a = vcf
		}
		if a == ref {
			ro.add(gene, &ro.notes, fmt.Sprintf("%s names the reference allele: read as a reference call", v.item))
			z = engine.Ref
			break
		}
		alts = []string{a}
	case len(defined) == 1:
		alts = defined
	case len(defined) == 0:
		ro.add(gene, &ro.review, fmt.Sprintf("%s: no %s allele is defined by a non-reference base at %s:%d", v.item, gene, d.Chromosome, p.Pos))
		return fmt.Sprintf("no %s allele is defined by a non-reference base at %s:%d; %s is sent to review", gene, d.Chromosome, p.Pos, gene)
	default:
		alts = defined
	}
	hemi := male && d.Chromosome == "chrX"
	gtFor := func(alt int) []int {
		switch {
		case z == engine.Ref && hemi:
			return []int{0}
		case z == engine.Ref:
			return []int{0, 0}
		case hemi || z == engine.Hemi:
			return []int{alt}
		case z == engine.Hom:
			return []int{alt, alt}
		default:
			return []int{0, alt}
		}
	}
	if z != engine.Ref && !stated {
		if ro.unstated == nil {
			ro.unstated = map[string]bool{}
		}
		ro.unstated[v.item] = true
	}
	if z != engine.Ref && !stated && !hemi {
		ro.add(gene, &ro.notes, fmt.Sprintf("zygosity of %s not given: assumed heterozygous (at least one copy)", v.item))
	}
	if hemi && stated && z != engine.Hemi && z != engine.Ref {
		ro.add(gene, &ro.notes, fmt.Sprintf("%s is on chrX and the patient is male: %s read as hemizygous", v.item, z))
	}
	base := PositionObservation{Chrom: d.Chromosome, Pos: p.Pos, Ref: p.Ref, Source: v.item}
	if z == engine.Ref {
		o := base
		o.GT = gtFor(0)
		ro.obs = append(ro.obs, o)
		return ""
	}
	if len(alts) == 1 {
		o := base
		o.Alts = alts
		o.GT = gtFor(1)
		ro.obs = append(ro.obs, o)
		return ""
	}
	var choice []PositionObservation
	for _, a := range alts {
		o := base
		o.Alts = []string{a}
		o.GT = gtFor(1)
		choice = append(choice, o)
	}
	ro.choices = append(ro.choices, choice)
	ro.add(gene, &ro.notes, fmt.Sprintf("%s is multi-allelic (%s>%s) and was given without its allele: each was tried and the most severe reading applies; give it as %s:ALT", v.item, p.Ref, strings.Join(alts, ","), v.item))
	return ""
}

// maxChoiceCombinations bounds the readings tried for multi-allelic rsIDs
// given without their allele.
const maxChoiceCombinations = 64

// callRequest runs the matcher on a request's observations: once, or
// once per combination of the alternate bases of multi-allelic rsIDs given
// without their allele, merging the calls per gene.
func (k *Caller) callRequest(ro *requestObs, opt CallOptions) map[string]*GeneCall {
	combos := 1
	for _, c := range ro.choices {
		combos *= len(c)
		if combos > maxChoiceCombinations {
			break
		}
	}
	out := map[string]*GeneCall{}
	if combos > maxChoiceCombinations {
		for _, c := range ro.choices {
			g := k.idx.defPos[c[0].Chrom][c[0].Pos][0].def.Gene
			ro.add(g, &ro.review, "too many multi-allelic rsIDs without their allele to try every reading; give each as rsID:ALT")
		}
		ro.choices = nil
		combos = 1
	}
	if len(ro.choices) == 0 {
		// One reading: each gene's call as it is, which is what the
		// merge below gives for a single reading of genes called once.
		sc := k.CallSample(ro.obs, opt)
		single := true
		for i := range sc.Genes {
			if out[sc.Genes[i].Gene] != nil {
				single = false
				break
			}
			out[sc.Genes[i].Gene] = &sc.Genes[i]
		}
		if single {
			return out
		}
		clear(out)
	}
	idx := make([]int, len(ro.choices))
	readings := map[string][]GeneCall{}
	var order []string
	for n := 0; n < combos; n++ {
		obs := append([]PositionObservation(nil), ro.obs...)
		for ci, c := range ro.choices {
			obs = append(obs, c[idx[ci]])
		}
		sc := k.CallSample(obs, opt)
		for _, gc := range sc.Genes {
			if readings[gc.Gene] == nil {
				order = append(order, gc.Gene)
			}
			readings[gc.Gene] = append(readings[gc.Gene], gc)
		}
		for ci := range idx {
			idx[ci]++
			if idx[ci] < len(ro.choices[ci]) {
				break
			}
			idx[ci] = 0
		}
	}
	// Readings of a multi-allelic rsID that fit no allele pair are dropped
	// when another reading fits; all readings that fit are kept.
	for _, g := range order {
		rs := readings[g]
		var fit []GeneCall
		for _, r := range rs {
			if r.Status == CallCalled && len(r.Uninterpreted) == 0 {
				fit = append(fit, r)
			}
		}
		if len(fit) > 0 && len(fit) < len(rs) {
			fit[0].Notes = append(fit[0].Notes, fmt.Sprintf("%d of the %d readings of the multi-allelic rsIDs fit no defined %s allele pair and were dropped", len(rs)-len(fit), len(rs), g))
			rs = fit
		}
		gc := rs[0]
		for i := 1; i < len(rs); i++ {
			mergeGeneCall(&gc, &rs[i])
		}
		out[g] = &gc
	}
	return out
}

// mergeGeneCall merges another reading of the same gene into gc.
func mergeGeneCall(gc, other *GeneCall) {
	if other.Status == CallCalled {
		gc.Status = CallCalled
	}
	have := map[string]bool{}
	for _, d := range gc.Diplotypes {
		have[diplotypeKey(d.Alleles)] = true
	}
	for _, d := range other.Diplotypes {
		if !have[diplotypeKey(d.Alleles)] {
			gc.Diplotypes = append(gc.Diplotypes, d)
			have[diplotypeKey(d.Alleles)] = true
		}
	}
	for _, s := range other.Source {
		if !slices.Contains(gc.Source, s) {
			gc.Source = append(gc.Source, s)
		}
	}
	for _, s := range other.Notes {
		if !slices.Contains(gc.Notes, s) {
			gc.Notes = append(gc.Notes, s)
		}
	}
	for _, s := range other.Uninterpreted {
		if !slices.Contains(gc.Uninterpreted, s) {
			gc.Uninterpreted = append(gc.Uninterpreted, s)
		}
	}
	gc.NeedsReview = gc.NeedsReview || other.NeedsReview
}

// KeptBesideReview returns the diplotypes of a call that needs review
// which are kept beside the review, in /pgx/check and /pgx/vcf alike: the
// call's diplotypes when it was called and none of them could read as
// normal (reference-like or without a phenotype); nil otherwise. Such a
// reading is actionable, so withholding it would leave the more
// reassuring answer.
func (k *Caller) KeptBesideReview(gc *GeneCall) []CalledDiplotype {
	if gc == nil || gc.Status != CallCalled || len(gc.Diplotypes) == 0 || k.anyReferenceLike(gc.Gene, gc.Diplotypes) {
		return nil
	}
	return gc.Diplotypes
}

// anyReferenceLike reports whether a diplotype reads as the reference would
// or has no phenotype.
func (k *Caller) anyReferenceLike(gene string, ds []CalledDiplotype) bool {
	di := k.idx.defs[gene]
	for _, d := range ds {
		if d.Call.Phenotype == "" || d.PhenotypeError != "" || k.readsAsReference(di, d) {
			return true
		}
	}
	return false
}

// fromCall turns the matcher's call of a gene into the engine's
// GeneGenotype, applying the fail-safe: anything not fully interpreted
// makes the gene "could not interpret — review", never a phenotype.
func (k *Caller) fromCall(g *engine.Gene, gc *GeneCall, ro *requestObs, tested, sexKnown bool) *GeneGenotype {
	gg := k.readCall(g, gc, ro, tested)
	if gg != nil && !sexKnown && g.Chromosome == "chrX" && len(gg.Variants) > 0 {
		noteSexUnknown(gg)
	}
	return gg
}

// readCall is fromCall before the sex note.
func (k *Caller) readCall(g *engine.Gene, gc *GeneCall, ro *requestObs, tested bool) *GeneGenotype {
	gg := &GeneGenotype{Gene: g.Symbol, Variants: ro.items[g.Symbol]}
	if gc != nil {
		gg.UntestedAlleles = gc.UntestedAlleles
	}
	gg.Assumptions = append(gg.Assumptions, ro.notes[g.Symbol]...)
	review := append([]string(nil), ro.review[g.Symbol]...)
	if gc == nil {
		if len(review) == 0 {
			return nil
		}
	} else {
		gg.Assumptions = append(gg.Assumptions, gc.Notes...)
		review = append(review, gc.Uninterpreted...)
		if gc.Status != CallCalled {
			if len(gc.Uninterpreted) == 0 {
				review = append(review, fmt.Sprintf("%s could not be called from the input: %s", g.Symbol, strings.Join(gc.Notes, "; ")))
			}
		} else {
			for _, d := range gc.Diplotypes {
				if d.PhenotypeError != "" && len(g.Rules) > 0 {
					review = append(review, fmt.Sprintf("%s %s has no CPIC phenotype (%s)", g.Symbol, d.String(), d.PhenotypeError))
				}
			}
		}
	}
	if len(review) > 0 {
		gg.Review = review
		// An actionable reading is kept beside the review (the review
		// alert is added to it: dropping it would answer with the more
		// reassuring reading); one that could read as normal is not.
		// /pgx/vcf shows the same reading (KeptBesideReview).
		if kept := k.KeptBesideReview(gc); len(kept) > 0 {
			for _, d := range kept {
				gg.Diplotypes = append(gg.Diplotypes, Diplotype{Alleles: d.Alleles, Call: d.Call})
			}
			gg.Partial = !tested && len(gc.MissingPositions) > 0
			return gg
		}
		gg.Uncallable = "could not interpret — review: " + strings.Join(review, "; ")
		return gg
	}
	for _, d := range gc.Diplotypes {
		gg.Diplotypes = append(gg.Diplotypes, Diplotype{Alleles: d.Alleles, Call: d.Call})
	}
	if len(gg.Diplotypes) == 0 {
		gg.Review = []string{g.Symbol + ": no diplotype"}
		gg.Uncallable = "could not interpret — review: no " + g.Symbol + " diplotype"
		return gg
	}
	// Not listed as tested: the positions not reported are unknown. When
	// every definition position was reported (a gVCF's calls, a complete
	// panel), none is unknown and the call is not partial.
	if !tested && len(gc.MissingPositions) > 0 {
		gg.Partial = true
		gg.Assumptions = append(gg.Assumptions, fmt.Sprintf(
			"%s positions not reported are unknown (not assumed reference): a variant there would change the call", g.Symbol))
	}
	if len(gg.Diplotypes) > 1 {
		ds := make([]string, len(gg.Diplotypes))
		for i, d := range gg.Diplotypes {
			ds[i] = d.String()
		}
		gg.Assumptions = append(gg.Assumptions, fmt.Sprintf(
			"the input does not settle %s: %s; the most severe recommendation is applied", g.Symbol, strings.Join(ds, " or ")))
	}
	return gg
}
