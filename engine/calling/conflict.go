package calling

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// This file compares a supplied diplotype with the variants, position
// calls and HGVS items of the same gene (DPYD Reference/Reference beside
// rs3918290 homozygous). Each item either agrees with the diplotype at its
// position (used) or disagrees (conflicting: the gene goes to review
// naming both sources, never to the more reassuring reading). DESIGN.md
// §3, "Evidence ledger".

// deletionAllele names the alleles that are a deletion of the whole gene:
// they carry no base at any position. CYP2D6*5 ("*5 deletion",
// data/pgx/SOURCES.md; PharmCAT's CYP2D6 definitions exclude it).
var deletionAllele = map[string]map[string]bool{"CYP2D6": {"*5": true}}

// copySuffixRe strips a copy-number bin from an allele name ("*1x≥3",
// "*2x2"): the copies carry the base allele's bases.
var copySuffixRe = regexp.MustCompile(`x(≥)?[0-9]+$`)

// alleleCells returns, for a diplotype allele, its base at every defining
// position (the reference's where the definition leaves the cell blank);
// nil with ok true for a structural allele (a deletion carries no base),
// ok false when the definitions do not know the allele.
func (di *defIndex) alleleCells(name string) ([]string, bool) {
	find := func(n string) *matchAllele {
		for ai := range di.alleles {
			if di.alleles[ai].name == n {
				return &di.alleles[ai]
			}
		}
		return nil
	}
	a := find(name)
	if a == nil {
		if base := copySuffixRe.ReplaceAllString(name, ""); base != name {
			a = find(base)
		}
	}
	if a == nil {
		return nil, false
	}
	for _, d := range di.def.Alleles {
		if d.Name == a.name && d.Structural {
			return nil, true
		}
	}
	cells := append([]string(nil), di.refCells...)
	for _, c := range a.cells {
		cells[c.i] = c.allele
	}
	return cells, true
}

// diplotypeConflicts compares the supplied diplotype alleles of gene with
// every observation the request placed on the gene's defining positions.
// It returns one message per disagreeing item (naming both sources) and
// the number of items that agree.
func (k *Caller) diplotypeConflicts(gene, given string, alleles []string, ro *requestObs) (conflicts []string, agreed int) {
	di := k.idx.defs[gene]
	if di == nil {
		return nil, 0
	}
	if len(ro.obs) == 0 && len(ro.choices) == 0 && len(ro.items[gene]) == 0 {
		// No position evidence at all: nothing to compare, and an allele
		// without a definition is reported only beside variants of the
		// gene (below).
		return nil, 0
	}
	var expected [][]string // per gene copy the diplotype names
	for _, a := range alleles {
		var cells [][]string
		ok := true
		// A tandem arrangement ("*36 + *10") carries each part's bases on
		// one chromosome.
		for _, part := range strings.Split(a, " + ") {
			part = strings.TrimSpace(part)
			if deletionAllele[gene][part] {
				continue
			}
			c, found := di.alleleCells(part)
			if !found {
				ok = false
				break
			}
			if c != nil {
				cells = append(cells, c)
			}
		}
		if !ok {
			if len(ro.items[gene]) > 0 {
				msg := fmt.Sprintf("diplotypes.%s %s: allele %s has no %s allele definition, so the %s variants given (%s) cannot be compared with it",
					gene, given, a, gene, gene, strings.Join(ro.items[gene], ", "))
				ro.conflict("diplotypes."+gene, msg)
				return []string{msg}, 0
			}
			return nil, 0
		}
		// A deletion adds no copy and a tandem two: basesAgree then
		// compares the bases as sets.
		expected = append(expected, cells...)
	}
	judge := func(o *PositionObservation) (ok bool, says string, applies bool) {
		if o.Chrom != di.def.Chromosome {
			return true, "", false
		}
		i, found := di.posIdx[o.Pos]
		if !found || di.def.Positions[i].Ignored {
			return true, "", false
		}
		var obs []string
		for _, g := range o.GT {
			switch {
			case g < 0:
			case g == 0:
				obs = append(obs, di.refCells[i])
			case g-1 < len(o.Alts):
				obs = append(obs, o.Alts[g-1])
			}
		}
		if len(obs) == 0 {
			return true, "", false // a no-call says nothing
		}
		var exp []string
		for _, cells := range expected {
			exp = append(exp, cells[i])
		}
		says = fmt.Sprintf("%s at %s:%d", strings.Join(exp, "/"), di.def.Chromosome, o.Pos)
		if len(exp) == 0 {
			says = fmt.Sprintf("no copy (both alleles deleted) at %s:%d", di.def.Chromosome, o.Pos)
		}
		if ro.unstated[o.Source] {
			// A bare rsID: at least one copy of its alternate allele,
			// the other copy unknown.
			for _, b := range obs {
				if b != di.refCells[i] && !anyMatches(exp, b) {
					return false, says, true
				}
			}
			return true, says, true
		}
		if len(obs) < len(o.GT) {
			// A half no-call ("./1"): the base stated must be one of the
			// diplotype's.
			for _, b := range obs {
				if !anyMatches(exp, b) {
					return false, says, true
				}
			}
			return true, says, true
		}
		return basesAgree(exp, obs), says, true
	}
	describe := func(o *PositionObservation) string { return describeObs(ro, o) }
	for oi := range ro.obs {
		o := &ro.obs[oi]
		ok, says, applies := judge(o)
		if !applies {
			continue
		}
		if ok {
			agreed++
			continue
		}
		msg := fmt.Sprintf("conflicting evidence: diplotypes.%s %s says %s, but %s says %s; the two sources disagree",
			gene, given, says, o.Source, describe(o))
		conflicts = append(conflicts, msg)
		ro.conflict(o.Source, msg)
		ro.conflict("diplotypes."+gene, msg)
	}
	for _, choice := range ro.choices {
		any, applies := false, false
		var says string
		for ci := range choice {
			ok, s, a := judge(&choice[ci])
			applies = applies || a
			any = any || ok
			says = s
		}
		if !applies {
			continue
		}
		if any {
			agreed++
			continue
		}
		msg := fmt.Sprintf("conflicting evidence: diplotypes.%s %s says %s, but %s carries an alternate allele; the two sources disagree",
			gene, given, says, choice[0].Source)
		conflicts = append(conflicts, msg)
		ro.conflict(choice[0].Source, msg)
		ro.conflict("diplotypes."+gene, msg)
	}
	return conflicts, agreed
}

