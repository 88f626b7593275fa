package pgxapi_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// testTransparency is the transparency layer serve builds (cmd), made
// here from the real store and tree, signing with the conformance suite's
// key on every call (serve signs periodically).
type testTransparency struct {
	store *sqlstore.Store
	log   *audit.Log
}

func newTestTransparency(store *sqlstore.Store) *testTransparency {
	return &testTransparency{store: store, log: audit.NewLog(store)}
}

func (t *testTransparency) Latest() ([]byte, tlog.Checkpoint, error) {
	s := audittest.Signer()
	cp, err := t.log.Checkpoint(context.Background(), s.Name())
	if err != nil {
		return nil, tlog.Checkpoint{}, fmt.Errorf("%w: %w", pgxapi.ErrNoCheckpoint, err)
	}
	msg, err := s.SignCheckpoint(cp)
	return msg, cp, err
}

// Covering signs the whole tree, like Latest, and refuses a size it does
// not reach.
func (t *testTransparency) Covering(_ context.Context, size uint64) ([]byte, tlog.Checkpoint, error) {
	msg, cp, err := t.Latest()
	if err == nil && cp.Size < size {
		return nil, tlog.Checkpoint{}, fmt.Errorf("%w: %d", pgxapi.ErrNotLogged, cp.Size)
	}
	return msg, cp, err
}

func (t *testTransparency) Locate(ctx context.Context, id string) (int64, string, error) {
	e, err := t.store.Entry(ctx, id)
	if errors.Is(err, sqlstore.ErrNotFound) {
		return 0, "", fmt.Errorf("%w: %w", pgxapi.ErrUnknownEntry, err)
	}
	return e.Sequence, e.EntryHash, err
}

func (t *testTransparency) InclusionProof(ctx context.Context, seq int64, size uint64) ([]tlog.Hash, error) {
	return t.log.InclusionProof(ctx, seq, size)
}

func (t *testTransparency) ConsistencyProof(ctx context.Context, m, n uint64) ([]tlog.Hash, error) {
	return t.log.ConsistencyProof(ctx, m, n)
}
