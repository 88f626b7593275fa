package engine

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Diplotype is one consistent reading of a gene: two alleles, or one for
// a hemizygous gene.
type Diplotype struct {
	Alleles []string
	Call    PhenotypeCall
}

// String writes the diplotype as CPIC does ("*2/*17", "Reference/c.1905+1G>A").
func (d Diplotype) String() string { return strings.Join(d.Alleles, "/") }

// GeneGenotype is what the engine knows of one gene of the patient.
type GeneGenotype struct {
	Gene string
	// Diplotypes holds every diplotype consistent with the input; more
	// than one means the input is ambiguous (phase, overlapping alleles)
	// and the most severe recommendation applies.
	Diplotypes []Diplotype
	// Variants are the input rsIDs that were used for this gene.
	Variants []string
	// FromDiplotype is true when the caller supplied the diplotype.
	FromDiplotype bool
	// Uncallable explains why no phenotype can be given (CYP2D6 normal or
	// ultrarapid status from rsIDs alone); Diplotypes is then empty.
	Uncallable string
	// Partial is true when the call came from rsIDs of a gene that is not
	// in genes_tested: the positions not reported are unknown.
	Partial     bool
	Assumptions []string
}

// Genotype is the engine's interpretation of a request's genotype input.
type Genotype struct {
	Genes map[string]*GeneGenotype
	// HLA maps "HLA-B*15:02" to true (positive) or false (negative).
	HLA map[string]bool
	// Unrecognised rsIDs no definition or panel row knows.
	Unrecognised []string
	Warnings     []string
	// Covered lists every gene for which the input says something:
	// genotyped, tested, or HLA status given.
	Covered map[string]bool
}

var (
	hlaPattern = regexp.MustCompile(`^(HLA-[A-Z0-9]+)(\*[0-9]+:[0-9]+)$`)
)

// NormaliseRsID lower-cases and trims an rsID; ok is false when it is not
// of the form rs<digits>.
func NormaliseRsID(s string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) < 3 || s[0] != 'r' || s[1] != 's' {
		return s, false
	}
	for i := 2; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return s, false
		}
	}
	return s, true
}

// Input size limits: no drug name is near 200 bytes, and free-text
// context beyond 1,000 bytes is not clinical context.
const (
	MaxDrugNameBytes = 200
	MaxContextBytes  = 1000
)

