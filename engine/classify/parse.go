package classify

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// StandardResidues are the one-letter codes of the 20 standard amino acids.
const StandardResidues = "ACDEFGHIKLMNPQRSTVWY"

// threeLetter maps the one-letter code of each standard amino acid to its
// three-letter code (IUPAC-IUB).
var threeLetter = map[byte]string{
	'A': "Ala", 'R': "Arg", 'N': "Asn", 'D': "Asp", 'C': "Cys",
	'Q': "Gln", 'E': "Glu", 'G': "Gly", 'H': "His", 'I': "Ile",
	'L': "Leu", 'K': "Lys", 'M': "Met", 'F': "Phe", 'P': "Pro",
	'S': "Ser", 'T': "Thr", 'W': "Trp", 'Y': "Tyr", 'V': "Val",
}

// oneLetter is the inverse of threeLetter, keyed by the lower-case
// three-letter code.
var oneLetter = func() map[string]byte {
	m := make(map[string]byte, len(threeLetter))
	for one, three := range threeLetter {
		m[strings.ToLower(three)] = one
	}
	return m
}()

// nonStandard are three-letter codes that name residues outside the 20
// standard amino acids (selenocysteine, pyrrolysine, the ambiguity codes).
var nonStandard = map[string]bool{"sec": true, "pyl": true, "xaa": true, "asx": true, "glx": true, "xle": true}

// MaxProteinChangeLength bounds the accepted text of a protein change.
const MaxProteinChangeLength = 64

// maxPosition bounds the residue number the parser accepts; the longest
// human protein is far shorter, so a larger number is a typing error.
const maxPosition = 100000

// Substitution is a single amino-acid substitution: the reference residue
// Ref at the 1-based position Pos replaced by Alt (one-letter codes of
// standard amino acids, Ref ≠ Alt).
type Substitution struct {
	Ref byte
	Pos int
	Alt byte
}

// HGVS returns the three-letter HGVS protein notation ("p.Ala154Thr").
func (s Substitution) HGVS() string {
	return "p." + threeLetter[s.Ref] + strconv.Itoa(s.Pos) + threeLetter[s.Alt]
}

// Short returns the one-letter notation ("A154T").
func (s Substitution) Short() string {
	return string(s.Ref) + strconv.Itoa(s.Pos) + string(s.Alt)
}

// ErrMalformed is the kind of a protein change the parser cannot read.
var ErrMalformed = errors.New("malformed protein change")

// ErrNotMissense is the kind of a well-formed protein change that is not a
// missense substitution (stop-gain, synonymous, frameshift, …).
var ErrNotMissense = errors.New("not a missense substitution")

// ParseError says why a protein change was rejected. It wraps ErrMalformed
// or ErrNotMissense.
type ParseError struct {
	// Input is the text as given (trimmed, at most MaxProteinChangeLength
	// bytes of it).
	Input string
	// Consequence names the non-missense class ("stop-gain", "synonymous",
	// "frameshift", …); empty for a malformed change.
	Consequence string
	Reason      string
	kind        error
}

func (e *ParseError) Error() string { return e.Reason }

// Unwrap returns ErrMalformed or ErrNotMissense.
func (e *ParseError) Unwrap() error { return e.kind }

func malformed(in, format string, args ...any) error {
	return &ParseError{Input: in, Reason: fmt.Sprintf(format, args...), kind: ErrMalformed}
}

func notMissense(in, consequence string) error {
	return &ParseError{Input: in, Consequence: consequence,
		Reason: fmt.Sprintf("%q is a %s change, not a missense substitution; only missense substitutions can be classified", in, consequence),
		kind:   ErrNotMissense}
}

