package fhir

// The notations of genotype and haplotype values: GL Strings and IMGT/HLA
// names for HLA genes; star-allele diplotypes with PharmVar sub-allele
// numbers (CYP2D6*7.001) or legacy letter suffixes (CYP2C9*35B);
// rsID-style genotypes (rs9923231 C/T). Each is read into the engine's
// terms or refused with the reason, never guessed.

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"

	opb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/resources/observation_go_proto"
)

// Code systems of genomic values.
const (
	SystemGLString = "http://glstring.org"
	SystemIMGTHLA  = "http://www.ebi.ac.uk/ipd/imgt/hla"
	SystemPharmVar = "http://www.pharmvar.org"
	SystemHGVS     = "http://varnomen.hgvs.org"
	SystemRefSeq   = "http://www.ncbi.nlm.nih.gov/refseq"
	SystemClinVar  = "http://www.ncbi.nlm.nih.gov/clinvar"
)

// valueCandidates lists the strings a genotype or haplotype value may be
// read from, most precise first: GL String Codes, IMGT/HLA and PharmVar
// coding codes that are names (not accessions), then the text, the
// displays and a string value.
func valueCandidates(obs *opb.Observation) []string {
	v := obs.GetValue()
	cs, _ := codings(v.GetCodeableConcept())
	var out []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s == "" {
			return
		}
		for _, x := range out {
			if x == s {
				return
			}
		}
		out = append(out, s)
	}
	for _, c := range cs {
		if c.System == SystemGLString || strings.HasPrefix(strings.ToLower(c.Code), "hla#") {
			add(c.Code)
		}
	}
	for _, c := range cs {
		if (c.System == SystemIMGTHLA || c.System == SystemPharmVar) && strings.Contains(c.Code, "*") {
			add(c.Code)
		}
	}
	for _, t := range valueTexts(obs) {
		add(t)
	}
	return out
}

// hlaToken finds HLA allele names (with or without "HLA-") in text.
var hlaToken = regexp.MustCompile(`(?i)(?:HLA-)?[A-Z][A-Z0-9]*\*[0-9A-Z:]+`)

// hlaWords are the words a status-style HLA value may hold besides allele
// names; anything else makes the value unreadable (never guessed).
var hlaWords = map[string]string{
	"positive": hlaPositive, "present": hlaPositive, "detected": hlaPositive, "carrier": hlaPositive,
	"negative": hlaNegative, "absent": hlaNegative, "not detected": hlaNegative, "not present": hlaNegative,
	"non-carrier": hlaNegative, "noncarrier": hlaNegative, "not a carrier": hlaNegative,
}

// hlaReading is what one candidate string says about a gene's keyed
// alleles.
type hlaReading struct {
	status     map[string]string // keyed allele ("HLA-B*57:01") → status ("" = not said)
	reductions []string
	source     string
}

// readHLA reads one candidate string of an HLA result of gene: a GL String
// (or GL String Code), or allele names with optional status words.
func readHLA(gene, s string, keyed []string) (hlaReading, error) {
	r := hlaReading{status: map[string]string{}, source: s}
	if strings.ContainsAny(s, "#+^|~") {
		gl, err := parseGLString(s)
		if err != nil {
			return r, err
		}
		genes := gl.genes()
		if !containsString(genes, gene) {
			return r, fmt.Errorf("the GL String names %s alleles, not %s", strings.Join(genes, ", "), gene)
		}
		for _, k := range keyed {
			r.status[k] = gl.statusFor(k)
		}
		r.reductions = gl.reductions()
		return r, nil
	}
	locs := hlaToken.FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		return r, fmt.Errorf("no HLA allele name in %q", s)
	}
	var names []hlaName
	var seps []string
	rest := strings.Builder{}
	prev := 0
	for i, l := range locs {
		gap := s[prev:l[0]]
		if i > 0 {
			seps = append(seps, strings.TrimSpace(gap))
		} else {
			rest.WriteString(gap + " ")
		}
		n, err := parseHLAName(s[l[0]:l[1]])
		if err != nil {
			return r, err
		}
		if n.Gene != gene {
			return r, fmt.Errorf("the value names %s alleles in a %s result", n.Gene, gene)
		}
		names = append(names, n)
		if x := n.reduction(); x != "" {
			r.reductions = append(r.reductions, x)
		}
		prev = l[1]
	}
	rest.WriteString(s[prev:])
	// Status words may stand before or after the names; separators
	// between names are "/", ",", "and" or blanks.
	word := strings.ToLower(strings.Join(strings.FieldsFunc(rest.String(), func(c rune) bool {
		return c == ' ' || c == ':' || c == '(' || c == ')' || c == ',' || c == ';'
	}), " "))
	word = strings.Trim(word, " .")
	status := hlaPositive
	if word != "" {
		st, ok := hlaWords[word]
		if !ok {
			return r, fmt.Errorf("the words %q beside the allele names are not understood", word)
		}
		status = st
	}
	slash := false
	for _, sep := range seps {
		switch strings.ToLower(sep) {
		case "/":
			slash = true
		case "", ",", "and", "&":
		default:
			return r, fmt.Errorf("the separator %q between allele names is not understood", sep)
		}
	}
	for _, k := range keyed {
		r.status[k] = hlaUnknown
	}
	if status == hlaNegative {
		// "HLA-B*57:01 negative": the named alleles are not carried.
		for _, n := range names {
			if _, ok := r.status[n.TwoField()]; ok {
				if n.Suffix != "" {
					r.status[n.TwoField()] = hlaAmbiguous
				} else {
					r.status[n.TwoField()] = hlaNegative
				}
			}
		}
		return r, nil
	}
	if len(names) > 2 {
		return r, fmt.Errorf("%d alleles named without GL String operators: not a genotype of two copies", len(names))
	}
	// Positive: one name is one copy; two names are the two copies. "A/B"
	// is ambiguous by GL String rules (one copy, A or B) and a genotype by
	// the star-allele habit: both readings must agree.
	asCopies := glGenotype{}
	for _, n := range names {
		asCopies = append(asCopies, [][]hlaName{{n}})
	}
	for _, k := range keyed {
		st, _ := genotypeStatus(asCopies, gene, k)
		if slash {
			alt, _ := genotypeStatus(glGenotype{{names}}, gene, k)
			if alt != st {
				st = hlaAmbiguous
			}
		}
		r.status[k] = st
	}
	return r, nil
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// hlaResult is an HLA genotype as read: the keyed alleles' statuses that
// are known, the ones the typing leaves ambiguous, and how names were
// reduced.
type hlaResult struct {
	status     map[string]string // positive / negative only
	ambiguous  []string
	reductions []string
}

