package calling

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

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
	// Source says where the observation came from, for messages
	// ("line 12", "calls[0]", "rs4244285").
	Source string
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
}

// Gene call status values.
const (
	CallCalled    = "called"
	CallNotCalled = "not_called"
	CallNoData    = "no_data"
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
	Status string // CallCalled, CallNotCalled, CallNoData
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

// defIndex is a gene definition prepared for matching.
type defIndex struct {
	def      *engine.GeneDefinition
	posIdx   map[int]int // position → index in def.Positions
	refCells []string    // reference allele per position index
	alleles  []matchAllele
	required map[int]bool
	// used[i] are the alleles any named allele uses at position i.
	used [][]string
	// ignored maps ignored positions to their reference allele.
	ignored map[int]string
	// defaultCells are the default allele's bases (*1 for CYP2C19, else
	// the reference allele's).
	defaultCells []string

	// The rest is derived at Build for the matcher's hot path.

	// ord is the definition's index in Knowledge.Definitions.
	ord int
	// labels[i] is posLabel of position i.
	labels []string
	// defaultSites[i] and defaultHemi[i] are the alleles of an absent
	// position read as the default allele (diploid, and hemizygous); they
	// are shared and never written.
	defaultSites, defaultHemi [][]string
	// words is the length of the allele bitsets below (64 alleles a word).
	words int
	// hasCell[i] has bit ai set when allele ai has a cell at position i;
	// refMismatch[i] when one of its cells at i does not match the
	// reference base (cellMatches), so it cannot explain a homozygous
	// reference site there; skip has the ignored alleles' bits.
	hasCell, refMismatch [][]uint64
	skip                 []uint64
	// sitePool holds *[]site of len(Positions) for callGene (a CYP2D6
	// call needs 156 sites; they do not outlive the call).
	sitePool sync.Pool
}

// getSites returns zeroed sites for one call of the gene.
func (di *defIndex) getSites() *[]site {
	if v, ok := di.sitePool.Get().(*[]site); ok {
		clear(*v)
		return v
	}
	s := make([]site, len(di.def.Positions))
	return &s
}

type matchAllele struct {
	name    string
	isRef   bool
	ignored bool
	cells   []idxCell // explicit cells, by position index
}

type idxCell struct {
	i      int
	allele string
}

// buildDefinitions indexes the gene definitions.
func buildDefinitions(k *engine.Knowledge) (map[string]*defIndex, map[string]map[int][]*defIndex, error) {
	defs := map[string]*defIndex{}
	byPos := map[string]map[int][]*defIndex{}
	for gi := range k.Definitions {
		d := &k.Definitions[gi]
		di := &defIndex{def: d, posIdx: map[int]int{}, required: map[int]bool{}, ignored: map[int]string{}}
		for _, p := range d.IgnoredPositions {
			di.ignored[p.Pos] = p.Ref
		}
		for i, p := range d.Positions {
			di.posIdx[p.Pos] = i
			if byPos[d.Chromosome] == nil {
				byPos[d.Chromosome] = map[int][]*defIndex{}
			}
			byPos[d.Chromosome][p.Pos] = append(byPos[d.Chromosome][p.Pos], di)
		}
		for _, p := range d.ExtraPositions {
			if byPos[d.Chromosome] == nil {
				byPos[d.Chromosome] = map[int][]*defIndex{}
			}
			byPos[d.Chromosome][p.Pos] = append(byPos[d.Chromosome][p.Pos], di)
		}
		for _, p := range d.RequiredPositions {
			di.required[p] = true
		}
		if len(d.Alleles) == 0 {
			return nil, nil, fmt.Errorf("definition %s has no alleles", d.Gene)
		}
		ignored := map[string]bool{}
		for _, n := range d.IgnoredAlleles {
			ignored[n] = true
		}
		di.refCells = make([]string, len(d.Positions))
		di.used = make([][]string, len(d.Positions))
		for ai, a := range d.Alleles {
			ma := matchAllele{name: a.Name, isRef: ai == 0, ignored: ignored[a.Name] || a.Structural}
			for _, c := range a.Cells {
				i, ok := di.posIdx[c.Pos]
				if !ok {
					return nil, nil, fmt.Errorf("definition %s allele %s: position %d is not a defining position", d.Gene, a.Name, c.Pos)
				}
				ma.cells = append(ma.cells, idxCell{i, c.Allele})
				if ai == 0 {
					di.refCells[i] = c.Allele
				}
				if !ma.ignored && !containsStr(di.used[i], c.Allele) {
					di.used[i] = append(di.used[i], c.Allele)
				}
			}
			di.alleles = append(di.alleles, ma)
		}
		for i, c := range di.refCells {
			if c == "" && !d.Positions[i].Ignored {
				return nil, nil, fmt.Errorf("definition %s: reference allele has no cell at %d", d.Gene, d.Positions[i].Pos)
			}
		}
		di.defaultCells = append([]string(nil), di.refCells...)
		for gi := range k.Genes {
			g := &k.Genes[gi]
			if g.Symbol != d.Gene || g.DefaultAllele == "" || g.DefaultAllele == d.Alleles[0].Name {
				continue
			}
			for _, a := range di.alleles {
				if a.name == g.DefaultAllele {
					for _, c := range a.cells {
						if !isWobble(c.allele) {
							di.defaultCells[c.i] = c.allele
						}
					}
				}
			}
		}
		di.prepare(gi)
		defs[d.Gene] = di
	}
	return defs, byPos, nil
}

// prepare derives the per-position labels, default sites and the allele
// bitsets from an indexed definition (bitsets hold no pointers, so they
// add nothing to the garbage collector's marking of the knowledge).
func (di *defIndex) prepare(ord int) {
	d := di.def
	n := len(d.Positions)
	di.ord = ord
	di.labels = make([]string, n)
	di.defaultSites = make([][]string, n)
	di.defaultHemi = make([][]string, n)
	for i, p := range d.Positions {
		di.labels[i] = posLabel(d, p)
		ref := di.defaultCells[i]
		di.defaultSites[i] = []string{ref, ref}[:2:2]
		di.defaultHemi[i] = []string{ref}[:1:1]
	}
	di.words = (len(di.alleles) + 63) / 64
	di.hasCell = make([][]uint64, n)
	di.refMismatch = make([][]uint64, n)
	for i := range n {
		di.hasCell[i] = make([]uint64, di.words)
		di.refMismatch[i] = make([]uint64, di.words)
	}
	di.skip = make([]uint64, di.words)
	for ai := range di.alleles {
		a := &di.alleles[ai]
		w, bit := ai/64, uint64(1)<<(ai%64)
		if a.ignored {
			di.skip[w] |= bit
		}
		for _, c := range a.cells {
			di.hasCell[c.i][w] |= bit
			if !cellMatches(c.allele, di.refCells[c.i]) {
				di.refMismatch[c.i][w] |= bit
			}
		}
	}
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// iupacBases returns the bases an IUPAC ambiguity code stands for, or "".
func iupacBases(c byte) string {
	switch c {
	case 'R':
		return "AG"
	case 'Y':
		return "CT"
	case 'S':
		return "CG"
	case 'W':
		return "AT"
	case 'K':
		return "GT"
	case 'M':
		return "AC"
	case 'B':
		return "CGT"
	case 'D':
		return "AGT"
	case 'H':
		return "ACT"
	case 'V':
		return "ACG"
	case 'N':
		return "ACGT"
	}
	return ""
}

// cellMatches reports whether a definition cell matches an observed allele.
func cellMatches(cell, obs string) bool {
	if cell == obs {
		return true
	}
	if len(obs) == 1 && len(cell) == 1 {
		return strings.IndexByte(iupacBases(cell[0]), obs[0]) >= 0
	}
	return false
}

// HasDefinitions reports whether the knowledge carries allele definitions.
func (k *Caller) HasDefinitions() bool { return len(k.idx.defs) > 0 }

// Definition returns the allele definition of a gene.
func (k *Caller) Definition(gene string) (*engine.GeneDefinition, bool) {
	di, ok := k.idx.defs[gene]
	if !ok {
		return nil, false
	}
	return di.def, true
}

// DefinitionGenes lists the genes with allele definitions, sorted.
func (k *Caller) DefinitionGenes() []string { return append([]string(nil), k.idx.defGenes...) }

// IsDefinitionPosition reports whether chrom:pos is a defining (or extra)
// position of some gene; readers use it to skip other records cheaply.
func (k *Caller) IsDefinitionPosition(chrom string, pos int) bool {
	_, ok := k.idx.defPos[chrom][pos]
	return ok
}

// CallSample calls every gene (or opt.Genes) of one sample from its
// position observations with the allele matcher. Observations at positions
// no definition uses are ignored. It never fails: what it cannot interpret
// is named in the gene's Uninterpreted list and the gene needs review.
func (k *Caller) CallSample(obs []PositionObservation, opt CallOptions) SampleCall {
	var sc SampleCall
	// Per gene, the observation at each definition position (by index).
	perGene := make([][]*PositionObservation, len(k.Definitions))
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
				sc.Warnings = append(sc.Warnings, fmt.Sprintf("%s:%d is given twice (%s and %s); the first is used", o.Chrom, o.Pos, prev.Source, o.Source))
				continue
			}
			m[pi] = o
		}
	}
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
	review := func(format string, args ...any) {
		gc.Uninterpreted = append(gc.Uninterpreted, fmt.Sprintf(format, args...))
	}
	male := strings.EqualFold(opt.Sex, "male")
	hemiChrom := d.Chromosome == "chrX" && male
	absentAsDefault := opt.AbsentAsDefault[d.Gene]
	sp := di.getSites()
	defer di.sitePool.Put(sp)
	sites := *sp
	allPhased, anyCalled := true, false
	haploid, diploid := 0, 0
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
			if absentAsDefault {
				// The shared default slices are never written (readSite
				// makes the slices that are).
				if hemiChrom {
					sites[i] = site{alleles: di.defaultHemi[i], phased: true}
					haploid++
				} else {
					sites[i] = site{alleles: di.defaultSites[i]}
					diploid++
				}
				sites[i].refSeen = di.defaultCells[i] == di.refCells[i]
				anyCalled = true
				continue
			}
			sites[i].missing = true
			gc.MissingPositions = append(gc.MissingPositions, di.labels[i])
			continue
		}
		s, problem := k.readSite(di, i, o)
		if problem != "" {
			review("%s (%s): %s", di.labels[i], o.Source, problem)
			sites[i].missing = true
			gc.MissingPositions = append(gc.MissingPositions, di.labels[i])
			continue
		}
		if s.missing {
			sites[i] = s
			gc.MissingPositions = append(gc.MissingPositions, di.labels[i])
			if di.required[p.Pos] || len(di.used[i]) > 1 {
				gc.Notes = append(gc.Notes, fmt.Sprintf("%s is a no-call (%s)", di.labels[i], o.Source))
			}
			continue
		}
		if hemiChrom && len(s.alleles) == 2 {
			if s.alleles[0] == s.alleles[1] {
				s.alleles = s.alleles[:1]
			} else {
				review("%s (%s): heterozygous %s on chrX of a male sample", di.labels[i], o.Source, gtString(s.alleles, false))
				sites[i].missing = true
				continue
			}
		}
		if s.partial && !d.VariantList {
			review("%s (%s): partial genotype %s (one allele not called)", di.labels[i], o.Source, gtString(s.alleles, s.phased))
			sites[i].missing = true
			gc.MissingPositions = append(gc.MissingPositions, di.labels[i])
			continue
		}
		if s.partial {
			gc.Notes = append(gc.Notes, fmt.Sprintf("%s: partial genotype %s; the called allele is used and the other is unknown", di.labels[i], gtString(s.alleles, s.phased)))
		}
		// Undocumented bases.
		for ai, a := range s.alleles {
			if a != "." && !matchesAny(di.used[i], a) {
				if d.UndocumentedAsReference {
					gc.Notes = append(gc.Notes, fmt.Sprintf("%s: %s is not in any %s definition; read as reference, as PharmCAT does for this toxicity gene", di.labels[i], a, d.Gene))
					review("%s: undocumented allele %s (read as reference)", di.labels[i], a)
					s.alleles[ai] = di.refCells[i]
				} else {
					review("%s (%s): allele %s is not in any %s allele definition", di.labels[i], o.Source, a, d.Gene)
				}
			}
		}
		s.refSeen = matchesAny(s.alleles, di.refCells[i]) || containsStr(s.alleles, di.refCells[i])
		sites[i] = s
		anyCalled = true
		if !s.phased && s.het() {
			allPhased = false
		}
		if len(s.alleles) == 1 {
			haploid++
		} else {
			diploid++
		}
		if !(len(s.alleles) > 0 && allEqual(s.alleles, di.refCells[i])) {
			gc.Observations = append(gc.Observations, observationLabel(di.labels[i], s.alleles, s.phased))
		}
	}
	for _, p := range d.RequiredPositions {
		if i, ok := di.posIdx[p]; ok && sites[i].missing {
			gc.Status = CallNotCalled
			gc.Notes = append(gc.Notes, fmt.Sprintf("%s: a position %s requires is missing, so %s is not called (PharmCAT exemption)", di.labels[i], d.Gene, d.Gene))
		}
	}
	if haploid > 0 && diploid > 0 {
		review("%s has haploid and diploid genotypes at once", d.Gene)
	}
	if !anyCalled {
		gc.Status = CallNotCalled
		gc.Notes = append(gc.Notes, "every "+d.Gene+" position is missing")
	}
	// Count heterozygous sites for phase.
	hets := 0
	for _, s := range sites {
		if !s.missing && s.het() {
			hets++
		}
	}
	gc.Phased = allPhased || hets <= 1
	undocumentedStop := !d.UndocumentedAsReference && len(gc.Uninterpreted) > 0
	if undocumentedStop && gc.Status == "" {
		gc.Status = CallNotCalled
		gc.Notes = append(gc.Notes, d.Gene+" is not called: the sample has alleles the definitions do not explain")
	}
	if gc.Status == CallNotCalled {
		gc.NeedsReview = true
		return gc
	}
	if d.VariantList {
		k.callVariantList(di, sites, &gc, haploid > 0 && diploid == 0, allPhased)
	} else {
		k.callPairs(di, sites, &gc, haploid > 0 && diploid == 0, allPhased && hets > 1)
	}
	// Fail-safe: a reading that is what the reference would give, with
	// positions not called, is not a confirmed result (a variant there
	// cannot be ruled out).
	if gc.Status == CallCalled && len(gc.MissingPositions) > 0 {
		for _, dp := range gc.Diplotypes {
			if k.readsAsReference(di, dp) {
				n := len(gc.MissingPositions)
				list := gc.MissingPositions
				if n > 5 {
					list = append(append([]string(nil), list[:5]...), fmt.Sprintf("and %d more", n-5))
				}
				what := dp.String()
				if dp.Call.Phenotype != "" {
					what = dp.Call.Phenotype + " (" + what + ")"
				}
				gc.Uninterpreted = append(gc.Uninterpreted, fmt.Sprintf("%s reads %s, but %d defining position(s) were not called (%s): a variant there cannot be ruled out", d.Gene, what, n, strings.Join(list, ", ")))
				break
			}
		}
	}
	k.geneNotes(di, sites, &gc)
	if len(gc.Uninterpreted) > 0 {
		gc.NeedsReview = true
	}
	return gc
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

