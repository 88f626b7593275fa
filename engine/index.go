package engine

import (
	"fmt"
	"sort"
	"strings"
)

// index holds the lookups the engine needs, built once by Build.
type index struct {
	drugs     map[string]*Drug              // normalised name or synonym → drug
	drugNames []string                      // sorted canonical names (did-you-mean)
	genes     map[string]*Gene              // symbol → gene
	alleles   map[string]map[string]*Allele // gene → allele name → allele
	// alleleAliases maps the parts of composite allele names ("c.1905+1G>A"
	// and "*2A" of "c.1905+1G>A (*2A)") to the full name, per gene.
	alleleAliases map[string]map[string]string
	recs          map[string][]*Recommendation // drug → rows
	variants      map[string]*TrackedVariant   // rsid → tracked variant
	states        map[string]*State            // normalised name or alias → state
	communities   []*Community
	// communityNames are, per community, its whole names as normalised
	// word sequences (community.go).
	communityNames [][][]string
	sources        map[string]*Source
	hla            map[string]*HLAAllele // "HLA-B*15:02" → allele
	// actionableFreq is, per gene, the share of Indian-frequency-weighted
	// alleles that are non-normal (see preTestSeverity).
	knownNames  map[string]bool                // every entity name the knowledge holds (lower case)
	defs        map[string]*defIndex           // gene → allele definition (match.go)
	defPos      map[string]map[int][]*defIndex // chrom → position → definitions using it
	defGenes    []string                       // genes with definitions, sorted
	defRsid     map[string][]defLocus          // rsID → definition positions (observe.go)
	refSeqChrom map[string]string              // "NC_000010.11" → "chr10"
	names       *nameIndex                     // drug names, brands, codes (drugname.go)
	indication  *indicationIndex               // indication codes (indication.go)
	// altDrugs is Drug's answer, read once at Build, for every name a
	// recommendation gives as an alternative (nil: not a covered drug).
	// The re-check of alternatives looks these names up on every check.
	altDrugs map[string]*Drug
	// drugGenes is computeDrugGenes of every drug.
	drugGenes map[*Drug][]string
	// pops holds, per drug with recommendations, its rows by population.
	pops map[string]*drugPopulations
}

// drugPopulations are a drug's recommendation rows by guideline population,
// read once at Build (SelectPopulation, matchRecs).
type drugPopulations struct {
	all  []string        // the populations, sorted
	set  map[string]bool // the same, as a set
	rows map[string][]*Recommendation
	// keys[pop][i] are, for rows[pop][i], each gene (in the row's order)
	// with its lookup value and lookup type.
	keys map[string][][]recKey
	// noResult[pop][gene] is true when a row of pop looks gene up as
	// "No Result".
	noResult map[string]map[string]bool
}

// recKey is one gene of a recommendation row with what the row looks up.
type recKey struct{ gene, lookup, lookupType string }

// buildPopulations indexes every drug's rows by population.
func buildPopulations(recs map[string][]*Recommendation) map[string]*drugPopulations {
	out := make(map[string]*drugPopulations, len(recs))
	for drug, rs := range recs {
		dp := &drugPopulations{set: map[string]bool{}, rows: map[string][]*Recommendation{}, keys: map[string][][]recKey{}, noResult: map[string]map[string]bool{}}
		for _, r := range rs {
			if !dp.set[r.Population] {
				dp.set[r.Population] = true
				dp.all = append(dp.all, r.Population)
				dp.noResult[r.Population] = map[string]bool{}
			}
			dp.rows[r.Population] = append(dp.rows[r.Population], r)
			rk := make([]recKey, len(r.Genes))
			for i, g := range r.Genes {
				rk[i] = recKey{g, r.Lookup[g], r.LookupType[g]}
			}
			dp.keys[r.Population] = append(dp.keys[r.Population], rk)
			for _, g := range r.Genes {
				if r.Lookup[g] == "No Result" {
					dp.noResult[r.Population][g] = true
				}
			}
		}
		sort.Strings(dp.all)
		out[drug] = dp
	}
	return out
}

