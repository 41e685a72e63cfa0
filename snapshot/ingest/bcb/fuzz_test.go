package bcb

import (
	"bytes"
	"math"
	"testing"
)

func FuzzSGS(f *testing.F) {
	f.Add(readReal(f, realIPCA20))
	f.Add(readReal(f, realRejected))
	f.Add([]byte("\"data\";\"valor\"\r\n\"01/06/1986\";\"1,27\"\r\n\"01/07/1986\";\"\"\r\n"))
	f.Add([]byte(`[{"data":"01/01/2024","valor":null},{"data":"02/01/2024","valor":1.5,"datafim":"x"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, lenient := range []bool{false, true} {
			sf, err := ReadSGS(bytes.NewReader(data), "f", lenient)
			if err != nil {
				continue
			}
			for _, p := range sf.Points {
				if !p.Date.Valid() || math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
					t.Fatalf("accepted %+v", p)
				}
			}
		}
	})
}

func FuzzClosing(f *testing.F) {
	f.Add(readReal(f, realClosing26))
	f.Add([]byte("01032017;220;A;USD;3,0970;3,0976;1,0000;1,0000\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, lenient := range []bool{false, true} {
			cf, err := ReadClosing(bytes.NewReader(data), "f", lenient)
			if err != nil {
				continue
			}
			if len(cf.Rates) == 0 {
				t.Fatal("no rate without an error")
			}
			for _, r := range cf.Rates {
				if !r.Date.Valid() || !ValidCurrency(r.Currency) || !(r.Sell > 0) || math.IsInf(r.Sell, 0) || bytes.IndexByte([]byte(r.Currency), 0) >= 0 {
					t.Fatalf("accepted %+v", r)
				}
			}
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"1,27", "31/07/2026", "1.234,5", "-0,31", "01032017", "4.50"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParseComma(s); err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			t.Fatalf("%q: %v", s, v)
		}
		if v, err := parseDot(s); err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			t.Fatalf("%q: %v", s, v)
		}
		if d, err := ParseDate(s); err == nil && !d.Valid() {
			t.Fatalf("%q: no date without an error", s)
		}
	})
}