// compatible returns the score of allele a against the sample (the number
// of its defined cells at called positions) and whether it can be one of
// the sample's haplotypes: at each called position its base is observed.
// An IUPAC ("wobble") cell scores only where it stands for a non-reference
// base; at heterozygous sites that depends on the pair, and callPairs adds
// it (PharmCAT testWobbleScoringWithMultipleSequenceMatches: CYP2B6
// *6/*18 and *9/*18 score the same).
func compatible(di *defIndex, a *matchAllele, sites []site, nonRef []int) (int, bool) {
	score := 0
	covered := 0
	for _, c := range a.cells {
		s := &sites[c.i]
		if s.missing {
			continue
		}
		if !cellMatches(c.allele, s.alleles[0]) && (len(s.alleles) < 2 || !cellMatches(c.allele, s.alleles[1])) {
			return 0, false
		}
		if isWobble(c.allele) {
			if !s.het() && s.alleles[0] != di.refCells[c.i] {
				score++
			}
		} else {
			score++
		}
		if !s.refSeen {
			covered++
		}
	}
	if !a.isRef {
		// Blank cells carry the reference base: every position where the
		// reference was not seen must be one of a's own cells.
		if covered < len(nonRef) {
			return 0, false
		}
	} else if len(nonRef) > 0 {
		return 0, false
	}
	return score, true
}

