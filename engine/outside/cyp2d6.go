package outside

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// isGeneSymbol reports whether s looks like an HGNC symbol as callers write
// them: upper-case letters, digits and hyphens, starting with a letter
// ("CYP2D6", "HLA-B", "MT-RNR1").
func isGeneSymbol(s string) bool {
	if s == "" || len(s) > 32 || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// pharmCATFirstRow returns the index of the first data line when the text
// reads as PharmCAT's outside-call format: lines starting with # ignored,
// then a gene symbol and up to three more tab-separated fields.
func pharmCATFirstRow(lines []string) (int, bool) {
	for i, l := range lines {
		if strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "" {
			continue
		}
		f := strings.Split(l, "\t")
		return i, len(f) >= 2 && isGeneSymbol(strings.TrimSpace(f[0]))
	}
	return 0, false
}

// readPharmCAT reads PharmCAT's outside-call TSV
// (https://pharmcat.org/using/Outside-Call-Format/): one gene per line,
// HGNC symbol, then diplotype or single allele, phenotype and activity
// score, the last three usable alone or together; lines starting with #
// ignored. PharmCAT outside calls carry no quality: every row is passing.
func readPharmCAT(lines []string, from int) (File, error) {
	out := File{Format: FormatPharmCAT}
	for i := from; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "" {
			continue
		}
		f := strings.Split(l, "\t")
		if len(f) > 4 {
			return File{}, errAt(i+1, "%d tab-separated fields; a PharmCAT outside call has at most 4 (gene, diplotype, phenotype, activity score)", len(f))
		}
		for j := range f {
			f[j] = strings.TrimSpace(f[j])
		}
		for len(f) < 4 {
			f = append(f, "")
		}
		if !isGeneSymbol(f[0]) {
			return File{}, errAt(i+1, "%q is not a gene symbol", f[0])
		}
		if f[1] == "" && f[2] == "" && f[3] == "" {
			return File{}, errAt(i+1, "gene %s with no diplotype, phenotype or activity score", f[0])
		}
		out.Calls = append(out.Calls, Call{
			Gene: f[0], Diplotype: f[1], Phenotype: f[2], ActivityScore: f[3],
			Caller: FormatPharmCAT, Passing: true, Source: lineSource(i),
		})
	}
	return out, nil
}

// cyriusFilters are the Filter values Cyrius documents
// (https://github.com/Illumina/Cyrius README, "Interpreting the output").
var cyriusFilters = map[string]bool{
	"PASS": true, "More_than_one_possible_genotype": true,
	"Not_assigned_to_haplotypes": true, "LowQ_high_CN": true,
}

// readCyrius reads Cyrius's TSV: header Sample, Genotype, Filter; Genotype
// "None" is a no-call. Only Filter PASS with one diplotype is passing.
func readCyrius(lines []string, header int) (File, error) {
	out := File{Format: FormatCyrius}
	for i := header + 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "" {
			continue
		}
		f := strings.Split(lines[i], "\t")
		if len(f) != 3 {
			return File{}, errAt(i+1, "%d fields; Cyrius writes 3 (Sample, Genotype, Filter)", len(f))
		}
		sample, gt, filter := strings.TrimSpace(f[0]), strings.TrimSpace(f[1]), strings.TrimSpace(f[2])
		if sample == "" {
			return File{}, errAt(i+1, "no sample name")
		}
		c := Call{Sample: sample, Gene: "CYP2D6", Diplotype: gt, Caller: FormatCyrius, Source: lineSource(i)}
		switch {
		case gt == "None" || gt == "":
			c.Diplotype = ""
			c.Quality = "no call (Genotype None, Filter " + filter + ")"
		case filter != "PASS":
			c.Quality = filter
			if !cyriusFilters[filter] {
				c.Quality = "Filter " + filter + " (not a value Cyrius documents)"
			}
		default:
			if d := diplotypeDoubt(gt); d != "" {
				c.Quality = "Filter PASS but " + d
			} else {
				c.Passing = true
			}
		}
		out.Calls = append(out.Calls, c)
	}
	if len(out.Calls) == 0 {
		return File{}, errAt(header+1, "Cyrius header with no sample rows")
	}
	return out, nil
}

