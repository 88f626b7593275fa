package pgxsafety_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// machinePath matches an absolute path of a development machine: under
// /work, /root, a home directory (/home/<user>, /Users/<user>, C:\Users),
// a named file or folder in /tmp, or macOS's per-user temporary folders.
// The path must start a word (not the path part of a URL such as
// https://example.org/home/x, nor a placeholder such as $TMPDIR/x).
var machinePath = regexp.MustCompile(`(?:^|[^\w.~$}-])(/(?:work|root)/|/home/[\w.-]+/|/Users/[\w.-]+/|/tmp/\w|/(?:private/)?var/folders/|[A-Za-z]:\\+Users\\+)`)

func TestMachinePathPattern(t *testing.T) {
	// The examples are split so that this file does not match itself.
	for _, line := range []string{
		"go build -o /" + "tmp/pgx ./cmd/pgxsafety",
		"See `/" + "work/shared/data/fhir` for provenance",
		"cd /" + "root/src",
		"\"dir\": \"/" + "home/dev/pgxsafety\"",
		"file:///" + "Users/dev/x",
		"/" + "var/folders/xy/T/go-build",
		`C:\` + `Users\dev\go`,
	} {
		if !machinePath.MatchString(line) {
			t.Errorf("%q is not reported", line)
		}
	}
	for _, line := range []string{
		"go build -o $TMPDIR/pgx ./cmd/pgxsafety",
		"See `../shared/data/fhir` for provenance",
		"https://example.org/home/page/index.html",
		"the data pack's pgx/work/ folder",
		"~/work/pgxsafety",
		"/var/lib/pgxsafety",
		"/tmp",
	} {
		if machinePath.MatchString(line) {
			t.Errorf("%q is reported", line)
		}
	}
}

// TestNoMachinePaths: no tracked text file names an absolute path of a
// development machine; examples use relative paths or placeholders such
// as $TMPDIR.
func TestNoMachinePaths(t *testing.T) {
	files := repoFiles(t)
	if len(files) < 100 {
		t.Fatalf("only %d files found in the repository", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue // tracked but deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
			continue // binary
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := machinePath.FindStringSubmatch(line); m != nil {
				t.Errorf("%s:%d: %q is a path of a development machine: use a relative path or a placeholder such as $TMPDIR/...", f, i+1, m[1])
			}
		}
	}
}

// repoFiles lists the repository's files (the test runs in the module
// root): git's tracked files, or, without git or outside a checkout,
// every file below the root except .git.
func repoFiles(t *testing.T) []string {
	t.Helper()
	if out, err := exec.Command("git", "ls-files", "-z").Output(); err == nil {
		return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	}
	var files []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" { // a folder, or a file in a worktree
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestREADMESampleInputsExist: every testdata/ path the README tells a
// newcomer to use is in the repository.
func TestREADMESampleInputsExist(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	paths := regexp.MustCompile(`testdata/[A-Za-z0-9_./-]+\.[a-z]+`).FindAllString(string(b), -1)
	if len(paths) < 3 {
		t.Fatalf("the README names %d sample inputs under testdata/, want a VCF, a CSV and a CDS request", len(paths))
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("README names %s: %v", p, err)
		}
	}
}
