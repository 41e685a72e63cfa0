package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/session/bus"
	"github.com/pregao/pregao/internal/natstest"
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
	if !ok || !slices.Equal(a.Intraday.Times, []int64{m, m + 60, m + 120}) || a.Intraday.Close(2) != 31 {
		t.Errorf("PETR4's minutes: %+v", a.Intraday)
	}
}

// TestImportStreamPosition: the snapshot's position in the live stream
// comes from the copy of the session log a stream feed keeps: one after
// the stream sequence of the last batch of the snapshot's last session,
// when that log carries stream sequences and is complete; otherwise none,
// and the summary says why.
func TestImportStreamPosition(t *testing.T) {
	src := "../../testdata/real/b3-cotahist/gbvbahia01__Spring-Batch-Cotahist/COTAHIST_D04022022.TXT.zip"
	day := engine.MakeDate(2022, 2, 4) // the file's session: the snapshot's last
	m := int64(day)*86400 + 13*3600
	// write writes session d's log in dir: batches 1 to 3, the last
	// complete when complete, at stream sequences 11 to 13 when stream.
	write := func(t *testing.T, dir string, d engine.Date, stream, complete bool) {
		l, _, err := live.OpenLog(filepath.Join(dir, live.LogName(d)), d, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		for i := uint64(1); i <= 3; i++ {
			tm := m + int64(d-day)*86400 + int64(i)*60
			r := &live.Record{Seq: i, Complete: complete && i == 3, Bars: []engine.LiveBar{{Ticker: "PETR4", Time: tm, Open: 30, High: 30, Low: 30, Close: 30, Volume: 3000, Quantity: 100, Trades: 1}}}
			if stream {
				r.Stream = 10 + i
			}
			if err := l.Append(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name             string
		session          engine.Date
		stream, complete bool
		want             engine.StreamPosition
		summary          string
	}{
		{"complete with stream sequences", day, true, true,
			engine.StreamPosition{Next: 14, Name: bus.StreamName, Session: day, Batch: 3},
			"stream position: PREGAO_LIVE from sequence 14 (after batch 3 of session 2022-02-04)\n"},
		{"not complete", day, true, false, engine.StreamPosition{},
			"stream position: none (the session log of 2022-02-04 is not complete (batch 3 is its last))"},
		{"no stream sequences", day, false, true, engine.StreamPosition{},
			"stream position: none (the session log of 2022-02-04 carries no stream sequences"},
		{"not the last session", day - 1, true, true, engine.StreamPosition{},
			"stream position: none (no session log of the last session 2022-02-04, the last log is of 2022-02-03)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			logs, out := t.TempDir(), filepath.Join(t.TempDir(), "bundle")
			write(t, logs, c.session, c.stream, c.complete)
			var so, se bytes.Buffer
			if err := runImport(context.Background(), []string{"--out", out, "--session-log", logs, "--cotahist", src}, &so, &se); err != nil {
				t.Fatalf("%v\n%s", err, se.String())
			}
			if !strings.Contains(so.String(), c.summary) {
				t.Errorf("summary lacks %q:\n%s", c.summary, so.String())
			}
			u, err := bundle.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			if u.Meta.Stream != c.want {
				t.Errorf("bundle position %+v, want %+v", u.Meta.Stream, c.want)
			}
		})
	}

	// pregao update: the snapshot records it; pregao inspect shows it.
	work, logs := t.TempDir(), t.TempDir()
	official := filepath.Join(work, "official", "InstDados", "SerHist")
	if err := os.MkdirAll(official, 0o755); err != nil {
		t.Fatal(err)
	}
	replaceFile(t, src, filepath.Join(official, "COTAHIST_D04022022.ZIP"))
	write(t, logs, day, true, true)
	out := filepath.Join(work, "pregao.snap")
	var so, se bytes.Buffer
	if err := runUpdate(context.Background(), []string{"--no-fetch", "--dir", filepath.Join(work, "official"), "--out", out, "--session-log", logs}, &so, &se); err != nil {
		t.Fatalf("%v\n%s\n%s", err, so.String(), se.String())
	}
	h, err := snapshot.ReadHeader(out)
	if want := (engine.StreamPosition{Next: 14, Name: bus.StreamName, Session: day, Batch: 3}); err != nil || h.Stream != want {
		t.Fatalf("snapshot position %+v, %v; want %+v", h.Stream, err, want)
	}
	so.Reset()
	if err := run(context.Background(), []string{"inspect", out}, &so, &se); err != nil || !strings.Contains(so.String(), "stream position  PREGAO_LIVE from sequence 14 (after batch 3 of session 2022-02-04)") {
		t.Errorf("inspect: %v\n%s", err, so.String())
	}
}

// TestImportStreamPositionLive: pregao import --live nats://… takes the
// position from the stream: after the last batch of the last session,
// once that batch is complete; none while it is not, nor when the stream
// does not answer.
func TestImportStreamPositionLive(t *testing.T) {
	src := "../../testdata/real/b3-cotahist/gbvbahia01__Spring-Batch-Cotahist/COTAHIST_D04022022.TXT.zip"
	day := engine.MakeDate(2022, 2, 4)
	listen := freeAddr(t)
	b, err := bus.Open(bus.Config{URL: bus.Embedded, Dir: t.TempDir(), Listen: listen})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	publish := func(sd engine.Date, seq uint64, complete bool) {
		t.Helper()
		if _, _, err := b.Publish(ctx, sd, &live.Record{Seq: seq, Complete: complete}, false); err != nil {
			t.Fatal(err)
		}
	}
	publish(day-1, 1, true) // stream sequence 1
	publish(day, 1, false)  // 2
	publish(day, 2, false)  // 3
	imp := func(url, summary string, want engine.StreamPosition) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "bundle")
		var so, se bytes.Buffer
		if err := runImport(context.Background(), []string{"--out", out, "--live", url, "--cotahist", src}, &so, &se); err != nil {
			t.Fatalf("%v\n%s", err, se.String())
		}
		if !strings.Contains(so.String(), summary) {
			t.Errorf("summary lacks %q:\n%s", summary, so.String())
		}
		if u, err := bundle.Read(out); err != nil || u.Meta.Stream != want {
			t.Errorf("bundle position %+v, %v; want %+v", u.Meta.Stream, err, want)
		}
	}
	imp("nats://"+listen, "stream position: none (the live stream's session 2022-02-04 is not complete (batch 2 is its last))", engine.StreamPosition{})
	publish(day, 3, true)    // 4
	publish(day+3, 1, false) // 5: a later session
	imp("nats://"+listen, "stream position: PREGAO_LIVE from sequence 5 (after batch 3 of session 2022-02-04)\n",
		engine.StreamPosition{Next: 5, Name: bus.StreamName, Session: day, Batch: 3})

	defer func(d time.Duration) { streamPositionTimeout = d }(streamPositionTimeout)
	streamPositionTimeout = 300 * time.Millisecond
	imp("nats://"+freeAddr(t), "stream position: none (the live stream at nats://", engine.StreamPosition{})

	var so, se bytes.Buffer
	if err := runImport(context.Background(), []string{"--out", t.TempDir(), "--live", "embedded"}, &so, &se); err == nil || !strings.Contains(err.Error(), "want nats://") {
		t.Errorf("--live embedded: %v", err)
	}
}

