package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// intradayForms returns a small demo market whose 1-minute series are
// of every form: the first compact with a missing price and the largest
// volume cents hold exactly, the second wide (a price of 3 decimals),
// the third wide by its quantity (over 32 bits), the rest as generated
// (whole cents: compact).
func intradayForms(t *testing.T) *engine.Universe {
	t.Helper()
	u := demo.GenerateSize(3, demo.Size{Companies: 4, FIIs: 1, ETFs: 1, HistoryFrom: 2025, IntradayTickers: 4, IntradaySessions: 2})
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = d
	if len(u.Intraday) < 4 || u.Intraday[0].Len() < 3 || u.Intraday[1].Len() < 4 || u.Intraday[2].Len() < 2 {
		t.Fatalf("%d intraday series: the test needs 4 of 4 bars", len(u.Intraday))
	}
	a, b, c := &u.Intraday[0], &u.Intraday[1], &u.Intraday[2]
	a.Open[1], a.Volume[1], a.Volume[2] = engine.Null, engine.Null, 90071992547409.91
	b.Close[3] = 12.345
	c.Quantity[1] = math.MaxUint32 + 1
	return u
}

// sameMinutes reports the first bar where a and b differ (bit for bit),
// or "".
func sameMinutes(a, b *engine.IntradayBars) string {
	if a.Ticker != b.Ticker || a.Len() != b.Len() {
		return "ticker or length"
	}
	bits := func(v engine.Num) uint64 { return math.Float64bits(float64(v)) }
	for i := range a.Len() {
		if a.Times[i] != b.Times[i] || bits(a.Open(i)) != bits(b.Open(i)) || bits(a.High(i)) != bits(b.High(i)) ||
			bits(a.Low(i)) != bits(b.Low(i)) || bits(a.Close(i)) != bits(b.Close(i)) || bits(a.Volume(i)) != bits(b.Volume(i)) ||
			a.Quantity(i) != b.Quantity(i) {
			return fmt.Sprintf("%s: bar %d", a.Ticker, i)
		}
	}
	return ""
}

// 1-minute series go through a format 6 file compact (whole cents) or
// wide (anything else), flagged so in the index, and come back bit for
// bit: Decode gives the wide columns as written, Load the same bars as
// format 5, used in place in their form. A format 5 load keeps each
// series in the same form as it decodes.
func TestIntradayColumnsForms(t *testing.T) {
	u := intradayForms(t)
	sec, ix := appendIntradayColumns(nil, u.Intraday)
	wantWide := map[string]bool{u.Intraday[1].Ticker: true, u.Intraday[2].Ticker: true}
	rows, size := 0, int64(0)
	for i, c := range ix.Series {
		if c.Wide != wantWide[c.Ticker] {
			t.Errorf("%s: wide %v, want %v", c.Ticker, c.Wide, wantWide[c.Ticker])
		}
		rows += c.Rows
		size += intradayColBytes(c.Rows, c.Wide)
		if c.Rows > 0 && i > 0 && c.Off < ix.Series[i-1].Off {
			t.Fatalf("series out of place")
		}
	}
	if int64(len(sec)) < size || rows == 0 {
		t.Fatalf("section of %d bytes for %d bytes of series", len(sec), size)
	}

	v5 := mustWrite(t, u, WriteOptions{})
	v6 := mustWrite(t, u, WriteOptions{Version: 6})
	got, h := mustDecode(t, v6)
	if h.Layout != columnsLayout {
		t.Errorf("layout %d, want %d", h.Layout, columnsLayout)
	}
	if d := diff(u.Intraday, got.Intraday); d != "" {
		t.Errorf("Decode: intraday differs at %s", d)
	}
	ds5, _, err := loadBytes(t, v5)
	if err != nil {
		t.Fatal(err)
	}
	ds6, _, err := loadBytes(t, v6)
	if err != nil {
		t.Fatal(err)
	}
	compact := 0
	for i := range ds5.Assets() {
		a, b := &ds5.Assets()[i], &ds6.Assets()[i]
		if d := sameMinutes(a.Intraday, b.Intraday); d != "" {
			t.Fatalf("Load: %s", d)
		}
		if b.Intraday.Len() == 0 {
			continue
		}
		if b.Intraday.Compact() == wantWide[b.Ticker] || a.Intraday.Compact() == wantWide[b.Ticker] {
			t.Errorf("%s: compact %v, from format 5 %v", b.Ticker, b.Intraday.Compact(), a.Intraday.Compact())
		}
		if b.Intraday.Compact() {
			compact++
		}
		for _, adj := range []bool{false, true} {
			x, y := a.AppendIntraday(nil, 0, a.Intraday.Len(), adj), b.AppendIntraday(nil, 0, b.Intraday.Len(), adj)
			if d := diff(x, y); d != "" {
				t.Fatalf("%s adjusted %v: bars differ at %s", b.Ticker, adj, d)
			}
		}
		if x, y := a.QuoteAt(ds5.AsOf()), b.QuoteAt(ds6.AsOf()); diff(x, y) != "" {
			t.Fatalf("%s: quote differs at %s", b.Ticker, diff(x, y))
		}
	}
	if compact == 0 {
		t.Error("no compact series loaded: the test does not cover them")
	}
}