// Validate checks every input field of req and returns a
// *ValidationError listing each invalid one, or nil.
func (k *Knowledge) Validate(req Request) error {
	var fe []FieldError
	bad := func(field, reason string, args ...any) {
		fe = append(fe, FieldError{Field: field, Reason: fmt.Sprintf(reason, args...)})
	}
	if strings.TrimSpace(req.Drug) == "" {
		bad("drug", "is required")
	}
	if len(req.Drug) > MaxDrugNameBytes {
		bad("drug", "must be at most %d bytes", MaxDrugNameBytes)
	}
	for field, v := range map[string]string{"state": req.State, "ethnicity": req.Ethnicity, "indication": req.Indication} {
		if len(v) > MaxContextBytes {
			bad(field, "must be at most %d bytes", MaxContextBytes)
		}
	}
	seen := map[string]bool{}
	for i, v := range req.Variants {
		n, ok := NormaliseRsID(v)
		if !ok {
			bad(fmt.Sprintf("variants[%d]", i), "must be an rsID of the form rs<digits>, got %q", v)
			continue
		}
		seen[n] = true
	}
	for rs, z := range req.Zygosity {
		n, ok := NormaliseRsID(rs)
		switch {
		case !ok:
			bad("zygosity."+rs, "key must be an rsID of the form rs<digits>")
		case !seen[n]:
			bad("zygosity."+rs, "names a variant that is not in variants")
		}
		if z != Het && z != Hom && z != Hemi {
			bad("zygosity."+rs, "must be het, hom or hemi, got %q", string(z))
		}
	}
	for gene, d := range req.Diplotypes {
		g, ok := k.idx.genes[gene]
		if !ok {
			bad("diplotypes."+gene, "unknown gene; known genes: %s", strings.Join(k.geneSymbols(), ", "))
			continue
		}
		alleles, err := k.parseDiplotype(g, d)
		if err != nil {
			bad("diplotypes."+gene, "%v", err)
		} else if len(alleles) == 1 && req.Patient != nil && strings.EqualFold(req.Patient.Sex, "female") && g.Chromosome == "chrX" {
			bad("diplotypes."+gene, "%q is one allele, but the patient is female: give both X-chromosome alleles", d)
		}
	}
	for allele, status := range req.HLA {
		if !hlaPattern.MatchString(strings.TrimSpace(allele)) {
			bad("hla."+allele, "key must be an HLA allele such as HLA-B*15:02")
		}
		if s := strings.ToLower(strings.TrimSpace(status)); s != "positive" && s != "negative" {
			bad("hla."+allele, "must be positive or negative, got %q", status)
		}
	}
	for i, gene := range req.GenesTested {
		if _, ok := k.idx.genes[strings.TrimSpace(gene)]; !ok {
			bad(fmt.Sprintf("genes_tested[%d]", i), "unknown gene %q", gene)
		}
	}
	if p := req.Patient; p != nil {
		if s := strings.ToLower(p.Sex); s != "" && s != "male" && s != "female" {
			bad("patient.sex", "must be male or female, got %q", p.Sex)
		}
		if p.AgeYears != nil && (*p.AgeYears < 0 || *p.AgeYears > 130) {
			bad("patient.age_years", "must be between 0 and 130")
		}
		if p.MonthsOnDrug != nil && (*p.MonthsOnDrug < 0 || *p.MonthsOnDrug > 1200) {
			bad("patient.months_on_drug", "must be between 0 and 1200")
		}
	}
	if len(fe) > 0 {
		sort.Slice(fe, func(i, j int) bool { return fe[i].Field < fe[j].Field })
		return &ValidationError{Fields: fe}
	}
	return nil
}

func (k *Knowledge) geneSymbols() []string {
	out := make([]string, 0, len(k.Genes))
	for _, g := range k.Genes {
		out = append(out, g.Symbol)
	}
	sort.Strings(out)
	return out
}

// parsedDiplotype is a diplotype resolved to knowledge allele names, with
// notes on every name that was rewritten.
type parsedDiplotype struct {
	alleles []string
	notes   []string
}

// parseDiplotype splits "A/B" into known allele names. Some G6PD allele
// names contain "/", so every split point is tried. One allele alone is a
// genotype only for a hemizygous gene (G6PD, MT-RNR1).
func (k *Knowledge) parseDiplotype(g *Gene, s string) ([]string, error) {
	p, err := k.parseDiplotypeNotes(g, s)
	return p.alleles, err
}

func (k *Knowledge) parseDiplotypeNotes(g *Gene, s string) (parsedDiplotype, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return parsedDiplotype{}, fmt.Errorf("is empty")
	}
	if a, note, ok, _ := k.resolveAllele(g.Symbol, s); ok {
		if !hemizygousGene(g) {
			return parsedDiplotype{}, fmt.Errorf("%q is one allele; %s is diploid, so give both alleles (for example %s/%s)", s, g.Symbol, g.DefaultAllele, a)
		}
		p := parsedDiplotype{alleles: []string{a}}
		if note != "" {
			p.notes = append(p.notes, note)
		}
		return p, nil
	}
	var whys []string
	for i := 0; i < len(s); i++ {
		if s[i] != '/' {
			continue
		}
		a, noteA, okA, whyA := k.resolveAllele(g.Symbol, strings.TrimSpace(s[:i]))
		b, noteB, okB, whyB := k.resolveAllele(g.Symbol, strings.TrimSpace(s[i+1:]))
		if okA && okB {
			p := parsedDiplotype{alleles: []string{a, b}}
			for _, n := range []string{noteA, noteB} {
				if n != "" {
					p.notes = append(p.notes, n)
				}
			}
			return p, nil
		}
		for _, w := range []string{whyA, whyB} {
			if w != "" {
				whys = append(whys, w)
			}
		}
	}
	if len(whys) > 0 {
		return parsedDiplotype{}, fmt.Errorf("%s", strings.Join(whys, "; "))
	}
	parts := strings.Split(s, "/")
	var unknown []string
	for _, p := range parts {
		if _, _, ok, _ := k.resolveAllele(g.Symbol, strings.TrimSpace(p)); !ok {
			unknown = append(unknown, strings.TrimSpace(p))
		}
	}
	if len(parts) > 2 {
		return parsedDiplotype{}, fmt.Errorf("%q is not a diplotype of two %s alleles", s, g.Symbol)
	}
	return parsedDiplotype{}, fmt.Errorf("unknown %s allele(s) %s in %q", g.Symbol, quoteAll(unknown), s)
}

