package main

// pgxsafety bench: the load command. It starts the real server in this
// process on loopback with a temporary data directory (local development
// identity, its own tokens), next to a bare net/http handler that decodes
// the same request and writes an answer of the same size, and drives both
// closed-loop and at a fixed rate. See docs/performance.md.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

//go:embed benchdata/order-sign.json
var benchOrderSign []byte

//go:embed benchdata/variant-observation.json
var benchVariantObservation []byte

// benchCheckBody is the typical clopidogrel check of the measurements.
const benchCheckBody = `{"drug":"clopidogrel","diplotypes":{"CYP2C19":"*2/*2"},"genes_tested":["CYP2C19"],"state":"Tamil Nadu","indication":"Acute coronary syndrome with PCI","patient":{"sex":"male","age_years":55}}`

// benchSettings are the flags of pgxsafety bench.
type benchSettings struct {
	conns       []int
	duration    time.Duration
	rateShare   float64
	csvRows     int
	vcfFile     string
	databaseURL string
	scenarios   map[string]bool
	cpuProfile  string
	// prefill is the number of entries appended to each server's audit
	// log before the scenarios run (--audit-prefill).
	prefill int
}

// benchScenarioNames are the scenarios in the order they run.
var benchScenarioNames = []string{"bare", "check-sqlite", "check-postgres", "cds", "vcf", "csv"}

func parseBenchFlags(args []string, stderr io.Writer) (benchSettings, error) {
	env, err := readEnvironment()
	if err != nil {
		return benchSettings{}, err
	}
	fs := newFlagSet("bench", stderr, "bench [--conns 1,8,32,128] [--duration 2s] [--csv-rows 100000] [--vcf FILE] [--database-url postgres://...] [--audit-prefill N]")
	conns := fs.String("conns", "1,8,32,128", "comma-separated numbers of concurrent connections")
	duration := fs.Duration("duration", 2*time.Second, "length of each closed-loop and each fixed-rate run")
	rateShare := fs.Float64("rate-share", 0.8, "fixed-rate runs send at this share of the closed-loop rate measured at the same connections")
	csvRows := fs.Int("csv-rows", 100_000, "rows of each /pgx/batch_csv run (one batch of rows distinct by patient, one of rows distinct in every engine input)")
	vcfFile := fs.String("vcf", "", "VCF posted to /pgx/vcf (default: a generated one-sample VCF of the panel variants)")
	dbURL := fs.String("database-url", env.DatabaseURL, "PostgreSQL URL for the check-postgres scenario (default PGXSAFETY_DATABASE_URL; skipped unless postgres://)")
	only := fs.String("scenarios", strings.Join(benchScenarioNames, ","), "comma-separated scenarios to run")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	prefill := fs.Int("audit-prefill", 0, "append this many entries (without payloads) to each server's audit log before the scenarios, so that they write to a log of that size (on PostgreSQL they stay in --database-url)")
	if err := parseFlags(fs, args); err != nil {
		return benchSettings{}, err
	}
	s := benchSettings{duration: *duration, rateShare: *rateShare, csvRows: *csvRows, vcfFile: *vcfFile,
		databaseURL: *dbURL, cpuProfile: *cpuProfile, scenarios: map[string]bool{}, prefill: *prefill}
	for _, f := range strings.Split(*conns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return s, usageError("bench: --conns must list positive integers, got %q", *conns)
		}
		s.conns = append(s.conns, n)
	}
	for _, f := range strings.Split(*only, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(benchScenarioNames, f) {
			return s, usageError("bench: unknown scenario %q (known: %s)", f, strings.Join(benchScenarioNames, ", "))
		}
		s.scenarios[f] = true
	}
	if s.duration <= 0 || s.rateShare <= 0 || s.rateShare > 1 || s.csvRows <= 0 || s.prefill < 0 {
		return s, usageError("bench: --duration, --csv-rows must be positive, --audit-prefill not negative and --rate-share in (0,1]")
	}
	if !strings.HasPrefix(s.databaseURL, "postgres://") && !strings.HasPrefix(s.databaseURL, "postgresql://") {
		s.databaseURL = ""
	}
	return s, nil
}

