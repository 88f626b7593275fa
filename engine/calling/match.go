package calling

import (
	"fmt"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// This file is the one allele matcher of the engine. It works in VCF space:
// every input form (VCF records, position-level calls, genomic HGVS, rsIDs
// with zygosity or with their allele) is turned into PositionObservations
// and matched against PharmCAT's allele definitions (Knowledge.Definitions)
// with the rules summarised in data/pgx/pharmcat/RULES.md: blank cells are
// the reference base, missing positions are dropped and lower the scores,
// the top-scoring diplotypes are reported, undocumented bases stop the call
// (toxicity genes read them as reference), NAT2 unphased priorities and
// required positions, variant lists for DPYD, RYR1 and CACNA1S.

// PositionObservation is what one sample shows at one genomic position.
type PositionObservation struct {
	Chrom string // "chr10" (NormChrom form)
	Pos   int    // 1-based GRCh38 position
	Ref   string
	Alts  []string
	// GT holds allele indexes into [Ref, Alts...]: -1 is a no-call; one
	// index is haploid, two diploid; nil means no genotype (a no-call).
	GT     []int
	Phased bool
	// PhaseSet names the set of phased genotypes this one belongs to (a
	// VCF's FORMAT/PS, GATK's PID); phased genotypes are in phase with each
	// other only within one set. "" is one set of its own (a VCF without
	// PS: every phased genotype is in one set, by the VCF specification).
	PhaseSet string
	// Source says where the observation came from, for messages
	// ("line 12", "calls[0]", "rs4244285").
	Source string
	// Withheld, when set, says why the source's genotype here must not be
	// used (a genotype quality or depth below the threshold, a FILTER other
	// than PASS, a genotype selecting <NON_REF>, a variant overlapping the
	// definition's REF that is none of its alleles, reference blocks that
	// do not cover the whole REF): the position is a no-call, named in the
	// gene's notes. WithheldVariant says the withheld genotype showed a
	// non-reference allele: a variant may be there, so the gene also goes
	// to review (it never reads as the reference would).
	Withheld        string
	WithheldVariant bool
}

// CallOptions tune CallSample.
type CallOptions struct {
	// Genes limits the genes called; nil calls every gene with a definition.
	Genes []string
	// AbsentAsDefault names genes whose definition positions without an
	// observation are read as homozygous for the gene's default allele
	// (the lab tested the gene and found nothing: REST genes_tested). The
	// default allele is the GRCh38 reference except for CYP2C19, where it
	// is *1 (rs3758581 G), not the reference *38. Elsewhere an absent
	// position is missing, never reference (PharmCAT, VCF input).
	AbsentAsDefault map[string]bool
	// Sex is "male", "female" or "": a male's diploid chrX genotype is read
	// as hemizygous (with a note).
	Sex string
	// ReportUntouched reports genes with no observation at all (status
	// CallNoData); otherwise they are left out.
	ReportUntouched bool
	// RestOnGiven names tested genes called again with their unreported
	// positions unknown because, read as the default allele, they fit no
	// allele pair with the variants given (callGenes). Their positions
	// were tested, not missing: the AMP tier-1 rule (a tier-1 position
	// without evidence is a review; untested alleles named) does not apply,
	// and the call rests on the variants given. A reading that is what the
	// reference would give, with positions unknown, is still a review.
	RestOnGiven map[string]bool
}

// Gene call status values.
const (
	CallCalled    = "called"
	CallNotCalled = "not_called"
	CallNoData    = "no_data"
	// CallProvisional: the position evidence decides the SNV and indel
	// alleles, but not the phenotype (CYP2D6 without copy number); no
	// phenotype is given and the gene needs review.
	CallProvisional = "provisional"
)

// SampleCall is the result of calling every gene of one sample.
type SampleCall struct {
	Genes []GeneCall
	// Warnings are about the sample as a whole (observations that could not
	// be placed, conflicting records).
	Warnings []string
}

// Gene returns the call of a gene, or nil.
func (s *SampleCall) Gene(symbol string) *GeneCall {
	for i := range s.Genes {
		if s.Genes[i].Gene == symbol {
			return &s.Genes[i]
		}
	}
	return nil
}

// CalledDiplotype is one diplotype the matcher reports, with its phenotype.
type CalledDiplotype struct {
	Alleles []string
	Score   int
	// Call is the CPIC phenotype; empty with PhenotypeError set when the
	// diplotype has none (an allele without a CPIC function).
	Call           PhenotypeCall
	PhenotypeError string
}

// String writes the diplotype "A/B" (one allele when hemizygous).
func (d CalledDiplotype) String() string { return strings.Join(d.Alleles, "/") }

// GeneCall is the matcher's answer for one gene.
type GeneCall struct {
	Gene   string
	Status string // CallCalled, CallNotCalled, CallNoData, CallProvisional
	// Diplotypes are the top-scoring diplotypes, the reported one first.
	// For DPYD, RYR1 and CACNA1S they are the lookup diplotypes (the two
	// lowest-function variants).
	Diplotypes []CalledDiplotype
	// Source is the call as PharmCAT displays it ("c.1627A>G (*5)",
	// "c.97A>G (homozygous)", "[c.498G>A + c.2582A>G]/Reference"); it
	// differs from Diplotypes for the variant-list genes.
	Source []string
	// Alternatives are lower-scoring diplotypes that also fit the data
	// (TPMT *3B/*3C beside *1/*3A), and for NAT2 the equally possible
	// diplotypes the priority list did not pick; they are not used for
	// advice but named in the notes.
	Alternatives []CalledDiplotype
	Phased       bool
	// MissingPositions are definition positions with no call
	// ("chr10:94761900 rs12248560").
	MissingPositions []string
	// UntestedAlleles are the alleles the call could not assess: defined
	// at a position without a called genotype and not ruled out by the
	// called ones (set when the gene is called with positions missing).
	UntestedAlleles []string
	// Uninterpreted names every input element of the gene that was not
	// fully interpreted; when it is not empty NeedsReview is true and the
	// gene must not read as normal.
	Uninterpreted []string
	NeedsReview   bool
	// Notes are caveats and assumptions (ambiguity, missing key positions,
	// copy number, rules applied).
	Notes []string
	// Observations are the non-reference observations used ("rs4244285
	// chr10:94781859 G>A 0/1").
	Observations []string
}

// CallSample calls every gene (or opt.Genes) of one sample from its
// position observations with the allele matcher. Observations at positions
// no definition uses are ignored. It never fails: what it cannot interpret
// is named in the gene's Uninterpreted list and the gene needs review.
func (k *Caller) CallSample(obs []PositionObservation, opt CallOptions) SampleCall {
	var sc SampleCall
	// Per gene, the observation at each definition position (by index).
	perGene := make([][]*PositionObservation, len(k.Definitions))
	var dups duplicates
	for i := range obs {
		o := &obs[i]
		dis := k.idx.defPos[o.Chrom][o.Pos]
		for _, di := range dis {
			if ref, ok := di.ignored[o.Pos]; ok && ref == o.Ref {
				continue // a variant PharmCAT's exemptions ignore
			}
			pi, ok := di.posIdx[o.Pos]
			if !ok {
				continue // an extra (report-only) position
			}
			m := perGene[di.ord]
			if m == nil {
				m = make([]*PositionObservation, len(di.def.Positions))
				perGene[di.ord] = m
			}
			if prev := m[pi]; prev != nil {
				dups.add(prev, o, i)
				continue
			}
			m[pi] = o
		}
	}
	sc.Warnings = append(sc.Warnings, dups.warnings()...)
	genes := opt.Genes
	if genes == nil {
		genes = k.idx.defGenes
	}
	for _, g := range genes {
		di, ok := k.idx.defs[g]
		if !ok {
			continue
		}
		if perGene[di.ord] == nil && !opt.AbsentAsDefault[g] {
			if opt.ReportUntouched {
				sc.Genes = append(sc.Genes, GeneCall{Gene: g, Status: CallNoData,
					Notes: []string{"no variant data for " + g}})
			}
			continue
		}
		sc.Genes = append(sc.Genes, k.callGene(di, perGene[di.ord], opt))
	}
	return sc
}

// site is the sample's genotype at one definition position.
type site struct {
	alleles []string // one (haploid) or two strings; strand order when phased
	missing bool
	partial bool // one allele is a no-call ("1/."); the other is "."
	phased  bool
	refSeen bool
}

func (s site) het() bool { return len(s.alleles) == 2 && s.alleles[0] != s.alleles[1] }

// posLabel names a position for messages.
func posLabel(d *engine.GeneDefinition, p engine.DefinedPosition) string {
	l := fmt.Sprintf("%s:%d", d.Chromosome, p.Pos)
	if p.RsID != "" {
		l += " " + p.RsID
	}
	return l
}

// observationLabel is label+" "+gtString(alleles, phased), built in one
// allocation.
func observationLabel(label string, alleles []string, phased bool) string {
	n := len(label) + len(alleles)
	for _, a := range alleles {
		n += len(a)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(label)
	b.WriteByte(' ')
	for i, a := range alleles {
		if i > 0 {
			if phased {
				b.WriteByte('|')
			} else {
				b.WriteByte('/')
			}
		}
		b.WriteString(a)
	}
	return b.String()
}

// gtString writes observed alleles as a genotype for messages.
func gtString(alleles []string, phased bool) string {
	sep := "/"
	if phased {
		sep = "|"
	}
	return strings.Join(alleles, sep)
}

// callGene matches one gene.
func (k *Caller) callGene(di *defIndex, obs []*PositionObservation, opt CallOptions) GeneCall {
	d := di.def
	gc := GeneCall{Gene: d.Gene}
	sp := di.getSites()
	defer di.sitePool.Put(sp)
	sites := *sp
	r := geneRead{di: di, sites: sites, gc: &gc, allPhased: true,
		hemiChrom: d.Chromosome == "chrX" && strings.EqualFold(opt.Sex, "male")}
	absentAsDefault := opt.AbsentAsDefault[d.Gene]
	for i, p := range d.Positions {
		if p.Ignored {
			sites[i].missing = true
			continue
		}
		var o *PositionObservation
		if obs != nil {
			o = obs[i]
		}
		if o == nil {
			r.absent(i, absentAsDefault)
			continue
		}
		k.readPosition(&r, i, o)
	}
	hets := r.callable()
	if gc.Status == CallNotCalled {
		gc.NeedsReview = true
		return gc
	}
	if d.VariantList {
		k.callVariantList(di, sites, &gc, r.haploid > 0 && r.diploid == 0, r.allPhased)
	} else {
		k.callPairs(di, sites, &gc, r.haploid > 0 && r.diploid == 0, r.allPhased && hets > 1)
	}
	k.referenceWithMissing(di, sites, &gc, opt.RestOnGiven[d.Gene])
	k.geneNotes(di, sites, &gc)
	if len(gc.Uninterpreted) > 0 {
		gc.NeedsReview = true
	}
	return gc
}

// geneRead is the state of reading one gene's positions into sites
// (callGene): the call being built and what the sites hold.
type geneRead struct {
	di    *defIndex
	sites []site
	gc    *GeneCall
	// hemiChrom: the gene is on chrX and the sample is male.
	hemiChrom bool
	// haploid and diploid count the called sites of each ploidy.
	haploid, diploid int
	// allPhased: no unphased heterozygous site, and every phased one in
	// one phase set; anyCalled: some site has a genotype.
	allPhased, anyCalled bool
	// phaseSet is the phase set of the first phased heterozygous site
	// (firstSet: whether there is one); phaseLabel names it.
	phaseSetName, phaseLabel string
	firstSet                 bool
}

// phaseSet keeps phase within one phase set: heterozygous sites phased in
// different sets are not in phase with each other, so the gene is read as
// unphased (never phased across sets), with a note.
func (r *geneRead) phaseSet(i int, s site, o *PositionObservation) {
	if !s.phased || !s.het() || len(s.alleles) != 2 {
		return
	}
	if !r.firstSet {
		r.firstSet, r.phaseSetName, r.phaseLabel = true, o.PhaseSet, r.di.labels[i]
		return
	}
	if o.PhaseSet == r.phaseSetName || !r.allPhased {
		return
	}
	r.allPhased = false
	r.gc.Notes = append(r.gc.Notes, fmt.Sprintf("%s: heterozygous sites are phased in different phase sets (%s in %s, %s in %s); phase is never carried across sets, so %s is read as unphased",
		r.di.def.Gene, r.phaseLabel, phaseSetLabel(r.phaseSetName), r.di.labels[i], phaseSetLabel(o.PhaseSet), r.di.def.Gene))
}

func phaseSetLabel(ps string) string {
	if ps == "" {
		return "the file's default phase set"
	}
	return "phase set " + ps
}

// review records an input the call could not use.
func (r *geneRead) review(format string, args ...any) {
	r.gc.Uninterpreted = append(r.gc.Uninterpreted, fmt.Sprintf(format, args...))
}

// missing marks site i missing and lists its position as not called.
func (r *geneRead) missing(i int) {
	r.sites[i].missing = true
	r.gc.MissingPositions = append(r.gc.MissingPositions, r.di.labels[i])
}

// absent handles a position the sample says nothing about: the default
// allele's genotype when the gene was tested (absentAsDefault), else a
// missing position.
func (r *geneRead) absent(i int, absentAsDefault bool) {
	di, sites := r.di, r.sites
	if !absentAsDefault {
		r.missing(i)
		return
	}
	// The shared default slices are never written (readSite makes the
	// slices that are).
	if r.hemiChrom {
		sites[i] = site{alleles: di.defaultHemi[i], phased: true}
		r.haploid++
	} else {
		sites[i] = site{alleles: di.defaultSites[i]}
		r.diploid++
	}
	sites[i].refSeen = di.defaultCells[i] == di.refCells[i]
	r.anyCalled = true
}

// readPosition reads observation o at position i into the sites: no-calls,
// haploid chrX genotypes of a male sample, partial genotypes and
// undocumented bases each follow PharmCAT's rule for them.
func (k *Caller) readPosition(r *geneRead, i int, o *PositionObservation) {
	di, sites, gc := r.di, r.sites, r.gc
	d := di.def
	if o.Withheld != "" {
		if o.WithheldVariant {
			r.review("%s (%s): a non-reference genotype that cannot be used: %s", di.labels[i], o.Source, o.Withheld)
		}
		gc.Notes = append(gc.Notes, fmt.Sprintf("%s is a no-call (%s): %s", di.labels[i], o.Source, o.Withheld))
		r.missing(i)
		return
	}
	s, problem := k.readSite(di, i, o)
	if problem != "" {
		r.review("%s (%s): %s", di.labels[i], o.Source, problem)
		r.missing(i)
		return
	}
	if s.missing {
		sites[i] = s
		gc.MissingPositions = append(gc.MissingPositions, di.labels[i])
		if di.required[d.Positions[i].Pos] || len(di.used[i]) > 1 {
			gc.Notes = append(gc.Notes, fmt.Sprintf("%s is a no-call (%s)", di.labels[i], o.Source))
		}
		return
	}
	if r.hemiChrom && len(s.alleles) == 2 {
		if s.alleles[0] != s.alleles[1] {
			r.review("%s (%s): heterozygous %s on chrX of a male sample", di.labels[i], o.Source, gtString(s.alleles, false))
			sites[i].missing = true
			return
		}
		s.alleles = s.alleles[:1]
	}
	if s.partial && !d.VariantList {
		r.review("%s (%s): partial genotype %s (one allele not called)", di.labels[i], o.Source, gtString(s.alleles, s.phased))
		r.missing(i)
		return
	}
	if s.partial {
		gc.Notes = append(gc.Notes, fmt.Sprintf("%s: partial genotype %s; the called allele is used and the other is unknown", di.labels[i], gtString(s.alleles, s.phased)))
	}
	r.undocumented(i, &s, o)
	// The reference allele is seen when an observed base is one its cell
	// allows (an IUPAC cell such as CYP2D6 *1's R at rs150163869 allows A
	// and G).
	s.refSeen = containsAllele(s.alleles, di.refCells[i]) || matchesAny(s.alleles, di.refCells[i])
	sites[i] = s
	r.anyCalled = true
	if !s.phased && s.het() {
		r.allPhased = false
	}
	r.phaseSet(i, s, o)
	if len(s.alleles) == 1 {
		r.haploid++
	} else {
		r.diploid++
	}
	if !(len(s.alleles) > 0 && (allEqual(s.alleles, di.refCells[i]) || allEqual(s.alleles, d.Positions[i].Ref))) {
		gc.Observations = append(gc.Observations, observationLabel(di.labels[i], s.alleles, s.phased))
	}
}

// undocumented handles the bases of s that no definition of the gene uses:
// read as reference (with a note) for toxicity genes, else a review.
func (r *geneRead) undocumented(i int, s *site, o *PositionObservation) {
	di, d := r.di, r.di.def
	for ai, a := range s.alleles {
		if a == "." || matchesAny(di.used[i], a) {
			continue
		}
		if d.UndocumentedAsReference {
			r.gc.Notes = append(r.gc.Notes, fmt.Sprintf("%s: %s is not in any %s definition; read as reference, as PharmCAT does for this toxicity gene", di.labels[i], a, d.Gene))
			r.review("%s: undocumented allele %s (read as reference)", di.labels[i], a)
			s.alleles[ai] = di.refCells[i]
		} else {
			r.review("%s (%s): allele %s is not in any %s allele definition", di.labels[i], o.Source, a, d.Gene)
		}
	}
}

// callable decides, once every position is read, whether the gene can be
// called (required positions, mixed ploidy, nothing called, undocumented
// bases) and sets the call's phase; it returns the number of heterozygous
// sites.
func (r *geneRead) callable() int {
	di, gc, d := r.di, r.gc, r.di.def
	for _, p := range d.RequiredPositions {
		if i, ok := di.posIdx[p]; ok && r.sites[i].missing {
			gc.Status = CallNotCalled
			gc.Notes = append(gc.Notes, fmt.Sprintf("%s: a position %s requires is missing, so %s is not called (PharmCAT exemption)", di.labels[i], d.Gene, d.Gene))
		}
	}
	if r.haploid > 0 && r.diploid > 0 {
		r.review("%s has haploid and diploid genotypes at once", d.Gene)
	}
	if !r.anyCalled {
		gc.Status = CallNotCalled
		gc.Notes = append(gc.Notes, "every "+d.Gene+" position is missing")
	}
	hets := 0
	for _, s := range r.sites {
		if !s.missing && s.het() {
			hets++
		}
	}
	gc.Phased = r.allPhased || hets <= 1
	undocumentedStop := !d.UndocumentedAsReference && len(gc.Uninterpreted) > 0
	if undocumentedStop && gc.Status == "" {
		gc.Status = CallNotCalled
		gc.Notes = append(gc.Notes, d.Gene+" is not called: the sample has alleles the definitions do not explain")
	}
	return hets
}

// referenceWithMissing applies the rule for positions without evidence.
// A gene with AMP tier-1 lists (GeneDefinition.Tier1Positions) is called
// when every tier-1 position has evidence (a called genotype): the reading
// is the best-scoring diplotype among the alleles that can be assessed, and
// the alleles a missing position could hide are named (UntestedAlleles),
// as PharmCAT does — except that a reading that is what the reference would
// give (normal) with untested alleles is a review: a normal reading never
// rests on positions that were not seen (stricter than PharmCAT). A tier-1
// position without evidence is a review naming it. A gene without tier-1
// lists keeps the fail-safe for a reading that is what the reference would
// give while positions were not called: it is not a confirmed result (a
// variant there cannot be ruled out); so does a tested gene called again on
// the variants given (restOnGiven, CallOptions.RestOnGiven), whose
// unreported positions are unknown only because the default allele fit no
// pair, not tier-1 positions left untested.
func (k *Caller) referenceWithMissing(di *defIndex, sites []site, gc *GeneCall, restOnGiven bool) {
	if len(gc.MissingPositions) == 0 {
		return
	}
	d := di.def
	tier1 := len(d.Tier1Positions) > 0 && !restOnGiven
	if tier1 {
		var t1Missing []string
		for _, p := range d.Tier1Positions {
			if i, ok := di.posIdx[p]; ok && (sites[i].missing || sites[i].partial) {
				t1Missing = append(t1Missing, di.labels[i])
			}
		}
		if len(t1Missing) > 0 {
			gc.Uninterpreted = append(gc.Uninterpreted, fmt.Sprintf("%s AMP tier-1 position(s) without a called genotype: %s; the tier-1 alleles (%s) cannot all be assessed", d.Gene, strings.Join(t1Missing, ", "), strings.Join(d.Tier1Alleles, ", ")))
			return
		}
	}
	if gc.Status != CallCalled {
		return
	}
	if !restOnGiven {
		gc.UntestedAlleles = untestedAlleles(di, sites, gc)
	}
	if tier1 {
		n := len(gc.UntestedAlleles)
		if n == 0 {
			return
		}
		// The project's rule, stricter than PharmCAT: a normal reading
		// never rests on positions that were not seen. A reading that is
		// what the reference would give, with alleles left untested, is a
		// review (a GeT-RM genome's novel CYP2C9 allele, consensus
		// *1/novel, read *1/*1 Normal Metabolizer with *84 untested); a
		// non-normal reading stays called with the note.
		for _, dp := range gc.Diplotypes {
			if !k.readsAsReference(di, dp) {
				continue
			}
			gc.Uninterpreted = append(gc.Uninterpreted, fmt.Sprintf("%s reads %s with every AMP tier-1 position called, but %d allele(s) defined at positions that were not called could not be assessed (%s): a normal reading cannot rest on them", d.Gene, readingLabel(dp), n, Abbreviate(gc.UntestedAlleles, 10)))
			return
		}
		gc.Notes = append(gc.Notes, fmt.Sprintf("every AMP tier-1 position of %s was called; %d allele(s) defined at positions that were not called could not be assessed: %s", d.Gene, n, Abbreviate(gc.UntestedAlleles, 10)))
		return
	}
	for _, dp := range gc.Diplotypes {
		if !k.readsAsReference(di, dp) {
			continue
		}
		gc.Uninterpreted = append(gc.Uninterpreted, fmt.Sprintf("%s reads %s, but %d defining position(s) were not called (%s): a variant there cannot be ruled out", d.Gene, readingLabel(dp), len(gc.MissingPositions), Abbreviate(gc.MissingPositions, 5)))
		return
	}
}

// readingLabel names a reading: "Normal Metabolizer (*1/*1)", or the
// diplotype alone when it has no phenotype.
func readingLabel(dp CalledDiplotype) string {
	if dp.Call.Phenotype != "" {
		return dp.Call.Phenotype + " (" + dp.String() + ")"
	}
	return dp.String()
}

// Abbreviate joins the first n items of list and counts the rest.
func Abbreviate(list []string, n int) string {
	if len(list) <= n {
		return strings.Join(list, ", ")
	}
	return strings.Join(list[:n], ", ") + fmt.Sprintf(", and %d more", len(list)-n)
}

// untestedAlleles names the alleles the call could not assess: each has a
// non-reference cell at a position without a called genotype, no called
// position rules it out, and it is not in a reported diplotype.
func untestedAlleles(di *defIndex, sites []site, gc *GeneCall) []string {
	reported := map[string]bool{}
	for _, dp := range gc.Diplotypes {
		for _, a := range dp.Alleles {
			reported[a] = true
		}
	}
	var out []string
	for _, a := range di.alleles {
		if a.isRef || a.ignored || reported[a.name] {
			continue
		}
		hidden, excluded := false, false
		for _, c := range a.cells {
			s := &sites[c.i]
			if di.def.Positions[c.i].Ignored {
				continue
			}
			if s.missing || s.partial {
				if !cellMatches(c.allele, di.refCells[c.i]) {
					hidden = true
				}
				continue
			}
			if !containsAllele(s.alleles, c.allele) {
				excluded = true
				break
			}
		}
		if hidden && !excluded {
			out = append(out, a.name)
		}
	}
	return out
}

func allEqual(ss []string, v string) bool {
	for _, s := range ss {
		if s != v {
			return false
		}
	}
	return true
}

func matchesAny(cells []string, obs string) bool {
	for _, c := range cells {
		if cellMatches(c, obs) {
			return true
		}
	}
	return false
}

// readSite turns an observation into the alleles seen at definition
// position i; problem is set when it cannot be read.
func (k *Caller) readSite(di *defIndex, i int, o *PositionObservation) (site, string) {
	p := di.def.Positions[i]
	if len(o.GT) == 0 {
		return site{missing: true}, ""
	}
	alleles := make([]string, 0, min(len(o.GT), 2))
	nocall := 0
	for _, g := range o.GT {
		if g < 0 {
			nocall++
			alleles = append(alleles, ".")
			continue
		}
		switch {
		case g == 0:
			alleles = append(alleles, o.Ref)
		case g-1 < len(o.Alts):
			alleles = append(alleles, o.Alts[g-1])
		default:
			return site{}, fmt.Sprintf("genotype index %d has no ALT allele", g)
		}
	}
	if len(alleles) > 2 {
		alleles = alleles[:2]
	}
	if nocall == len(alleles) {
		return site{missing: true}, ""
	}
	if nocall > 0 {
		// Partial genotype: "0/." is a no-call; "1/." keeps the variant.
		for _, a := range alleles {
			if a != "." && a != o.Ref {
				return site{alleles: alleles, partial: true}, ""
			}
		}
		return site{missing: true}, ""
	}
	if o.Ref != p.Ref {
		// A record written with another REF (a longer or shorter anchor) is
		// comparable only when it is the definition's own representation.
		if !strings.HasPrefix(o.Ref, p.Ref) && !strings.HasPrefix(p.Ref, o.Ref) {
			return site{}, fmt.Sprintf("REF %s differs from the GRCh38 reference %s of the definition", o.Ref, p.Ref)
		}
		if len(o.Ref) != len(p.Ref) {
			return site{}, fmt.Sprintf("REF %s is not written as the definition writes it (%s); the alleles cannot be compared", o.Ref, p.Ref)
		}
	}
	for _, a := range alleles {
		if strings.HasPrefix(a, "<") || a == "*" {
			return site{}, fmt.Sprintf("symbolic or overlapping allele %s is not interpreted", a)
		}
	}
	return site{alleles: alleles, phased: o.Phased || len(alleles) == 1}, ""
}

func containsAllele(alleles []string, cell string) bool {
	for _, a := range alleles {
		if a != "." && cellMatches(cell, a) {
			return true
		}
	}
	return false
}

// duplicates gathers the observations of a position given more than once,
// so that a position repeated n times gives one warning, not n−1.
type duplicates struct {
	order []string
	byPos map[string]*duplicate
}

// duplicate is one repeated position: the observation used, the number
// of the others and the sources of the first few of them.
type duplicate struct {
	chrom  string
	pos    int
	first  string
	others []string
	n      int
	last   int // index of the last observation counted
}

// maxDuplicateSources is how many repeated observations a warning names.
const maxDuplicateSources = 3

func (d *duplicates) add(first, o *PositionObservation, index int) {
	key := fmt.Sprintf("%s:%d", o.Chrom, o.Pos)
	if d.byPos == nil {
		d.byPos = map[string]*duplicate{}
	}
	p := d.byPos[key]
	if p == nil {
		p = &duplicate{chrom: o.Chrom, pos: o.Pos, first: first.Source, last: -1}
		d.byPos[key] = p
		d.order = append(d.order, key)
	}
	if p.last == index {
		return // the same observation, found again through another gene
	}
	p.last = index
	p.n++
	if len(p.others) < maxDuplicateSources {
		p.others = append(p.others, o.Source)
	}
}

// warnings returns one warning per repeated position, in the order found.
func (d *duplicates) warnings() []string {
	out := make([]string, 0, len(d.order))
	for _, key := range d.order {
		p := d.byPos[key]
		if p.n == 1 {
			out = append(out, fmt.Sprintf("%s:%d is given twice (%s and %s); the first is used", p.chrom, p.pos, p.first, p.others[0]))
			continue
		}
		others := strings.Join(p.others, ", ")
		if more := p.n - len(p.others); more > 0 {
			others += fmt.Sprintf(" and %d more", more)
		}
		out = append(out, fmt.Sprintf("%s:%d is given %d times (%s, then %s); the first is used", p.chrom, p.pos, p.n+1, p.first, others))
	}
	return out
}
