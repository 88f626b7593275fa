package fhir

import (
	"fmt"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"

	opb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/resources/observation_go_proto"
)

// Uninterpreted is a genomic result that is present but could not be
// interpreted. It must never read as "no result": a check of a drug whose
// gene it may concern says so and asks for review.
type Uninterpreted struct {
	Ref string `json:"ref"`
	// Gene is the gene the result names; Genes the genes of the knowledge
	// it may concern when no gene is named (those on its chromosome).
	Gene  string   `json:"gene,omitempty"`
	Genes []string `json:"genes,omitempty"`
	// AnyGene is set when nothing tells which gene the result concerns.
	AnyGene bool `json:"any_gene,omitempty"`
	// Alleles, for an HLA typing, are the keyed alleles it leaves
	// ambiguous or unsaid (the rest of the typing was used).
	Alleles []string `json:"alleles,omitempty"`
	Value   string   `json:"value,omitempty"`
	Reason  string   `json:"reason"`
}

// Concerns reports whether u may be a result of gene.
func (u Uninterpreted) Concerns(gene string) bool {
	return u.AnyGene || u.Gene == gene || containsString(u.Genes, gene)
}

// UninterpretedFor returns the results present but not interpreted that
// may concern gene.
func (g *Genomics) UninterpretedFor(gene string) []Uninterpreted {
	var out []Uninterpreted
	for _, u := range g.Uninterpreted {
		if u.Concerns(gene) {
			out = append(out, u)
		}
	}
	return out
}

type geneCall struct {
	value        string            // diplotype ("*2/*2"); "" for HLA
	hla          map[string]string // HLA: keyed allele → positive / negative
	hlaAmbiguous []string
	// caveat is what the Genotype says beside its diplotype (components
	// coded in SystemCaveat).
	caveat engine.DiplotypeCaveat
	notes  []string
	res    *GenomicResult
	when   int64
}

// posCall is a position-level call read from a Variant Observation.
type posCall struct {
	call engine.PositionCall
	res  *GenomicResult
	when int64
}

type varCall struct {
	present bool
	zyg     engine.Zygosity
	res     *GenomicResult
	when    int64
}

// failure is a result of a gene that could not be read.
type failure struct {
	res    *GenomicResult
	gene   string
	genes  []string
	any    bool
	reason string
	value  string
}

