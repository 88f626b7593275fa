package main

// Drug names and indication codes (data/names).
//
// Drug names. Every row of names/drug_synonyms.csv becomes part of a
// drug_names.json row; rows are grouped by (name, kind), case-insensitively,
// so a name that several sources or markets list is one row that names
// them all (and a combination product listed under each of its covered
// ingredients is one row with every covered ingredient in drugs). Flags
// that only say a name is listed under another drug (also:, stem_also:)
// are dropped: the drugs list carries that. Validation is strict: an
// unknown column value (drug, kind, market, source, flag) stops the
// generator.
//
// Indication codes. Every row of names/indications.csv becomes one
// indications.json row; its population must be a population of the
// knowledge's recommendation rows, its system one of the four code systems,
// its match "exact" or "prefix", and (system, code, population) unique.

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/knowledge"
)

// Licences of the names sources, as data/names/SOURCES.md states them.
const (
	licPGKBNames  = "CC BY-SA 4.0 (PharmGKB/ClinPGx drugs download; attribute PharmGKB/ClinPGx, share alike)"
	licFDA        = "public domain (US government work, Drugs@FDA data files)"
	licIndiaNames = "no licence stated (Kaggle dataset scraped from 1mg.com; licence not verified): product names and compositions only, as facts; check before redistribution"
	licVSAC       = "CC0 repository; value-set content NLM VSAC (eCQM); ICD-10-CM/PCS public domain; SNOMED CT codes under the SNOMED CT / UMLS licence (free in member countries; check the deployment country)"
	licICD10CM    = "public domain (ICD-10-CM, US government)"
	licWHOICD10   = "ICD-10 content © WHO; WHO terms apply (commercial use may need a WHO licence)"
)

// namesSources maps the source_id values of data/names to knowledge sources.
var namesSources = map[string]knowledge.Source{
	"PGKB_DRUGS_2022": {
		ID: "names-pgkb-drugs-2022", Title: "PharmGKB drugs download (drugs/CREATED_2022-07-05.txt: generic names, trade names, brand mixtures) via dna-seq/gero-drugs-module @ 6f5fcd36",
		Publisher: "PharmGKB/ClinPGx", Year: "2022",
		URL: "https://github.com/dna-seq/gero-drugs-module/tree/6f5fcd365101e364182019dcef811f7b8aada3b3", Licence: licPGKBNames,
	},
	"FDA_DRUGSATFDA_2021": {
		ID: "names-drugsatfda-2021", Title: "Drugs@FDA data files (Products, MarketingStatus, Applications) via TheJakeYoon/drugs @ 549cf346",
		Publisher: "US Food and Drug Administration", Year: "2021",
		URL: "https://github.com/TheJakeYoon/drugs/tree/549cf346ba9e833efbb535a4a63a21c38a4c79ed", Licence: licFDA,
	},
	"IN_AZ_MEDICINES_SUBSET": {
		ID: "names-in-az-subset", Title: "A-Z medicine dataset of India (rows 1–3,221; name, manufacturer, composition) via SanketRath/MediBuddy-API-Final @ decbbc07",
		Publisher: "Kaggle dataset (scraped from 1mg.com)", Year: "2025",
		URL: "https://github.com/SanketRath/MediBuddy-API-Final/tree/decbbc073d13a5d8dbba07cb420fa96365adb015", Licence: licIndiaNames,
	},
	"IN_1MG_MEDICINE_DETAILS": {
		ID: "names-in-1mg-details", Title: "1mg Medicine Details dataset (11,825 products: name, composition, manufacturer) via Jeyaa-NKS/TNSDC-NLP @ 92ecb3e1",
		Publisher: "Kaggle dataset (scraped from 1mg.com)", Year: "2024",
		URL: "https://github.com/Jeyaa-NKS/TNSDC-NLP/tree/92ecb3e135cf39298a85e0d6360a0a101c3a7400", Licence: licIndiaNames,
	},
	"IN_AZ_MEDICINES_FULL_PAGES": {
		ID: "names-in-az-full-pages", Title: "A-Z medicine dataset of India, full copy, clopidogrel-containing rows of the pages read, via tasmia-404/ai-priscription- @ 856f83a1",
		Publisher: "Kaggle dataset (scraped from 1mg.com)", Year: "2025",
		URL: "https://github.com/tasmia-404/ai-priscription-/tree/856f83a1c9154aff0ac447e4c544ecbc14864355", Licence: licIndiaNames,
	},
	"VSAC_ECQM_QICORE_2024": {
		ID: "ind-vsac-ecqm-2024", Title: "VSAC eCQM value sets (myocardial infarction, angina, coronary artery disease, PCI, peripheral arterial disease, atrial fibrillation, ischemic stroke, cerebrovascular disease) via cqframework/ecqm-content-qicore-2024 @ 9ebd48ff",
		Publisher: "NLM Value Set Authority Center; cqframework", Year: "2025",
		URL: "https://github.com/cqframework/ecqm-content-qicore-2024/tree/9ebd48ffebf2ed2489f3904cc8393ebf8979bfc9/input/vocabulary/valueset/external", Licence: licVSAC,
	},
	"CMS_ICD10CM_FY2021": {
		ID: "ind-cms-icd10cm-fy2021", Title: "ICD-10-CM order file FY2021 (CMS/CDC) via StefanoTrv/simple_icd_10_CM @ 79ed12a0",
		Publisher: "CMS / CDC NCHS", Year: "2021",
		URL: "https://github.com/StefanoTrv/simple_icd_10_CM/tree/79ed12a0b803df634544d8ba2394bb7b3d0a2fd9", Licence: licICD10CM,
	},
	"WHO_ICD10_2019": {
		ID: "ind-who-icd10-2019", Title: "WHO ICD-10 2019 (icd_10_v2019.xml) via StefanoTrv/simple_icd_10 @ bff0a1dc",
		Publisher: "World Health Organization", Year: "2019",
		URL: "https://github.com/StefanoTrv/simple_icd_10/tree/bff0a1dc45477f24d2e5f1ff90d69d5f13407f79", Licence: licWHOICD10,
	},
}