// benchResult is one row of the report.
type benchResult struct {
	scenario   string
	mode       string // closed or fixed
	conns      int
	requests   int
	errors     int
	elapsed    time.Duration
	lat        []time.Duration
	cpu        time.Duration // process CPU (user+system) during the run
	commits    int64
	entries    int64
	commitTime time.Duration // the audit writer's time in transactions (BEGIN to COMMIT)
	peakRSSKiB int64
	units      int // work units per request (CSV rows); 1 otherwise
}

func (r benchResult) rate() float64 { return float64(r.requests) / r.elapsed.Seconds() }

func (r benchResult) pct(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.lat[min(len(r.lat)-1, int(float64(len(r.lat))*p))]
}

func (r benchResult) cpuPerRequest() time.Duration {
	if r.requests == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.requests*max(r.units, 1))
}

// benchTarget is one kind of request.
type benchTarget struct {
	name string
	// build returns a new request (called per request; CDS needs a fresh
	// token each time).
	build func(ctx context.Context) (*http.Request, error)
	// commits reads the audit commit counters of the server behind it.
	commits func() commitCounts
}

// benchServer is one running pgxsafety server.
type benchServer struct {
	s       *server
	srv     *http.Server
	base    string
	dir     string
	token   string
	cdsKey  *ecdsa.PrivateKey
	commits atomic.Int64
	entries atomic.Int64
	txNanos atomic.Int64
}

// commitCounts are a server's audit commit counters: transactions,
// entries, and the writer's time inside them (its one serial step).
type commitCounts struct {
	commits, entries int64
	time             time.Duration
}

func (c commitCounts) minus(d commitCounts) commitCounts {
	return commitCounts{commits: c.commits - d.commits, entries: c.entries - d.entries, time: c.time - d.time}
}

func (b *benchServer) commitCounts() commitCounts {
	return commitCounts{commits: b.commits.Load(), entries: b.entries.Load(), time: time.Duration(b.txNanos.Load())}
}

func (b *benchServer) close() {
	b.srv.Close()
	b.s.close()
}

// benchPublicURL is the public URL the bench's server is configured with:
// CDS tokens name it in aud.
const benchPublicURL = "http://127.0.0.1"

// benchCDSIssuer is the issuer of the bench's CDS client.
const benchCDSIssuer = "https://ehr.bench.invalid"

// startBenchServer starts the real server on loopback over the audit
// database url ("" = SQLite in a temporary data directory).
func startBenchServer(ctx context.Context, root, name, databaseURL string) (*benchServer, error) {
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	// The CDS client's key pair: the public half in a JWKS file named by
	// the trusted-clients file.
	cdsKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	pub, err := jwk.FromRaw(cdsKey.Public())
	if err != nil {
		return nil, err
	}
	_ = pub.Set(jwk.KeyIDKey, "bench")
	_ = pub.Set(jwk.AlgorithmKey, jwa.ES256)
	set := jwk.NewSet()
	_ = set.AddKey(pub)
	jwks, err := json.Marshal(set)
	if err != nil {
		return nil, err
	}
	jwksFile := filepath.Join(dir, "cds-client-jwks.json")
	if err := os.WriteFile(jwksFile, jwks, 0o600); err != nil {
		return nil, err
	}
	clients, _ := json.Marshal([]map[string]any{{"iss": benchCDSIssuer, "jwks_file": jwksFile, "algorithms": []string{"ES256"}}})
	clientsFile := filepath.Join(dir, "cds-clients.json")
	if err := os.WriteFile(clientsFile, clients, 0o600); err != nil {
		return nil, err
	}

	cfg, err := loadServeConfig([]string{"--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data")}, io.Discard)
	if err != nil {
		return nil, err
	}
	// The bench's own settings, whatever the environment says: local
	// development identity, in-memory rate limits set out of the way, the
	// CDS client above, the audit database asked for.
	cfg.oidc = oidcSettings{}
	// The garbage collector's target as serve sets it (process-wide).
	if cfg.gcPercent > 0 {
		debug.SetGCPercent(cfg.gcPercent)
	}
	cfg.redisURL = ""
	cfg.rateLimitsFile = ""
	cfg.ratePerMinute, cfg.rateBurst = 1_000_000_000, 1_000_000_000
	cfg.publicURL = benchPublicURL
	cfg.cdsClientsFile = clientsFile
	cfg.cdsDevUnauthenticated = false
	cfg.databaseURL = databaseURL
	cfg.batchCSVMaxRows = max(cfg.batchCSVMaxRows, 1<<30)
	cfg.batchCSVMaxBytes = max(cfg.batchCSVMaxBytes, 1<<34)
	cfg.smart = smartSettings{}

	b := &benchServer{dir: dir, cdsKey: cdsKey}
	s, err := newServer(ctx, cfg, zap.NewNop(), io.Discard, serverOptions{storeOptions: func(o *sqlstore.Options) {
		prev := o.OnCommit
		o.OnCommit = func(st sqlstore.CommitStats) {
			prev(st)
			b.txNanos.Add(int64(st.Duration))
			if st.Err == nil {
				b.commits.Add(1)
				b.entries.Add(int64(st.Entries))
			}
		}
	}})
	if err != nil {
		return nil, err
	}
	b.s = s
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.close()
		return nil, err
	}
	b.srv = &http.Server{Handler: s.handler, ReadHeaderTimeout: readHeaderTimeout, MaxHeaderBytes: maxHeaderBytes}
	go func() { _ = b.srv.Serve(ln) }()
	b.base = "http://" + ln.Addr().String()
	key, err := httpx.LoadOrCreateDevKey(cfg.dataDir)
	if err != nil {
		b.close()
		return nil, err
	}
	if b.token, err = httpx.MintDevToken(key, "bench", 12*time.Hour, time.Now()); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// prefill appends n entries to the server's audit log through its store
