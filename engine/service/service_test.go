package service_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
	"github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/engine/labcsv"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
	"github.com/pgxsafety/pgxsafety/knowledge"
)

// memLog is an in-memory audit log (a test double).
type memLog struct {
	mu      sync.Mutex
	entries []audit.Entry
	fail    bool
	// chain makes it hash entries as a store does.
	chain bool
}

func (m *memLog) Append(_ context.Context, e audit.Entry) (audit.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return audit.Entry{}, errors.New("disk full")
	}
	e.Sequence = int64(len(m.entries) + 1)
	e.ID = "aud_" + string(rune('A'+len(m.entries)%26)) + strings.Repeat("x", len(m.entries)/26)
	if m.chain {
		e.PrevHash = audit.GenesisHash
		if len(m.entries) > 0 {
			e.PrevHash = m.entries[len(m.entries)-1].EntryHash
		}
		e.EntryHash = audit.Hash(e.PrevHash, e)
	}
	m.entries = append(m.entries, e)
	return e, nil
}

func (m *memLog) byID(id string) (audit.Entry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.entries {
		if e.ID == id {
			return e, true
		}
	}
	return audit.Entry{}, false
}

func fixedClock() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

func newService(t *testing.T) (*service.Service, *memLog) {
	t.Helper()
	b, err := knowledge.DefaultBase()
	if err != nil {
		t.Fatalf("load knowledge: %v", err)
	}
	log := &memLog{}
	return service.New(b.Evaluator, b.Classifier, log, fixedClock), log
}

var call = service.Call{Principal: audit.Principal{Subject: "tester"}, Endpoint: "TEST", RequestID: "req-1"}

// op is one audited operation run through the service; it returns the
// audit id and whether an answer came back.
type op struct {
	name string
	run  func(*service.Service) (ref service.Ref, answered bool, err error)
}

func ops(t *testing.T, svc *service.Service, log *memLog) []op {
	cls, err := svc.Classifier()
	if err != nil {
		t.Fatalf("classifier: %v", err)
	}
	demo := cls.DemoCases()[0]
	return []op{
		{"check", func(s *service.Service) (service.Ref, bool, error) {
			a, err := service.Check(context.Background(), s, call, engine.Request{Drug: "clopidogrel", Variants: []string{"rs4244285"}},
				func(r engine.Result) engine.Result { return r })
			return a.Ref(), a.Result.Drug != "", err
		}},
		{"check-encoded", func(s *service.Service) (service.Ref, bool, error) {
			a, err := service.CheckEncoded(context.Background(), s, call, engine.Request{Drug: "clopidogrel", Variants: []string{"rs4244285"}},
				func(r engine.Result) engine.Result { return r })
			return a.Ref(), a.Result.Value.Drug != "" && len(a.Result.JSON) > 0, err
		}},
		{"check-many", func(s *service.Service) (service.Ref, bool, error) {
			a, err := service.CheckMany(context.Background(), s, call,
				service.MedicationList{Drugs: []string{"clopidogrel", "warfarin"}},
				func(rs []engine.Result) (int, error) { return len(rs), nil })
			return a.Ref(), a.Result == 2, err
		}},
		{"classify", func(s *service.Service) (service.Ref, bool, error) {
			a, err := service.Classify(context.Background(), s, call, classify.DemoRequest(demo), func(r classify.Result) classify.Result { return r })
			return a.Ref(), a.Result.Tier != 0, err
		}},
		{"demo", func(s *service.Service) (service.Ref, bool, error) {
			a, err := service.Demo(context.Background(), s, call, demo, func(_ classify.DemoCase, r classify.Result) classify.Result { return r })
			return a.Ref(), a.Result.Tier != 0, err
		}},
		{"review-view", func(s *service.Service) (service.Ref, bool, error) {
			a, err := s.ReviewView(context.Background(), call, service.ReviewInput{
				Record:   service.ReviewRecord{Launch: "ehr", Patient: "p1"},
				Genotype: engine.Request{Diplotypes: map[string]string{"CYP2C19": "*2/*2"}},
				Checks:   []engine.Request{{Drug: "clopidogrel", Diplotypes: map[string]string{"CYP2C19": "*2/*2"}}},
			})
			return a.Ref(), len(a.Result.Results) == 1 && a.Result.Results[0].Result != nil, err
		}},
		{"cds-hook", func(s *service.Service) (service.Ref, bool, error) {
			a, err := service.EvaluateHook(context.Background(), s, call, func(chk *service.HookChecker) (service.HookRecord, string, error) {
				res, err := chk.Check("MedicationRequest/1", "clopidogrel", "text", engine.Request{Drug: "clopidogrel"})
				return service.HookRecord{Hook: "order-sign"}, res.DrugNormalised, err
			})
			return a.Ref(), a.Result != "", err
		}},
		{"feedback", func(s *service.Service) (service.Ref, bool, error) {
			a, err := s.Feedback(context.Background(), call, service.FeedbackRecord{Service: "x", Feedback: []json.RawMessage{[]byte(`{}`)}, Keys: []string{"k"}},
				oneNewItem{log}, []service.FeedbackItem{{Key: "k"}})
			return a.Ref(), a.Result.Stored == 1, err
		}},
		{"csv-batch", func(s *service.Service) (service.Ref, bool, error) {
			// NoDigest is ignored: the chunk entry holds each result's digest.
			b := s.NewCSVBatch(call, service.CSVFile{Name: "a.csv", Format: "json"}, labcsv.Options{Wire: func(r engine.Result) any { return r }, NoDigest: true})
			released := 0
			st, err := b.Run(context.Background(), strings.NewReader(labcsv.Header+"\nclopidogrel,rs4244285,,,,p1\n"),
				func(int) error { return nil },
				func(c *labcsv.Chunk, _ service.Ref) error {
					for _, r := range c.Rows {
						if strings.HasPrefix(r.ResultDigest, "sha256:") {
							released++
						}
					}
					return nil
				})
			if err != nil {
				return service.Ref{}, released > 0, err
			}
			a, err := b.Complete(context.Background(), st)
			return a.Ref(), released == 1 && a.Result.Rows == 1, err
		}},
		{"vcf", func(s *service.Service) (service.Ref, bool, error) {
			v := s.NewVCFCall(call, service.VCFFile{Name: "a.vcf", Format: "json"})
			released := 0
			st, err := v.Run(context.Background(), vcfOpener(oneSampleVCF), vcfcall.Options{}, admitAll,
				func(c *vcfcall.Chunk, _ service.Ref) error { released += len(c.Samples); return nil })
			if err != nil {
				return service.Ref{}, released > 0, err
			}
			a, err := v.Complete(context.Background(), st)
			return a.Ref(), released == 1 && a.Result.Samples == 1, err
		}},
	}
}