// combine turns the counted results into the engine's genotype fields.
func (m *Mapper) combine(g *Genomics, reads []obsRead) {
	genotypes := map[string][]geneCall{}
	haplotypes := map[string][]obsRead{}
	variants := map[string][]varCall{}
	calls := map[string][]posCall{}
	var failed []failure
	var implications []obsRead
	for _, rd := range reads {
		res := &g.Results[rd.idx]
		obs := rd.obs
		switch rd.res.Kind {
		case KindGenotype:
			gene, call, rc, value, err := m.genotype(obs)
			res.Gene, res.Value = gene, value
			if err != nil {
				if gene != "" && !m.covered(gene) {
					res.Note = err.Error()
					g.Issues = append(g.Issues, Issue{Ref: res.Ref, ResourceType: "Observation", Severity: IssueInfo, Genomic: true, Message: res.Note})
					continue
				}
				failed = append(failed, failure{res: res, gene: gene, any: gene == "", reason: err.Error(), value: value})
				continue
			}
			res.Note = strings.Join(call.notes, "; ")
			if rc != nil {
				variants[rc.rs] = append(variants[rc.rs], varCall{present: rc.present, zyg: rc.zyg, res: res, when: rd.res.when})
				continue
			}
			call.res, call.when = res, rd.res.when
			genotypes[gene] = append(genotypes[gene], call)
		case KindHaplotype:
			cands := valueCandidates(obs)
			comp := geneOf(obs)
			gene := m.geneSymbol(comp, cands)
			res.Gene, res.Value = firstNonEmpty(gene, comp), strings.Join(cands, " / ")
			switch {
			case gene == "" && comp != "":
				res.Note = fmt.Sprintf("gene %q is not a gene pgxsafety covers; not used", comp)
			case gene == "":
				failed = append(failed, failure{res: res, any: true, value: res.Value,
					reason: "no gene named (component 48018-6, or an HGNC id without its symbol) and none recognised in the value"})
			default:
				haplotypes[gene] = append(haplotypes[gene], rd)
			}
		case KindVariant:
			m.readVariant(g, res, obs, rd.res.when, variants, calls, &failed)
		case KindImplication:
			implications = append(implications, rd)
		}
	}

	// Genotypes: one per gene; disagreeing results → the latest.
	g.Diplotypes, g.HLA = map[string]string{}, map[string]string{}
	typed := map[string]string{} // gene → "genotype" or "haplotype"
	for _, gene := range sortedKeys(genotypes) {
		calls := genotypes[gene]
		pick, note := latest(len(calls), func(i int) (string, int64) {
			return calls[i].value + fmt.Sprint(calls[i].hla, calls[i].hlaAmbiguous), calls[i].when
		})
		if pick < 0 {
			for _, c := range calls {
				c.res.Note = note
			}
			failed = append(failed, failure{res: calls[0].res, gene: gene, reason: note, value: calls[0].res.Value})
			continue
		}
		if note != "" {
			g.Issues = append(g.Issues, Issue{Ref: calls[pick].res.Ref, ResourceType: "Observation", Severity: IssueWarning, Genomic: true,
				Message: fmt.Sprintf("%s: %s", gene, note)})
		}
		c := calls[pick]
		if note == "" {
			// Results that agree: what any of them says beside the
			// diplotype is said (a review is never dropped).
			for _, o := range calls {
				c.caveat = mergeCaveat(c.caveat, o.caveat)
			}
		}
		c.res.Used = true
		typed[gene] = "genotype"
		m.applyCall(g, gene, c)
	}
	// Haplotypes: two per gene make a genotype, where no genotype was used.
	for _, gene := range sortedKeys(haplotypes) {
		hs := haplotypes[gene]
		if typed[gene] != "" {
			for _, h := range hs {
				g.Results[h.idx].Note = "a Genotype result of the gene is used instead"
			}
			continue
		}
		c, err := m.haplotypeCall(gene, hs)
		if err != nil {
			for _, h := range hs {
				g.Results[h.idx].Note = err.Error()
			}
			var vals []string
			for _, h := range hs {
				vals = append(vals, g.Results[h.idx].Value)
			}
			failed = append(failed, failure{res: &g.Results[hs[0].idx], gene: gene,
				reason: gene + " haplotypes: " + err.Error(), value: strings.Join(vals, " + ")})
			continue
		}
		typed[gene] = "haplotype"
		c.res = &g.Results[hs[0].idx]
		for _, h := range hs {
			r := &g.Results[h.idx]
			r.Used = true
			var notes []string
			for _, n := range c.notes {
				if strings.Contains(r.Value, strings.Fields(n)[0]) {
					notes = append(notes, n)
				}
			}
			r.Note = strings.Join(notes, "; ")
		}
		m.applyCall(g, gene, c)
	}
	// Variants.
	g.Zygosity = map[string]engine.Zygosity{}
	for _, rs := range sortedKeys(variants) {
		vs := variants[rs]
		pick, note := latest(len(vs), func(i int) (string, int64) {
			return fmt.Sprint(vs[i].present, vs[i].zyg), vs[i].when
		})
		if pick < 0 {
			for _, v := range vs {
				v.res.Note = note
			}
			failed = append(failed, failure{res: vs[0].res, gene: vs[0].res.Gene, any: vs[0].res.Gene == "", reason: rs + ": " + note, value: vs[0].res.Value})
			continue
		}
		if note != "" {
			g.Issues = append(g.Issues, Issue{Ref: vs[pick].res.Ref, ResourceType: "Observation", Severity: IssueWarning, Genomic: true,
				Message: fmt.Sprintf("%s: %s", rs, note)})
		}
		v := vs[pick]
		v.res.Used = true
		if !v.present {
			v.res.Note = strings.TrimPrefix(v.res.Note+"; reported absent: not a carrier", "; ")
			continue
		}
		g.Variants = append(g.Variants, rs)
		if v.zyg != "" {
			g.Zygosity[rs] = v.zyg
		}
	}
	// Position calls (GRCh38), one per position.
	for _, key := range sortedKeys(calls) {
		cs := calls[key]
		pick, note := latest(len(cs), func(i int) (string, int64) {
			return fmt.Sprint(cs[i].call), cs[i].when
		})
		if pick < 0 {
			failed = append(failed, failure{res: cs[0].res, gene: cs[0].res.Gene, any: cs[0].res.Gene == "", reason: key + ": " + note, value: cs[0].res.Value})
			continue
		}
		if note != "" {
			g.Issues = append(g.Issues, Issue{Ref: cs[pick].res.Ref, ResourceType: "Observation", Severity: IssueWarning, Genomic: true,
				Message: fmt.Sprintf("%s: %s", key, note)})
		}
		cs[pick].res.Used = true
		g.Calls = append(g.Calls, cs[pick].call)
	}
	// Results present but not interpreted: superseded where a genotype of
	// their gene was used (a genotype call states the whole gene), else
	// reported for review.
	for _, f := range failed {
		if by := typed[f.gene]; f.gene != "" && by != "" {
			f.res.Note = f.reason + "; the gene's " + by + " results were used instead"
			g.Issues = append(g.Issues, Issue{Ref: f.res.Ref, ResourceType: "Observation", Severity: IssueWarning, Genomic: true,
				Message: f.res.Note})
			continue
		}
		if f.res.Note == "" {
			f.res.Note = f.reason
		}
		msg := "present but not interpreted — review: " + f.reason
		g.Issues = append(g.Issues, Issue{Ref: f.res.Ref, ResourceType: "Observation", Severity: IssueError, Genomic: true, Message: msg})
		g.Uninterpreted = append(g.Uninterpreted, Uninterpreted{Ref: f.res.Ref, Gene: f.gene, Genes: f.genes, AnyGene: f.any,
			Value: f.value, Reason: f.reason})
	}
	// Therapeutic implications.
	used := map[string]bool{}
	for _, r := range g.Results {
		if r.Used {
			used[r.Ref] = true
		}
	}
	for _, rd := range implications {
		res := &g.Results[rd.idx]
		im := m.implication(rd.obs, res.Ref, used)
		im.Effective = res.Effective
		res.Value = strings.TrimSpace(im.Phenotype + " (" + firstNonEmpty(im.Medication, im.Drug, "medication not named") + ")")
		res.Used = im.Resolved
		if !im.Resolved {
			res.Note = "no genotype it derives from was among the results used"
		}
		g.Implications = append(g.Implications, im)
	}
	if len(g.Diplotypes) == 0 {
		g.Diplotypes = nil
	}
	if len(g.HLA) == 0 {
		g.HLA = nil
	}
	if len(g.Zygosity) == 0 {
		g.Zygosity = nil
	}
}

