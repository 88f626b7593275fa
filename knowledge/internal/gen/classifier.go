package main

// This file builds the classifier knowledge (classifier_*.json and
// CLASSIFIER.md) from data/classifier of the data pack, and curates the
// substrate with the rules of engine/classify (classify.Select), applied to
// the knowledge built by the other steps.
//
// Inputs and checks:
//   - blosum62.txt: NCBI text format. The comment lines of the matrix file
//     are kept as its header (the two provenance lines the data pack
//     prepended go into the source instead); the 24×24 scores must be
//     symmetric.
//   - pgx_proteins_human.fasta and protein_sequences_manifest.csv: every
//     sequence must have the length and MD5 its header and the manifest
//     state, and consist of the 20 standard residues.
//   - variant_protein_changes.csv: one row per (rsID, alternate allele);
//     the alleles are taken from grch38_ref_alt. A missense row must parse,
//     its one-letter and HGVS forms must agree, and its reference residue
//     must match the sequence where the data pack has one (never re-based).

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/knowledge"
	"github.com/pgxsafety/pgxsafety/knowledge/internal/kbfile"
)

// Names of the classifier files under knowledge/data.
const (
	clsMatrixFile    = kbfile.ClassifierMatrix
	clsProteinsFile  = kbfile.ClassifierProteins
	clsChangesFile   = kbfile.ClassifierChanges
	clsSubstrateFile = kbfile.ClassifierSubstrate
	clsCitationsFile = kbfile.ClassifierCitations
	clsReadme        = kbfile.ClassifierReadme
)

// Licence statements of the classifier sources (data/classifier/SOURCES.md).
const (
	licBLOSUM     = "Biopython License Agreement / BSD-3 (biopython/biopython LICENSE.rst); the matrix itself is NCBI-distributed scientific data"
	licProteinGym = "MIT (OATML-Markslab/ProteinGym); UniProt's own terms were not checked"
	licCodeSeq    = "not stated (public GitHub code files whose repositories could not be resolved); sequence data; UniProt's own terms were not checked"
)

// classifierSources are the fixed sources of the classifier data, with
// their provenance as data/classifier/SOURCES.md states it.
var classifierSources = map[string]knowledge.Source{
	"classifier-blosum62": {
		ID:        "classifier-blosum62",
		Title:     "BLOSUM62 substitution matrix, NCBI text format, copied from biopython/biopython @ 8b4d499f (Bio/Align/substitution_matrices/data/BLOSUM62); Biopython states the matrix was obtained from NCBI (ftp://ftp.ncbi.nih.gov/blast/matrices/)",
		Publisher: "NCBI; Biopython",
		URL:       "https://github.com/biopython/biopython/blob/8b4d499f0e42567439e18a44986f342cc46e4faa/Bio/Align/substitution_matrices/data/BLOSUM62",
		Licence:   licBLOSUM,
	},
	"classifier-swissprot-2014-01": {
		ID:        "classifier-swissprot-2014-01",
		Title:     "UniProtKB/Swiss-Prot release 2014_01, the entries with Gene Ontology annotation, as shipped in the Debian package metastudent-data 2.0.1-8 (source of the homologous sequences of classifier_profiles.json, built by knowledge/internal/profilegen)",
		Publisher: "UniProt Consortium; Debian",
		Year:      "2014",
		URL:       "https://packages.debian.org/bookworm/metastudent-data",
		Licence:   "CC BY 4.0 (UniProtKB content); Debian package GPL-2+",
	},
	"henikoff-1992": {
		ID:        "henikoff-1992",
		Title:     "Henikoff S, Henikoff JG. Amino acid substitution matrices from protein blocks. Proc Natl Acad Sci USA 1992;89:10915 (the BLOSUM matrices)",
		Publisher: "Proceedings of the National Academy of Sciences USA",
		Year:      "1992",
		URL:       "https://pubmed.ncbi.nlm.nih.gov/1438297/",
		PMID:      "1438297",
		Licence:   licCitation,
	},
}