// (the writer, in commit groups), as a busy service's history: check
// entries with request ids of the form the server writes and random
// digests, without payloads (an append never reads an old entry's payload
// pages again; it does write the indexes, whose size is what a long
// history changes).
// It returns the number of entries the store acknowledged.
func (b *benchServer) prefill(ctx context.Context, n int) (int64, error) {
	const workers = 64
	var next, added atomic.Int64
	errs := make(chan error, workers)
	t0 := time.Now().Add(-time.Duration(n) * time.Millisecond)
	for range workers {
		go func() {
			for {
				i := next.Add(1)
				if i > int64(n) {
					errs <- nil
					return
				}
				digest := make([]byte, 64)
				_, _ = rand.Read(digest)
				at := t0.Add(time.Duration(i) * time.Millisecond)
				e := audit.Entry{
					Time:             at,
					Principal:        audit.Principal{Subject: "bench-prefill"},
					Endpoint:         "POST /pgx/check",
					RequestID:        httpx.NewRequestID(at),
					KnowledgeVersion: "bench-prefill",
					RequestDigest:    "sha256:" + hex.EncodeToString(digest[:32]),
					ResponseDigest:   "sha256:" + hex.EncodeToString(digest[32:]),
				}
				if _, err := b.s.store.Append(ctx, e); err != nil {
					errs <- err
					return
				}
				added.Add(1)
			}
		}()
	}
	var first error
	for range workers {
		if err := <-errs; err != nil && first == nil {
			first = err
			next.Store(int64(n)) // the others stop at their next entry
		}
	}
	return added.Load(), first
}

// cdsToken mints the CDS client's JWT for a call to path (a new jti each
// time: the server refuses replays).
func (b *benchServer) cdsToken(path string) (string, error) {
	jti := make([]byte, 16)
	_, _ = rand.Read(jti)
	now := time.Now()
	payload, _ := json.Marshal(map[string]any{
		"iss": benchCDSIssuer, "aud": benchPublicURL + path, "iat": now.Unix(), "exp": now.Add(4 * time.Minute).Unix(),
		"jti": hex.EncodeToString(jti),
	})
	hdr := jws.NewHeaders()
	_ = hdr.Set("typ", "JWT")
	_ = hdr.Set(jws.KeyIDKey, "bench")
	signed, err := jws.Sign(payload, jws.WithKey(jwa.ES256, b.cdsKey, jws.WithProtectedHeaders(hdr)))
	return string(signed), err
}

func (b *benchServer) checkTarget(name string) benchTarget {
	return benchTarget{name: name, commits: b.commitCounts, build: func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.base+"/pgx/check", strings.NewReader(benchCheckBody))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+b.token)
		return req, nil
	}}
}

func (b *benchServer) cdsTarget(body []byte) benchTarget {
	const path = "/cds-services/pgx-order-sign"
	return benchTarget{name: "cds", commits: b.commitCounts, build: func(ctx context.Context) (*http.Request, error) {
		tok, err := b.cdsToken(path)
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.base+path, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		return req, nil
	}}
}

