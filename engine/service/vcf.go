package service

import (
	"context"
	"errors"

	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

// A VCF is audited like a lab CSV batch, in chunk entries: one entry per
// group of samples called together (vcfcall.Chunk) holds each sample's
// name and the SHA-256 of exactly the result bytes released for it, and a
// closing entry holds the file's SHA-256, what was asked (samples, drugs),
// the counts and the ids of the chunk entries. A chunk's samples are
// released only after its entry is durable.

// VCFCall is one VCF being answered. Use it from one goroutine.
type VCFCall struct {
	s        *Service
	call     Call
	file     VCFFile
	closed   bool
	chunkIDs []string
	released int
}

// VCFFile describes the uploaded file and the request in the closing
// entry.
type VCFFile struct {
	Name string
	// Format is the answer's format: "json" or "ndjson".
	Format string
	Bytes  int64
	SHA256 string
	// Samples and Drugs are what the request asked for (nil: every sample;
	// no drug).
	Samples []string
	Drugs   []string
}

// NewVCFCall starts answering one VCF.
func (s *Service) NewVCFCall(call Call, file VCFFile) *VCFCall {
	return &VCFCall{s: s, call: call, file: file}
}

// vcfChunkRequest is the request payload of a chunk entry.
type vcfChunkRequest struct {
	Kind    string           `json:"kind"`
	Chunk   int              `json:"chunk"`
	Samples []vcfChunkSample `json:"samples"`
}

type vcfChunkSample struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
}

// vcfChunkResponse is the response payload of a chunk entry.
type vcfChunkResponse struct {
	Samples []vcfChunkOutcome `json:"samples"`
}

type vcfChunkOutcome struct {
	Index          int    `json:"index"`
	ResultDigest   string `json:"result_digest"`
	GenesCalled    int    `json:"genes_called"`
	GenesForReview int    `json:"genes_for_review"`
	// Checks are the drugs checked with each one's overall severity.
	Checks []vcfCheckOutcome `json:"checks,omitempty"`
}

// vcfCheckOutcome is one drug check of a sample in the audit record.
type vcfCheckOutcome struct {
	Drug            string `json:"drug"`
	OverallSeverity string `json:"overall_severity,omitempty"`
	Error           string `json:"error,omitempty"`
}

// vcfChecksOf is the audit form of a sample's checks; a check that could
// not be made has no severity.
func vcfChecksOf(checks []vcfcall.CheckOutcome) []vcfCheckOutcome {
	if checks == nil {
		return nil
	}
	out := make([]vcfCheckOutcome, len(checks))
	for i, c := range checks {
		out[i] = vcfCheckOutcome{Drug: c.Drug, Error: c.Error}
		if c.Error == "" {
			out[i].OverallSeverity = auditSeverityName(c.OverallSeverity)
		}
	}
	return out
}

// vcfChunkRecord is the audit record of one group of samples.
type vcfChunkRecord struct {
	request  vcfChunkRequest
	response vcfChunkResponse
}

func (r vcfChunkRecord) payloads() (any, any) { return r.request, r.response }

func newVCFChunkRecord(c *vcfcall.Chunk) vcfChunkRecord {
	rec := vcfChunkRecord{
		request:  vcfChunkRequest{Kind: "vcf.chunk", Chunk: c.Index, Samples: make([]vcfChunkSample, len(c.Samples))},
		response: vcfChunkResponse{Samples: make([]vcfChunkOutcome, len(c.Samples))},
	}
	for i, s := range c.Samples {
		rec.request.Samples[i] = vcfChunkSample{Index: s.Index, Name: s.Name}
		rec.response.Samples[i] = vcfChunkOutcome{Index: s.Index, ResultDigest: s.ResultDigest,
			GenesCalled: s.GenesCalled, GenesForReview: s.GenesForReview, Checks: vcfChecksOf(s.Checks)}
	}
	return rec
}

// vcfClosingRequest is the request payload of the closing entry.
type vcfClosingRequest struct {
	Kind       string   `json:"kind"`
	FileName   string   `json:"file_name,omitempty"`
	FileBytes  int64    `json:"file_bytes"`
	FileSHA256 string   `json:"file_sha256"`
	Format     string   `json:"format"`
	Samples    []string `json:"samples,omitempty"`
	Drugs      []string `json:"drugs,omitempty"`
}