// readHLAValue reads an HLA genotype from its candidate strings. All
// readable candidates must agree; a candidate that cannot be read is
// ignored when another one can (the first reason is returned when none
// can).
func readHLAValue(gene string, cands []string, keyed []string) (hlaResult, error) {
	var reads []hlaReading
	var firstErr error
	for _, c := range cands {
		r, err := readHLA(gene, c, keyed)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		reads = append(reads, r)
	}
	if len(reads) == 0 {
		if firstErr == nil {
			firstErr = fmt.Errorf("no value")
		}
		return hlaResult{}, firstErr
	}
	res := hlaResult{status: map[string]string{}}
	for _, k := range keyed {
		st := reads[0].status[k]
		for _, r := range reads[1:] {
			if r.status[k] != st {
				return hlaResult{}, fmt.Errorf("the value's codings and text disagree about %s (%q, %q)", k, reads[0].source, r.source)
			}
		}
		switch st {
		case hlaPositive, hlaNegative:
			res.status[k] = st
		case hlaAmbiguous:
			res.ambiguous = append(res.ambiguous, k)
		}
	}
	res.reductions = reads[0].reductions
	return res, nil
}

// pharmVarSub matches a PharmVar sub-allele number ("*7.001").
var pharmVarSub = regexp.MustCompile(`^(\*[0-9]+)\.([0-9]{3})$`)

// legacyLetter matches a legacy sub-allele letter ("*35B", "*4A").
var legacyLetter = regexp.MustCompile(`^(\*[0-9]+)([A-Z])$`)

// normaliseStar reduces one star allele of gene to the name the knowledge
// holds: the name itself; a PharmVar sub-allele to its core allele
// (sub-alleles share the core allele's function-defining variants); a
// legacy letter suffix to the core allele only when the knowledge holds
// no allele of that exact name (TPMT *3A and *3B stay distinct). note
// says how it was read.
func (m *Mapper) normaliseStar(gene, a string) (name, note string) {
	a = strings.TrimSpace(a)
	if m.knownAllele(gene, a) {
		return a, ""
	}
	if sm := pharmVarSub.FindStringSubmatch(a); sm != nil {
		core := sm[1]
		if m.knownAllele(gene, core) {
			return core, fmt.Sprintf("PharmVar sub-allele %s%s read as its core allele %s%s", gene, a, gene, core)
		}
		if sm2 := legacyLetter.FindStringSubmatch(core); sm2 != nil {
			return a, ""
		}
	}
	if sm := legacyLetter.FindStringSubmatch(a); sm != nil {
		core := sm[1]
		if m.knownAllele(gene, core) {
			return core, fmt.Sprintf("legacy sub-allele %s%s read as its core allele %s%s", gene, a, gene, core)
		}
	}
	return a, ""
}

// knownAllele reports whether the knowledge reads a as one allele of gene
// (as a hemizygous call or as a homozygous diplotype).
func (m *Mapper) knownAllele(gene, a string) bool {
	if _, err := m.calls.ParseDiplotype(gene, a); err == nil {
		return true
	}
	_, err := m.calls.ParseDiplotype(gene, a+"/"+a)
	return err == nil
}

