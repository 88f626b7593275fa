package fhir

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/knowledge"
)

func TestParseHLAName(t *testing.T) {
	cases := []struct {
		in       string
		twoField string
		suffix   string
		group    string
		err      string
	}{
		{in: "HLA-B*57:01", twoField: "HLA-B*57:01"},
		{in: "B*57:01:01", twoField: "HLA-B*57:01"},
		{in: "HLA-A*03:01:01:01", twoField: "HLA-A*03:01"},
		{in: "hla-b*15:02:01g", twoField: "HLA-B*15:02", group: "G"},
		{in: "HLA-B*57:01:01G", twoField: "HLA-B*57:01", group: "G"},
		{in: "B*57:01P", twoField: "HLA-B*57:01", group: "P"},
		{in: "A*01:01:01:02N", twoField: "HLA-A*01:01", suffix: "N"},
		{in: "DRB1*15:01:01:01", twoField: "HLA-DRB1*15:01"},
		{in: "A*02:101:01", twoField: "HLA-A*02:101"},
		{in: "B*5701", err: "pre-2010"},
		{in: "B*57", err: "one field only"},
		{in: "B*57:AB", err: "NMDP allele code"},
		{in: "B*57:XX", err: "NMDP allele code"},
		{in: "HLA-A:01:01G", err: "no locus*allele separator"},
		{in: "HLA-B*", err: "no allele"},
		{in: "B*57:01:01:01:01", err: "more than four fields"},
	}
	for _, c := range cases {
		h, err := parseHLAName(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if h.TwoField() != c.twoField || h.Suffix != c.suffix || h.Group != c.group {
			t.Errorf("%s: %s suffix %q group %q, want %s %q %q", c.in, h.TwoField(), h.Suffix, h.Group, c.twoField, c.suffix, c.group)
		}
	}
}

func TestGLStringStatus(t *testing.T) {
	const k = "HLA-B*57:01"
	cases := []struct{ in, want string }{
		{"hla#3.23.0#HLA-B*15:01:01G+HLA-B*57:01:01G", hlaPositive},
		{"HLA-B*15:01+HLA-B*07:02", hlaNegative},
		{"HLA-B*57:01:01:02+HLA-B*57:01", hlaPositive},
		{"HLA-B*57:01/HLA-B*57:03+HLA-B*07:02", hlaAmbiguous},             // allele list disagrees
		{"HLA-B*57:01+HLA-B*07:02|HLA-B*08:01+HLA-B*07:02", hlaAmbiguous}, // genotype list disagrees
		{"HLA-B*57:01+HLA-B*07:02|HLA-B*57:01+HLA-B*08:01", hlaPositive},
		{"HLA-A*01:01+HLA-A*02:01^HLA-B*57:01+HLA-B*08:01", hlaPositive},
		{"HLA-A*01:01~HLA-B*57:01+HLA-A*02:01~HLA-B*08:01", hlaPositive},
		{"HLA-A*01:01+HLA-A*02:01", hlaUnknown}, // HLA-B not typed
		{"HLA-B*08:01", hlaUnknown},             // one copy only
		{"HLA-B*57:01N+HLA-B*08:01", hlaAmbiguous},
	}
	for _, c := range cases {
		gl, err := parseGLString(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got := gl.statusFor(k); got != c.want {
			t.Errorf("%s: %q, want %q", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"kir#2.7.0#KIR2DL1*001+KIR2DL1*002", "hla#3.23.0", "HLA-B*57:01?HLA-B*57:02", "HLA-B*57:01+", "a#b#c#d"} {
		if _, err := parseGLString(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func TestReadHLAText(t *testing.T) {
	keyed := []string{"HLA-B*15:02", "HLA-B*57:01", "HLA-B*58:01"}
	cases := []struct {
		in   string
		want map[string]string
		err  string
	}{
		{in: "HLA-B*57:01 positive", want: map[string]string{"HLA-B*15:02": "", "HLA-B*57:01": "positive", "HLA-B*58:01": ""}},
		{in: "HLA-B*57:01 not detected", want: map[string]string{"HLA-B*15:02": "", "HLA-B*57:01": "negative", "HLA-B*58:01": ""}},
		{in: "HLA-B*57:01:01, HLA-B*07:02", want: map[string]string{"HLA-B*15:02": "negative", "HLA-B*57:01": "positive", "HLA-B*58:01": "negative"}},
		// Two copies of *57:01, or one copy that is *57:01: positive
		// either way, but only the first reading says the other alleles
		// are absent.
		{in: "HLA-B*57:01/HLA-B*57:01", want: map[string]string{"HLA-B*15:02": "ambiguous", "HLA-B*57:01": "positive", "HLA-B*58:01": "ambiguous"}},
		{in: "HLA-B*57:01 inconclusive", err: "not understood"},
		{in: "HLA-A*31:01", err: "names HLA-A alleles"},
		{in: "HLA-B*57:01, HLA-B*08:01, HLA-B*07:02", err: "3 alleles"},
	}
	for _, c := range cases {
		r, err := readHLA("HLA-B", c.in, keyed)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if d := cmp.Diff(c.want, r.status); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.in, d)
		}
	}
}

// imgtDir is the IPD-IMGT/HLA nomenclature folder of the shared data pack
// (CC BY-ND: used to validate the reduction rule, never shipped). Without
// it the test skips, except with CI=true, where it fails.
func imgtDir(t *testing.T) string {
	t.Helper()
	return filepath.Dir(datapacktest.Path(t, "names", "hla", "hla_nom_g.txt"))
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHLAReductionAgainstIMGT validates the by-rule reduction with the
// IPD-IMGT/HLA 3.58.0 files: every current allele name parses and reduces
// to its first two fields; every G and P group name reduces to the
// two-field name of its lowest allele; no group named for another allele
// holds an allele of a two-field name CPIC keys on (so a carrier is never
// read negative); legacy names without colons are refused.
func TestHLAReductionAgainstIMGT(t *testing.T) {
	dir := imgtDir(t)
	keyed := map[string]bool{}
	for _, as := range mapper(t).hlaKeyed() {
		for _, a := range as {
			keyed[a] = true
		}
	}
	if len(keyed) == 0 {
		t.Fatal("no keyed HLA alleles in the knowledge")
	}
	// The loci CPIC keys on (HLA-A, HLA-B); other loci (MICA, MICB, …)
	// use other naming and are not read by pgxsafety.
	loci := map[string]bool{}
	for a := range keyed {
		loci[strings.TrimPrefix(strings.SplitN(a, "*", 2)[0], "HLA-")] = true
	}
	n := 0
	for _, l := range lines(t, filepath.Join(dir, "Allelelist.txt"))[1:] {
		_, name, ok := strings.Cut(l, ",")
		if !ok || !loci[strings.SplitN(name, "*", 2)[0]] {
			continue
		}
		h, err := parseHLAName("HLA-" + name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		f := strings.Split(strings.TrimRight(strings.SplitN(name, "*", 2)[1], "NLSCAQ"), ":")
		if want := "HLA-" + strings.SplitN(name, "*", 2)[0] + "*" + f[0] + ":" + f[1]; h.TwoField() != want {
			t.Errorf("%s → %s, want %s", name, h.TwoField(), want)
		}
		n++
	}
	groups := 0
	widened := map[string]int{}
	for _, file := range []string{"hla_nom_g.txt", "hla_nom_p.txt"} {
		for _, l := range lines(t, filepath.Join(dir, file)) {
			parts := strings.Split(l, ";")
			if len(parts) != 3 || parts[2] == "" {
				continue
			}
			locus := strings.TrimSuffix(parts[0], "*")
			if !loci[locus] {
				continue
			}
			h, err := parseHLAName("HLA-" + locus + "*" + parts[2])
			if err != nil {
				t.Errorf("%s group %s%s: %v", file, locus, parts[2], err)
				continue
			}
			groups++
			members := strings.Split(parts[1], "/")
			first, err := parseHLAName("HLA-" + locus + "*" + members[0])
			if err != nil {
				t.Errorf("%s member %s: %v", file, members[0], err)
				continue
			}
			if first.TwoField() != h.TwoField() {
				t.Errorf("%s: group %s reduces to %s, its lowest allele to %s", file, parts[2], h.TwoField(), first.TwoField())
			}
			for _, m := range members {
				mh, err := parseHLAName("HLA-" + locus + "*" + m)
				if err != nil {
					t.Errorf("%s member %s: %v", file, m, err)
					continue
				}
				if keyed[mh.TwoField()] && mh.TwoField() != h.TwoField() {
					t.Errorf("%s: group %s (read as %s) holds %s, a keyed allele: a carrier would read negative", file, parts[2], h.TwoField(), m)
				}
				if keyed[h.TwoField()] && mh.TwoField() != h.TwoField() {
					widened[file+" "+h.TwoField()]++
				}
			}
		}
	}
	legacy := 0
	for _, l := range lines(t, filepath.Join(dir, "Nomenclature_2009.txt"))[2:] {
		old := strings.Fields(l)
		if len(old) != 2 || strings.Contains(old[0], ":") || !loci[strings.SplitN(old[0], "*", 2)[0]] {
			continue
		}
		if _, err := parseHLAName(old[0]); err == nil {
			t.Errorf("legacy name %s was reduced", old[0])
		}
		legacy++
	}
	t.Logf("%d current allele names, %d G/P groups, %d legacy names checked", n, groups, legacy)
	t.Logf("groups read as a keyed allele that also hold other two-field alleles (read positive: the cautious side): %v", widened)
	if n < 10000 || groups < 500 || legacy < 500 {
		t.Errorf("too few rows read: %d alleles, %d groups, %d legacy", n, groups, legacy)
	}
}

func FuzzParseGLString(f *testing.F) {
	for _, s := range []string{"hla#3.23.0#HLA-B*15:01:01G+HLA-B*57:01:01G", "HLA-A*01:01~HLA-B*57:01+HLA-A*02:01~HLA-B*08:01",
		"HLA-B*57:01/HLA-B*57:03|HLA-B*08:01+HLA-B*07:02^HLA-A*31:01+HLA-A*02:01", "B*5701", "HLA-A:01:01G"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		gl, err := parseGLString(s)
		if err != nil {
			return
		}
		for _, k := range []string{"HLA-B*57:01", "HLA-A*31:01"} {
			switch st := gl.statusFor(k); st {
			case hlaPositive, hlaNegative, hlaAmbiguous, hlaUnknown:
			default:
				t.Fatalf("%q: status %q", s, st)
			}
		}
	})
}

var (
	testMapperOnce sync.Once
	testMapper     *Mapper
	testMapperErr  error
)

// mapper returns a Mapper over the embedded knowledge.
func mapper(t *testing.T) *Mapper {
	t.Helper()
	testMapperOnce.Do(func() {
		kb, err := knowledge.Load()
		if err != nil {
			testMapperErr = err
			return
		}
		p, err := NewParser()
		if err != nil {
			testMapperErr = err
			return
		}
		testMapper = NewMapper(p, kb.Names(), kb.Caller())
	})
	if testMapperErr != nil {
		t.Fatal(testMapperErr)
	}
	return testMapper
}

func TestDiplotypeValue(t *testing.T) {
	m := mapper(t)
	cases := []struct {
		gene, in string
		dip      string
		rs       *rsCall
		err      string
	}{
		{gene: "CYP2D6", in: "CYP2D6*7.001 / CYP2D6*1.001", dip: "*7.001 / *1.001"}, // the engine reads sub-allele numbers
		{gene: "CYP2C9", in: "CYP2C9 *4/*35B", dip: "*4/*35"},
		{gene: "TPMT", in: "*3A/*3B", dip: "*3A/*3B"},
		{gene: "TPMT", in: "*3A/*3Z", err: "unknown TPMT allele"},
		{gene: "VKORC1", in: "VKORC1 rs9923231 C/T", dip: "rs9923231 reference (C)/rs9923231 variant (T)"},
		{gene: "VKORC1", in: "rs9923231 T/T", dip: "rs9923231 variant (T)/rs9923231 variant (T)"},
		{gene: "CYP2C19", in: "rs4244285 G/A", rs: &rsCall{rs: "rs4244285", present: true, zyg: "het"}},
		{gene: "CYP2C19", in: "CYP2C19 rs4244285 A|A", rs: &rsCall{rs: "rs4244285", present: true, zyg: "hom"}},
		{gene: "CYP2C19", in: "rs4244285 G/G", rs: &rsCall{rs: "rs4244285"}},
		{gene: "CYP2C19", in: "rs4244285 G/C", err: "neither the reference"},
		{gene: "CYP2C19", in: "rs9923231 C/T", err: "VKORC1 position"},
		{gene: "CYP2C19", in: "rs1 C/T", err: "not a position"},
	}
	for _, c := range cases {
		dip, rc, _, err := m.diplotypeValue(c.gene, []string{c.in})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %s: error %v, want %q", c.gene, c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %s: %v", c.gene, c.in, err)
			continue
		}
		if dip != c.dip || !cmp.Equal(rc, c.rs, cmp.AllowUnexported(rsCall{})) {
			t.Errorf("%s %s: %q %+v, want %q %+v", c.gene, c.in, dip, rc, c.dip, c.rs)
		}
	}
}