// ParseProteinChange reads a single amino-acid substitution written in HGVS
// protein notation with three-letter codes ("p.Arg139Cys", "p.(Arg139Cys)",
// "Arg139Cys") or one-letter codes ("p.R139C", "R139C"). Three-letter codes
// are matched without regard to case; "p." is optional. A stop ("Ter", "*",
// or "X" in one-letter form), "=", a frameshift ("fs…"), a deletion,
// duplication, insertion, extension or "?" is reported as ErrNotMissense
// with its class; anything else that is not a substitution of two standard
// amino acids is ErrMalformed. The reference residue is not checked
// against any sequence here.
func ParseProteinChange(s string) (Substitution, error) {
	in := strings.TrimSpace(s)
	if len(in) > MaxProteinChangeLength {
		return Substitution{}, malformed(in[:MaxProteinChangeLength], "protein change is longer than %d characters", MaxProteinChangeLength)
	}
	if in == "" {
		return Substitution{}, malformed(in, "protein change is empty")
	}
	body := in
	if strings.HasPrefix(body, "p.") || strings.HasPrefix(body, "P.") {
		body = body[2:]
	}
	if strings.HasPrefix(body, "(") && strings.HasSuffix(body, ")") && len(body) >= 2 {
		body = body[1 : len(body)-1]
	}
	// Split into reference, position and the rest.
	i := 0
	for i < len(body) && isLetter(body[i]) {
		i++
	}
	j := i
	for j < len(body) && body[j] >= '0' && body[j] <= '9' {
		j++
	}
	refText, posText, rest := body[:i], body[i:j], body[j:]
	if refText == "" || posText == "" {
		return Substitution{}, malformed(in, "%q is not a protein substitution such as p.Arg139Cys or R139C", in)
	}
	var ref byte
	three := false
	switch len(refText) {
	case 1:
		c := upper(refText[0])
		if !isStandard(c) {
			return Substitution{}, malformed(in, "%q: %q is not one of the 20 standard amino acids", in, refText)
		}
		ref = c
	case 3:
		c, err := residue3(in, refText)
		if err != nil {
			return Substitution{}, err
		}
		ref, three = c, true
	default:
		return Substitution{}, malformed(in, "%q: %q is not an amino-acid code (one letter, or three as in Arg)", in, refText)
	}
	if len(posText) > 6 {
		return Substitution{}, malformed(in, "%q: position %s is out of range", in, posText)
	}
	pos, err := strconv.Atoi(posText)
	if err != nil || pos < 1 || pos > maxPosition {
		return Substitution{}, malformed(in, "%q: position %s is out of range", in, posText)
	}
	if class := nonSubstitution(rest, three); class != "" {
		return Substitution{}, notMissense(in, class)
	}
	var alt byte
	switch {
	case !three && len(rest) == 1:
		c := upper(rest[0])
		if !isStandard(c) {
			return Substitution{}, malformed(in, "%q: %q is not one of the 20 standard amino acids", in, rest)
		}
		alt = c
	case three && len(rest) == 3:
		c, err := residue3(in, rest)
		if err != nil {
			return Substitution{}, err
		}
		alt = c
	default:
		return Substitution{}, malformed(in, "%q is not a protein substitution such as p.Arg139Cys or R139C", in)
	}
	if alt == ref {
		return Substitution{}, notMissense(in, "synonymous")
	}
	return Substitution{Ref: ref, Pos: pos, Alt: alt}, nil
}

// nonSubstitution returns the class of a non-missense change written
// after the position, or "".
func nonSubstitution(rest string, three bool) string {
	l := strings.ToLower(rest)
	switch {
	case l == "*" || (three && l == "ter") || (!three && l == "x"):
		return "stop-gain"
	case l == "=":
		return "synonymous"
	case l == "?":
		return "unknown-consequence"
	case strings.HasPrefix(l, "fs") || strings.Contains(l, "fs"):
		return "frameshift"
	case strings.Contains(l, "delins"):
		return "deletion-insertion"
	case strings.HasPrefix(l, "del") || strings.Contains(l, "_") && strings.HasSuffix(l, "del"):
		return "deletion"
	case strings.HasPrefix(l, "dup") || strings.Contains(l, "_") && strings.HasSuffix(l, "dup"):
		return "duplication"
	case strings.Contains(l, "ins"):
		return "insertion"
	case strings.Contains(l, "ext"):
		return "extension"
	}
	return ""
}

// residue3 maps a three-letter code (any case) to its one-letter code.
func residue3(in, code string) (byte, error) {
	l := strings.ToLower(code)
	if c, ok := oneLetter[l]; ok {
		return c, nil
	}
	if nonStandard[l] {
		return 0, malformed(in, "%q: %q is not one of the 20 standard amino acids", in, code)
	}
	return 0, malformed(in, "%q: %q is not an amino-acid code", in, code)
}

func isLetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

func isStandard(c byte) bool { return strings.IndexByte(StandardResidues, c) >= 0 }