// Build validates the minimal invariants the engine relies on and builds
// the lookup indexes. It must be called once after loading.
func (k *Knowledge) Build() error {
	ix := &index{
		drugs:   map[string]*Drug{},
		genes:   map[string]*Gene{},
		alleles: map[string]map[string]*Allele{},

		alleleAliases: map[string]map[string]string{},
		recs:          map[string][]*Recommendation{},
		variants:      map[string]*TrackedVariant{},
		states:        map[string]*State{},
		sources:       map[string]*Source{},
		hla:           map[string]*HLAAllele{},
	}
	var problems []string
	for i := range k.Sources {
		ix.sources[k.Sources[i].ID] = &k.Sources[i]
	}
	for i := range k.Drugs {
		d := &k.Drugs[i]
		for _, n := range append([]string{d.Name}, d.Synonyms...) {
			key := NormaliseDrugName(n)
			if prev, ok := ix.drugs[key]; ok && prev != d {
				problems = append(problems, fmt.Sprintf("drug name %q names both %q and %q", n, prev.Name, d.Name))
				continue
			}
			ix.drugs[key] = d
		}
		ix.drugNames = append(ix.drugNames, d.Name)
	}
	sort.Strings(ix.drugNames)
	for i := range k.Genes {
		g := &k.Genes[i]
		ix.genes[g.Symbol] = g
		m := map[string]*Allele{}
		for j := range g.Alleles {
			a := &g.Alleles[j]
			m[a.Name] = a
		}
		ix.alleles[g.Symbol] = m
		ix.alleleAliases[g.Symbol] = compositeAliases(m)
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
			ix.states[normaliseKey(n)] = s
		}
	}
	for i := range k.Communities {
		c := &k.Communities[i]
		ix.communities = append(ix.communities, c)
		ix.communityNames = append(ix.communityNames, k.communityNames(c))
	}
	for i := range k.HLAAlleles {
		h := &k.HLAAlleles[i]
		ix.hla[h.Gene+h.Allele] = h
	}
	if len(problems) > 0 {
		return fmt.Errorf("knowledge index: %s", strings.Join(problems, "; "))
	}
	defs, defPos, err := buildDefinitions(k)
	if err != nil {
		return fmt.Errorf("knowledge index: %w", err)
	}
	ix.defs, ix.defPos = defs, defPos
	for g := range defs {
		ix.defGenes = append(ix.defGenes, g)
	}
	sort.Strings(ix.defGenes)
	ix.defRsid, ix.refSeqChrom = map[string][]defLocus{}, map[string]string{}
	for _, di := range defs {
		ix.refSeqChrom[di.def.RefSeq] = di.def.Chromosome
		for i, p := range di.def.Positions {
			if p.RsID != "" {
				ix.defRsid[p.RsID] = append(ix.defRsid[p.RsID], defLocus{di, i})
			}
		}
	}
	ix.knownNames = k.entityNames()
	k.idx = ix
	ix.names = k.buildNameIndex()
	ix.indication = k.buildIndicationIndex()
	ix.pops = buildPopulations(ix.recs)
	ix.drugGenes = make(map[*Drug][]string, len(k.Drugs))
	for i := range k.Drugs {
		ix.drugGenes[&k.Drugs[i]] = k.computeDrugGenes(&k.Drugs[i])
	}
	alt := map[string]*Drug{}
	for _, r := range k.Recommendations {
		for _, name := range r.Alternatives {
			if _, done := alt[name]; !done {
				d, _ := k.Drug(name)
				alt[name] = d
			}
		}
	}
	ix.altDrugs = alt
	return nil
}

// compositeAliases returns, for allele names of the form "A (B)", the
// parts A and B when each names no other allele and is not itself a name.
func compositeAliases(names map[string]*Allele) map[string]string {
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

// Drug returns the covered drug for a name, synonym or salt form. It
// answers through ReadDrug, and only when the name reads as exactly one
// drug; combinations and names that need confirmation return false.
func (k *Knowledge) Drug(name string) (*Drug, bool) {
	if d, ok := k.idx.drugs[NormaliseDrugName(name)]; ok {
		return d, true
	}
	if d, ok := k.idx.altDrugs[name]; ok {
		return d, d != nil
	}
	r := k.readDrug(name, false)
	if r.Status != DrugStatusRecognised || len(r.Drugs) != 1 || len(r.Unrecognised) > 0 {
		return nil, false
	}
	d, ok := k.idx.drugs[r.Drugs[0]]
	return d, ok
}

// Gene returns the gene with the given symbol.
func (k *Knowledge) Gene(symbol string) (*Gene, bool) {
	g, ok := k.idx.genes[symbol]
	return g, ok
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
	s, ok := k.idx.states[normaliseKey(name)]
	return s, ok
}

// plainLowerWord reports whether s is non-empty ASCII without upper-case
// letters or white space.
func plainLowerWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || c >= 'A' && c <= 'Z' || c == ' ' || c >= '\t' && c <= '\r' {
			return false
		}
	}
	return s != ""
}

// normaliseKey lower-cases, replaces "&" by "and", and folds punctuation
// and white space, for matching state and community names.
func normaliseKey(s string) string {
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

// saltWords are pharmaceutical salt and form words dropped when a drug name
// is normalised ("clopidogrel bisulfate" → "clopidogrel"). This is naming
// convention, not clinical content.
var saltWords = map[string]bool{
	"hydrochloride": true, "hcl": true, "sodium": true, "potassium": true,
	"calcium": true, "magnesium": true, "bisulfate": true, "bisulphate": true,
	"besylate": true, "besilate": true, "mesylate": true, "mesilate": true,
	"maleate": true, "fumarate": true, "succinate": true, "tartrate": true,
	"citrate": true, "sulfate": true, "sulphate": true, "phosphate": true,
	"acetate": true, "hydrobromide": true, "dihydrate": true, "monohydrate": true,
	"trihydrate": true, "hemihydrate": true, "tablet": true, "tablets": true,
	"capsule": true, "capsules": true, "oral": true, "injection": true,
}

// NormaliseDrugName trims, lower-cases, folds white space and drops salt
// and dosage-form words. The canonical knowledge names are returned
// unchanged by it ("divalproex sodium" stays itself when it is the name).
func NormaliseDrugName(s string) string {
	if plainLowerWord(s) {
		return s // one lower-case word: Fields and Join give it back
	}
	fields := strings.Fields(strings.ToLower(strings.TrimSpace(s)))
	if len(fields) <= 1 {
		return strings.Join(fields, " ")
	}
	out := fields[:0:0]
	for _, f := range fields {
		if !saltWords[f] {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		out = fields
	}
	return strings.Join(out, " ")
}
