package fhir

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/testing/protocmp"

	dpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/datatypes_go_proto"
)

// TestTypedSettersMatchProtoreflect: every typed setter, constructor and
// enum maker stores what the protoreflect assignment it replaces stores:
// the same field (the same choice of a value[x] element), appending for
// a repeated element.
func TestTypedSettersMatchProtoreflect(t *testing.T) {
	typed := map[protoreflect.FullName]*fastMsg{}
	for name, r := range fastResources {
		collectFastMsgs(r.fd.Message(), r.msg, typed)
		if r.newMsg != nil && r.newMsg().ProtoReflect().Descriptor() != r.fd.Message() {
			t.Errorf("%s: typedNew makes %s", name, r.newMsg().ProtoReflect().Descriptor().FullName())
		}
	}
	setters := 0
	for name, fm := range typed {
		keys := make([]string, 0, len(fm.fields))
		for k := range fm.fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, key := range keys {
			f := fm.fields[key]
			if f.newMsg != nil {
				if got, want := f.newMsg().ProtoReflect().Descriptor().FullName(), f.mt.Descriptor().FullName(); got != want {
					t.Errorf("%s.%s: typedNew makes %s, want %s", name, key, got, want)
				}
			}
			if f.newEnum != nil {
				enum := f.value.Enum().Values().Get(1).Number()
				want := f.mt.New()
				want.Set(f.value, protoreflect.ValueOfEnum(enum))
				if d := cmp.Diff(want.Interface(), f.newEnum(enum), protocmp.Transform()); d != "" {
					t.Errorf("%s.%s: typedEnums differs (-reflect +typed):\n%s", name, key, d)
				}
			}
			if f.set == nil {
				continue
			}
			setters++
			parent, err := msgType(name)
			if err != nil {
				t.Fatal(err)
			}
			viaReflect, viaSet := parent.New(), parent.New()
			// Two values: a repeated element appends both, a single one
			// keeps the second.
			for range 2 {
				v := sampleValue(f)
				into, fd := viaReflect, f.fd
				if f.choice != nil {
					c := into.NewField(f.fd).Message()
					into.Set(f.fd, protoreflect.ValueOfMessage(c))
					into, fd = c, f.choice
				}
				if fd.IsList() {
					into.Mutable(fd).List().Append(protoreflect.ValueOfMessage(v))
				} else {
					into.Set(fd, protoreflect.ValueOfMessage(v))
				}
				if f.list != fd.IsList() {
					t.Errorf("%s.%s: list %v, want %v", name, key, f.list, fd.IsList())
				}
				f.set(viaSet.Interface(), sampleValue(f).Interface())

			}
			if d := cmp.Diff(viaReflect.Interface(), viaSet.Interface(), protocmp.Transform()); d != "" {
				t.Errorf("%s.%s: typed setter differs (-reflect +typed):\n%s", name, key, d)
			}
		}
	}
	want := 0
	for _, m := range typedSetters {
		want += len(m)
	}
	if setters != want {
		t.Errorf("%d typed setters checked, %d listed: a listed setter is not used", setters, want)
	}
}

// collectFastMsgs maps every message reachable from fm to its view.
func collectFastMsgs(md protoreflect.MessageDescriptor, fm *fastMsg, out map[protoreflect.FullName]*fastMsg) {
	if _, ok := out[md.FullName()]; ok {
		return
	}
	out[md.FullName()] = fm
	for _, f := range fm.fields {
		if f.sub != nil {
			collectFastMsgs(f.mt.Descriptor(), f.sub, out)
		}
	}
}

func msgType(name protoreflect.FullName) (protoreflect.MessageType, error) {
	return protoregistry.GlobalTypes.FindMessageByName(name)
}

// sampleValue is a non-empty value of f's type (an id of "x" for
// primitives, the second enum value for codes).
func sampleValue(f *fastField) protoreflect.Message {
	switch {
	case f.mk != nil:
		return f.mk("x").ProtoReflect()
	case f.prim == primEnumCode:
		v := f.mt.New()
		v.Set(f.value, protoreflect.ValueOfEnum(f.value.Enum().Values().Get(1).Number()))
		return v
	}
	v := f.mt.New()
	if id := v.Descriptor().Fields().ByName("id"); id != nil && id.Message() != nil {
		idv := v.NewField(id).Message()
		if val := idv.Descriptor().Fields().ByName("value"); val != nil && val.Kind() == protoreflect.StringKind {
			idv.Set(val, protoreflect.ValueOfString("x"))
		}
		v.Set(id, protoreflect.ValueOfMessage(idv))
	}
	return v
}

