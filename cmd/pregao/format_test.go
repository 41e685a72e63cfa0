package main

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// build and generate --snapshot write format 6 unless told otherwise,
// the same file with --format 6 or without; --format 5 writes format 5,
// the same file from both; and a server of the format 6 file answers,
// byte for byte, as a server of the format 5 file of the same bundle.
func TestBuildFormat6(t *testing.T) {
	defer func(f func(int) demo.Size) { scaleSize = f }(scaleSize)
	scaleSize = func(int) demo.Size {
		return demo.Size{Companies: 6, SponsoredBDRs: 1, FIIs: 2, ETFs: 1, IntradayTickers: 2, IntradaySessions: 2,
			ReportsFrom: 2025, FundReportsFrom: 2026, EventsFrom: 2026, HistoryFrom: 2024}
	}
	dir := t.TempDir()
	var out, errb bytes.Buffer
	bdir := filepath.Join(dir, "bundle")
	if err := runGenerate(context.Background(), []string{"--seed", "2", "--out", bdir}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, c := range []struct{ name, format string }{{"default", ""}, {"v5", "5"}, {"v6", "6"}} {
		files[c.name] = filepath.Join(dir, c.name+".snap")
		args := []string{"--from", bdir, "--out", files[c.name]}
		if c.format != "" {
			args = append(args, "--format", c.format)
		}
		out.Reset()
		if err := runBuild(context.Background(), args, &out, &errb); err != nil {
			t.Fatalf("build %v: %v", args, err)
		}
	}
	for _, c := range []struct{ name, format string }{{"direct", ""}, {"direct5", "5"}, {"direct6", "6"}} {
		files[c.name] = filepath.Join(dir, c.name+".snap")
		args := []string{"--seed", "2", "--snapshot", files[c.name]}
		if c.format != "" {
			args = append(args, "--format", c.format)
		}
		if err := runGenerate(context.Background(), args, &out, &errb); err != nil {
			t.Fatalf("generate %v: %v", args, err)
		}
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for name, same := range map[string]string{
		"default": "build's default differs from build --format 6",
		"direct":  "generate --snapshot's default differs from build --format 6",
		"direct6": "generate --snapshot --format 6 and build --format 6 wrote different files",
	} {
		if !bytes.Equal(read(files[name]), read(files["v6"])) {
			t.Error(same)
		}
	}
	if !bytes.Equal(read(files["direct5"]), read(files["v5"])) {
		t.Error("generate --snapshot --format 5 and build --format 5 wrote different files")
	}
	for name, want := range map[string]uint16{"default": 6, "direct": 6, "v5": 5, "direct5": 5, "v6": 6} {
		h, err := snapshot.ReadHeader(files[name])
		if err != nil || h.FormatVersion != want {
			t.Fatalf("%s: format version %d (%v), want %d", name, h.FormatVersion, err, want)
		}
	}

	// The same answers from both files.
	answers := func(file string) map[string]string {
		ds, _, err := snapshot.Load(file, snapshot.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		store := &engine.Store{}
		keys, key := delayedKey(t, ds)
		api := httpapi.New(httpapi.DefaultConfig(), store, keys, httpapi.SnapshotClock{Store: store}, prometheus.NewRegistry(), nil)
		api.Prepare(ds, "same", ds.AsOf())
		store.Publish(ds)
		paths := []string{"/v2/indexes/IBOV/highs?limit=10", "/v2/stocks/variations?limit=5", "/v2/stocks/ratios?limit=20"}
		for _, a := range ds.Assets() {
			if a.Intraday.Len() > 0 {
				paths = append(paths, "/v2/quotes/"+a.Ticker+"?type=chart")
			}
			if a.Daily.Len() > 0 {
				paths = append(paths, "/v2/quotes/"+a.Ticker+"?type=historical&start_date=2000-01-01&end_date=2100-01-01",
					"/v2/quotes/"+a.Ticker+"?type=historical&start_date=2000-01-01&end_date=2100-01-01&adjusted=true")
			}
		}
		reports := 0
		for _, c := range ds.Universe().Companies {
			for _, q := range []string{"raw-reports", "raw-reports?flat=true", "raw-reports?report_type=DRE&latest_by_reference_date=true",
				"reports", "reports?frequency=ANNUAL", "reports?section=CASH_FLOW&latest_by_reference_date=true"} {
				paths = append(paths, "/v2/companies/"+c.ID+"/"+q)
			}
		}
		iss := ds.Issuers()
		for i := range iss {
			for _, r := range iss[i].Reports() {
				reports += len(r.Accounts)
			}
		}
		if reports == 0 {
			t.Fatal("no report accounts: the test does not cover them")
		}
		got := map[string]string{}
		for _, p := range paths {
			w := httptest.NewRecorder()
			r := httptest.NewRequest("GET", p, nil)
			r.Header.Set("Authorization", "Bearer "+key)
			api.ServeHTTP(w, r)
			got[p] = w.Body.String()
			if p == paths[0] && w.Code != 200 {
				t.Fatalf("GET %s: %d %s", p, w.Code, w.Body.String())
			}
		}
		return got
	}
	want, got := answers(files["v5"]), answers(files["v6"])
	if len(want) < 10 {
		t.Fatalf("only %d paths", len(want))
	}
	withReports := 0
	for p, w := range want {
		if got[p] != w {
			t.Errorf("GET %s: format 6 answers %.200s, format 5 %.200s", p, got[p], w)
		}
		if strings.Contains(p, "reports") && strings.Contains(w, `"reference_date"`) {
			withReports++
		}
	}
	if withReports < 12 {
		t.Errorf("%d report answers hold reports: the test covers too few", withReports)
	}

	// The same flat files (the reports' accounts among them).
	exported := func(name string) map[string][]byte {
		out := filepath.Join(dir, "files-"+name)
		if err := runExport(context.Background(), []string{"--snapshot", files[name], "--out", out}, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		ents, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string][]byte{}
		for _, e := range ents {
			if e.Name() != "manifest.json" {
				m[e.Name()] = read(filepath.Join(out, e.Name()))
			}
		}
		return m
	}
	f5, f6 := exported("v5"), exported("v6")
	if len(f5) != len(f6) || f5["reports.csv"] == nil && f5["reports.parquet"] == nil {
		t.Fatalf("exported %d files from format 6, %d from format 5 (%v)", len(f6), len(f5), slices.Collect(maps.Keys(f5)))
	}
	for name, b := range f5 {
		if !bytes.Equal(f6[name], b) {
			t.Errorf("flat file %s: format 6 gives %d bytes, format 5 %d, not the same", name, len(f6[name]), len(b))
		}
	}
}

func TestFormatFlagRefused(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	for _, args := range [][]string{
		{"build", "--from", dir, "--out", filepath.Join(dir, "x.snap"), "--format", "7"},
		{"build", "--from", dir, "--out", filepath.Join(dir, "x.snap"), "--format", "4"},
		{"generate", "--snapshot", filepath.Join(dir, "x.snap"), "--format", "3"},
		{"generate", "--out", filepath.Join(dir, "b"), "--format", "6"},
		{"generate", "--out", filepath.Join(dir, "b"), "--format", "5"},
	} {
		err := run(context.Background(), args, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), "--format") {
			t.Errorf("%v: err = %v, want one naming --format", args, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "x.snap")); err == nil {
			t.Errorf("%v wrote a snapshot", args)
		}
	}
}

// --intraday-sessions and --intraday-tickers size the 1-minute history:
// every ticker (all) gets the sessions asked for (a quarter: 63).
func TestGenerateIntradayFlags(t *testing.T) {
	defer func(f func(int) demo.Size) { scaleSize = f }(scaleSize)
	scaleSize = func(int) demo.Size {
		return demo.Size{Companies: 4, FIIs: 2, ETFs: 1, IntradayTickers: 1, IntradaySessions: 2,
			ReportsFrom: 2026, FundReportsFrom: 2026, EventsFrom: 2026, HistoryFrom: 2026}
	}
	dir := t.TempDir()
	var out, errb bytes.Buffer
	file := filepath.Join(dir, "q.snap")
	if err := runGenerate(context.Background(), []string{"--snapshot", file, "--format", "6", "--intraday-sessions", "5", "--intraday-tickers", "all"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	u, _, err := snapshot.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Intraday) < 5 {
		t.Fatalf("%d intraday series for %d daily ones", len(u.Intraday), len(u.Daily))
	}
	for _, s := range u.Intraday {
		days := map[int64]bool{}
		for _, tm := range s.Times {
			days[tm/86400] = true
		}
		if len(days) != 5 || s.Len() < 4*420 {
			t.Errorf("%s: %d bars over %d sessions, want 5 sessions", s.Ticker, s.Len(), len(days))
		}
	}
	for _, args := range [][]string{
		{"--intraday-sessions", "253"}, {"--intraday-sessions", "-2"},
		{"--intraday-tickers", "some"}, {"--intraday-tickers", "-1"},
	} {
		err := runGenerate(context.Background(), append([]string{"--snapshot", filepath.Join(dir, "x.snap")}, args...), &out, &errb)
		if err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%v: err = %v, want one naming %s", args, err, args[0])
		}
	}
}

// A snapshot of a deprecated format (5) still loads, and serve's log,
// inspect and verify say that it is deprecated; format 6 has no warning.
func TestDeprecatedFormatWarned(t *testing.T) {
	_, keys, _ := serveFixture(t)
	dir := t.TempDir()
	for _, v := range []uint16{5, 6} {
		snap := filepath.Join(dir, "small"+strconv.Itoa(int(v))+".snap")
		if _, err := snapshot.BuildFromBundle("../../snapshot/bundle/testdata/small", snap, snapshot.WriteOptions{Version: v}); err != nil {
			t.Fatal(err)
		}
		cfg := DefaultServeConfig()
		cfg.Snapshot, cfg.Keys, cfg.Addr = snap, keys, "127.0.0.1:0"
		var logs syncBuffer
		if _, err := NewMain(cfg, &logs); err != nil {
			t.Fatalf("format %d: %v", v, err)
		}
		warned := strings.Contains(logs.String(), "snapshot format 5 is deprecated")
		if warned != (v == 5) || strings.Contains(logs.String(), "is deprecated") != (v == 5) {
			t.Errorf("format %d: deprecation warned %v:\n%s", v, warned, logs.String())
		}
		for _, cmd := range []string{"inspect", "verify"} {
			var out bytes.Buffer
			if err := run(context.Background(), []string{cmd, snap}, &out, io.Discard); err != nil {
				t.Fatalf("%s format %d: %v", cmd, v, err)
			}
			if got := strings.Contains(out.String(), "(deprecated"); got != (v == 5) {
				t.Errorf("%s format %d: deprecated %v:\n%s", cmd, v, got, out.String())
			}
		}
	}
}
