package fhir

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/testing/protocmp"
)

// TestTypedSettersMatchProtoreflect: every typed setter, constructor and
// enum maker stores what the protoreflect assignment it replaces stores:
// the same field (the same choice of a value[x] element), appending for
// a repeated element.
func TestTypedSettersMatchProtoreflect(t *testing.T) {
	typed := map[protoreflect.FullName]*fastMsg{}
	for _, r := range fastResources {
		collectFastMsgs(r.fd.Message(), r.msg, typed)
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
				if got, want := f.newMsg().Descriptor().FullName(), f.mt.Descriptor().FullName(); got != want {
					t.Errorf("%s.%s: typedNew makes %s, want %s", name, key, got, want)
				}
			}
			if f.newEnum != nil {
				enum := f.value.Enum().Values().Get(1).Number()
				want := f.mt.New()
				want.Set(f.value, protoreflect.ValueOfEnum(enum))
				if d := cmp.Diff(want.Interface(), f.newEnum(enum).Interface(), protocmp.Transform()); d != "" {
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
		return f.mk("x")
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
// typed fast path and the protoreflect one accept the same resources and
// build the same protos.
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
		a, ah, aok := p.fastParseWith(fastResources, raw)
		b, bh, bok := p.fastParseWith(reflectViews, raw)
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
