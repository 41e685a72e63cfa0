package bundle

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/pregao/pregao/engine"
)

func readSeed(f *testing.F, name string) []byte {
	b, err := os.ReadFile(filepath.Join(smallDir, name))
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// FuzzDailyCSV feeds arbitrary bytes to the daily and intraday CSV
// parsers: no panic; parsing in small chunks accepts exactly what one
// chunk accepts, with the same result; and what parses cleanly writes back
// and re-parses to the same columns.
func FuzzDailyCSV(f *testing.F) {
	f.Add(readSeed(f, FileDaily), false, uint16(100))
	f.Add(readSeed(f, FileIntraday), true, uint16(60))
	f.Add([]byte(DailyHeader+"\nPETR4,2024-01-02,1e3,,-0,0.1,5.,007,\n"), false, uint16(1))
	f.Add([]byte(DailyHeader+"\r\nPETR4,2024-01-02,1,2,1,2,3,4,5\r\nPETR4,2024-01-01,1,2,1,2,3,4,5\r\n"), false, uint16(10))
	f.Add([]byte(IntradayHeader+"\nSELIC,2024-01-02T10:00:00-03:00,,,,10.65,,\n"), true, uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, intraday bool, chunk uint16) {
		c := &collector{}
		cs, err := parseColumnsChunked(bytes.NewReader(data), FileDaily, intraday, c, 1<<30)
		c2 := &collector{}
		cs2, err2 := parseColumnsChunked(bytes.NewReader(data), FileDaily, intraday, c2, int(chunk)+1)
		if (err == nil) != (err2 == nil) || (c.count() == 0) != (c2.count() == 0) {
			t.Fatalf("one chunk: %v %v; chunks of %d: %v %v", err, c.err(fileOrder), int(chunk)+1, err2, c2.err(fileOrder))
		}
		if err != nil || c.count() > 0 || cs == nil {
			return
		}
		if intraday {
			if d := diff(cs.intradayBars(false), cs2.intradayBars(false)); d != "" {
				t.Fatalf("chunked parse differs at %s", d)
			}
		} else if d := diff(cs.daily(false), cs2.daily(false)); d != "" {
			t.Fatalf("chunked parse differs at %s", d)
		} else {
			// Handed over as parsed: the same series, whole.
			var got []engine.Series
			c3 := &collector{}
			cs3, err := parseColumnsSink(bytes.NewReader(data), FileDaily, false, c3, int(chunk)+1, func(s *engine.Series) error {
				got = append(got, engine.Series{Ticker: s.Ticker, Dates: slices.Clone(s.Dates), Close: slices.Clone(s.Close),
					Open: slices.Clone(s.Open), High: slices.Clone(s.High), Low: slices.Clone(s.Low),
					Volume: slices.Clone(s.Volume), Quantity: slices.Clone(s.Quantity), Trades: slices.Clone(s.Trades)})
				return nil
			})
			if err != nil || c3.count() > 0 || len(cs3.handed) != len(got) {
				t.Fatalf("handed over: %v %v", err, c3.err(fileOrder))
			}
			if d := diff(got, cs.daily(false)); len(got) > 0 && d != "" {
				t.Fatalf("handed over series differ at %s", d)
			}
		}
		var buf bytes.Buffer
		if intraday {
			bars := cs.intradayBars(false)
			w := NewIntradayWriter(&buf)
			for i := range bars {
				if err := w.WriteIntraday(&bars[i]); err != nil {
					t.Fatal(err)
				}
			}
			w.Flush()
			c3 := &collector{}
			cs3, err := parseColumns(bytes.NewReader(buf.Bytes()), FileIntraday, true, c3)
			if err != nil || c3.count() > 0 {
				t.Fatalf("rewritten input fails: %v %v\n%s", err, c3.err(fileOrder), buf.Bytes())
			}
			if d := diff(bars, cs3.intradayBars(false)); d != "" {
				t.Fatalf("round trip differs at %s", d)
			}
			return
		}
		series := cs.daily(false)
		w := NewDailyWriter(&buf)
		for i := range series {
			if err := w.WriteSeries(&series[i]); err != nil {
				t.Fatal(err)
			}
		}
		w.Flush()
		c3 := &collector{}
		cs3, err := parseColumns(bytes.NewReader(buf.Bytes()), FileDaily, false, c3)
		if err != nil || c3.count() > 0 {
			t.Fatalf("rewritten input fails: %v %v\n%s", err, c3.err(fileOrder), buf.Bytes())
		}
		if d := diff(series, cs3.daily(false)); d != "" {
			t.Fatalf("round trip differs at %s", d)
		}
	})
}

