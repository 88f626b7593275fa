package knowledge

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/knowledge/internal/kbfile"
)

// Curated counts the knowledge must hold (DESIGN.md §2; interface spec).
const (
	// TrackedVariantCount is the number of tracked variants: the rsID rows
	// of the India frequency panel.
	TrackedVariantCount = 61
	// StateCount is the number of Indian states and union territories.
	StateCount = 36
)

// Problem is one defect of the knowledge found by LoadFS or Validate.
type Problem struct {
	// File is the knowledge file the problem is in ("drugs.json").
	File string
	// Row is the 1-based position of the row in the file's array; 0 when
	// the problem concerns the file as a whole.
	Row int
	// Field is the JSON path of the offending value inside the row
	// ("pairs[0].gene"); empty for the whole row.
	Field string
	// Message says what is wrong.
	Message string
}

// String renders the problem on one line: "drugs.json row 12 pairs[0].gene: …".
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Row > 0 {
		fmt.Fprintf(&b, " row %d", p.Row)
	}
	if p.Field != "" {
		b.WriteString(" ")
		b.WriteString(p.Field)
	}
	b.WriteString(": ")
	b.WriteString(p.Message)
	return b.String()
}

var (
	reRsID = regexp.MustCompile(`^rs[0-9]+$`)
	reHLA  = regexp.MustCompile(`^HLA-[A-Z0-9]+$`)
)

// validator collects problems.
type validator struct {
	problems []Problem
	sources  map[string]bool
	genes    map[string]*engine.Gene
	drugs    map[string]bool
}

func (v *validator) add(file string, row int, field, format string, args ...any) {
	v.problems = append(v.problems, Problem{File: file, Row: row, Field: field, Message: fmt.Sprintf(format, args...)})
}

// cite checks a row's source ids: at least one, each known.
func (v *validator) cite(file string, row int, field string, ids []string) {
	if len(ids) == 0 {
		v.add(file, row, field, "no source ids")
	}
	for i, id := range ids {
		if !v.sources[id] {
			v.add(file, row, fmt.Sprintf("%s[%d]", field, i), "unknown source id %q", id)
		}
	}
}

// frequency checks that an optional frequency lies in [0,1].
func (v *validator) frequency(file string, row int, field string, f *float64) {
	if f != nil && (math.IsNaN(*f) || *f < 0 || *f > 1) {
		v.add(file, row, field, "frequency %v outside [0,1]", *f)
	}
}

// names checks free-text drug names: non-empty, trimmed, lower case.
func (v *validator) names(file string, row int, field string, names []string) {
	for i, n := range names {
		if n == "" || n != strings.TrimSpace(n) || n != strings.ToLower(n) {
			v.add(file, row, fmt.Sprintf("%s[%d]", field, i), "drug name %q must be non-empty, trimmed and lower case", n)
		}
	}
}

func oneOf(s string, allowed ...string) bool {
	for _, a := range allowed {
		if s == a {
			return true
		}
	}
	return false
}

// foldKey folds a name for duplicate checks: lower case, "&" as "and",
// punctuation and white space collapsed.
func foldKey(s string) string {
	s = strings.ReplaceAll(strings.ToLower(s), "&", " and ")
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}), " ")
}

// Validate checks the knowledge across tables and returns every problem
// found (nil when there is none): unknown or missing source ids on any row;
// duplicate ids (sources, drug names and synonyms, gene symbols, allele
// names within a gene, recommendation ids, rsID+alt, tracked rsIDs, HLA
// alleles, state names and aliases); dangling references (a pair,
// recommendation, rsID or HLA row naming an unknown gene or allele, a
// recommendation naming an unknown drug, a tracked variant whose CPIC gene
// is unknown); frequencies outside [0,1]; values outside their vocabularies;
// and the curated counts (TrackedVariantCount, StateCount).
// The classifier's knowledge is checked too, against the engine's
// (validate_classifier.go).
func Validate(b *Base) []Problem {
	kb := b.Engine
	v := &validator{sources: map[string]bool{}, genes: map[string]*engine.Gene{}, drugs: map[string]bool{}}
	v.validateVersion(kb)
	v.validateSources(kb)
	v.validateGenes(kb)
	v.validateDrugs(kb)
	v.validateRsIDs(kb)
	v.validateRecommendations(kb)
	v.validateVariants(kb)
	v.validateHLA(kb)
	v.validateStates(kb)
	v.validateCommunities(kb)
	v.validateHerbs(kb)
	v.validateWarfarin(kb)
	v.validateDefinitions(kb)              // validate_definitions.go
	v.validateClassifier(kb, b.Classifier) // validate_classifier.go
	v.validateNames(kb)                    // validate_names.go
	return v.problems
}

