package fhir

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	dpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/datatypes_go_proto"
)

// The reference of fastdate.go: the date and time reading it replaced,
// with google/fhir v0.7.4's regexes (jsonpbhelper).

var (
	refDateRE      = regexp.MustCompile(`^-?[0-9]{4}(-(0[1-9]|1[0-2])(-(0[0-9]|[1-2][0-9]|3[0-1]))?)?$`)
	refDateTimeRE  = regexp.MustCompile(`^-?[0-9]{4}(-(0[1-9]|1[0-2])(-(0[0-9]|[1-2][0-9]|3[0-1])(T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|(\+|-)((0[0-9]|1[0-3]):[0-5][0-9]|14:00)))?)?)?$`)
	refInstantRE   = regexp.MustCompile(`^-?[0-9]{4}-(0[1-9]|1[0-2])-(0[0-9]|[1-2][0-9]|3[0-1])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|(\+|-)((0[0-9]|1[0-3]):[0-5][0-9]|14:00))$`)
	refSubMilliRE  = regexp.MustCompile(`T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{3}[0-9]+`)
	refSubSecondRE = regexp.MustCompile(`T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]+`)
)

// refExtractTimezone is jsonpbhelper.ExtractTimezone.
func refExtractTimezone(t time.Time) string {
	_, offset := t.Zone()
	sign := "+"
	if offset < 0 {
		sign = "-"
		offset = -offset
	}
	return fmt.Sprintf("%s%02d:%02d", sign, offset/3600, offset%3600/60)
}

var refDateTimePrecision = map[dpb.Date_Precision]dpb.DateTime_Precision{
	dpb.Date_DAY: dpb.DateTime_DAY, dpb.Date_MONTH: dpb.DateTime_MONTH, dpb.Date_YEAR: dpb.DateTime_YEAR,
}

func refParseFastDate(s string, l *time.Location) (*dpb.Date, bool) {
	if !refDateRE.MatchString(s) {
		return nil, false
	}
	layout, prec := dateLayout(s)
	if t, err := time.ParseInLocation(layout, s, l); err == nil {
		return &dpb.Date{ValueUs: timestampUsec(t), Timezone: l.String(), Precision: prec}, true
	}
	return nil, false
}

func refSecondsPrecision(s string) (micro, milli bool) {
	if refSubMilliRE.MatchString(s) {
		return true, false
	}
	return false, refSubSecondRE.MatchString(s)
}

func refParseFastDateTime(s string, l *time.Location) (*dpb.DateTime, bool) {
	if !refDateTimeRE.MatchString(s) {
		return nil, false
	}
	prec := dpb.DateTime_SECOND
	if micro, milli := refSecondsPrecision(s); micro {
		prec = dpb.DateTime_MICROSECOND
	} else if milli {
		prec = dpb.DateTime_MILLISECOND
	}
	if strings.IndexByte(s, 'T') >= 0 {
		if t, err := time.Parse(layoutSeconds, s); err == nil {
			return &dpb.DateTime{ValueUs: timestampUsec(t), Timezone: refExtractTimezone(t), Precision: prec}, true
		} else if t, err := time.Parse(layoutSecondsUTC, s); err == nil {
			return &dpb.DateTime{ValueUs: timestampUsec(t), Timezone: "Z", Precision: prec}, true
		}
		return nil, false
	}
	layout, dprec := dateLayout(s)
	if t, err := time.ParseInLocation(layout, s, l); err == nil {
		return &dpb.DateTime{ValueUs: timestampUsec(t), Timezone: l.String(), Precision: refDateTimePrecision[dprec]}, true
	}
	return nil, false
}

func refParseFastInstant(s string) (*dpb.Instant, bool) {
	if !refInstantRE.MatchString(s) {
		return nil, false
	}
	prec := dpb.Instant_SECOND
	if micro, milli := refSecondsPrecision(s); micro {
		prec = dpb.Instant_MICROSECOND
	} else if milli {
		prec = dpb.Instant_MILLISECOND
	}
	if t, err := time.Parse(layoutSecondsUTC, s); err == nil {
		return &dpb.Instant{ValueUs: timestampUsec(t), Timezone: "Z", Precision: prec}, true
	} else if t, err := time.Parse(layoutSeconds, s); err == nil {
		return &dpb.Instant{ValueUs: timestampUsec(t), Timezone: refExtractTimezone(t), Precision: prec}, true
	}
	return nil, false
}

