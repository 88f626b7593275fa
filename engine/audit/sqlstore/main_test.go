package sqlstore

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain removes the large log BenchmarkCommitLargeLog writes once per
// process.
func TestMain(m *testing.M) {
	code := m.Run()
	if largeLogFile != "" {
		_ = os.RemoveAll(filepath.Dir(largeLogFile))
	}
	os.Exit(code)
}