func (v *validator) validateVersion(kb *engine.Knowledge) {
	if kb.Version.Digest == "" {
		v.add(kbfile.MetaFile, 0, "", "knowledge version has no digest")
	}
	if len(kb.Version.DataVersions) == 0 {
		v.add(kbfile.MetaFile, 0, "data_versions", "no data versions")
	}
}

func (v *validator) validateSources(kb *engine.Knowledge) {
	const f = kbfile.Sources
	if len(kb.Sources) == 0 {
		v.add(f, 0, "", "no sources")
	}
	for i, s := range kb.Sources {
		row := i + 1
		switch {
		case s.ID == "":
			v.add(f, row, "id", "empty source id")
		case v.sources[s.ID]:
			v.add(f, row, "id", "duplicate source id %q", s.ID)
		}
		v.sources[s.ID] = true
		if strings.TrimSpace(s.Title) == "" {
			v.add(f, row, "title", "source %q has no title", s.ID)
		}
		if strings.TrimSpace(s.Licence) == "" {
			v.add(f, row, "licence", "source %q has no licence", s.ID)
		}
	}
}

func (v *validator) validateGenes(kb *engine.Knowledge) {
	const f = kbfile.Genes
	for i := range kb.Genes {
		g := &kb.Genes[i]
		row := i + 1
		switch {
		case g.Symbol == "":
			v.add(f, row, "symbol", "empty gene symbol")
		case v.genes[g.Symbol] != nil:
			v.add(f, row, "symbol", "duplicate gene %q", g.Symbol)
		default:
			v.genes[g.Symbol] = g
		}
		if !oneOf(g.Method, "", engine.MethodActivityScore, engine.MethodFunctionPair, engine.MethodAlleleStatus) {
			v.add(f, row, "method", "unknown method %q", g.Method)
		}
		v.cite(f, row, "source_ids", g.SourceIDs)
		alleles := map[string]bool{}
		for j, a := range g.Alleles {
			field := fmt.Sprintf("alleles[%d]", j)
			switch {
			case a.Name == "":
				v.add(f, row, field+".name", "empty allele name")
			case alleles[a.Name]:
				v.add(f, row, field+".name", "duplicate allele %s %q", g.Symbol, a.Name)
			}
			alleles[a.Name] = true
			for k, kv := range a.Key {
				if kv.RsID == "" || kv.Base == "" {
					v.add(f, row, fmt.Sprintf("%s.key[%d]", field, k), "key variant needs an id and a base")
				}
			}
			v.cite(f, row, field+".source_ids", a.SourceIDs)
		}
		if g.DefaultAllele != "" && !alleles[g.DefaultAllele] {
			v.add(f, row, "default_allele", "default allele %q is not an allele of %s", g.DefaultAllele, g.Symbol)
		}
		if g.ReferenceAllele != "" && !alleles[g.ReferenceAllele] {
			v.add(f, row, "reference_allele", "reference allele %q is not an allele of %s", g.ReferenceAllele, g.Symbol)
		}
		for j, r := range g.Rules {
			if !oneOf(r.Type, "activity_score", "function_pair", "hemizygous_function") {
				v.add(f, row, fmt.Sprintf("rules[%d].type", j), "unknown rule type %q", r.Type)
			}
			if r.Key == "" || r.Phenotype == "" {
				v.add(f, row, fmt.Sprintf("rules[%d]", j), "rule needs a key and a phenotype")
			}
		}
	}
}

