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
	// Format is the answer's format: "json", "ndjson", "html" (the lab
	// report), "tsv" (the calls table) or "fhir" (FHIR Bundles), each a
	// rendering of the same audited sample results.
	Format string
	Bytes  int64
	SHA256 string
	// Samples and Drugs are what the request asked for (nil: every sample;
	// no drug).
	Samples []string
	Drugs   []string
	// OutsideCalls describe the outside-call files merged with the VCF.
	OutsideCalls []OutsideCallFile
}

// OutsideCallFile describes one caller output merged with a VCF.
type OutsideCallFile struct {
	Name   string
	Bytes  int64
	SHA256 string
	// Format is the detected caller ("Cyrius"); Calls the number of calls.
	Format string
	Calls  int
}

// NewVCFCall starts answering one VCF.
func (s *Service) NewVCFCall(call Call, file VCFFile) *VCFCall {
	return &VCFCall{s: s, call: call, file: file}
}

// closing is the record that closes the VCF answer with outcome.
func (v *VCFCall) closing(st vcfcall.Stats, outcome, reason string) vcfClosingRecord {
	return newVCFClosingRecord(v.file, st, v.released, v.chunkIDs, outcome, reason)
}

// Run calls the samples of the file (vcfcall.Run with opts; the VCFFile's
// drugs are checked for every sample, opts.Wire giving the results' wire
// form) and, for each group of samples, calls admit with its number of
// samples (to charge a rate limit; its error stops the run before the
// group is audited), appends the group's audit entry and then calls release
// with the group and the entry's id. An admit, audit or release failure
// stops the run and is returned; nothing of a group whose entry failed is
// released.
func (v *VCFCall) Run(ctx context.Context, open vcfcall.Opener, opts vcfcall.Options, admit func(samples int) error, release func(c *vcfcall.Chunk, ref Ref) error) (vcfcall.Stats, error) {
	opts.Drugs = v.file.Drugs
	return vcfcall.Run(ctx, v.s.kb, open, opts, func(c *vcfcall.Chunk) error {
		if err := admit(len(c.Samples)); err != nil {
			return err
		}
		id, err := v.s.append(ctx, v.call, newVCFChunkRecord(c))
		if err != nil {
			return err
		}
		v.chunkIDs = append(v.chunkIDs, id.ID)
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
	return audited(st, id), nil
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