// vcfClosingResponse is the response payload of the closing entry.
type vcfClosingResponse struct {
	Outcome         string   `json:"outcome"`
	Reason          string   `json:"reason,omitempty"`
	SamplesInFile   int      `json:"samples_in_file"`
	SamplesAnswered int      `json:"samples_answered"`
	SamplesReleased int      `json:"samples_released"`
	Records         int      `json:"records"`
	RecordsUsed     int      `json:"records_used"`
	ChunkEntries    []string `json:"chunk_entries"`
}

// vcfClosingRecord is the audit record that closes a VCF answer.
type vcfClosingRecord struct {
	request  vcfClosingRequest
	response vcfClosingResponse
}

func (r vcfClosingRecord) payloads() (any, any) { return r.request, r.response }

func (v *VCFCall) closing(st vcfcall.Stats, outcome, reason string) vcfClosingRecord {
	ids := v.chunkIDs
	if ids == nil {
		ids = []string{}
	}
	return vcfClosingRecord{
		request: vcfClosingRequest{Kind: "vcf", FileName: v.file.Name, FileBytes: v.file.Bytes, FileSHA256: v.file.SHA256,
			Format: v.file.Format, Samples: v.file.Samples, Drugs: v.file.Drugs},
		response: vcfClosingResponse{Outcome: outcome, Reason: reason, SamplesInFile: st.SamplesInFile,
			SamplesAnswered: st.Samples, SamplesReleased: v.released, Records: st.Records, RecordsUsed: st.RecordsUsed,
			ChunkEntries: ids},
	}
}

// Run calls the samples of the file (vcfcall.Run with opts; the VCFFile's
// drugs are checked for every sample, opts.Wire giving the results' wire
// form) and, for each group of samples, calls admit with its number of
// samples (to charge a rate limit; its error stops the run before the
// group is audited), appends the group's audit entry and then calls release
// with the group and the entry's id. An admit, audit or release failure
// stops the run and is returned; nothing of a group whose entry failed is
// released.
func (v *VCFCall) Run(ctx context.Context, open vcfcall.Opener, opts vcfcall.Options, admit func(samples int) error, release func(c *vcfcall.Chunk, auditID string) error) (vcfcall.Stats, error) {
	opts.Drugs = v.file.Drugs
	return vcfcall.Run(ctx, v.s.kb, open, opts, func(c *vcfcall.Chunk) error {
		if err := admit(len(c.Samples)); err != nil {
			return err
		}
		id, err := v.s.append(ctx, v.call, newVCFChunkRecord(c))
		if err != nil {
			return err
		}
		v.chunkIDs = append(v.chunkIDs, id)
		if err := release(c, id); err != nil {
			return err
		}
		v.released += len(c.Samples)
		return nil
	})
}

// Released is the number of samples released so far.
func (v *VCFCall) Released() int { return v.released }

// Complete appends the closing entry of a VCF whose every requested sample
// was released and returns the counts with its id. It is tried once.
func (v *VCFCall) Complete(ctx context.Context, st vcfcall.Stats) (Audited[vcfcall.Stats], error) {
	if v.closed {
		return Audited[vcfcall.Stats]{}, errors.New("vcf: the answer is already closed")
	}
	v.closed = true
	id, err := v.s.append(ctx, v.call, v.closing(st, "completed", ""))
	if err != nil {
		return Audited[vcfcall.Stats]{}, err
	}
	return Audited[vcfcall.Stats]{Result: st, AuditID: id}, nil
}

// Abort appends the closing entry of a VCF answer that could not be
// completed, when chunk entries were written; reason says why. It is best
// effort: the failure being reported may be the audit log itself.
func (v *VCFCall) Abort(ctx context.Context, st vcfcall.Stats, reason string) error {
	if v.closed || len(v.chunkIDs) == 0 {
		return nil
	}
	v.closed = true
	_, err := v.s.append(context.WithoutCancel(ctx), v.call, v.closing(st, "aborted", reason))
	return err
}