// cand is an allele that can be one of the sample's haplotypes, with its
// score (compatible).
type cand struct{ idx, score int }

// candidates appends to out, in allele order, every allele that is not
// ignored, is compatible with the sites and scores (the reference allele
// may score 0). compatible runs only on the alleles the bitsets leave: an
// allele with a base other than the reference at a homozygous reference
// site, or without a cell at a site where the reference was not seen,
// is not compatible. candidatesReference (tests) is the plain loop.
func (di *defIndex) candidates(sites []site, nonRef []int, out []cand) []cand {
	var stack [8]uint64
	var ok []uint64
	if di.words <= len(stack) {
		ok = stack[:di.words]
	} else {
		ok = make([]uint64, di.words)
	}
	for w := range ok {
		ok[w] = ^di.skip[w]
	}
	for i := range sites {
		s := &sites[i]
		if s.missing || len(s.alleles) == 0 || !allEqual(s.alleles, di.refCells[i]) {
			continue
		}
		for w, m := range di.refMismatch[i] {
			ok[w] &^= m
		}
	}
	for _, i := range nonRef {
		for w, m := range di.hasCell[i] {
			ok[w] &= m
		}
	}
	for w, set := range ok {
		for set != 0 {
			b := set & -set
			set &^= b
			ai := w*64 + bitIndex(b)
			if ai >= len(di.alleles) {
				break
			}
			a := &di.alleles[ai]
			if len(nonRef) > 0 && a.isRef {
				continue // compatible refuses it
			}
			sc, fits := compatible(di, a, sites, nonRef)
			if !fits || (sc == 0 && !a.isRef) {
				continue
			}
			out = append(out, cand{ai, sc})
		}
	}
	return out
}

