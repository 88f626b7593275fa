// Command profilegen builds knowledge/data/classifier_profiles.json: a
// per-position residue profile of each protein sequence of the data pack
// (data/classifier/pgx_proteins_human.fasta), from the homologous sequences
// of a Swiss-Prot release. It is not part of CI: it needs HMMER and BLAST+
// and the Swiss-Prot release of the Debian package metastudent-data.
//
//	apt-get install -y hmmer ncbi-blast+ metastudent-data
//	go run ./knowledge/internal/profilegen [-data ../shared/data] \
//	    [-db /usr/share/metastudent-data/dataset_201401] [-work DIR] \
//	    [-out knowledge/data/classifier_profiles.json]
//
// Steps (also written into the file's provenance):
//
//  1. Database. metastudent-data ships UniProtKB/Swiss-Prot release 2014_01
//     as three BLAST databases (the entries with Gene Ontology annotation
//     of each of the three GO aspects). Every sequence of the three is
//     dumped with blastdbcmd; the union by accession (an accession whose
//     sequences disagree is an error) is written as one FASTA file, sorted
//     by accession.
//  2. Search. For each query, jackhmmer (HMMER 3.3.2) with -N 3, --cpu 1,
//     --seed 42 and the default inclusion threshold (E ≤ 0.001), saving the
//     HMM of every iteration (--chkhmm) and the included hits (-A).
//  3. Alignment. The hit regions of the last iteration (unaligned), with the
//     query first and without hits identical to the whole query, are aligned
//     to the last iteration's HMM with hmmalign (A2M output). A query
//     position in a match state is "aligned"; one in an insert state has only
//     the query's residue.
//  4. Filter. A hit row is kept when it has a residue at ≥ 50 of the
//     query's aligned positions (no coverage fraction is required: the hits
//     of a multi-domain protein such as DPYD cover one domain each).
//  5. Weights. Each row weighs 1/n, n = the number of kept rows (itself
//     included) at ≥ 80% identity with it: identical residues at the
//     query's aligned positions divided by the larger of the two rows'
//     residue counts there (so that two fragments of different domains are
//     never similar because they share gaps).
//  6. Columns. At each query position: Neff = the sum of the weights of the
//     rows with a standard residue there; Freq = their weighted residue
//     frequencies, without pseudocounts (engine/classify adds the BLOSUM62
//     prior).
//
// The output is deterministic: jackhmmer runs with a fixed seed on one
// thread, rows and proteins are in a fixed order and numbers are rounded.
package main

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine/classify"
)

// Build parameters.
const (
	iterations      = 3
	minResidues     = 50
	identityCluster = 0.8
	frequencyScale  = 10000
	// dbSubsets are the three GO-aspect databases of metastudent-data.
	dbSubsets = "BPO CCO MFO"
)

func main() {
	data := flag.String("data", "../shared/data", "data pack directory (holds classifier/pgx_proteins_human.fasta)")
	db := flag.String("db", "/usr/share/metastudent-data/dataset_201401", "metastudent-data dataset directory")
	work := flag.String("work", filepath.Join(os.TempDir(), "pgxsafety-profilegen"), "scratch directory")
	out := flag.String("out", "knowledge/data/classifier_profiles.json", "output file")
	flag.Parse()
	if err := run(*data, *db, *work, *out); err != nil {
		log.Fatal(err)
	}
}

type query struct {
	gene, uniprot, seq string
}

