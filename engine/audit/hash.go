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

// TimeFormat is the layout of Entry.Time in the canonical form and in
// stores: RFC 3339 with nanoseconds, always in UTC.
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

// Verify reads every entry of r in order and recomputes the chain. It
// returns nil when the chain is intact, a *ChainError naming the first
// broken sequence when it is not, and any other error when the log cannot
// be read. The chain must start at sequence 1 from GenesisHash and its
// sequences must be consecutive, so a removed entry (first, middle or any
// but the last) is reported too. An empty log verifies.
func Verify(ctx context.Context, r Reader) error {
	// A retention purge will start the chain at a recorded checkpoint
	// instead of sequence 1; until it exists every chain starts at 1.
	wantSeq, prevHash := int64(1), GenesisHash
	return r.Entries(ctx, 0, func(e Entry) error {
		if err := ctx.Err(); err != nil {
			return err
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
		wantSeq++
		prevHash = e.EntryHash
		return nil
	})
}
