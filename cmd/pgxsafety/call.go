package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/outside"
	"github.com/pgxsafety/pgxsafety/engine/vcf"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

const callSynopsis = `call FILE.vcf[.gz] [--sample S]... [--samples S1,S2] [--samples-file FILE] [--chunk K/N] [--drug D]... [--out FILE] [--format json|ndjson|html|tsv|fhir] [--per-sample DIR] [--min-gq N] [--min-dp N] [--index FILE.tbi|.csi] [--outside-calls FILE]...

Calls the pharmacogenes of every sample (or of each --sample) of a GRCh38
VCF, plain or bgzip-compressed, offline with the same engine as
POST /pgx/vcf, and writes per sample and gene the diplotype(s), the
phenotype or activity score, the positions missing and what needs review.
FILE "-" reads standard input (it is copied to a temporary file: the file
is read once per group of samples, so memory stays flat in the number of
samples). A file the service would refuse (wrong build, bad header,
unsorted, over-long line, bad genotype) is refused naming the line, exit
status 1. No audit entry is written: an offline answer never leaves this
machine through the service. Progress goes to stderr: a bar when it is a
terminal, a line every few seconds otherwise. A genotype (or a gVCF
reference block) whose GQ or depth is below --min-gq / --min-dp is a
no-call at the positions it covers, named in the gene's notes (defaults:
PGXSAFETY_VCF_MIN_GQ and PGXSAFETY_VCF_MIN_DP, else 20 and 10; 0: no
threshold). A bgzip file with its tabix or CSI index (FILE.tbi or FILE.csi
beside it, or --index) is read by region: only the pharmacogene spans, with
the same answers. --outside-calls FILE (repeatable) merges the calls of a
dedicated caller (a PharmCAT outside-call TSV, Cyrius, Aldy, StellarPGx,
PyPGx results.zip, OptiType, HLA*LA, arcasHLA; at most 16 MiB each): a
gene's outside call replaces the VCF's reading of that gene for its
sample, and the drug checks use it. A file naming no sample needs a VCF of
one sample. --format fhir writes a FHIR R4 Bundle (collection) holding,
per sample, a Genomics Reporting IG transaction Bundle (docs/fhir-output.md). An HLA typing (OptiType,
HLA*LA, arcasHLA) makes its alleles the knowledge knows positive in the
drug checks; none is read as negative. --format html writes the lab
report: one self-contained HTML document, a section (a printed page or
more) per sample with its genes, the drugs checked, the Indian context,
the sources and a signature block, then a run record (docs/report.md).

--format tsv writes the calls table: one row per sample and gene
(diplotype, phenotype, activity score, interpretation and the reason for
a review, positions not called, untested alleles), its columns named as
in PharmCAT's calls-only TSV where they mean the same (docs/workflows.md);
it has no drug checks (--drug is refused with it). --per-sample DIR also
writes each sample's answer to a file of its own, DIR/SAMPLE.json
(--per-sample-format json, the default; fhir or html). --samples (a comma-
separated list) and --samples-file (one name a line) add to --sample.
--chunk K/N answers only part K of N of the samples asked for (default
every sample), cut in the file's column order into contiguous parts whose
sizes differ by at most one; the parts' outputs, concatenated in order,
are the whole run's (the calls table's header is in part 1 only).`

// maxOutsideCallBytes bounds one --outside-calls file.
const maxOutsideCallBytes = 16 << 20