// proteinGymURL is the ProteinGym snapshot named in data/classifier/SOURCES.md.
const proteinGymURL = "https://github.com/OATML-Markslab/ProteinGym/tree/bb685245f8f4bb95a5b54b470396c23826cd6284/reference_files"

// buildClassifier reads data/classifier, curates the substrate and keeps
// the result in b.cls.
func (b *builder) buildClassifier() error {
	dir := filepath.Join(b.dir, "classifier")
	ck := &classify.Knowledge{}
	m, err := readMatrix(filepath.Join(dir, "blosum62.txt"))
	if err != nil {
		return err
	}
	for _, id := range []string{"classifier-blosum62", "henikoff-1992"} {
		m.SourceIDs = append(m.SourceIDs, b.src.add(classifierSources[id]))
	}
	// The source of classifier_profiles.json (written by profilegen, not
	// here); its provenance block cites it.
	b.src.add(classifierSources["classifier-swissprot-2014-01"])
	ck.Matrix = m

	seqs, err := b.readProteins(dir)
	if err != nil {
		return err
	}
	changes, err := b.readChanges(dir, seqs)
	if err != nil {
		return err
	}
	ck.Changes = changes

	sources := make(map[string]engine.Source, len(b.src.m))
	for id, s := range b.src.m {
		sources[id] = engine.Source(s)
	}
	sel, err := classify.Select(classify.SelectionInput{
		Knowledge: b.kb.Engine(), Sources: sources, Matrix: m, Sequences: seqs, Changes: changes,
	})
	if err != nil {
		return fmt.Errorf("classifier: %w", err)
	}
	ck.Proteins, ck.Substrate, ck.Citations = sel.Proteins, sel.Substrate, sel.Citations
	// Only the substrate proteins are kept, so only their sources are cited.
	for i := range ck.Proteins {
		p := &ck.Proteins[i]
		lic, url := licCodeSeq, ""
		if strings.Contains(p.Provenance, "OATML-Markslab/ProteinGym") {
			lic, url = licProteinGym, proteinGymURL
		}
		p.SourceIDs = []string{b.src.add(knowledge.Source{
			ID:      "classifier-seq-" + strings.ToLower(p.Gene),
			Title:   fmt.Sprintf("Human %s protein sequence %s (%s, %d aa, MD5 %s): %s", p.Gene, p.UniProt, p.Entry, p.Length, p.MD5, p.Provenance),
			URL:     url,
			Licence: lic,
		})}
	}
	for _, c := range ck.Citations {
		for _, id := range c.SourceIDs {
			if _, ok := b.src.m[id]; !ok {
				return fmt.Errorf("classifier: citation %s names source %q that no row cites", c.ID, id)
			}
		}
	}
	for _, e := range ck.Substrate.Graph.Edges {
		if len(e.SourceIDs) == 0 {
			return fmt.Errorf("classifier: graph row %s %s %s has no source", e.From, e.Relation, e.To)
		}
		for _, id := range e.SourceIDs {
			if _, ok := b.src.m[id]; !ok {
				return fmt.Errorf("classifier: graph row %s → %s names unknown source %q", e.From, e.To, id)
			}
		}
	}
	b.cls = ck
	return nil
}

