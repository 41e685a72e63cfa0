package httpapi

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

var stringCases = []string{
	"", "PETR4", "Petróleo Brasileiro S.A.", `quote " and \ backslash`,
	"tab\tnew\nline\rcr\bbs\fff", "\x00\x01\x1f\x7f", "<script>&amp;</script>",
	"line\u2028sep\u2029para", "bad\xffutf8\xc3", "\xed\xa0\x80surrogate", "emoji 😀 ok",
	"a/b", "São Paulo – SP", string([]byte{0xe2, 0x82}),
}

// jsonString is encoding/json's form of s with HTML escaping off.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range stringCases {
		want := jsonString(s)
		got := appendString(nil, s)
		if !bytes.Equal(got, want) {
			t.Errorf("appendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range stringCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := jsonString(s)
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendString(%q) = %s, want %s", s, got, want)
		}
	})
}

// numCases are floats whose JSON forms differ between strconv 'f' and
// encoding/json ('e' beyond 1e21 or below 1e-6) but decode identically.
var numCases = []float64{0, 1, -1, 0.1, 1e21, 1e-7, 123456789.123456, -2.5e-9, 1.7976931348623157e308,
	5e-324, 37.82, 0.0621, -0.0378, math.Copysign(0, -1), 1e20, 999999999999999999999}

func TestAppendNumDecodesLikeEncodingJSON(t *testing.T) {
	for _, f := range numCases {
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		got := appendNum(nil, engine.Num(f))
		var a, b any
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("appendNum(%v) = %s: %v", f, got, err)
		}
		json.Unmarshal(want, &b)
		if a != b || math.Signbit(a.(float64)) != math.Signbit(b.(float64)) {
			t.Errorf("appendNum(%v) = %s decodes to %v, encoding/json %s to %v", f, got, a, want, b)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := string(appendNum(nil, engine.Num(f))); got != "null" {
			t.Errorf("appendNum(%v) = %s, want null", f, got)
		}
	}
}

// record is a value encoded both by the hand-written encoder helpers and
// by encoding/json; both must decode to the same thing.
type record struct {
	Name  string     `json:"name"`
	Price *float64   `json:"price"`
	Date  *string    `json:"date"`
	At    *time.Time `json:"at"`
	Count int64      `json:"count"`
	OK    bool       `json:"ok"`
}

func appendRecord(dst []byte, name string, price engine.Num, d engine.Date, at time.Time, n int64, ok bool) []byte {
	dst = append(dst, `{"name":`...)
	dst = appendString(dst, name)
	dst = append(dst, `,"price":`...)
	dst = appendNum(dst, price)
	dst = append(dst, `,"date":`...)
	dst = appendDate(dst, d)
	dst = append(dst, `,"at":`...)
	dst = appendTime(dst, at)
	dst = append(dst, `,"count":`...)
	dst = appendInt(dst, n)
	dst = append(dst, `,"ok":`...)
	dst = appendBool(dst, ok)
	return append(dst, '}')
}

func TestEncodersDifferential(t *testing.T) {
	at := time.Date(2024, 3, 28, 21, 0, 0, 500, time.UTC)
	for i, s := range stringCases {
		f := numCases[i%len(numCases)]
		price := engine.Num(f)
		var pp *float64
		if i%3 != 0 {
			pp = &f
		} else {
			price = engine.Null
		}
		d := engine.MakeDate(2024, 3, i+1)
		ds := d.String()
		dp := &ds
		if i%4 == 0 {
			d, dp = engine.NoDate, nil
		}
		atp := &at
		atv := at
		if i%5 == 0 {
			atp, atv = nil, time.Time{}
		}
		want, err := json.Marshal(record{Name: s, Price: pp, Date: dp, At: atp, Count: int64(i) - 3, OK: i%2 == 0})
		if err != nil {
			t.Fatal(err)
		}
		got := appendRecord(nil, s, price, d, atv, int64(i)-3, i%2 == 0)
		var a, b any
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("case %d: %s: %v", i, got, err)
		}
		json.Unmarshal(want, &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

func TestAppendError(t *testing.T) {
	got := string(appendError(nil, 404, `Ticker "X" not found`))
	want := `{"error":{"status":404,"message":"Ticker \"X\" not found"}}`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestAppendStringNoAllocs(t *testing.T) {
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { buf = appendString(buf[:0], "Petróleo <Brasileiro> \"S.A.\"") }); n > 0 {
		t.Errorf("appendString allocates %v times", n)
	}
}

func TestAppendNumFastPath(t *testing.T) {
	for _, f := range append(numCases, 44.75, 36608713.6, 0.01, -0.05, 12.3, 100, -100.5, 1e12+0.01, 9999999999999.99, 0.29, 1.005, 2.675, 1e-2) {
		got := appendNum(nil, engine.Num(f))
		want := engine.AppendNum(nil, engine.Num(f))
		var a, b float64
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("%v: %s: %v", f, got, err)
		}
		json.Unmarshal(want, &b)
		if a != b || math.Signbit(a) != math.Signbit(b) {
			t.Errorf("appendNum(%v) = %s, engine.AppendNum %s", f, got, want)
		}
	}
}

func FuzzAppendNum(f *testing.F) {
	for _, v := range numCases {
		f.Add(v)
	}
	f.Add(44.75)
	f.Fuzz(func(t *testing.T, v float64) {
		got := appendNum(nil, engine.Num(v))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if string(got) != "null" {
				t.Fatalf("%v: %s", v, got)
			}
			return
		}
		var a float64
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("%v: %s: %v", v, got, err)
		}
		if a != v || math.Signbit(a) != math.Signbit(v) {
			t.Fatalf("appendNum(%v) = %s decodes to %v", v, got, a)
		}
	})
}

func TestAppendUnix(t *testing.T) {
	cases := []int64{0, 1711630800, 1711630859, -1, -86400, 253402300799, -62135596800, 1 << 40, -(1 << 40), 951782400, 951868800, 4107456000}
	for d := int64(-700000); d < 2900000; d += 997 {
		cases = append(cases, d*86400+d%86400)
	}
	for _, ts := range cases {
		want, _ := json.Marshal(time.Unix(ts, 0).UTC().Format(time.RFC3339))
		if got := appendUnix(nil, ts); string(got) != string(want) {
			t.Errorf("appendUnix(%d) = %s, want %s", ts, got, want)
		}
	}
}

// appendDay writes what appendUnix writes for a midnight, inside the
// table and outside it.
func TestAppendDay(t *testing.T) {
	for _, d := range []engine.Date{engine.MakeDate(1989, 12, 31), dayTableFirst, engine.MakeDate(2000, 2, 29), engine.MakeDate(2024, 3, 27),
		engine.MakeDate(dayTableTo-1, 12, 31), engine.MakeDate(dayTableTo, 1, 1), 0, -1} {
		if got, want := string(appendDay(nil, d)), string(appendUnix(nil, int64(d)*86400)); got != want {
			t.Errorf("%v: %s, want %s", d, got, want)
		}
	}
	for d := dayTableFirst - 10; d < engine.MakeDate(dayTableTo, 1, 10); d += 13 {
		if got, want := string(appendDay(nil, d)), string(appendUnix(nil, int64(d)*86400)); got != want {
			t.Fatalf("%v: %s, want %s", d, got, want)
		}
	}
}