// TestImportStreamPositionSecured: import --live reaches a NATS cluster
// that asks for TLS with a client certificate and a password through
// --live-tls-*, as serve and pregao feed do, and records the position;
// without the client certificate it records none and says why, with the
// password redacted; the flags without --live, or a certificate without
// its key, are refused before anything is imported.
func TestImportStreamPositionSecured(t *testing.T) {
	src := "../../testdata/real/b3-cotahist/gbvbahia01__Spring-Batch-Cotahist/COTAHIST_D04022022.TXT.zip"
	day := engine.MakeDate(2022, 2, 4)
	o := &server.Options{Username: "pregao", Password: "pw-S3cret"}
	c := natstest.TLS(t, o, t.TempDir())
	url := "nats://pregao:pw-S3cret@" + natstest.Start(t, o)
	b, err := bus.Open(bus.Config{URL: url, TLSCA: c.CA, TLSCert: c.Cert, TLSKey: c.Key, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	if _, err := b.EnsureStream(ctx); err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 2; seq++ {
		if _, _, err := b.Publish(ctx, day, &live.Record{Seq: seq, Complete: seq == 2}, false); err != nil {
			t.Fatal(err)
		}
	}
	defer func(d time.Duration) { streamPositionTimeout = d }(streamPositionTimeout)
	streamPositionTimeout = 5 * time.Second
	tlsArgs := []string{"--live-tls-ca", c.CA, "--live-tls-cert", c.Cert, "--live-tls-key", c.Key}
	for _, tc := range []struct {
		name    string
		args    []string
		summary string
		want    engine.StreamPosition
	}{
		{"with the certificate", tlsArgs, "stream position: PREGAO_LIVE from sequence 3 (after batch 2 of session 2022-02-04)\n",
			engine.StreamPosition{Next: 3, Name: bus.StreamName, Session: day, Batch: 2}},
		{"without a client certificate", []string{"--live-tls-ca", c.CA}, "stream position: none (the live stream: ", engine.StreamPosition{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "bundle")
			var so, se bytes.Buffer
			if err := runImport(context.Background(), append([]string{"--out", out, "--live", url, "--cotahist", src}, tc.args...), &so, &se); err != nil {
				t.Fatalf("%v\n%s", err, se.String())
			}
			if !strings.Contains(so.String(), tc.summary) || strings.Contains(so.String()+se.String(), "pw-S3cret") {
				t.Errorf("summary lacks %q, or shows the password:\n%s%s", tc.summary, so.String(), se.String())
			}
			if u, err := bundle.Read(out); err != nil || u.Meta.Stream != tc.want {
				t.Errorf("bundle position %+v, %v; want %+v", u.Meta.Stream, err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--live-creds", c.CA}, "need --live nats://"},
		{[]string{"--live", url, "--live-tls-cert", c.Cert}, "both its certificate file and its key file"},
		{[]string{"--live", url, "--live-tls-ca", filepath.Join(t.TempDir(), "none.pem")}, "no such file"},
		{[]string{"--live", "http://pregao:pw-S3cret@host:4222"}, "xxxxx"},
	} {
		var so, se bytes.Buffer
		err := runImport(context.Background(), append([]string{"--out", filepath.Join(t.TempDir(), "b"), "--cotahist", src}, tc.args...), &so, &se)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "pw-S3cret") {
			t.Errorf("import %v: %v; want an error saying %q, no password", tc.args, err, tc.want)
		}
		var uo, ue bytes.Buffer
		err = runUpdate(context.Background(), append([]string{"--dir", t.TempDir(), "--out", filepath.Join(t.TempDir(), "s.snap"), "--no-fetch"}, tc.args...), &uo, &ue)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("update %v: %v; want an error saying %q", tc.args, err, tc.want)
		}
	}
}