// applyCall records a gene's call; an HLA typing that leaves a keyed
// allele ambiguous makes that allele present but not interpreted.
func (m *Mapper) applyCall(g *Genomics, gene string, c geneCall) {
	for a, s := range c.hla {
		g.HLA[a] = s
	}
	if c.value != "" {
		g.Diplotypes[gene] = c.value
		if cv := c.caveat; len(cv.Review)+len(cv.PositionsNotCalled)+len(cv.UntestedAlleles) > 0 {
			if g.Caveats == nil {
				g.Caveats = map[string]engine.DiplotypeCaveat{}
			}
			g.Caveats[gene] = cv
			c.res.Note = strings.TrimPrefix(c.res.Note+"; "+caveatNote(cv), "; ")
		}
	}
	for _, a := range c.hlaAmbiguous {
		reason := fmt.Sprintf("the typing %q does not tell whether %s is carried (alternatives disagree)", c.res.Value, a)
		g.Issues = append(g.Issues, Issue{Ref: c.res.Ref, ResourceType: "Observation", Severity: IssueError, Genomic: true,
			Message: "present but not interpreted — review: " + reason})
		g.Uninterpreted = append(g.Uninterpreted, Uninterpreted{Ref: c.res.Ref, Gene: gene, Alleles: []string{a}, Value: c.res.Value, Reason: reason})
	}
	if c.hla == nil {
		return
	}
	// An HLA result that says nothing about a keyed allele (one copy
	// typed, or only other alleles named negative) is still a result of
	// the gene: a check needing that allele asks for review, not a test.
	var unsaid []string
	for _, a := range m.hlaKeyed()[gene] {
		if _, ok := c.hla[a]; !ok && !containsString(c.hlaAmbiguous, a) {
			unsaid = append(unsaid, a)
		}
	}
	if len(unsaid) > 0 {
		reason := fmt.Sprintf("the typing %q does not say whether %s is carried (it types one copy or names other alleles only)",
			c.res.Value, strings.Join(unsaid, " or "))
		g.Issues = append(g.Issues, Issue{Ref: c.res.Ref, ResourceType: "Observation", Severity: IssueWarning, Genomic: true,
			Message: "partly interpreted — " + reason})
		g.Uninterpreted = append(g.Uninterpreted, Uninterpreted{Ref: c.res.Ref, Gene: gene, Alleles: unsaid, Value: c.res.Value, Reason: reason})
	}
}