// readAldy reads Aldy's .aldy decomposition file
// (https://github.com/0xTCG/aldy README, "Output"; columns from
// aldy/diplotype.py OUTPUT_COLS): "#Sample Gene SolutionID Major Minor …"
// header, "#Solution N: …" comments, then one row per allele copy and
// mutation. Several solution IDs with different major diplotypes are
// alternatives Aldy could not tell apart: not passing. A "-like" major
// allele carries a novel functional variant: not passing.
func readAldy(lines []string, header int) (File, error) {
	type key struct{ sample, gene string }
	type acc struct {
		call   Call
		majors []string
		solIDs map[int]bool
	}
	var order []key
	calls := map[key]*acc{}
	for i := header; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "" {
			if strings.HasPrefix(l, "#Sample") && !strings.HasPrefix(l, "#Sample\tGene\tSolutionID\tMajor\tMinor") {
				return File{}, errAt(i+1, "Aldy header with unexpected columns")
			}
			continue
		}
		f := strings.Split(l, "\t")
		if len(f) < 7 {
			return File{}, errAt(i+1, "%d fields; an Aldy row has at least Sample, Gene, SolutionID, Major, Minor, Copy, Allele", len(f))
		}
		sample, gene, major := strings.TrimSpace(f[0]), strings.ToUpper(strings.TrimSpace(f[1])), strings.TrimSpace(f[3])
		sol, err := strconv.Atoi(strings.TrimSpace(f[2]))
		if err != nil || sol < 1 {
			return File{}, errAt(i+1, "SolutionID %q is not a positive number", f[2])
		}
		if !isGeneSymbol(gene) {
			return File{}, errAt(i+1, "%q is not a gene symbol", f[1])
		}
		if sample == "" || major == "" {
			return File{}, errAt(i+1, "no sample or no major diplotype")
		}
		k := key{sample, gene}
		a := calls[k]
		if a == nil {
			a = &acc{call: Call{Sample: sample, Gene: gene, Caller: FormatAldy, Source: lineSource(i)}, solIDs: map[int]bool{}}
			calls[k] = a
			order = append(order, k)
		}
		a.solIDs[sol] = true
		seen := false
		for _, m := range a.majors {
			seen = seen || m == major
		}
		if !seen {
			a.majors = append(a.majors, major)
		}
	}
	if len(order) == 0 {
		return File{}, errAt(header+1, "Aldy output with no solution rows (Aldy writes none in some cases, e.g. https://github.com/0xTCG/aldy/issues/45)")
	}
	out := File{Format: FormatAldy}
	for _, k := range order {
		a := calls[k]
		c := a.call
		c.Diplotype = strings.Join(a.majors, ";")
		switch {
		case len(a.majors) > 1:
			c.Quality = fmt.Sprintf("%d solutions with different major star alleles: %s", len(a.solIDs), strings.Join(a.majors, ", "))
		case strings.Contains(c.Diplotype, "-like"):
			c.Quality = "a '-like' allele: Aldy found a novel functional variant on it"
		default:
			if d := diplotypeDoubt(c.Diplotype); d != "" {
				c.Quality = d
			} else {
				c.Passing = true
			}
		}
		out.Calls = append(out.Calls, c)
	}
	return out, nil
}

// isStellarPGx reports whether the text is a StellarPGx .alleles file: a
// title line "<GENE> Star Allele Calling with StellarPGx" among its first
// lines (https://github.com/SBIMB/StellarPGx README, "Expected output").
func isStellarPGx(lines []string, from int) bool {
	for i := from; i < len(lines) && i < from+6; i++ {
		if strings.HasSuffix(strings.TrimSpace(lines[i]), " Star Allele Calling with StellarPGx") {
			return true
		}
	}
	return false
}

// readStellarPGx reads a StellarPGx .alleles file: the gene from the title,
// then the value under "Result:", "Activity score:" and "Metaboliser
// status:". Results that are not one diplotype (alternatives joined by
// " or ", a note after a tab such as "Duplication present", "Possible novel
// allele …", "*other") are not passing. The file names no sample.
func readStellarPGx(lines []string, from int) (File, error) {
	c := Call{Caller: FormatStellarPGx}
	valueAfter := func(i int) (string, int, bool) {
		for j := i + 1; j < len(lines); j++ {
			if v := strings.TrimSpace(lines[j]); v != "" {
				return v, j, true
			}
		}
		return "", 0, false
	}
	result := -1
	for i := from; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		switch {
		case strings.HasSuffix(l, " Star Allele Calling with StellarPGx") && c.Gene == "":
			g := strings.ToUpper(strings.TrimSuffix(l, " Star Allele Calling with StellarPGx"))
			if !isGeneSymbol(g) {
				return File{}, errAt(i+1, "%q is not a gene symbol", g)
			}
			c.Gene = g
		case l == "Result:":
			v, j, ok := valueAfter(i)
			if !ok {
				return File{}, errAt(i+1, "Result: with no value")
			}
			c.Diplotype, c.Source, result = v, lineSource(j), j
		case l == "Activity score:":
			if v, _, ok := valueAfter(i); ok {
				c.ActivityScore = v
			}
		case l == "Metaboliser status:":
			if v, _, ok := valueAfter(i); ok {
				c.Phenotype = v
			}
		}
	}
	if c.Gene == "" {
		return File{}, errAt(from+1, "StellarPGx output with no gene title")
	}
	if result < 0 {
		return File{}, errAt(len(lines), "StellarPGx output with no Result:")
	}
	d := c.Diplotype
	switch {
	case strings.Contains(d, "\t"):
		parts := strings.SplitN(d, "\t", 2)
		c.Diplotype, c.Quality = strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1])
		if strings.Contains(c.Diplotype, " or ") {
			c.Quality = "alternatives (" + c.Diplotype + "); " + c.Quality
		}
	case strings.HasPrefix(d, "Possible"):
		c.Diplotype, c.Quality = "", d
	case strings.Contains(d, " or "):
		c.Quality = "alternative diplotypes: " + d
	case strings.Contains(d, "*other"):
		c.Quality = "an allele StellarPGx names only '*other'"
	default:
		if q := diplotypeDoubt(d); q != "" {
			c.Quality = q
		} else {
			c.Passing = true
		}
	}
	return File{Format: FormatStellarPGx, Calls: []Call{c}}, nil
}