func runCall(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("call", stderr, callSynopsis)
	defGQ, defDP, err := vcfThresholdDefaults()
	if err != nil {
		return err
	}
	var samples, drugs, outsideFiles, sampleLists listFlag
	fs.Var(&outsideFiles, "outside-calls", "merge the calls of this caller output (repeatable): PharmCAT outside-call TSV, Cyrius, Aldy, StellarPGx, PyPGx results.zip, OptiType, HLA*LA, arcasHLA")
	fs.Var(&samples, "sample", "call only this sample (repeatable; default every sample)")
	fs.Var(&drugs, "drug", "check this drug for every sample (repeatable)")
	fs.Var(&sampleLists, "samples", "call only these samples: a comma-separated list (repeatable; adds to --sample)")
	var (
		outPath     = fs.String("out", "", "write the results to FILE (default standard output); written in full or not at all")
		format      = fs.String("format", "json", "json (one document), ndjson (one line per sample, then a summary line), html (the lab report: one document, a section per sample), tsv (the calls table) or fhir (a FHIR Bundle of one Genomics Reporting Bundle per sample)")
		chunk       = fs.String("chunk", "", "answer only part K of N of the samples (K/N; for workflows)")
		samplesFile = fs.String("samples-file", "", "call only the samples named in FILE, one a line (adds to --sample)")
		perSample   = fs.String("per-sample", "", "also write each sample's answer to a file of its own in DIR")
		perFormat   = fs.String("per-sample-format", "json", "the format of the --per-sample files: json (SAMPLE.json), fhir (SAMPLE.fhir.json) or html (SAMPLE.html)")
		perPass     = fs.Int("samples-per-pass", 0, fmt.Sprintf("samples called per reading of the file (default %d)", vcfcall.DefaultSamplesPerPass))
		minGQ       = fs.Int("min-gq", defGQ, "genotype quality below which a position is a no-call (0: no threshold)")
		minDP       = fs.Int("min-dp", defDP, "read depth (a gVCF block's MIN_DP) below which a position is a no-call (0: no threshold)")
		index       = fs.String("index", "", "read only the pharmacogene regions through this tabix (.tbi) or CSI (.csi) index (default FILE.tbi or FILE.csi when beside the file)")
		fileSum     = fs.Bool("file-sha256", false, "with an index, also read the whole file to give its SHA-256 (a file read whole always gives it)")
	)
	name, err := parseOneFile(fs, args, "call", "VCF", format, "html", "tsv", "fhir")
	if err != nil {
		return err
	}
	if *format == "tsv" && len(drugs) > 0 {
		return usageError("call: --format tsv is the calls table, without drug checks: leave out --drug, or use json or ndjson")
	}
	for _, l := range sampleLists {
		samples = append(samples, splitList(l)...)
	}
	if *samplesFile != "" {
		listed, err := readSamplesFile(*samplesFile)
		if err != nil {
			return err
		}
		samples = append(samples, listed...)
		if samples == nil {
			samples = listFlag{} // an empty file asks for no sample
		}
	}
	if !slices.Contains(perSampleFormats, *perFormat) {
		return usageError("call: --per-sample-format must be %s, got %q", orList(perSampleFormats), *perFormat)
	}
	var part chunkSpec
	if *chunk != "" {
		if part, err = parseChunk(*chunk); err != nil {
			return err
		}
	}
	if *perPass < 0 {
		return usageError("call: --samples-per-pass must not be negative")
	}
	if *minGQ < 0 || *minDP < 0 {
		return usageError("call: --min-gq and --min-dp must not be negative (0: no threshold)")
	}
	for _, s := range samples {
		if strings.TrimSpace(s) == "" {
			return usageError("call: --sample must not be empty")
		}
	}

	outsideCalls, err := readOutsideCalls(outsideFiles)
	if err != nil {
		return err
	}

	path := name
	if name == "-" {
		tmp, err := spoolStdin()
		if err != nil {
			return err
		}
		defer os.Remove(tmp)
		path = tmp
	}
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("call: %w", err)
	}
	if st.IsDir() {
		return fmt.Errorf("call: %s is a directory", name)
	}
	kb, err := loadKnowledge(stderr)
	if err != nil {
		return err
	}
	if part.n > 0 {
		chunkNames, err := chunkSamples(path, samples, part)
		if err != nil {
			return callError(name, err)
		}
		samples = chunkNames
	}
	out, commit, abort, err := openBatchOutput(*outPath, stdout)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	var w callOutput = &callWriter{streamWriter{w: bw, ndjson: *format == "ndjson", kb: kb}}
	switch *format {
	case "tsv":
		w = &tsvCallWriter{w: bw, header: part.k <= 1, version: kb.Version.Label}
	case "html":
		w = newHTMLCallWriter(bw, name, drugs, kb.Version.Label)
	case "fhir":
		w = &fhirCallWriter{w: bw, kb: kb, file: filepath.Base(name)}
	}
	emit := w.samples
	if *perSample != "" {
		ps, err := newPerSampleWriter(*perSample, kb.Version.Label)
		if err != nil {
			abort()
			return err
		}
		defer ps.abort()
		ps.setFormat(*perFormat, kb, filepath.Base(name), drugs)
		emit = func(ch *vcfcall.Chunk) error {
			if err := ps.samples(ch); err != nil {
				return err
			}
			return w.samples(ch)
		}
		commitOut := commit
		commit = func() error {
			if err := ps.commit(); err != nil {
				return err
			}
			return commitOut()
		}
	}
	prog := newCallProgress(stderr, st.Size())
	var sum hash.Hash // the SHA-256 of the file, taken on the first reading
	open := func() (io.ReadCloser, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		if sum != nil {
			return f, nil
		}
		sum = sha256.New()
		return hashingFile{f: f, h: sum}, nil
	}
	opts := vcfcall.Options{Samples: samples, SamplesPerPass: *perPass, Progress: prog.update, Drugs: drugs, Wire: pgxapi.WireResult,
		MinGQ: vcfThreshold(*minGQ), MinDP: vcfThreshold(*minDP), OutsideCalls: outsideCalls}
	if samples == nil {
		opts.Samples = nil
	}
	idx, err := callIndex(name, path, *index, stderr)
	if err != nil {
		abort()
		return err
	}
	var waitHash func() (hash.Hash, error)
	if idx != nil {
		// Read by region: the opened file must seek. Its SHA-256 would
		// read every byte of a whole genome (about 3 s a GB here, docs/
		// vcf.md), so it is taken, beside the reading, only when asked for;
		// the summary names the index's SHA-256 and the bytes read instead.
		opts.Index = idx.Index
		sum = nil
		if *fileSum {
			waitHash = hashFile(path)
		}
		open = func() (io.ReadCloser, error) { return os.Open(path) }
	}
	w.begin()
	stats, err := vcfcall.Run(ctx, kb, open, opts, emit)
	prog.done()
	if waitHash != nil {
		h, herr := waitHash()
		if err == nil && herr != nil {
			err = herr
		}
		sum = h
	}
	if err != nil {
		abort()
		return callError(name, err)
	}
	file := callFile{Name: filepath.Base(name), Bytes: st.Size()}
	if sum != nil {
		file.SHA256 = hex.EncodeToString(sum.Sum(nil))
	}
	if idx != nil {
		file.ReadByRegion = &callRegionRead{Index: filepath.Base(idx.path), IndexSHA256: idx.sha256, BytesRead: stats.BytesRead}
	}
	w.end(stats, file)
	if err := w.commit("call", commit, abort); err != nil {
		return err
	}
	prog.summary(stats)
	return nil
}

