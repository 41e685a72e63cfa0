package httpapi

import (
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pregao/pregao/engine"
)

// appendNum appends n as a JSON number, or null when n is missing (the
// rule of engine.AppendNum). Values that are whole hundredths (prices,
// volumes, counts) take a fast path that writes the same decimal digits as
// strconv's shortest form; the rest use engine.AppendNum. Both decode to n.
func appendNum(dst []byte, n engine.Num) []byte {
	if c, ok := engine.Cents(n); ok {
		if c < 0 {
			dst = append(dst, '-')
			c = -c
		}
		dst = strconv.AppendInt(dst, c/100, 10)
		if f := c % 100; f != 0 {
			dst = append(dst, '.', byte('0'+f/10))
			if f%10 != 0 {
				dst = append(dst, byte('0'+f%10))
			}
		}
		return dst
	}
	return engine.AppendNum(dst, n)
}

// appendInt appends v as a JSON number.
func appendInt(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }

// appendBool appends v as JSON true or false.
func appendBool(dst []byte, v bool) []byte { return strconv.AppendBool(dst, v) }

// appendDateISO appends d as a quoted ISO 8601 timestamp at midnight UTC, or
// null when d is absent.
func appendDateISO(dst []byte, d engine.Date) []byte {
	if !d.Valid() {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = d.AppendISO(dst)
	return append(dst, '"')
}

// appendDate appends d as a quoted YYYY-MM-DD, or null when d is absent.
func appendDate(dst []byte, d engine.Date) []byte {
	if !d.Valid() {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = d.AppendFormat(dst)
	return append(dst, '"')
}

// appendTime appends t as a quoted RFC 3339 timestamp in UTC (seconds
// precision, fractional seconds when present), or null when t is zero.
func appendTime(dst []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// safeASCII reports the ASCII bytes that appendString copies unescaped. It
// matches encoding/json with HTML escaping off: '<', '>' and '&' are
// written as they are, so messages read without a JSON decoder (the
// answers are application/json with nosniff, never HTML).
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString appends s to dst as a quoted JSON string and returns the
// result. Its output bytes are those of an encoding/json Encoder with
// SetEscapeHTML(false): control characters, quote and backslash are
// escaped (\b \f \n \r \t short forms), U+2028 and U+2029 are escaped as
// \u sequences, and invalid UTF-8 becomes \ufffd.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if safeASCII[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendStringOrNull appends s quoted, or null when s is empty.
func appendStringOrNull(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, "null"...)
	}
	return appendString(dst, s)
}

// appendURL appends u's address as appendString does: joined in place
// (a template's prefix, part and suffix) and escaped only when it holds
// a byte that needs it.
func appendURL(dst []byte, u engine.URL) []byte {
	if u.Template() == 0 {
		whole, _ := u.Part()
		return appendString(dst, whole)
	}
	dst = append(dst, '"')
	start := len(dst)
	dst = u.AppendTo(dst)
	for _, b := range dst[start:] {
		if b >= utf8.RuneSelf || !safeASCII[b] {
			s := string(dst[start:])
			return appendString(dst[:start-1], s)
		}
	}
	return append(dst, '"')
}

// appendURLOrNull is appendURL, with null for "".
func appendURLOrNull(dst []byte, u engine.URL) []byte {
	if u.IsZero() {
		return append(dst, "null"...)
	}
	return appendURL(dst, u)
}

// appendKey appends "key": (key must need no escaping).
func appendKey(dst []byte, key string) []byte {
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

// appendUnix appends unix seconds t as a quoted RFC 3339 UTC timestamp
// (2024-03-28T13:00:00Z).
func appendUnix(dst []byte, t int64) []byte {
	days := t / 86400
	sec := t - days*86400
	if sec < 0 {
		days--
		sec += 86400
	}
	if days < -700000 || days > 2900000 {
		// Outside years 0..9999: let time format it.
		dst = append(dst, '"')
		dst = time.Unix(t, 0).UTC().AppendFormat(dst, time.RFC3339)
		return append(dst, '"')
	}
	dst = append(dst, '"')
	y, mo, d := civil(days)
	dst = append(dst, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+mo/10), byte('0'+mo%10), '-', byte('0'+d/10), byte('0'+d%10))
	h, m, s := sec/3600, sec/60%60, sec%60
	return append(dst, 'T', byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10), ':', byte('0'+s/10), byte('0'+s%10), 'Z', '"')
}

// appendDay appends the midnight UTC of d as appendUnix does
// ("2024-03-27T00:00:00Z", quoted), from a table of the dates of years
// dayTableFrom to dayTableTo made on first use (dayTable): a series of
// thousands of sessions does not redo the calendar arithmetic per point.
func appendDay(dst []byte, d engine.Date) []byte {
	t := dayTable()
	if i := int(d) - int(dayTableFirst); i >= 0 && i < len(t)/10 {
		dst = append(dst, '"')
		dst = append(dst, t[i*10:i*10+10]...)
		return append(dst, `T00:00:00Z"`...)
	}
	return appendUnix(dst, int64(d)*86400)
}

// The years of dayTable: 1990 to 2099 (40,177 dates, 402 KB).
const (
	dayTableFrom = 1990
	dayTableTo   = 2100
)

var dayTableFirst = engine.MakeDate(dayTableFrom, time.January, 1)

// dayTable returns YYYY-MM-DD of every date from dayTableFrom to
// dayTableTo (excluded), 10 bytes each, made once; never modified.
var dayTable = sync.OnceValue(func() []byte {
	last := engine.MakeDate(dayTableTo, time.January, 1)
	b := make([]byte, 0, int(last-dayTableFirst)*10)
	for d := dayTableFirst; d < last; d++ {
		y, m, dd := civil(int64(d))
		b = append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
			byte('0'+m/10), byte('0'+m%10), '-', byte('0'+dd/10), byte('0'+dd%10))
	}
	return b
})

// civil returns the proleptic Gregorian year, month and day of days since
// 1970-01-01 (Hinnant's days_from_civil inverse); years 0..9999 here.
func civil(days int64) (y, m, d int64) {
	z := days + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}
