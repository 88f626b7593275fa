package fhir

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/google/fhir/go/jsonformat"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

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
// extension, contained, empty objects, arrays or strings, null, numbers,
// duplicate elements, escapes it does not decode exactly as google/fhir
// does, and any primitive google/fhir would reject. Primitive rules
// (regexes, date-time layouts and precision, the unmarshaller's time zone,
// code-to-enum mapping, reference normalisation) follow google/fhir
// v0.7.4's jsonformat; FuzzFastParseMatchesGoogleFHIR checks that both
// agree.

// fastElements lists, per FHIR type (the proto message's name), the JSON
// elements the fast path reads. Resources not listed here are never read
// by the fast path.
var fastElements = map[string][]string{
	"Observation": {"id", "meta", "text", "status", "category", "code", "subject", "encounter",
		"effectiveDateTime", "effectivePeriod", "effectiveInstant", "issued", "performer",
		"valueCodeableConcept", "valueString", "valueQuantity", "valueRange", "method", "specimen", "basedOn", "hasMember",
		"derivedFrom", "component"},
	"Observation.Component": {"code", "valueCodeableConcept", "valueString", "valueQuantity", "valueRange"},
	"MedicationRequest": {"id", "meta", "text", "status", "intent", "category", "medicationCodeableConcept",
		"medicationReference", "subject", "encounter", "authoredOn", "requester", "reasonCode"},
	"Medication": {"id", "meta", "text", "code", "status"},
	"Patient":    {"id", "meta", "text", "active", "identifier", "name", "gender", "birthDate", "address"},
	"Condition": {"id", "meta", "text", "clinicalStatus", "verificationStatus", "category", "code",
		"subject", "encounter", "onsetDateTime", "recordedDate"},
	"Specimen":        {"id", "meta", "text", "accessionIdentifier", "identifier", "type", "subject"},
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
	// target is the descriptor of the message the value is read into.
	target protoreflect.MessageDescriptor
	prim   primKind
	// value is the primitive's "value" field (primString … primEnumCode).
	value protoreflect.FieldDescriptor
	// ref is set for Reference (normalised as google/fhir does).
	ref bool
	sub *fastMsg
	bit int
}

// fastMsg is the fast path's view of one message type.
type fastMsg struct {
	fields map[string]*fastField
}

// fastResources maps a resource type to its message and its field in
// ContainedResource.
var fastResources = map[string]struct {
	msg *fastMsg
	fd  protoreflect.FieldDescriptor
}{}

var (
	// Regexes of google/fhir v0.7.4 (jsonpbhelper).
	dateRE            = regexp.MustCompile(`^-?[0-9]{4}(-(0[1-9]|1[0-2])(-(0[0-9]|[1-2][0-9]|3[0-1]))?)?$`)
	dateTimeRE        = regexp.MustCompile(`^-?[0-9]{4}(-(0[1-9]|1[0-2])(-(0[0-9]|[1-2][0-9]|3[0-1])(T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|(\+|-)((0[0-9]|1[0-3]):[0-5][0-9]|14:00)))?)?)?$`)
	instantRE         = regexp.MustCompile(`^-?[0-9]{4}-(0[1-9]|1[0-2])-(0[0-9]|[1-2][0-9]|3[0-1])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|(\+|-)((0[0-9]|1[0-3]):[0-5][0-9]|14:00))$`)
	subMilliRE        = regexp.MustCompile(`T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{3}[0-9]+`)
	subSecondRE       = regexp.MustCompile(`T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]+`)
	invalidStringRE   = regexp.MustCompile("[\x00-\x08\x0B\x0C\x0E-\x1F]")
	codeRE, idRE      *regexp.Regexp
	decimalRE         *regexp.Regexp
	maxFastStringSize = 1024 * 1024
)