// callError turns a refusal into a readable message.
func callError(name string, err error) error {
	var pe *vcf.ParseError
	var se *vcfcall.SampleError
	var ve *engine.ValidationError
	var oe *vcfcall.OutsideCallError
	switch {
	case errors.As(err, &oe):
		return fmt.Errorf("call: --outside-calls: %v", oe)
	case errors.As(err, &pe):
		return fmt.Errorf("call: %s cannot be read: %v", name, pe)
	case errors.As(err, &se):
		return fmt.Errorf("call: --sample: %v", se)
	case errors.As(err, &ve):
		return fieldErrors(err, "call: invalid --drug:", func(f string) string { return "--" + f })
	}
	return fmt.Errorf("call: %w", err)
}

// readOutsideCalls reads every --outside-calls file; each call's Source
// names its file ("cyrius.tsv line 2"). A file that cannot be read, or that
// no reader recognises, is refused naming the file and line.
func readOutsideCalls(files []string) ([]outside.Call, error) {
	var calls []outside.Call
	for _, name := range files {
		if strings.TrimSpace(name) == "" {
			return nil, usageError("call: --outside-calls must not be empty")
		}
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("call: --outside-calls: %w", err)
		}
		file, err := outside.ReadNamed(f, maxOutsideCallBytes, filepath.Base(name))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("call: --outside-calls %s cannot be read: %v", name, err)
		}
		calls = append(calls, file.Calls...)
	}
	return calls, nil
}

// spoolStdin copies standard input to a temporary file and returns its
// name.
func spoolStdin() (string, error) {
	tmp, err := os.CreateTemp("", "pgxsafety-call-*.vcf")
	if err != nil {
		return "", fmt.Errorf("call: %w", err)
	}
	_, err = io.Copy(tmp, os.Stdin)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return "", fmt.Errorf("call: read standard input: %w", err)
	}
	return tmp.Name(), nil
}

// hashingFile hashes what is read from f.
type hashingFile struct {
	f *os.File
	h hash.Hash
}

func (h hashingFile) Read(p []byte) (int, error) {
	n, err := h.f.Read(p)
	h.h.Write(p[:n])
	return n, err
}

func (h hashingFile) Close() error { return h.f.Close() }

