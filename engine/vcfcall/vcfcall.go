// Package vcfcall calls the pharmacogenes of every sample of a GRCh38 VCF
// with the engine's allele matcher. It is the engine side of POST /pgx/vcf
// and "pgxsafety call": it reads the file with engine/vcf, keeps only the
// records at allele-definition positions, turns each sample's genotypes
// into position observations and calls every gene with calling.Caller.CallSample.
//
// Memory stays flat in the number of samples: the file is read once per
// group of Options.SamplesPerPass samples, and only that group's genotypes
// at definition positions are held. Every refusal of the file (header,
// build, sorting, line length, the requested samples' genotypes at
// definition positions) happens in the first pass, before any sample is
// handed over.
//
// With Options.Drugs every sample's genotypes are also checked against each
// drug through evaluate.Engine.Evaluate, as position-level calls.
//
// The package is pure: the standard library and engine's own packages.
package vcfcall

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/engine/outside"
	"github.com/pgxsafety/pgxsafety/engine/vcf"
)

// DefaultSamplesPerPass is the number of samples called per reading of the
// file when Options.SamplesPerPass is 0.
const DefaultSamplesPerPass = 64

// maxFilterWarnings bounds the records named in FILTER warnings.
const maxFilterWarnings = 20

// progressEvery is the number of records between two Progress calls.
const progressEvery = 4096

// Options configures a Run.
type Options struct {
	// Samples names the samples to call; nil calls every sample of the
	// file. A name the file does not hold is a *SampleError.
	Samples []string
	// SamplesPerPass is the number of samples called per reading of the
	// file; 0 means DefaultSamplesPerPass.
	SamplesPerPass int
	// MaxLineBytes and MaxBytes bound the file (see vcf.Options).
	MaxLineBytes int
	MaxBytes     int64
	// Progress, when set, is called every few thousand records and after
	// each group of samples.
	Progress func(Progress)
	// Drugs are checked for every sample, with evaluate.Engine.Evaluate and the
	// sample's genotypes as position-level calls (the REST "calls" form),
	// so a check reads exactly as POST /pgx/check with those calls. An
	// invalid name is an *engine.ValidationError naming "drug[i]",
	// before the file is read.
	Drugs []string
	// Wire maps a check's result to the value encoded in the sample's
	// JSON (the REST wire form, pgxapi.WireResult). Required with Drugs.
	Wire func(engine.Result) any
	// MinGQ and MinDP are the per-position quality thresholds: a genotype
	// (or a reference block) whose FORMAT GQ, or DP (a block's MIN_DP when
	// it has one), is below them is a no-call at the definition positions
	// it covers, named in the gene's notes. 0 means the defaults
	// (DefaultMinGQ, DefaultMinDP); a negative value turns the threshold
	// off. A genotype without the field is not judged on it.
	MinGQ, MinDP int

	// Index, when set, reads only the pharmacogene spans (Regions) of a
	// BGZF file through its tabix or CSI index, provided the Opener's file can
	// seek (region.go); otherwise, or when the file is not BGZF, the file
	// is streamed whole and Stats.IndexNote says why.
	Index *vcf.Index

	// OutsideCalls are calls of dedicated callers (engine/outside: Cyrius,
	// Aldy, PharmCAT outside calls …) merged with the VCF (outside.go). A
	// call of a gene replaces the VCF-derived result of that gene for its
	// sample, read as a diplotype given to POST /pgx/check, and the drug
	// checks use it instead of the gene's genotypes. A passing HLA-A or
	// HLA-B typing makes its alleles that the knowledge has rows for
	// positive in the checks (none is read as negative), with a sample
	// warning. A call names its
	// sample, or names none and the file has one sample; otherwise, or when
	// the file has no such sample, the run is refused with an
	// *OutsideCallError before any sample is answered.
	OutsideCalls []outside.Call
}

// Progress reports how far a Run is.
type Progress struct {
	// Pass is the reading of the file under way (1-based) of Passes.
	Pass, Passes int
	// FileBytes is how many bytes of the file (as stored: compressed or
	// not) this pass has read.
	FileBytes int64
	// SamplesDone of Samples have been handed over.
	SamplesDone, Samples int
}

