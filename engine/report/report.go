// Package report renders the lab report of a VCF answer: one
// self-contained HTML document (no script, no external resource, an
// inline style sheet that prints to A4) with a section per sample that a
// pathologist can review and sign.
//
// The report is rendered from a sample's answer exactly as it was audited:
// the bytes of vcfcall.Sample.Result, whose SHA-256 the audit entry holds
// (and the report prints). Nothing is evaluated again and no clinical text
// is written here: diplotypes, phenotypes, review reasons, recommendations
// and their strength, the Indian context and the citations are the
// answer's own. A gene that needs review is shown as a review with its
// reasons, never as a result; a drug is named only when it was checked.
//
// The package is pure: the standard library and engine's own packages.
package report

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"
)

//go:embed templates/report.html templates/style.css
var templateFS embed.FS

var (
	templates = template.Must(template.New("").Funcs(template.FuncMap{
		"join": func(sep string, s []string) string { return strings.Join(s, sep) },
	}).ParseFS(templateFS, "templates/report.html"))
	styleSheet = mustRead("templates/style.css")
	// StyleHash is the Content-Security-Policy source of the report's one
	// inline style sheet ('sha256-…'): a server sending the report can
	// allow exactly it and nothing else (no script, no other style).
	StyleHash = styleHash(styleSheet)
)

func mustRead(name string) string {
	b, err := templateFS.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func styleHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// ContentSecurityPolicy is the policy a server sends with the report: no
// source at all but the inline style sheet.
func ContentSecurityPolicy() string {
	return "default-src 'none'; style-src " + StyleHash + "; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
}

// Meta is what is known of the answer before its samples.
type Meta struct {
	// Origin names what produced the answer: "POST /pgx/vcf" or
	// "pgxsafety call (offline)".
	Origin string
	// Offline is true when no audit entry was written (pgxsafety call):
	// the report says so where the audit entry would be named.
	Offline bool
	// RequestID identifies the request (empty offline).
	RequestID string
	// FileName is the VCF's name as uploaded or given.
	FileName string
	// Drugs are the drugs asked for, in order (none: no drug was checked).
	Drugs []string
	// KnowledgeVersion is the knowledge the answer was computed with.
	KnowledgeVersion string
	// Generated is when the report was produced (the service's clock).
	Generated time.Time
}

// Sample is one sample's audited answer.
type Sample struct {
	// Result is the sample's vcfcall.SampleResult JSON, exactly the bytes
	// audited; Digest is "sha256:" and their hex SHA-256.
	Result []byte
	Digest string
	// AuditID is the audit entry holding Digest ("" offline).
	AuditID string
}

// Closing is what is known once every sample is answered.
type Closing struct {
	FileBytes       int64
	FileSHA256      string // empty when the file was not read whole
	SamplesInFile   int
	SamplesAnswered int
	// AuditID is the closing audit entry ("" offline).
	AuditID  string
	Warnings []string
}

// WriteHead writes the start of the document (up to the first sample).
func WriteHead(w io.Writer, m Meta) error {
	return execute(w, "head", headView{Meta: m, Style: template.CSS(styleSheet), Title: title(m)})
}

// WriteSample writes one sample's section; the first sample is n 0 (the
// others begin on a new page). A result that cannot be read is an error:
// the report is never rendered from anything but the audited answer.
func WriteSample(w io.Writer, m Meta, n int, s Sample) error {
	v, err := sampleViewOf(m, s)
	if err != nil {
		return err
	}
	v.NewPage = n > 0
	return execute(w, "sample", v)
}

// WriteTail closes the document: the file and the run's counts, and the
// closing audit entry.
func WriteTail(w io.Writer, m Meta, c Closing) error {
	return execute(w, "tail", tailView{Meta: m, Closing: c, Generated: formatTime(m.Generated)})
}

// WriteEnd closes a document of one sample written on its own (a
// workflow's per-sample report): no run record, which belongs to the run's
// own report.
func WriteEnd(w io.Writer) error { return execute(w, "end", nil) }

// execute renders a template completely before writing it.
func execute(w io.Writer, name string, data any) error {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, data); err != nil {
		return fmt.Errorf("report: render %s: %w", name, err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func title(m Meta) string {
	if m.FileName != "" {
		return "Pharmacogenomic test report — " + m.FileName
	}
	return "Pharmacogenomic test report"
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

type headView struct {
	Meta
	Style template.CSS
	Title string
}

type tailView struct {
	Meta
	Closing
	Generated string
}

// decode reads an audited sample result.
func decode(b []byte) (sampleJSON, error) {
	var s sampleJSON
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("report: the sample result cannot be read: %w", err)
	}
	return s, nil
}