// callOutput writes the results of a call in one format.
type callOutput interface {
	begin()
	samples(*vcfcall.Chunk) error
	end(vcfcall.Stats, callFile)
	commit(cmd string, commit func() error, abort func()) error
}

// callWriter writes the results as one JSON document or as NDJSON.
type callWriter struct{ streamWriter }

func (c *callWriter) begin() { c.streamWriter.begin("samples") }

func (c *callWriter) samples(ch *vcfcall.Chunk) error {
	for i := range ch.Samples {
		if err := c.item("sample", func(buf []byte, kind string) []byte {
			return pgxapi.AppendVCFSampleJSON(buf, &ch.Samples[i], "", kind)
		}); err != nil {
			return err
		}
	}
	return nil
}

// callSummary closes the output: the file and the counts.
type callSummary struct {
	streamHead
	File            callFile `json:"file"`
	SamplesInFile   int      `json:"samples_in_file"`
	SamplesAnswered int      `json:"samples_answered"`
	Records         int      `json:"records"`
	RecordsUsed     int      `json:"records_used"`
	Warnings        []string `json:"warnings"`
}

type callFile struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
	// SHA256 is the whole file's; absent for a read by region unless
	// --file-sha256 asked for it.
	SHA256       string          `json:"sha256,omitempty"`
	ReadByRegion *callRegionRead `json:"read_by_region,omitempty"`
}

// callRegionRead says how a file was read by region.
type callRegionRead struct {
	Index       string `json:"index"`
	IndexSHA256 string `json:"index_sha256"`
	// BytesRead are the compressed bytes read from the file.
	BytesRead int64 `json:"bytes_read"`
}

func (c *callWriter) end(st vcfcall.Stats, file callFile) {
	s := callSummary{File: file, SamplesInFile: st.SamplesInFile,
		SamplesAnswered: st.Samples, Records: st.Records, RecordsUsed: st.RecordsUsed, Warnings: st.Warnings}
	if s.Warnings == nil {
		s.Warnings = []string{}
	}
	c.streamWriter.end(&s.streamHead, &s)
}

// callProgress reports on stderr, like the batch command's progress: a bar
// on a terminal, a line every few seconds otherwise.
type callProgress struct{ progressDisplay }

func newCallProgress(w io.Writer, size int64) *callProgress {
	return &callProgress{newProgressDisplay(w, size)}
}

func (p *callProgress) update(pr vcfcall.Progress) {
	now, ok := p.due()
	if !ok {
		return
	}
	// The whole run reads the file Passes times.
	frac := -1.0
	if p.size > 0 && pr.Passes > 0 {
		frac = min((float64(pr.Pass-1)+min(float64(pr.FileBytes)/float64(p.size), 1))/float64(pr.Passes), 1)
	}
	eta := progressETA(now.Sub(p.start).Seconds(), frac)
	if p.tty {
		p.bar(frac, fmt.Sprintf("reading %d/%d  %s/%s samples  ETA %s", pr.Pass, pr.Passes,
			thousands(pr.SamplesDone), thousands(pr.Samples), eta))
		return
	}
	pct := ""
	if frac >= 0 {
		pct = fmt.Sprintf(" (%.0f%%)", 100*frac)
	}
	fmt.Fprintf(p.w, "call: reading %d of %d%s, %s of %s samples called, ETA %s\n", pr.Pass, pr.Passes, pct,
		thousands(pr.SamplesDone), thousands(pr.Samples), eta)
}

func (p *callProgress) summary(st vcfcall.Stats) {
	elapsed := batchNow().Sub(p.start)
	rate := ""
	if s := elapsed.Seconds(); s > 0 {
		rate = fmt.Sprintf(", %.0f samples/s", float64(st.Samples)/s)
	}
	fmt.Fprintf(p.w, "call: %s of %s samples called from %s records (%s at allele-definition positions) in %d reading(s) (%s%s)\n",
		thousands(st.Samples), thousands(st.SamplesInFile), thousands(st.Records), thousands(st.RecordsUsed), st.Passes,
		elapsed.Round(time.Millisecond), rate)
	for _, w := range st.Warnings {
		fmt.Fprintf(p.w, "  warning: %s\n", w)
	}
	switch {
	case st.ReadByRegion:
		fmt.Fprintf(p.w, "  read by region through the index: only the pharmacogene spans\n")
	case st.IndexNote != "":
		fmt.Fprintf(p.w, "  warning: %s\n", st.IndexNote)
	}
}