// Opener opens the file for one reading; Run calls it once per pass.
type Opener func() (io.ReadCloser, error)

// SampleError refuses a requested sample the file does not hold.
type SampleError struct {
	Name   string
	Reason string
}

// NoSuchSample is the refusal of a sample asked for that the file, whose
// samples are all, does not hold (the first ten of them are named).
func NoSuchSample(name string, all []string) *SampleError {
	list := all
	if len(list) > 10 {
		list = append(list[:10:10], fmt.Sprintf("… %d more", len(all)-10))
	}
	return &SampleError{Name: name, Reason: "the file has no such sample (its samples: " + strings.Join(list, ", ") + ")"}
}

// Error names the sample.
func (e *SampleError) Error() string { return fmt.Sprintf("sample %q: %s", e.Name, e.Reason) }

// Sample is the answer for one sample.
type Sample struct {
	// Index is the sample's 0-based position among the samples answered.
	Index int
	Name  string
	// Result is the compact JSON of the sample's SampleResult; ResultDigest
	// is "sha256:" and the hex SHA-256 of exactly these bytes.
	Result       []byte
	ResultDigest string
	// Answer is the SampleResult that Result encodes (for writers of other
	// formats: the calls table).
	Answer *SampleResult
	// GenesCalled and GenesForReview count the genes called and those
	// whose input could not be fully interpreted.
	GenesCalled    int
	GenesForReview int
	// Checks are the drugs checked, with each one's overall severity.
	Checks []CheckOutcome
}

// CheckOutcome summarises one drug check of a sample (for the audit):
// its overall severity, or why the check could not be made.
type CheckOutcome struct {
	Drug            string
	OverallSeverity engine.Severity
	Error           string
}

// Chunk is a group of consecutive samples handed over together (the unit
// of audit and release).
type Chunk struct {
	Index   int
	Samples []Sample
}

// Stats describes a finished (or stopped) Run.
type Stats struct {
	// SamplesInFile is the number of sample columns; Samples the number
	// of samples answered.
	SamplesInFile int
	Samples       int
	// Records is the number of data records; RecordsUsed those at an
	// allele-definition position.
	Records     int
	RecordsUsed int
	Passes      int
	// Warnings are about the file as a whole (they are also in every
	// sample's result).
	Warnings []string
	// ReadByRegion is true when the file was read through Options.Index;
	// Records then counts only the records in the regions read.
	// IndexNote says why an index given was not used.
	ReadByRegion bool
	IndexNote    string
	// BytesRead are the bytes read from the file over all passes.
	BytesRead int64
}

// SampleResult is the answer for one sample, as JSON.
type SampleResult struct {
	Sample string `json:"sample"`
	// Genes holds every gene with an allele definition, sorted.
	Genes    []GeneResult `json:"genes"`
	Warnings []string     `json:"warnings"`
	// Checks holds one check per requested drug, in the order asked.
	Checks []CheckResult `json:"checks,omitempty"`
}