// covered reports whether gene is a gene of the knowledge (HLA genes
// included).
func (m *Mapper) covered(gene string) bool {
	_, ok := m.kb.Gene(gene)
	return ok
}

// genotype reads a Genotype Observation: a diplotype, an rsID-style call,
// or for an HLA gene the keyed alleles' statuses. value is the value as
// written.
func (m *Mapper) genotype(obs *opb.Observation) (gene string, call geneCall, rc *rsCall, value string, err error) {
	cands := valueCandidates(obs)
	value = strings.Join(cands, " / ")
	comp := geneOf(obs)
	if comps := genesOf(obs); len(comps) > 1 {
		// Several genes named (the IG's cgexample names CYP2C9 and VKORC1
		// on a CYP2C9 genotype): the one the value is written in.
		comp = ""
		for _, c := range comps {
			if gs := m.geneSymbol(c, nil); gs != "" && m.geneSymbol("", cands) == gs {
				comp = c
			}
		}
		if comp == "" {
			return "", call, nil, value, fmt.Errorf("several genes named (%s) and the value does not say which it is", strings.Join(comps, ", "))
		}
	}
	gene = m.geneSymbol(comp, cands)
	if gene == "" {
		if comp != "" {
			return comp, call, nil, value, fmt.Errorf("gene %q is not a gene pgxsafety covers; not used", comp)
		}
		return "", call, nil, value, fmt.Errorf("no gene named (component 48018-6, or an HGNC id without its symbol) and none recognised in the value")
	}
	if len(cands) == 0 {
		return gene, call, nil, value, fmt.Errorf("the genotype has no value")
	}
	cv, err := caveatOf(obs)
	if err != nil {
		return gene, call, nil, value, err
	}
	inReview := func() error {
		return fmt.Errorf("%s result reported as needing review: %s", gene, strings.Join(cv.Review, "; "))
	}
	if strings.HasPrefix(gene, "HLA-") {
		if len(cv.Review) > 0 {
			return gene, call, nil, value, inReview()
		}
		r, err := readHLAValue(gene, cands, m.hlaKeyed()[gene])
		if err != nil {
			return gene, call, nil, value, fmt.Errorf("%s genotype %q could not be read: %v", gene, cands[0], err)
		}
		call.hla, call.hlaAmbiguous, call.notes = r.status, r.ambiguous, r.reductions
		return gene, call, nil, value, nil
	}
	d, rc, notes, err := m.diplotypeValue(gene, cands)
	switch {
	case len(cv.Review) > 0 && (err != nil || rc != nil):
		// Not a diplotype the review could be kept beside: the result
		// is present and not interpreted, for the reasons given.
		return gene, call, nil, value, inReview()
	case err != nil:
		return gene, call, nil, value, fmt.Errorf("%s genotype %q is not a diplotype of the CPIC allele definitions (%v)", gene, cands[0], err)
	}
	call.value, call.notes, call.caveat = d, notes, cv
	return gene, call, rc, value, nil
}

// caveatOf reads a Genotype's caveats: its components coded in
// SystemCaveat, each one item (valueString). Lists beyond the engine's
// bounds are refused: the result is then not interpreted.
func caveatOf(obs *opb.Observation) (engine.DiplotypeCaveat, error) {
	var c engine.DiplotypeCaveat
	for _, comp := range obs.GetComponent() {
		var list *[]string
		switch {
		case hasCode(comp.GetCode(), SystemCaveat, CaveatReview):
			list = &c.Review
		case hasCode(comp.GetCode(), SystemCaveat, CaveatPositionNotCalled):
			list = &c.PositionsNotCalled
		case hasCode(comp.GetCode(), SystemCaveat, CaveatUntestedAllele):
			list = &c.UntestedAlleles
		default:
			continue
		}
		v := strings.TrimSpace(comp.GetValue().GetStringValue().GetValue())
		switch {
		case v == "":
			return c, fmt.Errorf("a caveat component (%s) has no valueString", SystemCaveat)
		case len(v) > engine.MaxContextBytes:
			return c, fmt.Errorf("a caveat component (%s) is over %d bytes", SystemCaveat, engine.MaxContextBytes)
		case len(*list) == engine.MaxCaveatItems:
			return c, fmt.Errorf("more than %d caveat components (%s) of one kind", engine.MaxCaveatItems, SystemCaveat)
		}
		if !containsString(*list, v) {
			*list = append(*list, v)
		}
	}
	return c, nil
}

