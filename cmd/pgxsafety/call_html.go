package main

import (
	"bufio"
	"fmt"
	"path/filepath"

	"github.com/pgxsafety/pgxsafety/engine/report"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

// htmlCallWriter writes the lab report (engine/report) of a call: one
// document, a section per sample rendered from the sample's answer as it
// would be audited, then the run record. Offline answers are not audited:
// the report says so where the audit entry would be named.
type htmlCallWriter struct {
	w    *bufio.Writer
	meta report.Meta
	n    int
	err  error // the first rendering error, reported by commit
}

func newHTMLCallWriter(w *bufio.Writer, name string, drugs []string, knowledge string) *htmlCallWriter {
	file := filepath.Base(name)
	if name == "-" {
		file = "standard input"
	}
	return &htmlCallWriter{w: w, meta: report.Meta{Origin: "pgxsafety call (offline)", Offline: true, FileName: file,
		Drugs: drugs, KnowledgeVersion: knowledge, Generated: batchNow()}}
}

func (h *htmlCallWriter) begin() { h.keep(report.WriteHead(h.w, h.meta)) }

func (h *htmlCallWriter) samples(ch *vcfcall.Chunk) error {
	for i := range ch.Samples {
		s := &ch.Samples[i]
		if err := report.WriteSample(h.w, h.meta, h.n, report.Sample{Result: s.Result, Digest: s.ResultDigest}); err != nil {
			return fmt.Errorf("write results: %w", err)
		}
		h.n++
	}
	return nil
}

func (h *htmlCallWriter) end(st vcfcall.Stats, file callFile) {
	h.keep(report.WriteTail(h.w, h.meta, report.Closing{FileBytes: file.Bytes, FileSHA256: file.SHA256,
		SamplesInFile: st.SamplesInFile, SamplesAnswered: st.Samples, Warnings: st.Warnings}))
}

func (h *htmlCallWriter) keep(err error) {
	if h.err == nil {
		h.err = err
	}
}

func (h *htmlCallWriter) commit(cmd string, commit func() error, abort func()) error {
	if h.err == nil {
		h.err = h.w.Flush()
	}
	if h.err != nil {
		abort()
		return fmt.Errorf("%s: write results: %w", cmd, h.err)
	}
	return commit()
}