// readPyPGxArchive reads a PyPGx SampleTable[Results] archive (results.zip
// from run-ngs-pipeline): a ZIP with <dir>/metadata.txt (Key=Value lines;
// Gene, SemanticType) and <dir>/data.tsv (first column the sample, then
// Genotype, Phenotype, Haplotype1, Haplotype2, AlternativePhase,
// VariantData, CNV) (https://github.com/sbslee/pypgx README, "Archive
// file, semantic type, and metadata"; pypgx/sdk/utils.py Archive).
// Genotype "Indeterminate" is PyPGx's no-call: not passing.
func readPyPGxArchive(data []byte, maxBytes int64) (File, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return File{}, errAt(0, "not a readable ZIP archive: %v", err)
	}
	var meta, table *zip.File
	for _, f := range zr.File {
		switch {
		case f.Name == "metadata.txt" || strings.HasSuffix(f.Name, "/metadata.txt"):
			meta = f
		case f.Name == "data.tsv" || strings.HasSuffix(f.Name, "/data.tsv"):
			table = f
		}
	}
	if meta == nil || table == nil {
		return File{}, errAt(0, "a ZIP that is not a PyPGx archive (no metadata.txt and data.tsv)")
	}
	read := func(f *zip.File) ([]string, error) {
		rc, err := f.Open()
		if err != nil {
			return nil, errAt(0, "%s: %v", f.Name, err)
		}
		defer rc.Close()
		b, err := io.ReadAll(io.LimitReader(rc, maxBytes+1))
		if err != nil {
			return nil, errAt(0, "%s: %v", f.Name, err)
		}
		if int64(len(b)) > maxBytes {
			return nil, errAt(0, "%s larger than %d bytes once decompressed", f.Name, maxBytes)
		}
		lines, err := splitLines(b)
		if err != nil {
			pe := err.(*ParseError)
			pe.Msg = f.Name + ": " + pe.Msg
			return nil, pe
		}
		return lines, nil
	}
	ml, err := read(meta)
	if err != nil {
		return File{}, err
	}
	md := map[string]string{}
	for _, l := range ml {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok {
			md[k] = v
		}
	}
	if md["SemanticType"] != "SampleTable[Results]" {
		return File{}, errAt(0, "PyPGx archive of semantic type %q; only SampleTable[Results] (results.zip) holds calls", md["SemanticType"])
	}
	gene := strings.ToUpper(md["Gene"])
	if !isGeneSymbol(gene) {
		return File{}, errAt(0, "PyPGx metadata.txt names no gene (Gene=%q)", md["Gene"])
	}
	tl, err := read(table)
	if err != nil {
		return File{}, err
	}
	if len(tl) == 0 || !strings.HasPrefix(tl[0], "\tGenotype\tPhenotype\t") {
		return File{}, &ParseError{Line: 1, Msg: "data.tsv: not a PyPGx results table (header \\tGenotype\\tPhenotype\\t…)"}
	}
	out := File{Format: FormatPyPGx}
	for i := 1; i < len(tl); i++ {
		if strings.TrimSpace(tl[i]) == "" {
			continue
		}
		f := strings.Split(tl[i], "\t")
		if len(f) < 3 {
			return File{}, &ParseError{Line: i + 1, Msg: fmt.Sprintf("data.tsv: %d fields; a PyPGx results row has the sample, Genotype and Phenotype first", len(f))}
		}
		c := Call{
			Sample: strings.TrimSpace(f[0]), Gene: gene, Diplotype: strings.TrimSpace(f[1]),
			Phenotype: strings.TrimSpace(f[2]), Caller: FormatPyPGx, Source: "data.tsv " + lineSource(i),
		}
		if c.Sample == "" {
			return File{}, &ParseError{Line: i + 1, Msg: "data.tsv: no sample name"}
		}
		switch {
		case c.Diplotype == "Indeterminate" || c.Diplotype == "":
			c.Quality = "Genotype Indeterminate"
		default:
			if d := diplotypeDoubt(c.Diplotype); d != "" {
				c.Quality = d
			} else {
				c.Passing = true
			}
		}
		out.Calls = append(out.Calls, c)
	}
	if len(out.Calls) == 0 {
		return File{}, &ParseError{Line: 1, Msg: "data.tsv: no sample rows"}
	}
	return out, nil
}
