package bundle

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

// TestStreamingWriters writes a bundle file by file with Create and the
// streaming writers, as an importer does, and reads it back.
func TestStreamingWriters(t *testing.T) {
	u := mustRead(t, smallDir)
	dir := t.TempDir()
	put := func(base string, write func(w *bytes.Buffer) error) {
		t.Helper()
		wc, err := Create(dir, base, CompressZstd)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := wc.Write(buf.Bytes()); err != nil {
			t.Fatal(err)
		}
		if err := wc.Close(); err != nil {
			t.Fatal(err)
		}
		if err := wc.Close(); err == nil {
			t.Error("second Close succeeded")
		}
	}
	put(FileMeta, func(w *bytes.Buffer) error { j := NewJSONLWriter(w); j.Write(&u.Meta); return j.Flush() })
	put(FileCompanies, func(w *bytes.Buffer) error { return jsonlJob(u.Companies, noMeter{})(w) })
	put(FileSecurities, func(w *bytes.Buffer) error { return jsonlJob(u.Securities, noMeter{})(w) })
	put(FileSectors, func(w *bytes.Buffer) error { return jsonlJob(u.Sectors, noMeter{})(w) })
	put(FileDaily, func(w *bytes.Buffer) error {
		d := NewDailyWriter(w)
		for i := range u.Daily {
			if err := d.WriteSeries(&u.Daily[i]); err != nil {
				return err
			}
		}
		return d.Flush()
	})
	got := mustRead(t, dir)
	if len(got.Daily) != len(u.Daily) || diff(got.Daily, u.Daily) != "" || diff(got.Companies, u.Companies) != "" {
		t.Fatal("streamed bundle differs")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".zst") {
			t.Errorf("file %s", e.Name())
		}
	}
}

func TestCreateErrors(t *testing.T) {
	if _, err := Create(t.TempDir(), "company.jsonl", ""); err == nil {
		t.Error("unknown base accepted")
	}
	if _, err := Create(t.TempDir(), FileDaily, "brotli"); err == nil {
		t.Error("unknown compression accepted")
	}
	if _, err := Create(filepath.Join(t.TempDir(), "missing"), FileDaily, ""); err == nil {
		t.Error("missing directory accepted")
	}
}

func TestDailyWriterChecks(t *testing.T) {
	s := engine.Series{Ticker: "PETR4", Dates: []engine.Date{2, 1}, Open: make([]engine.Num, 2), High: make([]engine.Num, 2),
		Low: make([]engine.Num, 2), Close: make([]engine.Num, 2), Volume: make([]engine.Num, 2), Quantity: make([]int64, 2), Trades: make([]int64, 2)}
	var buf bytes.Buffer
	if err := NewDailyWriter(&buf).WriteSeries(&s); err == nil {
		t.Error("unordered dates accepted")
	}
	s.Dates = []engine.Date{1, 2}
	w := NewDailyWriter(&buf)
	if err := w.WriteSeries(&s); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteSeries(&s); err == nil {
		t.Error("ticker written twice")
	}
	s.Ticker, s.Trades = "VALE3", s.Trades[:1]
	if err := w.WriteSeries(&s); err == nil {
		t.Error("unequal columns accepted")
	}
	x := engine.Intraday{Ticker: "PETR4", Times: []int64{60, 0}, Open: make([]engine.Num, 2), High: make([]engine.Num, 2),
		Low: make([]engine.Num, 2), Close: make([]engine.Num, 2), Volume: make([]engine.Num, 2), Quantity: make([]int64, 2)}
	if err := NewIntradayWriter(&buf).WriteIntraday(&x); err == nil {
		t.Error("unordered times accepted")
	}
}

// A series held compact (a loaded snapshot's) is written as the same
// CSV rows as its wide columns.
func TestWriteIntradayCompact(t *testing.T) {
	wide := engine.Intraday{Ticker: "PETR4", Times: []int64{60, 120}, Open: []engine.Num{10.01, engine.Null}, High: []engine.Num{10.5, 11},
		Low: []engine.Num{9.99, 10}, Close: []engine.Num{10.2, 10.9}, Volume: []engine.Num{1234.56, 0}, Quantity: []int64{100, 4294967295}}
	c, ok := wide.Bars().Columns()
	if !ok {
		t.Fatal("not compact")
	}
	compact := engine.CompactIntradayOf("PETR4", c.Times, c.Open, c.High, c.Low, c.Close, c.Volume, c.Quantity)
	var a, b bytes.Buffer
	for _, x := range []struct {
		buf *bytes.Buffer
		s   *engine.Intraday
	}{{&a, &wide}, {&b, &compact}} {
		w := NewIntradayWriter(x.buf)
		if err := w.WriteIntraday(x.s); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if a.String() != b.String() || a.Len() == 0 {
		t.Errorf("compact series written as\n%s\nwant\n%s", b.String(), a.String())
	}
}

// TestNilAndEmptyArrays checks that nested arrays keep the difference
// between nil (written null) and empty (written []).
func TestNilAndEmptyArrays(t *testing.T) {
	u := mustRead(t, smallDir)
	u.CashActions[0].Installments = engine.InstallmentsOf(nil)
	u.CashActions[1].Installments = engine.InstallmentsOf([]engine.Installment{})
	u.Reports[0].Accounts = nil
	u.Reports[1].Accounts = []engine.Account{}
	u.Indexes[0].Members = nil
	u.InsiderReports[0].Movements = []engine.InsiderMove{}
	dir := t.TempDir()
	if err := Write(dir, u, WriteOptions{Compression: CompressNone}); err != nil {
		t.Fatal(err)
	}
	got := mustRead(t, dir)
	checks := []struct {
		name     string
		nil, len bool
	}{
		{"installments nil", got.CashActions[0].Installments.All() == nil, true},
		{"installments empty", got.CashActions[1].Installments.All() != nil, got.CashActions[1].Installments.Len() == 0},
		{"accounts nil", got.Reports[0].Accounts == nil, true},
		{"accounts empty", got.Reports[1].Accounts != nil, len(got.Reports[1].Accounts) == 0},
		{"members nil", got.Indexes[0].Members == nil, true},
		{"movements empty", got.InsiderReports[0].Movements != nil, true},
	}
	for _, c := range checks {
		if !c.nil || !c.len {
			t.Errorf("%s: not preserved", c.name)
		}
	}
}
