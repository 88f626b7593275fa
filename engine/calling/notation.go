package calling

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// This file resolves allele names as labs write them to the knowledge's
// names: gene prefixes ("CYP2D6*4"), PharmVar sub-alleles ("*7.001" →
// "*7"), CYP2D6 copy numbers ("*1x3" → the CPIC bin "*1x≥3") and tandem or
// hybrid arrangements written with or without spaces ("*36+*10" →
// "*36 + *10"). PharmCAT's outside-call rules are summarised in
// data/pgx/pharmcat/RULES.md §3.8.

var (
	copyNumberRe = regexp.MustCompile(`^(\*[0-9A-Za-z]+)x([0-9]+|N|n)$`)
	subAlleleRe  = regexp.MustCompile(`^(\*[0-9]+[A-Z]?)\.[0-9]{3}$`)
	plusRe       = regexp.MustCompile(`\s*\+\s*`)
)

// resolveAllele returns the knowledge name of an allele as written, with
// a note when the name was rewritten; ok is false when nothing matches,
// and why then says what was not understood.
func (k *Caller) resolveAllele(gene, s string) (name, note string, ok bool, why string) {
	s = strings.TrimSpace(s)
	if n, ok := k.alleleName(gene, s); ok {
		return n, "", true, ""
	}
	// Gene prefix: "CYP2D6*4" → "*4".
	if rest, cut := strings.CutPrefix(s, gene); cut && strings.HasPrefix(rest, "*") {
		if n, note, ok, why := k.resolveAllele(gene, rest); ok {
			return n, note, true, ""
		} else if why != "" {
			return "", "", false, why
		}
	}
	// "≥" typed as ">=".
	if strings.Contains(s, ">=") {
		if n, ok := k.alleleName(gene, strings.ReplaceAll(s, ">=", "≥")); ok {
			return n, "", true, ""
		}
	}
	// Arrangements on one chromosome, with or without spaces round "+".
	if strings.Contains(s, "+") {
		for _, cand := range []string{plusRe.ReplaceAllString(s, " + "), plusRe.ReplaceAllString(s, "+")} {
			if n, ok := k.alleleName(gene, cand); ok {
				return n, "", true, ""
			}
		}
		return "", "", false, fmt.Sprintf("%q: %s has no CPIC function for this arrangement", s, gene)
	}
	// Copy number.
	if m := copyNumberRe.FindStringSubmatch(s); m != nil {
		if m[2] == "N" || m[2] == "n" {
			return "", "", false, fmt.Sprintf("%q: an unknown copy number (xN) cannot be linked to a CPIC activity value", s)
		}
		n, _ := strconv.Atoi(m[2])
		if n == 1 {
			if a, ok := k.alleleName(gene, m[1]); ok {
				return a, fmt.Sprintf("%s read as %s (one copy)", s, a), true, ""
			}
		}
		if n >= 3 {
			bin := m[1] + "x≥3"
			if a, ok := k.alleleName(gene, bin); ok {
				return a, fmt.Sprintf("%s read as the CPIC copy-number bin %s", s, a), true, ""
			}
		}
		return "", "", false, fmt.Sprintf("%q: %s copies of %s have no CPIC activity value", s, m[2], m[1])
	}
	// PharmVar sub-allele.
	if m := subAlleleRe.FindStringSubmatch(s); m != nil {
		if a, ok := k.alleleName(gene, m[1]); ok {
			return a, fmt.Sprintf("PharmVar sub-allele %s read as %s", s, a), true, ""
		}
	}
	return "", "", false, ""
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
