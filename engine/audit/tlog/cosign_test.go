package tlog_test

import (
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
)

func TestCosignature(t *testing.T) {
	logSkey, _, err := tlog.GenerateKey(rand.Reader, "example.org/log")
	if err != nil {
		t.Fatal(err)
	}
	logKey, err := tlog.NewSigner(logSkey)
	if err != nil {
		t.Fatal(err)
	}
	wSkey, _, err := tlog.GenerateKey(rand.Reader, "witness.example.org/w1")
	if err != nil {
		t.Fatal(err)
	}
	w, err := tlog.NewCosigner(wSkey)
	if err != nil {
		t.Fatal(err)
	}
	w.Now = func() time.Time { return time.Unix(1700000000, 0) }
	cp := tlog.Checkpoint{Origin: "example.org/log", Size: 3, Root: tlog.HashLeaf([]byte("x"))}
	msg, err := logKey.SignCheckpoint(cp)
	if err != nil {
		t.Fatal(err)
	}
	line, err := w.Cosign(cp.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(line), "— witness.example.org/w1 ") || !strings.HasSuffix(string(line), "\n") {
		t.Fatalf("cosignature line %q", line)
	}
	v, err := tlog.NewCosignatureVerifier(w.VerifierKey())
	if err != nil {
		t.Fatalf("NewCosignatureVerifier(%q): %v", w.VerifierKey(), err)
	}
	cosigned := append(append([]byte(nil), msg...), line...)
	if got, err := tlog.OpenCosigned(cosigned, logKey.Verifier(), v); err != nil || got.Size != 3 {
		t.Fatalf("OpenCosigned = %+v, %v", got, err)
	}
	// The log's own verifier still opens it (the cosignature is ignored).
	if _, err := logKey.Verifier().OpenCheckpoint(cosigned); err != nil {
		t.Errorf("the log key does not open the cosigned checkpoint: %v", err)
	}
	if _, err := tlog.OpenCosigned(msg, logKey.Verifier(), v); !errors.Is(err, tlog.ErrNotCosigned) {
		t.Errorf("uncosigned checkpoint: %v, want ErrNotCosigned", err)
	}
	// A cosignature of another checkpoint does not verify.
	other, _ := w.Cosign(tlog.Checkpoint{Origin: "example.org/log", Size: 4, Root: cp.Root}.Marshal())
	if _, err := tlog.OpenCosigned(append(append([]byte(nil), msg...), other...), logKey.Verifier(), v); err == nil {
		t.Error("a cosignature of another checkpoint verified")
	}
	// Keys: an Ed25519 log key is not a cosignature key.
	if _, err := tlog.NewCosignatureVerifier(logKey.Verifier().String()); !errors.Is(err, tlog.ErrFormat) {
		t.Errorf("log key read as a cosignature key: %v", err)
	}
	bad := strings.Replace(w.VerifierKey(), "w1+", "w2+", 1)
	if _, err := tlog.NewCosignatureVerifier(bad); !errors.Is(err, tlog.ErrFormat) {
		t.Errorf("renamed key: %v, want its hash refused", err)
	}
}
