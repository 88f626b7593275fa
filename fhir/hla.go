package fhir

// HLA typing notations: IPD-IMGT/HLA allele names of any field count, G
// and P groups, and GL Strings (with or without the GL String Code
// prefix), reduced by rule to the two-field (protein-level) names CPIC
// keys on. No IPD-IMGT/HLA table is shipped (its licence, CC BY-ND, asks
// not to mirror it): the reduction is the nomenclature's own rule — the
// first two fields of an allele name, or of a G/P group's name — and the
// tables are used only by the tests that validate the rule
// (docs/cds-hooks.md §3).

import (
	"fmt"
	"strings"
)

// HLA carrier statuses.
const (
	hlaPositive  = "positive"
	hlaNegative  = "negative"
	hlaAmbiguous = "ambiguous"
	hlaUnknown   = "" // the typing does not say
)

// hlaName is one HLA allele name as written, split into its parts.
type hlaName struct {
	Written string
	// Gene is "HLA-B".
	Gene string
	// Fields are the colon-separated fields ("57", "01", "01", "02").
	Fields []string
	// Suffix is an expression suffix (N null, L low, S secreted, C
	// cytoplasm, A aberrant, Q questionable), or "".
	Suffix string
	// Group is "G" or "P" for a G or P group name, else "".
	Group string
}

// TwoField returns the protein-level name "HLA-B*57:01".
func (h hlaName) TwoField() string {
	return h.Gene + "*" + h.Fields[0] + ":" + h.Fields[1]
}

// Allele returns the two-field allele without the gene ("*57:01").
func (h hlaName) Allele() string { return "*" + h.Fields[0] + ":" + h.Fields[1] }

// hlaNameError says why an HLA name cannot be reduced to two fields.
type hlaNameError struct {
	Name, Reason string
}

func (e *hlaNameError) Error() string { return fmt.Sprintf("HLA name %q: %s", e.Name, e.Reason) }

// parseHLAName reads an IPD-IMGT/HLA allele name: an optional "HLA-"
// prefix, the locus, "*", then two to four colon-separated numeric fields
// with an optional expression suffix, or a G group (three fields + "G") or
// P group (two fields + "P"). Refused, with the reason: pre-2010 names
// without colons (their fields cannot be told apart by rule), names of
// one field (an allele group, not an allele), and NMDP multiple-allele
// codes or XX codes (letters where a field belongs).
func parseHLAName(s string) (hlaName, error) {
	written := strings.TrimSpace(s)
	h := hlaName{Written: written}
	bad := func(reason string) (hlaName, error) { return h, &hlaNameError{Name: written, Reason: reason} }
	rest := written
	if len(rest) >= 4 && strings.EqualFold(rest[:4], "HLA-") {
		rest = rest[4:]
	}
	locus, fields, ok := strings.Cut(rest, "*")
	if !ok {
		return bad("no locus*allele separator '*'")
	}
	locus = strings.ToUpper(strings.TrimSpace(locus))
	if locus == "" || !isAlnum(locus) || !isLetter(locus[0]) {
		return bad("the locus is not a gene name")
	}
	h.Gene = "HLA-" + locus
	if fields == "" {
		return bad("no allele after '*'")
	}
	if n := len(fields); n > 0 {
		switch c := fields[n-1]; {
		case c == 'G' || c == 'g':
			h.Group, fields = "G", fields[:n-1]
		case c == 'P' || c == 'p':
			h.Group, fields = "P", fields[:n-1]
		case strings.ContainsRune("NLSCAQnlscaq", rune(c)):
			h.Suffix, fields = strings.ToUpper(string(c)), fields[:n-1]
		}
	}
	parts := strings.Split(fields, ":")
	for _, p := range parts {
		if p == "" {
			return bad("an empty field")
		}
		if !isDigits(p) {
			if isAlnum(p) {
				return bad("a field holds letters (an NMDP allele code or an XX code): it names a set of alleles, not one; not expanded")
			}
			return bad("a field is not numeric")
		}
		if len(parts) == 1 && len(p) >= 4 {
			return bad("a pre-2010 name without field separators: its two-field name cannot be told by rule")
		}
		if len(p) > 4 {
			return bad("a field is longer than four digits")
		}
	}
	if len(parts) == 1 {
		return bad("one field only: an allele group (serological level), not a protein-level allele")
	}
	if len(parts) > 4 {
		return bad("more than four fields")
	}
	if h.Group != "" && h.Suffix != "" {
		return bad("both a group and an expression suffix")
	}
	h.Fields = parts
	return h, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func isLetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }

func isAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isLetter(s[i]) && (s[i] < '0' || s[i] > '9') {
			return false
		}
	}
	return s != ""
}

// statusFor is what one name says about carrying the two-field allele
// keyed ("HLA-B*57:01"): positive, negative, or ambiguous for a name of
// that allele with an expression suffix (a null or questionable
// expression variant of a risk allele is left to a reviewer).
func (h hlaName) statusFor(keyed string) string {
	if h.TwoField() != keyed {
		return hlaNegative
	}
	if h.Suffix != "" {
		return hlaAmbiguous
	}
	return hlaPositive
}

// glString is a parsed GL String: loci ('^') of genotype lists ('|') of
// genotypes ('+') of haplotypes ('~') of allele lists ('/').
type glString struct {
	// Namespace and Version are the GL String Code prefix ("hla",
	// "3.23.0"); empty when the string had none.
	Namespace, Version string
	Loci               [][]glGenotype
}

// glGenotype is the gene copies of one genotype: each copy is a haplotype
// of allele lists (one per locus in phase).
type glGenotype [][][]hlaName