// alleleName resolves an allele name as written by a lab to the knowledge's
// name: the name itself, or either part of a composite CPIC name such as
// "c.1905+1G>A (*2A)" ("c.1905+1G>A" or "*2A") where that part names one
// allele only.
func (k *Knowledge) alleleName(gene, s string) (string, bool) {
	if _, ok := k.idx.alleles[gene][s]; ok {
		return s, true
	}
	a, ok := k.idx.alleleAliases[gene][s]
	return a, ok
}

// ParseDiplotype splits a diplotype of gene into known allele names.
func (k *Knowledge) ParseDiplotype(gene, s string) ([]string, error) {
	g, ok := k.idx.genes[gene]
	if !ok {
		return nil, fmt.Errorf("unknown gene %q", gene)
	}
	return k.parseDiplotype(g, s)
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// observed is one input variant placed on a gene.
type observed struct {
	rsid   string
	base   string // alternate base the call assumes
	copies int    // 1 (het or hemi) or 2 (hom)
	stated bool   // zygosity was given
}

// InterpretGenotype turns the genotype part of a request into per-gene
// diplotypes and phenotypes. req must have passed Validate.
func (k *Knowledge) InterpretGenotype(req Request) *Genotype {
	gt := &Genotype{Genes: map[string]*GeneGenotype{}, HLA: map[string]bool{}, Covered: map[string]bool{}}
	male := req.Patient != nil && strings.EqualFold(req.Patient.Sex, "male")
	sexKnown := req.Patient != nil && req.Patient.Sex != ""
	tested := map[string]bool{}
	for _, g := range req.GenesTested {
		tested[strings.TrimSpace(g)] = true
		gt.Covered[strings.TrimSpace(g)] = true
	}
	for allele, status := range req.HLA {
		m := hlaPattern.FindStringSubmatch(strings.TrimSpace(allele))
		gt.HLA[m[1]+m[2]] = strings.EqualFold(strings.TrimSpace(status), "positive")
		gt.Covered[m[1]] = true
	}

	// Place every rsID on its gene.
	zyg := map[string]Zygosity{}
	for rs, z := range req.Zygosity {
		n, _ := NormaliseRsID(rs)
		zyg[n] = z
	}
	byGene := map[string][]observed{}
	seen := map[string]bool{}
	for _, v := range req.Variants {
		rs, _ := NormaliseRsID(v)
		if seen[rs] {
			continue
		}
		seen[rs] = true
		rows := k.idx.rsids[rs]
		if len(rows) == 0 {
			if tv, ok := k.idx.variants[rs]; ok {
				gt.Warnings = append(gt.Warnings, fmt.Sprintf(
					"%s (%s) is on the tracked panel but no CPIC allele definition uses it; it does not change the advice", rs, tv.Gene))
				continue
			}
			gt.Unrecognised = append(gt.Unrecognised, rs)
			continue
		}
		row := rows[0]
		if len(rows) > 1 {
			// Several alternate bases: use the panel's, else the first,
			// and say so.
			if tv, ok := k.idx.variants[rs]; ok {
				for _, r := range rows {
					if r.Alt == tv.Alt {
						row = r
					}
				}
			}
			gt.Warnings = append(gt.Warnings, fmt.Sprintf(
				"%s has more than one alternate base in the CPIC definitions; %s>%s (%s) was assumed", rs, row.Ref, row.Alt, strings.Join(row.Alleles, ", ")))
		}
		o := observed{rsid: rs, base: row.Alt, copies: 1}
		switch z, ok := zyg[rs]; {
		case !ok:
		case z == Hom:
			o.copies, o.stated = 2, true
		default:
			o.stated = true
		}
		byGene[row.Gene] = append(byGene[row.Gene], o)
	}

	genes := map[string]bool{}
	for g := range byGene {
		genes[g] = true
	}
	for g := range req.Diplotypes {
		genes[g] = true
	}
	for g := range tested {
		genes[g] = true
	}
	for symbol := range genes {
		g, ok := k.idx.genes[symbol]
		if !ok || len(g.Rules) == 0 {
			if ok && (len(byGene[symbol]) > 0 || tested[symbol]) && !strings.HasPrefix(symbol, "HLA-") {
				gt.Warnings = append(gt.Warnings, fmt.Sprintf("%s has no CPIC phenotype rules in the knowledge; its results do not change the advice", symbol))
			}
			continue
		}
		hemi := symbol == "G6PD" && male
		var gg *GeneGenotype
		if d, ok := req.Diplotypes[symbol]; ok {
			gg = k.fromDiplotype(g, d, hemi)
			if len(byGene[symbol]) > 0 {
				gg.Assumptions = append(gg.Assumptions, fmt.Sprintf(
					"%s diplotype %s was supplied; the %s rsIDs given were not used to re-call it", symbol, d, symbol))
			}
		} else {
			gg = k.fromVariants(g, byGene[symbol], tested[symbol], hemi, sexKnown)
		}
		gt.Genes[symbol] = gg
		gt.Covered[symbol] = true
	}
	sort.Strings(gt.Unrecognised)
	return gt
}

func (k *Knowledge) fromDiplotype(g *Gene, d string, hemi bool) *GeneGenotype {
	gg := &GeneGenotype{Gene: g.Symbol, FromDiplotype: true}
	p, _ := k.parseDiplotypeNotes(g, d) // validated
	alleles := p.alleles
	gg.Assumptions = append(gg.Assumptions, p.notes...)
	if hemi && len(alleles) == 2 && alleles[0] == alleles[1] {
		alleles = alleles[:1]
		gg.Assumptions = append(gg.Assumptions, fmt.Sprintf("%s is X-linked and the patient is male: read %s as hemizygous %s", g.Symbol, d, alleles[0]))
	}
	call, err := k.Phenotype(g.Symbol, alleles...)
	if err != nil {
		gg.Uncallable = err.Error()
		return gg
	}
	gg.Diplotypes = []Diplotype{{Alleles: alleles, Call: call}}
	return gg
}

// carries reports whether allele a carries an observed variant's base as a
// key (distinguishing) variant: definitely, or possibly where the CPIC cell
// is an IUPAC code meaning "either base".
func carries(a *Allele, rsid, base string) (definite, possible bool) {
	for _, kv := range a.Key {
		if kv.RsID != rsid {
			continue
		}
		if kv.Ambiguous {
			return false, true
		}
		if kv.Base == base {
			return true, true
		}
	}
	return false, false
}

func keyRsIDs(a *Allele) []string {
	var out []string
	for _, kv := range a.Key {
		if strings.HasPrefix(kv.RsID, "rs") && !kv.Ambiguous {
			out = append(out, kv.RsID)
		}
	}
	return out
}

// fromVariants calls a diplotype from rsIDs against the CPIC definitions.
//
// Every pair of candidate alleles (the default allele and each allele whose
// key variants include an observed one) is tested: a pair is consistent
// when, for each observed variant, the number of alleles carrying it equals
// the observed copies. Among consistent pairs those with the fewest key
// variants left unobserved are kept; several kept pairs mean the input is
// ambiguous and all are evaluated. Key variants that were not observed are
// listed as assumptions (a bare rs4244285 still reads as CYP2C19*2).
func (k *Knowledge) fromVariants(g *Gene, obs []observed, tested, hemi, sexKnown bool) *GeneGenotype {
	gg := &GeneGenotype{Gene: g.Symbol}
	alleles := k.idx.alleles[g.Symbol]
	def := alleles[g.DefaultAllele]
	if def == nil {
		// Without a default allele (MT-RNR1 in the data pack) positions that
		// were not reported cannot be read as reference.
		for _, o := range obs {
			gg.Variants = append(gg.Variants, o.rsid)
		}
		gg.Uncallable = fmt.Sprintf("the knowledge has no default allele for %s, so it cannot be called from rsIDs or genes_tested; give the %s result as a diplotype", g.Symbol, g.Symbol)
		return gg
	}

	// Drop variants whose base is the default allele's own (CYP2C19
	// rs3758581 G is *1; the GRCh38 reference there is *38).
	var informative []observed
	for _, o := range obs {
		gg.Variants = append(gg.Variants, o.rsid)
		defaultBase := false
		for _, r := range k.idx.rsids[o.rsid] {
			if r.Alt == o.base {
				for _, a := range r.Alleles {
					if a == g.DefaultAllele {
						defaultBase = true
					}
				}
			}
		}
		if defaultBase {
			gg.Assumptions = append(gg.Assumptions, fmt.Sprintf(
				"%s %s is the base of the default allele %s; it is not a finding", o.rsid, o.base, g.DefaultAllele))
			continue
		}
		if hemi && o.copies == 2 {
			o.copies = 1
		}
		informative = append(informative, o)
		if !o.stated && !hemi {
			gg.Assumptions = append(gg.Assumptions, fmt.Sprintf(
				"zygosity of %s not given: assumed heterozygous (at least one copy)", o.rsid))
		}
	}
	if hemi {
		gg.Assumptions = append(gg.Assumptions, fmt.Sprintf("%s is X-linked and the patient is male: hemizygous", g.Symbol))
	} else if g.Symbol == "G6PD" && !sexKnown && len(informative) > 0 {
		gg.Assumptions = append(gg.Assumptions, "patient sex not given: G6PD read as two X chromosomes; a male carrier is hemizygous and deficient")
	}
	if len(informative) == 0 && !tested {
		// Only default-allele bases: nothing known about the rest.
		return nil
	}

	// Candidate alleles.
	cands := []*Allele{def}
	inCands := map[string]bool{def.Name: true}
	for _, o := range informative {
		for _, r := range k.idx.rsids[o.rsid] {
			if r.Alt != o.base {
				continue
			}
			for _, name := range r.Alleles {
				a, ok := alleles[name]
				if !ok || inCands[name] || a.Structural {
					continue
				}
				if definite, _ := carries(a, o.rsid, o.base); !definite {
					continue
				}
				inCands[name] = true
				cands = append(cands, a)
			}
		}
	}
	sort.Slice(cands[1:], func(i, j int) bool { return cands[1+i].Name < cands[1+j].Name })

	observedSet := map[string]bool{}
	for _, o := range informative {
		observedSet[o.rsid] = true
	}
	missing := func(a *Allele) []string {
		var m []string
		for _, rs := range k.idx.keyRS[a] {
			if !observedSet[rs] {
				m = append(m, rs)
			}
		}
		return m
	}
	// carry[i][j] says whether candidate i carries observed variant j:
	// 0 no, 1 possibly (IUPAC cell), 2 definitely; miss[i] counts its key
	// variants that were not observed. Both are computed once, so the pair
	// loop below is cheap even for CYP2D6's many alleles.
	carry := make([][]uint8, len(cands))
	miss := make([]int, len(cands))
	for i, a := range cands {
		row := make([]uint8, len(informative))
		for j, o := range informative {
			switch definite, possible := carries(a, o.rsid, o.base); {
			case definite:
				row[j] = 2
			case possible:
				row[j] = 1
			}
		}
		carry[i] = row
		miss[i] = len(missing(a))
	}
	consistent := func(idx ...int) bool {
		for j, o := range informative {
			lo, hi := 0, 0
			for _, i := range idx {
				switch carry[i][j] {
				case 2:
					lo++
					hi++
				case 1:
					hi++
				}
			}
			if o.copies < lo || o.copies > hi {
				return false
			}
		}
		return true
	}
	type option struct{ set []*Allele }
	var best []option
	bestMissing := -1
	consider := func(idx ...int) {
		if !consistent(idx...) {
			return
		}
		m := 0
		for _, i := range idx {
			m += miss[i]
		}
		if bestMissing != -1 && m > bestMissing {
			return
		}
		set := make([]*Allele, len(idx))
		for k, i := range idx {
			set[k] = cands[i]
		}
		if bestMissing == -1 || m < bestMissing {
			best, bestMissing = nil, m
		}
		best = append(best, option{set})
	}
	for i := range cands {
		if hemi {
			consider(i)
			continue
		}
		for j := i; j < len(cands); j++ {
			consider(i, j)
		}
	}
	if len(best) == 0 {
		gg.Uncallable = fmt.Sprintf("the %s variants %s do not fit any pair of CPIC-defined alleles", g.Symbol, strings.Join(gg.Variants, ", "))
		return gg
	}
	missingNoted := map[string]bool{}
	for _, op := range best {
		names := make([]string, len(op.set))
		for i, a := range op.set {
			names[i] = a.Name
		}
		call, err := k.Phenotype(g.Symbol, names...)
		if err != nil {
			gg.Assumptions = append(gg.Assumptions, fmt.Sprintf("%s %s: %v", g.Symbol, strings.Join(names, "/"), err))
			continue
		}
		gg.Diplotypes = append(gg.Diplotypes, Diplotype{Alleles: names, Call: call})
		for _, a := range op.set {
			if m := missing(a); len(m) > 0 && !missingNoted[a.Name] {
				missingNoted[a.Name] = true
				gg.Assumptions = append(gg.Assumptions, fmt.Sprintf(
					"%s %s is also defined by %s, which was not reported; called from the variants given", g.Symbol, a.Name, strings.Join(m, ", ")))
			}
		}
	}
	if len(gg.Diplotypes) == 0 {
		gg.Uncallable = fmt.Sprintf("no CPIC phenotype for the %s diplotypes consistent with %s", g.Symbol, strings.Join(gg.Variants, ", "))
		return gg
	}
	if !tested {
		gg.Partial = true
		gg.Assumptions = append(gg.Assumptions, fmt.Sprintf(
			"%s is not in genes_tested: positions not reported are unknown, and an allele not seen is assumed to be %s", g.Symbol, g.DefaultAllele))
	}
	if len(gg.Diplotypes) > 1 {
		ds := make([]string, len(gg.Diplotypes))
		for i, d := range gg.Diplotypes {
			ds[i] = d.String()
		}
		gg.Assumptions = append(gg.Assumptions, fmt.Sprintf(
			"phase is unknown: %s could be %s; the most severe recommendation is applied", g.Symbol, strings.Join(ds, " or ")))
	}
	// CYP2D6 copy number (the *5 deletion, duplications) cannot be seen
	// in rsIDs: normal or ultrarapid status is never called from them.
	if g.Symbol == "CYP2D6" {
		var kept []Diplotype
		var dropped []string
		for _, d := range gg.Diplotypes {
			if p := d.Call.Phenotype; p == "Normal Metabolizer" || p == "Ultrarapid Metabolizer" || p == "Indeterminate" {
				dropped = append(dropped, d.String()+" ("+p+")")
				continue
			}
			kept = append(kept, d)
		}
		if len(kept) == 0 {
			gg.Uncallable = "CYP2D6 copy number (the *5 deletion, gene duplications) is not visible in rsIDs, so normal, ultrarapid or indeterminate results cannot be called from them; a CYP2D6 diplotype with copy number is needed"
			gg.Diplotypes = nil
			return gg
		}
		gg.Diplotypes = kept
		if len(dropped) > 0 {
			gg.Assumptions = append(gg.Assumptions, "readings not called from rsIDs (copy number unknown): "+strings.Join(dropped, ", "))
		}
		gg.Assumptions = append(gg.Assumptions, "CYP2D6 copy number was not assessed from rsIDs: a *5 deletion or a duplication would change the activity score")
	}
	return gg
}
