// Package kbfile names the files of the generated knowledge base and
// defines the shape of meta.json. It is shared by the generator
// (knowledge/internal/gen) and the loader (package knowledge), so that the
// two agree on file names without the generator importing the embedded
// data it produces.
package kbfile

// Names of the generated JSON files under knowledge/data. Each file holds
// exactly one JSON value.
const (
	Sources         = "sources.json"
	Drugs           = "drugs.json"
	Genes           = "genes.json"
	RsIDs           = "rsids.json"
	Recommendations = "recommendations.json"
	Variants        = "variants.json"
	HLA             = "hla.json"
	States          = "states.json"
	Communities     = "communities.json"
	Herbs           = "herbs.json"
	Warfarin        = "warfarin.json"
	MetaFile        = "meta.json"
	Definitions     = "definitions.json"
	DrugNames       = "drug_names.json"
	Indications     = "indications.json"
)

// Hand-maintained or generated documentation files that are embedded with
// the data and covered by the digest.
const (
	Readme  = "README.md"
	Licence = "LICENCE.md"
)

// JSONFiles lists every JSON file of the knowledge base in name order.
var JSONFiles = []string{
	Communities, Definitions, DrugNames, Drugs, Genes, HLA, Herbs, Indications, MetaFile,
	Recommendations, RsIDs, Sources, States, Variants, Warfarin,
}

// Meta is the content of meta.json: the upstream data versions, as stated
// in the data pack, and the two parts of the knowledge version label.
type Meta struct {
	// CPICRelease is the cpic-data release of the snapshot ("1.56.0").
	CPICRelease string `json:"cpic_release"`
	// ClinPGxDate is the date of the ClinPGx guideline-annotation data the
	// CPIC recommendation rows come from ("2024-03-25").
	ClinPGxDate string `json:"clinpgx_date"`
	// DataVersions names each upstream snapshot and its version or date.
	DataVersions map[string]string `json:"data_versions"`
}

// Label builds the knowledge_version label from a content digest (hex) and
// the meta data: "kb-<first 12 hex of digest>+cpic-<release>+clinpgx-<date>".
func (m Meta) Label(digest string) string {
	d := digest
	if len(d) > 12 {
		d = d[:12]
	}
	return "kb-" + d + "+cpic-" + m.CPICRelease + "+clinpgx-" + m.ClinPGxDate
}
