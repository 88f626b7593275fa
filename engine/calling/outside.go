package calling

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/outside"
)

// This file reads the outside calls of a hand-entered request
// (engine.Request.OutsideCalls): the outputs of dedicated callers, read by
// engine/outside. A passing call of a gene is that gene's diplotype, read
// and compared with the rest of the request as a diplotypes entry is; a
// call the caller does not pass, or one the engine cannot read, sends its
// gene to review naming the caller's words. A passing HLA typing makes its
// two-field alleles that the knowledge has rows for positive and reads no
// allele as negative. Every call has an evidence-ledger entry.

// MaxOutsideCallBytes bounds one outside_calls item.
const MaxOutsideCallBytes = 1 << 20

// outsideItem is one call of the request's outside calls as read.
type outsideItem struct {
	// field is the request field ("outside_calls[0]").
	field string
	call  outside.Call
	// from names the call for a reader ("Cyrius, outside_calls[0] line 2").
	from string
}

// label is the call as the ledger shows it.
func (o *outsideItem) label() string {
	return fmt.Sprintf("%s %s %s", o.call.Caller, o.call.Gene, o.call.Diplotype)
}

// readOutside reads the request's outside calls. Input that cannot be a
// patient's calls is refused as field errors: an unreadable output, calls
// naming two samples (a check is one patient), two calls of one gene, and
// an HLA typing that contradicts the request's hla field.
func (k *Caller) readOutside(req engine.Request) ([]outsideItem, []engine.FieldError) {
	var items []outsideItem
	var fe []engine.FieldError
	bad := func(field, format string, args ...any) {
		fe = append(fe, engine.FieldError{Field: field, Reason: fmt.Sprintf(format, args...)})
	}
	const maxFiles = 16
	if len(req.OutsideCalls) > maxFiles {
		bad("outside_calls", "at most %d caller outputs per request", maxFiles)
		return nil, fe
	}
	for i, text := range req.OutsideCalls {
		field := fmt.Sprintf("outside_calls[%d]", i)
		file, err := outside.Read(strings.NewReader(text), MaxOutsideCallBytes)
		var pe *outside.ParseError
		switch {
		case errors.As(err, &pe) && pe.Line > 0:
			bad(field, "line %d: %s", pe.Line, pe.Msg)
			continue
		case errors.As(err, &pe):
			bad(field, "%s", pe.Msg)
			continue
		case err != nil:
			bad(field, "%v", err)
			continue
		}
		for _, c := range file.Calls {
			items = append(items, outsideItem{field: field, call: c, from: fmt.Sprintf("%s, %s %s", c.Caller, field, c.Source)})
		}
	}
	if len(fe) > 0 {
		return nil, fe
	}
	var sample, sampleFrom string
	byGene := map[string]*outsideItem{}
	for i := range items {
		o := &items[i]
		if s := o.call.Sample; s != "" {
			if sample != "" && s != sample {
				bad(o.field, "the %s call of %s names sample %q, but %s names %q: a check is one patient; send each sample's calls in its own request", o.call.Caller, o.call.Gene, s, sampleFrom, sample)
				continue
			}
			sample, sampleFrom = s, o.from
		}
		if prev := byGene[o.call.Gene]; prev != nil {
			bad(o.field, "%s is called twice (%s and %s): give one call per gene", o.call.Gene, prev.from, o.from)
			continue
		}
		byGene[o.call.Gene] = o
		if strings.HasPrefix(o.call.Gene, "HLA-") && o.call.Passing {
			for _, a := range o.call.HLAAlleles {
				for key, status := range req.HLA {
					if strings.EqualFold(strings.TrimSpace(key), a) && strings.EqualFold(strings.TrimSpace(status), "negative") {
						bad(o.field, "the %s typing (%s) carries %s, but hla.%s says negative: the request contradicts itself", o.call.Caller, o.from, a, key)
					}
				}
			}
		}
	}
	if len(fe) > 0 {
		return nil, fe
	}
	return items, nil
}

