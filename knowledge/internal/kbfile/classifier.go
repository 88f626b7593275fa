package kbfile

// Names of the classifier knowledge files under knowledge/data (generated
// from data/classifier; see knowledge/internal/gen/classifier.go). Each
// JSON file holds exactly one JSON value.
const (
	ClassifierMatrix    = "classifier_blosum62.json"
	ClassifierProteins  = "classifier_proteins.json"
	ClassifierChanges   = "classifier_variants.json"
	ClassifierSubstrate = "classifier_substrate.json"
	ClassifierCitations = "classifier_citations.json"
	// ClassifierProfiles holds the per-position conservation profiles. It
	// is not written by the generator but by knowledge/internal/profilegen
	// (run outside CI: it needs HMMER, BLAST+ and a Swiss-Prot release).
	ClassifierProfiles = "classifier_profiles.json"
	// ClassifierReadme documents the classifier files and their curation.
	ClassifierReadme = "CLASSIFIER.md"
)

// ClassifierJSONFiles lists the classifier JSON files in name order.
var ClassifierJSONFiles = []string{
	ClassifierMatrix, ClassifierCitations, ClassifierProfiles, ClassifierSubstrate, ClassifierProteins, ClassifierChanges,
}
