package fhir

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/google/fhir/go/jsonformat"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	apb "github.com/google/fhir/go/proto/google/fhir/proto/annotations_go_proto"
	dpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/datatypes_go_proto"
	rpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/resources/bundle_and_contained_resource_go_proto"
)

// The fast path (issue 14). google/fhir's unmarshaller decodes every JSON
// object into a map of raw messages, merges through protoreflect, then
// walks the result again to validate primitives: most of the CPU of a CDS
// call. fastParse reads the common shapes of the resources pgxsafety reads
// (fastElements) in one pass over the bytes and builds the same
// *rpb.ContainedResource google/fhir would. It declines (ok false) on
// anything outside that subset, and parse then uses google/fhir as before:
// unknown or misspelt elements, "_element" primitive extensions,
// modifierExtension, extensions other than a url with one value of the
// types listed under "Extension" (nested extensions, ids), contained, empty objects, arrays or strings, null, numbers
// other than decimal values, duplicate elements, escapes it does not decode exactly as google/fhir
// does, and any primitive google/fhir would reject. Primitive rules
// (regexes, date-time layouts and precision, the unmarshaller's time zone,
// code-to-enum mapping, reference normalisation) follow google/fhir
// v0.7.4's jsonformat; FuzzFastParseMatchesGoogleFHIR checks that both
// agree.

// fastElements lists, per FHIR type (the proto message's name), the JSON
// elements the fast path reads. Resources not listed here are never read
// by the fast path.
var fastElements = map[string][]string{
	"Observation": {"id", "meta", "text", "extension", "status", "category", "code", "subject", "encounter",
		"effectiveDateTime", "effectivePeriod", "effectiveInstant", "issued", "performer",
		"valueCodeableConcept", "valueString", "valueQuantity", "valueRange", "method", "specimen", "basedOn", "hasMember",
		"derivedFrom", "component"},
	"Observation.Component": {"code", "valueCodeableConcept", "valueString", "valueQuantity", "valueRange"},
	"MedicationRequest": {"id", "meta", "text", "extension", "status", "intent", "category", "medicationCodeableConcept",
		"medicationReference", "subject", "encounter", "authoredOn", "requester", "reasonCode"},
	"Medication": {"id", "meta", "text", "extension", "code", "status"},
	"Patient":    {"id", "meta", "text", "extension", "active", "identifier", "name", "gender", "birthDate", "address"},
	"Condition": {"id", "meta", "text", "extension", "clinicalStatus", "verificationStatus", "category", "code",
		"subject", "encounter", "onsetDateTime", "recordedDate"},
	"Specimen": {"id", "meta", "text", "extension", "accessionIdentifier", "identifier", "type", "subject"},
	// Extension: simple extensions only (a url and one value); nested
	// extensions ("extension" inside) and an "id" decline.
	"Extension": {"url", "valueBoolean", "valueCode", "valueCodeableConcept", "valueDateTime",
		"valueReference", "valueRelatedArtifact", "valueString", "valueUri"},
	"RelatedArtifact": {"type", "label", "display", "citation", "url", "resource"},
	"Meta":            {"versionId", "lastUpdated", "source", "profile"},
	"Narrative":       {"status", "div"},
	"CodeableConcept": {"coding", "text"},
	"Coding":          {"system", "version", "code", "display", "userSelected"},
	"Reference":       {"reference", "type", "display"},
	"Period":          {"start", "end"},
	"Range":           {"low", "high"},
	"SimpleQuantity":  {"value", "unit", "system", "code"},
	"Quantity":        {"value", "comparator", "unit", "system", "code"},
	"Identifier":      {"use", "type", "system", "value"},
	"HumanName":       {"use", "text", "family", "given", "prefix", "suffix"},
	"Address":         {"use", "type", "text", "line", "city", "district", "state", "postalCode", "country"},
}

// primKind is how a primitive is read (parsePrimitiveType's cases).
type primKind uint8

const (
	primNone primKind = iota
	primString
	primCode
	primID
	primURI // uri, url, canonical
	primText
	primBoolean
	primDate
	primDateTime
	primInstant
	primDecimal  // a JSON number, kept as written
	primEnumCode // a code bound to a value set, stored as an enum
)

// fastField is one JSON element of a message the fast path reads.
type fastField struct {
	fd     protoreflect.FieldDescriptor // the field (the choice container for value[x])
	choice protoreflect.FieldDescriptor // the choice's field, or nil
	prim   primKind
	// value is the primitive's "value" field (primString … primEnumCode).
	value protoreflect.FieldDescriptor
	sub   *fastMsg
	bit   int
	// typed names a datatype read by typed code (no protoreflect).
	typed typedKind
	// mt makes the target message (composites and enum codes).
	mt protoreflect.MessageType
	// mk makes a string primitive of the target type.
	mk func(string) proto.Message
	// set, when not nil, stores a value read for the element without
	// protoreflect (typedSetters); list says the element repeats.
	set  setFunc
	list bool
	// newMsg makes the target message without reflect, or is nil
	// (typedNew); newEnum makes an enum code (typedEnums).
	newMsg  func() proto.Message
	newEnum func(protoreflect.EnumNumber) proto.Message
	// enumNames maps the names of the enum's values other than 0 to
	// their numbers (primEnumCode; see fastField.enumCode).
	enumNames map[string]protoreflect.EnumNumber
}

// typedKind names the datatypes read without protoreflect.
type typedKind uint8

const (
	typedNone typedKind = iota
	typedCodeableConcept
	typedReference
)

