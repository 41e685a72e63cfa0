package live

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pregao/pregao/engine"
)

// TestAddIntraday: the session logs' last bar of each minute (removed
// minutes out, a torn tail left out) replace the universe's 1-minute bars
// of their day, ticker by ticker; tickers without a security and
// sessions after the as-of day are left out and counted.
func TestAddIntraday(t *testing.T) {
	dir := t.TempDir()
	write := func(d engine.Date, recs []Record, tail string) {
		b := []byte(header(d))
		for i := range recs {
			b = AppendRecord(b, &recs[i])
		}
		os.WriteFile(filepath.Join(dir, LogName(d)), append(b, tail...), 0o644)
	}
	bar := func(tk string, tm int64, c engine.Num) engine.LiveBar {
		return engine.LiveBar{Ticker: tk, Time: tm, Open: c, High: c, Low: c, Close: c, Volume: c * 10, Quantity: 10, Trades: 1}
	}
	write(sd, []Record{
		{Seq: 1, Bars: []engine.LiveBar{bar("PETR4", minute(13, 0), 10), bar("PETR4", minute(13, 1), 11), bar("ZZZZ3", minute(13, 0), 5)}},
		{Seq: 2, Bars: []engine.LiveBar{bar("PETR4", minute(13, 1), 12), {Ticker: "PETR4", Time: minute(13, 0), Removed: true}, bar("VALE3", minute(13, 2), 50)}},
	}, "00000000 {\"seq\":3")
	write(sd+1, []Record{{Seq: 1, Bars: []engine.LiveBar{bar("PETR4", minute(13, 0)+86400, 13)}}}, "")
	os.WriteFile(filepath.Join(dir, "b3-2026-11-19.json"), []byte("{}"), 0o644) // not a log: ignored
	prev := minute(13, 0) - 86400
	u := &engine.Universe{
		Securities: []engine.Security{{Ticker: "PETR4"}, {Ticker: "VALE3"}},
		Intraday: []engine.Intraday{{Ticker: "PETR4", Times: []int64{prev, minute(13, 5)}, Open: []engine.Num{1, 2}, High: []engine.Num{1, 2},
			Low: []engine.Num{1, 2}, Close: []engine.Num{1, 2}, Volume: []engine.Num{1, 2}, Quantity: []int64{1, 2}}},
	}
	rep, err := AddIntraday(u, []string{dir}, sd)
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.Intraday{
		{Ticker: "PETR4", Times: []int64{prev, minute(13, 1)}, Open: []engine.Num{1, 12}, High: []engine.Num{1, 12}, Low: []engine.Num{1, 12},
			Close: []engine.Num{1, 12}, Volume: []engine.Num{1, 120}, Quantity: []int64{1, 10}},
		{Ticker: "VALE3", Times: []int64{minute(13, 2)}, Open: []engine.Num{50}, High: []engine.Num{50}, Low: []engine.Num{50},
			Close: []engine.Num{50}, Volume: []engine.Num{500}, Quantity: []int64{10}},
	}
	if !reflect.DeepEqual(u.Intraday, want) {
		t.Errorf("intraday\n%+v\nwant\n%+v", u.Intraday, want)
	}
	if !reflect.DeepEqual(rep.Sessions, []engine.Date{sd}) || !reflect.DeepEqual(rep.Later, []engine.Date{sd + 1}) || rep.Bars != 2 || rep.Unknown != 1 || rep.Cut != 17 {
		t.Errorf("report %+v", rep)
	}
	files, _ := LogFiles([]string{dir})
	if len(files) != 2 || filepath.Base(files[0]) != "session-2026-11-19.log" {
		t.Errorf("log files %v", files)
	}
}

// A base series held compact (whole cents, as a snapshot load gives it)
// merges with the live session's bars exactly: a live price that is not
// whole cents makes the merged series wide, never rounded.
func TestAddIntradayCompactBase(t *testing.T) {
	dir := t.TempDir()
	b := []byte(header(sd))
	rec := Record{Seq: 1, Bars: []engine.LiveBar{{Ticker: "PETR4", Time: minute(13, 1), Open: 12.345, High: 12.5, Low: 12.3, Close: 12.4,
		Volume: 1234.567, Quantity: 100, Trades: 1}}}
	os.WriteFile(filepath.Join(dir, LogName(sd)), AppendRecord(b, &rec), 0o644)
	prev := minute(13, 0) - 86400
	base := engine.CompactIntradayOf("PETR4", []int64{prev}, []int32{1000}, []int32{1100}, []int32{900}, []int32{1050},
		[]int64{engine.NullVolumeCents}, []uint32{7})
	u := &engine.Universe{Securities: []engine.Security{{Ticker: "PETR4"}}, Intraday: []engine.Intraday{base}}
	if _, err := AddIntraday(u, []string{dir}, sd); err != nil {
		t.Fatal(err)
	}
	want := engine.Intraday{Ticker: "PETR4", Times: []int64{prev, minute(13, 1)}, Open: []engine.Num{10, 12.345}, High: []engine.Num{11, 12.5},
		Low: []engine.Num{9, 12.3}, Close: []engine.Num{10.5, 12.4}, Volume: []engine.Num{engine.Null, 1234.567}, Quantity: []int64{7, 100}}
	got := u.Intraday[0]
	if !reflect.DeepEqual(got.Times, want.Times) || !reflect.DeepEqual(got.Quantity, want.Quantity) {
		t.Fatalf("intraday %+v, want %+v", got, want)
	}
	bits := func(v engine.Num) uint64 { return math.Float64bits(float64(v)) }
	for i := range want.Times {
		for _, c := range [][2][]engine.Num{{got.Open, want.Open}, {got.High, want.High}, {got.Low, want.Low}, {got.Close, want.Close}, {got.Volume, want.Volume}} {
			if bits(c[0][i]) != bits(c[1][i]) {
				t.Fatalf("bar %d: %v, want %v", i, c[0][i], c[1][i])
			}
		}
	}
	if bars := got.Bars(); bars.Compact() || bits(bars.Open(1)) != bits(12.345) {
		t.Errorf("merged series compact %v, open %v: want it wide and exact", bars.Compact(), bars.Open(1))
	}
}