func (b *benchServer) vcfTarget(vcf []byte) (benchTarget, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "bench.vcf")
	if err != nil {
		return benchTarget{}, err
	}
	_, _ = fw.Write(vcf)
	_ = mw.WriteField("drug", "clopidogrel")
	if err := mw.Close(); err != nil {
		return benchTarget{}, err
	}
	payload, ctype := body.Bytes(), mw.FormDataContentType()
	return benchTarget{name: "vcf", commits: b.commitCounts, build: func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.base+"/pgx/vcf", bytes.NewReader(payload))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("Authorization", "Bearer "+b.token)
		return req, nil
	}}, nil
}

// startBareServer serves the bare handler: it decodes the check request
// (as generic JSON) and writes an answer of answerSize bytes.
func startBareServer(answerSize int) (*http.Server, string, error) {
	answer := bytes.Repeat([]byte(" "), max(answerSize, 2))
	answer[0], answer[len(answer)-1] = '{', '}'
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
		_, _ = w.Write(answer)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout}
	go func() { _ = srv.Serve(ln) }()
	return srv, "http://" + ln.Addr().String(), nil
}

// benchOrderSignBody builds the order-sign request with a 50-resource
// prefetch: the Patient, the CYP2C19 *2/*2 Genotype, its Therapeutic
// Implication and a Variant of the template, 26 dbSNP Variant results of
// tracked panel variants of other genes reported absent, and 20 active
// MedicationRequests coded with the knowledge's RxNorm codes.
func benchOrderSignBody(kb *evaluate.Engine) ([]byte, error) {
	var req map[string]any
	if err := json.Unmarshal(benchOrderSign, &req); err != nil {
		return nil, err
	}
	prefetch, _ := req["prefetch"].(map[string]any)
	obsBundle, _ := prefetch["pgxObservations"].(map[string]any)
	entries, _ := obsBundle["entry"].([]any)
	if prefetch == nil || entries == nil {
		return nil, errors.New("bench: order-sign template has no pgxObservations entries")
	}
	for _, v := range kb.Variants {
		if len(entries) == 29 {
			break
		}
		if v.Gene == "CYP2C19" {
			continue // the Genotype covers it
		}
		var m map[string]any
		if err := json.Unmarshal(benchVariantObservation, &m); err != nil {
			return nil, err
		}
		m["id"] = "var-" + v.RsID
		m["subject"] = map[string]any{"reference": "Patient/CGPatientExample01"}
		m["valueCodeableConcept"] = map[string]any{"coding": []any{map[string]any{"system": "http://loinc.org", "code": "LA9634-2", "display": "Absent"}}}
		comps, _ := m["component"].([]any)
		if len(comps) < 2 {
			return nil, errors.New("bench: variant template has fewer than two components")
		}
		comps[0].(map[string]any)["valueCodeableConcept"] = map[string]any{"text": v.Gene}
		comps[1].(map[string]any)["valueCodeableConcept"] = map[string]any{"coding": []any{map[string]any{"system": "http://www.ncbi.nlm.nih.gov/projects/SNP", "code": v.RsID}}}
		entries = append(entries, map[string]any{"resource": m})
	}
	obsBundle["entry"] = entries
	var meds []any
	for _, d := range kb.Drugs {
		if len(meds) == 20 {
			break
		}
		if len(d.RxNormCUIs) == 0 || d.Name == "clopidogrel" {
			continue
		}
		meds = append(meds, map[string]any{"resource": map[string]any{
			"resourceType": "MedicationRequest", "id": "active-" + d.RxNormCUIs[0], "status": "active", "intent": "order",
			"authoredOn":                "2024-01-15",
			"medicationCodeableConcept": map[string]any{"coding": []any{map[string]any{"system": "http://www.nlm.nih.gov/research/umls/rxnorm", "code": d.RxNormCUIs[0]}}},
			"subject":                   map[string]any{"reference": "Patient/CGPatientExample01"},
		}})
	}
	prefetch["activeMedications"] = map[string]any{"resourceType": "Bundle", "type": "searchset", "entry": meds}
	if n := 1 + len(entries) + len(meds); n != 50 {
		return nil, fmt.Errorf("bench: the prefetch holds %d resources, want 50 (knowledge too small)", n)
	}
	return json.Marshal(req)
}