func init() {
	codeRE = valueRegex(&dpb.Code{})
	idRE = valueRegex(&dpb.Id{})
	decimalRE = valueRegex(&dpb.Decimal{})
	cr := (&rpb.ContainedResource{}).ProtoReflect().Descriptor()
	oneof := cr.Oneofs().ByName("oneof_resource")
	msgs := map[protoreflect.FullName]*fastMsg{}
	for i := 0; i < oneof.Fields().Len(); i++ {
		f := oneof.Fields().Get(i)
		name := string(f.Message().Name())
		if _, ok := fastElements[name]; ok {
			fastResources[name] = struct {
				msg *fastMsg
				fd  protoreflect.FieldDescriptor
			}{buildFastMsg(f.Message(), name, msgs), f}
		}
	}
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
func buildFastMsg(md protoreflect.MessageDescriptor, name string, done map[protoreflect.FullName]*fastMsg) *fastMsg {
	if m, ok := done[md.FullName()]; ok {
		return m
	}
	m := &fastMsg{fields: map[string]*fastField{}}
	done[md.FullName()] = m
	all := jsonFields(md)
	for _, key := range fastElements[name] {
		f, ok := all[key]
		if !ok {
			panic("fhir: fast path: no element " + name + "." + key)
		}
		target := f.fd.Message()
		if f.choice != nil {
			target = f.choice.Message()
		}
		f.target = target
		f.bit = f.fd.Index()
		switch {
		case isPrimitive(target):
			f.prim = primitiveKind(target)
			if f.prim == primNone {
				panic("fhir: fast path: unsupported primitive " + string(target.FullName()))
			}
			f.value = target.Fields().ByName("value")
		default:
			f.ref = proto.HasExtension(target.Options(), apb.E_FhirReferenceType)
			sub := string(target.Name())
			if p, ok := target.Parent().(protoreflect.MessageDescriptor); ok {
				sub = string(p.Name()) + "." + sub
			}
			if _, ok := fastElements[sub]; !ok {
				panic("fhir: fast path: no element list for " + sub)
			}
			f.sub = buildFastMsg(target, sub, done)
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
	if !utf8.Valid(raw) {
		return nil, h, false
	}
	rt, ok := findResourceType(raw)
	if !ok {
		return nil, h, false
	}
	res, ok := fastResources[rt]
	if !ok {
		return nil, h, false
	}
	cr = &rpb.ContainedResource{}
	m := cr.ProtoReflect().NewField(res.fd).Message()
	s := scanner{b: raw, loc: p.u.TimeZone}
	s.ws()
	if !s.object(res.msg, m, true) {
		return nil, h, false
	}
	s.ws()
	if s.i != len(s.b) {
		return nil, h, false
	}
	cr.ProtoReflect().Set(res.fd, protoreflect.ValueOfMessage(m))
	h = rawHead{ResourceType: rt}
	if idf := res.msg.fields["id"]; idf != nil && m.Has(idf.fd) {
		h.ID = m.Get(idf.fd).Message().Get(idf.value).String()
	}
	return cr, h, true
}

// findResourceType returns the top-level "resourceType" string of a JSON
// object, skipping the other members.
func findResourceType(raw []byte) (string, bool) {
	s := scanner{b: raw}
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
	b   []byte
	i   int
	loc *time.Location
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
			v := string(s.b[start:s.i])
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
	buf := make([]byte, 0, s.i-start+16)
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
			buf = append(buf, c)
			s.i++
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

// object reads a JSON object into m. top is set for the resource itself,
// whose "resourceType" member is skipped. Empty objects decline.
func (s *scanner) object(fm *fastMsg, m protoreflect.Message, top bool) bool {
	if !s.eat('{') {
		return false
	}
	var seen [4]uint64
	n := 0
	for {
		s.ws()
		key, ok := s.str()
		if !ok {
			return false
		}
		s.ws()
		if !s.eat(':') {
			return false
		}
		s.ws()
		if top && key == "resourceType" {
			if _, ok := s.str(); !ok {
				return false
			}
			top = false
		} else {
			f := fm.fields[key]
			if f == nil || f.bit >= 256 || seen[f.bit/64]&(1<<(f.bit%64)) != 0 {
				return false
			}
			seen[f.bit/64] |= 1 << (f.bit % 64)
			if !s.member(f, m) {
				return false
			}
			n++
		}
		s.ws()
		if s.eat(',') {
			continue
		}
		return s.eat('}') && n > 0
	}
}

// member reads the value of one element into m.
func (s *scanner) member(f *fastField, m protoreflect.Message) bool {
	into := m
	if f.choice != nil {
		c := m.NewField(f.fd).Message()
		m.Set(f.fd, protoreflect.ValueOfMessage(c))
		into = c
	}
	fd := f.fd
	if f.choice != nil {
		fd = f.choice
	}
	if fd.IsList() {
		if !s.eat('[') {
			return false
		}
		list := into.Mutable(fd).List()
		for {
			s.ws()
			v, ok := s.value(f, list.NewElement().Message())
			if !ok {
				return false
			}
			list.Append(protoreflect.ValueOfMessage(v))
			s.ws()
			if s.eat(',') {
				continue
			}
			return s.eat(']')
		}
	}
	v, ok := s.value(f, into.NewField(fd).Message())
	if !ok {
		return false
	}
	into.Set(fd, protoreflect.ValueOfMessage(v))
	return true
}

// value reads one value of f into the empty message v.
func (s *scanner) value(f *fastField, v protoreflect.Message) (protoreflect.Message, bool) {
	if f.sub != nil {
		if !s.object(f.sub, v, false) {
			return nil, false
		}
		if f.ref {
			if err := jsonformat.NormalizeReference(v.Interface()); err != nil {
				return nil, false
			}
		}
		return v, true
	}
	if f.prim == primBoolean {
		switch {
		case s.i+4 <= len(s.b) && string(s.b[s.i:s.i+4]) == "true":
			s.i += 4
			v.Set(f.value, protoreflect.ValueOfBool(true))
		case s.i+5 <= len(s.b) && string(s.b[s.i:s.i+5]) == "false":
			s.i += 5
		default:
			return nil, false
		}
		return v, true
	}
	if f.prim == primDecimal {
		// parseDecimal: the literal as written, checked by the regex.
		lit, ok := s.number()
		if !ok || !decimalRE.MatchString(lit) {
			return nil, false
		}
		v.Set(f.value, protoreflect.ValueOfString(lit))
		return v, true
	}
	str, ok := s.str()
	if !ok || str == "" {
		return nil, false
	}
	switch f.prim {
	case primString:
		if len(str) > maxFastStringSize || invalidStringRE.MatchString(str) {
			return nil, false
		}
	case primCode:
		if !codeRE.MatchString(str) {
			return nil, false
		}
	case primID:
		if !idRE.MatchString(str) {
			return nil, false
		}
	case primURI:
		if _, err := url.Parse(str); err != nil {
			return nil, false
		}
	case primText:
	case primEnumCode:
		n, ok := enumCode(f.value.Enum(), str)
		if !ok {
			return nil, false
		}
		v.Set(f.value, protoreflect.ValueOfEnum(n))
		return v, true
	case primDate:
		d, ok := parseFastDate(str, s.loc)
		if !ok {
			return nil, false
		}
		return d.ProtoReflect(), true
	case primDateTime:
		d, ok := parseFastDateTime(str, s.loc)
		if !ok {
			return nil, false
		}
		return d.ProtoReflect(), true
	case primInstant:
		d, ok := parseFastInstant(str)
		if !ok {
			return nil, false
		}
		return d.ProtoReflect(), true
	default:
		return nil, false
	}
	v.Set(f.value, protoreflect.ValueOfString(str))
	return v, true
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

// Layouts of google/fhir v0.7.4 (jsonpbhelper).
const (
	layoutYear       = "2006"
	layoutMonth      = "2006-01"
	layoutDay        = "2006-01-02"
	layoutSeconds    = "2006-01-02T15:04:05-07:00"
	layoutSecondsUTC = "2006-01-02T15:04:05Z"
)

// timestampUsec is jsonpbhelper.GetTimestampUsec.
func timestampUsec(t time.Time) int64 {
	s := t.Unix()
	if s < math.MaxInt64/int64(time.Second) && s > math.MinInt64/int64(time.Second) {
		return t.Unix()*1e6 + int64(t.Nanosecond()/1000)
	}
	return s * int64(time.Second/time.Microsecond)
}

// extractTimezone is jsonpbhelper.ExtractTimezone.
func extractTimezone(t time.Time) string {
	_, offset := t.Zone()
	sign := "+"
	if offset < 0 {
		sign = "-"
		offset = -offset
	}
	return fmt.Sprintf("%s%02d:%02d", sign, offset/3600, offset%3600/60)
}

// parseFastDate is google/fhir's parseDateFromStr.
func parseFastDate(s string, l *time.Location) (*dpb.Date, bool) {
	if !dateRE.MatchString(s) {
		return nil, false
	}
	for _, c := range []struct {
		layout string
		prec   dpb.Date_Precision
	}{{layoutDay, dpb.Date_DAY}, {layoutMonth, dpb.Date_MONTH}, {layoutYear, dpb.Date_YEAR}} {
		if t, err := time.ParseInLocation(c.layout, s, l); err == nil {
			return &dpb.Date{ValueUs: timestampUsec(t), Timezone: l.String(), Precision: c.prec}, true
		}
	}
	return nil, false
}

// secondsPrecision is the precision google/fhir gives a date-time with
// seconds: the number of fraction digits decides.
func secondsPrecision(s string) (micro, milli bool) {
	if subMilliRE.MatchString(s) {
		return true, false
	}
	return false, subSecondRE.MatchString(s)
}

// parseFastDateTime is google/fhir's parseDateTimeFromStr.
func parseFastDateTime(s string, l *time.Location) (*dpb.DateTime, bool) {
	if !dateTimeRE.MatchString(s) {
		return nil, false
	}
	prec := dpb.DateTime_SECOND
	if micro, milli := secondsPrecision(s); micro {
		prec = dpb.DateTime_MICROSECOND
	} else if milli {
		prec = dpb.DateTime_MILLISECOND
	}
	if t, err := time.Parse(layoutSeconds, s); err == nil {
		return &dpb.DateTime{ValueUs: timestampUsec(t), Timezone: extractTimezone(t), Precision: prec}, true
	} else if t, err := time.Parse(layoutSecondsUTC, s); err == nil {
		return &dpb.DateTime{ValueUs: timestampUsec(t), Timezone: "Z", Precision: prec}, true
	}
	for _, c := range []struct {
		layout string
		prec   dpb.DateTime_Precision
	}{{layoutDay, dpb.DateTime_DAY}, {layoutMonth, dpb.DateTime_MONTH}, {layoutYear, dpb.DateTime_YEAR}} {
		if t, err := time.ParseInLocation(c.layout, s, l); err == nil {
			return &dpb.DateTime{ValueUs: timestampUsec(t), Timezone: l.String(), Precision: c.prec}, true
		}
	}
	return nil, false
}

// parseFastInstant is google/fhir's parseInstant.
func parseFastInstant(s string) (*dpb.Instant, bool) {
	if !instantRE.MatchString(s) {
		return nil, false
	}
	prec := dpb.Instant_SECOND
	if micro, milli := secondsPrecision(s); micro {
		prec = dpb.Instant_MICROSECOND
	} else if milli {
		prec = dpb.Instant_MILLISECOND
	}
	if t, err := time.Parse(layoutSecondsUTC, s); err == nil {
		return &dpb.Instant{ValueUs: timestampUsec(t), Timezone: "Z", Precision: prec}, true
	} else if t, err := time.Parse(layoutSeconds, s); err == nil {
		return &dpb.Instant{ValueUs: timestampUsec(t), Timezone: extractTimezone(t), Precision: prec}, true
	}
	return nil, false
}
