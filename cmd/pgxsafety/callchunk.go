package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/engine/report"
	"github.com/pgxsafety/pgxsafety/engine/vcf"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
	"github.com/pgxsafety/pgxsafety/fhir"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// A workflow splits a multi-sample VCF over jobs with --chunk K/N: the
// samples asked for (--sample, --samples, --samples-file; default every
// sample), in the file's column order, are cut into N contiguous parts
// whose sizes differ by at most one, and the job answers part K. The
// parts' outputs, concatenated in K order, are the whole run's output:
// in the calls table (--format tsv) only part 1 writes the header line.

// chunkSpec is a --chunk K/N value (1 <= K <= N); the zero value is no
// chunking.
type chunkSpec struct{ k, n int }

// maxChunks bounds N.
const maxChunks = 1_000_000

func parseChunk(v string) (chunkSpec, error) {
	ks, ns, ok := strings.Cut(v, "/")
	k, kerr := strconv.Atoi(strings.TrimSpace(ks))
	n, nerr := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || kerr != nil || nerr != nil || n < 1 || n > maxChunks || k < 1 || k > n {
		return chunkSpec{}, usageError("call: --chunk must be K/N with 1 <= K <= N <= %d (e.g. 3/10), got %q", maxChunks, v)
	}
	return chunkSpec{k, n}, nil
}

// bounds returns the part of n items this chunk answers: [lo, hi).
func (c chunkSpec) bounds(n int) (lo, hi int) {
	return (c.k - 1) * n / c.n, c.k * n / c.n
}

// readSamplesFile reads --samples-file: one sample name per line (spaces
// around it and empty lines are ignored; a VCF sample name holds no tab).
func readSamplesFile(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("call: --samples-file: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(io.LimitReader(f, 64<<20))
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		if strings.ContainsRune(s, '\t') {
			return nil, usageError("call: --samples-file %s line %d: a sample name holds no tab", name, line)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("call: --samples-file %s line %d: %w", name, line+1, err)
	}
	return out, nil
}

// chunkSamples returns the samples chunk c of the file answers: the asked
// ones (nil: every sample) in the file's column order, cut as the package
// comment says. A name asked for that the file does not hold is a
// *vcfcall.SampleError, whichever chunk it would fall in, so every job of
// a workflow refuses the same way.
func chunkSamples(path string, asked []string, c chunkSpec) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd, err := vcf.NewReader(f, vcf.Options{})
	if err != nil {
		return nil, err
	}
	all := rd.AllSamples()
	order := all
	if asked != nil {
		want := make(map[string]bool, len(asked))
		for _, s := range asked {
			want[s] = true
		}
		order = make([]string, 0, len(want))
		for _, s := range all {
			if want[s] {
				order = append(order, s)
				delete(want, s)
			}
		}
		for _, s := range asked {
			if want[s] {
				return nil, vcfcall.NoSuchSample(s, all)
			}
		}
	}
	lo, hi := c.bounds(len(order))
	return append([]string{}, order[lo:hi]...), nil
}

// tsvCallWriter writes the calls table (pgxapi.AppendCallsTSV); header
// says whether this output opens the table.
type tsvCallWriter struct {
	w       *bufio.Writer
	header  bool
	version string
	buf     []byte
}

func (t *tsvCallWriter) begin() {
	if t.header {
		t.w.Write(pgxapi.AppendCallsTSVHeader(nil))
	}
}

func (t *tsvCallWriter) samples(ch *vcfcall.Chunk) error {
	for i := range ch.Samples {
		// Offline nothing is audited: the Audit Log ID column is empty.
		t.buf = pgxapi.AppendCallsTSV(t.buf[:0], &ch.Samples[i], t.version, "")
		if _, err := t.w.Write(t.buf); err != nil {
			return fmt.Errorf("write results: %w", err)
		}
	}
	return nil
}

func (t *tsvCallWriter) end(vcfcall.Stats, callFile) {}

func (t *tsvCallWriter) commit(cmd string, commit func() error, abort func()) error {
	if err := t.w.Flush(); err != nil {
		abort()
		return fmt.Errorf("%s: write results: %w", cmd, err)
	}
	return commit()
}

// perSampleWriter writes each sample's answer to a file of its own in dir
// (--per-sample DIR): SAMPLE.json, the answer as one JSON document with
// the API and knowledge versions (and no index, which would depend on the
// chunking). The files are written in a temporary directory
// inside dir and moved into place only when the run completes.
type perSampleWriter struct {
	dir, tmp string
	head     []byte
	names    map[string]string // file name -> sample
	buf      []byte
	// render writes a sample's file in a format other than json (nil:
	// json); ext is its file name's ending.
	render func(smp *vcfcall.Sample) ([]byte, error)
	ext    string
}

