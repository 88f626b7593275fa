package fhir

import (
	"fmt"
	"math"
	"time"

	dpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/datatypes_go_proto"
)

// Dates and times of the fast path, read as google/fhir v0.7.4's
// jsonpbhelper reads them. Its regexes (date, dateTime, instant, and the
// two that decide the precision of seconds) are matched by scanDateTime
// in one pass, and the layout that can parse a string is chosen from it
// instead of trying one after the other. The regex versions are kept in
// fastdate_ref_test.go; FuzzFastDatesMatchRegexes checks both agree on
// any string.

// Layouts of google/fhir v0.7.4 (jsonpbhelper).
const (
	layoutYear       = "2006"
	layoutMonth      = "2006-01"
	layoutDay        = "2006-01-02"
	layoutSeconds    = "2006-01-02T15:04:05-07:00"
	layoutSecondsUTC = "2006-01-02T15:04:05Z"
)

// scanDateTime matches s against google/fhir's dateTime regex
//
//	^-?[0-9]{4}(-(0[1-9]|1[0-2])(-(0[0-9]|[1-2][0-9]|3[0-1])(T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|(\+|-)((0[0-9]|1[0-3]):[0-5][0-9]|14:00)))?)?)?$
//
// timed says s has the time part (the date regex is the form without it,
// the instant regex the form with it), frac is the number of digits of
// the fraction of a second.
func scanDateTime(s string) (ok, timed bool, frac int) {
	i := 0
	if len(s) > 0 && s[0] == '-' {
		i++
	}
	if len(s) < i+4 || !isDigit(s[i]) || !isDigit(s[i+1]) || !isDigit(s[i+2]) || !isDigit(s[i+3]) {
		return false, false, 0
	}
	i += 4
	if i == len(s) {
		return true, false, 0
	}
	// -(0[1-9]|1[0-2])
	if len(s) < i+3 || s[i] != '-' || !(s[i+1] == '0' && '1' <= s[i+2] && s[i+2] <= '9' || s[i+1] == '1' && '0' <= s[i+2] && s[i+2] <= '2') {
		return false, false, 0
	}
	i += 3
	if i == len(s) {
		return true, false, 0
	}
	// -(0[0-9]|[1-2][0-9]|3[0-1])
	if len(s) < i+3 || s[i] != '-' || !('0' <= s[i+1] && s[i+1] <= '2' && isDigit(s[i+2]) || s[i+1] == '3' && (s[i+2] == '0' || s[i+2] == '1')) {
		return false, false, 0
	}
	i += 3
	if i == len(s) {
		return true, false, 0
	}
	// T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]
	if len(s) < i+9 || s[i] != 'T' || !((s[i+1] == '0' || s[i+1] == '1') && isDigit(s[i+2]) || s[i+1] == '2' && '0' <= s[i+2] && s[i+2] <= '3') ||
		s[i+3] != ':' || !sexagesimal(s[i+4], s[i+5]) || s[i+6] != ':' || !sexagesimal(s[i+7], s[i+8]) {
		return false, false, 0
	}
	i += 9
	// (\.[0-9]+)?
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		frac = j - i - 1
		if frac == 0 {
			return false, false, 0
		}
		i = j
	}
	// (Z|(\+|-)((0[0-9]|1[0-3]):[0-5][0-9]|14:00))$
	if i >= len(s) {
		return false, false, 0
	}
	switch s[i] {
	case 'Z':
		return i+1 == len(s), true, frac
	case '+', '-':
		if len(s) != i+6 || s[i+3] != ':' {
			return false, false, 0
		}
		h1, h2, m1, m2 := s[i+1], s[i+2], s[i+4], s[i+5]
		ok = (h1 == '0' && isDigit(h2) || h1 == '1' && '0' <= h2 && h2 <= '3') && sexagesimal(m1, m2) ||
			h1 == '1' && h2 == '4' && m1 == '0' && m2 == '0'
		return ok, true, frac
	}
	return false, false, 0
}

// sexagesimal matches [0-5][0-9].
func sexagesimal(a, b byte) bool {
	return '0' <= a && a <= '5' && isDigit(b)
}

// timestampUsec is jsonpbhelper.GetTimestampUsec.
func timestampUsec(t time.Time) int64 {
	s := t.Unix()
	if s < math.MaxInt64/int64(time.Second) && s > math.MinInt64/int64(time.Second) {
		return t.Unix()*1e6 + int64(t.Nanosecond()/1000)
	}
	return s * int64(time.Second/time.Microsecond)
}

// wholeHourZones are extractTimezone's names of the offsets of a whole
// number of hours up to 14 (those a FHIR date-time can give), made once.
var wholeHourZones = func() (z [2][15]string) {
	for h := range 15 {
		z[0][h] = fmt.Sprintf("+%02d:00", h)
		z[1][h] = fmt.Sprintf("-%02d:00", h)
	}
	return z
}()

