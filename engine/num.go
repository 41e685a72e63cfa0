package engine

import (
	"math"
	"strconv"
	"time"
)

// Num is a decimal quantity whose unit is stated where it is used
// (BRL, shares, fraction...). NaN means missing: the API answers null,
// never 0. The zero value is a real 0.
type Num float64

// Null is the missing Num.
var Null = Num(math.NaN())

// Valid reports whether n holds a value (is not NaN or infinite).
func (n Num) Valid() bool {
	f := float64(n)
	return !math.IsNaN(f) && !math.IsInf(f, 0)
}

// AppendNum appends n to dst as a JSON number, or null when n is not Valid.
// It is the one rule shared by every encoder of the project.
func AppendNum(dst []byte, n Num) []byte {
	if !n.Valid() {
		return append(dst, "null"...)
	}
	return strconv.AppendFloat(dst, float64(n), 'f', -1, 64)
}

// MarshalJSON encodes n as a JSON number or null.
func (n Num) MarshalJSON() ([]byte, error) { return AppendNum(nil, n), nil }

// UnmarshalJSON decodes a JSON number or null (null becomes Null).
func (n *Num) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		*n = Null
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return err
	}
	*n = Num(f)
	return nil
}

// Div returns a/b, or Null when either is missing or b is zero.
func Div(a, b Num) Num {
	if !a.Valid() || !b.Valid() || b == 0 {
		return Null
	}
	return a / b
}

// Date is a calendar day as days since 1970-01-01 (UTC). NoDate means absent.
type Date int32

// NoDate is the absent Date; the API answers null.
const NoDate Date = math.MinInt32

// DateOf returns the Date of t's calendar day in UTC.
func DateOf(t time.Time) Date {
	y, m, d := t.UTC().Date()
	return MakeDate(y, m, d)
}

// MakeDate returns the Date of year y, month m, day d.
func MakeDate(y int, m time.Month, d int) Date {
	return Date(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// ParseDate parses YYYY-MM-DD.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return NoDate, err
	}
	return DateOf(t), nil
}

// Valid reports whether d is not NoDate.
func (d Date) Valid() bool { return d != NoDate }

// Time returns midnight UTC of d.
func (d Date) Time() time.Time { return time.Unix(int64(d)*86400, 0).UTC() }

// String returns YYYY-MM-DD, or "" for NoDate.
func (d Date) String() string {
	if !d.Valid() {
		return ""
	}
	return string(d.AppendFormat(nil))
}

// AppendFormat appends d as YYYY-MM-DD (nothing for NoDate).
func (d Date) AppendFormat(dst []byte) []byte {
	if !d.Valid() {
		return dst
	}
	y, m, dd := d.Time().Date()
	dst = appendPad(dst, y, 4)
	dst = append(dst, '-')
	dst = appendPad(dst, int(m), 2)
	dst = append(dst, '-')
	return appendPad(dst, dd, 2)
}

// AppendISO appends d as an ISO 8601 timestamp at midnight UTC
// (2024-03-31T00:00:00Z), the API's form for dates that are not YYYY-MM-DD.
func (d Date) AppendISO(dst []byte) []byte {
	dst = d.AppendFormat(dst)
	return append(dst, "T00:00:00Z"...)
}

// MarshalJSON encodes d as "YYYY-MM-DD" or null.
func (d Date) MarshalJSON() ([]byte, error) {
	if !d.Valid() {
		return []byte("null"), nil
	}
	b := append([]byte{'"'}, d.AppendFormat(nil)...)
	return append(b, '"'), nil
}

// UnmarshalJSON decodes "YYYY-MM-DD", "" or null (the last two become NoDate).
func (d *Date) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" || s == `""` {
		*d = NoDate
		return nil
	}
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return &time.ParseError{Layout: time.DateOnly, Value: s, Message: ": want a quoted YYYY-MM-DD"}
	}
	v, err := ParseDate(s[1 : len(s)-1])
	if err != nil {
		return err
	}
	*d = v
	return nil
}

func appendPad(dst []byte, v, width int) []byte {
	var buf [8]byte
	b := strconv.AppendInt(buf[:0], int64(v), 10)
	for i := len(b); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, b...)
}