// rsGenotype matches an rsID-style genotype ("rs9923231 C/T",
// "rs9923231:C/T", "rs9923231 C|T").
var rsGenotype = regexp.MustCompile(`(?i)^(rs[0-9]+)\s*[:=]?\s*([ACGT]+)\s*[/|]\s*([ACGT]+)$`)

// rsCall is an rsID-style genotype read as a variant call.
type rsCall struct {
	rs      string
	present bool
	zyg     engine.Zygosity
}

// diplotypeValue reads a star-allele or rsID-style genotype of a non-HLA
// gene. It returns a diplotype of the knowledge's allele names, or an
// rsCall, with notes on how it was read; err says why nothing could be.
func (m *Mapper) diplotypeValue(gene string, cands []string) (dip string, rc *rsCall, notes []string, err error) {
	var reasons []string
	for _, v := range cands {
		d := stripGene(v, gene)
		if d == "" {
			continue
		}
		if sm := rsGenotype.FindStringSubmatch(d); sm != nil {
			dip, rc, note, e := m.rsValue(gene, strings.ToLower(sm[1]), strings.ToUpper(sm[2]), strings.ToUpper(sm[3]))
			if e != nil {
				reasons = append(reasons, e.Error())
				continue
			}
			if note != "" {
				notes = append(notes, note)
			}
			return dip, rc, notes, nil
		}
		if _, e := m.calls.ParseDiplotype(gene, d); e == nil {
			return d, nil, nil, nil
		}
		parts := strings.Split(d, "/")
		if len(parts) == 2 {
			a, na := m.normaliseStar(gene, parts[0])
			b, nb := m.normaliseStar(gene, parts[1])
			joined := a + "/" + b
			if _, e := m.calls.ParseDiplotype(gene, joined); e == nil {
				for _, n := range []string{na, nb} {
					if n != "" {
						notes = append(notes, n)
					}
				}
				return joined, nil, notes, nil
			}
		}
		if _, e := m.calls.ParseDiplotype(gene, d); e != nil {
			reasons = append(reasons, e.Error())
		}
	}
	if len(reasons) == 0 {
		reasons = []string{"no diplotype in the value"}
	}
	return "", nil, nil, fmt.Errorf("%s", strings.Join(reasons, "; "))
}

// rsValue reads "rsN X/Y" of gene: a diplotype where the gene's CPIC
// alleles are named by that rsID ("rs9923231 reference (C)", VKORC1),
// else a variant call from the allele definitions' reference and
// alternate bases. A base that is neither is refused.
func (m *Mapper) rsValue(gene, rs, a, b string) (string, *rsCall, string, error) {
	var ref string
	alts := map[string]bool{}
	for _, row := range m.kb.RsIDs {
		if row.RsID != rs {
			continue
		}
		if gene != "" && row.Gene != gene {
			return "", nil, "", fmt.Errorf("%s is a %s position in the allele definitions, not %s", rs, row.Gene, gene)
		}
		ref = row.Ref
		alts[row.Alt] = true
	}
	if ref == "" {
		return "", nil, "", fmt.Errorf("%s is not a position of the %s allele definitions", rs, gene)
	}
	if g, ok := m.kb.Gene(gene); ok {
		name := func(base string) string {
			for _, al := range g.Alleles {
				if strings.HasPrefix(al.Name, rs+" ") && strings.HasSuffix(al.Name, "("+base+")") {
					return al.Name
				}
			}
			return ""
		}
		if na, nb := name(a), name(b); na != "" && nb != "" {
			d := na + "/" + nb
			if _, err := m.calls.ParseDiplotype(gene, d); err == nil {
				return d, nil, fmt.Sprintf("%s %s/%s read as %s", rs, a, b, d), nil
			}
		}
	}
	copies := 0
	var altSeen []string
	for _, base := range []string{a, b} {
		switch {
		case base == ref:
		case alts[base]:
			copies++
			altSeen = append(altSeen, base)
		default:
			return "", nil, "", fmt.Errorf("%s base %s is neither the reference (%s) nor an alternate of the allele definitions", rs, base, ref)
		}
	}
	if copies == 2 && altSeen[0] != altSeen[1] {
		return "", nil, "", fmt.Errorf("%s %s/%s carries two different alternate bases; not representable as one variant", rs, a, b)
	}
	rc := &rsCall{rs: rs, present: copies > 0}
	switch copies {
	case 1:
		rc.zyg = engine.Het
	case 2:
		rc.zyg = engine.Hom
	}
	return "", rc, fmt.Sprintf("%s %s/%s read as %s", rs, a, b, map[int]string{0: "reference (not a carrier)", 1: "heterozygous", 2: "homozygous"}[copies]), nil
}
