package calling

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// This file resolves allele names as labs and read-depth callers write
// them to the knowledge's names: gene prefixes ("CYP2D6*4"), PharmVar
// sub-alleles ("*7.001" → "*7"), CYP2D6 legacy sub-allele letters ("*2A" →
// "*2"), copy numbers ("*2x2", "*1x3" → the CPIC bin "*1x≥3"), and tandem
// or hybrid arrangements as callers write them ("*36+*10", "*36+*36+*10" ≡
// "*36x2 + *10", "(*68)+*4"). PharmCAT's outside-call rules are summarised
// in data/pgx/pharmcat/RULES.md §3.8; the CPIC activity values of
// duplications and arrangements are the knowledge's CYP2D6 alleles
// ("*2x2", "*36 + *10", from PharmCAT's CYP2D6 phenotype file and
// CYP2D6_phenotype_additions.json). A written form that is understood but
// has no CPIC value (an unknown copy number "xN", "*10x3", "*4 + *10") is
// not refused: the gene goes to review naming it, and no value is made up
// by summing its parts.

var (
	// starPartRe is one copy unit of an arrangement: a star allele
	// (with a legacy letter or a PharmVar sub-allele number) and an
	// optional copy number ("*2x2", "*1x≥3", "*1×3", "*2xN").
	starPartRe     = regexp.MustCompile(`^(\*[0-9]+[A-Z]?(?:\.[0-9]{3,})?)(?:\s*[x×X]\s*(≥|>=)?\s*([0-9]+|N|n))?$`)
	subAlleleRe    = regexp.MustCompile(`^(\*[0-9]+[A-Z]?)\.[0-9]{3,}$`)
	legacyLetterRe = regexp.MustCompile(`^(\*[0-9]+)[A-Z]$`)
)

// legacyLetterGenes are the genes whose legacy letter suffixes name
// sub-alleles of one core allele ("*2A", "*4N" = *4.013): CYP2D6, whose
// star names give the key variant by number and further variants by
// letter (the 1996 star nomenclature of Daly et al.), since replaced by
// PharmVar's numbered sub-alleles of the core allele (PharmVar GeneFocus
// CYP2D6, https://pmc.ncbi.nlm.nih.gov/articles/PMC6925641; "*4.013 (*4N)"
// in https://pmc.ncbi.nlm.nih.gov/articles/PMC8579245/table/tbl4). CPIC
// assigns function to the core allele. Elsewhere a letter can name a
// distinct allele (TPMT *3A, *3B), so it is not stripped.
var legacyLetterGenes = map[string]bool{"CYP2D6": true}

// alleleReading is one allele of a diplotype as read.
type alleleReading struct {
	// name is the knowledge allele; empty when review is set.
	name string
	// note says how the written form was rewritten, if it was.
	note string
	// review says why a written form that was understood has no CPIC
	// value (the gene goes to review naming it).
	review string
}

// readAllele reads one allele as written. ok is true when it was
// understood: r.name is then the knowledge allele, or r.review says why
// CPIC gives it no value. ok false with why set names what was not
// understood (an unknown allele in an arrangement); ok false with why
// empty: nothing matched.
func (k *Caller) readAllele(gene, s string) (r alleleReading, ok bool, why string) {
	s = strings.TrimSpace(s)
	if n, ok := k.alleleName(gene, s); ok {
		return alleleReading{name: n}, true, ""
	}
	// Gene prefix: "CYP2D6*4" → "*4".
	if rest, cut := strings.CutPrefix(s, gene); cut && strings.HasPrefix(rest, "*") {
		if r, ok, why := k.readAllele(gene, rest); ok || why != "" {
			return r, ok, why
		}
	}
	// "≥" typed as ">=".
	if strings.Contains(s, ">=") {
		if n, ok := k.alleleName(gene, strings.ReplaceAll(s, ">=", "≥")); ok {
			return alleleReading{name: n}, true, ""
		}
	}
	if strings.HasPrefix(s, "*") || strings.HasPrefix(s, "(") {
		return k.readStructural(gene, s)
	}
	return alleleReading{}, false, ""
}