func anyMatches(cells []string, b string) bool {
	for _, c := range cells {
		if cellMatches(c, b) {
			return true
		}
	}
	return false
}

// basesAgree reports whether the observed bases at a position are those
// the diplotype's alleles carry there: the same multiset when both are
// diploid, else every base of each side is found on the other (a
// hemizygous call, a deletion allele).
func basesAgree(exp, obs []string) bool {
	if len(exp) == 2 && len(obs) == 2 {
		return (cellMatches(exp[0], obs[0]) && cellMatches(exp[1], obs[1])) ||
			(cellMatches(exp[0], obs[1]) && cellMatches(exp[1], obs[0]))
	}
	if len(exp) == 0 {
		return false // both copies deleted, yet a base was called
	}
	for _, b := range obs {
		if !anyMatches(exp, b) {
			return false
		}
	}
	for _, c := range exp {
		found := false
		for _, b := range obs {
			if cellMatches(c, b) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// positionConflicts sends to review every gene at whose definition
// position two input items (an rsID, an HGVS item, a call) state different
// genotypes: rs4244285 "ref" beside NC_000010.11:g.94781859G>A "hom" is a
// conflict, never the first item's (or the more reassuring) reading. A
// bare rsID states at least one copy of its alternate allele; items whose
// REF is written differently (an indel in two representations) are not
// compared.
func (k *Caller) positionConflicts(ro *requestObs) {
	type key struct {
		chrom string
		pos   int
	}
	// Per position, the observations grouped by what they state: a
	// position repeated n times is compared once per distinct statement,
	// not n² times.
	type group struct {
		rep     *PositionObservation
		members []*PositionObservation
	}
	at := map[key][]*group{}
	over := map[key][]*PositionObservation{} // beyond maxStatements
	var order []key
	for i := range ro.obs {
		o := &ro.obs[i]
		kk := key{o.Chrom, o.Pos}
		gs, seen := at[kk]
		if !seen {
			order = append(order, kk)
		}
		var g *group
		for _, c := range gs {
			if sameStatement(ro, c.rep, o) {
				g = c
				break
			}
		}
		if g == nil {
			if len(gs) == maxStatements {
				over[kk] = append(over[kk], o)
				continue
			}
			g = &group{rep: o}
			at[kk] = append(gs, g)
		}
		g.members = append(g.members, o)
	}
	for _, kk := range order {
		gs := at[kk]
		if len(over[kk]) > 0 {
			// Too many readings to compare: the position is a conflict.
			msg := fmt.Sprintf("conflicting evidence at %s:%d: it is given with more than %d different genotypes, which are not compared one by one", kk.chrom, kk.pos, maxStatements)
			for _, di := range k.idx.defPos[kk.chrom][kk.pos] {
				ro.add(di.def.Gene, &ro.review, msg)
			}
			for _, o := range over[kk] {
				ro.conflict(o.Source, msg)
			}
			for _, g := range gs {
				for _, m := range g.members {
					ro.conflict(m.Source, msg)
				}
			}
		}
		for a := 0; a < len(gs); a++ {
			for b := a + 1; b < len(gs); b++ {
				x, y := gs[a].rep, gs[b].rep
				if x.Source == y.Source || !strings.EqualFold(x.Ref, y.Ref) || k.sameGenotype(ro, x, y) {
					continue
				}
				msg := fmt.Sprintf("conflicting evidence at %s:%d: %s says %s, but %s says %s; the two sources disagree",
					kk.chrom, kk.pos, x.Source, describeObs(ro, x), y.Source, describeObs(ro, y))
				for _, di := range k.idx.defPos[kk.chrom][kk.pos] {
					ro.add(di.def.Gene, &ro.review, msg)
				}
				for _, m := range gs[a].members {
					ro.conflict(m.Source, msg)
				}
				for _, m := range gs[b].members {
					ro.conflict(m.Source, msg)
				}
			}
		}
	}
}

// maxStatements bounds the different genotypes compared at one position.
const maxStatements = 16

// sameStatement reports whether two observations at one position state
// exactly the same thing (REF, ALTs, genotype, and how their source is
// read), so that comparing one stands for the other.
func sameStatement(ro *requestObs, x, y *PositionObservation) bool {
	return strings.EqualFold(x.Ref, y.Ref) && slices.Equal(x.GT, y.GT) && ro.unstated[x.Source] == ro.unstated[y.Source] &&
		slices.EqualFunc(x.Alts, y.Alts, strings.EqualFold)
}

// obsBases returns the bases an observation states (REF as "REF"), and
// whether its other copy is unknown (a bare rsID: at least one copy).
func obsBases(ro *requestObs, o *PositionObservation) (bases []string, atLeast bool) {
	for _, g := range o.GT {
		switch {
		case g < 0:
			atLeast = true
		case g == 0:
			bases = append(bases, "REF")
		case g-1 < len(o.Alts):
			bases = append(bases, strings.ToUpper(o.Alts[g-1]))
		}
	}
	if ro.unstated[o.Source] {
		var alts []string
		for _, b := range bases {
			if b != "REF" {
				alts = append(alts, b)
			}
		}
		return alts, true
	}
	return bases, atLeast
}

// sameGenotype reports whether two observations at one position can be
// the same genotype.
func (k *Caller) sameGenotype(ro *requestObs, x, y *PositionObservation) bool {
	bx, px := obsBases(ro, x)
	by, py := obsBases(ro, y)
	if len(bx) == 0 && px || len(by) == 0 && py {
		return true // a no-call states nothing
	}
	contains := func(all, part []string) bool {
		left := append([]string(nil), all...)
		for _, p := range part {
			found := false
			for i, a := range left {
				if a == p {
					left = append(left[:i], left[i+1:]...)
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	switch {
	case !px && !py:
		if len(bx) != len(by) {
			// A haploid and a diploid statement: the same bases.
			return contains(bx, by) && contains(by, bx) || contains(append(bx, bx...), by) && contains(append(by, by...), bx)
		}
		return contains(bx, by)
	case px && !py:
		return contains(by, bx)
	case !px && py:
		return contains(bx, by)
	default:
		return true // two partial statements: no contradiction can be proved
	}
}

// describeObs writes what an observation states, for a conflict message.
func describeObs(ro *requestObs, o *PositionObservation) string {
	var b []string
	for _, g := range o.GT {
		switch {
		case g < 0:
			b = append(b, ".")
		case g == 0:
			b = append(b, o.Ref)
		case g-1 < len(o.Alts):
			b = append(b, o.Alts[g-1])
		}
	}
	if ro.unstated[o.Source] {
		return "at least one " + strings.Join(o.Alts, ",")
	}
	return strings.Join(b, "/")
}