// extractTimezone is jsonpbhelper.ExtractTimezone: the zone offset of t
// as fmt.Sprintf("%s%02d:%02d", sign, hours, minutes) writes it.
func extractTimezone(t time.Time) string {
	_, offset := t.Zone()
	sign, neg := byte('+'), 0
	if offset < 0 {
		sign, neg = '-', 1
		offset = -offset
	}
	h, m := offset/3600, offset%3600/60
	switch {
	case m == 0 && h < len(wholeHourZones[0]):
		return wholeHourZones[neg][h]
	case h < 100:
		b := [6]byte{sign, '0' + byte(h/10), '0' + byte(h%10), ':', '0' + byte(m/10), '0' + byte(m%10)}
		return string(b[:])
	}
	return fmt.Sprintf("%c%02d:%02d", sign, h, m)
}

// dateLayout returns the one date layout (day, month or year) that can
// parse s, by length, and its Date precision.
func dateLayout(s string) (string, dpb.Date_Precision) {
	switch len(s) {
	case len(layoutDay):
		return layoutDay, dpb.Date_DAY
	case len(layoutMonth):
		return layoutMonth, dpb.Date_MONTH
	}
	return layoutYear, dpb.Date_YEAR
}

// dateTimePrecision maps a Date precision to the DateTime one.
func dateTimePrecision(p dpb.Date_Precision) dpb.DateTime_Precision {
	switch p {
	case dpb.Date_DAY:
		return dpb.DateTime_DAY
	case dpb.Date_MONTH:
		return dpb.DateTime_MONTH
	}
	return dpb.DateTime_YEAR
}

// parseFastDate is google/fhir's parseDateFromStr.
func parseFastDate(s string, l *time.Location) (*dpb.Date, bool) {
	if ok, timed, _ := scanDateTime(s); !ok || timed {
		return nil, false
	}
	// google/fhir tries day, month then year; these layouts only parse a
	// string of their own length, so the length picks the one that can.
	layout, prec := dateLayout(s)
	if t, err := time.ParseInLocation(layout, s, l); err == nil {
		return &dpb.Date{ValueUs: timestampUsec(t), Timezone: l.String(), Precision: prec}, true
	}
	return nil, false
}

// parseSeconds parses a date-time with seconds (scanDateTime matched it
// with its time part). google/fhir tries the layout with an offset, then
// the one with "Z" (or the other way round for an instant); the first
// can only parse a string ending in an offset, the second one ending in
// "Z", so the last byte picks the one that can. zone is the Timezone
// google/fhir records.
func parseSeconds(s string) (t time.Time, zone string, ok bool) {
	if s[len(s)-1] == 'Z' {
		t, err := time.Parse(layoutSecondsUTC, s)
		return t, "Z", err == nil
	}
	t, err := time.Parse(layoutSeconds, s)
	if err != nil {
		return t, "", false
	}
	return t, extractTimezone(t), true
}

// parseFastDateTime is google/fhir's parseDateTimeFromStr. The precision
// of seconds is google/fhir's: more than three digits of a fraction of a
// second are microseconds, one to three milliseconds.
func parseFastDateTime(s string, l *time.Location) (*dpb.DateTime, bool) {
	ok, timed, frac := scanDateTime(s)
	if !ok {
		return nil, false
	}
	if timed {
		prec := dpb.DateTime_SECOND
		if frac > 3 {
			prec = dpb.DateTime_MICROSECOND
		} else if frac > 0 {
			prec = dpb.DateTime_MILLISECOND
		}
		t, zone, ok := parseSeconds(s)
		if !ok {
			return nil, false
		}
		return &dpb.DateTime{ValueUs: timestampUsec(t), Timezone: zone, Precision: prec}, true
	}
	layout, dprec := dateLayout(s)
	if t, err := time.ParseInLocation(layout, s, l); err == nil {
		return &dpb.DateTime{ValueUs: timestampUsec(t), Timezone: l.String(), Precision: dateTimePrecision(dprec)}, true
	}
	return nil, false
}

// parseFastInstant is google/fhir's parseInstant.
func parseFastInstant(s string) (*dpb.Instant, bool) {
	ok, timed, frac := scanDateTime(s)
	if !ok || !timed {
		return nil, false
	}
	prec := dpb.Instant_SECOND
	if frac > 3 {
		prec = dpb.Instant_MICROSECOND
	} else if frac > 0 {
		prec = dpb.Instant_MILLISECOND
	}
	t, zone, ok := parseSeconds(s)
	if !ok {
		return nil, false
	}
	return &dpb.Instant{ValueUs: timestampUsec(t), Timezone: zone, Precision: prec}, true
}
