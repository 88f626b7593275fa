// Package audit defines the append-only, hash-chained audit log of every
// answer the service gives. It holds no SQL: stores live in subpackages.
package audit

import (
	"context"
	"errors"
	"time"
)

// Principal identifies who asked.
type Principal struct {
	Subject string `json:"subject"`
	Issuer  string `json:"issuer,omitempty"`
	Name    string `json:"name,omitempty"`
	Email   string `json:"email,omitempty"`
}

// Entry is one audit record. ID, Sequence, PrevHash and EntryHash are
// assigned by the store on Append.
type Entry struct {
	ID               string    `json:"id"`
	Sequence         int64     `json:"sequence"`
	Time             time.Time `json:"time"`
	Principal        Principal `json:"principal"`
	Endpoint         string    `json:"endpoint"`
	RequestID        string    `json:"request_id"`
	KnowledgeVersion string    `json:"knowledge_version"`
	RequestDigest    string    `json:"request_digest"`
	ResponseDigest   string    `json:"response_digest"`
	Request          []byte    `json:"request,omitempty"`
	Response         []byte    `json:"response,omitempty"`
	PrevHash         string    `json:"prev_hash"`
	EntryHash        string    `json:"entry_hash"`
}

// Appender appends entries. Append returns only after the entry is durable;
// the returned entry carries the assigned ID, Sequence and hashes.
type Appender interface {
	Append(ctx context.Context, e Entry) (Entry, error)
}

// Reader reads entries in sequence order.
type Reader interface {
	// Entries calls fn for every entry with Sequence >= from, in order.
	Entries(ctx context.Context, from int64, fn func(Entry) error) error
}

// Checkpoint records one retention purge. Every entry up to and including
// ThroughSequence was removed; EntryHash is the entry hash of that last
// removed entry, so the entries that remain still chain from it and Verify
// can check them. Checkpoints are themselves append-only, and signed with
// the log's key (Note).
type Checkpoint struct {
	// ThroughSequence is the sequence of the last removed entry.
	ThroughSequence int64 `json:"through_sequence"`
	// EntryHash is the entry hash of the last removed entry.
	EntryHash string `json:"entry_hash"`
	// ThroughTime is the time of the last removed entry.
	ThroughTime time.Time `json:"through_time"`
	// PurgedAt is when the purge ran (the service clock).
	PurgedAt time.Time `json:"purged_at"`
	// Removed is the number of entries this purge removed.
	Removed int64 `json:"removed"`
	// Note is the signed note that authorises the purge
	// (RetentionNoteText signed with the log's key). A checkpoint without
	// one, or whose signature does not verify, is refused by VerifyChain
	// and VerifyLog.
	Note []byte `json:"note,omitempty"`
}

// CheckpointReader is implemented by stores that purge expired entries:
// LatestCheckpoint returns the checkpoint with the highest
// ThroughSequence, and false when nothing was ever purged.
type CheckpointReader interface {
	LatestCheckpoint(ctx context.Context) (Checkpoint, bool, error)
}

// ErrUnavailable is returned (wrapped) when the log cannot be written; the
// caller must not release advice that is not audited.
var ErrUnavailable = errors.New("audit log unavailable")
