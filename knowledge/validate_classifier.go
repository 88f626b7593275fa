package knowledge

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/knowledge/internal/kbfile"
)

// Curated counts of the classifier substrate (interface spec §2.8).
const (
	ClassifierCohortCount    = 16
	ClassifierProteinCount   = 5
	ClassifierGraphNodeCount = 62
	ClassifierGraphEdgeCount = 54
	ClassifierCitationCount  = 10
	ClassifierDemoCaseCount  = 4
)

// standardResidues are the one-letter codes of the 20 standard amino acids.
const standardResidues = "ACDEFGHIKLMNPQRSTVWY"

// validateClassifier checks the classifier knowledge: sources known on
// every row; a square, symmetric matrix; sequences of standard residues
// whose length and MD5 match; unique ids; every cohort variant, demo case
// and graph row referring to rows that exist; the reference residue of
// every missense change on a substrate protein matching the sequence; and
// the curated counts.
func (v *validator) validateClassifier(kb *engine.Knowledge, ck *classify.Knowledge) {
	if ck == nil {
		v.add(kbfile.ClassifierSubstrate, 0, "", "no classifier knowledge")
		return
	}
	// Matrix.
	mf := kbfile.ClassifierMatrix
	m := ck.Matrix
	v.cite(mf, 0, "source_ids", m.SourceIDs)
	if len(m.Scores) != len(m.Alphabet) {
		v.add(mf, 0, "scores", "%d rows for %d symbols", len(m.Scores), len(m.Alphabet))
	} else {
		for i := range m.Scores {
			if len(m.Scores[i]) != len(m.Alphabet) {
				v.add(mf, 0, fmt.Sprintf("scores[%d]", i), "%d scores for %d symbols", len(m.Scores[i]), len(m.Alphabet))
				continue
			}
			for j := 0; j < i; j++ {
				if len(m.Scores[j]) == len(m.Alphabet) && m.Scores[i][j] != m.Scores[j][i] {
					v.add(mf, 0, fmt.Sprintf("scores[%d][%d]", i, j), "matrix is not symmetric")
				}
			}
		}
	}
	for _, r := range standardResidues {
		if !strings.ContainsRune(m.Alphabet, r) {
			v.add(mf, 0, "alphabet", "lacks the standard residue %c", r)
		}
	}

	// Proteins.
	pf := kbfile.ClassifierProteins
	proteins := map[string]classify.ProteinSequence{}
	for i, p := range ck.Proteins {
		row := i + 1
		v.cite(pf, row, "source_ids", p.SourceIDs)
		if _, dup := proteins[p.Gene]; dup {
			v.add(pf, row, "gene", "duplicate protein for %s", p.Gene)
		}
		proteins[p.Gene] = p
		if len(p.Sequence) != p.Length {
			v.add(pf, row, "length", "%s: %d residues, length says %d", p.Gene, len(p.Sequence), p.Length)
		}
		sum := md5.Sum([]byte(p.Sequence))
		if got := strings.ToUpper(hex.EncodeToString(sum[:])); got != p.MD5 {
			v.add(pf, row, "md5", "%s: sequence MD5 is %s, md5 says %s", p.Gene, got, p.MD5)
		}
		if i := strings.IndexFunc(p.Sequence, func(r rune) bool { return !strings.ContainsRune(standardResidues, r) }); i >= 0 {
			v.add(pf, row, "sequence", "%s: residue %d is not a standard amino acid", p.Gene, i+1)
		}
	}

	v.validateProfiles(ck) // validate_profiles.go

	// Protein changes.
	cf := kbfile.ClassifierChanges
	changes := map[string]bool{}
	for i, c := range ck.Changes {
		row := i + 1
		v.cite(cf, row, "source_ids", c.SourceIDs)
		if !reRsID.MatchString(c.RsID) {
			v.add(cf, row, "rsid", "%q is not an rsID", c.RsID)
		}
		key := c.RsID + ":" + c.Gene + ":" + c.Ref + ">" + c.Alt
		if changes[key] {
			v.add(cf, row, "", "duplicate row %s", key)
		}
		changes[key] = true
		if c.Consequence != classify.ConsequenceMissense {
			continue
		}
		ref, pos, ok := parseHGVSp(c.HGVSp)
		if !ok {
			v.add(cf, row, "hgvs_p", "missense change %q is not p.<Ref><pos><Alt>", c.HGVSp)
			continue
		}
		if p, ok := proteins[c.Gene]; ok {
			if pos > len(p.Sequence) || p.Sequence[pos-1] != ref {
				v.add(cf, row, "hgvs_p", "%s %s: the reference residue does not match the %s sequence", c.Gene, c.HGVSp, p.UniProt)
			}
		}
	}

	// Substrate.
	sf := kbfile.ClassifierSubstrate
	sub := ck.Substrate
	cohort := map[string]classify.CohortVariant{}
	for i, c := range sub.Cohort {
		field := fmt.Sprintf("cohort[%d]", i)
		v.cite(sf, 0, field+".source_ids", c.SourceIDs)
		if _, dup := cohort[c.ID]; dup {
			v.add(sf, 0, field+".id", "duplicate cohort id %q", c.ID)
		}
		cohort[c.ID] = c
		if !changes[c.RsID+":"+c.Gene+":"+c.Ref+">"+c.Alt] {
			v.add(sf, 0, field, "%s %s>%s is not a row of %s", c.RsID, c.Ref, c.Alt, cf)
		}
		if _, ok := proteins[c.Gene]; !ok {
			v.add(sf, 0, field+".gene", "%s is not a substrate protein", c.Gene)
		}
		v.frequency(sf, 0, field+".af_india", c.AFIndia)
	}
	for i, d := range sub.DemoCases {
		c, ok := cohort[d.ID]
		if !ok {
			v.add(sf, 0, fmt.Sprintf("demo_cases[%d].id", i), "%q is not a cohort variant", d.ID)
			continue
		}
		if c.Gene != d.Gene || c.HGVSp != d.HGVSp || c.RsID != d.RsID {
			v.add(sf, 0, fmt.Sprintf("demo_cases[%d]", i), "does not match cohort variant %q", d.ID)
		}
	}
	nodes := map[string]bool{}
	for i, n := range sub.Graph.Nodes {
		if nodes[n.ID] {
			v.add(sf, 0, fmt.Sprintf("graph.nodes[%d].id", i), "duplicate node %q", n.ID)
		}
		nodes[n.ID] = true
		if !strings.HasPrefix(n.ID, n.Type+":") {
			v.add(sf, 0, fmt.Sprintf("graph.nodes[%d].id", i), "node id %q does not start with its type %q", n.ID, n.Type)
		}
	}
	edges := map[string]bool{}
	for i, e := range sub.Graph.Edges {
		field := fmt.Sprintf("graph.edges[%d]", i)
		v.cite(sf, 0, field+".source_ids", e.SourceIDs)
		if !nodes[e.From] || !nodes[e.To] {
			v.add(sf, 0, field, "row %s → %s names a node that does not exist", e.From, e.To)
		}
		if !oneOf(e.Layer, classify.LayerPharmacogenomic, classify.LayerGuideline, classify.LayerNaturalProduct) {
			v.add(sf, 0, field+".layer", "unknown layer %q", e.Layer)
		}
		key := e.From + "|" + e.Relation + "|" + e.To
		if edges[key] {
			v.add(sf, 0, field, "duplicate row %s", key)
		}
		edges[key] = true
	}

	// Citations.
	tf := kbfile.ClassifierCitations
	cites := map[string]bool{}
	for i, c := range ck.Citations {
		row := i + 1
		v.cite(tf, row, "source_ids", c.SourceIDs)
		if cites[c.ID] {
			v.add(tf, row, "id", "duplicate citation %q", c.ID)
		}
		cites[c.ID] = true
		if c.PMID == "" && c.DOI == "" {
			v.add(tf, row, "", "citation %q has neither a PMID nor a DOI", c.ID)
		}
	}

	// Curated counts.
	for _, n := range []struct {
		file, what string
		got, want  int
	}{
		{sf, "cohort variants", len(sub.Cohort), ClassifierCohortCount},
		{pf, "protein sequences", len(ck.Proteins), ClassifierProteinCount},
		{sf, "graph nodes", len(sub.Graph.Nodes), ClassifierGraphNodeCount},
		{sf, "graph edges", len(sub.Graph.Edges), ClassifierGraphEdgeCount},
		{tf, "publication citations", len(ck.Citations), ClassifierCitationCount},
		{sf, "demonstration cases", len(sub.DemoCases), ClassifierDemoCaseCount},
	} {
		if n.got != n.want {
			v.add(n.file, 0, "", "%d %s, want %d", n.got, n.what, n.want)
		}
	}
}

// threeLetterCodes maps three-letter amino-acid codes to one-letter codes.
var threeLetterCodes = map[string]byte{
	"Ala": 'A', "Arg": 'R', "Asn": 'N', "Asp": 'D', "Cys": 'C', "Gln": 'Q', "Glu": 'E', "Gly": 'G', "His": 'H', "Ile": 'I',
	"Leu": 'L', "Lys": 'K', "Met": 'M', "Phe": 'F', "Pro": 'P', "Ser": 'S', "Thr": 'T', "Trp": 'W', "Tyr": 'Y', "Val": 'V',
}

// parseHGVSp reads "p.Arg139Cys" into the reference residue and position.
func parseHGVSp(s string) (ref byte, pos int, ok bool) {
	if len(s) < 9 || !strings.HasPrefix(s, "p.") {
		return 0, 0, false
	}
	r, ok1 := threeLetterCodes[s[2:5]]
	_, ok2 := threeLetterCodes[s[len(s)-3:]]
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	n := 0
	for _, c := range s[5 : len(s)-3] {
		if c < '0' || c > '9' {
			return 0, 0, false
		}
		n = n*10 + int(c-'0')
		if n > 100000 {
			return 0, 0, false
		}
	}
	return r, n, n > 0
}
