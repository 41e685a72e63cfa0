package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/bundle"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// TestImportSessionLog: pregao import --session-log takes the 1-minute
// bars of the session logs up to the as-of day into the bundle (tickers
// the import has no security of, and later sessions, left out and said).
func TestImportSessionLog(t *testing.T) {
	dir := t.TempDir()
	day := engine.MakeDate(2022, 2, 4)
	write := func(d engine.Date, bars ...engine.LiveBar) {
		l, _, err := live.OpenLog(filepath.Join(dir, live.LogName(d)), d, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Append(&live.Record{Seq: 1, Bars: bars}); err != nil {
			t.Fatal(err)
		}
		l.Close()
	}
	m := int64(day)*86400 + 13*3600
	bar := func(tk string, tm int64) engine.LiveBar {
		return engine.LiveBar{Ticker: tk, Time: tm, Open: 30, High: 31, Low: 29, Close: 30.5, Volume: 3050, Quantity: 100, Trades: 2}
	}
	write(day, bar("PETR4", m), bar("PETR4", m+60), bar("ZZZZ9", m))
	write(day+3, bar("PETR4", m+3*86400))
	out := filepath.Join(t.TempDir(), "bundle")
	var so, se bytes.Buffer
	err := runImport(context.Background(), []string{"--out", out, "--session-log", dir,
		"--cotahist", "../../testdata/real/b3-cotahist/gbvbahia01__Spring-Batch-Cotahist/COTAHIST_D04022022.TXT.zip"}, &so, &se)
	if err != nil {
		t.Fatalf("%v\n%s", err, se.String())
	}
	if !strings.Contains(so.String(), "session logs: 2 1-minute bars of 1 sessions [2022-02-04]; sessions after the as-of day left out [2022-02-07]; 1 bars of tickers without a security left out") {
		t.Errorf("summary:\n%s", so.String())
	}
	u, err := bundle.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Intraday) != 1 || u.Intraday[0].Ticker != "PETR4" || !slices.Equal(u.Intraday[0].Times, []int64{m, m + 60}) || u.Intraday[0].Close[1] != 30.5 {
		t.Errorf("intraday %+v", u.Intraday)
	}
	if _, err := snapshot.BuildFromBundle(out, filepath.Join(t.TempDir(), "x.snap"), snapshot.WriteOptions{}); err != nil {
		t.Errorf("the bundle does not build: %v", err)
	}
}

// TestUpdateSessionLog: pregao update --session-log DIR (serve's
// --live-dir) builds the snapshot with the session logs' 1-minute bars
// as intraday history: the server's rolling window of real minutes.
func TestUpdateSessionLog(t *testing.T) {
	work, logs := t.TempDir(), t.TempDir()
	src := "../../testdata/real/b3-cotahist/gbvbahia01__Spring-Batch-Cotahist/COTAHIST_D04022022.TXT.zip"
	official := filepath.Join(work, "official", "InstDados", "SerHist")
	if err := os.MkdirAll(official, 0o755); err != nil {
		t.Fatal(err)
	}
	replaceFile(t, src, filepath.Join(official, "COTAHIST_D04022022.ZIP"))
	day := engine.MakeDate(2022, 2, 4)
	l, _, err := live.OpenLog(filepath.Join(logs, live.LogName(day)), day, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := int64(day)*86400 + 13*3600
	for i, c := range []engine.Num{30, 30.5, 31} {
		b := engine.LiveBar{Ticker: "PETR4", Time: m + int64(i)*60, Open: c, High: c, Low: c, Close: c, Volume: c * 100, Quantity: 100, Trades: 1}
		if err := l.Append(&live.Record{Seq: uint64(i + 1), Bars: []engine.LiveBar{b}}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	out := filepath.Join(work, "pregao.snap")
	var so, se bytes.Buffer
	if err := runUpdate(context.Background(), []string{"--no-fetch", "--dir", filepath.Join(work, "official"), "--out", out, "--session-log", logs}, &so, &se); err != nil {
		t.Fatalf("%v\n%s\n%s", err, so.String(), se.String())
	}
	if !strings.Contains(so.String(), "session logs: 3 1-minute bars of 1 sessions [2022-02-04]") {
		t.Errorf("summary:\n%s", so.String())
	}
	ds, _, err := snapshot.Load(out, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, ok := ds.Asset("PETR4")
	if !ok || !slices.Equal(a.Intraday.Times, []int64{m, m + 60, m + 120}) || a.Intraday.Close[2] != 31 {
		t.Errorf("PETR4's minutes: %+v", a.Intraday)
	}
}
