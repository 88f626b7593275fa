package engine

// This file defines the knowledge rows that let the engine read drugs and
// clinical context as they are written in practice: the drug names of the
// US and Indian markets (drug_names.json) and the ICD-10 / SNOMED CT codes
// of the CPIC clopidogrel populations (indications.json). Both are
// generated from data/names of the data pack; every row names its sources.

// Kinds of a DrugName row.
const (
	NameKindBrand          = "brand"
	NameKindGenericSynonym = "generic-synonym"
	NameKindSalt           = "salt"
	NameKindAbbreviation   = "abbreviation"
	NameKindCombination    = "combination"
	// NameKindRegimen: an abbreviation of HIV, TB or cancer prescribing
	// for one drug or a regimen of several ("EFV", "ATV/r", "FOLFOX",
	// "HRZE"), with its expansion in Ingredients as the cited abbreviation
	// list gives it. Its Drugs are the ingredients the knowledge covers and
	// may be empty (HRZE: none of its four drugs has guidance here).
	NameKindRegimen = "regimen"
)

// Flags of a DrugName row that call for care before a match is trusted.
const (
	// NameFlagEnglishWord: the name is an ordinary English word.
	NameFlagEnglishWord = "english_word"
	// NameFlagStemEnglishWord: the brand stem is an ordinary English word.
	NameFlagStemEnglishWord = "stem_english_word"
	// NameFlagShort: the name has three characters or fewer.
	NameFlagShort = "short"
	// NameFlagResearchCode: a research code such as FK-506.
	NameFlagResearchCode = "research_code"
)

// DrugName is one name under which a covered drug is prescribed or sold:
// a brand, a salt form, a generic synonym, an abbreviation, or a
// combination product.
type DrugName struct {
	// Name is the name as the source writes it.
	Name string
	Kind string
	// Drugs are the covered drugs the name stands for (knowledge names):
	// one, or for a combination product or regimen every covered
	// ingredient (a regimen may cover none).
	Drugs []string
	// Markets are where the sources place the name: US, IN, intl, unknown.
	Markets []string
	// Stem is the product name cut before its strength or dose form
	// ("Clopilet 150 Tablet" → "Clopilet"), when the source gives one.
	Stem string
	// Ingredients are a combination's or a regimen's ingredients as the
	// source lists them (covered or not).
	Ingredients []string
	// Flags are NameFlag* values.
	Flags     []string
	SourceIDs []string
}

// Code systems of IndicationCode rows.
const (
	SystemICD10CM  = "ICD-10-CM"
	SystemICD10    = "ICD-10"
	SystemICD10PCS = "ICD-10-PCS"
	SystemSNOMED   = "SNOMED CT"
)

// IndicationCode assigns a diagnosis or procedure code to a guideline
// population (the CPIC clopidogrel populations).
type IndicationCode struct {
	Population string
	System     string
	Code       string
	Display    string
	// Match is "exact", or "prefix" for a category header that covers every
	// code starting with it.
	Match string
	// Basis is "named" (CPIC's population text names the condition),
	// "related" (assigned by the data extraction; needs clinical review) or
	// "not-named" (atrial fibrillation/flutter, which CPIC does not name).
	Basis string
	// Recheck says why the row's population differs from the data pack's
	// (the code title re-checked); empty when the row is as the data pack
	// has it.
	Recheck   string
	SourceIDs []string
}
