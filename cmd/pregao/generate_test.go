package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/bundle"
	"github.com/pregao/pregao/snapshot/ingest/demo"
	"github.com/pregao/pregao/snapshot/ingest/negocios"
)

func TestRunGenerateFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no out", []string{"--seed", "1"}, "--out, --official or --snapshot is required"},
		{"out and official", []string{"--out", t.TempDir(), "--official", t.TempDir()}, "give one of"},
		{"out and snapshot", []string{"--out", t.TempDir(), "--snapshot", t.TempDir() + "/s.snap"}, "give one of"},
		{"bad compression", []string{"--out", t.TempDir(), "--compression", "lz4"}, "unknown --compression"},
		{"bad scale", []string{"--out", t.TempDir(), "--scale", "0"}, "--scale must be"},
		{"extra argument", []string{"--out", t.TempDir(), "extra"}, "unexpected argument"},
		{"bad flag", []string{"--nope"}, "flag provided but not defined"},
		{"hold back without out", []string{"--official", t.TempDir(), "--hold-back-session", t.TempDir()}, "--hold-back-session needs --out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := runGenerate(context.Background(), tc.args, &out, &errb)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestRunGenerateCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	if err := runGenerate(ctx, []string{"--out", t.TempDir()}, &out, &errb); err == nil {
		t.Fatal("want an error for a cancelled context")
	}
}

