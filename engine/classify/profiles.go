package classify

// This file defines the per-position conservation profiles of the
// classifier (classifier_profiles.json), built outside CI by
// knowledge/internal/profilegen from homologous sequences of a Swiss-Prot
// release, and read by the conservation method (profile.go).

// ProfileAlphabet is the residue order of every frequency vector of a
// profile: the 20 standard amino acids in alphabetical one-letter order.
const ProfileAlphabet = "ACDEFGHIKLMNPQRSTVWY"

// ConservationProfiles are the per-position residue profiles of the
// classifier's proteins, with their provenance.
type ConservationProfiles struct {
	// Description says what the file holds, in one paragraph.
	Description string `json:"description"`
	// Alphabet is ProfileAlphabet: the order of every Freq vector.
	Alphabet string `json:"alphabet"`
	// FrequencyScale is the integer a frequency is multiplied by before
	// rounding (10000: frequencies are stored in units of 1e-4).
	FrequencyScale int               `json:"frequency_scale"`
	Provenance     ProfileProvenance `json:"provenance"`
	// Proteins are the profiles, in gene order.
	Proteins []ProteinProfile `json:"proteins"`
}

// ProfileProvenance records how the profiles were built, so that anyone
// can rebuild them.
type ProfileProvenance struct {
	// Database names the sequence database and its release.
	Database string `json:"database"`
	// DatabaseSequences counts the sequences searched; DatabaseSHA256 is
	// the SHA-256 of the FASTA file the build wrote from it (sorted by
	// accession, one line per sequence).
	DatabaseSequences int    `json:"database_sequences"`
	DatabaseSHA256    string `json:"database_sha256"`
	// Package is the Debian package the database came from, with its
	// version.
	Package string `json:"package"`
	// Licence is the licence of the database content.
	Licence string `json:"licence"`
	// Queries names the query sequences (the data pack's reference
	// sequences).
	Queries string `json:"queries"`
	// Tools are the programs run, each with its version.
	Tools []ToolVersion `json:"tools"`
	// Command is the command that regenerates the file.
	Command string `json:"command"`
	// Steps lists, in order, what the build did, with every parameter.
	Steps     []string `json:"steps"`
	SourceIDs []string `json:"source_ids"`
}

// ToolVersion is one program of the build.
type ToolVersion struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ProteinProfile is the profile of one protein.
type ProteinProfile struct {
	Gene    string `json:"gene"`
	UniProt string `json:"uniprot"`
	Length  int    `json:"length"`
	// MD5 is the upper-case hex MD5 of the query sequence (it equals the
	// data pack's).
	MD5 string `json:"md5"`
	// ReleaseEntry says how the query compares with the database's entry
	// of the same accession.
	ReleaseEntry string `json:"release_entry"`
	// Iterations is the number of jackhmmer iterations run.
	Iterations int `json:"iterations"`
	// Hits counts the aligned hit regions jackhmmer included in its last
	// iteration; Sequences the rows kept for the profile (the query plus
	// the hits that pass the coverage filter); EffectiveSequences the sum
	// of their weights.
	Hits               int     `json:"hits"`
	Sequences          int     `json:"sequences"`
	EffectiveSequences float64 `json:"effective_sequences"`
	// AlignedPositions counts the query positions in a match state of the
	// profile HMM (the others have only the query's residue).
	AlignedPositions int `json:"aligned_positions"`
	// HitsSHA256 is the SHA-256 of the sorted names of the kept rows, one
	// per line.
	HitsSHA256 string `json:"hits_sha256"`
	// Columns are the query positions 1..Length in order.
	Columns []ProfileColumn `json:"columns"`
}

// ProfileColumn is the profile of one query position.
type ProfileColumn struct {
	// Ref is the query residue.
	Ref string `json:"ref"`
	// Aligned is false when the query residue lies in an insert state of
	// the profile HMM: no other sequence is aligned to it.
	Aligned bool `json:"aligned"`
	// Neff is the sum of the weights of the rows with a standard residue
	// at this position (the query included).
	Neff float64 `json:"neff"`
	// Freq are the weighted residue frequencies (no pseudocounts), in
	// units of 1/FrequencyScale, in Alphabet order.
	Freq []int `json:"freq"`
}
