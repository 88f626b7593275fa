package main

import (
	"bufio"
	"fmt"

	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
	"github.com/pgxsafety/pgxsafety/fhir"
)

// fhirCallWriter writes pgxsafety call --format fhir: a FHIR Bundle of
// type collection whose entries are, per sample, the Genomics Reporting
// transaction Bundle of its answer (fhir.BuildGenomicsBundle), streamed
// one sample at a time. An offline answer has no audit entry, so the
// Bundles name none.
type fhirCallWriter struct {
	w    *bufio.Writer
	kb   *evaluate.Engine
	file string
	n    int
}

func (f *fhirCallWriter) begin() {
	f.w.WriteString(`{"resourceType":"Bundle","type":"collection","timestamp":"` + batchNow().UTC().Format("2006-01-02T15:04:05Z") + `","entry":[`)
}

func (f *fhirCallWriter) samples(ch *vcfcall.Chunk) error {
	for i := range ch.Samples {
		smp := &ch.Samples[i]
		r, err := fhir.SampleReportFromJSON(smp.Result)
		if err != nil {
			return err
		}
		b, err := fhir.BuildGenomicsBundle(r, fhir.ReportMeta{KnowledgeVersion: f.kb.Version.Label, Issued: batchNow(),
			Source: "pgxsafety call " + f.file + " sample " + smp.Name + " (offline, not audited)"})
		if err != nil {
			return fmt.Errorf("call: FHIR of sample %q: %w", smp.Name, err)
		}
		if f.n > 0 {
			f.w.WriteByte(',')
		}
		f.w.WriteString(`{"resource":`)
		f.w.Write(b)
		f.w.WriteByte('}')
		f.n++
	}
	return nil
}

func (f *fhirCallWriter) end(vcfcall.Stats, callFile) { f.w.WriteString("]}\n") }

func (f *fhirCallWriter) commit(cmd string, commit func() error, abort func()) error {
	if err := f.w.Flush(); err != nil {
		abort()
		return fmt.Errorf("%s: write results: %w", cmd, err)
	}
	return commit()
}