type pair struct {
	a, b  int // indexes into di.alleles; b == -1 for haploid
	score int
}

// callPairs is PharmCAT's diplotype matcher: every pair of compatible
// alleles that explains each heterozygous site, scored by defined cells;
// the top-scoring pairs are reported.
func (k *Caller) callPairs(di *defIndex, sites []site, gc *GeneCall, haploid, phased bool) {
	d := di.def
	var nonRef, hetIdx []int
	for i, s := range sites {
		if s.missing {
			continue
		}
		if !s.refSeen {
			nonRef = append(nonRef, i)
		}
		if s.het() {
			hetIdx = append(hetIdx, i)
		}
	}
	var buf [16]cand
	cands := di.candidates(sites, nonRef, buf[:0])
	cellAt := func(ai, i int) string {
		for _, c := range di.alleles[ai].cells {
			if c.i == i {
				return c.allele
			}
		}
		return di.refCells[i]
	}
	var pairs []pair
	if haploid {
		for _, c := range cands {
			pairs = append(pairs, pair{c.idx, -1, c.score})
		}
	} else {
		for x := 0; x < len(cands); x++ {
			for y := x; y < len(cands); y++ {
				fwd, rev := true, true
				bonus := 0
				for _, i := range hetIdx {
					ca, cb := cellAt(cands[x].idx, i), cellAt(cands[y].idx, i)
					g := sites[i].alleles
					f := cellMatches(ca, g[0]) && cellMatches(cb, g[1])
					r := cellMatches(ca, g[1]) && cellMatches(cb, g[0])
					if isWobble(ca) || isWobble(cb) {
						// The base each wobble cell stands for in this pair.
						ba, bb := g[1], g[0]
						if f {
							ba, bb = g[0], g[1]
						}
						if isWobble(ca) && ba != di.refCells[i] {
							bonus++
						}
						if isWobble(cb) && bb != di.refCells[i] {
							bonus++
						}
					}
					if !phased {
						f = f || r
						r = f
					}
					fwd = fwd && f
					rev = rev && r
					if !fwd && !rev {
						break
					}
				}
				if fwd || rev {
					pairs = append(pairs, pair{cands[x].idx, cands[y].idx, cands[x].score + cands[y].score + bonus})
				}
			}
		}
	}
	if len(pairs) == 0 {
		gc.Status = CallNotCalled
		gc.NeedsReview = true
		gc.Notes = append(gc.Notes, fmt.Sprintf("no pair of %s alleles defined by PharmCAT explains the genotypes", d.Gene))
		gc.Uninterpreted = append(gc.Uninterpreted, fmt.Sprintf("%s genotypes fit no defined allele pair: %s", d.Gene, strings.Join(gc.Observations, "; ")))
		k.slco1b1Fallback(di, sites, gc)
		return
	}
	slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(b.score, a.score) })
	// Sub-alleles (SLCO1B1 *45.001, *45.002) are reported as their allele.
	seen := map[string]bool{}
	var top, alts []CalledDiplotype
	for _, p := range pairs {
		cd := CalledDiplotype{Alleles: pairNames(di, p), Score: p.score}
		key := diplotypeKey(cd.Alleles)
		if seen[key] {
			continue
		}
		seen[key] = true
		if p.score == pairs[0].score {
			top = append(top, cd)
		} else {
			alts = append(alts, cd)
		}
	}
	// NAT2: for unphased data a fixed priority list picks one diplotype
	// when every diplotype of a list entry fits the data.
	if !phased && !haploid && len(d.UnphasedPriorities) > 0 {
		all := append(append([]CalledDiplotype(nil), top...), alts...)
		have := map[string]int{}
		for i, cd := range all {
			have[diplotypeKey(cd.Alleles)] = i
		}
		for _, r := range d.UnphasedPriorities {
			ok := true
			for _, l := range r.List {
				if _, in := have[diplotypeKey(strings.Split(l, "/"))]; !in {
					ok = false
					break
				}
			}
			pi, in := have[diplotypeKey(strings.Split(r.Pick, "/"))]
			if !ok || !in {
				continue
			}
			picked := all[pi]
			var others []CalledDiplotype
			for i, cd := range all {
				if i != pi {
					others = append(others, cd)
				}
			}
			top, alts = []CalledDiplotype{picked}, others
			gc.Notes = append(gc.Notes, fmt.Sprintf("%s: %s is picked by PharmCAT's unphased priority list among %s", d.Gene, r.Pick, strings.Join(r.List, ", ")))
			break
		}
	}
	gc.Status = CallCalled
	for _, cd := range top {
		k.phenotypeInto(d.Gene, &cd)
		gc.Diplotypes = append(gc.Diplotypes, cd)
		gc.Source = append(gc.Source, cd.String())
	}
	for _, cd := range alts {
		k.phenotypeInto(d.Gene, &cd)
		gc.Alternatives = append(gc.Alternatives, cd)
	}
	if len(gc.Diplotypes) > 1 {
		gc.Notes = append(gc.Notes, fmt.Sprintf("%d %s diplotypes score equally (%s); all are reported and the most severe advice applies", len(gc.Diplotypes), d.Gene, strings.Join(gc.Source, ", ")))
	}
	if n := len(gc.Alternatives); n > 0 {
		var names []string
		for i, cd := range gc.Alternatives {
			if i == 6 {
				names = append(names, fmt.Sprintf("and %d more", n-6))
				break
			}
			s := cd.String()
			if cd.Call.Phenotype != "" {
				s += " (" + cd.Call.Phenotype + ")"
			}
			names = append(names, s)
		}
		gc.Notes = append(gc.Notes, fmt.Sprintf("other %s diplotypes also fit the data, with a lower PharmCAT score: %s; phase or more positions would settle it", d.Gene, strings.Join(names, ", ")))
	}
}

