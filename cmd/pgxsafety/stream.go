package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// streamWriter writes the results of an offline command (call, batch) as
// one JSON document (a head, an array of items, the summary's fields) or as
// NDJSON (one line per item, then a summary line).
type streamWriter struct {
	w      *bufio.Writer
	ndjson bool
	kb     *evaluate.Engine
	buf    []byte // scratch for an item that does not fit in w's free space
	n      int
	last   int // the size of the last item written
}

// begin writes the head of the JSON document, opening the array key.
func (s *streamWriter) begin(key string) {
	if s.ndjson {
		return
	}
	head, _ := json.Marshal(struct {
		APIVersion        string `json:"api_version"`
		GroundingContract string `json:"grounding_contract"`
		KnowledgeVersion  string `json:"knowledge_version"`
	}{pgxapi.APIVersion, engine.GroundingContract, s.kb.Version.Label})
	s.w.Write(head[:len(head)-1])
	s.w.WriteString(`,"` + key + `":[`)
}

// item writes one result; appendJSON appends it with the given kind
// ("" inside the JSON document, kind on an NDJSON line). The item is
// built in place in the output buffer when the free space there holds an
// item of the last one's size (a result is kilobytes: one copy less per
// item), else in a scratch buffer kept for the next time.
func (s *streamWriter) item(kind string, appendJSON func(buf []byte, kind string) []byte) error {
	buf, inPlace := s.buf[:0], s.w.Available() >= s.last
	if inPlace {
		buf = s.w.AvailableBuffer()
	}
	if s.ndjson {
		buf = appendJSON(buf, kind)
		buf = append(buf, '\n')
	} else {
		if s.n > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSON(buf, "")
	}
	if !inPlace {
		s.buf = buf
	}
	s.n++
	s.last = len(buf)
	if _, err := s.w.Write(buf); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

// commit flushes the results and puts the output in place (commit); on a
// write error the output is abandoned (abort). cmd prefixes the error.
func (s *streamWriter) commit(cmd string, commit func() error, abort func()) error {
	if err := s.w.Flush(); err != nil {
		abort()
		return fmt.Errorf("%s: write results: %w", cmd, err)
	}
	return commit()
}

// parseOneFile parses the flags of cmd, which takes exactly one file
// (what names its kind in the usage error) and a --format of json or
// ndjson, and returns the file's name.
func parseOneFile(fs *flag.FlagSet, args []string, cmd, what string, format *string, extraFormats ...string) (string, error) {
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", err
		}
		return "", fmt.Errorf("%w: %s: %v", errUsage, cmd, err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return "", usageError("%s: exactly one %s file is required, got %d arguments", cmd, what, len(pos))
	}
	if *format != "json" && *format != "ndjson" && !slices.Contains(extraFormats, *format) {
		all := append([]string{"json", "ndjson"}, extraFormats...)
		return "", usageError("%s: --format must be %s or %s, got %q", cmd, strings.Join(all[:len(all)-1], ", "), all[len(all)-1], *format)
	}
	return pos[0], nil
}

// streamHead opens an NDJSON summary line; it is empty (and omitted) in
// the JSON document, whose head already says it.
type streamHead struct {
	Kind              string `json:"kind,omitempty"`
	APIVersion        string `json:"api_version,omitempty"`
	GroundingContract string `json:"grounding_contract,omitempty"`
	KnowledgeVersion  string `json:"knowledge_version,omitempty"`
}

// end writes the summary sum, whose first field is the embedded head:
// filled for an NDJSON line, closing the array in the JSON document.
func (s *streamWriter) end(head *streamHead, sum any) {
	if s.ndjson {
		*head = streamHead{"summary", pgxapi.APIVersion, engine.GroundingContract, s.kb.Version.Label}
		line, _ := json.Marshal(sum)
		s.w.Write(append(line, '\n'))
		return
	}
	tail, _ := json.Marshal(sum)
	s.w.WriteString("],")
	s.w.Write(tail[1:])
	s.w.WriteString("\n")
}

// progressDisplay is the progress shown on stderr by call and batch: a bar
// on a terminal, a line every few seconds otherwise.
type progressDisplay struct {
	w     io.Writer
	tty   bool
	size  int64
	start time.Time
	last  time.Time
	drawn bool
}

func newProgressDisplay(w io.Writer, size int64) progressDisplay {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	now := batchNow()
	return progressDisplay{w: w, tty: tty, size: size, start: now, last: now}
}

// due reports whether it is time to redraw, and the time.
func (p *progressDisplay) due() (time.Time, bool) {
	now := batchNow()
	every := batchPlainEvery
	if p.tty {
		every = batchBarEvery
	}
	if now.Sub(p.last) < every {
		return now, false
	}
	p.last = now
	return now, true
}

// eta estimates the time left from the seconds elapsed and the fraction
// done (negative or zero: unknown).
func progressETA(elapsed, frac float64) string {
	if frac <= 0 {
		return "?"
	}
	return time.Duration(elapsed * (1 - frac) / frac * float64(time.Second)).Round(time.Second).String()
}

// bar draws the terminal line: a bar of frac (negative: unknown) and text.
func (p *progressDisplay) bar(frac float64, text string) {
	const width = 30
	bar := strings.Repeat("?", width)
	if frac >= 0 {
		n := int(frac * width)
		bar = strings.Repeat("#", n) + strings.Repeat(".", width-n)
	}
	fmt.Fprintf(p.w, "\r\033[K[%s] %s", bar, text)
	p.drawn = true
}

// done ends the progress bar line.
func (p *progressDisplay) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