func (v *validator) validateDrugs(kb *engine.Knowledge) {
	const f = kbfile.Drugs
	names := map[string]string{} // folded name or synonym → drug
	for i, d := range kb.Drugs {
		row := i + 1
		if d.Name == "" || d.Name != strings.TrimSpace(d.Name) || d.Name != strings.ToLower(d.Name) {
			v.add(f, row, "name", "drug name %q must be non-empty, trimmed and lower case", d.Name)
		}
		v.drugs[d.Name] = true
		for j, n := range append([]string{d.Name}, d.Synonyms...) {
			field := "name"
			if j > 0 {
				field = fmt.Sprintf("synonyms[%d]", j-1)
			}
			k := foldKey(n)
			if k == "" {
				v.add(f, row, field, "empty drug name")
				continue
			}
			if prev, ok := names[k]; ok {
				v.add(f, row, field, "duplicate drug name %q (also %q)", n, prev)
				continue
			}
			names[k] = d.Name
		}
		if !oneOf(d.Guidance, "CPIC", "DPWG", "none") {
			v.add(f, row, "guidance", "unknown guidance %q", d.Guidance)
		}
		if !oneOf(d.Sensitivity, "high", "moderate", "none") {
			v.add(f, row, "sensitivity", "unknown sensitivity %q", d.Sensitivity)
		}
		v.cite(f, row, "source_ids", d.SourceIDs)
		for j, p := range d.Pairs {
			field := fmt.Sprintf("pairs[%d]", j)
			if v.genes[p.Gene] == nil {
				v.add(f, row, field+".gene", "unknown gene %q", p.Gene)
			}
			if p.CPICLevel == "" {
				v.add(f, row, field+".cpic_level", "empty CPIC level")
			}
			v.cite(f, row, field+".source_ids", p.SourceIDs)
		}
	}
}

func (v *validator) validateRsIDs(kb *engine.Knowledge) {
	const f = kbfile.RsIDs
	seen := map[string]bool{}
	for i, r := range kb.RsIDs {
		row := i + 1
		if !reRsID.MatchString(r.RsID) {
			v.add(f, row, "rsid", "%q is not an rsID", r.RsID)
		}
		key := r.RsID + ">" + r.Alt
		if seen[key] {
			v.add(f, row, "", "duplicate rsID+alt %s %s", r.RsID, r.Alt)
		}
		seen[key] = true
		g := v.genes[r.Gene]
		if g == nil {
			v.add(f, row, "gene", "unknown gene %q", r.Gene)
		}
		if len(r.Alleles) == 0 {
			v.add(f, row, "alleles", "no alleles")
		}
		if g != nil {
			known := map[string]bool{}
			for _, a := range g.Alleles {
				known[a.Name] = true
			}
			for j, a := range r.Alleles {
				if !known[a] {
					v.add(f, row, fmt.Sprintf("alleles[%d]", j), "unknown allele %s %q", r.Gene, a)
				}
			}
			for j, a := range r.Sole {
				if !known[a] {
					v.add(f, row, fmt.Sprintf("sole[%d]", j), "unknown allele %s %q", r.Gene, a)
				}
			}
		}
		v.cite(f, row, "source_ids", r.SourceIDs)
	}
}

func (v *validator) validateRecommendations(kb *engine.Knowledge) {
	const f = kbfile.Recommendations
	seen := map[string]bool{}
	for i, r := range kb.Recommendations {
		row := i + 1
		switch {
		case r.ID == "":
			v.add(f, row, "id", "empty recommendation id")
		case seen[r.ID]:
			v.add(f, row, "id", "duplicate recommendation id %q", r.ID)
		}
		seen[r.ID] = true
		if !oneOf(r.Source, "CPIC", "DPWG") {
			v.add(f, row, "source", "unknown source %q", r.Source)
		}
		if !v.drugs[r.Drug] {
			v.add(f, row, "drug", "unknown drug %q", r.Drug)
		}
		if len(r.Genes) == 0 {
			v.add(f, row, "genes", "no genes")
		}
		genes := map[string]bool{}
		for j, g := range r.Genes {
			genes[g] = true
			if v.genes[g] == nil {
				v.add(f, row, fmt.Sprintf("genes[%d]", j), "unknown gene %q", g)
			}
		}
		for g := range r.Lookup {
			if !genes[g] {
				v.add(f, row, "lookup", "lookup gene %q is not one of the row's genes", g)
			}
		}
		for _, g := range r.Genes {
			if _, ok := r.Lookup[g]; !ok {
				v.add(f, row, "lookup", "no lookup value for gene %q", g)
			}
		}
		if !oneOf(r.Actionability, "yes", "none", "conditional") {
			v.add(f, row, "actionability", "unknown actionability %q", r.Actionability)
		}
		if strings.TrimSpace(r.Text) == "" {
			v.add(f, row, "text", "empty recommendation text")
		}
		v.cite(f, row, "source_ids", r.SourceIDs)
	}
}