// CheckResult is one drug checked for one sample: the check's result in
// its wire form, or why the check could not be made.
type CheckResult struct {
	Drug   string `json:"drug"`
	Result any    `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

// GeneResult is the call of one gene for one sample.
type GeneResult struct {
	Gene string `json:"gene"`
	// Status is "called", "not_called", "no_data" (no record at any of
	// the gene's positions) or "provisional" (CYP2D6: the SNV and indel
	// alleles without copy number).
	Status string `json:"status"`
	// Interpretation is "called", "could not interpret — review",
	// "provisional — copy-number evidence needed", "not called" or
	// "no data".
	Interpretation string `json:"interpretation"`
	// Summary is one readable line: the diplotype(s) and phenotype, or
	// what could not be interpreted.
	Summary    string            `json:"summary"`
	Diplotypes []DiplotypeResult `json:"diplotypes"`
	// Source is the call as PharmCAT displays it where that differs from
	// the diplotypes (DPYD, RYR1, CACNA1S).
	Source []string `json:"source,omitempty"`
	// Alternatives are lower-scoring diplotypes that also fit ("*3B/*3C
	// (Poor Metabolizer)"); they are not used for advice.
	Alternatives     []string `json:"alternatives"`
	Phased           bool     `json:"phased"`
	MissingPositions []string `json:"missing_positions"`
	// UntestedAlleles are the alleles the call could not assess: defined
	// at a position without a called genotype and not ruled out by the
	// called ones (a gene whose AMP tier-1 positions were all called).
	UntestedAlleles []string `json:"untested_alleles,omitempty"`
	NeedsReview     bool     `json:"needs_review"`
	Uninterpreted   []string `json:"uninterpreted"`
	Notes           []string `json:"notes"`
	Observations    []string `json:"observations"`
}

// DiplotypeResult is one diplotype. Phenotype and activity score are given
// when the gene is called and needs no review, and beside a review when
// the reading is actionable (never one that could read as normal), as
// /pgx/check keeps it (review.go).
type DiplotypeResult struct {
	Diplotype      string   `json:"diplotype"`
	Alleles        []string `json:"alleles"`
	Phenotype      string   `json:"phenotype,omitempty"`
	ActivityScore  string   `json:"activity_score,omitempty"`
	PhenotypeError string   `json:"phenotype_error,omitempty"`
}

// Interpretation values.
const (
	InterpretationCalled = "called"
	InterpretationReview = "could not interpret — review"
	// InterpretationProvisional: the SNV and indel alleles are read but
	// the phenotype needs copy-number evidence (CYP2D6 from a VCF).
	InterpretationProvisional = "provisional — copy-number evidence needed"
	InterpretationNotCalled   = "not called"
	InterpretationNoData      = "no data"
)

// countingReader counts the bytes read from the stored file.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// run is the state of one Run.
type run struct {
	ctx  context.Context
	kb   *evaluate.Engine
	open Opener
	opt  Options
	emit func(*Chunk) error

	want     map[string]bool // requested samples; nil = all
	selected int             // samples to answer
	per      int
	st       Stats
	done     int
	chunk    int
	filterW  []string
	filterN  int
	regions  []vcf.Region // read by region (region.go)
	// outside holds the outside calls by sample and gene (outside.go).
	outside map[string]map[string]*outside.Call
}

// Run calls the genes of the requested samples, handing them over in
// chunks, in file order, to emit. The file is refused with a
// *vcf.ParseError; a requested sample it does not hold with a
// *SampleError; an error from emit stops the run and is returned.
func Run(ctx context.Context, kb *evaluate.Engine, open Opener, opt Options, emit func(*Chunk) error) (Stats, error) {
	if len(opt.Drugs) > 0 {
		if opt.Wire == nil {
			return Stats{}, errors.New("vcfcall: Options.Wire is required with Drugs")
		}
		if err := validateDrugs(kb, opt.Drugs); err != nil {
			return Stats{}, err
		}
	}
	r := &run{ctx: ctx, kb: kb, open: open, opt: opt, emit: emit, per: opt.SamplesPerPass}
	if r.per <= 0 {
		r.per = DefaultSamplesPerPass
	}
	if opt.Samples != nil {
		r.want = map[string]bool{}
		for _, s := range opt.Samples {
			r.want[s] = true
		}
	}
	for pass := 0; ; pass++ {
		more, err := r.pass(pass)
		if err != nil {
			return r.st, err
		}
		if !more {
			return r.st, nil
		}
	}
}

// pass reads the file once and answers the samples of group pass; it
// reports whether another group follows.
func (r *run) pass(pass int) (bool, error) {
	f, err := r.open()
	if err != nil {
		return false, err
	}
	defer f.Close()
	cr := &countingReader{r: f}
	defer func() { r.st.BytesRead += cr.n }()
	lo, hi := pass*r.per, (pass+1)*r.per
	rank := 0 // requested samples seen so far in the #CHROM line
	records, used := 0, 0
	normPrev, normChrom := "", ""
	caller := r.kb.Caller()
	keep := func(chrom string, start, end int) bool {
		records++
		if r.opt.Progress != nil && records%progressEvery == 0 {
			r.progress(pass, cr.n)
		}
		if len(caller.DefinitionSitesIn(chrom, start, end)) == 0 {
			return false
		}
		used++
		return true
	}
	rd, err := r.newReader(f, cr, vcf.Options{
		MaxLineBytes: r.opt.MaxLineBytes,
		MaxBytes:     r.opt.MaxBytes,
		Keep:         keep,
		SelectSample: func(_ int, name string) bool {
			if r.want != nil && !r.want[name] {
				return false
			}
			rank++
			// The first reading parses every requested sample's genotypes,
			// so that any refusal comes before the first answer; later
			// readings parse only their group's.
			return pass == 0 || rank > lo && rank <= hi
		},
	})
	if err != nil {
		return false, err
	}
	if pass == 0 {
		if err := r.start(rd); err != nil {
			return false, err
		}
	}
	// first is the index in Record.Calls of the group's first sample.
	names, first := rd.Samples(), 0
	if pass == 0 {
		first = lo
		names = names[lo:min(hi, len(names))]
	}
	var sites siteRecords
	for {
		if err := r.ctx.Err(); err != nil {
			return false, err
		}
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if pass > 0 {
				return false, fmt.Errorf("vcf: the file changed between readings: %w", err)
			}
			return false, err
		}
		if rec.Chrom != normPrev {
			normPrev, normChrom = rec.Chrom, vcf.NormChrom(rec.Chrom)
		}
		if pass == 0 {
			r.noteFilter(rec, normChrom)
			if err := checkBuild(r.kb.Caller(), rec, normChrom); err != nil {
				return false, err
			}
		}
		// The group's genotypes are copied into one small array per
		// record: Call.Alleles share the record's array for every sample
		// read, which would otherwise stay reachable (memory growing with
		// the number of samples).
		group := rec.Calls[first : first+len(names)]
		n := 0
		for _, c := range group {
			n += len(c.Alleles)
		}
		gts := make([]int, 0, n)
		kr := &keptRecord{line: rec.Line, source: recordSource(rec), pos: rec.Pos, end: rec.End, ref: rec.Ref, alts: rec.Alts, filter: rec.Filter,
			block: isBlock(&rec), calls: make([]vcf.Call, len(group))}
		for j, c := range group {
			if c.Alleles != nil {
				start := len(gts)
				gts = append(gts, c.Alleles...)
				c.Alleles = gts[start:len(gts):len(gts)]
			}
			kr.calls[j] = c
		}
		for _, s := range caller.DefinitionSitesIn(normChrom, rec.Pos, rec.End) {
			if s.Pos == rec.Pos {
				kr.site = &s
			}
			sites.add(s, kr)
		}
	}
	if pass == 0 {
		r.st.Records, r.st.RecordsUsed = records, used
		r.finishWarnings()
	}
	r.st.Passes = pass + 1
	if len(names) > 0 {
		c := &Chunk{Index: r.chunk, Samples: make([]Sample, 0, len(names))}
		th := r.opt.thresholds()
		for j, name := range names {
			if err := r.ctx.Err(); err != nil {
				return false, err
			}
			s, err := r.sample(lo+j, name, sites.observations(j, th))
			if err != nil {
				return false, err
			}
			c.Samples = append(c.Samples, s)
		}
		r.chunk++
		if err := r.emit(c); err != nil {
			return false, err
		}
		r.done += len(names)
		r.st.Samples = r.done
		r.progress(pass, cr.n)
	}
	return hi < r.selected, nil
}

// start checks the requested samples against the file's once its header
// is read.
func (r *run) start(rd *vcf.Reader) error {
	all := rd.AllSamples()
	r.st.SamplesInFile = len(all)
	if err := r.matchOutside(all); err != nil {
		return err
	}
	if r.want == nil {
		r.selected = len(all)
		return nil
	}
	have := make(map[string]bool, len(all))
	for _, s := range all {
		have[s] = true
	}
	for _, s := range r.opt.Samples {
		if !have[s] {
			return NoSuchSample(s, all)
		}
	}
	r.selected = len(r.want)
	return nil
}

// noteFilter records a used record whose FILTER is not PASS (its
// genotypes are withheld: see withhold).
func (r *run) noteFilter(rec vcf.Record, chrom string) {
	if len(rec.Filter) == 0 || len(rec.Filter) == 1 && rec.Filter[0] == "PASS" {
		return
	}
	r.filterN++
	if len(r.filterW) < maxFilterWarnings {
		r.filterW = append(r.filterW, fmt.Sprintf("%s (%s:%d)", recordSource(rec), chrom, rec.Pos)+" FILTER "+strings.Join(rec.Filter, ";"))
	}
}

func (r *run) finishWarnings() {
	if r.filterN == 0 {
		return
	}
	w := "records at allele-definition positions have a FILTER other than PASS; their genotypes are no-calls there (named in the genes' notes): " + strings.Join(r.filterW, ", ")
	if more := r.filterN - len(r.filterW); more > 0 {
		w += fmt.Sprintf(" and %d more", more)
	}
	r.st.Warnings = append(r.st.Warnings, w)
}

func (r *run) progress(pass int, n int64) {
	if r.opt.Progress == nil {
		return
	}
	passes := (r.selected + r.per - 1) / r.per
	r.opt.Progress(Progress{Pass: pass + 1, Passes: max(passes, 1), FileBytes: n, SamplesDone: r.done, Samples: r.selected})
}

// sample calls one sample's genes and encodes its result.
func (r *run) sample(index int, name string, obs []calling.PositionObservation) (Sample, error) {
	sc := r.kb.Caller().CallSample(obs, calling.CallOptions{ReportUntouched: true})
	res := SampleResult{Sample: name, Genes: make([]GeneResult, 0, len(sc.Genes)), Warnings: nonNil(append(append([]string(nil), r.st.Warnings...), sc.Warnings...))}
	s := Sample{Index: index, Name: name}
	out, hla, warn := r.outsideFor(name)
	res.Warnings = append(res.Warnings, warn...)
	genes := make([]GeneResult, 0, len(sc.Genes))
	for i := range sc.Genes {
		g := geneResult(&sc.Genes[i])
		alignWithCheck(r.kb.Caller(), &g, &sc.Genes[i])
		genes = append(genes, g)
	}
	// The outside calls replace their genes' results; a gene without an
	// allele definition is added.
	var diplotypes map[string]string // the outside calls the checks use
	for gene, c := range out {
		var vcfGene *GeneResult
		at := -1
		for i := range genes {
			if genes[i].Gene == gene {
				vcfGene, at = &genes[i], i
			}
		}
		g := outsideGene(r.kb.Caller(), c, vcfGene)
		if at >= 0 {
			genes[at] = g
		} else {
			genes = append(genes, g)
		}
		if c.Passing && validOutside(r.kb.Caller(), c) == "" {
			if diplotypes == nil {
				diplotypes = map[string]string{}
			}
			diplotypes[gene] = c.Diplotype
		} else if len(r.opt.Drugs) > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: the outside call (%s, %s) is not used in the drug checks (%s); they read the VCF's genotypes of %s", gene, c.Caller, c.Source, g.Summary, gene))
		}
	}
	if len(out) > 0 {
		sort.SliceStable(genes, func(i, j int) bool { return genes[i].Gene < genes[j].Gene })
	}
	if len(r.opt.Drugs) > 0 {
		calls, notes := positionCalls(r.withoutGenes(obs, diplotypes))
		res.Warnings = append(res.Warnings, notes...)
		for _, d := range r.opt.Drugs {
			chk, out := r.check(d, calls, diplotypes, hla)
			res.Checks = append(res.Checks, chk)
			s.Checks = append(s.Checks, out)
		}
	}
	for _, g := range genes {
		if g.NeedsReview {
			s.GenesForReview++
		} else if g.Status == calling.CallCalled {
			s.GenesCalled++
		}
		res.Genes = append(res.Genes, g)
	}
	res.Warnings = engine.CapWarnings(res.Warnings)
	b, err := json.Marshal(res)
	if err != nil {
		return Sample{}, fmt.Errorf("vcfcall: encode the result of sample %q: %w", name, err)
	}
	sum := sha256.Sum256(b)
	s.Result, s.ResultDigest, s.Answer = b, "sha256:"+hex.EncodeToString(sum[:]), &res
	return s, nil
}

// geneResult turns the matcher's call into the answer. A gene that needs
// review, or is not called, never carries a phenotype: its summary says
// what could not be interpreted.
func geneResult(gc *calling.GeneCall) GeneResult {
	g := GeneResult{
		Gene: gc.Gene, Status: gc.Status, Source: gc.Source, Alternatives: []string{}, Phased: gc.Phased,
		MissingPositions: nonNil(gc.MissingPositions), UntestedAlleles: gc.UntestedAlleles, NeedsReview: gc.NeedsReview || len(gc.Uninterpreted) > 0,
		Uninterpreted: nonNil(gc.Uninterpreted), Notes: nonNil(gc.Notes), Observations: nonNil(gc.Observations),
		Diplotypes: make([]DiplotypeResult, 0, len(gc.Diplotypes)),
	}
	withPhenotype := gc.Status == calling.CallCalled && !g.NeedsReview
	var named []string
	for _, d := range gc.Diplotypes {
		dr := DiplotypeResult{Diplotype: d.String(), Alleles: nonNil(d.Alleles)}
		text := dr.Diplotype
		if withPhenotype {
			dr.Phenotype, dr.ActivityScore, dr.PhenotypeError = d.Call.Phenotype, d.Call.ActivityScore, d.PhenotypeError
			switch {
			case dr.Phenotype != "" && dr.ActivityScore != "":
				text += ": " + dr.Phenotype + " (activity score " + dr.ActivityScore + ")"
			case dr.Phenotype != "":
				text += ": " + dr.Phenotype
			case dr.PhenotypeError != "":
				text += ": no CPIC phenotype (" + dr.PhenotypeError + ")"
			}
		}
		named = append(named, text)
		g.Diplotypes = append(g.Diplotypes, dr)
	}
	for _, d := range gc.Alternatives {
		text := d.String()
		if withPhenotype && d.Call.Phenotype != "" {
			text += " (" + d.Call.Phenotype + ")"
		}
		g.Alternatives = append(g.Alternatives, text)
	}
	switch {
	case gc.Status == calling.CallProvisional:
		g.Interpretation = InterpretationProvisional
		g.Summary = InterpretationProvisional + ": " + strings.Join(g.Uninterpreted, "; ")
	case g.NeedsReview:
		g.Interpretation = InterpretationReview
		what := strings.Join(g.Uninterpreted, "; ")
		if what == "" {
			what = strings.Join(g.Notes, "; ")
		}
		if what == "" {
			what = "the matcher flagged the call for review"
		}
		g.Summary = InterpretationReview + ": " + what
	case gc.Status == calling.CallCalled && len(named) > 0:
		g.Interpretation = InterpretationCalled
		g.Summary = strings.Join(named, " or ")
		if len(named) > 1 {
			g.Summary = "ambiguous: " + g.Summary
		}
	case gc.Status == calling.CallNoData:
		g.Interpretation = InterpretationNoData
		g.Summary = "no data: the file has no record at any position of " + gc.Gene
	default:
		g.Interpretation = InterpretationNotCalled
		g.Summary = "not called"
		if len(g.Notes) > 0 {
			g.Summary += ": " + strings.Join(g.Notes, "; ")
		}
	}
	return g
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// validateDrugs refuses invalid drug names (empty, too long) before the
// file is read; an unrecognised name is not an error (its check says so).
func validateDrugs(kb *evaluate.Engine, drugs []string) error {
	var fields []engine.FieldError
	for i, d := range drugs {
		_, err := kb.Evaluate(engine.Request{Drug: d})
		var ve *engine.ValidationError
		switch {
		case errors.As(err, &ve):
			for _, f := range ve.Fields {
				if f.Field == "drug" {
					f.Field = fmt.Sprintf("drug[%d]", i)
				}
				fields = append(fields, f)
			}
		case err != nil:
			return err
		}
	}
	if len(fields) > 0 {
		return &engine.ValidationError{Fields: fields}
	}
	return nil
}

// check evaluates one drug for a sample.
func (r *run) check(drug string, calls []engine.PositionCall, diplotypes, hla map[string]string) (CheckResult, CheckOutcome) {
	res, err := r.kb.Evaluate(engine.Request{Drug: drug, Calls: calls, Diplotypes: diplotypes, HLA: hla})
	if err != nil {
		// The calls come from a file the reader accepted; a refusal here
		// is reported with the check, never dropped.
		msg := "the check could not be made: " + err.Error()
		return CheckResult{Drug: drug, Error: msg}, CheckOutcome{Drug: drug, Error: msg}
	}
	// The calls were written from the file for this check: a ledger of
	// them would name request fields the caller never sent. The file's
	// evidence is accounted for in the sample's gene entries instead
	// (positions used, no-calls and untested alleles, per gene).
	res.Evidence = nil
	return CheckResult{Drug: drug, Result: r.opt.Wire(res)}, CheckOutcome{Drug: drug, OverallSeverity: res.OverallSeverity}
}

// withoutGenes leaves out the observations at definition positions of
// the genes the checks read from outside calls.
func (r *run) withoutGenes(obs []calling.PositionObservation, genes map[string]string) []calling.PositionObservation {
	if len(genes) == 0 {
		return obs
	}
	kept := make([]calling.PositionObservation, 0, len(obs))
	for _, o := range obs {
		if _, gene, ok := r.kb.Caller().DefinitionRef(o.Chrom, o.Pos); ok {
			if _, out := genes[gene]; out {
				continue
			}
		}
		kept = append(kept, o)
	}
	return kept
}

// positionCalls turns a sample's observations into the REST position
// calls. ALT alleles that are not bases (symbolic alleles such as <*>, the
// '*' of an upstream deletion) cannot be written as calls: they are left
// out, and a genotype naming one reads as a no-call there (never as
// reference), with a note.
func positionCalls(obs []calling.PositionObservation) ([]engine.PositionCall, []string) {
	calls := make([]engine.PositionCall, 0, len(obs))
	var notes []string
	for _, o := range obs {
		index := make([]int, len(o.Alts)+1) // VCF allele index → index in the call's alts
		var alts []string
		for i, a := range o.Alts {
			index[i+1] = -1
			if isBases(a) {
				alts = append(alts, a)
				index[i+1] = len(alts)
			}
		}
		var gt strings.Builder
		if o.Withheld != "" {
			// Withheld evidence (quality, FILTER, <NON_REF>, an overlapping
			// variant) is a no-call in the checks too.
			calls = append(calls, engine.PositionCall{Chrom: o.Chrom, Pos: o.Pos, Ref: o.Ref, Genotype: "./."})
			notes = append(notes, fmt.Sprintf("%s:%d (%s): a no-call in the drug checks: %s", o.Chrom, o.Pos, o.Source, o.Withheld))
			continue
		}
		if o.GT == nil {
			gt.WriteString("./.")
		}
		dropped := false
		for i, a := range o.GT {
			if i > 0 {
				if o.Phased {
					gt.WriteByte('|')
				} else {
					gt.WriteByte('/')
				}
			}
			switch {
			case a < 0:
				gt.WriteByte('.')
			case index[a] < 0:
				gt.WriteByte('.')
				dropped = true
			default:
				gt.WriteString(strconv.Itoa(index[a]))
			}
		}
		if dropped {
			notes = append(notes, fmt.Sprintf("%s:%d (%s): the genotype names a non-base ALT allele (%s); the drug checks read it as a no-call", o.Chrom, o.Pos, o.Source, strings.Join(o.Alts, ",")))
		}
		calls = append(calls, engine.PositionCall{Chrom: o.Chrom, Pos: o.Pos, Ref: o.Ref, Alt: strings.Join(alts, ","), Genotype: gt.String()})
	}
	return calls, notes
}

func isBases(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 'A', 'C', 'G', 'T', 'N':
		default:
			return false
		}
	}
	return true
}
