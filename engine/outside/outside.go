// Package outside reads the calls that labs' own callers make for genes a
// VCF cannot settle: CYP2D6 copy number and structure (Cyrius, Aldy,
// StellarPGx, PyPGx), HLA types (OptiType, HLA-LA, arcasHLA) and PharmCAT's
// outside-call TSV, which carries any gene. Each reader follows the tool's
// documented output; the format is detected from the content.
//
// The package is pure: it reads only the io.Reader it is given and imports
// nothing but the standard library. It never guesses: a row it cannot read
// is a *ParseError naming the line, a caller's non-passing call is returned
// with Passing false and the caller's own words, and an HLA type below two
// fields or with alternatives is returned not passing. Turning a call into a
// phenotype (structural notation, activity score) is not done here.
package outside

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// MaxLineBytes bounds one line of any format; a longer line is refused.
const MaxLineBytes = 64 << 10

// Call is one caller's call for one gene of one sample.
type Call struct {
	// Sample is the sample the caller names; "" when the format names none
	// (PharmCAT outside calls, StellarPGx, arcasHLA, OptiType, HLA-LA).
	Sample string
	// Gene is the HGNC symbol ("CYP2D6", "HLA-B"); never empty.
	Gene string
	// Diplotype is the call as the caller wrote it ("*1/*2x2",
	// "*36+*10/*4", "A*11:01:01G/A*01:01:01G"); alternatives the caller
	// could not tell apart are joined by ";".
	Diplotype string
	// Phenotype and ActivityScore are the caller's own, when it gives them.
	Phenotype, ActivityScore string
	// HLAAlleles are both copies at two-field resolution ("HLA-B*15:02"),
	// for HLA typers; empty when a copy could not be read at two fields.
	HLAAlleles []string
	// Caller names the tool: "PharmCAT outside call", "Cyrius", "Aldy",
	// "StellarPGx", "PyPGx", "OptiType", "HLA-LA", "arcasHLA".
	Caller string
	// Passing is true only for a call the caller itself reports as a
	// confident, single answer.
	Passing bool
	// Quality holds the caller's words (or the reason) when not passing.
	Quality string
	// Source says where the call is: "line 3", "data.tsv line 2", "$.A".
	Source string
}

// File is one caller output.
type File struct {
	// Format names the detected format (the Caller of its calls).
	Format string
	Calls  []Call
}

// Caller names, one per format.
const (
	FormatPharmCAT   = "PharmCAT outside call"
	FormatCyrius     = "Cyrius"
	FormatAldy       = "Aldy"
	FormatStellarPGx = "StellarPGx"
	FormatPyPGx      = "PyPGx"
	FormatOptiType   = "OptiType"
	FormatHLALA      = "HLA-LA"
	FormatArcasHLA   = "arcasHLA"
)

// ParseError is a refusal; Line is 1-based (0 when the whole input is
// refused, e.g. too large).
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return "outside calls: " + e.Msg
	}
	return fmt.Sprintf("outside calls: line %d: %s", e.Line, e.Msg)
}

func errAt(line int, format string, args ...any) *ParseError {
	return &ParseError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Read reads one caller output of at most maxBytes bytes, detects its
// format and returns its calls. Errors are *ParseError.
func Read(r io.Reader, maxBytes int64) (File, error) {
	if maxBytes <= 0 {
		return File{}, errAt(0, "no input size limit given")
	}
	data, err := io.ReadAll(io.LimitReader(r, maxBytes+1))
	if err != nil {
		return File{}, errAt(0, "reading: %v", err)
	}
	if int64(len(data)) > maxBytes {
		return File{}, errAt(0, "input larger than %d bytes", maxBytes)
	}
	if bytes.HasPrefix(data, []byte("PK\x03\x04")) {
		return readPyPGxArchive(data, maxBytes)
	}
	lines, err := splitLines(data)
	if err != nil {
		return File{}, err
	}
	first := 0
	for first < len(lines) && strings.TrimSpace(lines[first]) == "" {
		first++
	}
	if first == len(lines) {
		return File{}, errAt(0, "empty input: no caller output")
	}
	head := lines[first]
	switch {
	case strings.HasPrefix(strings.TrimSpace(head), "{"):
		return readArcasHLA(data, first+1)
	case head == "Sample\tGenotype\tFilter":
		return readCyrius(lines, first)
	case strings.HasPrefix(head, "#Sample\tGene\tSolutionID\tMajor\tMinor"):
		return readAldy(lines, first)
	case isStellarPGx(lines, first):
		return readStellarPGx(lines, first)
	case strings.HasPrefix(head, "\tGenotype\tPhenotype\tHaplotype1\tHaplotype2"):
		return File{}, errAt(first+1, "a PyPGx results table on its own names no gene; give the results.zip archive, whose metadata.txt names it")
	case head == "\tA1\tA2\tB1\tB2\tC1\tC2\tReads\tObjective":
		return readOptiType(lines, first)
	case strings.HasPrefix(head, "Locus\tChromosome\tAllele\t"):
		return readHLALA(lines, first)
	}
	if n, ok := pharmCATFirstRow(lines); ok {
		return readPharmCAT(lines, n)
	}
	return File{}, errAt(first+1, "format not recognised: not PharmCAT outside calls, Cyrius, Aldy, StellarPGx, a PyPGx results archive, OptiType, HLA-LA or arcasHLA output")
}

// ReadNamed is Read for a named input (a file name, a request part): each
// call's Source starts with name ("cyrius.tsv line 2").
func ReadNamed(r io.Reader, maxBytes int64, name string) (File, error) {
	f, err := Read(r, maxBytes)
	for i := range f.Calls {
		f.Calls[i].Source = name + " " + f.Calls[i].Source
	}
	return f, err
}

// splitLines splits text into lines without their line ends, dropping a
// UTF-8 byte-order mark; it refuses invalid UTF-8, NUL bytes and lines
// longer than MaxLineBytes, naming the line.
func splitLines(data []byte) ([]string, error) {
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	var lines []string
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		var line []byte
		if i < 0 {
			line, data = data, nil
		} else {
			line, data = data[:i], data[i+1:]
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) > MaxLineBytes {
			return nil, errAt(n, "line longer than %d bytes", MaxLineBytes)
		}
		if !utf8.Valid(line) || bytes.IndexByte(line, 0) >= 0 {
			return nil, errAt(n, "not text (invalid UTF-8 or a NUL byte)")
		}
		lines = append(lines, string(line))
	}
	return lines, nil
}

func lineSource(i int) string { return fmt.Sprintf("line %d", i+1) }

// diplotypeDoubt says why a CYP2D6-style call written by a caller is not
// one diplotype of two haplotypes, or "" when it is: alternatives (";"),
// star alleles not assigned to haplotypes ("_"), no "/" or more than one.
func diplotypeDoubt(d string) string {
	switch {
	case d == "":
		return "no genotype"
	case strings.Contains(d, ";"):
		return "more than one possible genotype"
	case strings.Contains(d, "_"):
		return "star alleles not assigned to haplotypes"
	case strings.Count(d, "/") != 1:
		return "not a diplotype of two haplotypes"
	case strings.ContainsAny(d, " \t"):
		return "white space inside the genotype"
	}
	for _, h := range strings.Split(d, "/") {
		if h == "" {
			return "an empty haplotype"
		}
	}
	return ""
}
