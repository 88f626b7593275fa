package audittest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/service"
)

// ErrNotFound is returned by Memory.Entry when no entry has the id.
var ErrNotFound = errors.New("audittest: audit entry not found")

// ErrClosed is returned (wrapped with audit.ErrUnavailable) by
// Memory.Append after Close.
var ErrClosed = errors.New("audittest: memory log closed")

// Memory is an audit log and CDS feedback store held in memory (a test
// double), for the surface tests that do not test storage: entries are
// chained and hashed like a real store's, each append is "durable" at
// once, and a feedback post's items and entry are kept together or not at
// all. The storage itself is tested by the conformance suite on SQLite
// and PostgreSQL. It is safe for concurrent use.
type Memory struct {
	mu       sync.Mutex
	entries  []audit.Entry
	byID     map[string]int
	feedback map[string]service.FeedbackItem
	fail     error // appends fail
	fbFail   error // feedback inserts fail
	closed   bool
}

// NewMemory returns an empty in-memory log.
func NewMemory() *Memory {
	return &Memory{byID: map[string]int{}, feedback: map[string]service.FeedbackItem{}}
}

// Fail makes every later append fail with err (wrapped with
// audit.ErrUnavailable), as a log that cannot be written; nil heals it.
func (m *Memory) Fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fail = err
}

// FailFeedback makes the item inserts of every later feedback post fail
// with err, as a feedback table that cannot be written; nil heals it.
func (m *Memory) FailFeedback(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fbFail = err
}

// Append implements audit.Appender.
func (m *Memory) Append(ctx context.Context, e audit.Entry) (audit.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.appendLocked(ctx, e)
}

func (m *Memory) appendLocked(ctx context.Context, e audit.Entry) (audit.Entry, error) {
	if err := ctx.Err(); err != nil {
		return audit.Entry{}, fmt.Errorf("audittest: append: %w", err)
	}
	switch {
	case m.closed:
		return audit.Entry{}, fmt.Errorf("%w: %w", audit.ErrUnavailable, ErrClosed)
	case m.fail != nil:
		return audit.Entry{}, fmt.Errorf("%w: %w", audit.ErrUnavailable, m.fail)
	case e.Time.IsZero():
		return audit.Entry{}, errors.New("audittest: entry has no time")
	}
	prev := audit.GenesisHash
	if n := len(m.entries); n > 0 {
		prev = m.entries[n-1].EntryHash
	}
	e.Sequence = int64(len(m.entries) + 1)
	e.ID = fmt.Sprintf("aud_%026d", e.Sequence)
	e.Time = e.Time.UTC()
	if len(e.Request) == 0 {
		e.Request = nil
	}
	if len(e.Response) == 0 {
		e.Response = nil
	}
	e.PrevHash = prev
	e.EntryHash = audit.Hash(prev, e)
	m.byID[e.ID] = len(m.entries)
	m.entries = append(m.entries, e)
	return e, nil
}

// Entries implements audit.Reader.
func (m *Memory) Entries(ctx context.Context, from int64, fn func(audit.Entry) error) error {
	m.mu.Lock()
	entries := m.entries[:len(m.entries):len(m.entries)]
	m.mu.Unlock()
	for _, e := range entries {
		if e.Sequence < from {
			continue
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// Entry returns the entry with the id, or ErrNotFound.
func (m *Memory) Entry(_ context.Context, id string) (audit.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i, ok := m.byID[id]
	if !ok {
		return audit.Entry{}, ErrNotFound
	}
	return m.entries[i], nil
}

// AppendFeedback implements service.FeedbackStore: the items not kept
// before and the entry built from the counts are kept together, or
// neither is.
func (m *Memory) AppendFeedback(ctx context.Context, items []service.FeedbackItem, entry func(stored, duplicates int) (audit.Entry, error)) (audit.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fbFail != nil {
		return audit.Entry{}, fmt.Errorf("audittest: feedback insert: %w", m.fbFail)
	}
	fresh := map[string]service.FeedbackItem{}
	for _, it := range items {
		if _, ok := m.feedback[it.Key]; !ok {
			fresh[it.Key] = it
		}
	}
	e, err := entry(len(fresh), len(items)-len(fresh))
	if err != nil {
		return audit.Entry{}, err
	}
	if e, err = m.appendLocked(ctx, e); err != nil {
		return audit.Entry{}, err
	}
	for k, it := range fresh {
		m.feedback[k] = it
	}
	return e, nil
}

// Count returns how many feedback items are kept for a card.
func (m *Memory) Count(_ context.Context, card string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, it := range m.feedback {
		if it.Card == card {
			n++
		}
	}
	return n, nil
}

// Ping reports whether the log answers: it does until Close.
func (m *Memory) Ping(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	return nil
}

// Backend names the backend: "memory".
func (m *Memory) Backend() string { return "memory" }

// Location is empty: the log has no file.
func (m *Memory) Location() string { return "" }

// Close makes every later append fail and Ping report the log closed.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}