// benchVCF is a one-sample GRCh38 VCF header without records: the
// smallest file /pgx/vcf accepts (every gene is then reported as not
// covered). Use --vcf for a real file.
const benchVCF = "##fileformat=VCFv4.2\n##contig=<ID=chr10,length=133797422>\n##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\n"

// benchCSV writes rows data rows of a lab CSV, each with its own
// patient_ref. The engine does not read patient_ref, so its inputs are
// only 64 (8 drug/variant/indication rows × 8 states) and the batch's
// per-run result cache answers every later repeat; benchCSVDistinctInputs
// gives rows that are each evaluated.
func benchCSV(rows int) []byte {
	drugs := []struct{ drug, variants, indication string }{
		{"clopidogrel", "rs4244285;rs12769205", "acute coronary syndrome with PCI"},
		{"clopidogrel", "", "stable angina"},
		{"simvastatin", "rs4149056", "hypercholesterolaemia"},
		{"warfarin", "rs1057910;rs9923231", "atrial fibrillation"},
		{"codeine", "rs3892097", "pain"},
		{"azathioprine", "rs116855232;rs1142345", "inflammatory bowel disease"},
		{"carbamazepine", "rs2395029", "epilepsy"},
		{"sertraline", "", "depression"},
	}
	states := []string{"Tamil Nadu", "Kerala", "Maharashtra", "Gujarat", "Punjab", "Bihar", "Odisha", "Karnataka"}
	var b bytes.Buffer
	b.WriteString("drug,variants,state,ethnicity,indication,patient_ref\n")
	for i := range rows {
		d := drugs[i%len(drugs)]
		fmt.Fprintf(&b, "%s,%s,%s,,%s,BENCH-%08d\n", d.drug, d.variants, states[(i/len(drugs))%len(states)], d.indication, i)
	}
	return b.Bytes()
}

// benchCSVDistinctInputs is benchCSV with the data row number appended
// to the indication, so that no two rows share an engine input (benchCSV's
// rows differ only in patient_ref, which the engine does not read: its
// 64 drug/variant/state/indication inputs repeat, and the per-run result
// cache answers all but the first of each).
func benchCSVDistinctInputs(rows int) []byte {
	lines := bytes.SplitAfter(benchCSV(rows), []byte("\n"))
	var b bytes.Buffer
	b.Write(lines[0])
	for i, l := range lines[1:] {
		if len(l) == 0 {
			continue
		}
		// drug,variants,state,ethnicity,indication,patient_ref\n
		cut := bytes.LastIndexByte(l, ',')
		fmt.Fprintf(&b, "%s (row %d)%s", l[:cut], i+1, l[cut:])
	}
	return b.Bytes()
}

// benchCPU returns the process's CPU time (user + system).
func benchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// resetPeakRSS resets the kernel's high-water mark of the resident set
// (Linux: clear_refs 5); peakRSSKiB reads it (VmHWM). Elsewhere both do
// nothing and the peak is 0.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func peakRSSKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// benchDo sends one request and reads the answer to its end.
func benchDo(ctx context.Context, client *http.Client, t benchTarget) error {
	req, err := t.build(ctx)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: status %d", t.name, resp.StatusCode)
	}
	return err
}