// readMatrix reads an NCBI-format matrix file.
func readMatrix(path string) (classify.SubstitutionMatrix, error) {
	f, err := os.Open(path)
	if err != nil {
		return classify.SubstitutionMatrix{}, err
	}
	defer f.Close()
	m := classify.SubstitutionMatrix{Name: "BLOSUM62"}
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimRight(sc.Text(), " \t\r")
		switch {
		case strings.HasPrefix(t, "#"):
			h := strings.TrimSpace(strings.TrimPrefix(t, "#"))
			// The data pack prepended two provenance lines; they belong to
			// the source, not to the matrix header.
			if strings.HasPrefix(h, "Source:") || strings.HasPrefix(h, "Biopython README") {
				continue
			}
			m.Header = append(m.Header, h)
		case strings.TrimSpace(t) == "":
		case m.Alphabet == "":
			for _, s := range strings.Fields(t) {
				if len(s) != 1 {
					return m, fmt.Errorf("%s:%d: column symbol %q", path, line, s)
				}
				m.Alphabet += s
			}
		default:
			fs := strings.Fields(t)
			if len(fs) != len(m.Alphabet)+1 || fs[0] != string(m.Alphabet[len(m.Scores)]) {
				return m, fmt.Errorf("%s:%d: row does not match the column header", path, line)
			}
			row := make([]int, len(m.Alphabet))
			for i, s := range fs[1:] {
				if row[i], err = strconv.Atoi(s); err != nil {
					return m, fmt.Errorf("%s:%d: %w", path, line, err)
				}
			}
			m.Scores = append(m.Scores, row)
		}
	}
	if err := sc.Err(); err != nil {
		return m, err
	}
	if len(m.Scores) != len(m.Alphabet) {
		return m, fmt.Errorf("%s: %d rows for %d columns", path, len(m.Scores), len(m.Alphabet))
	}
	for i := range m.Scores {
		for j := range m.Scores {
			if m.Scores[i][j] != m.Scores[j][i] {
				return m, fmt.Errorf("%s: not symmetric at %c/%c", path, m.Alphabet[i], m.Alphabet[j])
			}
		}
	}
	return m, nil
}

var reFASTAHeader = regexp.MustCompile(`^>([A-Z0-9]+)\|([A-Z0-9_]+)\|([A-Z0-9]+) length=(\d+) md5=([0-9A-F]{32})$`)

// readProteins reads the FASTA file and the manifest; every sequence is
// checked against both.
func (b *builder) readProteins(dir string) ([]classify.ProteinSequence, error) {
	man, err := readCSV(dir, "protein_sequences_manifest.csv", []string{"gene", "uniprot", "entry", "length", "md5", "source"}, nil)
	if err != nil {
		return nil, err
	}
	manifest := map[string]row{}
	for _, r := range man.rows {
		manifest[r.s("gene")] = r
	}
	data, err := os.ReadFile(filepath.Join(dir, "pgx_proteins_human.fasta"))
	if err != nil {
		return nil, err
	}
	var out []classify.ProteinSequence
	var cur *classify.ProteinSequence
	var seq strings.Builder
	flush := func() error {
		if cur == nil {
			return nil
		}
		cur.Sequence = seq.String()
		seq.Reset()
		sum := md5.Sum([]byte(cur.Sequence))
		if got := strings.ToUpper(hex.EncodeToString(sum[:])); got != cur.MD5 {
			return fmt.Errorf("fasta %s: MD5 %s, header says %s", cur.Gene, got, cur.MD5)
		}
		if len(cur.Sequence) != cur.Length {
			return fmt.Errorf("fasta %s: %d residues, header says %d", cur.Gene, len(cur.Sequence), cur.Length)
		}
		for i := 0; i < len(cur.Sequence); i++ {
			if !strings.ContainsRune(classify.StandardResidues, rune(cur.Sequence[i])) {
				return fmt.Errorf("fasta %s: residue %d is %q, not a standard amino acid", cur.Gene, i+1, cur.Sequence[i])
			}
		}
		r, ok := manifest[cur.Gene]
		if !ok {
			return fmt.Errorf("fasta %s: not in protein_sequences_manifest.csv", cur.Gene)
		}
		if r.s("uniprot") != cur.UniProt || r.s("entry") != cur.Entry || r.s("length") != strconv.Itoa(cur.Length) || r.s("md5") != cur.MD5 {
			return fmt.Errorf("fasta %s: header disagrees with %s", cur.Gene, r.where())
		}
		cur.Provenance = r.s("source")
		out = append(out, *cur)
		cur = nil
		return nil
	}
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
		case strings.HasPrefix(l, ">"):
			if err := flush(); err != nil {
				return nil, err
			}
			h := reFASTAHeader.FindStringSubmatch(l)
			if h == nil {
				return nil, fmt.Errorf("pgx_proteins_human.fasta:%d: bad header %q", i+1, l)
			}
			n, _ := strconv.Atoi(h[4])
			cur = &classify.ProteinSequence{UniProt: h[1], Entry: h[2], Gene: h[3], Length: n, MD5: h[5]}
		default:
			if cur == nil {
				return nil, fmt.Errorf("pgx_proteins_human.fasta:%d: sequence before a header", i+1)
			}
			seq.WriteString(l)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(out) != len(man.rows) {
		return nil, fmt.Errorf("pgx_proteins_human.fasta has %d sequences, the manifest %d", len(out), len(man.rows))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Gene < out[j].Gene })
	return out, nil
}