// copyRun is a run of identical copies in one arrangement.
type copyRun struct {
	written   string // the part as written
	core      string // the knowledge allele of one copy
	note      string // how the copy's name was rewritten
	n         int    // copies; 0 when unknown ("xN")
	atLeast   bool   // "x≥3"
	uncertain bool   // written in parentheses, "(*68)"
}

func (c copyRun) String() string {
	switch {
	case c.n == 0:
		return c.core + "xN"
	case c.atLeast:
		return fmt.Sprintf("%sx≥%d", c.core, c.n)
	case c.n == 1:
		return c.core
	}
	return fmt.Sprintf("%sx%d", c.core, c.n)
}

// readStructural reads a star allele with copy numbers, sub-allele or
// legacy suffixes, and arrangements of copies on one chromosome joined by
// "+" (upstream copy first, PharmVar). Adjacent copies of the same allele
// are one run ("*36+*36+*10" ≡ "*36x2+*10", "*4+*4" ≡ "*4x2"); the
// arrangement's value is the knowledge's, never a sum of its parts.
func (k *Caller) readStructural(gene, s string) (alleleReading, bool, string) {
	if strings.IndexByte(s, '/') >= 0 && !strings.Contains(s, "+") && !(strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")")) {
		// One copy unit, not in parentheses, holding a '/' (a whole
		// diplotype, tried as one allele first): starPartRe has no '/',
		// so the loop below would return this without a reason.
		return alleleReading{}, false, ""
	}
	var runs []copyRun
	for _, tok := range strings.Split(s, "+") {
		tok = strings.TrimSpace(tok)
		c := copyRun{written: tok}
		if strings.HasPrefix(tok, "(") && strings.HasSuffix(tok, ")") {
			c.uncertain = true
			tok = strings.TrimSpace(tok[1 : len(tok)-1])
		}
		if rest, cut := strings.CutPrefix(tok, gene); cut {
			tok = rest
		}
		m := starPartRe.FindStringSubmatch(tok)
		if m == nil {
			if strings.Contains(s, "+") || c.uncertain {
				return alleleReading{}, false, fmt.Sprintf("%q: %q is not a %s allele", s, c.written, gene)
			}
			return alleleReading{}, false, ""
		}
		core, note, ok := k.resolveCore(gene, m[1])
		if !ok {
			if len(runs) > 0 || strings.Contains(s, "+") {
				return alleleReading{}, false, fmt.Sprintf("%q: unknown %s allele %q", s, gene, m[1])
			}
			return alleleReading{}, false, ""
		}
		c.core, c.note, c.n = core, note, 1
		c.atLeast = m[2] != ""
		switch {
		case m[3] == "N" || m[3] == "n":
			c.n = 0
		case m[3] != "":
			c.n, _ = strconv.Atoi(m[3])
			if c.n == 0 && !c.atLeast {
				return alleleReading{}, false, fmt.Sprintf("%q: zero copies of %s is not an allele (a deletion is written *5)", s, core)
			}
		}
		runs = append(runs, c)
	}
	var uncertain []string
	var certain []copyRun
	for _, c := range runs {
		if c.uncertain {
			uncertain = append(uncertain, c.written)
		} else {
			certain = append(certain, c)
		}
	}
	all := k.arrangement(gene, s, mergeRuns(runs))
	if len(uncertain) == 0 {
		return all, true, ""
	}
	// A copy in parentheses may or may not be there: the reading stands
	// when CPIC gives the arrangement the same value either way.
	which := strings.Join(uncertain, ", ")
	if len(certain) == 0 {
		return alleleReading{review: fmt.Sprintf("%s %q: every copy is in parentheses (uncertain), so what the chromosome carries is not stated", gene, s)}, true, ""
	}
	certain = mergeRuns(certain)
	without := k.arrangement(gene, s, certain)
	if all.review == "" && without.review == "" {
		a, _ := k.Allele(gene, all.name)
		b, _ := k.Allele(gene, without.name)
		if a.Activity != "" && a.Activity != "n/a" && a.Activity == b.Activity {
			all.note = joinNotes(all.note, fmt.Sprintf("%s: the copy in parentheses (%s) was read as present; CPIC gives %s and %s the same activity value (%s), so it does not change the score",
				s, which, all.name, without.name, a.Activity))
			return all, true, ""
		}
	}
	return alleleReading{review: fmt.Sprintf("%s %q: the copy in parentheses (%s) may or may not be present, and CPIC gives the arrangement with it (%s) and without it (%s) different or no activity values",
		gene, s, which, readingName(all, mergeRuns(runs)), readingName(without, certain))}, true, ""
}

