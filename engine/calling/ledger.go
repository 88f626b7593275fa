package calling

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// This file keeps the evidence ledger of a hand-entered request
// (DESIGN.md §3, "Evidence ledger"): every variants item, position call,
// diplotype and HLA result ends in exactly one state the answer shows —
// used, conflicting or not placeable. (A refused item never reaches here:
// Validate answers 422.) The states are recorded where the evidence is
// placed (observe.go), compared (conflict.go) and judged against the
// tested genes (genotype.go); ledgerOf writes them out in request order.

// ledgerEntry is one input item as the request gave it.
type ledgerEntry struct {
	field, item string
	// source is the item's name in its observations (PositionObservation
	// .Source): the variants item itself, or "calls[i]".
	source string
	// genes the item was placed on.
	genes []string
	// unplaced says why no definition position took the item.
	unplaced string
	// sameAs names an earlier field giving the same item.
	sameAs string
}

// entry appends a ledger entry and returns it.
func (r *requestObs) entry(field, item, source string) *ledgerEntry {
	r.ledger = append(r.ledger, &ledgerEntry{field: field, item: item, source: source})
	return r.ledger[len(r.ledger)-1]
}

// conflict records that source disagrees with other evidence.
func (r *requestObs) conflict(source, reason string) {
	if r.conflicts == nil {
		r.conflicts = map[string]string{}
	}
	if _, ok := r.conflicts[source]; !ok {
		r.conflicts[source] = reason
	}
}

// reviewedFor records that item sent gene (reported as tested) to review.
func (r *requestObs) reviewedFor(item, gene string) {
	if r.sentToReview == nil {
		r.sentToReview = map[string][]string{}
	}
	r.sentToReview[item] = append(r.sentToReview[item], gene)
}

// ledgerOf writes the request's evidence ledger: its variants items and
// calls in request order, then its diplotypes and HLA results by gene.
func ledgerOf(ro *requestObs, req engine.Request) []engine.EvidenceItem {
	var out []engine.EvidenceItem
	if n := len(ro.ledger) + len(req.Diplotypes) + len(req.HLA); n > 0 {
		out = make([]engine.EvidenceItem, 0, n) // nil when there is nothing
	}
	byField := map[string]int{}
	for _, e := range ro.ledger {
		it := engine.EvidenceItem{Field: e.field, Item: e.item, State: engine.EvidenceUsed, Genes: e.genes}
		switch {
		case e.sameAs != "":
			first := out[byField[e.sameAs]]
			it.State, it.Genes, it.Reason = first.State, first.Genes, first.Reason
			if it.Reason != "" {
				it.Reason = fmt.Sprintf("the same item as %s: %s", e.sameAs, first.Reason)
			}
		case ro.conflicts[e.source] != "":
			it.State, it.Reason = engine.EvidenceConflicting, ro.conflicts[e.source]
		case e.unplaced != "":
			it.State, it.Reason = engine.EvidenceNotPlaceable, e.unplaced
			if genes := ro.sentToReview[e.source]; len(genes) > 0 {
				sort.Strings(genes)
				it.Genes = genes
				it.Reason += fmt.Sprintf("; %s, reported as tested, is sent to review", strings.Join(genes, ", "))
			}
		}
		byField[e.field] = len(out)
		out = append(out, it)
	}
	for _, g := range sortedKeys(req.Diplotypes) {
		field := "diplotypes." + g
		it := engine.EvidenceItem{Field: field, Item: strings.TrimSpace(req.Diplotypes[g]), State: engine.EvidenceUsed, Genes: []string{g}}
		if r := ro.conflicts[field]; r != "" {
			it.State, it.Reason = engine.EvidenceConflicting, r
		}
		out = append(out, it)
	}
	for _, a := range sortedKeys(req.HLA) {
		gene := a
		if m := hlaPattern.FindStringSubmatch(strings.TrimSpace(a)); m != nil {
			gene = m[1]
		}
		out = append(out, engine.EvidenceItem{Field: "hla." + a, Item: strings.TrimSpace(req.HLA[a]), State: engine.EvidenceUsed, Genes: []string{gene}})
	}
	return out
}

// sortedKeys returns the keys of m in order (nil for an empty map).
func sortedKeys(m map[string]string) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
