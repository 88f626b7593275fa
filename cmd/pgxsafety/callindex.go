package main

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"os"

	"github.com/pgxsafety/pgxsafety/engine/vcf"
)

// callIndex finds the index to read a VCF by region with: --index PATH
// (an unreadable one is an error: it was asked for), else FILE.tbi beside
// the file. A .tbi beside the file that cannot be read or is older than the
// file, or a .csi (not read yet), is named on stderr and the file is read
// whole: the answers are the same either way, only slower.
func callIndex(name, path, flagPath string, stderr io.Writer) (*vcf.Index, error) {
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
	tbi := path + ".tbi"
	fi, err := os.Stat(tbi)
	if err != nil {
		if _, err := os.Stat(path + ".csi"); err == nil {
			fmt.Fprintf(stderr, "call: warning: %s.csi is not read (CSI indexes are not supported yet); the file is read whole\n", name)
		}
		return nil, nil
	}
	if st, err := os.Stat(path); err == nil && fi.ModTime().Before(st.ModTime()) {
		fmt.Fprintf(stderr, "call: warning: %s.tbi is older than the file; the file is read whole\n", name)
		return nil, nil
	}
	idx, err := readIndexFile(tbi)
	if err != nil {
		fmt.Fprintf(stderr, "call: warning: %s.tbi: %v; the file is read whole\n", name, err)
		return nil, nil
	}
	return idx, nil
}

func readIndexFile(path string) (*vcf.Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return vcf.ReadIndex(f, 0)
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