// parseGLString reads a GL String (1.0 or 1.1 without '?'), optionally
// prefixed by a GL String Code "namespace#version#". Only the hla
// namespace is read. Operators bind from loosest to tightest: ^ | + ~ /.
func parseGLString(s string) (*glString, error) {
	s = strings.TrimSpace(s)
	gl := &glString{}
	if strings.Contains(s, "#") {
		parts := strings.Split(s, "#")
		if len(parts) != 3 {
			return nil, fmt.Errorf("GL String Code %q: expected namespace#version#glstring", s)
		}
		gl.Namespace, gl.Version, s = strings.ToLower(strings.TrimSpace(parts[0])), strings.TrimSpace(parts[1]), strings.TrimSpace(parts[2])
		if gl.Namespace != "hla" {
			return nil, fmt.Errorf("GL String Code namespace %q: only hla (IPD-IMGT/HLA names) is read", parts[0])
		}
	}
	if s == "" {
		return nil, fmt.Errorf("empty GL String")
	}
	if strings.Contains(s, "?") {
		return nil, fmt.Errorf("GL String %q: the '?' (paralog ambiguity) operator is not read", s)
	}
	for _, locus := range strings.Split(s, "^") {
		var list []glGenotype
		for _, gt := range strings.Split(locus, "|") {
			var g glGenotype
			for _, hap := range strings.Split(gt, "+") {
				var h [][]hlaName
				for _, al := range strings.Split(hap, "~") {
					var alleles []hlaName
					for _, a := range strings.Split(al, "/") {
						n, err := parseHLAName(a)
						if err != nil {
							return nil, err
						}
						alleles = append(alleles, n)
					}
					h = append(h, alleles)
				}
				g = append(g, h)
			}
			list = append(list, g)
		}
		gl.Loci = append(gl.Loci, list)
	}
	return gl, nil
}

// genes lists the genes named in the GL String.
func (gl *glString) genes() []string {
	set := map[string]bool{}
	for _, l := range gl.Loci {
		for _, g := range l {
			for _, c := range g {
				for _, al := range c {
					for _, n := range al {
						set[n.Gene] = true
					}
				}
			}
		}
	}
	return sortedKeys(set)
}

// statusFor is what the GL String says about carrying the keyed allele of
// its gene: positive when every alternative genotype has a copy that is
// the allele; negative when every alternative types two or more copies of
// the gene and none can be it; ambiguous when alternatives (genotype
// lists, allele lists) disagree; unknown when the gene is not typed or
// only one copy is and it is not the allele.
func (gl *glString) statusFor(keyed string) string {
	gene, _, _ := strings.Cut(keyed, "*")
	out := hlaUnknown
	for _, locus := range gl.Loci {
		st, typed := genotypeListStatus(locus, gene, keyed)
		if !typed {
			continue
		}
		switch {
		case out == hlaUnknown:
			out = st
		case st != out:
			return hlaAmbiguous
		}
	}
	return out
}

func genotypeListStatus(list []glGenotype, gene, keyed string) (string, bool) {
	out, typed := "", 0
	for _, g := range list {
		st, ok := genotypeStatus(g, gene, keyed)
		if !ok {
			continue
		}
		if typed == 0 {
			out = st
		} else if st != out {
			out = hlaAmbiguous
		}
		typed++
	}
	switch {
	case typed == 0:
		return "", false
	case typed < len(list):
		// Some alternatives type the gene and others do not.
		return hlaAmbiguous, true
	}
	return out, true
}

// genotypeStatus combines the copies of one genotype.
func genotypeStatus(g glGenotype, gene, keyed string) (string, bool) {
	copies, pos, amb := 0, false, false
	for _, hap := range g {
		for _, al := range hap {
			if len(al) == 0 || al[0].Gene != gene {
				continue
			}
			copies++
			switch alleleListStatus(al, keyed) {
			case hlaPositive:
				pos = true
			case hlaAmbiguous:
				amb = true
			}
		}
	}
	switch {
	case copies == 0:
		return "", false
	case pos:
		return hlaPositive, true
	case amb:
		return hlaAmbiguous, true
	case copies >= 2:
		return hlaNegative, true
	}
	return hlaUnknown, true
}

// alleleListStatus: every alternative the allele → positive; none →
// negative; some → ambiguous. A list mixing genes is ambiguous.
func alleleListStatus(al []hlaName, keyed string) string {
	out := ""
	for _, n := range al {
		st := n.statusFor(keyed)
		if n.Gene != al[0].Gene {
			return hlaAmbiguous
		}
		if out == "" {
			out = st
		} else if out != st {
			return hlaAmbiguous
		}
	}
	return out
}

// reductions lists how each name written with more than two fields, or as
// a G/P group, was reduced ("HLA-B*57:01:01G → HLA-B*57:01").
func (gl *glString) reductions() []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range gl.Loci {
		for _, g := range l {
			for _, c := range g {
				for _, al := range c {
					for _, n := range al {
						if r := n.reduction(); r != "" && !seen[r] {
							seen[r] = true
							out = append(out, r)
						}
					}
				}
			}
		}
	}
	return out
}

// reduction describes the reduction of a name to two fields, or "".
func (h hlaName) reduction() string {
	switch {
	case h.Group == "G":
		return fmt.Sprintf("%s (G group) read as %s", h.Written, h.TwoField())
	case h.Group == "P":
		return fmt.Sprintf("%s (P group) read as %s", h.Written, h.TwoField())
	case len(h.Fields) > 2:
		return fmt.Sprintf("%s read as %s", h.Written, h.TwoField())
	}
	return ""
}