// TestGenerateHoldBackSession is the replay's oracle: the demo generated
// in full, and generated with --hold-back-session, whose trade file is
// aggregated (package negocios, as the replay and b3 feeds do). The
// held-back bundle plus the aggregated session is the full bundle, bar
// for bar and bit for bit: every ticker's daily bar of the last session
// (open, high, low, close, volume, quantity, trades) and every 1-minute
// bar of that day; nothing else differs but as_of.
func TestGenerateHoldBackSession(t *testing.T) {
	defer func(f func(int) demo.Size) { scaleSize = f }(scaleSize)
	scaleSize = func(int) demo.Size {
		return demo.Size{Companies: 40, SponsoredBDRs: 3, UnsponsoredBDRs: 3, FIIs: 15, ETFs: 5, IntradayTickers: 6, IntradaySessions: 3,
			ReportsFrom: 2025, FundReportsFrom: 2026, EventsFrom: 2026, HistoryFrom: 2024}
	}
	dir := t.TempDir()
	fullDir, baseDir, sessDir := filepath.Join(dir, "full"), filepath.Join(dir, "base"), filepath.Join(dir, "session")
	var out, errb bytes.Buffer
	if err := runGenerate(context.Background(), []string{"--seed", "3", "--out", fullDir}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := runGenerate(context.Background(), []string{"--seed", "3", "--out", baseDir, "--hold-back-session", sessDir}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "held back session 2026-11-19: ") {
		t.Errorf("summary %q", out.String())
	}
	full, err := bundle.Read(fullDir)
	if err != nil {
		t.Fatal(err)
	}
	base, err := bundle.Read(baseDir)
	if err != nil {
		t.Fatal(err)
	}
	day := engine.DateOf(full.Meta.AsOf)
	files, _ := os.ReadDir(sessDir)
	if len(files) != 1 || files[0].Name() != negocios.ZipName(day) {
		t.Fatalf("session folder holds %v, want %s", files, negocios.ZipName(day))
	}
	f, err := negocios.Open(filepath.Join(sessDir, files[0].Name()), negocios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	agg := negocios.NewAggregator(day, negocios.Config{})
	batch := make([]negocios.Trade, 0, 500)
	for f.Next() {
		if batch = append(batch, *f.Trade()); len(batch) == cap(batch) {
			agg.Apply(batch)
			batch = batch[:0]
		}
	}
	if err := f.Err(); err != nil {
		t.Fatal(err)
	}
	agg.Apply(batch)
	if st := agg.Stats(); st.Refused() != 0 || st.Cancels == 0 || st.Excluded == 0 {
		t.Errorf("aggregation stats %+v", st)
	}

	same := func(a, b engine.Num) bool { return math.Float64bits(float64(a)) == math.Float64bits(float64(b)) }
	baseDaily := map[string]engine.Series{}
	for _, s := range base.Daily {
		baseDaily[s.Ticker] = s
	}
	traded := 0
	for _, s := range full.Daily {
		b, n := baseDaily[s.Ticker], s.Len()
		d, ok := agg.Daily(s.Ticker)
		if !ok {
			if !sameJSON(t, b, s) {
				t.Errorf("%s: not traded on %s, but held back", s.Ticker, day)
			}
			if n > 0 && s.Dates[n-1] == day && s.Volume[n-1].Valid() {
				t.Errorf("%s: a daily bar with a volume on %s and no trade in the session", s.Ticker, day)
			}
			continue
		}
		traded++
		if n == 0 || s.Dates[n-1] != day || b.Len() != n-1 {
			t.Errorf("%s: %d rows held back of %d", s.Ticker, b.Len(), n)
			continue
		}
		x := d.Bar()
		j := n - 1
		if !same(x.Open, s.Open[j]) || !same(x.High, s.High[j]) || !same(x.Low, s.Low[j]) || !same(x.Close, s.Close[j]) ||
			!same(x.Volume, s.Volume[j]) || x.Quantity != engine.Num(s.Quantity[j]) || x.Trades != s.Trades[j] {
			t.Errorf("%s: aggregated %v/%v/%v/%v vol %v qty %v trades %d, full bundle %v/%v/%v/%v vol %v qty %d trades %d", s.Ticker,
				x.Open, x.High, x.Low, x.Close, x.Volume, x.Quantity, x.Trades, s.Open[j], s.High[j], s.Low[j], s.Close[j], s.Volume[j], s.Quantity[j], s.Trades[j])
		}
		s.Dates, s.Open, s.High, s.Low, s.Close = s.Dates[:j], s.Open[:j], s.High[:j], s.Low[:j], s.Close[:j]
		s.Volume, s.Quantity, s.Trades = s.Volume[:j], s.Quantity[:j], s.Trades[:j]
		if !sameJSON(t, b, s) {
			t.Errorf("%s: the held-back history differs before %s", s.Ticker, day)
		}
	}
	if traded == 0 || traded != len(agg.Tickers()) {
		t.Errorf("%d tickers traded in the bundle, %d in the session", traded, len(agg.Tickers()))
	}

	baseMin := map[string]engine.Intraday{}
	for _, x := range base.Intraday {
		baseMin[x.Ticker] = x
	}
	cut := int64(day) * 86400
	withMinutes := 0
	for _, x := range full.Intraday {
		k, _ := slices.BinarySearch(x.Times, cut)
		if b := baseMin[x.Ticker]; b.Len() != k || !slices.Equal(b.Times, x.Times[:k]) || !slices.Equal(b.Quantity, x.Quantity[:k]) {
			t.Errorf("%s: held-back minutes %d, want the %d before %s", x.Ticker, b.Len(), k, day)
		}
		bars := agg.Bars(nil, x.Ticker)
		if len(bars) != x.Len()-k {
			t.Errorf("%s: %d aggregated minutes, the full bundle has %d on %s", x.Ticker, len(bars), x.Len()-k, day)
			continue
		}
		withMinutes++
		for i, mb := range bars {
			e, j := mb.Bar(), k+i
			if e.Time != x.Times[j] || !same(e.Open, x.Open[j]) || !same(e.High, x.High[j]) || !same(e.Low, x.Low[j]) ||
				!same(e.Close, x.Close[j]) || !same(e.Volume, x.Volume[j]) || e.Quantity != engine.Num(x.Quantity[j]) {
				t.Errorf("%s minute %d: aggregated %+v, full bundle %d %v/%v/%v/%v vol %v qty %d", x.Ticker, i, e,
					x.Times[j], x.Open[j], x.High[j], x.Low[j], x.Close[j], x.Volume[j], x.Quantity[j])
				break
			}
		}
	}
	if withMinutes != traded {
		t.Errorf("%d tickers with 1-minute bars on %s, %d traded", withMinutes, day, traded)
	}

	prev := base.Meta.AsOf
	if engine.DateOf(prev) >= day || prev.Hour() != 21 || prev.Minute() != 30 {
		t.Errorf("held-back as_of %v", prev)
	}
	base.Meta.AsOf, base.Daily, base.Intraday = full.Meta.AsOf, full.Daily, full.Intraday
	if !sameJSON(t, base, full) {
		t.Error("the held-back bundle differs from the full one beyond the last session's quotes and as_of")
	}
}

// sameJSON reports whether a and b encode to the same JSON (engine.Num's
// NaN as null: reflect.DeepEqual holds NaN unequal to itself).
func sameJSON(tb testing.TB, a, b any) bool {
	tb.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		tb.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.Equal(x, y)
}

// pregao generate --out and pregao update --bundle refuse a folder that
// holds files of the user's, naming them, before any work, and leave it
// as it was.
func TestGenerateRefusesForeignFolder(t *testing.T) {
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "thesis.tex"), []byte("mine"), 0o644)
	var so, se bytes.Buffer
	err := runGenerate(context.Background(), []string{"--out", out}, &so, &se)
	if err == nil || !strings.Contains(err.Error(), `"thesis.tex"`) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("generate into a folder of the user's: %v", err)
	}
	err = runUpdate(context.Background(), []string{"--no-fetch", "--dir", t.TempDir(), "--out", filepath.Join(t.TempDir(), "x.snap"), "--bundle", out}, &so, &se)
	if err == nil || !strings.Contains(err.Error(), `--bundle: bundle: `+out) || !strings.Contains(err.Error(), `"thesis.tex"`) {
		t.Fatalf("update --bundle a folder of the user's: %v", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 1 {
		t.Errorf("the folder holds %d entries, want thesis.tex alone", len(ents))
	}
}

// generate --snapshot writes the snapshot that generate --out and build
// give, byte for byte, with a short summary (make run's demo).
func TestGenerateSnapshot(t *testing.T) {
	defer func(f func(int) demo.Size) { scaleSize = f }(scaleSize)
	scaleSize = func(int) demo.Size {
		return demo.Size{Companies: 6, SponsoredBDRs: 1, FIIs: 2, ETFs: 1, IntradayTickers: 2, IntradaySessions: 2,
			ReportsFrom: 2025, FundReportsFrom: 2026, EventsFrom: 2026, HistoryFrom: 2025}
	}
	dir := t.TempDir()
	var out, errb bytes.Buffer
	direct := filepath.Join(dir, "direct.snap")
	if err := runGenerate(context.Background(), []string{"--seed", "2", "--snapshot", direct}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "snapshot "+direct+" written in") || strings.Count(out.String(), "\n") > 8 {
		t.Errorf("summary:\n%s", out.String())
	}
	if err := runGenerate(context.Background(), []string{"--seed", "2", "--out", filepath.Join(dir, "bundle")}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	built := filepath.Join(dir, "built.snap")
	if err := runBuild(context.Background(), []string{"--from", filepath.Join(dir, "bundle"), "--out", built}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(direct)
	b, _ := os.ReadFile(built)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("generate --snapshot wrote %d bytes, generate and build %d: not the same file", len(a), len(b))
	}
}