// stringPrimitives make the string primitives by type name.
var stringPrimitives = map[protoreflect.FullName]func(string) proto.Message{
	"google.fhir.r4.core.String":    func(v string) proto.Message { return &dpb.String{Value: v} },
	"google.fhir.r4.core.Code":      func(v string) proto.Message { return &dpb.Code{Value: v} },
	"google.fhir.r4.core.Id":        func(v string) proto.Message { return &dpb.Id{Value: v} },
	"google.fhir.r4.core.Uri":       func(v string) proto.Message { return &dpb.Uri{Value: v} },
	"google.fhir.r4.core.Url":       func(v string) proto.Message { return &dpb.Url{Value: v} },
	"google.fhir.r4.core.Canonical": func(v string) proto.Message { return &dpb.Canonical{Value: v} },
	"google.fhir.r4.core.Markdown":  func(v string) proto.Message { return &dpb.Markdown{Value: v} },
	"google.fhir.r4.core.Xhtml":     func(v string) proto.Message { return &dpb.Xhtml{Value: v} },
}

// fastMsg is the fast path's view of one message type.
type fastMsg struct {
	fields map[string]*fastField
}

// fastResource is the fast path's view of a resource type: its message
// and its field in ContainedResource.
type fastResource struct {
	msg *fastMsg
	fd  protoreflect.FieldDescriptor
	// newMsg makes the resource's message without reflect, or is nil;
	// contain, when not nil, sets it in a ContainedResource without
	// reflect.
	newMsg  func() proto.Message
	contain func(*rpb.ContainedResource, proto.Message)
}

// fastResources maps a resource type to its view, typed setters used.
var fastResources map[string]fastResource

var (
	maxFastStringSize = 1024 * 1024
)

func init() {
	fastResources = buildFastResources(true)
}

// buildFastResources builds the fast path's views of the resources in
// fastElements; typed says whether the typed setters are used (tests
// compare with the protoreflect assignment).
func buildFastResources(typed bool) map[string]fastResource {
	out := map[string]fastResource{}
	cr := (&rpb.ContainedResource{}).ProtoReflect().Descriptor()
	oneof := cr.Oneofs().ByName("oneof_resource")
	msgs := map[protoreflect.FullName]*fastMsg{}
	for i := 0; i < oneof.Fields().Len(); i++ {
		f := oneof.Fields().Get(i)
		name := string(f.Message().Name())
		if _, ok := fastElements[name]; ok {
			r := fastResource{msg: buildFastMsg(f.Message(), name, msgs, typed), fd: f, newMsg: typedNew[f.Message().FullName()]}
			if typed {
				r.contain = typedContain[f.Message().FullName()]
			}
			out[name] = r
		}
	}
	return out
}

// valueRegex compiles a primitive's value_regex annotation as google/fhir
// does.
func valueRegex(m proto.Message) *regexp.Regexp {
	re := proto.GetExtension(m.ProtoReflect().Descriptor().Options(), apb.E_ValueRegex).(string)
	return regexp.MustCompile(fmt.Sprintf("^%s$", re))
}

// buildFastMsg builds the fast path's view of md (listed in fastElements
// as name). It panics when a listed element does not exist: the list is
// code, and fastparse_test.go runs init.
func buildFastMsg(md protoreflect.MessageDescriptor, name string, done map[protoreflect.FullName]*fastMsg, typed bool) *fastMsg {
	if m, ok := done[md.FullName()]; ok {
		return m
	}
	m := &fastMsg{fields: map[string]*fastField{}}
	done[md.FullName()] = m
	all := jsonFields(md)
	for key := range typedSetters[name] {
		if !slices.Contains(fastElements[name], key) {
			panic("fhir: fast path: typed setter for unread element " + name + "." + key)
		}
	}
	for _, key := range fastElements[name] {
		f, ok := all[key]
		if !ok {
			panic("fhir: fast path: no element " + name + "." + key)
		}
		target := f.fd.Message()
		if f.choice != nil {
			target = f.choice.Message()
		}
		f.bit = f.fd.Index()
		mt, err := protoregistry.GlobalTypes.FindMessageByName(target.FullName())
		if err != nil {
			panic("fhir: fast path: " + err.Error())
		}
		f.mt = mt
		f.mk = stringPrimitives[target.FullName()]
		f.newMsg = typedNew[target.FullName()]
		f.newEnum = typedEnums[target.FullName()]
		if typed {
			f.set = typedSetters[name][key]
			f.list = f.choice == nil && f.fd.IsList()
		}
		switch target.FullName() {
		case "google.fhir.r4.core.CodeableConcept":
			f.typed = typedCodeableConcept
		case "google.fhir.r4.core.Reference":
			f.typed = typedReference
		}
		switch {
		case isPrimitive(target):
			f.prim = primitiveKind(target)
			if f.prim == primNone {
				panic("fhir: fast path: unsupported primitive " + string(target.FullName()))
			}
			f.value = target.Fields().ByName("value")
			if f.prim == primEnumCode {
				f.enumNames = enumNames(f.value.Enum())
			}
		default:
			sub := string(target.Name())
			if p, ok := target.Parent().(protoreflect.MessageDescriptor); ok {
				sub = string(p.Name()) + "." + sub
			}
			if _, ok := fastElements[sub]; !ok {
				panic("fhir: fast path: no element list for " + sub)
			}
			f.sub = buildFastMsg(target, sub, done, typed)
		}
		fc := f
		m.fields[key] = &fc
	}
	return m
}

