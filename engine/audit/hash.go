package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// GenesisHash is the PrevHash of the first entry of a chain: 64 zeros, the
// width of a hex SHA-256.
var GenesisHash = strings.Repeat("0", 64)

// TimeFormat is the layout of Entry.Time in the canonical form: RFC 3339
// with nanoseconds (trailing zeros dropped), always in UTC. Stores may keep
// the time in another layout as long as it parses back to the same
// instant.
const TimeFormat = time.RFC3339Nano

// canonicalPrincipal fixes the field order of Principal in the canonical
// form.
type canonicalPrincipal struct {
	Subject string `json:"subject"`
	Issuer  string `json:"issuer"`
	Name    string `json:"name"`
	Email   string `json:"email"`
}

// canonicalEntry fixes the field order of Entry in the canonical form. It
// holds every field of Entry except EntryHash. Payloads are base64 (standard
// encoding, "" when empty) so a nil and an empty payload hash alike.
type canonicalEntry struct {
	ID               string             `json:"id"`
	Sequence         int64              `json:"sequence"`
	Time             string             `json:"time"`
	Principal        canonicalPrincipal `json:"principal"`
	Endpoint         string             `json:"endpoint"`
	RequestID        string             `json:"request_id"`
	KnowledgeVersion string             `json:"knowledge_version"`
	RequestDigest    string             `json:"request_digest"`
	ResponseDigest   string             `json:"response_digest"`
	Request          string             `json:"request"`
	Response         string             `json:"response"`
	PrevHash         string             `json:"prev_hash"`
}

// Canonical returns the canonical JSON of e: every field except EntryHash,
// in a fixed order, with Time in UTC formatted with TimeFormat, no HTML
// escaping and no trailing newline. Stores and Verify hash exactly these
// bytes, so the form must never change for existing entries.
func Canonical(e Entry) []byte {
	c := canonicalEntry{
		ID:       e.ID,
		Sequence: e.Sequence,
		Time:     e.Time.UTC().Format(TimeFormat),
		Principal: canonicalPrincipal{
			Subject: e.Principal.Subject,
			Issuer:  e.Principal.Issuer,
			Name:    e.Principal.Name,
			Email:   e.Principal.Email,
		},
		Endpoint:         e.Endpoint,
		RequestID:        e.RequestID,
		KnowledgeVersion: e.KnowledgeVersion,
		RequestDigest:    e.RequestDigest,
		ResponseDigest:   e.ResponseDigest,
		Request:          base64.StdEncoding.EncodeToString(e.Request),
		Response:         base64.StdEncoding.EncodeToString(e.Response),
		PrevHash:         e.PrevHash,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// Encoding a struct of strings and integers cannot fail.
	if err := enc.Encode(c); err != nil {
		panic(fmt.Sprintf("audit: canonical encoding: %v", err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// Hash returns the entry hash of e chained to prev: the hex SHA-256 of the
// bytes of prev (a hex string) followed by Canonical(e). e.EntryHash is
// ignored.
func Hash(prev string, e Entry) string {
	h := sha256.New()
	h.Write([]byte(prev))
	h.Write(Canonical(e))
	return hex.EncodeToString(h.Sum(nil))
}

// ErrChainBroken is the kind of every error Verify reports about the
// content of the log (as opposed to an error reading it).
var ErrChainBroken = errors.New("audit chain broken")

// ChainError reports the first entry at which the chain does not verify.
type ChainError struct {
	// Sequence is the sequence number of the first bad entry.
	Sequence int64
	// Reason says what is wrong with it.
	Reason string
}

// Error describes the broken entry.
func (e *ChainError) Error() string {
	return fmt.Sprintf("audit chain broken at sequence %d: %s", e.Sequence, e.Reason)
}

// Unwrap makes errors.Is(err, ErrChainBroken) true.
func (e *ChainError) Unwrap() error { return ErrChainBroken }

// Summary describes a verified chain.
type Summary struct {
	// Entries is the number of entries verified.
	Entries int64 `json:"entries"`
	// FirstSequence and LastSequence bound the verified entries (0 when
	// there are none).
	FirstSequence int64 `json:"first_sequence"`
	LastSequence  int64 `json:"last_sequence"`
	// HeadHash is the entry hash of the last entry (or of the checkpoint,
	// or GenesisHash, when no entry remains). Recording it outside the
	// database lets a later verification detect removed tail entries.
	HeadHash string `json:"head_hash"`
	// Checkpoint is the retention checkpoint the chain starts from, if
	// any.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
}

// Verify reads every entry of r in order and recomputes the chain. It
// returns nil when the chain is intact, a *ChainError naming the first
// broken sequence when it is not, and any other error when the log cannot
// be read. See VerifyChain.
func Verify(ctx context.Context, r Reader) error {
	_, err := VerifyChain(ctx, r)
	return err
}

// VerifyChain is Verify returning a summary of what it verified.
//
// The chain must start at sequence 1 from GenesisHash or, when r is a
// CheckpointReader with a checkpoint, at the sequence after the
// checkpoint from the checkpoint's hash; its sequences must be
// consecutive, so a removed entry (first, middle or any but the last) is
// reported too. An entry still present at or below the checkpoint is
// reported as well: a purge removes entries and writes its checkpoint in
// one transaction. An empty log verifies.
//
// A retention checkpoint must carry a signed note; VerifyChain refuses one
// that does not, but has no key to check the signature with: VerifyLog
// does that.
func VerifyChain(ctx context.Context, r Reader) (Summary, error) {
	return verifyChain(ctx, r)
}

func verifyChain(ctx context.Context, r Reader) (Summary, error) {
	sum := Summary{HeadHash: GenesisHash}
	wantSeq, prevHash := int64(1), GenesisHash
	if cr, ok := r.(CheckpointReader); ok {
		cp, found, err := cr.LatestCheckpoint(ctx)
		if err != nil {
			return sum, err
		}
		if found {
			if len(cp.Note) == 0 {
				return sum, fmt.Errorf("%w (through sequence %d): it is not signed", ErrRetentionCheckpoint, cp.ThroughSequence)
			}
			sum.Checkpoint = &cp
			wantSeq, prevHash = cp.ThroughSequence+1, cp.EntryHash
			sum.HeadHash = cp.EntryHash
		}
	}
	err := r.Entries(ctx, 0, func(e Entry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if sum.Checkpoint != nil && e.Sequence <= sum.Checkpoint.ThroughSequence {
			return &ChainError{Sequence: e.Sequence, Reason: fmt.Sprintf(
				"entry is covered by the retention checkpoint through sequence %d but is still present",
				sum.Checkpoint.ThroughSequence)}
		}
		if e.Sequence != wantSeq {
			return &ChainError{Sequence: wantSeq, Reason: fmt.Sprintf("entry missing (next entry has sequence %d)", e.Sequence)}
		}
		if e.PrevHash != prevHash {
			return &ChainError{Sequence: e.Sequence, Reason: "prev_hash does not match the previous entry's hash"}
		}
		if got := Hash(e.PrevHash, e); got != e.EntryHash {
			return &ChainError{Sequence: e.Sequence, Reason: "entry_hash does not match the entry's content"}
		}
		if sum.Entries == 0 {
			sum.FirstSequence = e.Sequence
		}
		sum.Entries++
		sum.LastSequence = e.Sequence
		sum.HeadHash = e.EntryHash
		wantSeq++
		prevHash = e.EntryHash
		return nil
	})
	return sum, err
}
