package calling

import (
	"fmt"
	"regexp"
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