// jsonFields maps md's JSON element names to fields as google/fhir's
// field map does (choice types expanded to value[x] names).
func jsonFields(md protoreflect.MessageDescriptor) map[string]fastField {
	out := map[string]fastField{}
	fs := md.Fields()
	for i := 0; i < fs.Len(); i++ {
		f := fs.Get(i)
		if f.Message() != nil && proto.HasExtension(f.Message().Options(), apb.E_IsChoiceType) {
			cs := f.Message().Fields()
			for j := 0; j < cs.Len(); j++ {
				c := cs.Get(j)
				n := c.JSONName()
				out[f.JSONName()+strings.ToUpper(n[:1])+n[1:]] = fastField{fd: f, choice: c}
			}
			continue
		}
		out[f.JSONName()] = fastField{fd: f}
	}
	return out
}

func isPrimitive(md protoreflect.MessageDescriptor) bool {
	return proto.GetExtension(md.Options(), apb.E_StructureDefinitionKind).(apb.StructureDefinitionKindValue) ==
		apb.StructureDefinitionKindValue_KIND_PRIMITIVE_TYPE
}

// primitiveKind classifies a primitive as parsePrimitiveType does (by
// name), restricted to the core types it names.
func primitiveKind(md protoreflect.MessageDescriptor) primKind {
	core := md.FullName() == protoreflect.FullName("google.fhir.r4.core."+string(md.Name()))
	switch md.Name() {
	case "String":
		return pick(core, primString)
	case "Code":
		return pick(core, primCode)
	case "Id":
		return pick(core, primID)
	case "Uri", "Url", "Canonical":
		return pick(core, primURI)
	case "Markdown", "Xhtml":
		return pick(core, primText)
	case "Boolean":
		return pick(core, primBoolean)
	case "Date":
		return pick(core, primDate)
	case "DateTime":
		return pick(core, primDateTime)
	case "Instant":
		return pick(core, primInstant)
	case "Decimal":
		return pick(core, primDecimal)
	case "Base64Binary", "Integer", "Oid", "PositiveInt", "Time", "UnsignedInt", "Uuid", "ReferenceId":
		return primNone
	}
	if proto.HasExtension(md.Options(), apb.E_FhirValuesetUrl) {
		if v := md.Fields().ByName("value"); v != nil && v.Kind() == protoreflect.EnumKind {
			return primEnumCode
		}
	}
	return primNone
}

func pick(ok bool, k primKind) primKind {
	if ok {
		return k
	}
	return primNone
}

// fastParse reads one resource on the fast path. ok is false when the
// fast path does not handle it; the caller then uses google/fhir.
func (p *Parser) fastParse(raw []byte) (cr *rpb.ContainedResource, h rawHead, ok bool) {
	return p.fastParseWith(fastResources, raw, true)
}

// fastParseWith is fastParse with the views resources; guess says
// whether the type is guessed first (tests compare both ways).
func (p *Parser) fastParseWith(resources map[string]fastResource, raw []byte, guess bool) (cr *rpb.ContainedResource, h rawHead, ok bool) {
	if !utf8.Valid(raw) {
		return nil, h, false
	}
	// One copy of the input: unescaped strings are substrings of it.
	src := string(raw)
	// The type is guessed from the first "resourceType" string of the
	// bytes (encoding/json writes keys sorted, so the member is rarely
	// first): the parse confirms it at the top-level member, and when it
	// could not (a nested or later member, or a decline before the
	// member was reached) the type is found by a scan of the top level.
	if rt, ok := guessResourceType(raw, src); ok && guess {
		if res, ok := resources[rt]; ok {
			cr, h, ok, confirmed := p.fastParseAs(res, rt, raw, src)
			if ok || confirmed {
				return cr, h, ok
			}
		}
	}
	rt, ok := findResourceType(raw, src)
	if !ok {
		return nil, h, false
	}
	res, ok := resources[rt]
	if !ok {
		return nil, h, false
	}
	cr, h, ok, _ = p.fastParseAs(res, rt, raw, src)
	return cr, h, ok
}

// guessResourceType returns the value of the first "resourceType" string
// of raw (src is raw as a string) when a string follows it as a member's
// value.
func guessResourceType(raw []byte, src string) (string, bool) {
	const key = `"resourceType"`
	i := strings.Index(src, key)
	if i < 0 {
		return "", false
	}
	s := scanner{b: raw, src: src, i: i + len(key)}
	s.ws()
	if !s.eat(':') {
		return "", false
	}
	s.ws()
	return s.str()
}

// fastParseAs reads raw (src is raw as a string) as a resource of type
// rt. confirmed says the top-level "resourceType" member was read and is
// rt; ok is never true without it.
func (p *Parser) fastParseAs(res fastResource, rt string, raw []byte, src string) (cr *rpb.ContainedResource, h rawHead, ok, confirmed bool) {
	cr = &rpb.ContainedResource{}
	var msg proto.Message
	if res.newMsg != nil {
		msg = res.newMsg()
	} else {
		msg = cr.ProtoReflect().NewField(res.fd).Message().Interface()
	}
	m := msg.ProtoReflect()
	s := scanner{b: raw, src: src, loc: p.u.TimeZone, wantType: rt}
	s.ws()
	if !s.object(res.msg, msg, true) {
		return nil, h, false, s.typeConfirmed
	}
	s.ws()
	if s.i != len(s.b) || !s.typeConfirmed {
		return nil, h, false, s.typeConfirmed
	}
	h = rawHead{ResourceType: rt}
	if res.contain != nil {
		res.contain(cr, msg)
	} else {
		cr.ProtoReflect().Set(res.fd, protoreflect.ValueOfMessage(m))
	}
	if r, ok := msg.(interface{ GetId() *dpb.Id }); ok {
		h.ID = r.GetId().GetValue()
	} else if idf := res.msg.fields["id"]; idf != nil && m.Has(idf.fd) {
		h.ID = m.Get(idf.fd).Message().Get(idf.value).String()
	}
	return cr, h, true, true
}