var (
	nameKinds = map[string]bool{
		engine.NameKindBrand: true, engine.NameKindGenericSynonym: true, engine.NameKindSalt: true,
		engine.NameKindAbbreviation: true, engine.NameKindCombination: true,
	}
	nameMarkets = map[string]bool{"US": true, "IN": true, "intl": true, "unknown": true}
	nameFlags   = map[string]bool{
		engine.NameFlagEnglishWord: true, engine.NameFlagStemEnglishWord: true,
		engine.NameFlagShort: true, engine.NameFlagResearchCode: true,
	}
	indicationSystems = map[string]bool{
		engine.SystemICD10CM: true, engine.SystemICD10: true, engine.SystemICD10PCS: true, engine.SystemSNOMED: true,
	}
)

// buildNames builds drug_names.json and indications.json.
func (b *builder) buildNames() error {
	dir := filepath.Join(b.dir, "names")
	if _, err := os.Stat(filepath.Join(dir, "SOURCES.md")); err != nil {
		return fmt.Errorf("names: %w", err)
	}
	if err := b.buildDrugNames(dir); err != nil {
		return err
	}
	return b.buildIndications(dir)
}

func (b *builder) namesSource(id, where string) (string, error) {
	src, ok := namesSources[id]
	if !ok {
		return "", fmt.Errorf("%s: unknown source_id %q", where, id)
	}
	return b.src.add(src), nil
}

func (b *builder) buildDrugNames(dir string) error {
	t, err := readCSV(dir, "drug_synonyms.csv", []string{"drug", "name", "kind", "market", "source_id", "ingredients", "brand_stem", "flags"}, nil)
	if err != nil {
		return err
	}
	nb := newNameBuilder()
	for _, r := range t.rows {
		drug, name, kind, market := r.s("drug"), r.s("name"), r.s("kind"), r.s("market")
		if _, ok := b.drugSet[drug]; !ok {
			return fmt.Errorf("%s: drug %q is not a knowledge drug", r.where(), drug)
		}
		if name == "" {
			return fmt.Errorf("%s: empty name", r.where())
		}
		if !nameKinds[kind] {
			return fmt.Errorf("%s: unknown kind %q", r.where(), kind)
		}
		if !nameMarkets[market] {
			return fmt.Errorf("%s: unknown market %q", r.where(), market)
		}
		sid, err := b.namesSource(r.s("source_id"), r.where())
		if err != nil {
			return err
		}
		ingredients := splitList(r.s("ingredients"), ";")
		if kind == engine.NameKindCombination && len(ingredients) < 2 {
			return fmt.Errorf("%s: combination %q lists %d ingredient(s)", r.where(), name, len(ingredients))
		}
		var flags []string
		for _, f := range splitList(r.s("flags"), ";") {
			if strings.HasPrefix(f, "also:") || strings.HasPrefix(f, "stem_also:") {
				other := f[strings.Index(f, ":")+1:]
				if _, ok := b.drugSet[other]; !ok {
					return fmt.Errorf("%s: flag %q names a drug the knowledge does not have", r.where(), f)
				}
				continue
			}
			if !nameFlags[f] {
				return fmt.Errorf("%s: unknown flag %q", r.where(), f)
			}
			flags = append(flags, f)
		}
		nb.add(name, kind, []string{drug}, market, sid, ingredients, r.s("brand_stem"), flags)
	}
	// The curated tables of the generator (curated.go): regimen
	// abbreviations and Indian brands read from public pages.
	if err := b.curatedNames(nb); err != nil {
		return err
	}
	// A combination's ingredient that is a knowledge drug by its name is
	// one of its drugs, whether or not the source also listed the product
	// under it (Ecosprin-AV is listed under atorvastatin only, yet its
	// composition names aspirin): otherwise the reader would name it as not
	// checked although the knowledge covers it.
	for _, dn := range nb.byKey {
		if dn.Kind != engine.NameKindCombination {
			continue
		}
		for _, in := range dn.Ingredients {
			if d := strings.ToLower(strings.TrimSpace(in)); b.drugSet[d] != nil {
				dn.Drugs = appendUniq(dn.Drugs, d)
			}
		}
	}
	b.kb.DrugNames = append(b.kb.DrugNames, nb.rows()...)
	return nil
}