// TestTypedFastPathMatchesReflect: on the corpus and the edge cases the
// typed fast path with the guessed type and the protoreflect one with the
// type found by a scan accept the same resources and build the same
// protos.
func TestTypedFastPathMatchesReflect(t *testing.T) {
	p, err := NewParser()
	if err != nil {
		t.Fatal(err)
	}
	reflectViews := buildFastResources(false)
	inputs := map[string][]byte{}
	for n, raw := range corpusResources(t) {
		inputs[n] = raw
	}
	for i, c := range edgeCases {
		inputs["edge case "+string(rune('0'+i%10))+string(rune('a'+i/10))] = []byte(c)
	}
	typedTook := 0
	for name, raw := range inputs {
		a, ah, aok := p.fastParseWith(fastResources, raw, true)
		b, bh, bok := p.fastParseWith(reflectViews, raw, false)
		if aok != bok || ah != bh {
			t.Errorf("%s: typed took %v (%+v), reflect %v (%+v)", name, aok, ah, bok, bh)
			continue
		}
		if aok {
			typedTook++
		}
		if d := cmp.Diff(b, a, protocmp.Transform()); d != "" {
			t.Errorf("%s: typed differs (-reflect +typed):\n%s", name, d)
		}
	}
	if typedTook == 0 {
		t.Error("nothing took the fast path")
	}
}

// TestReferenceStringMatchesDenormalize: referenceString's typed cases
// give what jsonformat.DenormalizeReference writes, for every typed
// reference field of R4 (with and without a version), a uri and a
// fragment; every type of commonReferenceSetters takes the typed case.
func TestReferenceStringMatchesDenormalize(t *testing.T) {
	var refs []*dpb.Reference
	fs := referenceOneof.Fields()
	for i := 0; i < fs.Len(); i++ {
		f := fs.Get(i)
		if f.Message() == nil || f.Message().FullName() != "google.fhir.r4.core.ReferenceId" {
			continue
		}
		for _, id := range []*dpb.ReferenceId{{Value: "abc"}, {Value: "a-1", History: &dpb.Id{Value: "2"}}, {}} {
			r := &dpb.Reference{}
			r.ProtoReflect().Set(f, protoreflect.ValueOfMessage(proto.Clone(id).ProtoReflect()))
			refs = append(refs, r)
		}
	}
	refs = append(refs,
		&dpb.Reference{Reference: &dpb.Reference_Uri{Uri: &dpb.String{Value: " http://x.test/Patient/1 "}}},
		&dpb.Reference{Reference: &dpb.Reference_Uri{Uri: &dpb.String{}}},
		&dpb.Reference{Reference: &dpb.Reference_Fragment{Fragment: &dpb.String{Value: "med1"}}},
		&dpb.Reference{Reference: &dpb.Reference_Fragment{Fragment: &dpb.String{Value: " "}}},
		&dpb.Reference{Display: &dpb.String{Value: "no reference"}},
	)
	for _, r := range refs {
		if got, want := referenceString(r), slowReferenceString(r); got != want {
			t.Errorf("%v: referenceString %q, DenormalizeReference %q", r, got, want)
		}
	}
	for typ, set := range commonReferenceSetters {
		r := &dpb.Reference{}
		set(r, &dpb.ReferenceId{Value: "x"})
		if got, ok := commonReferenceString(r); !ok || got != typ+"/x" {
			t.Errorf("%s: commonReferenceString %q, %v", typ, got, ok)
		}
	}
}

// FuzzGuessedTypeMatchesScan: on any input the fast path gives the same
// answer whether the resource type is guessed from the bytes first or
// found by a scan of the top level.
func FuzzGuessedTypeMatchesScan(f *testing.F) {
	for _, raw := range corpusResources(f) {
		f.Add(raw)
	}
	for _, c := range edgeCases {
		f.Add([]byte(c))
	}
	p, err := NewParser()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, ah, aok := p.fastParseWith(fastResources, b, true)
		c, ch, cok := p.fastParseWith(fastResources, b, false)
		if aok != cok || ah != ch {
			t.Fatalf("guessed: %v %+v, scanned: %v %+v", aok, ah, cok, ch)
		}
		if d := cmp.Diff(c, a, protocmp.Transform()); d != "" {
			t.Fatalf("guessed differs (-scanned +guessed):\n%s", d)
		}
	})
}
