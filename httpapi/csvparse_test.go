package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// refParse is the reference parseOrdered: encoding/json's tokens, kept
// in order, printed as canon prints a jv.
func refParse(b []byte) (string, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var sb strings.Builder
	var parse func() error
	parse = func() error {
		t, err := d.Token()
		if err != nil {
			return err
		}
		switch v := t.(type) {
		case json.Delim:
			sb.WriteByte(byte(v))
			for d.More() {
				if v == '{' {
					kt, err := d.Token()
					if err != nil {
						return err
					}
					sb.WriteString(strconv.Quote(kt.(string)) + ":")
				}
				if err := parse(); err != nil {
					return err
				}
				sb.WriteByte(',')
			}
			if _, err := d.Token(); err != nil {
				return err
			}
			if v == '{' {
				sb.WriteByte('}')
			} else {
				sb.WriteByte(']')
			}
		case json.Number:
			sb.WriteString("n" + v.String())
		case string:
			sb.WriteString("s" + strconv.Quote(v))
		case bool:
			fmt.Fprintf(&sb, "b%v", v)
		case nil:
			sb.WriteString("null")
		}
		return nil
	}
	err := parse()
	return sb.String(), err
}

// canon prints v as refParse prints its tree.
func canon(sb *strings.Builder, v jv) {
	switch v.kind {
	case jObj, jArr:
		keys, vals := v.members()
		if v.kind == jObj {
			sb.WriteByte('{')
		} else {
			sb.WriteByte('[')
		}
		for i, c := range vals {
			if v.kind == jObj {
				sb.WriteString(strconv.Quote(keys[i]) + ":")
			}
			canon(sb, c)
			sb.WriteByte(',')
		}
		if v.kind == jObj {
			sb.WriteByte('}')
		} else {
			sb.WriteByte(']')
		}
	case jNum:
		sb.WriteString("n" + v.s)
	case jStr:
		sb.WriteString("s" + strconv.Quote(v.s))
	case jBool:
		sb.WriteString("b" + v.s)
	case jNull:
		sb.WriteString("null")
	}
}

// TestParseOrderedSameAsDecoder: parseOrdered reads well-formed JSON as
// encoding/json's tokens do (keys in order, numbers as written, strings
// unescaped and made valid UTF-8 the same way), and refuses what is not
// JSON.
func TestParseOrderedSameAsDecoder(t *testing.T) {
	good := []string{
		`{"b":1,"a":[1,-0.5,2e-3,1E+9,0],"c":{"d":null,"e":true,"f":false}}`,
		` [ {"x" : "y" } , [ ] , { } , "" ] `,
		`"plain"`, `-12.50`, `null`, `true`,
		`{"esc":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00"}`,
		`{"lone":"\ud800x","bad":"` + "\xff\xfe" + `","mixed":"ação"}`,
		`{"dup":1,"dup":2}`,
		`[[[[[[[[[[1]]]]]]]]]]`,
		`{"k":"=HYPERLINK(\"x\")","n":-1}`,
	}
	for _, in := range good {
		want, err := refParse([]byte(in))
		if err != nil {
			t.Fatalf("reference refuses %q: %v", in, err)
		}
		v, err := parseOrdered([]byte(in))
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		var sb strings.Builder
		canon(&sb, v)
		if sb.String() != want {
			t.Errorf("%q:\n got %s\nwant %s", in, sb.String(), want)
		}
	}
	for _, in := range []string{``, ` `, `{`, `[1,]`, `{"a" 1}`, `{"a":}`, `{1:2}`, `[01]`, `-`, `1.`, `.5`, `1e`, `tru`, `"abc`, `"a\"`, `"\x"`, "\"a\x01b\"", `[1 2]`, `{"a":1,}`, strings.Repeat("[", jsonMaxDepth+1) + strings.Repeat("]", jsonMaxDepth+1)} {
		if _, err := parseOrdered([]byte(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

// FuzzParseOrdered: on any valid JSON, parseOrdered gives what the
// reference gives; on anything else it returns (an error or a value)
// without panicking.
func FuzzParseOrdered(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",null,{"b":true}]}`, `"\u00e9\ud83d\ude00"`, `[-0.0e+1]`, `{"a":"` + "\xff" + `"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := parseOrdered(b)
		if !json.Valid(b) {
			return
		}
		want, rerr := refParse(b)
		if rerr != nil {
			return // deeper than the reference follows
		}
		if err != nil {
			t.Fatalf("%q: %v; the reference reads it", b, err)
		}
		var sb strings.Builder
		canon(&sb, v)
		if sb.String() != want {
			t.Fatalf("%q:\n got %s\nwant %s", b, sb.String(), want)
		}
	})
}

// cashJSON returns an answer of n cash actions as the cash route writes
// them (its fields and a source object), about 570 bytes each.
func cashJSON(n int) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"%08d-cash","company_id":"C%04d","ticker":"TICK%d","stock_type":"ON","isin":"BRTICKACNOR%d","label":"DIVIDENDO","approved_date":"2024-03-%02d","prior_ex_date":"2024-04-%02d","payment_date":"2024-05-%02d","value":%d.%04d,"rate":null,"related_to":"1o Trimestre/2024","remarks":"Pagamento de dividendos \u00e0 conta do exerc\u00edcio","version":1,"published_at":"2024-03-20T18:00:00Z","source":{"kind":"b3","visualization_url":"https://example.com/docs/%d"}}`,
			i, i%900, i%1200, i%10, i%28+1, i%28+1, i%28+1, i%3, i%10000, i)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// BenchmarkToCSVCash: the CSV form of 20,000 cash actions (11.5 MB of
// JSON): time and allocations of the whole conversion.
func BenchmarkToCSVCash(b *testing.B) {
	src := cashJSON(20000)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for range b.N {
		if _, err := toCSV(csvCash, src); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNumberSpan: the JSON number grammar, the same on a string and on
// bytes: where a number ends, or where and why it is not one.
func TestNumberSpan(t *testing.T) {
	for _, c := range []struct {
		in    string
		end   int
		fault numFault
	}{
		{"0", 1, numOK}, {"-0", 2, numOK}, {"12.50,", 5, numOK}, {"1e9]", 3, numOK},
		{"-1.5E-3}", 7, numOK}, {"2e+10", 5, numOK}, {"0.0", 3, numOK},
		{"", 0, numNoDigit}, {"-", 1, numNoDigit}, {"x", 0, numNoDigit}, {".5", 0, numNoDigit},
		{"01", 1, numLeadingZero}, {"-00", 2, numLeadingZero},
		{"1.", 2, numMalformed}, {"1.e5", 2, numMalformed}, {"1e", 2, numMalformed}, {"1e+", 3, numMalformed},
	} {
		se, sf := numberSpan(c.in, 0)
		be, bf := numberSpan([]byte(c.in), 0)
		if se != c.end || sf != c.fault || be != se || bf != sf {
			t.Errorf("%q: string %d %d, bytes %d %d; want %d %d", c.in, se, sf, be, bf, c.end, c.fault)
		}
	}
}