// drive runs t with conns connections for d: closed-loop when rate is 0
// (each connection sends its next request when the previous answer is
// read), else at rate requests/s in total, each request's latency
// measured from its intended send time (a late send counts as latency:
// no coordinated omission).
func drive(ctx context.Context, t benchTarget, conns int, d time.Duration, rate float64) benchResult {
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}}
	defer client.CloseIdleConnections()
	// Warm the connections up.
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() { defer wg.Done(); _ = benchDo(ctx, client, t) }()
	}
	wg.Wait()

	res := benchResult{scenario: t.name, mode: "closed", conns: conns, units: 1}
	if rate > 0 {
		res.mode = "fixed"
	}
	lat := make([][]time.Duration, conns)
	var errs atomic.Int64
	var next atomic.Int64
	var c0 commitCounts
	if t.commits != nil {
		c0 = t.commits()
	}
	resetPeakRSS()
	cpu0 := benchCPU()
	start := time.Now()
	deadline := start.Add(d)
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				intended := time.Now()
				if rate > 0 {
					i := next.Add(1) - 1
					intended = start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
					if !intended.Before(deadline) {
						return
					}
					if w := time.Until(intended); w > 0 {
						time.Sleep(w)
					}
				} else if !intended.Before(deadline) {
					return
				}
				if err := benchDo(ctx, client, t); err != nil {
					errs.Add(1)
					continue
				}
				lat[c] = append(lat[c], time.Since(intended))
			}
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.cpu = benchCPU() - cpu0
	res.peakRSSKiB = peakRSSKiB()
	if t.commits != nil {
		c := t.commits().minus(c0)
		res.commits, res.entries, res.commitTime = c.commits, c.entries, c.time
	}
	res.lat = slices.Concat(lat...)
	slices.Sort(res.lat)
	res.requests = len(res.lat)
	res.errors = int(errs.Load())
	return res
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	st, err := parseBenchFlags(args, stderr)
	if err != nil {
		return err
	}
	if st.cpuProfile != "" {
		f, err := os.Create(st.cpuProfile)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	root, err := os.MkdirTemp("", "pgxsafety-bench-")
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer os.RemoveAll(root)

	sq, err := startBenchServer(ctx, root, "sqlite", "")
	if err != nil {
		return fmt.Errorf("bench: start the server (SQLite): %w", err)
	}
	defer sq.close()
	var pg *benchServer
	if st.scenarios["check-postgres"] && st.databaseURL != "" {
		if pg, err = startBenchServer(ctx, root, "postgres", st.databaseURL); err != nil {
			return fmt.Errorf("bench: start the server (PostgreSQL): %w", err)
		}
		defer pg.close()
	}
	for _, b := range []*benchServer{sq, pg} {
		if b == nil || st.prefill == 0 {
			continue
		}
		start := time.Now()
		added, err := b.prefill(ctx, st.prefill)
		if err != nil {
			return fmt.Errorf("bench: --audit-prefill: %w", err)
		}
		fmt.Fprintf(stderr, "bench: %s audit log prefilled with %d entries in %s\n", b.s.store.Backend(), added, time.Since(start).Round(time.Millisecond))
	}

	// The bare handler writes an answer as large as the real one.
	size, err := answerSize(ctx, sq.checkTarget("check-sqlite"))
	if err != nil {
		return fmt.Errorf("bench: first check: %w", err)
	}
	bare, bareBase, err := startBareServer(size)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer bare.Close()
	bareTarget := benchTarget{name: "bare", build: func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, bareBase+"/pgx/check", strings.NewReader(benchCheckBody))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+sq.token)
		}
		return req, err
	}}

	targets := []benchTarget{}
	if st.scenarios["bare"] {
		targets = append(targets, bareTarget)
	}
	if st.scenarios["check-sqlite"] {
		targets = append(targets, sq.checkTarget("check-sqlite"))
	}
	if pg != nil {
		targets = append(targets, pg.checkTarget("check-postgres"))
	}
	if st.scenarios["cds"] {
		body, err := benchOrderSignBody(sq.s.kb)
		if err != nil {
			return err
		}
		targets = append(targets, sq.cdsTarget(body))
	}
	if st.scenarios["vcf"] {
		vcf := []byte(benchVCF)
		if st.vcfFile != "" {
			if vcf, err = os.ReadFile(st.vcfFile); err != nil {
				return fmt.Errorf("bench: %w", err)
			}
		}
		t, err := sq.vcfTarget(vcf)
		if err != nil {
			return err
		}
		targets = append(targets, t)
	}
	for _, t := range targets {
		if err := benchDo(ctx, http.DefaultClient, t); err != nil {
			return fmt.Errorf("bench: first request of %s: %w", t.name, err)
		}
	}

	fmt.Fprintf(stderr, "bench: answer size %d bytes; %d scenario(s) × %v connections × closed-loop and fixed-rate, %v each\n",
		size, len(targets), st.conns, st.duration)
	var results []benchResult
	for _, c := range st.conns {
		for _, t := range targets {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			closed := drive(ctx, t, c, st.duration, 0)
			results = append(results, closed)
			fmt.Fprintf(stderr, "bench: %-15s c=%-4d closed %8.0f req/s\n", t.name, c, closed.rate())
			if closed.requests > 0 {
				fixed := drive(ctx, t, c, st.duration, closed.rate()*st.rateShare)
				results = append(results, fixed)
			}
		}
	}
	if st.scenarios["csv"] {
		for _, c := range []struct {
			name string
			data []byte
		}{{"csv-patients", benchCSV(st.csvRows)}, {"csv-inputs", benchCSVDistinctInputs(st.csvRows)}} {
			r, err := benchCSVRun(ctx, sq, c.name, c.data, st.csvRows)
			if err != nil {
				return err
			}
			results = append(results, r)
		}
	}
	writeBenchReport(stdout, results)
	return nil
}