// geneComponents splits a variant's gene cell ("IFNL3/IFNL4", "HCP5
// (HLA-B*57:01 tag)") into gene symbols, dropping parenthetical notes.
func geneComponents(s string) []string {
	if i := strings.Index(s, "("); i >= 0 {
		s = s[:i]
	}
	var out []string
	for _, p := range strings.Split(s, "/") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (v *validator) validateVariants(kb *engine.Knowledge) {
	const f = kbfile.Variants
	if len(kb.Variants) != TrackedVariantCount {
		v.add(f, 0, "", "%d tracked variants, want exactly %d", len(kb.Variants), TrackedVariantCount)
	}
	// CPIC genes: genes of the allele definitions and of the CPIC pairs.
	cpicGenes := map[string]bool{}
	rsidGenes := map[string]map[string]bool{}
	for _, r := range kb.RsIDs {
		cpicGenes[r.Gene] = true
		if rsidGenes[r.RsID] == nil {
			rsidGenes[r.RsID] = map[string]bool{}
		}
		rsidGenes[r.RsID][r.Gene] = true
	}
	for _, d := range kb.Drugs {
		for _, p := range d.Pairs {
			cpicGenes[p.Gene] = true
		}
	}
	seen := map[string]bool{}
	for i, t := range kb.Variants {
		row := i + 1
		if !reRsID.MatchString(t.RsID) {
			v.add(f, row, "rsid", "%q is not an rsID", t.RsID)
		}
		if seen[t.RsID] {
			v.add(f, row, "rsid", "duplicate tracked variant %q", t.RsID)
		}
		seen[t.RsID] = true
		comps := geneComponents(t.Gene)
		if len(comps) == 0 {
			v.add(f, row, "gene", "empty gene")
		}
		for _, g := range comps {
			if cpicGenes[g] && v.genes[g] == nil {
				v.add(f, row, "gene", "unknown gene %q", g)
			}
		}
		if gs := rsidGenes[t.RsID]; len(gs) > 0 {
			match := false
			for _, g := range comps {
				match = match || gs[g]
			}
			if !match {
				v.add(f, row, "gene", "gene %q does not name the gene of %s in the allele definitions", t.Gene, t.RsID)
			}
		}
		v.frequency(f, row, "af_india", t.AFIndia)
		v.frequency(f, row, "af_south_asian", t.AFSouthAsian)
		v.frequency(f, row, "af_global", t.AFGlobal)
		if t.AFIndia == nil {
			if t.AFIndiaBasis != "" || t.AFIndiaKind != "" {
				v.add(f, row, "af_india", "basis or kind given without a frequency")
			}
		} else {
			if t.AFIndiaBasis == "" {
				v.add(f, row, "af_india_basis", "frequency without a basis")
			}
			if !oneOf(t.AFIndiaKind, "allele", "carrier") {
				v.add(f, row, "af_india_kind", "unknown kind %q", t.AFIndiaKind)
			}
		}
		if t.AFGlobal != nil && t.AFGlobalBasis == "" {
			v.add(f, row, "af_global_basis", "frequency without a basis")
		}
		v.cite(f, row, "source_ids", t.SourceIDs)
		if t.AFIndia != nil {
			v.cite(f, row, "af_india_source_ids", t.AFIndiaSourceIDs)
		}
		if t.AFGlobal != nil {
			v.cite(f, row, "af_global_source_ids", t.AFGlobalSourceIDs)
		}
	}
}

func (v *validator) validateHLA(kb *engine.Knowledge) {
	const f = kbfile.HLA
	seen := map[string]bool{}
	for i, h := range kb.HLAAlleles {
		row := i + 1
		if v.genes[h.Gene] == nil {
			v.add(f, row, "gene", "unknown gene %q", h.Gene)
		}
		if !strings.HasPrefix(h.Allele, "*") {
			v.add(f, row, "allele", "HLA allele %q must start with \"*\"", h.Allele)
		}
		if seen[h.Gene+h.Allele] {
			v.add(f, row, "", "duplicate HLA allele %s%s", h.Gene, h.Allele)
		}
		seen[h.Gene+h.Allele] = true
		v.frequency(f, row, "af_central_south_asian", h.AFCentralSouthAsian)
		v.cite(f, row, "source_ids", h.SourceIDs)
	}
}

func (v *validator) validateStates(kb *engine.Knowledge) {
	const f = kbfile.States
	if len(kb.States) != StateCount {
		v.add(f, 0, "", "%d states and union territories, want exactly %d", len(kb.States), StateCount)
	}
	names := map[string]string{}
	for i, s := range kb.States {
		row := i + 1
		for j, n := range append([]string{s.Name}, s.Aliases...) {
			field := "name"
			if j > 0 {
				field = fmt.Sprintf("aliases[%d]", j-1)
			}
			k := foldKey(n)
			if k == "" {
				v.add(f, row, field, "empty state name")
				continue
			}
			if prev, ok := names[k]; ok {
				v.add(f, row, field, "duplicate state name %q (also %q)", n, prev)
				continue
			}
			names[k] = s.Name
		}
		if !oneOf(s.Type, "state", "union territory") {
			v.add(f, row, "type", "unknown type %q", s.Type)
		}
		for j, r := range s.Risks {
			field := fmt.Sprintf("risks[%d]", j)
			if r.Risk == "" || r.Disease == "" {
				v.add(f, row, field, "risk needs a text and a disease")
			}
			v.names(f, row, field+".drugs", r.Drugs)
			v.cite(f, row, field+".source_ids", r.SourceIDs)
		}
	}
}

func (v *validator) validateCommunities(kb *engine.Knowledge) {
	const f = kbfile.Communities
	for i, c := range kb.Communities {
		row := i + 1
		if c.Name == "" || c.Trait == "" || c.Finding == "" {
			v.add(f, row, "", "community needs a name, a trait and a finding")
		}
		for j, g := range c.Genes {
			if v.genes[g] == nil && !reHLA.MatchString(g) {
				v.add(f, row, fmt.Sprintf("genes[%d]", j), "unknown gene %q", g)
			}
		}
		v.names(f, row, "drugs", c.Drugs)
		v.cite(f, row, "source_ids", c.SourceIDs)
	}
}

func (v *validator) validateHerbs(kb *engine.Knowledge) {
	const f = kbfile.Herbs
	for i, h := range kb.Herbs {
		row := i + 1
		if h.Herb == "" || h.DrugsText == "" {
			v.add(f, row, "", "herb interaction needs a herb and a drug text")
		}
		v.names(f, row, "drugs", h.Drugs)
		v.cite(f, row, "source_ids", h.SourceIDs)
	}
}

func (v *validator) validateWarfarin(kb *engine.Knowledge) {
	const f = kbfile.Warfarin
	w := kb.Warfarin
	if w == nil {
		v.add(f, 0, "", "no warfarin flow chart")
		return
	}
	if !v.drugs[w.Drug] {
		v.add(f, 0, "drug", "unknown drug %q", w.Drug)
	}
	if len(w.Nodes) == 0 {
		v.add(f, 0, "nodes", "no nodes")
	}
	ids := map[string]bool{}
	for i, n := range w.Nodes {
		if n.ID == "" || ids[n.ID] {
			v.add(f, 0, fmt.Sprintf("nodes[%d].id", i), "empty or duplicate node id %q", n.ID)
		}
		ids[n.ID] = true
	}
	v.cite(f, 0, "source_ids", w.SourceIDs)
}