// findResourceType returns the top-level "resourceType" string of a JSON
// object, skipping the other members.
func findResourceType(raw []byte, src string) (string, bool) {
	s := scanner{b: raw, src: src}
	s.ws()
	if !s.eat('{') {
		return "", false
	}
	for {
		s.ws()
		key, ok := s.str()
		if !ok {
			return "", false
		}
		s.ws()
		if !s.eat(':') {
			return "", false
		}
		s.ws()
		if key == "resourceType" {
			return s.str()
		}
		if !s.skip(0) {
			return "", false
		}
		s.ws()
		if !s.eat(',') {
			return "", false
		}
	}
}

// scanner reads JSON strictly; any byte it does not expect declines.
type scanner struct {
	b []byte
	// src is b as a string when set: strings without escapes are taken
	// from it without copying.
	src string
	i   int
	loc *time.Location
	// wantType is the resource type the top-level "resourceType" member
	// must name; typeConfirmed is set once it did.
	wantType      string
	typeConfirmed bool
	// The values read most are allocated a few at a time (see slab).
	concepts   slab[conceptAlloc]
	codings    slab[codingAlloc]
	references slab[referenceAlloc]
}

// slab hands out zero values of T from blocks of 2, 4, 8, then 16: the
// values of one resource live as long as each other, and one allocation
// of a block costs less than one per value.
type slab[T any] struct {
	free []T
	n    int
}

func (s *slab[T]) next() *T {
	if len(s.free) == 0 {
		s.n = min(max(2, 2*s.n), 16)
		s.free = make([]T, s.n)
	}
	p := &s.free[0]
	s.free = s.free[1:]
	return p
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// str reads a JSON string. Escapes other than \" \\ \/ \b \f \n \r \t and
// \u of a non-surrogate code point, raw control characters and a missing
// quote decline. The input is valid UTF-8 (checked once).
func (s *scanner) str() (string, bool) {
	if !s.eat('"') {
		return "", false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			var v string
			if s.src != "" {
				v = s.src[start:s.i]
			} else {
				v = string(s.b[start:s.i])
			}
			s.i++
			return v, true
		case c == '\\':
			return s.strEscaped(start)
		case c < 0x20:
			return "", false
		}
		s.i++
	}
	return "", false
}

func (s *scanner) strEscaped(start int) (string, bool) {
	// The decoded string is no longer than the raw one: size the buffer
	// from the closing quote.
	end := s.i
	for end < len(s.b) && s.b[end] != '"' {
		if s.b[end] == '\\' {
			end++
		}
		end++
	}
	buf := make([]byte, 0, end-start)
	buf = append(buf, s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return string(buf), true
		case c < 0x20:
			return "", false
		case c != '\\':
			run := s.i + 1
			for run < len(s.b) && s.b[run] != '"' && s.b[run] != '\\' && s.b[run] >= 0x20 {
				run++
			}
			buf = append(buf, s.b[s.i:run]...)
			s.i = run
			continue
		}
		if s.i+1 >= len(s.b) {
			return "", false
		}
		e := s.b[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			if s.i+4 > len(s.b) {
				return "", false
			}
			var r rune
			for _, h := range s.b[s.i : s.i+4] {
				switch {
				case h >= '0' && h <= '9':
					r = r<<4 | rune(h-'0')
				case h >= 'a' && h <= 'f':
					r = r<<4 | rune(h-'a'+10)
				case h >= 'A' && h <= 'F':
					r = r<<4 | rune(h-'A'+10)
				default:
					return "", false
				}
			}
			if utf16.IsSurrogate(r) {
				return "", false
			}
			s.i += 4
			buf = utf8.AppendRune(buf, r)
		default:
			return "", false
		}
	}
	return "", false
}

// number reads a JSON number literal (RFC 8259 grammar) as written.
func (s *scanner) number() (string, bool) {
	start := s.i
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	s.eat('-')
	switch {
	case s.eat('0'):
	case digits() == 0:
		return "", false
	}
	if s.eat('.') && digits() == 0 {
		return "", false
	}
	if s.eat('e') || s.eat('E') {
		if !s.eat('+') {
			s.eat('-')
		}
		if digits() == 0 {
			return "", false
		}
	}
	if s.src != "" {
		return s.src[start:s.i], true
	}
	return string(s.b[start:s.i]), true
}

// skip passes over one JSON value (used only to find resourceType; the
// full read checks every byte).
func (s *scanner) skip(depth int) bool {
	if depth > 64 {
		return false
	}
	switch s.peek() {
	case '"':
		_, ok := s.str()
		return ok
	case '{', '[':
		open := s.b[s.i]
		s.i++
		s.ws()
		if open == '{' && s.eat('}') || open == '[' && s.eat(']') {
			return true
		}
		for {
			s.ws()
			if open == '{' {
				if _, ok := s.str(); !ok {
					return false
				}
				s.ws()
				if !s.eat(':') {
					return false
				}
				s.ws()
			}
			if !s.skip(depth + 1) {
				return false
			}
			s.ws()
			if s.eat(',') {
				continue
			}
			return open == '{' && s.eat('}') || open == '[' && s.eat(']')
		}
	default:
		for s.i < len(s.b) {
			switch c := s.b[s.i]; {
			case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c == '-', c == '+', c == '.', c == 'E':
				s.i++
			default:
				return true
			}
		}
		return true
	}
}

