package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/internal/mapfile"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// A format 6 snapshot with a byte flipped in a price of each kind of
// bars (a ticker's first daily open, another's first 1-minute open),
// loaded as serve loads it (blocks verified on first use): it is ready
// at once, having read no block; requests from several clients (run
// with -race) for the damaged ticker and across tickers all answer 503
// with Retry-After and a JSON error, never a price, and from then on
// /readyz answers 503 and the metrics count the bad block. Loaded again
// with the background pass instead, the pass finds the block and fails
// the snapshot the same way; pregao verify refuses the file, and so does
// serve with --verify-rate 0.
func TestDamagedBlockAnswers503(t *testing.T) {
	good := demoV6Plain(t, 4)
	file, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	ds, _, err := snapshot.Load(good, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if daily, intraday := ds.OpenReads(); len(daily)+len(intraday) != 0 {
		t.Fatalf("the index build reads the bars of %q, %q at open: their blocks are verified then", daily, intraday)
	}
	keys, key := delayedKey(t, ds)
	_, keysFile, _ := serveFixture(t)
	// Where each kind's first open of a ticker lies in the file: its
	// first eight opens, as the columns hold them, found in the bytes.
	type target struct{ kind, ticker, path string }
	var targets []target
	offs := map[string]int{}
	for _, a := range ds.Assets() {
		if len(a.Former) > 0 {
			continue
		}
		var pat []byte
		if cols, ok := a.Daily.Columns(); ok && len(cols.Open) >= 8 && offs["daily"] == 0 {
			for _, v := range cols.Open[:8] {
				pat = binary.LittleEndian.AppendUint32(pat, uint32(v))
			}
			if i := bytes.Index(file, pat); i > 0 && bytes.LastIndex(file, pat) == i {
				offs["daily"] = i
				targets = append(targets, target{"daily", a.Ticker, "/v2/quotes/" + a.Ticker + "?type=historical&start_date=2000-01-01&end_date=2100-01-01"})
			}
			continue
		}
		if ic, ok := a.Intraday.Columns(); ok && len(ic.Open) >= 8 && offs["intraday"] == 0 {
			for _, v := range ic.Open[:8] {
				pat = binary.LittleEndian.AppendUint32(pat, uint32(v))
			}
			if i := bytes.Index(file, pat); i > 0 && bytes.LastIndex(file, pat) == i {
				offs["intraday"] = i
				targets = append(targets, target{"intraday", a.Ticker, "/v2/quotes/" + a.Ticker + "?type=chart"})
			}
		}
	}
	if len(targets) != 2 {
		t.Fatalf("found %v: want a ticker of each kind of bars", targets)
	}
	ds = nil

	for _, tg := range targets {
		t.Run(tg.kind, func(t *testing.T) {
			b := bytes.Clone(file)
			b[offs[tg.kind]] ^= 1 // one cent (daily), or the mantissa's last bit
			bad := filepath.Join(t.TempDir(), "bad.snap")
			if err := os.WriteFile(bad, b, 0o644); err != nil {
				t.Fatal(err)
			}
			serveFile := func(opt snapshot.LoadOptions) func(string) (int, string, string) {
				return serveLazy(t, bad, keys, key, opt)
			}
			failed := func(get func(string) (int, string, string)) {
				t.Helper()
				if code, _, body := get("/readyz"); code != 503 || !strings.Contains(body, "damaged") {
					t.Errorf("/readyz of a damaged snapshot: %d %s", code, body)
				}
				_, _, m := get("/metrics")
				if !strings.Contains(m, "pregao_snapshot_blocks_bad 1\n") {
					t.Errorf("metrics: no bad block counted:\n%s", grepLines(m, "pregao_snapshot_blocks"))
				}
				for _, p := range []string{tg.path, "/v2/indexes/IBOV/highs?limit=10", "/v2/companies"} {
					if code, retry, body := get(p); code != 503 || retry == "" || !json.Valid([]byte(body)) {
						t.Errorf("GET %s from a damaged snapshot: %d, Retry-After %q, %.200s", p, code, retry, body)
					}
				}
			}

			// Verified on first use only.
			get := serveFile(snapshot.LoadOptions{VerifyRate: -1})
			code, _, body := get("/readyz")
			var ready struct {
				Blocks struct{ Total, Verified, Bad int64 }
			}
			if err := json.Unmarshal([]byte(body), &ready); code != 200 || err != nil || ready.Blocks.Total == 0 || ready.Blocks.Verified != 0 {
				t.Fatalf("/readyz before any request: %d %s: want ready, nothing verified", code, body)
			}
			// A route that reads no block (httpapi.BlocksNone) answers
			// from what the open verified, verifying none; the first
			// request that reads the bad block finds it.
			if code, _, body := get("/v2/indexes/IBOV/highs?limit=10"); code != 200 {
				t.Errorf("GET /v2/indexes/IBOV/highs before the bad block is found: %d %.200s", code, body)
			}
			if code, retry, body := get(tg.path); code != 503 || retry == "" || !strings.Contains(body, "damaged") {
				t.Errorf("GET %s: %d, Retry-After %q, %.200s: want 503", tg.path, code, retry, body)
			}
			var wg sync.WaitGroup
			for r := range 4 {
				wg.Go(func() {
					for n := range 20 {
						p := tg.path
						if (n+r)%3 == 0 {
							p = "/v2/indexes/IBOV/highs?limit=10"
						}
						if code, retry, body := get(p); code != 503 || retry == "" || !strings.Contains(body, "damaged") {
							t.Errorf("GET %s: %d, Retry-After %q, %.200s: want 503", p, code, retry, body)
							return
						}
					}
				})
			}
			wg.Wait()
			failed(get)

			// Found by the background pass.
			done := make(chan engine.BlockStatus, 1)
			get = serveFile(snapshot.LoadOptions{Verified: func(s engine.BlockStatus) { done <- s }})
			select {
			case s := <-done:
				if s.Bad != 1 || s.Err == nil {
					t.Errorf("background pass: %+v", s)
				}
			case <-time.After(time.Minute):
				t.Fatal("the background pass did not end")
			}
			failed(get)

			var out bytes.Buffer
			if err := run(context.Background(), []string{"verify", bad}, io.Discard, &out); err == nil || !strings.Contains(err.Error(), "checksum") {
				t.Errorf("pregao verify of a damaged file: %v", err)
			}

			// serve's first load: published at once by default; with
			// --verify-rate 0 every block is verified first, and the
			// damaged file is refused.
			for _, rate := range []int64{snapshot.DefaultVerifyRate >> 20, 0} {
				cfg := DefaultServeConfig()
				cfg.Snapshot, cfg.Keys, cfg.Addr, cfg.VerifyRateMB = bad, keysFile, "127.0.0.1:0", rate
				m, err := newMain(cfg, io.Discard)
				if err != nil {
					t.Fatal(err)
				}
				err = m.loadFirst(context.Background())
				if rate == 0 && !errors.Is(err, snapshot.ErrChecksum) {
					t.Errorf("--verify-rate 0: first load %v, want ErrChecksum", err)
				}
				if rate != 0 && (err != nil || m.Store.Current().Blocks() == nil) {
					t.Errorf("--verify-rate %d: first load %v, want published with its blocks to verify", rate, err)
				}
				m.Close()
			}

			// A reload to the damaged file, with blocks verified lazily at
			// the first load: refused before it is published (every block
			// read first), the previous snapshot serving on, counted as a
			// refused reload.
			served := filepath.Join(t.TempDir(), "served.snap")
			if err := os.WriteFile(served, file, 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := DefaultServeConfig()
			cfg.Snapshot, cfg.Keys, cfg.Addr = served, keysFile, "127.0.0.1:0"
			m, err := newMain(cfg, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if err := m.loadFirst(context.Background()); err != nil {
				t.Fatal(err)
			}
			before := m.Store.Current()
			next := served + ".next"
			if err := os.WriteFile(next, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(next, served); err != nil {
				t.Fatal(err)
			}
			if err := m.Reload(); !errors.Is(err, snapshot.ErrChecksum) {
				t.Errorf("reload to a damaged file: %v, want ErrChecksum", err)
			}
			if m.Store.Current() != before || before.BlockErr() != nil {
				t.Error("the damaged file replaced the snapshot serving")
			}
			rec := httptest.NewRecorder()
			m.API.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
			if !strings.Contains(rec.Body.String(), `pregao_snapshot_reloads_total{result="error"} 1`) {
				t.Errorf("refused reload not counted:\n%s", grepLines(rec.Body.String(), "pregao_snapshot_reloads_total"))
			}
		})
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for l := range strings.Lines(s) {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// A format 6 snapshot with a byte flipped in its ratio columns (the
// first ratio point's value), loaded as serve loads it (its open reads
// no ratio point): it is ready at once, its quotes answer (no ticker's
// bars are in the bad block) and so do the ratios of a company whose
// points and variables lie in other blocks; the first request of the
// first company's ratios verifies its blocks, finds the ratio block
// and answers 503 with Retry-After, never the value; from then on
// /readyz answers 503 too. Loaded again with the background pass
// instead, the pass finds the block; pregao verify refuses the file.
func TestDamagedRatioBlockAnswers503(t *testing.T) {
	u := demo.GenerateSize(5, demo.Size{Companies: 4, FIIs: 1, ETFs: 1, HistoryFrom: 2022, IntradayTickers: 1, IntradaySessions: 1})
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = d
	if len(d.Ratios) == 0 {
		t.Fatal("the demo has no ratio points")
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.snap")
	if err := snapshot.WriteFile(good, u, snapshot.WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	ds, _, err := snapshot.Load(good, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keys, key := delayedKey(t, ds)
	company := ds.RatioCompany(&ds.Universe().Derived.Ratios[0]).String()
	// A company of the last points: in another block (the points, then
	// the variables, are cut into blocks of about 256 KiB).
	rs := ds.Universe().Derived.Ratios
	other := ds.RatioCompany(&rs[len(rs)-1]).String()
	if 48*len(rs) < 1<<19 {
		t.Fatalf("%d ratio points: too few for two blocks", len(rs))
	}
	var ticker string
	for _, a := range ds.Assets() {
		if a.Daily.Len() > 0 && len(a.Former) == 0 {
			ticker = a.Ticker
			break
		}
	}
	ds = nil
	// The ratio columns end the file: the points (48 bytes each), then
	// their variables (8 bytes each).
	// (Then the fund ratio points, 40 bytes each, end it.)
	at := len(file) - 48*len(d.Ratios) - 8*len(d.RatioVars) - 40*len(d.FundRatios)
	if got := math.Float64frombits(binary.LittleEndian.Uint64(file[at:])); got != float64(d.Ratios[0].Value) {
		t.Fatalf("the first ratio point's value in the file is %v, want %v", got, d.Ratios[0].Value)
	}
	b := bytes.Clone(file)
	b[at] ^= 1 // the value's last mantissa bit
	bad := filepath.Join(dir, "bad.snap")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	serveFile := func(opt snapshot.LoadOptions) func(string) (int, string, string) {
		return serveLazy(t, bad, keys, key, opt)
	}
	ratiosPath := "/v2/companies/" + company + "/ratios?show_calculation=true"
	failed := func(get func(string) (int, string, string)) {
		t.Helper()
		if code, _, body := get("/readyz"); code != 503 || !strings.Contains(body, "damaged") {
			t.Errorf("/readyz of a damaged snapshot: %d %s", code, body)
		}
		for _, p := range []string{ratiosPath, "/v2/companies/" + company + "/ratios/valuation", "/v2/quotes/" + ticker} {
			if code, retry, body := get(p); code != 503 || retry == "" || !strings.Contains(body, "ratios block") || !json.Valid([]byte(body)) {
				t.Errorf("GET %s from a damaged snapshot: %d, Retry-After %q, %.200s", p, code, retry, body)
			}
		}
	}

	// Verified on first use only.
	get := serveFile(snapshot.LoadOptions{VerifyRate: -1})
	if code, _, body := get("/readyz"); code != 200 {
		t.Fatalf("/readyz before any request: %d %s: want ready", code, body)
	}
	if code, _, body := get("/v2/quotes/" + ticker); code != 200 {
		t.Errorf("GET /v2/quotes/%s before the ratio block is read: %d %.200s", ticker, code, body)
	}
	if code, _, body := get("/v2/companies/" + other + "/ratios"); code != 200 {
		t.Errorf("GET the ratios of %s (other blocks) before the bad block is read: %d %.200s", other, code, body)
	}
	if code, _, body := get("/readyz"); code != 200 {
		t.Errorf("/readyz before the bad block is read: %d %s", code, body)
	}
	if code, retry, body := get(ratiosPath); code != 503 || retry == "" || !strings.Contains(body, "ratios block") {
		t.Errorf("GET %s: %d, Retry-After %q, %.200s: want 503 naming the ratios block", ratiosPath, code, retry, body)
	}
	failed(get)

	// Found by the background pass.
	done := make(chan engine.BlockStatus, 1)
	get = serveFile(snapshot.LoadOptions{Verified: func(s engine.BlockStatus) { done <- s }})
	select {
	case s := <-done:
		if s.Bad != 1 || s.Err == nil || !strings.Contains(s.Err.Error(), "ratios block") {
			t.Errorf("background pass: %+v", s)
		}
	case <-time.After(time.Minute):
		t.Fatal("the background pass did not end")
	}
	failed(get)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"verify", bad}, io.Discard, &out); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("pregao verify of a damaged file: %v", err)
	}
}

// A format 6 snapshot with a byte flipped in its fund ratio columns (the
// first fund point's value), loaded as serve loads it: it is ready at
// once and its quotes answer, but the first request of that fund's
// ratios (or its detail, which shows its latest points) verifies the
// fund's block, finds it bad and answers 503 with Retry-After, never the
// value; from then on every request and /readyz answer 503. Loaded again
// with the background pass instead, the pass finds the block; pregao
// verify refuses the file.
func TestDamagedFundBlockAnswers503(t *testing.T) {
	u := demo.GenerateSize(5, demo.Size{Companies: 4, FIIs: 2, ETFs: 1, HistoryFrom: 2022, IntradayTickers: 1, IntradaySessions: 1})
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = d
	if len(d.FundRatios) == 0 {
		t.Fatal("the demo has no fund ratio points")
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.snap")
	if err := snapshot.WriteFile(good, u, snapshot.WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	ds, _, err := snapshot.Load(good, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keys, key := delayedKey(t, ds)
	var ticker string
	for _, a := range ds.Assets() {
		if a.Daily.Len() > 0 && len(a.Former) == 0 {
			ticker = a.Ticker
			break
		}
	}
	ds = nil
	// The fund ratio points (40 bytes each, Derive's order) end the file.
	fund := d.FundRatios[0].FundID.String()
	at := len(file) - 40*len(d.FundRatios)
	if got := math.Float64frombits(binary.LittleEndian.Uint64(file[at:])); got != float64(d.FundRatios[0].Value) {
		t.Fatalf("the first fund point's value in the file is %v, want %v", got, d.FundRatios[0].Value)
	}
	b := bytes.Clone(file)
	b[at] ^= 1 // the value's last mantissa bit
	bad := filepath.Join(dir, "bad.snap")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	const what = "fund ratios block"
	paths := []string{"/v2/traded-funds/" + fund + "/ratios", "/v2/traded-funds/" + fund, "/v2/quotes/" + ticker}
	failed := func(get func(string) (int, string, string)) {
		t.Helper()
		if code, _, body := get("/readyz"); code != 503 || !strings.Contains(body, "damaged") {
			t.Errorf("/readyz of a damaged snapshot: %d %s", code, body)
		}
		for _, p := range paths {
			if code, retry, body := get(p); code != 503 || retry == "" || !strings.Contains(body, what) || !json.Valid([]byte(body)) {
				t.Errorf("GET %s from a damaged snapshot: %d, Retry-After %q, %.200s", p, code, retry, body)
			}
		}
	}

	// Verified on first use only.
	get := serveLazy(t, bad, keys, key, snapshot.LoadOptions{VerifyRate: -1})
	if code, _, body := get("/readyz"); code != 200 {
		t.Fatalf("/readyz before any request: %d %s: want ready", code, body)
	}
	if code, _, body := get("/v2/quotes/" + ticker); code != 200 {
		t.Errorf("GET /v2/quotes/%s before the fund block is read: %d %.200s", ticker, code, body)
	}
	if code, _, body := get("/readyz"); code != 200 {
		t.Errorf("/readyz before the bad block is read: %d %s", code, body)
	}
	if code, retry, body := get(paths[0]); code != 503 || retry == "" || !strings.Contains(body, what) || strings.Contains(body, "value") {
		t.Errorf("GET %s: %d, Retry-After %q, %.200s: want 503 naming the %s", paths[0], code, retry, body, what)
	}
	failed(get)

	// The fund's detail reads its points too.
	get = serveLazy(t, bad, keys, key, snapshot.LoadOptions{VerifyRate: -1})
	if code, retry, body := get(paths[1]); code != 503 || retry == "" || !strings.Contains(body, what) {
		t.Errorf("GET %s: %d, Retry-After %q, %.200s: want 503 naming the %s", paths[1], code, retry, body, what)
	}

	// Found by the background pass.
	done := make(chan engine.BlockStatus, 1)
	get = serveLazy(t, bad, keys, key, snapshot.LoadOptions{Verified: func(s engine.BlockStatus) { done <- s }})
	select {
	case s := <-done:
		if s.Bad != 1 || s.Err == nil || !strings.Contains(s.Err.Error(), what) {
			t.Errorf("background pass: %+v", s)
		}
	case <-time.After(time.Minute):
		t.Fatal("the background pass did not end")
	}
	failed(get)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"verify", bad}, io.Discard, &out); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("pregao verify of a damaged file: %v", err)
	}
}

// serveLazy loads the snapshot file bad as serve does (LazyVerify, with
// opt's pass) behind an API of keys, and returns a GET of a path with
// key: its status, Retry-After and body.
func serveLazy(t *testing.T, bad string, keys *httpapi.Keys, key string, opt snapshot.LoadOptions) func(string) (int, string, string) {
	t.Helper()
	do := serveLazyDo(t, bad, keys, key, opt)
	return func(p string) (int, string, string) { return do("GET", p, "") }
}

// serveLazyDo is serveLazy for any method, with a body (POST).
func serveLazyDo(t *testing.T, bad string, keys *httpapi.Keys, key string, opt snapshot.LoadOptions) func(method, path, body string) (int, string, string) {
	t.Helper()
	opt.LazyVerify = true
	ds, h, err := snapshot.Load(bad, opt)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	store := &engine.Store{}
	api := httpapi.New(httpapi.DefaultConfig(), store, keys, httpapi.SnapshotClock{Store: store}, prometheus.NewRegistry(), nil)
	api.Prepare(ds, h.ID, h.BuildTime)
	store.Publish(ds)
	return func(method, p, body string) (int, string, string) {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(method, p, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+key)
		api.ServeHTTP(w, r)
		return w.Code, w.Header().Get("Retry-After"), w.Body.String()
	}
}

// A format 6 snapshot with a byte flipped in its account columns (the
// first report account's value), loaded as serve loads it: it is ready
// at once and its quotes answer (no ticker's bars are in the bad block),
// but the first request of that company's reports verifies its blocks,
// finds the accounts block and answers 503 with
// Retry-After, never the value; from then on /readyz answers 503 too.
// Loaded again with the background pass instead, the pass finds the
// block; pregao verify refuses the file.
func TestDamagedAccountBlockAnswers503(t *testing.T) {
	damagedReportBlock(t, "accounts block", func(start, accounts int, first *engine.Report) int {
		// The first account's value.
		return start + 8
	}, func(b []byte, at int, first *engine.Report) {
		if got := math.Float64frombits(binary.LittleEndian.Uint64(b[at:])); got != float64(first.Accounts[0].Value) {
			t.Fatalf("the first account's value in the file is %v, want %v", got, first.Accounts[0].Value)
		}
	})
}

// A report head's byte flipped (the first report's publish date) in a
// format 6 file: as an account's, that company's report routes answer
// 503 naming the report heads block, then every request and /readyz;
// the background pass and pregao verify find it.
func TestDamagedHeadBlockAnswers503(t *testing.T) {
	damagedReportBlock(t, "report heads block", func(start, accounts int, first *engine.Report) int {
		return start + 16*accounts + 16
	}, func(b []byte, at int, first *engine.Report) {
		if got := engine.Stamp(binary.LittleEndian.Uint64(b[at:])); got != first.PublishDate {
			t.Fatalf("the first report's publish date in the file is %v, want %v", got, first.PublishDate)
		}
	})
}

// damagedReportBlock flips the lowest bit of the byte at(start, accounts,
// first) of a format 6 file of the demo (start: where the account
// columns start, accounts their count, first the first report, after
// check has checked the byte is first's) and checks what serve and
// verify make of it, naming what.
func damagedReportBlock(t *testing.T, what string, at func(start, accounts int, first *engine.Report) int, check func(b []byte, at int, first *engine.Report)) {
	u := demo.GenerateSize(5, demo.Size{Companies: 4, FIIs: 1, ETFs: 1, HistoryFrom: 2022, IntradayTickers: 1, IntradaySessions: 1})
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = d
	dir := t.TempDir()
	good := filepath.Join(dir, "good.snap")
	if err := snapshot.WriteFile(good, u, snapshot.WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	ds, _, err := snapshot.Load(good, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keys, key := delayedKey(t, ds)
	var ticker string
	for _, a := range ds.Assets() {
		if a.Daily.Len() > 0 && len(a.Former) == 0 {
			ticker = a.Ticker
			break
		}
	}
	ds = nil
	// The account columns (16 bytes each: line, four zero bytes, value)
	// come before the ratio columns and the fund ratio columns, which end
	// the file.
	accounts := 0
	var first *engine.Report
	for i := range u.Reports {
		if r := &u.Reports[i]; len(r.Accounts) > 0 {
			if first == nil {
				first = r
			}
			accounts += len(r.Accounts)
		}
	}
	if first == nil {
		t.Fatal("the demo has no report accounts")
	}
	// The report heads (64 bytes each) follow the accounts.
	start := len(file) - 40*len(d.FundRatios) - 48*len(d.Ratios) - 8*len(d.RatioVars) - 64*len(u.Reports) - 16*accounts
	if what != "accounts block" {
		first = &u.Reports[0]
	}
	pos := at(start, accounts, first)
	check(file, pos, first)
	b := bytes.Clone(file)
	b[pos] ^= 1 // the lowest bit
	bad := filepath.Join(dir, "bad.snap")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	company := first.CompanyID
	paths := []string{"/v2/companies/" + company + "/raw-reports", "/v2/companies/" + company + "/raw-reports?flat=true",
		"/v2/companies/" + company + "/reports", "/v2/quotes/" + ticker}
	failed := func(get func(string) (int, string, string)) {
		t.Helper()
		if code, _, body := get("/readyz"); code != 503 || !strings.Contains(body, "damaged") {
			t.Errorf("/readyz of a damaged snapshot: %d %s", code, body)
		}
		for _, p := range paths {
			if code, retry, body := get(p); code != 503 || retry == "" || !strings.Contains(body, what) || !json.Valid([]byte(body)) {
				t.Errorf("GET %s from a damaged snapshot: %d, Retry-After %q, %.200s", p, code, retry, body)
			}
		}
	}

	// Verified on first use only.
	get := serveLazy(t, bad, keys, key, snapshot.LoadOptions{VerifyRate: -1})
	if code, _, body := get("/readyz"); code != 200 {
		t.Fatalf("/readyz before any request: %d %s: want ready", code, body)
	}
	if code, _, body := get("/v2/quotes/" + ticker); code != 200 {
		t.Errorf("GET /v2/quotes/%s before the accounts block is read: %d %.200s", ticker, code, body)
	}
	if code, retry, body := get(paths[0]); code != 503 || retry == "" || !strings.Contains(body, what) {
		t.Errorf("GET %s: %d, Retry-After %q, %.200s: want 503 naming %s", paths[0], code, retry, body, what)
	}
	failed(get)

	// Found by the background pass.
	done := make(chan engine.BlockStatus, 1)
	get = serveLazy(t, bad, keys, key, snapshot.LoadOptions{Verified: func(s engine.BlockStatus) { done <- s }})
	select {
	case s := <-done:
		if s.Bad != 1 || s.Err == nil || !strings.Contains(s.Err.Error(), what) {
			t.Errorf("background pass: %+v", s)
		}
	case <-time.After(time.Minute):
		t.Fatal("the background pass did not end")
	}
	failed(get)

	var out bytes.Buffer
	if err := run(context.Background(), []string{"verify", bad}, io.Discard, &out); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("pregao verify of a damaged file: %v", err)
	}
}

// A served format 6 snapshot cut in place (as cp or truncate over the
// served file do first: the docs say to rename a new file over it) does
// not end the process: the request whose read faults on the mapping
// answers 503 naming the cause, every later request and /readyz answer
// 503 (never a 500, never a price from the cut file), and the background
// pass, its reads failing, reports the fault instead of crashing.
func TestCutInPlaceAnswers503(t *testing.T) {
	good := demoV6(t, 40)
	h, err := snapshot.ReadHeader(good)
	if err != nil || h.Columns == 0 {
		t.Fatalf("header %+v, %v: want a column area", h, err)
	}
	ds, _, err := snapshot.Load(good, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keys, key := delayedKey(t, ds)
	var tickers []string
	for _, a := range ds.Assets() {
		tickers = append(tickers, a.Ticker)
	}
	ds = nil
	cut := func(t *testing.T, path string) {
		t.Helper()
		// The header and the small sections stay; the column area goes.
		if err := os.Truncate(path, h.ColumnsOffset); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("requests", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "served.snap")
		if err := copyFileForTest(path, good); err != nil {
			t.Fatal(err)
		}
		get := serveLazy(t, path, keys, key, snapshot.LoadOptions{VerifyRate: -1})
		cut(t, path)
		faulted := false
		for _, tk := range tickers {
			code, retry, body := get("/v2/quotes/" + tk + "?type=historical&start_date=2000-01-01&end_date=2100-01-01")
			switch {
			case code == 503 && retry != "" && strings.Contains(body, "changed in place"):
				faulted = true
			case code == 503 && faulted && strings.Contains(body, "damaged"):
			default:
				t.Fatalf("GET history of %s from a cut file: %d %.300s", tk, code, body)
			}
		}
		if !faulted {
			t.Fatal("no request read the cut column area")
		}
		if code, _, body := get("/readyz"); code != 503 || !strings.Contains(body, "changed in place") {
			t.Errorf("/readyz after the fault: %d %s", code, body)
		}
		if code, _, body := get("/v2/indexes/IBOV/highs?limit=10"); code != 503 {
			t.Errorf("a route reading no block after the fault: %d %.200s", code, body)
		}
	})

	// A route that reads every block (the screener: CheckAll's workers
	// verify through the mapping), and a batch of 60 histories whose
	// blocks were all verified before the cut (a helper goroutine reads
	// half of them): 503s, then /metrics says the snapshot failed.
	for _, c := range []struct{ name, first, path, body string }{
		{"every block", "", "/v2/screener", `{"limit":5}`},
		{"batch", "/v2/screener", "/v2/quotes", `{"tickers":["` + strings.Join(tickers[:min(60, len(tickers))], `","`) + `"],"type":"historical","start_date":"2000-01-01","end_date":"2100-01-01"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if len(tickers) < 40 { // parallelMin, 32, and more
				t.Fatalf("%d tickers: the batch does not reach the helper goroutine", len(tickers))
			}
			path := filepath.Join(t.TempDir(), "served.snap")
			if err := copyFileForTest(path, good); err != nil {
				t.Fatal(err)
			}
			do := serveLazyDo(t, path, keys, key, snapshot.LoadOptions{VerifyRate: -1})
			if c.first != "" {
				if code, _, body := do("POST", c.first, `{"limit":5}`); code != 200 {
					t.Fatalf("before the cut: %d %.200s", code, body)
				}
			}
			cut(t, path)
			if code, retry, body := do("POST", c.path, c.body); code != 503 || retry == "" || !strings.Contains(body, "changed in place") {
				t.Errorf("POST %s from a cut file: %d %.300s", c.path, code, body)
			}
			if code, _, body := do("GET", "/readyz", ""); code != 503 {
				t.Errorf("/readyz: %d %s", code, body)
			}
		})
	}

	t.Run("background pass", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "served.snap")
		if err := copyFileForTest(path, good); err != nil {
			t.Fatal(err)
		}
		done := make(chan engine.BlockStatus, 1)
		ds, _, err := snapshot.Load(path, snapshot.LoadOptions{LazyVerify: true, VerifyRate: 64 << 10, Verified: func(s engine.BlockStatus) { done <- s }})
		if err != nil {
			t.Fatal(err)
		}
		cut(t, path)
		select {
		case s := <-done:
			if s.Err == nil || !errors.Is(ds.BlockErr(), mapfile.ErrFault) {
				t.Errorf("the pass over a cut file: %+v, snapshot error %v", s, ds.BlockErr())
			}
		case <-time.After(time.Minute):
			t.Fatal("the background pass did not end")
		}
	})
}

// demoV6 writes a demo market of companies companies (seed 5, from 2022,
// with 1-minute bars of 2 tickers over 2 sessions) as a format 6
// snapshot and returns its path.
func demoV6(t *testing.T, companies int) string {
	t.Helper()
	u := demo.GenerateSize(5, demo.Size{Companies: companies, FIIs: 1, ETFs: 1, HistoryFrom: 2022, IntradayTickers: 2, IntradaySessions: 2})
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = d
	path := filepath.Join(t.TempDir(), "good.snap")
	if err := snapshot.WriteFile(path, u, snapshot.WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	return path
}

// demoV6Plain is demoV6 without what makes the index build read bars at
// open (engine.Dataset.OpenReads, whose blocks a lazy load verifies
// before it returns): no ticker rename, no share action taking the value
// of received shares. Its few blocks of bars (one of each kind, at 4
// companies) are then all left to their first use, as most of a large
// file's are.
func demoV6Plain(t *testing.T, companies int) string {
	t.Helper()
	u := demo.GenerateSize(5, demo.Size{Companies: companies, FIIs: 1, ETFs: 1, HistoryFrom: 2022, IntradayTickers: 2, IntradaySessions: 2})
	former := map[string]bool{}
	for _, r := range u.Renames {
		former[r.From] = true
	}
	u.Renames = nil
	u.Securities = slices.DeleteFunc(u.Securities, func(s engine.Security) bool { return former[s.Ticker] })
	u.Daily = slices.DeleteFunc(u.Daily, func(s engine.Series) bool { return former[s.Ticker] })
	u.Intraday = slices.DeleteFunc(u.Intraday, func(s engine.Intraday) bool { return former[s.Ticker] })
	u.ShareActions = slices.DeleteFunc(u.ShareActions, func(sa engine.ShareAction) bool {
		return sa.Type == engine.ActSpinOff || sa.Type == engine.ActSpinOffQuantity || sa.Type == engine.ActRestitutionInShares
	})
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = d
	path := filepath.Join(t.TempDir(), "good.snap")
	if err := snapshot.WriteFile(path, u, snapshot.WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	return path
}

// copyFileForTest copies src to dst.
func copyFileForTest(dst, src string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}
