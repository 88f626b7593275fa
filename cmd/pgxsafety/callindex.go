package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"

	"github.com/pgxsafety/pgxsafety/engine/vcf"
)

// callIndex finds the index to read a VCF by region with: --index PATH
// (an unreadable one is an error: it was asked for), else FILE.tbi or
// FILE.csi beside the file. An index beside the file that cannot be read
// or is older than the file is named on stderr and the file is read whole:
// the answers are the same either way, only slower.
func callIndex(name, path, flagPath string, stderr io.Writer) (*callIndexFile, error) {
	if flagPath != "" {
		idx, err := readIndexFile(flagPath)
		if err != nil {
			return nil, fmt.Errorf("call: --index %s: %w", flagPath, err)
		}
		return idx, nil
	}
	if name == "-" {
		return nil, nil
	}
	for _, ext := range []string{".tbi", ".csi"} {
		fi, err := os.Stat(path + ext)
		if err != nil {
			continue
		}
		if st, err := os.Stat(path); err == nil && fi.ModTime().Before(st.ModTime()) {
			fmt.Fprintf(stderr, "call: warning: %s%s is older than the file; the file is read whole\n", name, ext)
			return nil, nil
		}
		idx, err := readIndexFile(path + ext)
		if err != nil {
			fmt.Fprintf(stderr, "call: warning: %s%s: %v; the file is read whole\n", name, ext, err)
			return nil, nil
		}
		return idx, nil
	}
	return nil, nil
}

// callIndexFile is an index read for a call, with its path and SHA-256
// (the call's summary names them).
type callIndexFile struct {
	*vcf.Index
	path, sha256 string
}

func readIndexFile(path string) (*callIndexFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	idx, err := vcf.ReadIndex(io.TeeReader(f, h), 0)
	if err != nil {
		return nil, err
	}
	// ReadIndex may stop before the end (padding, a trailing block).
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return &callIndexFile{Index: idx, path: path, sha256: hex.EncodeToString(h.Sum(nil))}, nil
}

// hashFile starts hashing a file in the background (a read by region does
// not read the whole file, but the answer names its SHA-256); wait returns
// the hash.
func hashFile(path string) (wait func() (hash.Hash, error)) {
	done := make(chan error, 1)
	h := sha256.New()
	go func() {
		f, err := os.Open(path)
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		_, err = io.Copy(h, f)
		done <- err
	}()
	return func() (hash.Hash, error) { return h, <-done }
}
