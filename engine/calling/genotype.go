package calling

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
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
	// in genes_tested, or from a diplotype reported with definition
	// positions not called: the positions not reported are unknown.
	Partial bool
	// PositionsNotCalled are the definition positions a supplied diplotype
	// was reported without (engine.DiplotypeCaveat).
	PositionsNotCalled []string
	// UntestedAlleles are the alleles the call could not assess
	// (GeneCall.UntestedAlleles).
	UntestedAlleles []string
	Assumptions     []string
	// SexAssumption says how an X-linked gene was read when the patient's
	// sex was not given (sex.go); it is also one of Assumptions, and the
	// gene's alerts carry it in their summary.
	SexAssumption string
	// Review names every input element of the gene that was not fully
	// interpreted (an undocumented base, a no-call at a key position, an
	// id no definition knows, a diplotype without a CPIC phenotype). When
	// it is set Uncallable is set too: the gene never reads as normal and
	// the answer asks for review.
	Review []string
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
	// Evidence is the request's evidence ledger (ledger.go).
	Evidence []engine.EvidenceItem
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

// Validate checks every input field of req and returns a
// *ValidationError listing each invalid one, or nil.
func (k *Caller) Validate(req engine.Request) error {
	var fe []engine.FieldError
	bad := func(field, reason string, args ...any) {
		fe = append(fe, engine.FieldError{Field: field, Reason: fmt.Sprintf(reason, args...)})
	}
	if strings.TrimSpace(req.Drug) == "" {
		bad("drug", "is required")
	}
	if len(req.Drug) > engine.MaxDrugNameBytes {
		bad("drug", "must be at most %d bytes", engine.MaxDrugNameBytes)
	}
	for _, c := range [...]struct{ field, v string }{{"state", req.State}, {"ethnicity", req.Ethnicity}, {"indication", req.Indication}} {
		if len(c.v) > engine.MaxContextBytes {
			bad(c.field, "must be at most %d bytes", engine.MaxContextBytes)
		}
	}
	seen := map[string]bool{}
	specs := make([]*variantSpec, len(req.Variants))
	for i, v := range req.Variants {
		spec, err := parseVariantItem(v)
		if err != nil {
			bad(fmt.Sprintf("variants[%d]", i), "%v", err)
			continue
		}
		specs[i] = &spec
		seen[strings.ToLower(spec.item)] = true
		if spec.ambiguousRepeat {
			bad(fmt.Sprintf("variants[%d]", i), "%s", k.twoReadings(spec))
			continue
		}
		if spec.rsid != "" {
			seen[spec.rsid] = true
			continue
		}
		if why := k.accessionBuild(spec.chrom); why != "" {
			bad(fmt.Sprintf("variants[%d]", i), "%s: %s", spec.item, why)
			continue
		}
		if chrom, ok := k.idx.refSeqChrom[spec.chrom]; ok {
			if ref, gene, ok := k.definitionRef(chrom, spec.pos); ok && refDisagrees(spec.ref, ref) {
				bad(fmt.Sprintf("variants[%d]", i), "%s: the reference base %s does not match the GRCh38 reference %s at %s:%d (a position of the %s allele definitions): the item may be on GRCh37 or another build; only GRCh38 coordinates are read", spec.item, spec.ref, ref, chrom, spec.pos, gene)
			}
		}
	}
	for key, z := range req.Zygosity {
		if !seen[strings.ToLower(strings.TrimSpace(key))] {
			bad("zygosity."+key, "names a variant that is not in variants")
		}
		if z != engine.Het && z != engine.Hom && z != engine.Hemi && z != engine.Ref {
			bad("zygosity."+key, "must be het, hom, hemi or ref, got %q", string(z))
		}
	}
	const maxCalls = 5000
	if len(req.Calls) > maxCalls {
		bad("calls", "at most %d calls", maxCalls)
	}
	for i, c := range req.Calls {
		if i >= maxCalls {
			break
		}
		problems := validateCall(c)
		for _, problem := range problems {
			field, reason, _ := strings.Cut(problem, ": ")
			bad(fmt.Sprintf("calls[%d].%s", i, field), "%s", reason)
		}
		if len(problems) == 0 {
			if why := k.wrongBuildCall(c); why != "" {
				bad(fmt.Sprintf("calls[%d].ref", i), "%s", why)
			}
		}
	}
	for gene, d := range req.Diplotypes {
		g, ok := k.Gene(gene)
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
	for gene, c := range req.DiplotypeCaveats {
		if _, ok := req.Diplotypes[gene]; !ok {
			bad("diplotype_caveats."+gene, "no diplotype of %s is given: a caveat qualifies a diplotype of diplotypes", gene)
		}
		for name, list := range map[string][]string{"review": c.Review, "positions_not_called": c.PositionsNotCalled, "untested_alleles": c.UntestedAlleles} {
			if len(list) > engine.MaxCaveatItems {
				bad("diplotype_caveats."+gene+"."+name, "at most %d items", engine.MaxCaveatItems)
			}
			for i, item := range list {
				if strings.TrimSpace(item) == "" || len(item) > engine.MaxContextBytes {
					bad(fmt.Sprintf("diplotype_caveats.%s.%s[%d]", gene, name, i), "must be 1 to %d bytes", engine.MaxContextBytes)
					break
				}
			}
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
		if _, ok := k.Gene(strings.TrimSpace(gene)); !ok {
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
	_, outsideProblems := k.readOutside(req)
	fe = append(fe, outsideProblems...)
	k.validateSex(req, specs, bad)
	if len(fe) > 0 {
		sort.Slice(fe, func(i, j int) bool { return fe[i].Field < fe[j].Field })
		return &engine.ValidationError{Fields: fe}
	}
	return nil
}

func (k *Caller) geneSymbols() []string {
	out := make([]string, 0, len(k.Genes))
	for _, g := range k.Genes {
		out = append(out, g.Symbol)
	}
	sort.Strings(out)
	return out
}

// parsedDiplotype is a diplotype resolved to knowledge allele names, with
// notes on every name that was rewritten. review is set instead of
// alleles when a written form was understood but CPIC gives it no value
// (notation.go): the gene then goes to review naming it.
type parsedDiplotype struct {
	alleles []string
	notes   []string
	review  []string
}

// parseDiplotype splits "A/B" into known allele names. Some G6PD allele
// names contain "/", so every split point is tried. One allele alone is a
// genotype only for a hemizygous gene (G6PD, MT-RNR1). A diplotype
// understood but without a CPIC value returns no alleles and no error.
func (k *Caller) parseDiplotype(g *engine.Gene, s string) ([]string, error) {
	p, err := k.parseDiplotypeNotes(g, s)
	return p.alleles, err
}

func (k *Caller) parseDiplotypeNotes(g *engine.Gene, s string) (parsedDiplotype, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return parsedDiplotype{}, fmt.Errorf("is empty")
	}
	if r, ok, _ := k.readAllele(g.Symbol, s); ok {
		if !hemizygousGene(g) {
			a := r.name
			if a == "" {
				a = s
			}
			return parsedDiplotype{}, fmt.Errorf("%q is one allele; %s is diploid, so give both alleles (for example %s/%s)", s, g.Symbol, g.DefaultAllele, a)
		}
		if r.review != "" {
			return parsedDiplotype{review: []string{r.review}}, nil
		}
		p := parsedDiplotype{alleles: []string{r.name}}
		if r.note != "" {
			p.notes = append(p.notes, r.note)
		}
		return p, nil
	}
	var whys []string
	for i := 0; i < len(s); i++ {
		if s[i] != '/' {
			continue
		}
		a, okA, whyA := k.readAllele(g.Symbol, strings.TrimSpace(s[:i]))
		b, okB, whyB := k.readAllele(g.Symbol, strings.TrimSpace(s[i+1:]))
		if okA && okB {
			var p parsedDiplotype
			for _, r := range []alleleReading{a, b} {
				if r.review != "" {
					p.review = append(p.review, r.review)
				}
				if r.note != "" {
					p.notes = append(p.notes, r.note)
				}
			}
			if len(p.review) == 0 {
				p.alleles = []string{a.name, b.name}
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
		if _, ok, _ := k.readAllele(g.Symbol, strings.TrimSpace(p)); !ok {
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
func (k *Caller) alleleName(gene, s string) (string, bool) {
	if _, ok := k.Allele(gene, s); ok {
		return s, true
	}
	a, ok := k.idx.alleleAliases[gene][s]
	return a, ok
}

// ParseDiplotype splits a diplotype of gene into known allele names. A
// diplotype understood but without a CPIC value (an arrangement or copy
// number CPIC does not list) is an error naming it.
func (k *Caller) ParseDiplotype(gene, s string) ([]string, error) {
	g, ok := k.Gene(gene)
	if !ok {
		return nil, fmt.Errorf("unknown gene %q", gene)
	}
	p, err := k.parseDiplotypeNotes(g, s)
	if err == nil && len(p.review) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(p.review, "; "))
	}
	return p.alleles, err
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// InterpretGenotype turns the genotype part of a request into per-gene
// diplotypes and phenotypes. req must have passed Validate.
func (k *Caller) InterpretGenotype(req engine.Request) *Genotype {
	gt := &Genotype{Genes: map[string]*GeneGenotype{}, HLA: map[string]bool{}, Covered: map[string]bool{}}
	male := sexOf(req) == "male"
	sexKnown := sexOf(req) != ""
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
	// Outside calls (outside.go): a passing call of a gene is read as its
	// diplotype; the request's own ledger is written for what it gave.
	given := req
	outsideItems, _ := k.readOutside(req) // validated
	om := k.mergeOutside(req, outsideItems)
	req.Diplotypes = om.diplotypes

	// Every variants item, position call and tested gene goes through the
	// allele matcher (observe.go, match.go).
	ro := k.observationsFor(req, male)
	k.unplacedInTested(ro, req, tested)
	gt.Unrecognised = append(gt.Unrecognised, ro.unrecognised...)
	gt.Warnings = append(gt.Warnings, ro.warnings...)
	genes := map[string]bool{}
	for g := range ro.items {
		genes[g] = true
	}
	for g := range ro.review {
		genes[g] = true
	}
	for g := range tested {
		genes[g] = true
	}
	for g := range req.Diplotypes {
		genes[g] = true
	}
	calls, assume := k.callGenes(ro, req, genes, tested)
	if !sexKnown {
		k.sexReadings(req, ro, calls, assume)
	}
	for symbol := range genes {
		g, ok := k.Gene(symbol)
		_, hasDef := k.idx.defs[symbol]
		if !ok || (len(g.Rules) == 0 && !hasDef) {
			if ok && (len(ro.items[symbol]) > 0 || tested[symbol]) && !strings.HasPrefix(symbol, "HLA-") {
				gt.Warnings = append(gt.Warnings, fmt.Sprintf("%s has no CPIC phenotype rules in the knowledge; its results do not change the advice", symbol))
			}
			continue
		}
		hemi := symbol == "G6PD" && male
		var gg *GeneGenotype
		if d, ok := req.Diplotypes[symbol]; ok {
			var p parsedDiplotype
			gg, p = k.fromDiplotype(g, d, hemi)
			k.checkDiplotype(gg, d, p, ro)
			k.applyCaveat(gg, d, req.DiplotypeCaveats[symbol])
			if !sexKnown && g.Chromosome == "chrX" {
				noteSexUnknown(gg)
			}
		} else if hasDef {
			gg = k.fromCall(g, calls[symbol], ro, tested[symbol] && assume[symbol], sexKnown)
		} else if tested[symbol] {
			gg = &GeneGenotype{Gene: symbol, Uncallable: fmt.Sprintf("the knowledge has no allele definition for %s, so it cannot be called from variants or genes_tested; give the %s result as a diplotype", symbol, symbol)}
		}
		if gg == nil {
			continue
		}
		gt.Genes[symbol] = gg
		gt.Covered[symbol] = true
	}
	sort.Strings(gt.Unrecognised)
	outsideLedger := om.apply(gt, outsideItems, ro)
	gt.Evidence = append(ledgerOf(ro, given), outsideLedger...)
	return gt
}

// callGenes calls, with the allele matcher, every gene of genes that has
// an allele definition and was not given as a diplotype. assume says, per
// gene, whether its unreported positions were read as reference (a tested
// gene). A tested gene whose reported variants fit no allele pair when
// every unreported position is read as reference (a panel that typed
// rs4244285 but not the other *2 positions) is called again with the
// unreported positions unknown; the call then rests on the variants given
// and says so.
func (k *Caller) callGenes(ro *requestObs, req engine.Request, genes, tested map[string]bool) (calls map[string]*GeneCall, assume map[string]bool) {
	var toCall []string
	assume = map[string]bool{}
	for g := range genes {
		if _, ok := k.idx.defs[g]; !ok {
			continue
		}
		if _, given := req.Diplotypes[g]; given {
			continue
		}
		toCall = append(toCall, g)
		assume[g] = tested[g]
	}
	sort.Strings(toCall)
	if len(toCall) == 0 {
		return nil, assume
	}
	sex := ""
	if req.Patient != nil {
		sex = strings.ToLower(req.Patient.Sex)
	}
	calls = k.callRequest(ro, CallOptions{Genes: toCall, AbsentAsDefault: assume, Sex: sex})
	var retry []string
	for _, g := range toCall {
		if c := calls[g]; c != nil && assume[g] && len(ro.items[g]) > 0 && c.Status != CallCalled && len(ro.review[g]) == 0 {
			retry = append(retry, g)
		}
	}
	if len(retry) == 0 {
		return calls, assume
	}
	// The retried genes were tested: their unreported positions are
	// unknown here only because the default allele fit no pair, so the AMP
	// tier-1 rule does not read them as tier-1 positions left untested
	// (CallOptions.RestOnGiven); a reference-like reading is still a review.
	rest := map[string]bool{}
	for _, g := range retry {
		rest[g] = true
	}
	again := k.callRequest(ro, CallOptions{Genes: retry, Sex: sex, RestOnGiven: rest})
	for _, g := range retry {
		if c := again[g]; c != nil && c.Status == CallCalled && len(c.Uninterpreted) == 0 {
			c.Notes = append(c.Notes, fmt.Sprintf("with every unreported %s position read as reference no defined allele pair fits the variants given; the unreported positions were read as not tested instead, so the call rests on the variants given", g))
			c.NeedsReview = false
			calls[g] = c
			assume[g] = false
		}
	}
	return calls, assume
}

// checkDiplotype compares a supplied diplotype with the other evidence the
// request gives for its gene: the variants, calls and HGVS items placed on
// its positions (conflict.go) and the items that could not be placed in it
// (a diplotype says the gene was tested). Any disagreement or unplaced
// item sends the gene to review naming both sources; agreeing items are
// used and said so.
//
// p is given as parsed (parseDiplotypeNotes, by fromDiplotype).
func (k *Caller) checkDiplotype(gg *GeneGenotype, given string, p parsedDiplotype, ro *requestObs) {
	symbol := gg.Gene
	gg.Variants = ro.items[symbol]
	review := append([]string(nil), ro.review[symbol]...)
	// The alleles as read, whether or not they have a phenotype (IFNL3
	// and CYP4F2 alleles have none, yet say which bases are there).
	alleles := p.alleles
	if len(gg.Diplotypes) == 1 {
		alleles = gg.Diplotypes[0].Alleles
	}
	var agreed int
	if len(p.review) > 0 {
		// No CPIC allele to compare bases with: the review names the
		// diplotype, and any other evidence for the gene was not compared.
		review = append(review, p.review...)
		if len(ro.items[symbol]) > 0 {
			review = append(review, fmt.Sprintf("the %s evidence also given (%s) was not compared with it", symbol, strings.Join(ro.items[symbol], ", ")))
		}
	} else {
		var conflicts []string
		conflicts, agreed = k.diplotypeConflicts(symbol, given, alleles, ro)
		review = append(review, conflicts...)
	}
	gg.Assumptions = append(gg.Assumptions, ro.notes[symbol]...)
	if len(review) > 0 {
		gg.Review = review
		gg.Diplotypes = nil
		gg.Uncallable = "could not interpret — review: " + strings.Join(review, "; ")
		return
	}
	if agreed > 0 {
		gg.Assumptions = append(gg.Assumptions, fmt.Sprintf(
			"%s diplotype %s was supplied; the %s evidence also given (%s) agrees with it at the positions it covers", symbol, given, symbol, strings.Join(ro.items[symbol], ", ")))
	}
}

// unplacedInTested sends to review every tested gene (listed in
// genes_tested, or given as a diplotype) on whose chromosome the request
// reports a non-reference item that no definition position and no gene's
// span takes, and every tested gene when the request names an rsID no
// definition or panel row knows (its gene is unknown): the item may belong
// to the gene (a GRCh37 coordinate reads as a position outside it), so
// reading the gene's unreported positions as reference would reassure on
// evidence that was not used.
func (k *Caller) unplacedInTested(ro *requestObs, req engine.Request, tested map[string]bool) {
	if len(ro.unplacedOn) == 0 && len(ro.unplacedAnywhere) == 0 {
		return // no item to send anywhere
	}
	claims := map[string]bool{}
	for g := range tested {
		claims[g] = true
	}
	for g := range req.Diplotypes {
		claims[g] = true
	}
	for g := range claims {
		di := k.idx.defs[g]
		if di == nil {
			continue
		}
		for _, item := range ro.unplacedOn[di.def.Chromosome] {
			ro.reviewedFor(item, g)
			ro.add(g, &ro.review, fmt.Sprintf("%s is on %s, where %s lies, but at no position of any allele definition and outside every gene's defined span: it cannot be placed (a coordinate on another build?), and %s is reported as tested", item, di.def.Chromosome, g, g))
		}
		for _, item := range ro.unplacedAnywhere {
			ro.reviewedFor(item, g)
			ro.add(g, &ro.review, fmt.Sprintf("%s is in no allele definition and on no panel row, so its gene is unknown: it cannot be placed, and %s, reported as tested, may carry it", item, g))
		}
	}
}

// applyCaveat reads what the result says beside a supplied diplotype
// (engine.DiplotypeCaveat), as fromCall reads the same facts of a call:
// review reasons send the gene to review, keeping the diplotype only when
// it is actionable (KeptBesideReview: none of its readings could read as
// normal), and positions not called make the reading partial, its
// untested alleles named.
func (k *Caller) applyCaveat(gg *GeneGenotype, given string, c engine.DiplotypeCaveat) {
	gg.UntestedAlleles = appendNew(gg.UntestedAlleles, c.UntestedAlleles...)
	if len(c.Review) > 0 {
		gg.Review = appendNew(gg.Review, c.Review...)
		_, hasDef := k.idx.defs[gg.Gene] // without a definition, normal cannot be ruled out
		if gg.Uncallable == "" && len(gg.Diplotypes) > 0 && hasDef && !k.anyReferenceLike(gg.Gene, calledOf(gg.Diplotypes)) {
			gg.Assumptions = append(gg.Assumptions, fmt.Sprintf(
				"%s diplotype %s was reported as needing review; the actionable reading is kept beside the review", gg.Gene, given))
		} else {
			gg.Diplotypes = nil
			gg.Uncallable = "could not interpret — review: " + strings.Join(gg.Review, "; ")
		}
	}
	if len(c.PositionsNotCalled) > 0 && len(gg.Diplotypes) > 0 {
		gg.Partial = true
		gg.PositionsNotCalled = appendNew(gg.PositionsNotCalled, c.PositionsNotCalled...)
		gg.Assumptions = append(gg.Assumptions, fmt.Sprintf(
			"%s diplotype %s was reported with %d definition position(s) not called: they are unknown (not assumed reference), and a variant there would change the call", gg.Gene, given, len(c.PositionsNotCalled)))
	}
}

// calledOf gives ds as the matcher's diplotypes.
func calledOf(ds []Diplotype) []CalledDiplotype {
	out := make([]CalledDiplotype, len(ds))
	for i, d := range ds {
		out[i] = CalledDiplotype{Alleles: d.Alleles, Call: d.Call}
	}
	return out
}

// appendNew appends the items of add not already in to.
func appendNew(to []string, add ...string) []string {
	for _, a := range add {
		if !slices.Contains(to, a) {
			to = append(to, a)
		}
	}
	return to
}

// fromDiplotype reads a supplied diplotype d of g; it returns the
// diplotype as parsed too.
func (k *Caller) fromDiplotype(g *engine.Gene, d string, hemi bool) (*GeneGenotype, parsedDiplotype) {
	gg := &GeneGenotype{Gene: g.Symbol, FromDiplotype: true}
	p, _ := k.parseDiplotypeNotes(g, d) // validated
	alleles := p.alleles
	gg.Assumptions = append(gg.Assumptions, p.notes...)
	if len(p.review) > 0 {
		gg.Review = p.review
		gg.Uncallable = "could not interpret — review: " + strings.Join(p.review, "; ")
		return gg, p
	}
	if hemi && len(alleles) == 2 && alleles[0] == alleles[1] {
		alleles = alleles[:1]
		gg.Assumptions = append(gg.Assumptions, fmt.Sprintf("%s is X-linked and the patient is male: read %s as hemizygous %s", g.Symbol, d, alleles[0]))
	}
	call, err := k.Phenotype(g.Symbol, alleles...)
	if err != nil {
		gg.Uncallable = err.Error()
		return gg, p
	}
	gg.Diplotypes = []Diplotype{{Alleles: alleles, Call: call}}
	return gg, p
}

// compositeAliases returns, for allele names of the form "A (B)", the
// parts A and B when each names no other allele and is not itself a name.
func compositeAliases(names map[string]*engine.Allele) map[string]string {
	out := map[string]string{}
	taken := map[string]int{}
	for name := range names {
		open := strings.LastIndex(name, " (")
		if open <= 0 || !strings.HasSuffix(name, ")") {
			continue
		}
		for _, part := range []string{name[:open], name[open+2 : len(name)-1]} {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			if _, isName := names[part]; isName {
				continue
			}
			taken[part]++
			out[part] = name
		}
	}
	for part, n := range taken {
		if n > 1 {
			delete(out, part)
		}
	}
	return out
}