// TestAnswersCarryTheirAuditEntry: every operation returns its answer with
// the id of an entry that is in the log, for the call that asked.
func TestAnswersCarryTheirAuditEntry(t *testing.T) {
	svc, log := newService(t)
	for _, o := range ops(t, svc, log) {
		t.Run(o.name, func(t *testing.T) {
			ref, answered, err := o.run(svc)
			id := ref.ID
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if !answered {
				t.Fatal("no answer")
			}
			e, ok := log.byID(id)
			if !ok {
				t.Fatalf("audit id %q is not in the log", id)
			}
			got := []string{e.Endpoint, e.RequestID, e.Principal.Subject, e.Time.Format(time.RFC3339)}
			if diff := cmp.Diff([]string{"TEST", "req-1", "tester", "2026-01-02T03:04:05Z"}, got); diff != "" {
				t.Errorf("entry (-want +got):\n%s", diff)
			}
			if len(e.Request) == 0 || len(e.Response) == 0 || !strings.HasPrefix(e.ResponseDigest, "sha256:") {
				t.Errorf("entry without payloads: %+v", e)
			}
		})
	}
}

// TestAnswersCarryTheirReceipt: with receipts on, every operation's answer
// carries the receipt of its entry, signed with the log key, naming the
// entry's id, sequence, hash and time; without them, none.
func TestAnswersCarryTheirReceipt(t *testing.T) {
	b, err := knowledge.DefaultBase()
	if err != nil {
		t.Fatalf("load knowledge: %v", err)
	}
	key := logKey(t)
	log := &memLog{chain: true}
	svc := service.New(b.Evaluator, b.Classifier, log, fixedClock, service.WithReceipts(audit.NewReceiptSigner(key)))
	for _, o := range ops(t, svc, log) {
		t.Run(o.name, func(t *testing.T) {
			ref, _, err := o.run(svc)
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			e, ok := log.byID(ref.ID)
			if !ok {
				t.Fatalf("audit id %q is not in the log", ref.ID)
			}
			r, err := audit.OpenReceipt(key.Verifier(), ref.Receipt)
			if err != nil {
				t.Fatalf("receipt %q: %v", ref.Receipt, err)
			}
			want := audit.Receipt{Origin: "test.example/log", ID: e.ID, Sequence: e.Sequence, EntryHash: e.EntryHash, Time: e.Time}
			if d := cmp.Diff(want, r); d != "" {
				t.Errorf("receipt (-want +got):\n%s", d)
			}
		})
	}
	plain, plainLog := newService(t)
	for _, o := range ops(t, plain, plainLog)[:1] {
		if ref, _, _ := o.run(plain); ref.Receipt != "" {
			t.Errorf("%s: a receipt without a receipt signer", o.name)
		}
	}
}