// subAllele matches a PharmVar sub-allele suffix (".001").
func baseAllele(name string) string {
	if i := strings.LastIndex(name, "."); i > 0 && i < len(name)-1 && strings.HasPrefix(name, "*") {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			return name[:i]
		}
	}
	return name
}

// slco1b1Fallback: when no SLCO1B1 star-allele pair fits, PharmCAT gives
// the recommendation from the rs4149056 (c.521T>C) genotype alone; its C
// allele defines *5 (data/pgx/pharmcat/RULES.md §3.4). The gene stays
// marked for review: the other variants are not explained.
func (k *Caller) slco1b1Fallback(di *defIndex, sites []site, gc *GeneCall) {
	if di.def.Gene != "SLCO1B1" {
		return
	}
	for i, p := range di.def.Positions {
		s := sites[i]
		if p.RsID != "rs4149056" || s.missing || s.partial {
			continue
		}
		c := 0
		for _, a := range s.alleles {
			if a == "C" {
				c++
			} else if a != p.Ref {
				return
			}
		}
		dip := []string{"*1", "*1"}
		switch {
		case len(s.alleles) == 1:
			return
		case c == 1:
			dip = []string{"*1", "*5"}
		case c == 2:
			dip = []string{"*5", "*5"}
		}
		cd := CalledDiplotype{Alleles: dip}
		k.phenotypeInto("SLCO1B1", &cd)
		gc.Status = CallCalled
		gc.Diplotypes = []CalledDiplotype{cd}
		gc.Source = []string{fmt.Sprintf("rs4149056 %s", gtString(s.alleles, s.phased))}
		gc.Notes = append(gc.Notes, fmt.Sprintf("no SLCO1B1 star-allele pair fits; as PharmCAT does, the phenotype comes from rs4149056 (c.521T>C) alone: %s, read as %s", gtString(s.alleles, s.phased), cd.String()))
	}
}