func run(data, db, work, out string) error {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	tools, err := toolVersions()
	if err != nil {
		return err
	}
	pkg, err := packageVersion("metastudent-data")
	if err != nil {
		return err
	}
	release, err := os.ReadFile(filepath.Join(filepath.Dir(db), "dataversion.txt"))
	if err != nil {
		return err
	}
	seqs, err := dumpDatabase(db)
	if err != nil {
		return err
	}
	dbFasta := filepath.Join(work, "swissprot.fasta")
	dbSum, err := writeDatabase(dbFasta, seqs)
	if err != nil {
		return err
	}
	log.Printf("database: %d sequences, sha256 %s", len(seqs), dbSum)
	queries, err := readQueries(filepath.Join(data, "classifier", "pgx_proteins_human.fasta"))
	if err != nil {
		return err
	}
	ps := classify.ConservationProfiles{
		Description: "Per-position residue profiles of the classifier's proteins from homologous sequences of " +
			"UniProtKB/Swiss-Prot release 2014_01 (jackhmmer search, hmmalign alignment, 80%-identity sequence weights). " +
			"Freq are weighted frequencies without pseudocounts; engine/classify adds the BLOSUM62-derived prior " +
			"(docs/classifier.md §2).",
		Alphabet:       classify.ProfileAlphabet,
		FrequencyScale: frequencyScale,
		Provenance: classify.ProfileProvenance{
			Database: "UniProtKB/Swiss-Prot release " + releaseName(string(release)) + " (metastudent-data dataversion.txt: " +
				strings.TrimSpace(string(release)) + "), the entries with Gene Ontology annotation in any of the three " +
				"aspects (union of the BPO, CCO and MFO BLAST databases of metastudent-data, by accession)",
			DatabaseSequences: len(seqs),
			DatabaseSHA256:    dbSum,
			Package:           "Debian metastudent-data " + pkg + " (/usr/share/metastudent-data/dataset_201401)",
			Licence: "UniProtKB/Swiss-Prot content: CC BY 4.0 (UniProt Consortium); the Debian package is " +
				"distributed under GPL-2+. The file holds derived residue frequencies, not sequences.",
			Queries: "data/classifier/pgx_proteins_human.fasta of the data pack (the classifier's reference sequences)",
			Tools:   tools,
			Command: "apt-get install -y hmmer ncbi-blast+ metastudent-data && go run ./knowledge/internal/profilegen " +
				"-data ../shared/data -db /usr/share/metastudent-data/dataset_201401 -out knowledge/data/classifier_profiles.json",
			Steps: []string{
				"blastdbcmd -db dataset_201401/{" + strings.ReplaceAll(dbSubsets, " ", ",") + "}/goasp.fasta -entry all -outfmt '%t\\t%s'; union by accession; one FASTA sorted by accession",
				fmt.Sprintf("jackhmmer --cpu 1 --seed 42 -N %d --chkhmm <gene> -A <gene>.sto --noali <query> <database> (default inclusion E ≤ 0.001)", iterations),
				"hmmalign --outformat A2M <last-iteration HMM> <query + included hit regions, hits identical to the whole query dropped>",
				fmt.Sprintf("keep hit rows with a residue at ≥ %d of the query's match-state positions", minResidues),
				fmt.Sprintf("weight 1/n, n = rows at ≥ %g%% identity: identical residues at the query's match-state positions / the larger residue count of the two rows there", identityCluster*100),
				fmt.Sprintf("per query position: Neff = Σ weights of rows with a standard residue; Freq = weighted frequencies × %d, rounded", frequencyScale),
			},
			SourceIDs: []string{"classifier-swissprot-2014-01"},
		},
	}
	for _, q := range queries {
		p, err := buildProfile(work, dbFasta, seqs, q)
		if err != nil {
			return fmt.Errorf("%s: %w", q.gene, err)
		}
		log.Printf("%s: %d hits, %d rows, Neff %.1f, %d/%d aligned", p.Gene, p.Hits, p.Sequences, p.EffectiveSequences, p.AlignedPositions, p.Length)
		ps.Proteins = append(ps.Proteins, p)
	}
	b, err := encode(ps)
	if err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}

// releaseName writes a dataversion ("201401") as a UniProt release name
// ("2014_01").
func releaseName(v string) string {
	v = strings.TrimSpace(v)
	if len(v) == 6 {
		return v[:4] + "_" + v[4:]
	}
	return v
}