// nameBuilder groups drug-name rows by (name, kind), case-insensitively:
// a name several sources or markets list is one row naming them all.
type nameBuilder struct {
	byKey map[nameKey]*knowledge.DrugName
	order []nameKey
}

type nameKey struct{ name, kind string }

func newNameBuilder() *nameBuilder {
	return &nameBuilder{byKey: map[nameKey]*knowledge.DrugName{}}
}

// add merges one source row into its (name, kind) row.
func (nb *nameBuilder) add(name, kind string, drugs []string, market, sid string, ingredients []string, stem string, flags []string) {
	name = strings.Join(strings.Fields(name), " ")
	k := nameKey{strings.ToLower(name), kind}
	dn := nb.byKey[k]
	if dn == nil {
		dn = &knowledge.DrugName{Name: name, Kind: kind}
		nb.byKey[k] = dn
		nb.order = append(nb.order, k)
	}
	for _, d := range drugs {
		dn.Drugs = appendUniq(dn.Drugs, d)
	}
	dn.Markets = appendUniq(dn.Markets, market)
	dn.SourceIDs = appendUniq(dn.SourceIDs, sid)
	for _, f := range flags {
		dn.Flags = appendUniq(dn.Flags, f)
	}
	for _, in := range ingredients {
		if !containsFold(dn.Ingredients, in) {
			dn.Ingredients = append(dn.Ingredients, in)
		}
	}
	if stem != "" && (dn.Stem == "" || stem < dn.Stem) {
		dn.Stem = stem
	}
}

// rows returns the rows sorted by name and kind, their lists sorted;
// only combinations and regimens keep their ingredients.
func (nb *nameBuilder) rows() []knowledge.DrugName {
	order := append([]nameKey(nil), nb.order...)
	sort.Slice(order, func(i, j int) bool {
		if order[i].name != order[j].name {
			return order[i].name < order[j].name
		}
		return order[i].kind < order[j].kind
	})
	out := make([]knowledge.DrugName, 0, len(order))
	for _, k := range order {
		dn := nb.byKey[k]
		if dn.Drugs == nil {
			dn.Drugs = []string{} // a regimen may cover no drug
		}
		sort.Strings(dn.Drugs)
		sort.Strings(dn.Markets)
		sort.Strings(dn.SourceIDs)
		sort.Strings(dn.Flags)
		if dn.Kind != engine.NameKindCombination && dn.Kind != engine.NameKindRegimen {
			dn.Ingredients = nil
		}
		out = append(out, *dn)
	}
	return out
}

