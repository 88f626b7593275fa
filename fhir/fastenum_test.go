package fhir

import (
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	apb "github.com/google/fhir/go/proto/google/fhir/proto/annotations_go_proto"
)

// enumFields lists the fast path's coded elements (primEnumCode), in a
// fixed order.
func enumFields(t testing.TB) []*fastField {
	msgs := map[string]*fastMsg{}
	for _, r := range fastResources {
		var walk func(fm *fastMsg)
		walk = func(fm *fastMsg) {
			for _, f := range fm.fields {
				if f.sub != nil {
					if _, ok := msgs[string(f.mt.Descriptor().FullName())]; !ok {
						msgs[string(f.mt.Descriptor().FullName())] = f.sub
						walk(f.sub)
					}
				}
			}
		}
		msgs[string(r.fd.Message().FullName())] = r.msg
		walk(r.msg)
	}
	var out []*fastField
	var names []string
	for mn, fm := range msgs {
		for key, f := range fm.fields {
			if f.prim == primEnumCode {
				out = append(out, f)
				names = append(names, mn+"."+key)
			}
		}
	}
	sort.Sort(byName{names, out})
	if len(out) < 4 {
		t.Fatalf("%d coded elements on the fast path", len(out))
	}
	return out
}

type byName struct {
	names  []string
	fields []*fastField
}

func (b byName) Len() int           { return len(b.names) }
func (b byName) Less(i, j int) bool { return b.names[i] < b.names[j] }
func (b byName) Swap(i, j int) {
	b.names[i], b.names[j] = b.names[j], b.names[i]
	b.fields[i], b.fields[j] = b.fields[j], b.fields[i]
}

// enumCodeCases are the codes of every coded element (as FHIR writes
// them, as written in upper case, original codes) and near misses:
// runes that strings.ToUpper maps into ASCII, underscores, spaces.
func enumCodeCases(t testing.TB) []string {
	cases := []string{"", "-", "_", "final ", " final", "FINAL", "Final", "fınal", "ſtopped", "entered_in_error",
		"entered-in-error", "ENTERED-IN-ERROR", "in-progress", "ın-progress", "active\u0000", strings.Repeat("a", 49), "\xff"}
	for _, f := range enumFields(t) {
		vs := f.value.Enum().Values()
		for i := 0; i < vs.Len(); i++ {
			v := vs.Get(i)
			name := string(v.Name())
			code := strings.ToLower(strings.ReplaceAll(name, "_", "-"))
			cases = append(cases, name, code, strings.ToUpper(code))
			if oc, _ := proto.GetExtension(v.Options(), apb.E_FhirOriginalCode).(string); oc != "" {
				cases = append(cases, oc, strings.ToUpper(oc))
			}
		}
	}
	return cases
}

// checkEnumCode: on every coded element, fastField.enumCode gives what
// enumCode (jsonpbhelper.UnmarshalCode's mapping) gives.
func checkEnumCode(t *testing.T, fields []*fastField, val string) (found int) {
	t.Helper()
	for _, f := range fields {
		n, ok := f.enumCode(val)
		rn, rok := enumCode(f.value.Enum(), val)
		if n != rn || ok != rok {
			t.Fatalf("%s: enumCode(%q) = %v %v, reference %v %v", f.value.Enum().FullName(), val, n, ok, rn, rok)
		}
		if ok {
			found++
		}
	}
	return found
}

func TestEnumCodeMatchesReference(t *testing.T) {
	fields := enumFields(t)
	found := 0
	for _, c := range enumCodeCases(t) {
		found += checkEnumCode(t, fields, c)
	}
	if found == 0 {
		t.Fatal("no case names a value")
	}
	// A rune strings.ToUpper maps into ASCII (dotless i): google/fhir
	// reads "fınal" as FINAL, and so must the fast lookup.
	if checkEnumCode(t, fields, "fınal") == 0 {
		t.Fatal(`"fınal" names no value: the case does not reach the non-ASCII path`)
	}
}

// FuzzEnumCodeMatchesReference is TestEnumCodeMatchesReference on any
// string.
func FuzzEnumCodeMatchesReference(f *testing.F) {
	for _, c := range enumCodeCases(f) {
		f.Add(c)
	}
	fields := enumFields(f)
	f.Fuzz(func(t *testing.T, val string) { checkEnumCode(t, fields, val) })
}