// object reads a JSON object into m (a message of fm's type). top is set for the resource itself,
// whose "resourceType" member is skipped. Empty objects decline.
func (s *scanner) object(fm *fastMsg, m proto.Message, top bool) bool {
	if !s.eat('{') {
		return false
	}
	var seen [4]uint64
	n, fields := 0, 0
	for {
		key, st := s.nextKey(&n)
		if st <= 0 {
			return st == 0 && fields > 0
		}
		if top && string(key) == "resourceType" {
			v, ok := s.str()
			if !ok || v != s.wantType {
				return false
			}
			s.typeConfirmed = true
			top = false
			continue
		}
		f := fm.fields[string(key)]
		if f == nil || f.bit >= 256 || seen[f.bit/64]&(1<<(f.bit%64)) != 0 {
			return false
		}
		seen[f.bit/64] |= 1 << (f.bit % 64)
		if !s.member(f, m) {
			return false
		}
		fields++
	}
}

// nextKey moves to the next member of an object whose '{' has been read;
// n counts the members read so far. It returns the member's key,
// positioned at its value, with status 1; status 0 at the end of a
// non-empty object; -1 on anything else (an empty object, a key with an
// escape, bad JSON).
func (s *scanner) nextKey(n *int) ([]byte, int) {
	s.ws()
	if *n > 0 {
		if s.eat('}') {
			return nil, 0
		}
		if !s.eat(',') {
			return nil, -1
		}
		s.ws()
	}
	if !s.eat('"') {
		return nil, -1
	}
	start := s.i
	for s.i < len(s.b) && s.b[s.i] != '"' {
		if c := s.b[s.i]; c == '\\' || c < 0x20 {
			return nil, -1
		}
		s.i++
	}
	if s.i >= len(s.b) {
		return nil, -1
	}
	key := s.b[start:s.i]
	s.i++
	s.ws()
	if !s.eat(':') {
		return nil, -1
	}
	s.ws()
	*n++
	return key, 1
}

// member reads the value of one element into m.
func (s *scanner) member(f *fastField, dst proto.Message) bool {
	if f.set != nil {
		return s.typedMember(f, dst)
	}
	m := dst.ProtoReflect()
	into, fd := m, f.fd
	if f.choice != nil {
		c := m.NewField(f.fd).Message()
		m.Set(f.fd, protoreflect.ValueOfMessage(c))
		into, fd = c, f.choice
	}
	if fd.IsList() {
		if !s.eat('[') {
			return false
		}
		list := into.Mutable(fd).List()
		for {
			s.ws()
			v, ok := s.value(f)
			if !ok {
				return false
			}
			list.Append(protoreflect.ValueOfMessage(v.ProtoReflect()))
			s.ws()
			if s.eat(',') {
				continue
			}
			return s.eat(']')
		}
	}
	v, ok := s.value(f)
	if !ok {
		return false
	}
	into.Set(fd, protoreflect.ValueOfMessage(v.ProtoReflect()))
	return true
}

// typedMember reads the value of one element into dst through f.set.
func (s *scanner) typedMember(f *fastField, dst proto.Message) bool {
	if !f.list {
		v, ok := s.value(f)
		if !ok {
			return false
		}
		f.set(dst, v)
		return true
	}
	if !s.eat('[') {
		return false
	}
	for {
		s.ws()
		v, ok := s.value(f)
		if !ok {
			return false
		}
		f.set(dst, v)
		s.ws()
		if s.eat(',') {
			continue
		}
		return s.eat(']')
	}
}

// value reads one value of f.
func (s *scanner) value(f *fastField) (proto.Message, bool) {
	switch f.typed {
	case typedCodeableConcept:
		return s.codeableConcept()
	case typedReference:
		return s.reference()
	}
	if f.sub != nil {
		var v proto.Message
		if f.newMsg != nil {
			v = f.newMsg()
		} else {
			v = f.mt.New().Interface()
		}
		if !s.object(f.sub, v, false) {
			return nil, false
		}
		if r, ok := v.(*dpb.Reference); ok && !normalizeReference(r) {
			return nil, false
		}
		return v, true
	}
	switch f.prim {
	case primBoolean:
		b, ok := s.boolean()
		return &dpb.Boolean{Value: b}, ok
	case primDecimal:
		// parseDecimal: the literal as written, checked by the decimal
		// regex, ^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$, which
		// is the JSON number grammar number reads
		// (FuzzNumberMatchesDecimalRegex).
		lit, ok := s.number()
		if !ok {
			return nil, false
		}
		return &dpb.Decimal{Value: lit}, true
	case primDate, primDateTime, primInstant, primEnumCode:
		str, ok := s.str()
		if !ok || str == "" {
			return nil, false
		}
		switch f.prim {
		case primDate:
			d, ok := parseFastDate(str, s.loc)
			return d, ok
		case primDateTime:
			d, ok := parseFastDateTime(str, s.loc)
			return d, ok
		case primInstant:
			d, ok := parseFastInstant(str)
			return d, ok
		}
		n, ok := f.enumCode(str)
		if !ok {
			return nil, false
		}
		if f.newEnum != nil {
			return f.newEnum(n), true
		}
		v := f.mt.New()
		v.Set(f.value, protoreflect.ValueOfEnum(n))
		return v.Interface(), true
	}
	str, ok := s.prim(f.prim)
	if !ok || f.mk == nil {
		return nil, false
	}
	return f.mk(str), true
}