// readChanges reads variant_protein_changes.csv.
func (b *builder) readChanges(dir string, seqs []classify.ProteinSequence) ([]classify.ProteinChange, error) {
	t, err := readCSV(dir, "variant_protein_changes.csv", []string{"rsid", "gene", "allele_label", "grch38_ref_alt", "hgvs_c",
		"protein_change_1letter", "protein_change_hgvs_p", "consequence_class", "uniprot", "residue_check", "clinvar_significance", "sources"}, nil)
	if err != nil {
		return nil, err
	}
	bySeq := map[string]classify.ProteinSequence{}
	for _, s := range seqs {
		bySeq[s.Gene] = s
	}
	var out []classify.ProteinChange
	seen := map[string]bool{}
	for _, r := range t.rows {
		parts := strings.Split(r.s("grch38_ref_alt"), "-")
		if len(parts) != 4 || parts[2] == "" || parts[3] == "" {
			return nil, fmt.Errorf("%s: grch38_ref_alt %q is not chrom-pos-ref-alt", r.where(), r.s("grch38_ref_alt"))
		}
		c := classify.ProteinChange{
			RsID: r.s("rsid"), Gene: r.s("gene"), AlleleLabel: r.s("allele_label"), GRCh38: r.s("grch38_ref_alt"),
			Ref: parts[2], Alt: parts[3], HGVSc: r.s("hgvs_c"), Change: r.s("protein_change_1letter"),
			HGVSp: r.s("protein_change_hgvs_p"), Consequence: r.s("consequence_class"), UniProt: r.s("uniprot"),
			ResidueCheck: r.s("residue_check"),
		}
		if _, ok := calling.NormaliseRsID(c.RsID); !ok {
			return nil, fmt.Errorf("%s: rsid %q", r.where(), c.RsID)
		}
		key := c.RsID + ":" + c.Gene + ":" + c.Ref + ">" + c.Alt
		if seen[key] {
			return nil, fmt.Errorf("%s: duplicate row for %s", r.where(), key)
		}
		seen[key] = true
		if r.s("clinvar_significance") != "" {
			return nil, fmt.Errorf("%s: clinvar_significance is set; SOURCES.md says it is empty for every row — review the data pack", r.where())
		}
		if c.Consequence == classify.ConsequenceMissense {
			s1, err1 := classify.ParseProteinChange(c.Change)
			s3, err3 := classify.ParseProteinChange(c.HGVSp)
			if err1 != nil || err3 != nil || s1 != s3 {
				return nil, fmt.Errorf("%s: missense change %q / %q does not parse to one substitution", r.where(), c.Change, c.HGVSp)
			}
			if p, ok := bySeq[c.Gene]; ok {
				if s1.Pos > len(p.Sequence) || p.Sequence[s1.Pos-1] != s1.Ref {
					return nil, fmt.Errorf("%s: %s: reference residue does not match the %s sequence", r.where(), c.Change, c.Gene)
				}
			}
		}
		c.SourceIDs = []string{b.classifierText(r.s("sources"))}
		out = append(out, c)
	}
	return out, nil
}

// classifierText cites a free-text source of the protein-change table:
// id "classifier-" + the first 8 hex digits of SHA-256(text); the title is
// the text, the URL and PMID the first found in it.
func (b *builder) classifierText(text string) string {
	text = strings.TrimSpace(text)
	sum := sha256.Sum256([]byte(text))
	src := knowledge.Source{ID: "classifier-" + hex.EncodeToString(sum[:])[:8], Title: text, URL: firstURL(text)}
	if m := rePMID.FindStringSubmatch(text); m != nil {
		src.PMID = m[1]
	}
	// Every row's protein change comes from the PyPGx table; a cDNA name
	// comes from PharmCAT data or from the literature.
	lic := []string{licPyPGx}
	switch {
	case strings.Contains(text, "cDNA: PharmCAT"):
		lic = append(lic, licPharmCAT)
	case strings.Contains(text, "cDNA:"):
		lic = append(lic, licLiterature)
	}
	src.Licence = strings.Join(lic, "; ")
	return b.src.add(src)
}