// toolVersions runs each tool and reads its version.
func toolVersions() ([]classify.ToolVersion, error) {
	reHMMER := regexp.MustCompile(`# HMMER ([0-9.]+)`)
	var out []classify.ToolVersion
	for _, t := range []string{"jackhmmer", "hmmalign"} {
		b, err := exec.Command(t, "-h").Output()
		if err != nil {
			return nil, fmt.Errorf("%s: %w (apt-get install hmmer)", t, err)
		}
		m := reHMMER.FindSubmatch(b)
		if m == nil {
			return nil, fmt.Errorf("%s: no version in its help", t)
		}
		out = append(out, classify.ToolVersion{Name: t, Version: "HMMER " + string(m[1])})
	}
	b, err := exec.Command("blastdbcmd", "-version").Output()
	if err != nil {
		return nil, fmt.Errorf("blastdbcmd: %w (apt-get install ncbi-blast+)", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	out = append(out, classify.ToolVersion{Name: "blastdbcmd", Version: strings.TrimSpace(strings.TrimPrefix(line, "blastdbcmd:"))})
	return out, nil
}

func packageVersion(name string) (string, error) {
	b, err := exec.Command("dpkg-query", "-W", "-f=${Version}", name).Output()
	if err != nil {
		return "", fmt.Errorf("dpkg-query %s: %w (apt-get install %s)", name, err, name)
	}
	return strings.TrimSpace(string(b)), nil
}

// dumpDatabase returns the union of the three GO-aspect databases,
// accession → sequence.
func dumpDatabase(dir string) (map[string]string, error) {
	seqs := map[string]string{}
	for _, sub := range strings.Fields(dbSubsets) {
		cmd := exec.Command("blastdbcmd", "-db", filepath.Join(dir, sub, "goasp.fasta"), "-entry", "all",
			"-line_length", "1000000", "-outfmt", "%t\t%s")
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			title, seq, ok := strings.Cut(sc.Text(), "\t")
			if !ok {
				return nil, fmt.Errorf("%s: line without a tab", sub)
			}
			acc, _, _ := strings.Cut(title, "|")
			if old, ok := seqs[acc]; ok && old != seq {
				return nil, fmt.Errorf("%s: accession %s has two sequences", sub, acc)
			}
			seqs[acc] = seq
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
		if err := cmd.Wait(); err != nil {
			return nil, fmt.Errorf("blastdbcmd %s: %w", sub, err)
		}
	}
	if len(seqs) == 0 {
		return nil, errors.New("empty database")
	}
	return seqs, nil
}

func writeDatabase(path string, seqs map[string]string) (string, error) {
	accs := make([]string, 0, len(seqs))
	for a := range seqs {
		accs = append(accs, a)
	}
	sort.Strings(accs)
	var buf bytes.Buffer
	for _, a := range accs {
		fmt.Fprintf(&buf, ">%s\n%s\n", a, seqs[a])
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:]), os.WriteFile(path, buf.Bytes(), 0o644)
}

// readQueries reads the data pack's FASTA (">ACC|ENTRY|GENE length=N
// md5=…"), sorted by gene.
func readQueries(path string) ([]query, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var qs []query
	for _, rec := range strings.Split(string(b), ">")[1:] {
		head, body, _ := strings.Cut(rec, "\n")
		f := strings.Split(strings.Fields(head)[0], "|")
		if len(f) != 3 {
			return nil, fmt.Errorf("header %q", head)
		}
		qs = append(qs, query{gene: f[2], uniprot: f[0], seq: strings.Join(strings.Fields(body), "")})
	}
	sort.Slice(qs, func(i, j int) bool { return qs[i].gene < qs[j].gene })
	return qs, nil
}

func runTool(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return nil
}

type row struct {
	name  string
	match []byte // residues in match states ('-' for none), upper case
}

func buildProfile(work, dbFasta string, db map[string]string, q query) (classify.ProteinProfile, error) {
	p := classify.ProteinProfile{Gene: q.gene, UniProt: q.uniprot, Length: len(q.seq), Iterations: iterations}
	sum := md5.Sum([]byte(q.seq))
	p.MD5 = strings.ToUpper(hex.EncodeToString(sum[:]))
	switch rel, ok := db[q.uniprot]; {
	case !ok:
		p.ReleaseEntry = "the release has no entry " + q.uniprot
	case rel == q.seq:
		p.ReleaseEntry = "identical to the release's entry " + q.uniprot
	default:
		p.ReleaseEntry = "differs from the release's entry " + q.uniprot + ": " + describeDiff(q.seq, rel)
	}
	dir := filepath.Join(work, q.gene)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return p, err
	}
	qfa := filepath.Join(dir, "query.fa")
	if err := os.WriteFile(qfa, []byte(">"+q.gene+"\n"+q.seq+"\n"), 0o644); err != nil {
		return p, err
	}
	sto := filepath.Join(dir, "hits.sto")
	chk := filepath.Join(dir, "chk")
	for _, old := range mustGlob(chk + "-*.hmm") {
		os.Remove(old)
	}
	if err := runTool("jackhmmer", "--cpu", "1", "--seed", "42", "-N", strconv.Itoa(iterations), "--chkhmm", chk,
		"-A", sto, "--noali", "-o", os.DevNull, qfa, dbFasta); err != nil {
		return p, err
	}
	hmm := lastCheckpoint(chk)
	if hmm == "" {
		return p, errors.New("jackhmmer wrote no HMM")
	}
	names, hits, err := readStockholm(sto)
	if err != nil {
		return p, err
	}
	p.Hits = len(hits)
	var fa bytes.Buffer
	fmt.Fprintf(&fa, ">query\n%s\n", q.seq)
	for i, h := range hits {
		if h == q.seq {
			continue
		}
		fmt.Fprintf(&fa, ">%s\n%s\n", names[i], h)
	}
	seqsFa := filepath.Join(dir, "seqs.fa")
	if err := os.WriteFile(seqsFa, fa.Bytes(), 0o644); err != nil {
		return p, err
	}
	a2m := filepath.Join(dir, "ali.a2m")
	if err := runTool("hmmalign", "--outformat", "A2M", "-o", a2m, hmm, seqsFa); err != nil {
		return p, err
	}
	rows, qmap, err := readA2M(a2m, q.seq)
	if err != nil {
		return p, err
	}
	// Match states that hold a query residue.
	var states []int
	for _, k := range qmap {
		if k >= 0 {
			states = append(states, k)
		}
	}
	p.AlignedPositions = len(states)
	kept := []row{rows[0]}
	for _, r := range rows[1:] {
		n := 0
		for _, k := range states {
			if r.match[k] != '-' {
				n++
			}
		}
		if n >= minResidues {
			kept = append(kept, r)
		}
	}
	p.Sequences = len(kept)
	// Project every row onto the query's aligned positions.
	proj := make([][]byte, len(kept))
	for i, r := range kept {
		proj[i] = make([]byte, len(states))
		for j, k := range states {
			proj[i][j] = r.match[k]
		}
	}
	w := weights(proj)
	var names2 []string
	for i, r := range kept {
		p.EffectiveSequences += w[i]
		names2 = append(names2, r.name)
	}
	p.EffectiveSequences = round(p.EffectiveSequences, 2)
	sort.Strings(names2)
	hs := sha256.Sum256([]byte(strings.Join(names2, "\n") + "\n"))
	p.HitsSHA256 = hex.EncodeToString(hs[:])

	idx := map[byte]int{}
	for i := 0; i < len(classify.ProfileAlphabet); i++ {
		idx[classify.ProfileAlphabet[i]] = i
	}
	for pos := 0; pos < len(q.seq); pos++ {
		col := classify.ProfileColumn{Ref: string(q.seq[pos]), Aligned: qmap[pos] >= 0}
		var counts [20]float64
		if k := qmap[pos]; k >= 0 {
			for i, r := range kept {
				if a, ok := idx[r.match[k]]; ok {
					counts[a] += w[i]
					col.Neff += w[i]
				}
			}
		} else {
			counts[idx[q.seq[pos]]] = w[0]
			col.Neff = w[0]
		}
		col.Freq = make([]int, 20)
		for a := range counts {
			col.Freq[a] = int(math.Round(counts[a] / col.Neff * frequencyScale))
		}
		col.Neff = round(col.Neff, 2)
		p.Columns = append(p.Columns, col)
	}
	return p, nil
}

