package classify

import (
	"strings"
)

// Rarity thresholds on allele frequency (docs/classifier.md §3). They are
// conventions, not fitted to any data here: below 1% a variant is
// conventionally not called a polymorphism ("rare"); from 5% it is
// conventionally "common"; between them "low-frequency".
const (
	RareBelow     = 0.01
	CommonAtLeast = 0.05
)

// Rarity classes.
const (
	RarityRare          = "rare"
	RarityLowFrequency  = "low-frequency"
	RarityCommon        = "common"
	RarityUnknown       = "unknown"
	rarityNoKnownFigure = "no population frequency in the knowledge for this substitution"
)

// PopulationRecord is what the knowledge holds on one variant allele.
type PopulationRecord struct {
	RsID string
	Ref  string
	Alt  string
	// AFIndia is the Indian (or South-Asian) figure; AFIndiaKind says
	// whether it is an allele or a carrier frequency.
	AFIndia           *float64
	AFIndiaBasis      string
	AFIndiaKind       string
	AFIndiaSourceIDs  []string
	AFGlobal          *float64
	AFGlobalBasis     string
	AFGlobalSourceIDs []string
	// ClinVarSignificance is the ClinVar clinical significance the
	// knowledge holds for this allele; ClinVarRelease the release date.
	ClinVarSignificance string
	ClinVarRelease      string
	ClinVarSourceIDs    []string
	Rarity              string
	Notes               []string
}

// Population is the population method's section.
type Population struct {
	Records []PopulationRecord
	// Rarity is the class of the substitution: "rare" when every known
	// allele frequency is below RareBelow (carrier frequencies count, as
	// upper bounds of the allele frequency); "common" when a known allele
	// frequency is at least CommonAtLeast; "low-frequency" between;
	// "unknown" with no figure.
	Rarity        string
	RareBelow     float64
	CommonAtLeast float64
	Note          string
}

// clinvarSourceID is the knowledge source of the ClinVar significances.
const clinvarPrefix = "clinvar-"

// population builds the record of one known variant allele.
func (v *view) population(c ProteinChange) PopulationRecord {
	rec := PopulationRecord{RsID: c.RsID, Ref: c.Ref, Alt: c.Alt, Rarity: RarityUnknown}
	t := v.frequencies(c)
	if t == nil {
		if v.tracked[c.RsID] != nil {
			rec.Notes = append(rec.Notes, "the knowledge's frequencies for "+c.RsID+" are not attributed to the "+c.Ref+">"+c.Alt+" allele")
		} else {
			rec.Notes = append(rec.Notes, c.RsID+" is not a tracked variant: the knowledge has no frequency for it")
		}
		return rec
	}
	rec.AFIndia, rec.AFIndiaBasis, rec.AFIndiaKind = t.AFIndia, t.AFIndiaBasis, t.AFIndiaKind
	rec.AFIndiaSourceIDs = t.AFIndiaSourceIDs
	rec.AFGlobal, rec.AFGlobalBasis, rec.AFGlobalSourceIDs = t.AFGlobal, t.AFGlobalBasis, t.AFGlobalSourceIDs
	if sig, ok := clinvarFor(t.ClinVar, c.Ref, c.Alt); ok {
		rec.ClinVarSignificance = sig
		for _, id := range t.SourceIDs {
			if strings.HasPrefix(id, clinvarPrefix) {
				rec.ClinVarSourceIDs = append(rec.ClinVarSourceIDs, id)
				rec.ClinVarRelease = v.kb.Version.DataVersions["clinvar"]
				if rec.ClinVarRelease == "" {
					rec.ClinVarRelease = strings.TrimPrefix(id, clinvarPrefix)
				}
			}
		}
	}
	rec.Rarity = rarity(rec)
	return rec
}

// rarity classifies one record.
func rarity(r PopulationRecord) string {
	var allele, carrier []float64
	if r.AFIndia != nil {
		if r.AFIndiaKind == "carrier" {
			carrier = append(carrier, *r.AFIndia)
		} else {
			allele = append(allele, *r.AFIndia)
		}
	}
	if r.AFGlobal != nil {
		allele = append(allele, *r.AFGlobal)
	}
	if len(allele) == 0 && len(carrier) == 0 {
		return RarityUnknown
	}
	maxAllele := -1.0
	for _, f := range allele {
		maxAllele = max(maxAllele, f)
	}
	if maxAllele >= CommonAtLeast {
		return RarityCommon
	}
	maxAll := maxAllele
	for _, f := range carrier {
		maxAll = max(maxAll, f)
	}
	if maxAll < RareBelow {
		return RarityRare
	}
	if len(allele) == 0 {
		// Only a carrier frequency of at least 1%: the allele frequency
		// is at most that figure, so no class can be stated.
		return RarityUnknown
	}
	if maxAllele >= RareBelow {
		return RarityLowFrequency
	}
	// Allele frequencies are rare but a carrier figure is not: the allele
	// frequency may still be ≥ 1%.
	return RarityUnknown
}

// clinvarFor returns the significance the ClinVar text of a tracked variant
// states for ref>alt. The text is "<significance> (ClinVar <date>)" or,
// per allele, "T>C: <significance>; T>G: <significance> (ClinVar <date>)".
func clinvarFor(text, ref, alt string) (string, bool) {
	text = strings.TrimSpace(text)
	if text == "" {
		return "", false
	}
	if i := strings.LastIndex(text, " (ClinVar "); i >= 0 && strings.HasSuffix(text, ")") {
		text = strings.TrimSpace(text[:i])
	}
	parts := strings.Split(text, "; ")
	perAllele := false
	for _, p := range parts {
		k, val, ok := strings.Cut(p, ": ")
		if ok && strings.Contains(k, ">") && !strings.Contains(k, " ") {
			perAllele = true
			if k == ref+">"+alt {
				return strings.TrimSpace(val), true
			}
		}
	}
	if perAllele {
		return "", false
	}
	return text, true
}

// summarise gives the class of the substitution over its records.
func summarise(recs []PopulationRecord) Population {
	p := Population{Records: recs, Rarity: RarityUnknown, RareBelow: RareBelow, CommonAtLeast: CommonAtLeast}
	if p.Records == nil {
		p.Records = []PopulationRecord{}
	}
	if len(recs) == 0 {
		p.Note = rarityNoKnownFigure + "; absence from the knowledge's tracked panel says nothing about rarity"
		return p
	}
	// Several records (the same substitution from different codon changes)
	// are summarised by the most frequent class with a known figure.
	rank := map[string]int{RarityUnknown: 0, RarityRare: 1, RarityLowFrequency: 2, RarityCommon: 3}
	allRare := true
	for _, r := range recs {
		if rank[r.Rarity] > rank[p.Rarity] {
			p.Rarity = r.Rarity
		}
		if r.Rarity != RarityRare {
			allRare = false
		}
	}
	if p.Rarity == RarityRare && !allRare {
		p.Rarity = RarityUnknown
	}
	if p.Rarity == RarityUnknown {
		p.Note = rarityNoKnownFigure
	}
	return p
}