// classifierFiles encodes the classifier knowledge into files.
func (b *builder) classifierFiles(files map[string][]byte) error {
	ck := b.cls
	if ck == nil {
		return fmt.Errorf("classifier: not built")
	}
	var err error
	enc := func(name string, f func() ([]byte, error)) {
		if err == nil {
			files[name], err = f()
		}
	}
	enc(clsMatrixFile, func() ([]byte, error) { return encodeMatrix(ck.Matrix) })
	enc(clsProteinsFile, func() ([]byte, error) { return encodeRows(ck.Proteins) })
	enc(clsChangesFile, func() ([]byte, error) { return encodeRows(ck.Changes) })
	enc(clsCitationsFile, func() ([]byte, error) { return encodeRows(ck.Citations) })
	enc(clsSubstrateFile, func() ([]byte, error) { return encodeIndented(ck.Substrate) })
	if err != nil {
		return err
	}
	files[clsReadme] = []byte(b.classifierReadme())
	return nil
}

// encodeRows writes a slice one element per line, like encodeJSON.
func encodeRows[T any](rows []T) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("[")
	for i, r := range rows {
		if i > 0 {
			buf.WriteString(",")
		}
		buf.WriteString("\n")
		m, err := marshal(r)
		if err != nil {
			return nil, err
		}
		buf.Write(m)
	}
	if len(rows) > 0 {
		buf.WriteString("\n")
	}
	buf.WriteString("]\n")
	return buf.Bytes(), nil
}

// encodeIndented writes v indented by one space per level, without HTML
// escaping.
func encodeIndented(v any) ([]byte, error) {
	m, err := marshal(v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, m, "", " "); err != nil {
		return nil, err
	}
	buf.WriteString("\n")
	return buf.Bytes(), nil
}

// encodeMatrix writes the matrix with one score row per line.
func encodeMatrix(m classify.SubstitutionMatrix) ([]byte, error) {
	var buf bytes.Buffer
	field := func(name string, v any, last bool) error {
		j, err := marshal(v)
		if err != nil {
			return err
		}
		fmt.Fprintf(&buf, "%q:", name)
		buf.Write(j)
		if !last {
			buf.WriteString(",\n")
		}
		return nil
	}
	buf.WriteString("{\n")
	if err := field("name", m.Name, false); err != nil {
		return nil, err
	}
	if err := field("alphabet", m.Alphabet, false); err != nil {
		return nil, err
	}
	buf.WriteString("\"scores\":[\n")
	for i, r := range m.Scores {
		j, err := marshal(r)
		if err != nil {
			return nil, err
		}
		buf.Write(j)
		if i < len(m.Scores)-1 {
			buf.WriteString(",")
		}
		buf.WriteString("\n")
	}
	buf.WriteString("],\n")
	if err := field("header", m.Header, false); err != nil {
		return nil, err
	}
	if err := field("source_ids", m.SourceIDs, true); err != nil {
		return nil, err
	}
	buf.WriteString("\n}\n")
	return buf.Bytes(), nil
}