// outsideMerge is what the outside calls add to an interpretation.
type outsideMerge struct {
	// diplotypes are the request's diplotypes with every readable passing
	// outside call of a gene the request gives none for.
	diplotypes map[string]string
	// from names the outside call each added diplotype came from.
	from map[string]*outsideItem
	// review holds, per gene, why the outside calls send it to review.
	review map[string][]string
	// states and reasons of the ledger entries, by item index.
	state  []engine.EvidenceState
	reason []string
	// hla are the alleles the passing HLA typings make positive.
	hla      map[string]bool
	warnings []string
}

// mergeOutside judges the (validated) outside calls against the request.
func (k *Caller) mergeOutside(req engine.Request, items []outsideItem) *outsideMerge {
	if len(items) == 0 {
		// Nothing to merge: apply only reads the (nil) maps.
		return &outsideMerge{diplotypes: req.Diplotypes}
	}
	m := &outsideMerge{diplotypes: req.Diplotypes, from: map[string]*outsideItem{}, review: map[string][]string{},
		state: make([]engine.EvidenceState, len(items)), reason: make([]string, len(items)), hla: map[string]bool{}}
	m.diplotypes = make(map[string]string, len(req.Diplotypes)+len(items))
	for g, d := range req.Diplotypes {
		m.diplotypes[g] = d
	}
	for i := range items {
		o := &items[i]
		c := &o.call
		m.state[i] = engine.EvidenceUsed
		notPassing := func(why string) {
			m.state[i], m.reason[i] = engine.EvidenceNotPassing, why
			m.review[c.Gene] = append(m.review[c.Gene], why)
		}
		if strings.HasPrefix(c.Gene, "HLA-") {
			m.readHLA(k, i, o)
			continue
		}
		g, known := k.Gene(c.Gene)
		if !known {
			m.state[i], m.reason[i] = engine.EvidenceNotPlaceable, fmt.Sprintf("the knowledge has no gene %s: the call is not used", c.Gene)
			m.warnings = append(m.warnings, fmt.Sprintf("the outside call of %s (%s) is not used: the knowledge has no gene %s", c.Gene, o.from, c.Gene))
			continue
		}
		if !c.Passing {
			notPassing(fmt.Sprintf("the outside call %q of %s (%s) is not passing: %s", c.Diplotype, c.Gene, o.from, c.Quality))
			continue
		}
		if strings.TrimSpace(c.Diplotype) == "" {
			notPassing(fmt.Sprintf("the outside call of %s (%s) gives no diplotype, only %s: the engine reads genotypes and does not use a phenotype it cannot trace to one", c.Gene, o.from, strings.TrimSpace(strings.Join([]string{c.Phenotype, c.ActivityScore}, " "))))
			continue
		}
		if _, err := k.parseDiplotype(g, c.Diplotype); err != nil {
			notPassing(fmt.Sprintf("the outside call %q of %s (%s) cannot be read: %v", c.Diplotype, c.Gene, o.from, err))
			continue
		}
		given, ok := req.Diplotypes[c.Gene]
		if !ok {
			m.diplotypes[c.Gene] = c.Diplotype
			m.from[c.Gene] = o
			continue
		}
		if k.sameDiplotype(g, given, c.Diplotype) {
			m.reason[i] = ""
			continue
		}
		why := fmt.Sprintf("diplotypes.%s %s and the outside call %s (%s) disagree", c.Gene, strings.TrimSpace(given), c.Diplotype, o.from)
		m.state[i], m.reason[i] = engine.EvidenceConflicting, why
		m.review[c.Gene] = append(m.review[c.Gene], why)
	}
	return m
}

