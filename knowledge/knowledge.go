// Package knowledge is the curated pharmacogenomic knowledge base of
// pgxsafety: the files under knowledge/data, generated from the shared data
// pack by knowledge/internal/gen and embedded in the binary.
//
// Loading is strict. Each file must hold exactly one JSON value of this
// package's row types (rowtypes.go: the file format) with no unknown
// fields; the rows become the engine's domain values (Rows.Engine) and the
// classifier's (engine/classify.Knowledge), and the content is then
// validated across tables (Validate): every row names known sources, ids
// are unique, references resolve, frequencies lie in [0,1], and the curated
// counts hold (61 tracked variants, 36 states and union territories). Any
// problem makes Load fail with an *Error that lists every problem, one per
// line, and the binary refuses to start. The knowledge version is a
// SHA-256 digest of the embedded files plus the guideline snapshot (see
// Version).
package knowledge

//go:generate go run ./internal/gen -data ../../shared/data -out data

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/knowledge/internal/kbfile"
)

//go:embed data/*.json data/*.md
var embedded embed.FS

// Data returns the embedded knowledge files (the contents of
// knowledge/data: the JSON files, README.md and LICENCE.md).
func Data() fs.FS {
	sub, err := fs.Sub(embedded, "data")
	if err != nil {
		panic(err) // "data" is a valid path; fs.Sub cannot fail here
	}
	return sub
}

// Base is the whole knowledge base as loaded and validated together: the
// engine's knowledge (guidelines, alleles, India context, …) and the
// variant classifier's (engine/classify), which cross-references it.
type Base struct {
	Engine *engine.Knowledge
	// Evaluator is the evaluation engine built once from Engine, with the
	// indexes of the allele caller, the drug-name reader and the
	// population selector.
	Evaluator  *evaluate.Engine
	Classifier *classify.Knowledge
}

// LoadBase decodes, versions, validates and indexes the embedded knowledge.
// It returns an *Error listing every problem when the knowledge is invalid.
func LoadBase() (*Base, error) { return LoadBaseFS(Data()) }

var defaultBase = sync.OnceValues(LoadBase)

// DefaultBase returns the embedded knowledge, loaded once per process;
// later calls return the same value and error.
func DefaultBase() (*Base, error) { return defaultBase() }

// LoadBaseFS loads the knowledge files found at the root of fsys (a
// directory laid out like knowledge/data), as LoadBase does for the
// embedded files. It is used by tests and by "pgxsafety knowledge validate
// --dir".
func LoadBaseFS(fsys fs.FS) (*Base, error) {
	b, problems, err := decodeFS(fsys)
	if err != nil {
		return nil, err
	}
	problems = append(problems, Validate(b)...)
	if len(problems) > 0 {
		return nil, &Error{Problems: problems}
	}
	b.Engine.Build()
	if b.Evaluator, err = evaluate.New(b.Engine); err != nil {
		return nil, fmt.Errorf("knowledge: building indexes: %w", err)
	}
	return b, nil
}

// Load is LoadBase for a caller that needs only the evaluation engine
// (and through it the engine's knowledge).
func Load() (*evaluate.Engine, error) { return engineOf(LoadBase()) }

// Default is DefaultBase for a caller that needs only the evaluation
// engine.
func Default() (*evaluate.Engine, error) { return engineOf(DefaultBase()) }

// LoadFS is LoadBaseFS for a caller that needs only the evaluation engine;
// the classifier's knowledge is validated all the same.
func LoadFS(fsys fs.FS) (*evaluate.Engine, error) { return engineOf(LoadBaseFS(fsys)) }

func engineOf(b *Base, err error) (*evaluate.Engine, error) {
	if err != nil {
		return nil, err
	}
	return b.Evaluator, nil
}

// Error is returned by Load and LoadFS when the knowledge has problems.
type Error struct {
	Problems []Problem
}

// Error lists every problem, one per line.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "knowledge: %d problem(s):", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n")
		b.WriteString(p.String())
	}
	return b.String()
}