// fuzzLine decodes line as one entity; a valid one must encode and decode
// back to itself.
func fuzzLine[In, Out any](t *testing.T, line []byte, def func(*In), conv func(*In, *lineCtx) Out) {
	var in In
	def(&in)
	if _, msg := decodeLine(line, &in); msg != "" {
		return
	}
	c := &collector{}
	l := &lineCtx{c: c, file: "x", line: 1}
	out := conv(&in, l)
	if l.bad {
		return
	}
	b, err := json.Marshal(&out)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var in2 In
	def(&in2)
	if f, msg := decodeLine(b, &in2); msg != "" {
		t.Fatalf("re-decode of %s: %s: %s", b, f, msg)
	}
	l2 := &lineCtx{c: c, file: "x", line: 1}
	out2 := conv(&in2, l2)
	if l2.bad {
		t.Fatalf("re-check of %s: %v", b, c.err(fileOrder))
	}
	if d := diff(out, out2); d != "" {
		t.Fatalf("round trip of %s differs at %s", b, d)
	}
}

// FuzzJSONL feeds arbitrary lines to the decoders of companies, reports,
// cash actions and share actions.
func FuzzJSONL(f *testing.F) {
	for i, name := range []string{FileCompanies, FileReports, FileCashActions, FileShareActions} {
		for _, l := range strings.Split(strings.TrimSpace(string(readSeed(f, name))), "\n") {
			f.Add(uint8(i), []byte(l))
		}
	}
	f.Add(uint8(0), []byte(`{"company_id":"1","name":"x","kind":"FII","free_float":-0,"founding_date":""}`))
	f.Add(uint8(1), []byte(`{"accounts":[{"code":"1","value":1e308},{}],"publish_date":"2024-01-01T00:00:00+05:00"}`))
	f.Fuzz(func(t *testing.T, kind uint8, line []byte) {
		switch kind % 4 {
		case 0:
			fuzzLine(t, line, defCompany, convCompany)
		case 1:
			fuzzLine(t, line, defReport, convReport)
		case 2:
			fuzzLine(t, line, defCashAction, convCashAction)
		case 3:
			fuzzLine(t, line, defShareAction, convShareAction)
		}
	})
}

// FuzzRead writes a tiny bundle from fuzz bytes and reads it: no panic,
// and a bundle that reads writes back to the same Universe.
func FuzzRead(f *testing.F) {
	f.Add(readSeed(f, FileCompanies), readSeed(f, FileSecurities), readSeed(f, FileDaily), readSeed(f, FileRenames))
	f.Add([]byte(`{"company_id":"1","name":"A","kind":"COMPANY"}`), []byte(`{"ticker":"AAAA3","company_id":"1","stock_type":"CS"}`),
		[]byte(DailyHeader+"\nAAAA3,2024-01-02,1,1,1,1,,,\n"), []byte{})
	meta := []byte(`{"as_of":"2024-03-28T21:00:00Z","description":"fuzz"}`)
	syncFiles = false
	f.Cleanup(func() { syncFiles = true })
	f.Fuzz(func(t *testing.T, companies, securities, daily, renames []byte) {
		dir := t.TempDir()
		for name, b := range map[string][]byte{FileMeta: meta, FileCompanies: companies, FileSecurities: securities, FileDaily: daily, FileRenames: renames} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		u, err := Read(dir)
		if err != nil {
			if u != nil {
				t.Fatal("Universe with an error")
			}
			return
		}
		out := t.TempDir()
		if err := Write(out, u, WriteOptions{Compression: CompressNone}); err != nil {
			t.Fatal(err)
		}
		u2, err := Read(out)
		if err != nil {
			t.Fatalf("written bundle fails: %v", err)
		}
		if d := diff(u, u2); d != "" {
			t.Fatalf("round trip differs at %s", d)
		}
	})
}

var _ = engine.Null