// TestNoAnswerWithoutAudit: when the log cannot be written, no operation
// returns an answer, and the error wraps audit.ErrUnavailable.
func TestNoAnswerWithoutAudit(t *testing.T) {
	svc, log := newService(t)
	log.fail = true
	for _, o := range ops(t, svc, log) {
		t.Run(o.name, func(t *testing.T) {
			ref, answered, err := o.run(svc)
			if !errors.Is(err, audit.ErrUnavailable) {
				t.Fatalf("err = %v, want audit.ErrUnavailable", err)
			}
			if answered || ref != (service.Ref{}) {
				t.Fatalf("answer released without audit (ref %+v, answered %v)", ref, answered)
			}
		})
	}
}

// TestHookRecordsEveryEvaluation: the audit record of a hook call lists
// each evaluation the checker made, with its error.
func TestHookRecordsEveryEvaluation(t *testing.T) {
	svc, log := newService(t)
	a, err := service.EvaluateHook(context.Background(), svc, call, func(chk *service.HookChecker) (service.HookRecord, int, error) {
		_, _ = chk.Check("MedicationRequest/1", "clopidogrel", "text", engine.Request{Drug: "clopidogrel"})
		_, _ = chk.Check("MedicationRequest/2", "x", "text", engine.Request{Drug: "clopidogrel", Variants: []string{"not-an-rsid"}})
		return service.HookRecord{Hook: "order-sign"}, 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := log.byID(a.AuditID)
	var rec struct {
		Evaluations []struct {
			Error string `json:"error"`
		} `json:"evaluations"`
	}
	if err := json.Unmarshal(e.Request, &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Evaluations) != 2 || rec.Evaluations[0].Error != "" || rec.Evaluations[1].Error == "" {
		t.Fatalf("evaluations = %+v", rec.Evaluations)
	}
}

// oneNewItem is a feedback store (a test double) that stores every item
// as new and appends the post's entry to log.
type oneNewItem struct{ log *memLog }

func (f oneNewItem) AppendFeedback(ctx context.Context, items []service.FeedbackItem, entry func(int, int) (audit.Entry, error)) (audit.Entry, error) {
	e, err := entry(len(items), 0)
	if err != nil {
		return audit.Entry{}, err
	}
	e, err = f.log.Append(ctx, e)
	if err != nil {
		return audit.Entry{}, fmt.Errorf("%w: %w", audit.ErrUnavailable, err)
	}
	return e, nil
}

// TestReviewView: the review view interprets the genotype without a drug,
// answers every check in order (one that cannot be run with its error),
// and audits the view with the record and the answer.
func TestReviewView(t *testing.T) {
	svc, log := newService(t)
	gt := engine.Request{Diplotypes: map[string]string{"CYP2C19": "*2/*2"}, State: "Tamil Nadu"}
	bad := gt
	bad.Drug = "clopidogrel"
	bad.Variants = []string{"not-an-rsid"}
	ok := gt
	ok.Drug = "clopidogrel"
	a, err := svc.ReviewView(context.Background(), call, service.ReviewInput{
		Record:   service.ReviewRecord{Launch: "standalone", Patient: "p1", CardDrug: "clopidogrel"},
		Genotype: gt, Checks: []engine.Request{ok, bad}})
	if err != nil {
		t.Fatal(err)
	}
	got := a.Result
	if len(got.Genotype) != 1 || got.Genotype[0].Gene != "CYP2C19" || got.Genotype[0].Phenotype != "Poor Metabolizer" {
		t.Errorf("genotype %+v", got.Genotype)
	}
	if len(got.Results) != 2 || got.Results[0].Result == nil || got.Results[0].Result.OverallSeverity != engine.SeverityHigh ||
		got.Results[1].Result != nil || !strings.Contains(got.Results[1].Error, "variants[0]") {
		t.Errorf("results %+v", got.Results)
	}
	e, found := log.byID(a.AuditID)
	if !found || e.Principal.Subject != "tester" || !strings.Contains(string(e.Request), `"launch":"standalone"`) ||
		!strings.Contains(string(e.Response), `"Poor Metabolizer"`) {
		t.Errorf("audit entry %v: %s / %s", found, e.Request, e.Response)
	}
	// An invalid genotype is reported, not hidden.
	a, err = svc.ReviewView(context.Background(), call, service.ReviewInput{Genotype: engine.Request{Diplotypes: map[string]string{"CYP2C19": "*2/*999"}}})
	if err != nil || a.Result.GenotypeError == "" {
		t.Errorf("invalid genotype: %v %+v", err, a.Result)
	}
}

// groupLog is a store that commits appends in groups: it waits until size
// appends arrived, then commits them together and, as sqlstore does, tells
// each the group through the GroupSlot of its context.
type groupLog struct {
	memLog
	size    int
	mu      sync.Mutex
	waiting []chan audit.Entry
	slots   []*audit.GroupSlot
	queued  []audit.Entry
}

func (g *groupLog) Append(ctx context.Context, e audit.Entry) (audit.Entry, error) {
	reply := make(chan audit.Entry, 1)
	g.mu.Lock()
	g.waiting = append(g.waiting, reply)
	g.slots = append(g.slots, audit.GroupSlotFrom(ctx))
	g.queued = append(g.queued, e)
	if len(g.waiting) == g.size {
		var stored []audit.Entry
		for _, q := range g.queued {
			s, _ := g.memLog.Append(ctx, q)
			stored = append(stored, s)
		}
		group := audit.NewCommitGroup(stored)
		for i, w := range g.waiting {
			if g.slots[i] != nil {
				g.slots[i].Set(group, i)
			}
			w <- stored[i]
		}
		g.waiting, g.slots, g.queued = nil, nil, nil
	}
	g.mu.Unlock()
	return <-reply, nil
}

// TestGroupCommittedAnswersShareOneSignature: the answers whose entries
// were committed together carry batch receipts under one signed note,
// each naming its own entry.
func TestGroupCommittedAnswersShareOneSignature(t *testing.T) {
	b, err := knowledge.DefaultBase()
	if err != nil {
		t.Fatalf("load knowledge: %v", err)
	}
	key := logKey(t)
	const n = 5
	log := &groupLog{memLog: memLog{chain: true}, size: n}
	svc := service.New(b.Evaluator, b.Classifier, log, fixedClock, service.WithReceipts(audit.NewReceiptSigner(key)))
	refs := make([]service.Ref, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			a, err := service.Check(context.Background(), svc, call, engine.Request{Drug: "clopidogrel", Variants: []string{"rs4244285"}},
				func(r engine.Result) engine.Result { return r })
			if err != nil {
				t.Error(err)
			}
			refs[i] = a.Ref()
		})
	}
	wg.Wait()
	notes := map[string]bool{}
	for _, ref := range refs {
		e, ok := log.byID(ref.ID)
		if !ok {
			t.Fatalf("audit id %q is not in the log", ref.ID)
		}
		r, err := audit.OpenReceipt(key.Verifier(), ref.Receipt)
		if err != nil {
			t.Fatalf("receipt %q: %v", ref.Receipt, err)
		}
		want := audit.Receipt{Origin: "test.example/log", ID: e.ID, Sequence: e.Sequence, EntryHash: e.EntryHash, Time: e.Time}
		if d := cmp.Diff(want, r); d != "" {
			t.Errorf("receipt (-want +got):\n%s", d)
		}
		raw, err := base64.StdEncoding.DecodeString(ref.Receipt)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		if !strings.HasPrefix(text, "pgxsafety audit receipt v2\n") {
			t.Fatalf("not a batch receipt:\n%s", text)
		}
		notes[text[strings.Index(text, "\n\n")+2:]] = true
	}
	if len(notes) != 1 {
		t.Errorf("the %d answers of one commit carry %d signed notes, want 1", n, len(notes))
	}
}

// logKey is a new log key for the origin test.example/log.
func logKey(t *testing.T) *tlog.Signer {
	t.Helper()
	skey, _, err := tlog.GenerateKey(rand.Reader, "test.example/log")
	if err != nil {
		t.Fatal(err)
	}
	key, err := tlog.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	return key
}
