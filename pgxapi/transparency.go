package pgxapi

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// ErrNoCheckpoint is returned by TransparencyLog.Latest while no signed
// checkpoint exists (the log was found inconsistent with its witness, or
// none was made yet).
var ErrNoCheckpoint = errors.New("no signed checkpoint available")

// ErrUnknownEntry is returned by TransparencyLog.Locate for an id the log
// does not hold.
var ErrUnknownEntry = errors.New("unknown audit entry")

// ErrNotLogged is returned by TransparencyLog.Covering when the log holds
// fewer entries than asked for.
var ErrNotLogged = errors.New("the audit log holds fewer entries")

// TransparencyLog is what the /pgx/audit/* endpoints need of the audit
// log's transparency layer.
type TransparencyLog interface {
	// Latest returns the latest signed checkpoint (a C2SP signed note)
	// and what it says, or an error wrapping ErrNoCheckpoint.
	Latest() ([]byte, tlog.Checkpoint, error)
	// Covering returns a signed checkpoint of at least size entries: the
	// latest when it is one, else one signed on demand (rate-limited by
	// the implementation); an error wrapping ErrNotLogged when the log is
	// smaller.
	Covering(ctx context.Context, size uint64) ([]byte, tlog.Checkpoint, error)
	// Locate returns the sequence and entry hash of the entry with the
	// audit_log_id, or an error wrapping ErrUnknownEntry.
	Locate(ctx context.Context, id string) (seq int64, entryHash string, err error)
	// InclusionProof proves that entry seq is in the tree of size leaves.
	InclusionProof(ctx context.Context, seq int64, size uint64) ([]tlog.Hash, error)
	// ConsistencyProof proves that the tree of size1 leaves is a prefix of
	// the tree of size2 leaves.
	ConsistencyProof(ctx context.Context, size1, size2 uint64) ([]tlog.Hash, error)
}

// RegisterTransparency adds the transparency-log endpoints. They are under
// /pgx/, so they need the same bearer token as every /pgx endpoint
// (httpx.Chain); they return hashes only, never an entry's content.
//
//	GET /pgx/audit/checkpoint[?covering=N]            the latest signed checkpoint (text/plain), or one of at least N entries
//	GET /pgx/audit/proof/inclusion?audit_log_id=ID[&tree_size=N]
//	GET /pgx/audit/proof/consistency?from=M[&to=N]
func RegisterTransparency(r *mux.Router, t TransparencyLog) {
	h := transparencyHandlers{t: t}
	r.Handle("/pgx/audit/checkpoint", httpx.Handle(h.checkpoint)).Methods(http.MethodGet)
	r.Handle("/pgx/audit/proof/inclusion", httpx.Handle(h.inclusion)).Methods(http.MethodGet)
	r.Handle("/pgx/audit/proof/consistency", httpx.Handle(h.consistency)).Methods(http.MethodGet)
}

type transparencyHandlers struct{ t TransparencyLog }

// InclusionProofResponse is the GET /pgx/audit/proof/inclusion answer. The
// leaf hash is RFC 6962's hash of the 32 bytes of entry_hash; hashes are
// base64, leaf to root; checkpoint is the signed checkpoint of tree_size
// when it is the latest one.
type InclusionProofResponse struct {
	AuditLogID string   `json:"audit_log_id"`
	Sequence   int64    `json:"sequence"`
	LeafIndex  uint64   `json:"leaf_index"`
	TreeSize   uint64   `json:"tree_size"`
	EntryHash  string   `json:"entry_hash"`
	Hashes     []string `json:"hashes"`
	Checkpoint string   `json:"checkpoint,omitempty"`
}

// ConsistencyProofResponse is the GET /pgx/audit/proof/consistency answer.
type ConsistencyProofResponse struct {
	From       uint64   `json:"from"`
	To         uint64   `json:"to"`
	Hashes     []string `json:"hashes"`
	Checkpoint string   `json:"checkpoint,omitempty"`
}

func unavailable(err error) error {
	return &httpx.Error{Kind: httpx.KindAuditUnavailable,
		Detail: "no signed checkpoint of the audit log is available", Err: err}
}

