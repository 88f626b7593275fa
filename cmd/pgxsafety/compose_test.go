package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tdlog "github.com/transparency-dev/formats/log"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"go.yaml.in/yaml/v3"
	"golang.org/x/mod/sumdb/note"

	"github.com/pgxsafety/pgxsafety/cdshooks/smart"
	"github.com/pgxsafety/pgxsafety/cdshooks/smart/smarttest"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// composeService is the part of a compose.yaml service the tests read.
type composeService struct {
	Image       string            `yaml:"image"`
	Build       string            `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Tmpfs       []string          `yaml:"tmpfs"`
	ReadOnly    bool              `yaml:"read_only"`
	NetworkMode string            `yaml:"network_mode"`
	Ports       []string          `yaml:"ports"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
}

// composeDefaults matches compose's ${VAR:-default} interpolation.
var composeDefaults = regexp.MustCompile(`\$\{(\w+):-([^}]*)\}`)

// readCompose reads ../../compose.yaml with every ${VAR:-default} at its
// default (the file's own values, whatever this machine's environment).
func readCompose(t *testing.T) map[string]composeService {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]composeService `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	interp := func(s string) string { return composeDefaults.ReplaceAllString(s, "$2") }
	for name, s := range f.Services {
		for k, v := range s.Environment {
			s.Environment[k] = interp(v)
		}
		for i, c := range s.Command {
			s.Command[i] = interp(c)
		}
		f.Services[name] = s
	}
	return f.Services
}

// imageEnvironment is the ENV of the Dockerfile's last stage: what every
// container of the image starts with, before compose's environment.
func imageEnvironment(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	inEnv := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "FROM ") {
			clear(env)
		}
		if rest, ok := strings.CutPrefix(line, "ENV "); ok {
			line, inEnv = rest, true
		} else if !inEnv {
			continue
		}
		inEnv = strings.HasSuffix(line, `\`)
		for _, kv := range strings.Fields(strings.TrimSuffix(line, `\`)) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				t.Fatalf("Dockerfile: ENV %q is not KEY=VALUE", kv)
			}
			env[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return env
}

// environmentNames is every variable serve reads.
func environmentNames() map[string]bool {
	names := map[string]bool{}
	t := reflect.TypeFor[environment]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("env"), ",")
		names[name] = true
	}
	return names
}

// composeReplicas are the serve services of compose.yaml.
var composeReplicas = []string{"pgxsafety-1", "pgxsafety-2"}

// TestComposeFile checks compose.yaml against the documentation and the
// image, without Docker: the grants are docs/operations.md's, the
// migration runs as the schema's owner and the replicas as the service
// role without migrating, both replicas share one data volume and
// listen where the proxy sends, every PGXSAFETY_ variable is one serve
// reads, and the root file system is read-only.
func TestComposeFile(t *testing.T) {
	svcs := readCompose(t)
	img := imageEnvironment(t)
	if img["PGXSAFETY_DATA_DIR"] != "/data" {
		t.Errorf("Dockerfile ENV PGXSAFETY_DATA_DIR = %q, want /data (the volume)", img["PGXSAFETY_DATA_DIR"])
	}
	grants := svcs["db-grants"].Command
	var got []string
	for i := 0; i+1 < len(grants); i++ {
		if grants[i] == "-c" {
			got = append(got, grants[i+1])
		}
	}
	if want := documentedGrants(t, "audit", "pgxsafety_app"); !reflect.DeepEqual(got, want) {
		t.Errorf("db-grants runs\n%q\nwant the grants of docs/operations.md\n%q", got, want)
	}
	if !strings.Contains(strings.Join(svcs["db-roles"].Command, " "), "CREATE SCHEMA IF NOT EXISTS audit AUTHORIZATION pgxsafety_owner") {
		t.Error("db-roles does not create the audit schema owned by pgxsafety_owner")
	}
	dbUser := func(svc string) (string, url.Values) {
		u, err := url.Parse(svcs[svc].Environment["PGXSAFETY_DATABASE_URL"])
		if err != nil || u.Scheme != "postgres" {
			t.Fatalf("%s: PGXSAFETY_DATABASE_URL %v", svc, err)
		}
		return u.User.Username(), u.Query()
	}
	if user, q := dbUser("migrate"); user != "pgxsafety_owner" || q.Get("search_path") != "audit" || !reflect.DeepEqual(svcs["migrate"].Command, []string{"migrate"}) {
		t.Errorf("migrate runs %q as %s in %s, want migrate as pgxsafety_owner in audit", svcs["migrate"].Command, user, q.Get("search_path"))
	}
	known := environmentNames()
	var targets []string
	for i, name := range composeReplicas {
		s := svcs[name]
		if user, q := dbUser(name); user != "pgxsafety_app" || q.Get("search_path") != "audit" {
			t.Errorf("%s connects as %s in %s, want pgxsafety_app in audit", name, user, q.Get("search_path"))
		}
		if s.Environment["PGXSAFETY_DATABASE_MIGRATE"] != "false" {
			t.Errorf("%s may migrate", name)
		}
		if !s.ReadOnly || len(s.Tmpfs) == 0 || !strings.HasPrefix(s.Tmpfs[0], "/tmp") {
			t.Errorf("%s: read_only %v tmpfs %q, want a read-only root with /tmp on tmpfs", name, s.ReadOnly, s.Tmpfs)
		}
		if !reflect.DeepEqual(s.Volumes, []string{"pgxsafety-data:/data"}) {
			t.Errorf("%s mounts %q, want the shared pgxsafety-data volume at /data", name, s.Volumes)
		}
		if s.NetworkMode != "service:proxy" {
			t.Errorf("%s network_mode %q: the loopback-only development mode needs the proxy's namespace", name, s.NetworkMode)
		}
		for k := range s.Environment {
			if !known[k] {
				t.Errorf("%s sets %s, which serve does not read", name, k)
			}
		}
		if err := requireLoopback(s.Environment["PGXSAFETY_ADDR"]); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		targets = append(targets, "--to", s.Environment["PGXSAFETY_ADDR"])
		if i > 0 {
			for k, v := range svcs[composeReplicas[0]].Environment {
				if k != "PGXSAFETY_ADDR" && s.Environment[k] != v {
					t.Errorf("%s: %s = %q, the first replica has %q", name, k, s.Environment[k], v)
				}
			}
		}
	}
	if proxy := strings.Join(svcs["proxy"].Command, " "); !strings.HasSuffix(proxy, strings.Join(targets, " ")) {
		t.Errorf("the proxy runs %q, want it to send to %q", proxy, targets)
	}
	if p := svcs["proxy"].Ports; len(p) != 1 || !strings.HasPrefix(p[0], "127.0.0.1:") {
		t.Errorf("proxy ports %q: the development mode is published on the host's loopback only", p)
	}
}

// replicaEnv is the environment of a compose service's process here: the
// image's ENV, then the service's, with what names a container-network
// resource mapped to this test's (the data volume to dataDir, the URLs
// to the test's PostgreSQL, Redis and front), plus extra.
func replicaEnv(t *testing.T, svc composeService, img map[string]string, dataDir, dbURL, redisURL, publicURL string, extra ...string) []string {
	t.Helper()
	env := map[string]string{}
	for k, v := range img {
		env[k] = v
	}
	for k, v := range svc.Environment {
		env[k] = v
	}
	mapped := map[string]string{"PGXSAFETY_DATA_DIR": dataDir, "PGXSAFETY_DATABASE_URL": dbURL,
		"PGXSAFETY_REDIS_URL": redisURL, "PGXSAFETY_PUBLIC_URL": publicURL}
	for k, v := range mapped {
		if _, ok := env[k]; ok {
			env[k] = v
		}
	}
	// The listen address is given with --addr 127.0.0.1:0 (TestComposeFile
	// checks compose's is loopback).
	delete(env, "PGXSAFETY_ADDR")
	var out []string
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return childEnv(append(out, extra...)...)
}

// front is the reverse proxy of the test: each request goes to the replica
// the test names (compose's proxy picks at random; the test picks so that
// a launch provably crosses replicas).
type front struct {
	mu      sync.Mutex
	next    int
	proxies []*httputil.ReverseProxy
	ln      net.Listener
	srv     *http.Server
}

func newFront(t *testing.T) *front {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &front{ln: ln}
	f.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		p := f.proxies[f.next]
		f.mu.Unlock()
		p.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 5 * time.Second}
	go f.srv.Serve(ln)
	t.Cleanup(func() { f.srv.Close() })
	return f
}

func (f *front) url() string { return "http://" + f.ln.Addr().String() }

func (f *front) add(base string) {
	u, _ := url.Parse(base)
	f.mu.Lock()
	f.proxies = append(f.proxies, httputil.NewSingleHostReverseProxy(u))
	f.mu.Unlock()
}

func (f *front) on(i int) {
	f.mu.Lock()
	f.next = i
	f.mu.Unlock()
}

// TestComposeReplicas runs the compose stack's processes without Docker,
// from compose.yaml and the Dockerfile's ENV: "pgxsafety migrate" with the
// migrate service's environment as the schema's owner, the documented
// grants, then two "pgxsafety serve" with the replicas' environments on
// one PostgreSQL, one Redis and one data directory (the shared volume).
// Then a SMART launch starts on one replica and finishes on the other;
// one caller's rate budget is spent across both; and each replica's signed
// checkpoint proves the other's entries, and "audit verify" checks the
// log against both. Beyond compose's environment the test registers its
// fake EHR (PGXSAFETY_SMART_EHRS) and signs checkpoints every 200ms
// instead of 10s.
func TestComposeReplicas(t *testing.T) {
	clearEnv(t)
	ownerURL := pgSchemaURL(t)
	redisURL := os.Getenv("PGXSAFETY_TEST_REDIS_URL")
	if redisURL == "" {
		t.Skip("PGXSAFETY_TEST_REDIS_URL is not set: the replicas need Redis (.ci/run sets it)")
	}
	if os.Getenv(appUserEnv) == "" {
		t.Skip(appUserEnv + " is not set: no least-privilege role to serve as (.ci/run sets it)")
	}
	svcs := readCompose(t)
	img := imageEnvironment(t)
	bin := buildBinary(t)

	// migrate, as the owner, with the migrate service's environment.
	migrate := exec.Command(bin, "migrate")
	migrate.Env = replicaEnv(t, svcs["migrate"], img, t.TempDir(), ownerURL, "", "")
	if out, err := migrate.CombinedOutput(); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	appURL := pgGrantService(t, ownerURL)

	ehr := smarttest.New()
	t.Cleanup(ehr.Close)
	ehr.Resources = smarttest.Fixture(ehr.Patient)
	fr := newFront(t)
	ehr.RedirectURI = fr.url() + smart.PathCallback
	dataDir := t.TempDir()
	reg, _ := json.Marshal([]map[string]string{{"name": "Fake EHR", "iss": ehr.ISS(), "client_id": ehr.ClientID, "client_type": "public"}})
	ehrsFile := filepath.Join(t.TempDir(), "ehrs.json")
	if err := os.WriteFile(ehrsFile, reg, 0o600); err != nil {
		t.Fatal(err)
	}
	var reps []*process
	for _, name := range composeReplicas {
		env := replicaEnv(t, svcs[name], img, dataDir, appURL, redisURL, fr.url(),
			"PGXSAFETY_SMART_EHRS="+ehrsFile, "PGXSAFETY_AUDIT_CHECKPOINT_INTERVAL=200ms")
		p := startBinary(t, bin, dataDir, env)
		reps = append(reps, p)
		fr.add(p.base)
	}
	for i, p := range reps {
		if !strings.Contains(p.logs.String(), `"session_store":"redis"`) {
			t.Errorf("replica %d does not keep SMART sessions in Redis:\n%s", i, p.logs)
		}
	}

	t.Run("SMART launch across replicas", func(t *testing.T) {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Timeout: 30 * time.Second, Jar: jar}
		served := []int{}
		c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
			if req.URL.Path == smart.PathCallback {
				fr.on(1)
				served = append(served, 1)
			}
			return nil
		}
		fr.on(0)
		resp, err := c.Get(fr.url() + smart.PathLaunch + "?" + url.Values{"iss": {ehr.ISS()}, "launch": {"compose"}}.Encode())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(served) != 1 || !strings.Contains(string(body), `data-drug="clopidogrel" data-severity="HIGH"`) {
			t.Fatalf("launch on replica 0, callback on replica 1: %d %s", resp.StatusCode, body)
		}
		fr.on(0)
		resp, err = c.Get(resp.Request.URL.String())
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), "Poor Metabolizer") {
			t.Errorf("the review on replica 0: %d %s", resp.StatusCode, body)
		}
	})

	// One caller, a fresh subject: its budget of 60 (burst 60, one more
	// a second) is spent across both replicas.
	subject := fmt.Sprintf("compose-%d", time.Now().UnixNano())
	tok := exec.Command(bin, "token", "--data-dir", dataDir, "--subject", subject)
	tok.Env = childEnv()
	out, err := tok.Output()
	if err != nil {
		t.Fatalf("token: %v", err)
	}
	token := strings.TrimSpace(string(out))
	var ids [2][]string
	t.Run("rate budget across replicas", func(t *testing.T) {
		start := time.Now()
		allowed := 0
		for i := 0; ; i++ {
			if i > 200 {
				t.Fatal("no 429 in 200 requests")
			}
			status, id, err := postCheck(t.Context(), http.DefaultClient, reps[i%2].base, token)
			if err != nil {
				t.Fatal(err)
			}
			if status == http.StatusTooManyRequests {
				// The other replica refuses too: one budget.
				if s, _, _ := postCheck(t.Context(), http.DefaultClient, reps[(i+1)%2].base, token); s != http.StatusTooManyRequests {
					t.Errorf("replica %d refuses with 429, replica %d answers %d", i%2, (i+1)%2, s)
				}
				break
			}
			if status != http.StatusOK {
				t.Fatalf("check on replica %d: %d", i%2, status)
			}
			allowed++
			ids[i%2] = append(ids[i%2], id)
		}
		// 60 at once, and one more for each second the loop took: a
		// budget per replica would have allowed about 120.
		if most := 60 + int(time.Since(start).Seconds()) + 1; allowed < 60 || allowed > most {
			t.Errorf("%d checks allowed across the replicas, want 60 to %d (one shared budget)", allowed, most)
		}
	})

	t.Run("checkpoints prove both replicas' entries", func(t *testing.T) {
		total := uint64(len(ids[0]) + len(ids[1]))
		vkey := strings.TrimSpace(string(mustRead(t, filepath.Join(dataDir, logKeyFileName)+".pub")))
		nv, err := note.NewVerifier(vkey)
		if err != nil {
			t.Fatal(err)
		}
		origin := strings.SplitN(vkey, "+", 2)[0]
		if origin != svcs[composeReplicas[0]].Environment["PGXSAFETY_AUDIT_LOG_ORIGIN"] {
			t.Errorf("log origin %q, want compose's PGXSAFETY_AUDIT_LOG_ORIGIN", origin)
		}
		// A fresh token: the last one's budget is spent.
		tok := exec.Command(bin, "token", "--data-dir", dataDir, "--subject", subject+"-auditor")
		tok.Env = childEnv()
		out, err := tok.Output()
		if err != nil {
			t.Fatal(err)
		}
		auditor := strings.TrimSpace(string(out))
		try := func(base, path string) (int, []byte) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
			req.Header.Set("Authorization", "Bearer "+auditor)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, b
		}
		get := func(base, path string) []byte {
			status, b := try(base, path)
			if status != 200 {
				t.Fatalf("GET %s: %d %s", path, status, b)
			}
			return b
		}
		// covers reports whether the tree of size holds the last check
		// answered by each replica: other entries (SMART views) share
		// the log, so a size of at least the number of checks is not
		// enough.
		covers := func(base string, size uint64) bool {
			for r := range ids {
				last := ids[r][len(ids[r])-1]
				status, _ := try(base, fmt.Sprintf("/pgx/audit/proof/inclusion?audit_log_id=%s&tree_size=%d", last, size))
				if status != 200 {
					return false
				}
			}
			return true
		}
		var cps [2][]byte
		var cpv [2]*tdlog.Checkpoint
		for r, p := range reps {
			// Each replica signs within 200ms once the log grew; wait
			// for one that covers every check (SMART views add entries).
			deadline := time.Now().Add(20 * time.Second)
			for {
				cps[r] = get(p.base, "/pgx/audit/checkpoint")
				cp, _, _, err := tdlog.ParseCheckpoint(cps[r], origin, nv)
				if err != nil {
					t.Fatalf("replica %d checkpoint: %v\n%s", r, err, cps[r])
				}
				if cp.Size >= total && covers(p.base, cp.Size) {
					cpv[r] = cp
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("replica %d: checkpoint of %d entries, %d checks answered", r, cp.Size, total)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		for r := range reps {
			other := 1 - r
			for _, id := range []string{ids[r][0], ids[r][len(ids[r])-1]} {
				var p pgxapi.InclusionProofResponse
				b := get(reps[other].base, fmt.Sprintf("/pgx/audit/proof/inclusion?audit_log_id=%s&tree_size=%d", id, cpv[other].Size))
				if err := json.Unmarshal(b, &p); err != nil {
					t.Fatal(err)
				}
				leaf, err := audit.LeafHash(p.EntryHash)
				if err != nil {
					t.Fatal(err)
				}
				if err := proof.VerifyInclusion(rfc6962.DefaultHasher, p.LeafIndex, cpv[other].Size, leaf[:], decodeAll(t, p.Hashes), cpv[other].Hash); err != nil {
					t.Errorf("entry %s of replica %d is not proved by replica %d's checkpoint: %v", id, r, other, err)
				}
			}
		}
		var args []string
		for r, cp := range cps {
			f := filepath.Join(t.TempDir(), fmt.Sprintf("checkpoint-%d.txt", r))
			if err := os.WriteFile(f, cp, 0o644); err != nil {
				t.Fatal(err)
			}
			args = append(args, "--checkpoint", f)
		}
		verify := exec.Command(bin, append([]string{"audit", "verify", "--data-dir", dataDir}, args...)...)
		verify.Env = childEnv("PGXSAFETY_DATABASE_URL=" + appURL)
		if out, err := verify.CombinedOutput(); err != nil {
			t.Errorf("audit verify against both replicas' checkpoints: %v\n%s", err, out)
		}
	})
	for i, p := range reps {
		if strings.Contains(p.logs.String(), "inconsistent with its checkpoints") || strings.Contains(p.logs.String(), `"level":"error"`) {
			t.Errorf("replica %d logged an error:\n%s", i, p.logs)
		}
	}
}