// mergeCaveat is a with the items of b it lacks.
func mergeCaveat(a, b engine.DiplotypeCaveat) engine.DiplotypeCaveat {
	for _, pair := range []struct{ to, from *[]string }{{&a.Review, &b.Review}, {&a.PositionsNotCalled, &b.PositionsNotCalled}, {&a.UntestedAlleles, &b.UntestedAlleles}} {
		for _, x := range *pair.from {
			if !containsString(*pair.to, x) {
				*pair.to = append(*pair.to, x)
			}
		}
	}
	return a
}

// caveatNote says how a Genotype's caveats were read.
func caveatNote(c engine.DiplotypeCaveat) string {
	var parts []string
	if len(c.Review) > 0 {
		parts = append(parts, "reported as needing review ("+strings.Join(c.Review, "; ")+"): the diplotype is used only if actionable, with a review")
	}
	if n := len(c.PositionsNotCalled); n > 0 {
		parts = append(parts, fmt.Sprintf("reported with %d definition position(s) not called: the result may be incomplete", n))
	}
	if n := len(c.UntestedAlleles); n > 0 {
		parts = append(parts, fmt.Sprintf("%d allele(s) untested", n))
	}
	return strings.Join(parts, "; ")
}

// haplotypeCall joins the haplotypes of one gene into a genotype: two
// haplotypes, or one whose allelic state (53034-5) is homozygous (the
// allele twice) or hemizygous (the allele once).
func (m *Mapper) haplotypeCall(gene string, hs []obsRead) (geneCall, error) {
	var c geneCall
	if len(hs) > 2 {
		return c, fmt.Errorf("%d haplotypes reported; a genotype needs two", len(hs))
	}
	copies := len(hs)
	if len(hs) == 1 {
		cc, _, _ := componentValue(hs[0].obs, LOINCZygosity)
		switch zygosity(cc) {
		case engine.Hom:
			copies = 2
		case engine.Hemi:
		default:
			return c, fmt.Errorf("one haplotype without a homozygous or hemizygous allelic state does not give a genotype")
		}
	}
	if strings.HasPrefix(gene, "HLA-") {
		var gt glGenotype
		for _, h := range hs {
			var names []hlaName
			var firstErr error
			for _, cand := range valueCandidates(h.obs) {
				n, err := parseHLAName(cand)
				if err != nil {
					if firstErr == nil {
						firstErr = err
					}
					continue
				}
				names = append(names, n)
				break
			}
			if len(names) == 0 {
				if firstErr == nil {
					firstErr = fmt.Errorf("a haplotype has no value")
				}
				return c, firstErr
			}
			if names[0].Gene != gene {
				return c, fmt.Errorf("a haplotype names a %s allele", names[0].Gene)
			}
			if x := names[0].reduction(); x != "" {
				c.notes = append(c.notes, x)
			}
			gt = append(gt, [][]hlaName{names})
		}
		if copies == 2 && len(gt) == 1 {
			gt = append(gt, gt[0])
		}
		c.hla = map[string]string{}
		for _, k := range m.hlaKeyed()[gene] {
			st, _ := genotypeStatus(gt, gene, k)
			switch st {
			case hlaPositive, hlaNegative:
				c.hla[k] = st
			case hlaAmbiguous:
				c.hlaAmbiguous = append(c.hlaAmbiguous, k)
			}
		}
		return c, nil
	}
	var alleles []string
	for _, h := range hs {
		var a string
		for _, v := range valueCandidates(h.obs) {
			if s := stripGene(v, gene); s != "" {
				a = s
				break
			}
		}
		if a == "" {
			return c, fmt.Errorf("a haplotype has no value")
		}
		name, note := m.normaliseStar(gene, a)
		if note != "" {
			c.notes = append(c.notes, note)
		}
		alleles = append(alleles, name)
	}
	if copies == 2 && len(alleles) == 1 {
		alleles = append(alleles, alleles[0])
	}
	d := strings.Join(alleles, "/")
	if err := m.calls.Validate(engine.Request{Drug: "x", Diplotypes: map[string]string{gene: d}}); err != nil {
		return c, fmt.Errorf("diplotype %q is not of the CPIC allele definitions (%s)", d, validationReason(err))
	}
	c.value = d
	return c, nil
}