// perSampleFormats are the formats of --per-sample-format.
var perSampleFormats = []string{"json", "fhir", "html"}

// setFormat makes the writer write format: json (the sample's answer),
// fhir (its Genomics Reporting Bundle, SAMPLE.fhir.json) or html (its lab
// report, SAMPLE.html), each rendered from the same answer.
func (p *perSampleWriter) setFormat(format string, kb *evaluate.Engine, file string, drugs []string) {
	switch format {
	case "fhir":
		p.ext = ".fhir.json"
		p.render = func(smp *vcfcall.Sample) ([]byte, error) {
			r, err := fhir.SampleReportFromJSON(smp.Result)
			if err != nil {
				return nil, err
			}
			b, err := fhir.BuildGenomicsBundle(r, fhir.ReportMeta{KnowledgeVersion: kb.Version.Label, Issued: batchNow(),
				Source: "pgxsafety call " + file + " sample " + smp.Name + " (offline, not audited)"})
			return append(b, '\n'), err
		}
	case "html":
		p.ext = ".html"
		meta := report.Meta{Origin: "pgxsafety call (offline)", Offline: true, FileName: file,
			Drugs: drugs, KnowledgeVersion: kb.Version.Label, Generated: batchNow()}
		p.render = func(smp *vcfcall.Sample) ([]byte, error) {
			var b bytes.Buffer
			err := errors.Join(report.WriteHead(&b, meta),
				report.WriteSample(&b, meta, 0, report.Sample{Result: smp.Result, Digest: smp.ResultDigest}),
				report.WriteEnd(&b))
			return b.Bytes(), err
		}
	}
}

func newPerSampleWriter(dir, knowledgeVersion string) (*perSampleWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("call: --per-sample: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, ".pgxsafety-call-*")
	if err != nil {
		return nil, fmt.Errorf("call: --per-sample: %w", err)
	}
	head, _ := json.Marshal(struct {
		APIVersion        string `json:"api_version"`
		GroundingContract string `json:"grounding_contract"`
		KnowledgeVersion  string `json:"knowledge_version"`
	}{pgxapi.APIVersion, engine.GroundingContract, knowledgeVersion})
	return &perSampleWriter{dir: dir, tmp: tmp, head: head[:len(head)-1], names: map[string]string{}}, nil
}

// sampleFileName is the file name of a sample's answer: the name with any
// character other than letters, digits, '.', '-' and '_' (and a leading
// '.') written as '_'.
func sampleFileName(sample string) string {
	b := []byte(sample)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' && i > 0
		if !ok {
			b[i] = '_'
		}
	}
	return string(b) + ".json"
}

func (p *perSampleWriter) samples(ch *vcfcall.Chunk) error {
	for i := range ch.Samples {
		smp := &ch.Samples[i]
		name := sampleFileName(smp.Name)
		if p.render != nil {
			name = strings.TrimSuffix(name, ".json") + p.ext
		}
		if other, dup := p.names[name]; dup {
			return fmt.Errorf("--per-sample: samples %q and %q would both be written to %s", other, smp.Name, name)
		}
		p.names[name] = smp.Name
		if p.render != nil {
			b, err := p.render(smp)
			if err != nil {
				return fmt.Errorf("--per-sample: sample %q: %w", smp.Name, err)
			}
			if err := os.WriteFile(filepath.Join(p.tmp, name), b, 0o644); err != nil {
				return fmt.Errorf("--per-sample: %w", err)
			}
			continue
		}
		// The head's members, then the sample's answer without its opening
		// brace. No index: a sample's position depends on the chunking.
		p.buf = append(append(append(p.buf[:0], p.head...), ','), smp.Result[1:]...)
		p.buf = append(p.buf, '\n')
		if err := os.WriteFile(filepath.Join(p.tmp, name), p.buf, 0o644); err != nil {
			return fmt.Errorf("--per-sample: %w", err)
		}
	}
	return nil
}

// commit moves the files into dir; abort removes them.
func (p *perSampleWriter) commit() error {
	for name := range p.names {
		if err := os.Rename(filepath.Join(p.tmp, name), filepath.Join(p.dir, name)); err != nil {
			return fmt.Errorf("call: --per-sample: %w", err)
		}
	}
	return os.Remove(p.tmp)
}

func (p *perSampleWriter) abort() { _ = os.RemoveAll(p.tmp) }