// answerSize returns the size of one answer of t.
func answerSize(ctx context.Context, t benchTarget) (int, error) {
	req, err := t.build(ctx)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	return len(b), err
}

// benchCSVRun posts one CSV batch (data, of rows data rows) and reads the
// NDJSON stream to its end; the result is reported as scenario name.
func benchCSVRun(ctx context.Context, b *benchServer, name string, data []byte, rows int) (benchResult, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "bench.csv")
	if err != nil {
		return benchResult{}, err
	}
	_, _ = fw.Write(data)
	if err := mw.Close(); err != nil {
		return benchResult{}, err
	}
	c0 := b.commitCounts()
	resetPeakRSS()
	cpu0 := benchCPU()
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.base+"/pgx/batch_csv", &body)
	if err != nil {
		return benchResult{}, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Accept", "application/x-ndjson")
	req.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return benchResult{}, fmt.Errorf("bench: csv: %w", err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("bench: csv: status %d", resp.StatusCode)
	}
	if err != nil {
		return benchResult{}, err
	}
	el := time.Since(start)
	c := b.commitCounts().minus(c0)
	return benchResult{scenario: name, mode: "one batch", conns: 1, requests: 1, elapsed: el, lat: []time.Duration{el},
		cpu: benchCPU() - cpu0, commits: c.commits, entries: c.entries, commitTime: c.time, peakRSSKiB: peakRSSKiB(), units: rows}, nil
}

// writeBenchReport prints the results with each figure's ratio to the
// bare handler's at the same connections and mode.
func writeBenchReport(w io.Writer, results []benchResult) {
	bare := map[string]benchResult{}
	for _, r := range results {
		if r.scenario == "bare" {
			bare[fmt.Sprintf("%s/%d", r.mode, r.conns)] = r
		}
	}
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 2, 64) }
	ratio := func(a, b float64) string {
		if b == 0 || math.IsNaN(a/b) {
			return "-"
		}
		return strconv.FormatFloat(a/b, 'f', 2, 64)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tmode\tconns\treq/s\tp50 ms\tp95 ms\tp99 ms\tCPU µs/req (CSV: /row)\tentries/commit\twriter busy %\tpeak RSS MiB\terrors\t×bare req/s\t×bare p95\t×bare CPU\t")
	for _, r := range results {
		b, hasBare := bare[fmt.Sprintf("%s/%d", r.mode, r.conns)]
		epc, busy := "-", "-"
		if r.commits > 0 {
			epc = strconv.FormatFloat(float64(r.entries)/float64(r.commits), 'f', 1, 64)
			busy = strconv.FormatFloat(100*r.commitTime.Seconds()/r.elapsed.Seconds(), 'f', 0, 64)
		}
		rate := strconv.FormatFloat(r.rate(), 'f', 0, 64)
		if r.units > 1 {
			rate = strconv.FormatFloat(float64(r.units)/r.elapsed.Seconds(), 'f', 0, 64) + " rows/s"
		}
		rr, rp, rc := "-", "-", "-"
		if hasBare && r.scenario != "bare" {
			rr = ratio(r.rate(), b.rate())
			rp = ratio(float64(r.pct(0.95)), float64(b.pct(0.95)))
			rc = ratio(float64(r.cpuPerRequest()), float64(b.cpuPerRequest()))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%.0f\t%d\t%s\t%s\t%s\t\n",
			r.scenario, r.mode, r.conns, rate, ms(r.pct(0.50)), ms(r.pct(0.95)), ms(r.pct(0.99)),
			r.cpuPerRequest().Microseconds(), epc, busy, float64(r.peakRSSKiB)/1024, r.errors, rr, rp, rc)
	}
	_ = tw.Flush()
}