// pairNames orders a pair's allele names (reference first, then natural),
// sub-alleles written as their allele.
func pairNames(di *defIndex, p pair) []string {
	if p.b < 0 {
		return []string{baseAllele(di.alleles[p.a].name)}
	}
	x, y := baseAllele(di.alleles[p.a].name), baseAllele(di.alleles[p.b].name)
	// The reference first when it is not a star allele ("Reference/...",
	// "B (reference)/..."), else natural order ("*2/*38").
	switch {
	case p.b == 0 && !strings.HasPrefix(y, "*"):
		x, y = y, x
	case p.a == 0 && !strings.HasPrefix(x, "*"):
	case naturalLess(y, x):
		x, y = y, x
	}
	return []string{x, y}
}

// diplotypeKey is an order-free key of a diplotype.
func diplotypeKey(n []string) string {
	switch len(n) {
	case 1:
		return n[0]
	case 2:
		// sort.Strings of two, joined, in one allocation.
		if n[1] < n[0] {
			return n[1] + "\x00" + n[0]
		}
		return n[0] + "\x00" + n[1]
	}
	c := append([]string(nil), n...)
	sort.Strings(c)
	return strings.Join(c, "\x00")
}

// phenotypeInto fills the CPIC phenotype of a called diplotype.
func (k *Caller) phenotypeInto(gene string, cd *CalledDiplotype) {
	call, err := k.Phenotype(gene, cd.Alleles...)
	if err != nil {
		cd.PhenotypeError = err.Error()
		return
	}
	cd.Call = call
}

// variantHit is one defined variant found in the sample.
type variantHit struct {
	ai      int
	copies  int
	strands [2]bool // phased: on strand 0 / 1
}

