package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
)

// builtBinary is the binary buildBinary built once for the package's
// tests (TestMain removes its directory).
var builtBinary struct {
	once sync.Once
	dir  string
	path string
	out  []byte
	err  error
}

// buildBinary builds cmd/pgxsafety once for all the tests of the package
// (with -race when the tests run with it) and returns its path.
func buildBinary(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH: cannot build the binary")
	}
	b := &builtBinary
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "pgxsafety-bin-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "pgxsafety")
		args := []string{"build", "-o", b.path}
		if raceBuild {
			args = append(args, "-race")
		}
		b.out, b.err = exec.Command("go", append(args, ".")...).CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("go build: %v\n%s", b.err, b.out)
	}
	return b.path
}

// TestMain removes the binary buildBinary built.
func TestMain(m *testing.M) {
	code := m.Run()
	if builtBinary.dir != "" {
		os.RemoveAll(builtBinary.dir)
	}
	os.Exit(code)
}

// childEnv is the environment of the binary: this one without PGXSAFETY_*
// settings, plus extra.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PGXSAFETY_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// process is a running "pgxsafety serve".
type process struct {
	cmd    *exec.Cmd
	base   string
	logs   *syncBuffer
	exited chan error
}

// startBinary runs "bin serve" and waits until it listens.
func startBinary(t *testing.T, bin, dataDir string, env []string) *process {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, logs: &syncBuffer{}, exited: make(chan error, 1)}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(p.logs, line)
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "pgxsafety listening" {
				addr <- rec.Addr
			}
		}
		p.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	})
	select {
	case a := <-addr:
		p.base = "http://" + a
	case err := <-p.exited:
		t.Fatalf("serve exited before listening: %v\n%s", err, p.logs)
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not listen within 60 s\n%s", p.logs)
	}
	return p
}

func postCheck(ctx context.Context, client *http.Client, base, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/pgx/check", strings.NewReader(checkBody))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", err // cut off mid-body: not acknowledged
	}
	var ans struct {
		AuditLogID string `json:"audit_log_id"`
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &ans); err != nil {
			return 0, "", err
		}
	}
	return resp.StatusCode, ans.AuditLogID, nil
}

// TestCrashLosesNoAcknowledgedAnswer builds the binary, runs it, sends
// concurrent checks, kills it with SIGKILL mid-load, restarts it, and
// checks that every audit_log_id a client received is in the log and the
// chain verifies. SQLite always; PostgreSQL too when
// PGXSAFETY_TEST_DATABASE_URL is set.
func TestCrashLosesNoAcknowledgedAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	bin := buildBinary(t)
	backends := map[string]func(t *testing.T) []string{
		"sqlite": func(t *testing.T) []string { return nil },
		// As docs/operations.md says: "pgxsafety migrate" as the owner, the
		// grants, then serve as the service role without migrating.
		"postgres": func(t *testing.T) []string {
			owner := pgSchemaURL(t)
			migrate := exec.Command(bin, "migrate")
			migrate.Env = childEnv("PGXSAFETY_DATABASE_URL=" + owner)
			if out, err := migrate.CombinedOutput(); err != nil {
				t.Fatalf("migrate as the owner: %v\n%s", err, out)
			}
			return []string{"PGXSAFETY_DATABASE_URL=" + pgGrantService(t, owner), "PGXSAFETY_DATABASE_MIGRATE=false"}
		},
	}
	for name, setup := range backends {
		t.Run(name, func(t *testing.T) {
			extra := setup(t)
			// The load comes from one user: lift the per-user limit.
			env := childEnv(append(extra, "PGXSAFETY_RATE_LIMIT_PER_MINUTE=1000000")...)
			dataDir := t.TempDir()
			tokCmd := exec.Command(bin, "token", "--data-dir", dataDir, "--subject", "crash-test")
			tokCmd.Env = env
			out, err := tokCmd.Output()
			if err != nil {
				t.Fatalf("token: %v", err)
			}
			token := strings.TrimSpace(string(out))

			p := startBinary(t, bin, dataDir, env)
			const clients, target = 8, 200
			var (
				mu    sync.Mutex
				acked []string
				other = map[int]int{}
				wg    sync.WaitGroup
			)
			enough := make(chan struct{})
			var enoughOnce sync.Once
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
			for range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						status, id, err := postCheck(ctx, client, p.base, token)
						if err != nil {
							return // the server is gone
						}
						mu.Lock()
						if status == http.StatusOK {
							acked = append(acked, id)
							if len(acked) >= target {
								enoughOnce.Do(func() { close(enough) })
							}
						} else {
							other[status]++
							mu.Unlock()
							return
						}
						mu.Unlock()
					}
				}()
			}
			clientsDone := make(chan struct{})
			go func() { wg.Wait(); close(clientsDone) }()
			select {
			case <-enough:
			case <-clientsDone:
				t.Fatalf("clients stopped early: statuses %v\n%s", other, p.logs)
			case <-ctx.Done():
				t.Fatalf("fewer than %d answers within the time limit\n%s", target, p.logs)
			}
			if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-p.exited
			wg.Wait()
			mu.Lock()
			got := append([]string(nil), acked...)
			mu.Unlock()
			if len(other) > 0 {
				t.Errorf("non-200 answers under load: %v", other)
			}
			t.Logf("%d answers acknowledged before SIGKILL", len(got))

			// Restart on the same log: it recovers and keeps chaining.
			p2 := startBinary(t, bin, dataDir, env)
			status, id, err := postCheck(context.Background(), http.DefaultClient, p2.base, token)
			if err != nil || status != http.StatusOK || id == "" {
				t.Fatalf("check after restart: %d %v\n%s", status, err, p2.logs)
			}
			got = append(got, id)
			if err := p2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if err := <-p2.exited; err != nil {
				t.Errorf("graceful stop: %v\n%s", err, p2.logs)
			}

			verify := exec.Command(bin, "audit", "verify", "--data-dir", dataDir)
			verify.Env = env
			if out, err := verify.CombinedOutput(); err != nil {
				t.Fatalf("audit verify after the crash: %v\n%s", err, out)
			}

			dbURL := ""
			for _, kv := range extra {
				if u, ok := strings.CutPrefix(kv, "PGXSAFETY_DATABASE_URL="); ok {
					dbURL = u
				}
			}
			store, err := sqlstore.OpenWith(context.Background(), dbURL, dataDir, sqlstore.Options{NoMigrate: true, MustExist: true})
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			missing := 0
			for _, id := range got {
				if _, err := store.Entry(context.Background(), id); err != nil {
					missing++
					if !errors.Is(err, sqlstore.ErrNotFound) {
						t.Fatalf("read %s: %v", id, err)
					}
				}
			}
			if missing > 0 {
				t.Errorf("%d of %d acknowledged answers are missing from the audit log", missing, len(got))
			}
			sum, err := audit.VerifyChain(context.Background(), store)
			if err != nil {
				t.Fatalf("verify: %v", err)
			}
			if sum.Entries < int64(len(got)) {
				t.Errorf("log holds %d entries, %d were acknowledged", sum.Entries, len(got))
			}
		})
	}
}