func (b *builder) buildIndications(dir string) error {
	t, err := readCSV(dir, "indications.csv", []string{"population", "system", "code", "display", "source_id", "match", "cpic_basis"}, nil)
	if err != nil {
		return err
	}
	pops := map[string]bool{}
	b.eachIncludedRec(func(r *recRecord) {
		if r.Population != nil && *r.Population != "" {
			pops[*r.Population] = true
		}
	})
	seen := map[string]bool{}
	for _, r := range t.rows {
		ic := knowledge.IndicationCode{
			Population: r.s("population"), System: r.s("system"), Code: r.s("code"),
			Display: r.s("display"), Match: r.s("match"), Basis: r.s("cpic_basis"),
		}
		switch {
		case !pops[ic.Population]:
			return fmt.Errorf("%s: population %q is not a population of any recommendation row", r.where(), ic.Population)
		case !indicationSystems[ic.System]:
			return fmt.Errorf("%s: unknown system %q", r.where(), ic.System)
		case ic.Code == "" || ic.Display == "":
			return fmt.Errorf("%s: empty code or display", r.where())
		case ic.Match != "exact" && ic.Match != "prefix":
			return fmt.Errorf("%s: unknown match %q", r.where(), ic.Match)
		case ic.Basis != "named" && ic.Basis != "related" && ic.Basis != "not-named":
			return fmt.Errorf("%s: unknown cpic_basis %q", r.where(), ic.Basis)
		}
		k := ic.System + "|" + ic.Code + "|" + ic.Population
		if seen[k] {
			return fmt.Errorf("%s: duplicate code %s %s for %s", r.where(), ic.System, ic.Code, ic.Population)
		}
		seen[k] = true
		for _, id := range splitList(r.s("source_id"), ";") {
			sid, err := b.namesSource(id, r.where())
			if err != nil {
				return err
			}
			ic.SourceIDs = appendUniq(ic.SourceIDs, sid)
		}
		sort.Strings(ic.SourceIDs)
		for _, out := range recheckIndication(ic) {
			k := out.System + "|" + out.Code + "|" + out.Population
			if out.Population != ic.Population && seen[k] {
				continue // the data pack already lists the code there
			}
			seen[k] = true
			b.kb.Indications = append(b.kb.Indications, out)
		}
	}
	return nil
}

// Populations of the CPIC clopidogrel guideline that the title re-check
// moves codes between.
const (
	popACSPCI = "CVI ACS PCI"
	popNonACS = "CVI non-ACS non-PCI"
)

// recheckIndication re-checks a row of names/indications.csv against its
// code title (issue 21): a code whose title names unstable angina or a
// myocardial infarction is acute coronary syndrome, CPIC's "CVI ACS PCI".
//
//   - A "CVI non-ACS non-PCI" row whose title names unstable angina
//     (ICD-10-CM I25.110, I25.700, I25.710 … "… with unstable angina
//     pectoris") is moved to "CVI ACS PCI": unstable angina is acute
//     coronary syndrome (I20.0 "Unstable angina" is a "CVI ACS PCI" row of
//     the same table), whatever the atherosclerosis it is coded with.
//   - A "CVI non-ACS non-PCI" row whose title names an infarction (I25.2
//     "Old myocardial infarction", SNOMED CT "Past myocardial infarction …",
//     "Recent myocardial infarction", "Post infarct angina" …) is kept and a
//     "CVI ACS PCI" row is added: the title names an infarction, the data
//     pack placed it outside ACS because it is old or not current, and the
//     code alone does not say whether the patient is still within the
//     treatment that follows an acute coronary syndrome. The selector finds
//     both populations for such a code, so the code decides nothing alone:
//     every population is evaluated and the answer says so.
//
// Rows of other populations are returned as they are (the neurovascular
// rows name cerebral infarction, which is not coronary).
func recheckIndication(ic knowledge.IndicationCode) []knowledge.IndicationCode {
	if ic.Population != popNonACS {
		return []knowledge.IndicationCode{ic}
	}
	t := strings.ToLower(ic.Display)
	switch {
	case strings.Contains(t, "unstable angina"):
		moved := ic
		moved.Population = popACSPCI
		moved.Recheck = fmt.Sprintf("the data pack lists this code under %q; its title names unstable angina, which is acute coronary syndrome", popNonACS)
		return []knowledge.IndicationCode{moved}
	case strings.Contains(t, "infarct"):
		kept := ic
		kept.Recheck = fmt.Sprintf("the title names an infarction that the data pack reads as not current; the code is also listed under %q and does not decide between the two", popACSPCI)
		added := ic
		added.Population = popACSPCI
		added.Basis = "related"
		added.Recheck = fmt.Sprintf("the data pack lists this code under %q only; its title names an infarction, and the code alone does not say whether it is acute coronary syndrome", popNonACS)
		return []knowledge.IndicationCode{kept, added}
	}
	return []knowledge.IndicationCode{ic}
}

func appendUniq(ss []string, s string) []string {
	for _, x := range ss {
		if x == s {
			return ss
		}
	}
	return append(ss, s)
}

func containsFold(ss []string, s string) bool {
	for _, x := range ss {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
