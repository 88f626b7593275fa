package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

const oneSampleVCF = "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\n" +
	"chr10\t94781859\trs4244285\tG\tA\t.\tPASS\t.\tGT\t0/1\n"

const threeSampleVCF = "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\tS2\tS3\n" +
	"chr10\t94781859\trs4244285\tG\tA\t.\tPASS\t.\tGT\t0/1\t0/0\t1/1\n"

func admitAll(int) error { return nil }

func vcfOpener(text string) vcfcall.Opener {
	return func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(text)), nil }
}

// TestVCFAuditBeforeRelease: each group of samples is released only once
// its entry is in the log, the entry holds the digest of each sample's
// result bytes, and the closing entry lists the group entries.
func TestVCFAuditBeforeRelease(t *testing.T) {
	svc, log := newService(t)
	v := svc.NewVCFCall(call, service.VCFFile{Name: "three.vcf", Format: "ndjson", Bytes: 9, SHA256: "abc", Samples: []string{"S3", "S1"}})
	var ids []string
	st, err := v.Run(context.Background(), vcfOpener(threeSampleVCF), vcfcall.Options{Samples: []string{"S3", "S1"}, SamplesPerPass: 1}, admitAll,
		func(c *vcfcall.Chunk, ref service.Ref) error {
			id := ref.ID
			e, ok := log.byID(id)
			if !ok {
				t.Fatalf("group %d released before its entry %q is in the log", c.Index, id)
			}
			var rec struct {
				Samples []struct {
					Index        int    `json:"index"`
					ResultDigest string `json:"result_digest"`
				} `json:"samples"`
			}
			if err := json.Unmarshal(e.Response, &rec); err != nil {
				t.Fatal(err)
			}
			if len(rec.Samples) != 1 || rec.Samples[0].ResultDigest != c.Samples[0].ResultDigest || rec.Samples[0].Index != c.Samples[0].Index {
				t.Errorf("group %d entry %s does not record its sample %+v", c.Index, e.Response, c.Samples[0])
			}
			ids = append(ids, id)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if v.Released() != 2 || st.Samples != 2 || len(ids) != 2 {
		t.Fatalf("released %d, stats %+v, %d groups", v.Released(), st, len(ids))
	}
	a, err := v.Complete(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := log.byID(a.AuditID)
	var closing struct {
		Outcome         string   `json:"outcome"`
		SamplesReleased int      `json:"samples_released"`
		ChunkEntries    []string `json:"chunk_entries"`
	}
	if err := json.Unmarshal(e.Response, &closing); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(struct {
		Outcome         string   `json:"outcome"`
		SamplesReleased int      `json:"samples_released"`
		ChunkEntries    []string `json:"chunk_entries"`
	}{"completed", 2, ids}, closing); diff != "" {
		t.Errorf("closing entry (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(e.Request), `"samples":["S3","S1"]`) || !strings.Contains(string(e.Request), `"file_sha256":"abc"`) {
		t.Errorf("closing request %s", e.Request)
	}
	if _, err := v.Complete(context.Background(), st); err == nil {
		t.Error("a second Complete succeeded")
	}
}

// TestVCFStopsAtAuditFailure: when the log fails, the group is not
// released and the error wraps audit.ErrUnavailable; a release failure
// stops later groups and Abort records it.
func TestVCFStopsAtAuditFailure(t *testing.T) {
	svc, log := newService(t)
	log.fail = true
	v := svc.NewVCFCall(call, service.VCFFile{Name: "a.vcf"})
	_, err := v.Run(context.Background(), vcfOpener(threeSampleVCF), vcfcall.Options{}, admitAll,
		func(*vcfcall.Chunk, service.Ref) error { t.Fatal("released without audit"); return nil })
	if !errors.Is(err, audit.ErrUnavailable) || v.Released() != 0 {
		t.Fatalf("err %v, released %d", err, v.Released())
	}

	// A refused admission stops the run before the group is audited.
	log.fail = false
	v = svc.NewVCFCall(call, service.VCFFile{Name: "a.vcf"})
	limited := errors.New("rate limited")
	before := len(log.entries)
	_, err = v.Run(context.Background(), vcfOpener(threeSampleVCF), vcfcall.Options{}, func(int) error { return limited },
		func(*vcfcall.Chunk, service.Ref) error { t.Fatal("released without admission"); return nil })
	if !errors.Is(err, limited) || len(log.entries) != before {
		t.Fatalf("err %v, %d entries written", err, len(log.entries)-before)
	}

	v = svc.NewVCFCall(call, service.VCFFile{Name: "a.vcf"})
	gone := errors.New("client gone")
	calls := 0
	st, err := v.Run(context.Background(), vcfOpener(threeSampleVCF), vcfcall.Options{SamplesPerPass: 1}, admitAll,
		func(*vcfcall.Chunk, service.Ref) error { calls++; return gone })
	if !errors.Is(err, gone) || calls != 1 || v.Released() != 0 {
		t.Fatalf("err %v after %d releases (released %d)", err, calls, v.Released())
	}
	before = len(log.entries)
	if err := v.Abort(context.Background(), st, "the client went away"); err != nil {
		t.Fatal(err)
	}
	last := log.entries[len(log.entries)-1]
	if len(log.entries) != before+1 || !strings.Contains(string(last.Response), `"outcome":"aborted"`) ||
		!strings.Contains(string(last.Response), `"reason":"the client went away"`) {
		t.Errorf("abort entry %s", last.Response)
	}
	if err := v.Abort(context.Background(), st, "again"); err != nil || len(log.entries) != before+1 {
		t.Errorf("a second Abort wrote again (%v)", err)
	}
}