// Problems returns the problems of err when it is (or wraps) an *Error,
// else nil.
func Problems(err error) []Problem {
	var e *Error
	if errors.As(err, &e) {
		return e.Problems
	}
	return nil
}

// decodeFS reads every knowledge file of fsys. Decoding problems (a missing
// file, invalid JSON, an unknown field, more than one value) are returned
// as problems; the file is then decoded leniently, where possible, so that
// the other checks still run. err is set only when fsys cannot be listed.
func decodeFS(fsys fs.FS) (*Base, []Problem, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, nil, fmt.Errorf("knowledge: %w", err)
	}
	var problems []Problem
	contents := map[string][]byte{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !(strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".md")) {
			continue
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, nil, fmt.Errorf("knowledge: %w", err)
		}
		contents[name] = data
		if strings.HasSuffix(name, ".json") && !slices.Contains(kbfile.JSONFiles, name) && !isClassifierFile(name) {
			problems = append(problems, Problem{File: name, Message: "unexpected file (not a knowledge file)"})
		}
	}

	var r Rows // rows.go
	var meta kbfile.Meta
	targets := map[string]any{
		kbfile.Sources:         &r.Sources,
		kbfile.Drugs:           &r.Drugs,
		kbfile.Genes:           &r.Genes,
		kbfile.RsIDs:           &r.RsIDs,
		kbfile.Recommendations: &r.Recommendations,
		kbfile.Variants:        &r.Variants,
		kbfile.HLA:             &r.HLAAlleles,
		kbfile.States:          &r.States,
		kbfile.Communities:     &r.Communities,
		kbfile.Herbs:           &r.Herbs,
		kbfile.Warfarin:        &r.Warfarin,
		kbfile.MetaFile:        &meta,
		kbfile.Definitions:     &r.Definitions,
		kbfile.DrugNames:       &r.DrugNames,
		kbfile.Indications:     &r.Indications,
	}
	for _, name := range kbfile.JSONFiles {
		data, ok := contents[name]
		if !ok {
			problems = append(problems, Problem{File: name, Message: "missing file"})
			continue
		}
		if err := decodeStrict(data, targets[name]); err != nil {
			problems = append(problems, Problem{File: name, Message: err.Error()})
			// Decode again without the strict checks so that the rows can
			// still be validated.
			_ = json.Unmarshal(data, targets[name])
		}
	}
	kb := r.Engine()
	ck, cproblems := decodeClassifier(contents) // classifier.go
	problems = append(problems, cproblems...)
	for _, name := range []string{kbfile.Readme, kbfile.Licence} {
		if _, ok := contents[name]; !ok {
			problems = append(problems, Problem{File: name, Message: "missing file"})
		}
	}

	kb.Version = engine.Version{
		Digest:       digest(contents),
		DataVersions: meta.DataVersions,
	}
	if meta.CPICRelease == "" || meta.ClinPGxDate == "" {
		problems = append(problems, Problem{File: kbfile.MetaFile, Message: "cpic_release and clinpgx_date are required"})
	}
	kb.Version.Label = meta.Label(kb.Version.Digest)
	return &Base{Engine: kb, Classifier: ck}, problems, nil
}

// decodeStrict decodes exactly one JSON value with no unknown fields.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("line %d: %w", lineAt(data, dec.InputOffset()), err)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		return fmt.Errorf("line %d: more than one JSON value", lineAt(data, dec.InputOffset()))
	}
	return nil
}

// lineAt returns the 1-based line number of byte offset off in data.
func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// digest is the SHA-256 (hex) over the files sorted by name; each file
// contributes its name, a NUL byte, its length in decimal, a NUL byte and
// its content.
func digest(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		io.WriteString(h, n)
		h.Write([]byte{0})
		io.WriteString(h, strconv.Itoa(len(files[n])))
		h.Write([]byte{0})
		h.Write(files[n])
	}
	return hex.EncodeToString(h.Sum(nil))
}