// boolean reads true or false.
func (s *scanner) boolean() (bool, bool) {
	switch {
	case s.i+4 <= len(s.b) && string(s.b[s.i:s.i+4]) == "true":
		s.i += 4
		return true, true
	case s.i+5 <= len(s.b) && string(s.b[s.i:s.i+5]) == "false":
		s.i += 5
		return false, true
	}
	return false, false
}

// prim reads a non-empty string primitive and checks it as google/fhir
// does (parsePrimitiveType, then fhirvalidate.ValidatePrimitives).
func (s *scanner) prim(k primKind) (string, bool) {
	str, ok := s.str()
	if !ok || str == "" {
		return "", false
	}
	switch k {
	case primString:
		return str, validString(str)
	case primCode:
		return str, validCode(str)
	case primID:
		return str, validID(str)
	case primURI:
		return str, validURI(str)
	case primText:
		return str, true
	}
	return "", false
}

// validString is jsonpbhelper.ValidateString: at most 1 MiB, none of the
// control characters U+0000-U+0008, U+000B, U+000C, U+000E-U+001F.
func validString(s string) bool {
	if len(s) > maxFastStringSize {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// isRE2Space is RE2's \s: [\t\n\f\r ].
func isRE2Space(c byte) bool {
	return c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' '
}

// validCode matches the code regex ^[^\s]+(\s[^\s]+)*$: no leading,
// trailing or doubled whitespace (bytes of multi-byte runes are never
// \s).
func validCode(s string) bool {
	if s == "" || isRE2Space(s[0]) || isRE2Space(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if isRE2Space(s[i]) && isRE2Space(s[i-1]) {
			return false
		}
	}
	return true
}

// validID matches the id regex ^[A-Za-z0-9\-\.]{1,64}$.
func validID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}

// uriCache remembers URIs url.Parse accepted (code systems, profiles and
// references repeat across resources); it stops growing at maxURICache.
var (
	uriCache     sync.Map
	uriCacheSize atomic.Int64
)

const maxURICache = 4096

// validURI is fhirvalidate's check of uri, url and canonical: url.Parse
// accepts it.
func validURI(s string) bool {
	if plainURI(s) {
		return true
	}
	if _, ok := uriCache.Load(s); ok {
		return true
	}
	if _, err := url.Parse(s); err != nil {
		return false
	}
	if uriCacheSize.Load() < maxURICache {
		if _, loaded := uriCache.LoadOrStore(s, struct{}{}); !loaded {
			uriCacheSize.Add(1)
		}
	}
	return true
}

// plainURI reports, without allocating, that url.Parse surely accepts s:
// a scheme ([A-Za-z][A-Za-z0-9+.-]*, then ':'), an optional "//" and host of
// [A-Za-z0-9.-] (no port, user or IP literal), and a rest of unreserved
// characters, sub-delims, ':' and '/' (no '%', '?', '#', '@', space or
// control). False says nothing: validURI then asks url.Parse
// (TestPlainURIImpliesURLParse, FuzzPlainURI).
func plainURI(s string) bool {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			i++
			continue
		}
		break
	}
	if i == 0 || i >= len(s) || s[i] != ':' {
		return false
	}
	rest := s[i+1:]
	if strings.HasPrefix(rest, "//") {
		j := 2
		for ; j < len(rest) && rest[j] != '/'; j++ {
			if c := rest[j]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
				return false
			}
		}
		rest = rest[j:]
	}
	for j := 0; j < len(rest); j++ {
		switch c := rest[j]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-._~/:!$&'()*+,;=", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// conceptAlloc holds a CodeableConcept and room for its first coding in
// one allocation.
type conceptAlloc struct {
	cc  dpb.CodeableConcept
	one [1]*dpb.Coding
}

// codeableConcept reads a CodeableConcept (coding, text).
func (s *scanner) codeableConcept() (*dpb.CodeableConcept, bool) {
	if !s.eat('{') {
		return nil, false
	}
	blk := s.concepts.next()
	cc := &blk.cc
	for n := 0; ; {
		key, st := s.nextKey(&n)
		if st <= 0 {
			return cc, st == 0
		}
		switch string(key) {
		case "coding":
			if cc.Coding != nil || !s.eat('[') {
				return nil, false
			}
			cc.Coding = blk.one[:0]
			for {
				s.ws()
				c, ok := s.coding()
				if !ok {
					return nil, false
				}
				cc.Coding = append(cc.Coding, c)
				s.ws()
				if s.eat(',') {
					continue
				}
				if !s.eat(']') {
					return nil, false
				}
				break
			}
		case "text":
			if cc.Text != nil {
				return nil, false
			}
			v, ok := s.prim(primString)
			if !ok {
				return nil, false
			}
			cc.Text = &dpb.String{Value: v}
		default:
			return nil, false
		}
	}
}

// codingAlloc holds a Coding and its common primitives in one allocation
// (a Coding is the value read most often).
type codingAlloc struct {
	c       dpb.Coding
	system  dpb.Uri
	code    dpb.Code
	display dpb.String
}

// coding reads a Coding (system, version, code, display, userSelected).
func (s *scanner) coding() (*dpb.Coding, bool) {
	if !s.eat('{') {
		return nil, false
	}
	blk := s.codings.next()
	c := &blk.c
	for n := 0; ; {
		key, st := s.nextKey(&n)
		if st <= 0 {
			return c, st == 0
		}
		var ok bool
		var v string
		switch string(key) {
		case "system":
			if c.System != nil {
				return nil, false
			}
			v, ok = s.prim(primURI)
			blk.system.Value = v
			c.System = &blk.system
		case "version":
			if c.Version != nil {
				return nil, false
			}
			v, ok = s.prim(primString)
			c.Version = &dpb.String{Value: v}
		case "code":
			if c.Code != nil {
				return nil, false
			}
			v, ok = s.prim(primCode)
			blk.code.Value = v
			c.Code = &blk.code
		case "display":
			if c.Display != nil {
				return nil, false
			}
			v, ok = s.prim(primString)
			blk.display.Value = v
			c.Display = &blk.display
		case "userSelected":
			if c.UserSelected != nil {
				return nil, false
			}
			var b bool
			b, ok = s.boolean()
			c.UserSelected = &dpb.Boolean{Value: b}
		}
		if !ok {
			return nil, false
		}
	}
}

// referenceAlloc holds a Reference, its reference string and the
// ReferenceId normalizeReference makes of it in one allocation.
type referenceAlloc struct {
	r   dpb.Reference
	uri dpb.String
	ref dpb.Reference_Uri
	id  dpb.ReferenceId
}

// reference reads a Reference (reference, type, display) and normalises
// it as google/fhir does.
func (s *scanner) reference() (*dpb.Reference, bool) {
	if !s.eat('{') {
		return nil, false
	}
	blk := s.references.next()
	r := &blk.r
	for n := 0; ; {
		key, st := s.nextKey(&n)
		if st < 0 {
			return nil, false
		}
		if st == 0 {
			break
		}
		var ok bool
		var v string
		switch string(key) {
		case "reference":
			if r.Reference != nil {
				return nil, false
			}
			v, ok = s.prim(primString)
			blk.uri.Value = v
			blk.ref.Uri = &blk.uri
			r.Reference = &blk.ref
		case "type":
			if r.Type != nil {
				return nil, false
			}
			v, ok = s.prim(primURI)
			r.Type = &dpb.Uri{Value: v}
		case "display":
			if r.Display != nil {
				return nil, false
			}
			v, ok = s.prim(primString)
			r.Display = &dpb.String{Value: v}
		}
		if !ok {
			return nil, false
		}
	}
	if !normalizeReferenceTo(r, &blk.id) {
		return nil, false
	}
	return r, true
}

// normalizeReference is the unmarshaller's jsonformat.NormalizeReference
// followed by the primitive check of what it made: a "_history" version
// becomes an Id, which must match the id regex. The common forms ("#frag",
// "Type/id", "Type/id/_history/v" of an R4 type, and anything with no, two
// or more than three slashes, which stays a uri) are handled here without
// reflection; the rest goes to jsonformat.NormalizeReference
// (TestNormalizeReferenceMatchesGoogleFHIR, FuzzNormalizeReference).
func normalizeReference(r *dpb.Reference) bool {
	return normalizeReferenceTo(r, nil)
}

// normalizeReferenceTo is normalizeReference; the ReferenceId it makes,
// if any, is *refID when refID is not nil (an empty ReferenceId).
func normalizeReferenceTo(r *dpb.Reference, refID *dpb.ReferenceId) bool {
	uri := r.GetUri().GetValue()
	if uri == "" {
		return slowNormalizeReference(r)
	}
	if uri[0] == '#' {
		r.Reference = &dpb.Reference_Fragment{Fragment: &dpb.String{Value: uri[1:]}}
		return true
	}
	s1 := strings.IndexByte(uri, '/')
	if s1 < 0 {
		return true
	}
	rest := uri[s1+1:]
	s2 := strings.IndexByte(rest, '/')
	id, history := rest, ""
	if s2 >= 0 {
		after := rest[s2+1:]
		s3 := strings.IndexByte(after, '/')
		if s3 < 0 || after[:s3] != "_history" || strings.IndexByte(after[s3+1:], '/') >= 0 {
			return true // not a relative reference: kept as a uri
		}
		id, history = rest[:s2], after[s3+1:]
	}
	fd, ok := referenceFields[uri[:s1]]
	if !ok {
		return slowNormalizeReference(r)
	}
	if refID == nil {
		refID = &dpb.ReferenceId{}
	}
	refID.Value = id
	if s2 >= 0 {
		if !validID(history) {
			return false
		}
		refID.History = &dpb.Id{Value: history}
	}
	if set, ok := commonReferenceSetters[uri[:s1]]; ok {
		set(r, refID)
	} else {
		r.ProtoReflect().Set(fd, protoreflect.ValueOfMessage(refID.ProtoReflect()))
	}
	return true
}

// commonReferenceSetters set the typed reference of the resource types
// pgxsafety's inputs reference most, without protoreflect (the same
// fields as referenceFields; TestNormalizeReferenceMatchesGoogleFHIR).
var commonReferenceSetters = map[string]func(*dpb.Reference, *dpb.ReferenceId){
	"Patient": func(r *dpb.Reference, id *dpb.ReferenceId) { r.Reference = &dpb.Reference_PatientId{PatientId: id} },
	"Observation": func(r *dpb.Reference, id *dpb.ReferenceId) {
		r.Reference = &dpb.Reference_ObservationId{ObservationId: id}
	},
	"Organization": func(r *dpb.Reference, id *dpb.ReferenceId) {
		r.Reference = &dpb.Reference_OrganizationId{OrganizationId: id}
	},
	"Practitioner": func(r *dpb.Reference, id *dpb.ReferenceId) {
		r.Reference = &dpb.Reference_PractitionerId{PractitionerId: id}
	},
	"Specimen":  func(r *dpb.Reference, id *dpb.ReferenceId) { r.Reference = &dpb.Reference_SpecimenId{SpecimenId: id} },
	"Encounter": func(r *dpb.Reference, id *dpb.ReferenceId) { r.Reference = &dpb.Reference_EncounterId{EncounterId: id} },
	"Medication": func(r *dpb.Reference, id *dpb.ReferenceId) {
		r.Reference = &dpb.Reference_MedicationId{MedicationId: id}
	},
	"MedicationRequest": func(r *dpb.Reference, id *dpb.ReferenceId) {
		r.Reference = &dpb.Reference_MedicationRequestId{MedicationRequestId: id}
	},
	"Condition": func(r *dpb.Reference, id *dpb.ReferenceId) { r.Reference = &dpb.Reference_ConditionId{ConditionId: id} },
	"DiagnosticReport": func(r *dpb.Reference, id *dpb.ReferenceId) {
		r.Reference = &dpb.Reference_DiagnosticReportId{DiagnosticReportId: id}
	},
	"MolecularSequence": func(r *dpb.Reference, id *dpb.ReferenceId) {
		r.Reference = &dpb.Reference_MolecularSequenceId{MolecularSequenceId: id}
	},
	"ServiceRequest": func(r *dpb.Reference, id *dpb.ReferenceId) {
		r.Reference = &dpb.Reference_ServiceRequestId{ServiceRequestId: id}
	},
	"Device": func(r *dpb.Reference, id *dpb.ReferenceId) { r.Reference = &dpb.Reference_DeviceId{DeviceId: id} },
	"Group":  func(r *dpb.Reference, id *dpb.ReferenceId) { r.Reference = &dpb.Reference_GroupId{GroupId: id} },
}

// slowNormalizeReference is normalizeReference through
// jsonformat.NormalizeReference.
func slowNormalizeReference(r *dpb.Reference) bool {
	if jsonformat.NormalizeReference(r) != nil {
		return false
	}
	if id := referenceID(r); id != nil && id.GetHistory() != nil {
		return validID(id.GetHistory().GetValue())
	}
	return true
}

// referenceID is the ReferenceId set in r's reference oneof, if any.
func referenceID(r *dpb.Reference) *dpb.ReferenceId {
	m := r.ProtoReflect()
	if f := m.WhichOneof(referenceOneof); f != nil {
		if id, ok := m.Get(f).Message().Interface().(*dpb.ReferenceId); ok {
			return id
		}
	}
	return nil
}

// referenceOneof is Reference's "reference" oneof; referenceFields maps
// an R4 resource type to its typed field there (the referenced_fhir_type
// annotation, as jsonpbhelper's ReferenceFieldForType).
var (
	referenceOneof  = (&dpb.Reference{}).ProtoReflect().Descriptor().Oneofs().ByName("reference")
	referenceFields = func() map[string]protoreflect.FieldDescriptor {
		out := map[string]protoreflect.FieldDescriptor{}
		fs := referenceOneof.Fields()
		for i := 0; i < fs.Len(); i++ {
			f := fs.Get(i)
			if t, _ := proto.GetExtension(f.Options(), apb.E_ReferencedFhirType).(string); t != "" {
				out[t] = f
			}
		}
		return out
	}()
)

// enumNames maps the names of ed's values other than 0 to their numbers.
func enumNames(ed protoreflect.EnumDescriptor) map[string]protoreflect.EnumNumber {
	out := map[string]protoreflect.EnumNumber{}
	vs := ed.Values()
	for i := 0; i < vs.Len(); i++ {
		if v := vs.Get(i); v.Number() != 0 {
			out[string(v.Name())] = v.Number()
		}
	}
	return out
}

// enumCode is enumCode of f's enum without allocating for an ASCII code
// that names a value: upper case with '-' as '_' (strings.ToUpper of an
// ASCII string changes a-z only), looked up in f.enumNames. Anything else
// (another rune, which ToUpper may map into ASCII, or a code that is only
// an original code) goes to enumCode (FuzzEnumCodeMatchesReference).
func (f *fastField) enumCode(val string) (protoreflect.EnumNumber, bool) {
	var buf [48]byte
	if len(val) <= len(buf) {
		ascii := true
		for i := 0; i < len(val); i++ {
			c := val[i]
			switch {
			case c >= utf8.RuneSelf:
				ascii = false
			case 'a' <= c && c <= 'z':
				c -= 'a' - 'A'
			case c == '-':
				c = '_'
			}
			buf[i] = c
		}
		if ascii {
			if n, ok := f.enumNames[string(buf[:len(val)])]; ok {
				return n, true
			}
		}
	}
	return enumCode(f.value.Enum(), val)
}

// enumCode maps a code to its enum value as jsonpbhelper.UnmarshalCode
// does.
func enumCode(ed protoreflect.EnumDescriptor, val string) (protoreflect.EnumNumber, bool) {
	name := strings.ReplaceAll(strings.ToUpper(val), "-", "_")
	if v := ed.Values().ByName(protoreflect.Name(name)); v != nil && v.Number() != 0 {
		return v.Number(), true
	}
	vs := ed.Values()
	for i := 0; i < vs.Len(); i++ {
		ev := vs.Get(i)
		if proto.GetExtension(ev.Options(), apb.E_FhirOriginalCode).(string) == val {
			return ev.Number(), true
		}
	}
	return 0, false
}