// callVariantList calls DPYD, RYR1 and CACNA1S as PharmCAT does: the
// defined variants found are listed; the lookup diplotype is the lowest
// function variant on each strand (phased or effectively phased data) or
// the two lowest-function variants, presumed in trans (unphased data with
// more than one heterozygous site).
func (k *Caller) callVariantList(di *defIndex, sites []site, gc *GeneCall, haploid, phased bool) {
	d := di.def
	hets := 0
	for _, s := range sites {
		if !s.missing && !s.partial && s.het() {
			hets++
		}
	}
	// Strands are read from the genotype order when the data is phased or
	// effectively phased (at most one heterozygous site; a partial "1/."
	// genotype counts as its written order).
	strandMode := phased || hets <= 1
	nStrands := 1
	if strandMode {
		nStrands = 2
	}
	// Non-reference copies left to explain, per strand (or pooled in 0).
	remain := make([][2]int, len(sites))
	for i, s := range sites {
		if s.missing {
			continue
		}
		for si, a := range s.alleles {
			if a == "." || a == di.refCells[i] {
				continue
			}
			if strandMode {
				remain[i][si]++
			} else {
				remain[i][0]++
			}
		}
	}
	var hits []variantHit
	for strand := 0; strand < nStrands; strand++ {
		for {
			// The allele explaining the most remaining non-reference cells
			// (HapB3 before its intronic part), then the one with fewer
			// cells (the exact one when a HapB3 position is not known).
			best, bestN, bestCells := -1, 0, 0
			for ai := range di.alleles {
				a := &di.alleles[ai]
				if a.isRef || a.ignored {
					continue
				}
				n, ok := 0, true
				for _, c := range a.cells {
					s := &sites[c.i]
					if s.missing || c.allele == di.refCells[c.i] {
						continue
					}
					if strandMode {
						if strand >= len(s.alleles) || s.alleles[strand] == "." {
							continue
						}
						if !cellMatches(c.allele, s.alleles[strand]) || remain[c.i][strand] == 0 {
							ok = false
							break
						}
					} else if remain[c.i][0] == 0 || !containsAllele(s.alleles, c.allele) {
						ok = false
						break
					}
					n++
				}
				if !ok || n == 0 {
					continue
				}
				if n > bestN || n == bestN && len(a.cells) < bestCells {
					best, bestN, bestCells = ai, n, len(a.cells)
				}
			}
			if best < 0 {
				break
			}
			for _, c := range di.alleles[best].cells {
				s := &sites[c.i]
				if s.missing || c.allele == di.refCells[c.i] {
					continue
				}
				if strandMode {
					if strand < len(s.alleles) && s.alleles[strand] != "." {
						remain[c.i][strand]--
					}
				} else {
					remain[c.i][0]--
				}
			}
			merged := false
			for hi := range hits {
				if hits[hi].ai == best {
					hits[hi].copies++
					hits[hi].strands[strand] = true
					merged = true
				}
			}
			if !merged {
				h := variantHit{ai: best, copies: 1}
				h.strands[strand] = true
				hits = append(hits, h)
			}
		}
	}
	for i := range remain {
		if remain[i][0] > 0 || remain[i][1] > 0 {
			if d.Gene == "DPYD" && d.Positions[i].RsID == "rs56038477" {
				gc.Uninterpreted = append(gc.Uninterpreted, "DPYD rs56038477 (c.1236G>A) is non-reference while rs75017182 (c.1129-5923C>G), which decides HapB3, is not: PharmCAT then calls no HapB3 and warns; the two disagree")
				continue
			}
			gc.Uninterpreted = append(gc.Uninterpreted, fmt.Sprintf("%s: a non-reference allele seen is not explained by a defined %s variant", di.labels[i], d.Gene))
		}
	}
	ref := di.alleles[0].name
	name := func(h variantHit) string { return di.alleles[h.ai].name }
	sort.SliceStable(hits, func(x, y int) bool { return naturalLess(name(hits[x]), name(hits[y])) })
	gc.Status = CallCalled
	rank := func(names []string) []string {
		sort.SliceStable(names, func(x, y int) bool { return k.lowerFunction(d.Gene, names[x], names[y]) })
		return names
	}
	var lookup []string
	if strandMode {
		var strands [2][]string
		for _, h := range hits {
			for s := 0; s < 2; s++ {
				if h.strands[s] {
					strands[s] = append(strands[s], name(h))
				}
			}
		}
		var disp []string
		for s := 0; s < 2; s++ {
			if haploid && s == 1 {
				break
			}
			list := rank(append([]string(nil), strands[s]...))
			switch len(list) {
			case 0:
				disp = append(disp, ref)
				lookup = append(lookup, ref)
			case 1:
				disp = append(disp, list[0])
				lookup = append(lookup, list[0])
			default:
				disp = append(disp, "["+strings.Join(strands[s], " + ")+"]")
				lookup = append(lookup, list[0])
			}
		}
		gc.Source = []string{strings.Join(disp, "/")}
	} else {
		var all []string
		for _, h := range hits {
			if h.copies == 2 {
				gc.Source = append(gc.Source, name(h)+" (homozygous)")
			} else {
				gc.Source = append(gc.Source, name(h))
			}
			for c := 0; c < h.copies; c++ {
				all = append(all, name(h))
			}
		}
		all = rank(all)
		for len(all) < 2 {
			all = append(all, ref)
		}
		lookup = all[:2]
		gc.Notes = append(gc.Notes, fmt.Sprintf("%s: unphased data with %d heterozygous sites; the two lowest-function variants (%s) are presumed on different copies and used for the phenotype, as CPIC and PharmCAT do", d.Gene, hets, strings.Join(lookup, "; ")))
	}
	if haploid && len(lookup) > 1 {
		lookup = lookup[:1]
	}
	// Reference first, as CPIC writes these diplotypes.
	if len(lookup) == 2 && lookup[1] == ref && lookup[0] != ref {
		lookup[0], lookup[1] = lookup[1], lookup[0]
	}
	cd := CalledDiplotype{Alleles: lookup}
	k.phenotypeInto(d.Gene, &cd)
	gc.Diplotypes = []CalledDiplotype{cd}
}

// bitIndex is the index of the single set bit of b.
func bitIndex(b uint64) int { return bits.TrailingZeros64(b) }

// isWobble reports whether a cell is an IUPAC ambiguity code.
func isWobble(cell string) bool { return len(cell) == 1 && iupacBases(cell[0]) != "" }

func containsAllele(alleles []string, cell string) bool {
	for _, a := range alleles {
		if a != "." && cellMatches(cell, a) {
			return true
		}
	}
	return false
}

