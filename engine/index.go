package engine

import (
	"strings"
)

// index holds the plain lookups over the knowledge rows, built once by
// Build. The parts of the evaluation build their own indexes from the
// rows (calling.New, drugnames.New, population.New).
type index struct {
	genes      map[string]*Gene              // symbol → gene
	drugs      map[string]*Drug              // canonical name → drug
	alleles    map[string]map[string]*Allele // gene → allele name → allele
	recs       map[string][]*Recommendation  // drug → rows
	variants   map[string]*TrackedVariant    // rsid → tracked variant
	states     map[string]*State             // normalised name or alias → state
	sources    map[string]*Source
	hla        map[string]*HLAAllele // "HLA-B*15:02" → allele
	knownNames map[string]bool       // every entity name the knowledge holds (lower case)
}

// Build builds the plain lookups over the rows. It must be called once
// after loading; the parts' indexes are built by their own New.
func (k *Knowledge) Build() {
	ix := &index{
		genes:    map[string]*Gene{},
		drugs:    map[string]*Drug{},
		alleles:  map[string]map[string]*Allele{},
		recs:     map[string][]*Recommendation{},
		variants: map[string]*TrackedVariant{},
		states:   map[string]*State{},
		sources:  map[string]*Source{},
		hla:      map[string]*HLAAllele{},
	}
	for i := range k.Sources {
		ix.sources[k.Sources[i].ID] = &k.Sources[i]
	}
	for i := range k.Genes {
		g := &k.Genes[i]
		ix.genes[g.Symbol] = g
		m := map[string]*Allele{}
		for j := range g.Alleles {
			a := &g.Alleles[j]
			m[a.Name] = a
		}
		ix.alleles[g.Symbol] = m
	}
	for i := range k.Drugs {
		ix.drugs[k.Drugs[i].Name] = &k.Drugs[i]
	}
	for i := range k.Recommendations {
		r := &k.Recommendations[i]
		ix.recs[r.Drug] = append(ix.recs[r.Drug], r)
	}
	for i := range k.Variants {
		ix.variants[k.Variants[i].RsID] = &k.Variants[i]
	}
	for i := range k.States {
		s := &k.States[i]
		for _, n := range append([]string{s.Name}, s.Aliases...) {
			ix.states[NormaliseKey(n)] = s
		}
	}
	for i := range k.HLAAlleles {
		h := &k.HLAAlleles[i]
		ix.hla[h.Gene+h.Allele] = h
	}
	ix.knownNames = k.entityNames()
	k.idx = ix
}

// entityNames returns every gene, drug, allele, herb, disease, state and
// community name the knowledge holds, lower case. The grounding contract
// says a response names nothing outside this set.
func (k *Knowledge) entityNames() map[string]bool {
	m := map[string]bool{}
	add := func(s string) {
		if s = strings.ToLower(strings.TrimSpace(s)); s != "" {
			m[s] = true
		}
	}
	for _, d := range k.Drugs {
		add(d.Name)
		for _, s := range d.Synonyms {
			add(s)
		}
	}
	for _, n := range k.DrugNames {
		add(n.Name)
		add(n.Stem)
	}
	for _, g := range k.Genes {
		add(g.Symbol)
		for _, a := range g.Alleles {
			add(a.Name)
		}
	}
	for _, r := range k.Recommendations {
		for _, a := range r.Alternatives {
			add(a)
		}
		for _, g := range r.Genes {
			add(g)
		}
	}
	for _, v := range k.Variants {
		add(v.RsID)
		add(v.Gene)
		for _, a := range v.StarAlleles {
			add(a)
		}
	}
	for _, h := range k.HLAAlleles {
		add(h.Gene)
		add(h.Gene + h.Allele)
	}
	for _, s := range k.States {
		add(s.Name)
		for _, r := range s.Risks {
			add(r.Disease)
			for _, d := range r.Drugs {
				add(d)
			}
		}
	}
	for _, c := range k.Communities {
		add(c.Name)
		for _, d := range c.Drugs {
			add(d)
		}
		for _, g := range c.Genes {
			add(g)
		}
	}
	for _, h := range k.Herbs {
		add(h.Herb)
		add(h.Botanical)
		for _, d := range h.Drugs {
			add(d)
		}
	}
	return m
}

// Known reports whether name (any case) is an entity of the knowledge.
func (k *Knowledge) Known(name string) bool {
	return k.idx.knownNames[strings.ToLower(strings.TrimSpace(name))]
}

// Gene returns the gene with the given symbol.
func (k *Knowledge) Gene(symbol string) (*Gene, bool) {
	g, ok := k.idx.genes[symbol]
	return g, ok
}

// DrugNamed returns the drug with exactly this canonical name (a
// DrugReading's normalised name); reading what a user wrote is drugnames'.
func (k *Knowledge) DrugNamed(name string) (*Drug, bool) {
	d, ok := k.idx.drugs[name]
	return d, ok
}

// Allele returns the named allele of a gene.
func (k *Knowledge) Allele(gene, name string) (*Allele, bool) {
	a, ok := k.idx.alleles[gene][name]
	return a, ok
}

// HLAAllele returns the HLA allele row of a gene and allele ("HLA-B",
// "*15:02").
func (k *Knowledge) HLAAllele(gene, allele string) (*HLAAllele, bool) {
	h, ok := k.idx.hla[gene+allele]
	return h, ok
}

// Source returns the source with the given id.
func (k *Knowledge) Source(id string) (*Source, bool) {
	s, ok := k.idx.sources[id]
	return s, ok
}

// RecommendationsFor returns the recommendation rows of a drug.
func (k *Knowledge) RecommendationsFor(drug string) []*Recommendation {
	return k.idx.recs[drug]
}

// TrackedVariant returns the panel row of an rsID.
func (k *Knowledge) TrackedVariant(rsid string) (*TrackedVariant, bool) {
	v, ok := k.idx.variants[rsid]
	return v, ok
}

// State returns the state or union territory for a name or alias.
func (k *Knowledge) State(name string) (*State, bool) {
	s, ok := k.idx.states[NormaliseKey(name)]
	return s, ok
}

// NormaliseKey lower-cases, replaces "&" by "and", and folds punctuation
// and white space, for matching state and community names.
func NormaliseKey(s string) string {
	if k, ok := normaliseASCIIKey(s); ok {
		return k
	}
	return normaliseKeyRunes(s)
}

// normaliseKeyRunes is normaliseKey for any input, rune by rune.
func normaliseKeyRunes(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.ReplaceAll(s, "&", " and ")
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		default:
			space = true
		}
	}
	return b.String()
}

// normaliseASCIIKey is normaliseKey for ASCII input without '&' (ok
// false otherwise): s itself when it is already a key (lower-case letters
// and digits, single spaces between words), else the key built in one
// allocation. FuzzNormaliseKey holds it to the general path.
func normaliseASCIIKey(s string) (string, bool) {
	canonical := len(s) == 0 || s[0] != ' ' && s[len(s)-1] != ' '
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 0x80 || c == '&':
			return "", false
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == ' ' && i > 0 && s[i-1] != ' ':
		default:
			canonical = false
		}
	}
	if canonical {
		return s, true
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteByte(c)
			continue
		}
		space = true
	}
	return b.String(), true
}