// mergeRuns joins adjacent copies of the same allele into one run
// ("*36+*36+*10" → *36x2, *10), whether or not they were in parentheses.
func mergeRuns(runs []copyRun) []copyRun {
	var out []copyRun
	for _, c := range runs {
		if l := len(out) - 1; l >= 0 && out[l].core == c.core && out[l].n > 0 && c.n > 0 {
			out[l].n += c.n
			out[l].atLeast = out[l].atLeast || c.atLeast
			out[l].written += "+" + c.written
			if out[l].note == "" {
				out[l].note = c.note
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

// arrangement looks runs up as one knowledge allele: one run by its copy
// number (the CPIC bin "x≥3" for three or more copies where CPIC has no
// exact value), several runs as the CPIC arrangement "A + B".
func (k *Caller) arrangement(gene, s string, runs []copyRun) alleleReading {
	var notes []string
	for _, c := range runs {
		if c.note != "" {
			notes = append(notes, c.note)
		}
		if strings.Contains(c.written, "+") {
			notes = append(notes, fmt.Sprintf("copies written one by one (%s) read as %s", c.written, c))
		}
	}
	names := make([]string, len(runs))
	for i, c := range runs {
		names[i] = c.String()
	}
	canon := strings.Join(names, " + ")
	for _, c := range runs {
		if c.n == 0 {
			return alleleReading{review: fmt.Sprintf("%s %q: an unknown copy number (%s) cannot be linked to a CPIC activity value", gene, s, c)}
		}
	}
	if len(runs) == 1 {
		c := runs[0]
		cands := []string{c.String()}
		if !c.atLeast && c.n >= 3 {
			cands = append(cands, c.core+"x≥3")
		} else if c.atLeast && c.n > 3 {
			cands = []string{c.core + "x≥3"}
		}
		for i, cand := range cands {
			if n, ok := k.alleleName(gene, cand); ok {
				switch {
				case i > 0 || c.atLeast && c.n > 3:
					notes = append(notes, fmt.Sprintf("%s read as the CPIC copy-number bin %s", s, n))
				case c.n == 1 && strings.ContainsAny(s, "x×X"):
					notes = append(notes, fmt.Sprintf("%s read as %s (one copy)", s, n))
				}
				return alleleReading{name: n, note: joinNotes(notes...)}
			}
		}
		return alleleReading{review: fmt.Sprintf("%s %q: CPIC gives %s (%s) no activity value", gene, s, canon, copiesOf(c))}
	}
	for _, c := range runs {
		if c.atLeast {
			return alleleReading{review: fmt.Sprintf("%s %q: CPIC gives no arrangement with an open copy number (%s) an activity value", gene, s, c)}
		}
	}
	if n, ok := k.alleleName(gene, canon); ok {
		return alleleReading{name: n, note: joinNotes(notes...)}
	}
	why := fmt.Sprintf("%s %q: CPIC gives the arrangement %s no activity value (a sum of its parts' values would be a guess)", gene, s, canon)
	rev := make([]string, len(names))
	for i, n := range names {
		rev[len(names)-1-i] = n
	}
	if n, ok := k.alleleName(gene, strings.Join(rev, " + ")); ok {
		why += fmt.Sprintf("; CPIC has %s, written with the upstream copy first", n)
	}
	return alleleReading{review: why}
}

// resolveCore resolves one copy's allele name: the name itself, a
// PharmVar sub-allele ("*4.001" → "*4") or a CYP2D6 legacy letter ("*2A"
// → "*2").
func (k *Caller) resolveCore(gene, s string) (name, note string, ok bool) {
	if n, ok := k.alleleName(gene, s); ok {
		return n, "", true
	}
	if m := subAlleleRe.FindStringSubmatch(s); m != nil {
		if n, ok := k.alleleName(gene, m[1]); ok {
			return n, fmt.Sprintf("PharmVar sub-allele %s read as %s", s, n), true
		}
		if legacyLetterGenes[gene] {
			if l := legacyLetterRe.FindStringSubmatch(m[1]); l != nil {
				if n, ok := k.alleleName(gene, l[1]); ok {
					return n, fmt.Sprintf("PharmVar sub-allele %s read as %s", s, n), true
				}
			}
		}
	}
	if legacyLetterGenes[gene] {
		if l := legacyLetterRe.FindStringSubmatch(s); l != nil {
			if n, ok := k.alleleName(gene, l[1]); ok {
				return n, fmt.Sprintf("legacy sub-allele %s read as its core allele %s", s, n), true
			}
		}
	}
	return "", "", false
}

func copiesOf(c copyRun) string {
	switch {
	case c.atLeast:
		return fmt.Sprintf("%d or more copies of %s", c.n, c.core)
	case c.n == 1:
		return "one copy of " + c.core
	}
	return fmt.Sprintf("%d copies of %s", c.n, c.core)
}

func readingName(r alleleReading, runs []copyRun) string {
	if r.name != "" {
		return r.name
	}
	names := make([]string, len(runs))
	for i, c := range runs {
		names[i] = c.String()
	}
	return strings.Join(names, " + ")
}

func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}

// hemizygousGene reports whether one allele is a whole genotype of the
// gene: X-linked (G6PD, in males) or mitochondrial (MT-RNR1).
func hemizygousGene(g *engine.Gene) bool {
	return g.Chromosome == "chrX" || g.Chromosome == "chrM" || strings.HasPrefix(g.Symbol, "MT-")
}

// Repeat counts with two meanings. A tandem repeat written as a bare count
// after its rsID ("rs3064744:TA(7)", "(TA)7", "TA[7]") means different
// alleles in the two conventions in use: the CPIC/PharmCAT allele
// definitions count the UGT1A1 promoter repeat one higher than the clinical
// convention (data/pgx/pharmcat/RULES.md §3.6: TA(7) is the reference and
// TA(8) is *28 in the definitions; data/india/variant_frequencies.csv,
// rs8175347: the reference is (TA)6 and *28 is (TA)7, as clinicians write
// it). Such an item is refused naming both readings unless it says which
// count it uses: "@definitions" or "@clinical" after the count
// ("rs3064744:(TA)7@clinical" = "rs3064744:TA(8)@definitions" =
// "rs3064744:CATAT"). TestRepeatConventionsAgreeWithData checks the
// offsets against the knowledge.

// repeatCountRe is a bare repeat count: "(TA)7", "TA(7)" or "TA[7]".
var repeatCountRe = regexp.MustCompile(`^(?:\(([A-Za-z]+)\)([0-9]{1,3})|([A-Za-z]+)\(([0-9]{1,3})\)|([A-Za-z]+)\[([0-9]{1,3})\])$`)

// RepeatMarkerDefinitions and RepeatMarkerClinical say which count a
// repeat allele uses.
const (
	RepeatMarkerDefinitions = "@definitions"
	RepeatMarkerClinical    = "@clinical"
)

// RepeatConvention is a repeat variant whose bare count has two meanings.
type RepeatConvention struct {
	RsID, Gene, Unit string
	// ClinicalOffset is the definitions' count minus the clinical count
	// of the same allele.
	ClinicalOffset int
}

var repeatConventions = map[string]RepeatConvention{
	"rs3064744": {RsID: "rs3064744", Gene: "UGT1A1", Unit: "TA", ClinicalOffset: 1},
}

// RepeatConventions lists the repeat variants whose bare count is refused.
func RepeatConventions() []RepeatConvention {
	out := make([]RepeatConvention, 0, len(repeatConventions))
	for _, c := range repeatConventions {
		out = append(out, c)
	}
	return out
}

// parseRepeatCount reads a bare repeat count; ok is false when s is not
// one.
func parseRepeatCount(s string) (unit string, n int, ok bool) {
	m := repeatCountRe.FindStringSubmatch(s)
	if m == nil {
		return "", 0, false
	}
	for i := 1; i < len(m); i += 2 {
		if m[i] != "" {
			n, _ = strconv.Atoi(m[i+1])
			return strings.ToUpper(m[i]), n, true
		}
	}
	return "", 0, false
}

// cutRepeatMarker splits "TA(7)@clinical" into "TA(7)" and its marker.
func cutRepeatMarker(allele string) (string, string) {
	for _, m := range []string{RepeatMarkerDefinitions, RepeatMarkerClinical} {
		if len(allele) > len(m) && strings.EqualFold(allele[len(allele)-len(m):], m) {
			return strings.TrimSpace(allele[:len(allele)-len(m)]), m
		}
	}
	return allele, ""
}

// repeatAllele resolves the allele part of an rsID item that is a repeat
// count: with a marker it returns the definitions' notation ("TA(8)");
// without one, for a variant of repeatConventions, ambiguous is true.
// A marker anywhere else is an error.
func repeatAllele(rsid, allele, marker string) (defAllele string, ambiguous bool, err error) {
	conv, known := repeatConventions[rsid]
	unit, n, isCount := parseRepeatCount(allele)
	if marker == "" {
		return allele, known && isCount && unit == conv.Unit, nil
	}
	if !known || !isCount || unit != conv.Unit {
		return "", false, fmt.Errorf("the %s and %s markers say how a repeat count is counted; they apply only to a count such as TA(7) or (TA)7 of %s", RepeatMarkerDefinitions, RepeatMarkerClinical, repeatVariantList())
	}
	if marker == RepeatMarkerClinical {
		n += conv.ClinicalOffset
	}
	return fmt.Sprintf("%s(%d)", conv.Unit, n), false, nil
}

func repeatVariantList() string {
	var out []string
	for _, c := range repeatConventions {
		out = append(out, fmt.Sprintf("%s (%s)", c.RsID, c.Gene))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// twoReadings explains why a bare repeat count is refused: what it means
// counted as the definitions count and counted clinically, and how to say
// which.
func (k *Caller) twoReadings(v variantSpec) string {
	conv := repeatConventions[v.rsid]
	_, n, _ := parseRepeatCount(v.allele)
	asDef := k.repeatReading(conv, n)
	asClin := k.repeatReading(conv, n+conv.ClinicalOffset)
	return fmt.Sprintf("%q has two meanings: counted as the CPIC/PharmCAT allele definitions count the %s %s repeat, %s(%d) is %s; counted clinically (the count %d lower), (%s)%d is %s(%d) of the definitions: %s. Say which count you mean (%s:%s(%d)%s or %s:(%s)%d%s), or write the VCF allele or the %s diplotype",
		v.item, conv.Gene, conv.Unit, conv.Unit, n, asDef, conv.ClinicalOffset, conv.Unit, n, conv.Unit, n+conv.ClinicalOffset, asClin,
		v.rsid, conv.Unit, n, RepeatMarkerDefinitions, v.rsid, conv.Unit, n, RepeatMarkerClinical, conv.Gene)
}

// repeatReading names the alleles the definitions give a repeat count of
// conv ("the reference allele (VCF CAT)", "*28, *80+*28 (VCF CATAT)").
func (k *Caller) repeatReading(conv RepeatConvention, count int) string {
	name := fmt.Sprintf("%s(%d)", conv.Unit, count)
	for _, l := range k.idx.defRsid[conv.RsID] {
		p := l.di.def.Positions[l.i]
		vcf, ok := p.CPICToVCF[name]
		if !ok {
			continue
		}
		if vcf == l.di.refCells[l.i] {
			return fmt.Sprintf("the %s reference allele (VCF %s)", conv.Gene, vcf)
		}
		var names []string
		for _, a := range l.di.alleles {
			for _, c := range a.cells {
				if c.i == l.i && c.allele == vcf {
					names = append(names, a.name)
				}
			}
		}
		return fmt.Sprintf("%s (VCF %s)", strings.Join(names, ", "), vcf)
	}
	return "no allele of the definitions"
}