// A format 6 file of layout revision 2 (every 1-minute series wide, 56
// bytes a bar, flagged compact) still loads, with the same bars.
func TestIntradayLayout2Loads(t *testing.T) {
	u := intradayForms(t)
	v3 := mustWrite(t, u, WriteOptions{Version: 6})
	writeLayout = minLayout
	v2 := mustWrite(t, u, WriteOptions{Version: 6})
	sec, ix := appendIntradayColumns(nil, u.Intraday)
	writeLayout = columnsLayout
	rows := 0
	for _, c := range ix.Series {
		if c.Wide {
			t.Fatalf("%s flagged wide in a revision 2 section", c.Ticker)
		}
		rows += c.Rows
	}
	if want := 56 * rows; len(sec) != want {
		t.Errorf("revision 2 section of %d bytes, want %d (56 a bar)", len(sec), want)
	}
	got, h := mustDecode(t, v2)
	if h.Layout != 2 {
		t.Fatalf("layout %d", h.Layout)
	}
	if d := diff(u.Intraday, got.Intraday); d != "" {
		t.Errorf("Decode: intraday differs at %s", d)
	}
	// Every block verified at open (order and summaries included).
	path := filepath.Join(t.TempDir(), "r2.snap")
	if err := os.WriteFile(path, v2, 0o644); err != nil {
		t.Fatal(err)
	}
	ds2, _, err := Load(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds3, _, err := loadBytes(t, v3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ds3.Assets() {
		a, b := &ds3.Assets()[i], &ds2.Assets()[i]
		if d := sameMinutes(a.Intraday, b.Intraday); d != "" {
			t.Fatalf("Load: %s", d)
		}
		if b.Intraday.Len() > 0 && b.Intraday.Compact() {
			t.Errorf("%s: a revision 2 series loaded compact (decoded, not used in place)", b.Ticker)
		}
	}
	if len(v2) <= len(v3) {
		t.Errorf("revision 2 file of %d bytes, revision 3 %d: want it larger", len(v2), len(v3))
	}
}

// A revision 2 header over a revision 3 file whose index flags a series
// wide is a format error, not a misread.
func TestIntradayLayout2WideRefused(t *testing.T) {
	b := mustWrite(t, intradayForms(t), WriteOptions{Version: 6})
	hl, err := headerLen(b)
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Clone(b[prefixLen : hl-8])
	body[len(body)-1] = minLayout
	f := append(assembleHeader(columnsVersion, body), b[hl:]...)
	_, _, err = Decode(f)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "flagged wide in a layout revision 2 file") {
		t.Errorf("err %v, want ErrFormat naming the wide series", err)
	}
}

// checkSeries reads a compact 1-minute series' columns as they are (a
// loaded series written again), without expanding them, and refuses one
// whose columns are short.
func TestCheckSeriesCompactIntraday(t *testing.T) {
	times := []int64{60, 120, 180}
	px := []int32{100, 101, 102}
	u := &engine.Universe{Intraday: []engine.Intraday{
		engine.CompactIntradayOf("T", times, px, px, px, px, []int64{1, 2, 3}, []uint32{1, 2, 3}),
	}}
	if err := checkSeries(u); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(10, func() { checkSeries(u) }); n != 0 {
		t.Errorf("checkSeries made %v allocations: it expanded the compact series", n)
	}
	u.Intraday[0] = engine.CompactIntradayOf("T", times, px, px, px[:2], px, []int64{1, 2, 3}, []uint32{1, 2, 3})
	if err := checkSeries(u); err == nil {
		t.Error("a short compact column was accepted")
	}
}