// readHLA makes the passing typing's known alleles positive.
func (m *outsideMerge) readHLA(k *Caller, i int, o *outsideItem) {
	c := &o.call
	if !c.Passing {
		m.state[i], m.reason[i] = engine.EvidenceNotPassing, fmt.Sprintf("the %s typing %q (%s) is not passing (%s): %s is read as not typed", c.Caller, c.Diplotype, o.from, c.Quality, c.Gene)
		m.warnings = append(m.warnings, m.reason[i])
		return
	}
	var known []string
	for _, a := range c.HLAAlleles {
		at := strings.IndexByte(a, '*')
		if at < 0 {
			continue
		}
		if _, ok := k.HLAAllele(a[:at], a[at:]); ok && !m.hla[a] {
			m.hla[a] = true
			known = append(known, a)
		}
	}
	if len(known) == 0 {
		m.warnings = append(m.warnings, fmt.Sprintf("%s typed %s (%s): no allele the knowledge has rows for; no %s allele is read from it, positive or negative", c.Gene, strings.Join(c.HLAAlleles, "/"), o.from, c.Gene))
		return
	}
	m.warnings = append(m.warnings, fmt.Sprintf("%s typed %s (%s): %s positive; no %s allele is read as negative from the typing (two-field names, some from G groups)", c.Gene, strings.Join(c.HLAAlleles, "/"), o.from, strings.Join(known, ", "), c.Gene))
}

// sameDiplotype reports whether two readable diplotypes of g name the
// same alleles, in any order.
func (k *Caller) sameDiplotype(g *engine.Gene, a, b string) bool {
	x, err1 := k.parseDiplotype(g, a)
	y, err2 := k.parseDiplotype(g, b)
	if err1 != nil || err2 != nil {
		return false
	}
	x, y = slices.Clone(x), slices.Clone(y)
	sort.Strings(x)
	sort.Strings(y)
	return slices.Equal(x, y)
}

// apply finishes the interpretation with the outside calls: a gene
// they send to review is a review naming why (whatever else the request
// says of it), a gene read from an outside call says so; it returns the
// calls' ledger entries. It runs before the request's own ledger is
// written (a conflict of an outside-call diplotype is the call's).
func (m *outsideMerge) apply(gt *Genotype, items []outsideItem, ro *requestObs) []engine.EvidenceItem {
	for gene, why := range m.review {
		gg := &GeneGenotype{Gene: gene, Review: why, Uncallable: "could not interpret — review: " + strings.Join(why, "; ")}
		if prev := gt.Genes[gene]; prev != nil {
			gg.Variants = prev.Variants
			gg.Assumptions = prev.Assumptions
		}
		gt.Genes[gene] = gg
		gt.Covered[gene] = true
		if _, given := m.diplotypes[gene]; given && m.from[gene] == nil {
			ro.conflict("diplotypes."+gene, strings.Join(why, "; "))
		}
	}
	for gene, o := range m.from {
		gg := gt.Genes[gene]
		if gg == nil {
			continue
		}
		gg.Assumptions = append([]string{fmt.Sprintf("%s %s is the outside call of %s", gene, o.call.Diplotype, o.from)}, gg.Assumptions...)
		if o.call.Phenotype != "" && len(gg.Diplotypes) == 1 && !strings.EqualFold(o.call.Phenotype, gg.Diplotypes[0].Call.Phenotype) {
			gg.Assumptions = append(gg.Assumptions, fmt.Sprintf("%s gives the phenotype %q; the engine reads %s by CPIC's tables as %s", o.call.Caller, o.call.Phenotype, o.call.Diplotype, gg.Diplotypes[0].Call.Phenotype))
		}
	}
	for a := range m.hla {
		gt.HLA[a] = true
		gt.Covered[a[:strings.IndexByte(a, '*')]] = true
	}
	gt.Warnings = append(gt.Warnings, m.warnings...)
	var ledger []engine.EvidenceItem
	for i := range items {
		o := &items[i]
		it := engine.EvidenceItem{Field: o.field, Item: o.label(), State: m.state[i], Genes: []string{o.call.Gene}, Reason: m.reason[i]}
		if m.from[o.call.Gene] == o {
			// Read as the gene's diplotype: the ledger of that diplotype
			// (conflicts with the variants, a diplotype without a CPIC
			// value) is this call's.
			key := "diplotypes." + o.call.Gene
			gg := gt.Genes[o.call.Gene]
			switch {
			case ro.conflicts[key] != "":
				it.State, it.Reason = engine.EvidenceConflicting, ro.conflicts[key]
				delete(ro.conflicts, key)
			case gg != nil && gg.Uncallable != "":
				it.State, it.Reason = engine.EvidenceNotPassing, gg.Uncallable
			}
		}
		ledger = append(ledger, it)
	}
	return ledger
}
