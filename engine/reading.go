package engine

// This file holds the answer of the drug-name reader (engine/drugnames), which a
// Result carries.

// Status values of a DrugReading.
const (
	// DrugStatusRecognised: every part of the input was read as covered
	// drugs (strength, dose-form and route words aside).
	DrugStatusRecognised = "recognised"
	// DrugStatusPartial: some covered drug was read, and some part of the
	// input (an ingredient of a combination) was not recognised.
	DrugStatusPartial = "partly-recognised"
	// DrugStatusNeedsConfirmation: the input is a name the sources flag as
	// an ordinary English word or a short abbreviation; it was not checked
	// and did_you_mean names the drug it may stand for.
	DrugStatusNeedsConfirmation = "needs-confirmation"
	// DrugStatusNotRecognised: nothing in the input names a covered drug.
	DrugStatusNotRecognised = "not-recognised"
)

// DrugReading says how the drug input of a request was read.
type DrugReading struct {
	// Input is the drug as submitted.
	Input  string
	Status string
	// Via says how the drugs were identified: "name", "salt",
	// "generic-synonym", "abbreviation", "brand", "combination",
	// "regimen", "ingredient list", "RxNorm" or "ATC".
	Via string
	// Matched is the name or code that matched, as the knowledge writes it.
	Matched string
	// Drugs are the covered drugs that are checked, in knowledge names.
	Drugs []string
	// Ingredients are a combination product's ingredients as its source
	// lists them (covered or not).
	Ingredients []string
	// Unrecognised are the parts of the input that name no covered drug
	// (an ingredient without pharmacogenomic guidance in the knowledge, or
	// a name that was not understood).
	Unrecognised []string
	// Ignored are the strength, dose-form and route words set aside.
	Ignored []string
	// Notes explain anything the reader of the answer should confirm.
	Notes []string
	// DidYouMean lists covered drugs the input may have meant.
	DidYouMean []string
}

// Code systems a drug can be named by.
const (
	SystemRxNormURL = "http://www.nlm.nih.gov/research/umls/rxnorm"
	SystemATCURL    = "http://www.whocc.no/atc"
)