// naturalLess orders names with embedded numbers numerically ("c.557A>G"
// before "c.1129-5923C>G"; "*2" before "*10").
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, _ := strconv.Atoi(a[:da])
			nb, _ := strconv.Atoi(b[:db])
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitRun(s string) int {
	n := 0
	for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// lowerFunction orders two alleles of a variant-list gene: lower activity
// value first (DPYD); Malignant Hyperthermia associated, then uncertain,
// then normal (RYR1, CACNA1S); then by name.
func (k *Caller) lowerFunction(gene, x, y string) bool {
	ax, ay := k.idx.alleles[gene][x], k.idx.alleles[gene][y]
	rx, ry := functionRank(ax), functionRank(ay)
	if rx != ry {
		return rx < ry
	}
	return naturalLess(x, y)
}

// functionRank is lower for lower function; unknown alleles rank lowest
// (most cautious).
func functionRank(a *engine.Allele) float64 {
	if a == nil {
		return -1
	}
	if a.Activity != "" {
		if f, err := strconv.ParseFloat(strings.TrimPrefix(a.Activity, "≥"), 64); err == nil {
			return f
		}
		return -1
	}
	switch a.Function {
	case "Malignant Hyperthermia associated":
		return 0
	case "Uncertain function", "Unknown function":
		return 1
	case "Normal function":
		return 2
	}
	return -1
}

// readsAsReference reports whether a called diplotype says what an
// all-reference sample would: only reference alleles, or the phenotype of
// the reference diplotype (normal function, "no known susceptibility").
func (k *Caller) readsAsReference(di *defIndex, dp CalledDiplotype) bool {
	ref := di.alleles[0].name
	only := true
	for _, a := range dp.Alleles {
		if a != ref {
			only = false
		}
	}
	if only {
		return true
	}
	refDip := make([]string, len(dp.Alleles))
	for i := range refDip {
		refDip[i] = ref
	}
	rc, err := k.Phenotype(di.def.Gene, refDip...)
	return err == nil && rc.Phenotype != "" && rc.Phenotype == dp.Call.Phenotype
}

// geneNotes adds the gene-specific caveats PharmCAT reports.
func (k *Caller) geneNotes(di *defIndex, sites []site, gc *GeneCall) {
	d := di.def
	missing := func(rs string) bool {
		for i, p := range d.Positions {
			if p.RsID == rs {
				return sites[i].missing
			}
		}
		return false
	}
	has := func(allele string) bool {
		for _, dp := range gc.Diplotypes {
			if containsStr(dp.Alleles, allele) {
				return true
			}
		}
		return false
	}
	switch d.Gene {
	case "CYP2C19":
		if missing("rs12248560") {
			gc.Notes = append(gc.Notes, "CYP2C19 rs12248560 is missing: *17 cannot be ruled out")
		}
		if missing("rs28399504") && has("*17") {
			gc.Notes = append(gc.Notes, "CYP2C19 rs28399504 is missing: *4 cannot be ruled out")
		}
		if missing("rs3758581") {
			gc.Notes = append(gc.Notes, "CYP2C19 rs3758581 is missing: *1 and *38 cannot be told apart")
		}
	case "CYP3A5":
		if missing("rs776746") {
			gc.Notes = append(gc.Notes, "CYP3A5 rs776746 (*3) is missing")
		}
	case "UGT1A1":
		if missing("rs3064744") {
			gc.Notes = append(gc.Notes, "UGT1A1 rs3064744 (the promoter TA repeat: *28, *36, *37) is missing")
		}
		if has("*80+*28") || has("*28") || has("*37") || has("*80+*37") || has("*36") {
			gc.Notes = append(gc.Notes, "UGT1A1 TA-repeat genotyping can be unreliable; confirm when it changes the advice")
		}
	case "CYP2D6":
		// Copy number (the *5 deletion, duplications, hybrids) is not in
		// position data.
		var kept []CalledDiplotype
		var dropped []string
		for _, dp := range gc.Diplotypes {
			if p := dp.Call.Phenotype; p == "" || p == "Normal Metabolizer" || p == "Ultrarapid Metabolizer" || p == "Indeterminate" {
				dropped = append(dropped, dp.String())
				continue
			}
			kept = append(kept, dp)
		}
		if len(dropped) > 0 {
			gc.Uninterpreted = append(gc.Uninterpreted, "CYP2D6 copy number (the *5 deletion, duplications, hybrids) is not visible in position data, so "+strings.Join(dropped, ", ")+" cannot be given a normal, ultrarapid or indeterminate phenotype; a CYP2D6 diplotype with copy number is needed")
		}
		gc.Diplotypes = kept
		if len(kept) == 0 && gc.Status == CallCalled {
			gc.Status = CallNotCalled
		}
		gc.Notes = append(gc.Notes, "CYP2D6 copy number was not assessed: a *5 deletion or a duplication would change the activity score")
	}
}