func badParam(name, reason string) error {
	return &httpx.Error{Kind: httpx.KindInvalidParams,
		Detail: "the request has invalid values; see invalid_params", InvalidParams: []httpx.Param{{Name: name, Reason: reason}}}
}

func (h transparencyHandlers) checkpoint(w http.ResponseWriter, r *http.Request) error {
	covering, err := sizeParam(r, "covering", 0)
	if err != nil {
		return err
	}
	var msg []byte
	if covering == 0 {
		msg, _, err = h.t.Latest()
	} else {
		msg, _, err = h.t.Covering(r.Context(), covering)
	}
	if errors.Is(err, ErrNotLogged) {
		return badParam("covering", "the audit log holds fewer entries (the sequence of your receipt is the size to ask for)")
	}
	if err != nil {
		return unavailable(err)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(msg)
	return err
}

// sizeParam reads an optional tree size; def when absent.
func sizeParam(r *http.Request, name string, def uint64) (uint64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, badParam(name, "must be a non-negative integer")
	}
	return n, nil
}

func b64(hs []tlog.Hash) []string {
	out := make([]string, len(hs))
	for i := range hs {
		out[i] = base64.StdEncoding.EncodeToString(hs[i][:])
	}
	return out
}

func (h transparencyHandlers) inclusion(w http.ResponseWriter, r *http.Request) error {
	msg, latest, err := h.t.Latest()
	if err != nil {
		return unavailable(err)
	}
	id := r.URL.Query().Get("audit_log_id")
	if id == "" {
		return badParam("audit_log_id", "required")
	}
	size, err := sizeParam(r, "tree_size", latest.Size)
	if err != nil {
		return err
	}
	if size > latest.Size {
		return badParam("tree_size", "larger than the latest checkpoint ("+strconv.FormatUint(latest.Size, 10)+")")
	}
	seq, entryHash, err := h.t.Locate(r.Context(), id)
	if errors.Is(err, ErrUnknownEntry) {
		return &httpx.Error{Kind: httpx.KindNotFound, Detail: "no audit entry has this audit_log_id (or it was purged)"}
	}
	if err != nil {
		return err
	}
	if uint64(seq) > size {
		return badParam("tree_size", "the entry is not in a tree of this size (its sequence is "+strconv.FormatInt(seq, 10)+")")
	}
	p, err := h.t.InclusionProof(r.Context(), seq, size)
	if err != nil {
		return unavailable(err)
	}
	out := InclusionProofResponse{AuditLogID: id, Sequence: seq, LeafIndex: uint64(seq - 1), TreeSize: size, EntryHash: entryHash, Hashes: b64(p)}
	if size == latest.Size {
		out.Checkpoint = string(msg)
	}
	w.Header().Set("Cache-Control", "no-store")
	return httpx.WriteJSON(w, http.StatusOK, out)
}

func (h transparencyHandlers) consistency(w http.ResponseWriter, r *http.Request) error {
	msg, latest, err := h.t.Latest()
	if err != nil {
		return unavailable(err)
	}
	if r.URL.Query().Get("from") == "" {
		return badParam("from", "required: the size of the checkpoint you hold")
	}
	from, err := sizeParam(r, "from", 0)
	if err != nil {
		return err
	}
	to, err := sizeParam(r, "to", latest.Size)
	if err != nil {
		return err
	}
	if to > latest.Size {
		return badParam("to", "larger than the latest checkpoint ("+strconv.FormatUint(latest.Size, 10)+")")
	}
	if from > to {
		return badParam("from", "larger than to: the log never shrinks (if your checkpoint is larger than the latest one, the log lost entries)")
	}
	p, err := h.t.ConsistencyProof(r.Context(), from, to)
	if err != nil {
		return unavailable(err)
	}
	out := ConsistencyProofResponse{From: from, To: to, Hashes: b64(p)}
	if to == latest.Size {
		out.Checkpoint = string(msg)
	}
	w.Header().Set("Cache-Control", "no-store")
	return httpx.WriteJSON(w, http.StatusOK, out)
}