// dateCases are strings around the date-time grammar's edges.
var dateCases = []string{
	"", "2018", "-2018", "201", "20180", "2018-", "2018-00", "2018-01", "2018-1", "2018-12", "2018-13", "2018-09-",
	"2018-02-00", "2018-02-29", "2020-02-29", "2018-02-30", "2018-04-31", "2018-12-31", "2018-12-32", "2018-12-3",
	"2018-03-06T00:00:00-05:00", "2018-03-06T00:00:00Z", "2018-03-06T24:00:00Z", "2018-03-06T23:59:59Z",
	"2018-03-06T23:60:00Z", "2018-03-06T23:59:60Z", "2018-03-06T10:00:00", "2018-03-06T10:00Z",
	"2018-03-06T10:00:00.Z", "2018-03-06T10:00:00.1Z", "2018-03-06T10:00:00.123Z", "2018-03-06T10:00:00.1234Z",
	"2018-03-06T10:00:00.123456789+01:00", "2018-03-06T10:00:00+14:00", "2018-03-06T10:00:00+14:01",
	"2018-03-06T10:00:00-13:59", "2018-03-06T10:00:00+13:60", "2018-03-06T10:00:00+1:00", "2018-03-06T10:00:00+01:00Z",
	"2018-03-06T10:00:00ZZ", "2018-03-06T10:00:00z", "2018-03-06t10:00:00Z", "2018-03-06 10:00:00Z",
	"-2018-03-06T10:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999+14:00", "2018-03-06T10:00:00+05:30",
	"2018-03-06T10:00:00-00:00", "2018-03-06T10:00:00+00:00", "2018-03-06T10:00:00.000-03:45", "2018\n", "2018-03-06T10:00:00Z\n",
	"２０１８", "2018-03-06T10:00:00+14:00 ",
}

// checkDates compares fastdate.go with the regex reference on s, in the
// unmarshaller's time zone and in another one.
func checkDates(t *testing.T, s string) {
	t.Helper()
	for _, l := range []*time.Location{time.UTC, time.FixedZone("X", -5*3600-30*60)} {
		d, ok := parseFastDate(s, l)
		rd, rok := refParseFastDate(s, l)
		if ok != rok || cmp.Diff(rd, d, protocmp.Transform()) != "" {
			t.Fatalf("parseFastDate(%q, %v) = %v %v, reference %v %v", s, l, d, ok, rd, rok)
		}
		dt, ok := parseFastDateTime(s, l)
		rdt, rok := refParseFastDateTime(s, l)
		if ok != rok || cmp.Diff(rdt, dt, protocmp.Transform()) != "" {
			t.Fatalf("parseFastDateTime(%q, %v) = %v %v, reference %v %v", s, l, dt, ok, rdt, rok)
		}
	}
	in, ok := parseFastInstant(s)
	rin, rok := refParseFastInstant(s)
	if ok != rok || cmp.Diff(rin, in, protocmp.Transform()) != "" {
		t.Fatalf("parseFastInstant(%q) = %v %v, reference %v %v", s, in, ok, rin, rok)
	}
	ok, timed, _ := scanDateTime(s)
	if ok != refDateTimeRE.MatchString(s) || (ok && !timed) != refDateRE.MatchString(s) || (ok && timed) != refInstantRE.MatchString(s) {
		t.Fatalf("scanDateTime(%q) = %v %v; regexes: dateTime %v date %v instant %v", s, ok, timed,
			refDateTimeRE.MatchString(s), refDateRE.MatchString(s), refInstantRE.MatchString(s))
	}
}

func TestFastDatesMatchRegexes(t *testing.T) {
	matched := 0
	for _, s := range dateCases {
		checkDates(t, s)
		if refDateTimeRE.MatchString(s) {
			matched++
		}
	}
	// The cases must reach both sides of the grammar.
	if matched < 20 || matched == len(dateCases) {
		t.Fatalf("%d of %d cases match the dateTime regex", matched, len(dateCases))
	}
}

// FuzzFastDatesMatchRegexes: on any string, the dates, date-times and
// instants read are those of the regex reference.
func FuzzFastDatesMatchRegexes(f *testing.F) {
	for _, s := range dateCases {
		f.Add(s)
	}
	f.Fuzz(checkDates)
}

// TestExtractTimezoneMatchesSprintf: every offset gives the reference's
// name (whole hours, minutes, seconds dropped, and the offsets Go allows
// beyond FHIR's ±14:00).
func TestExtractTimezoneMatchesSprintf(t *testing.T) {
	for off := -100 * 3600; off <= 100*3600; off += 59 {
		tm := time.Date(2020, 1, 1, 0, 0, 0, 0, time.FixedZone("", off))
		if got, want := extractTimezone(tm), refExtractTimezone(tm); got != want {
			t.Fatalf("offset %d: %q, want %q", off, got, want)
		}
	}
	for h := -14; h <= 14; h++ {
		tm := time.Date(2020, 1, 1, 0, 0, 0, 0, time.FixedZone("", h*3600))
		if got, want := extractTimezone(tm), refExtractTimezone(tm); got != want {
			t.Fatalf("offset %dh: %q, want %q", h, got, want)
		}
	}
	tm := time.Date(2020, 1, 1, 0, 0, 0, 0, time.FixedZone("", 400*3600+61))
	if got, want := extractTimezone(tm), refExtractTimezone(tm); got != want {
		t.Fatalf("offset 400h: %q, want %q", got, want)
	}
}