// classifierReadme documents the classifier files and their curation.
func (b *builder) classifierReadme() string {
	ck := b.cls
	var w strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&w, format, a...) }
	sub := ck.Substrate
	p("# Classifier knowledge\n\n")
	p("Generated by `knowledge/internal/gen` (classifier.go) from `data/classifier` of the data pack and the rest of\n")
	p("the knowledge; regenerate with `go generate ./knowledge`. Used by `engine/classify` (see `docs/classifier.md`).\n\n")
	p("| file | content |\n|---|---|\n")
	p("| `%s` | the %s matrix (%d symbols), its header lines, its sources |\n", clsMatrixFile, ck.Matrix.Name, len(ck.Matrix.Alphabet))
	p("| `%s` | the %d substrate protein sequences with provenance |\n", clsProteinsFile, len(ck.Proteins))
	p("| `%s` | the %d rows of the rsID → protein-change table (one per rsID and alternate allele) |\n", clsChangesFile, len(ck.Changes))
	p("| `%s` | the curated substrate: rules, protein selection, cohort (%d), demonstration cases (%d), graph (%d nodes, %d edges) |\n",
		clsSubstrateFile, len(sub.Cohort), len(sub.DemoCases), len(sub.Graph.Nodes), len(sub.Graph.Edges))
	p("| `%s` | the %d publication citations |\n", clsCitationsFile, len(ck.Citations))
	p("| `%s` | per-position homolog profiles of the data pack's protein sequences; **not written by this generator** but by `knowledge/internal/profilegen` (outside CI, docs/classifier.md §2.1) |\n\n", kbfile.ClassifierProfiles)

	p("## Substrate proteins\n\nRule: %s\n\n", sub.ProteinRule)
	p("| gene | UniProt | missense changes | clinical missense (No/Decreased function alone) | selected |\n|---|---|---|---|---|\n")
	for _, s := range sub.ProteinSelection {
		p("| %s | %s | %d | %s | %t |\n", s.Gene, s.UniProt, s.MissenseChanges, strings.Join(s.ClinicalMissense, ", "), s.Selected)
	}
	p("\n## Cohort\n\nRule: %s\n\n", sub.CohortRule)
	p("| id | rsID | allele | protein change | CPIC allele | function | af_india |\n|---|---|---|---|---|---|---|\n")
	for _, c := range sub.Cohort {
		af := "—"
		if c.AFIndia != nil {
			af = strconv.FormatFloat(*c.AFIndia, 'f', -1, 64)
		}
		p("| %s | %s | %s>%s | %s | %s | %s | %s |\n", c.ID, c.RsID, c.Ref, c.Alt, c.HGVSp, c.Allele, c.Function, af)
	}
	p("\n## Demonstration cases\n\nRule: %s\n\n", sub.DemoRule)
	for _, d := range sub.DemoCases {
		p("- `%s`: %s\n", d.ID, d.Rationale)
	}
	layers := map[string]int{}
	types := map[string]int{}
	for _, e := range sub.Graph.Edges {
		layers[e.Layer]++
	}
	for _, n := range sub.Graph.Nodes {
		types[n.Type]++
	}
	p("\n## Knowledge graph\n\nRule: %s\n\n", sub.GraphRule)
	p("Nodes: %d (", len(sub.Graph.Nodes))
	for i, t := range sortedKeys(types) {
		if i > 0 {
			p(", ")
		}
		p("%s %d", t, types[t])
	}
	p("). Edges: %d (", len(sub.Graph.Edges))
	for i, l := range sortedKeys(layers) {
		if i > 0 {
			p(", ")
		}
		p("%s %d", l, layers[l])
	}
	p(").\n\n")
	p("## Publication citations\n\nRule: %s\n\n", sub.CitationRule)
	for _, c := range ck.Citations {
		p("- %s — %s (%s)\n", c.Citation, c.Role, c.URL)
	}
	p("\n## Licences\n\n")
	p("- BLOSUM62: %s.\n", licBLOSUM)
	p("- Protein sequences from ProteinGym: %s; the others: %s.\n", licProteinGym, licCodeSeq)
	p("- Protein changes: %s; cDNA names from the literature cited per row (facts only).\n", licPyPGx)
	p("- The data pack has no ortholog or family alignment (data/classifier/SOURCES.md). The per-position profiles of\n")
	p("  `" + kbfile.ClassifierProfiles + "` are built outside this generator by `knowledge/internal/profilegen` from\n")
	p("  UniProtKB/Swiss-Prot release 2014_01 (Debian package metastudent-data; CC BY 4.0); its provenance block names the\n")
	p("  command, tools and versions (docs/classifier.md §2).\n")
	return w.String()
}
