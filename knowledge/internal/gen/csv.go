package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// table is a CSV file read with its header.
type table struct {
	file string
	cols map[string]int
	rows []row
}

// row is one data line of a table.
type row struct {
	t    *table
	line int // 1-based line number of the record in the file (header = 1)
	f    []string
}

// s returns the trimmed value of column col.
func (r row) s(col string) string {
	i, ok := r.t.cols[col]
	if !ok {
		panic(fmt.Sprintf("%s: no column %q", r.t.file, col)) // checked in readCSV
	}
	if i >= len(r.f) {
		return ""
	}
	return strings.TrimSpace(r.f[i])
}

// where names the record for error messages.
func (r row) where() string { return fmt.Sprintf("%s:%d", r.t.file, r.line) }

// repairFunc may repair a record whose field count differs from the
// header's. It returns the repaired record, or an error.
type repairFunc func(rec []string, line int) ([]string, error)

// readCSV reads dir/name, checks that every column in need exists, and
// returns its rows. Records whose field count differs from the header are
// passed to repair; without repair they are an error.
func readCSV(dir, name string, need []string, repair repairFunc) (*table, error) {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseCSV(f, name, need, repair)
}

// readCSVFS is readCSV for a file of fsys (the curated tables embedded in
// the generator, curated.go).
func readCSVFS(fsys fs.FS, name string, need []string) (*table, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseCSV(f, name, need, nil)
}

// parseCSV reads a CSV file named name from r (see readCSV).
func parseCSV(r io.Reader, name string, need []string, repair repairFunc) (*table, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	t := &table{file: name, cols: map[string]int{}}
	for i, h := range header {
		t.cols[strings.TrimPrefix(h, "\ufeff")] = i
	}
	for _, c := range need {
		if _, ok := t.cols[c]; !ok {
			return nil, fmt.Errorf("%s: missing column %q", name, c)
		}
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(header) {
			if repair == nil {
				return nil, fmt.Errorf("%s:%d: %d fields, header has %d", name, line, len(rec), len(header))
			}
			if rec, err = repair(rec, line); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, line, err)
			}
			if len(rec) != len(header) {
				return nil, fmt.Errorf("%s:%d: repaired record has %d fields, header has %d", name, line, len(rec), len(header))
			}
		}
		t.rows = append(t.rows, row{t: t, line: line, f: rec})
	}
	return t, nil
}

// splitList splits a ';'-separated cell into trimmed, non-empty items.
func splitList(s, sep string) []string {
	var out []string
	for _, p := range strings.Split(s, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// splitVariantList splits an allele_summary variant list. Items are
// separated by ';'; a ';' followed by a space belongs to one item (some
// HGVS names list two alternates: "g.154536019G>A; g.154536019G>T").
func splitVariantList(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ';' && (i+1 >= len(s) || s[i+1] != ' ') {
			if p := strings.TrimSpace(s[start:i]); p != "" {
				out = append(out, p)
			}
			start = i + 1
		}
	}
	if p := strings.TrimSpace(s[start:]); p != "" {
		out = append(out, p)
	}
	return out
}