func describeDiff(a, b string) string {
	if len(a) != len(b) {
		return fmt.Sprintf("length %d vs %d", len(a), len(b))
	}
	var d []string
	for i := range a {
		if a[i] != b[i] {
			d = append(d, fmt.Sprintf("%c%d (release %c)", a[i], i+1, b[i]))
		}
	}
	return "residue " + strings.Join(d, ", ")
}

func mustGlob(p string) []string {
	m, _ := filepath.Glob(p)
	return m
}

// lastCheckpoint returns the HMM of the highest iteration.
func lastCheckpoint(prefix string) string {
	best, bestN := "", 0
	for _, f := range mustGlob(prefix + "-*.hmm") {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(f, prefix+"-"), ".hmm"))
		if err == nil && n > bestN {
			best, bestN = f, n
		}
	}
	return best
}

// readStockholm returns the names and unaligned sequences of a Stockholm
// file, in file order.
func readStockholm(path string) ([]string, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var names []string
	seqs := map[string]*strings.Builder{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		t := sc.Text()
		if t == "" || strings.HasPrefix(t, "#") || t == "//" {
			continue
		}
		fs := strings.Fields(t)
		if len(fs) != 2 {
			return nil, nil, fmt.Errorf("%s: line %q", path, t)
		}
		b, ok := seqs[fs[0]]
		if !ok {
			b = &strings.Builder{}
			seqs[fs[0]] = b
			names = append(names, fs[0])
		}
		for _, c := range []byte(fs[1]) {
			if c != '-' && c != '.' {
				b.WriteByte(upper(c))
			}
		}
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = seqs[n].String()
	}
	return names, out, sc.Err()
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// readA2M reads hmmalign's A2M output (query first). It returns the rows'
// match-state strings and, for each query position, its match state or −1.
func readA2M(path, qseq string) ([]row, []int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var rows []row
	var qmap []int
	for i, rec := range strings.Split(string(b), ">")[1:] {
		head, body, _ := strings.Cut(rec, "\n")
		ali := strings.Join(strings.Fields(body), "")
		r := row{name: strings.Fields(head)[0]}
		pos := 0
		for j := 0; j < len(ali); j++ {
			c := ali[j]
			switch {
			case c >= 'A' && c <= 'Z' || c == '-':
				if i == 0 && c != '-' {
					qmap = append(qmap, len(r.match))
					pos++
				}
				r.match = append(r.match, c)
			case c >= 'a' && c <= 'z':
				if i == 0 {
					qmap = append(qmap, -1)
					pos++
				}
			case c == '.':
			default:
				return nil, nil, fmt.Errorf("%s: symbol %q", path, c)
			}
		}
		if i == 0 {
			if r.name != "query" || pos != len(qseq) {
				return nil, nil, fmt.Errorf("%s: the first row is not the whole query", path)
			}
		} else if len(r.match) != len(rows[0].match) {
			return nil, nil, fmt.Errorf("%s: row %s has %d match states, want %d", path, r.name, len(r.match), len(rows[0].match))
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("%s: empty", path)
	}
	return rows, qmap, nil
}

// weights returns 1/n for each row, n = rows with identity ≥
// identityCluster (itself included).
func weights(rows [][]byte) []float64 {
	n := make([]int, len(rows))
	res := make([]int, len(rows))
	for i, r := range rows {
		for _, c := range r {
			if c != '-' {
				res[i]++
			}
		}
	}
	for i := range rows {
		n[i]++
		for j := i + 1; j < len(rows); j++ {
			// Rows whose residue counts differ by more than the threshold
			// allows cannot reach it.
			lo, hi := min(res[i], res[j]), max(res[i], res[j])
			if float64(lo) < identityCluster*float64(hi) {
				continue
			}
			same := 0
			a, b := rows[i], rows[j]
			for k := range a {
				if a[k] == b[k] && a[k] != '-' {
					same++
				}
			}
			if float64(same) >= identityCluster*float64(hi) {
				n[i]++
				n[j]++
			}
		}
	}
	w := make([]float64, len(rows))
	for i := range w {
		w[i] = 1 / float64(n[i])
	}
	return w
}

func round(x float64, n int) float64 {
	p := math.Pow(10, float64(n))
	return math.Round(x*p) / p
}

// encode writes the profiles as JSON with one column per line.
func encode(ps classify.ConservationProfiles) ([]byte, error) {
	prots := ps.Proteins
	ps.Proteins = nil
	head, err := json.MarshalIndent(ps, "", "  ")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	// Replace the trailing "proteins": null with the rows.
	h := bytes.TrimSuffix(bytes.TrimSpace(head), []byte("}"))
	h = bytes.TrimSpace(h)
	h = bytes.TrimSuffix(h, []byte(`"proteins": null`))
	buf.Write(h)
	buf.WriteString("\"proteins\": [\n")
	for i, p := range prots {
		cols := p.Columns
		p.Columns = nil
		pb, err := json.MarshalIndent(p, "    ", "  ")
		if err != nil {
			return nil, err
		}
		pb = bytes.TrimSpace(pb)
		pb = bytes.TrimSuffix(pb, []byte("}"))
		pb = bytes.TrimSpace(pb)
		pb = bytes.TrimSuffix(pb, []byte(`"columns": null`))
		buf.WriteString("    ")
		buf.Write(pb)
		buf.WriteString("\"columns\": [\n")
		for j, c := range cols {
			cb, err := json.Marshal(c)
			if err != nil {
				return nil, err
			}
			buf.WriteString("        ")
			buf.Write(cb)
			if j < len(cols)-1 {
				buf.WriteByte(',')
			}
			buf.WriteByte('\n')
		}
		buf.WriteString("      ]\n    }")
		if i < len(prots)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("  ]\n}\n")
	var check classify.ConservationProfiles
	if err := json.Unmarshal(buf.Bytes(), &check); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return buf.Bytes(), nil
}
