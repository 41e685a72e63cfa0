package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// Every operation answers on the snapshot built from the real sample
// files (what make run-real serves): 200 with JSON for a traded company
// (AMBEV), its tickers, a listed fund with reports, the IBOV portfolio
// (with the reductor of its file's footer), and the BDRs, index members
// and share events the samples carry are there.
func TestRealSnapshotEndpoints(t *testing.T) {
	if testing.Short() {
		t.Skip("imports the real samples")
	}
	ds, _ := realDataset(t)
	fund := ""
	bdrs, members := 0, 0
	for _, a := range ds.Assets() {
		if a.Issuer == nil {
			continue
		}
		if fund == "" && a.StockType == engine.ClassFundUnit && len(a.Issuer.FundRatios()) > 0 && a.Latest.Valid() {
			fund = a.Ticker
		}
		if a.StockType == engine.ClassBDR {
			bdrs++
		}
	}
	if ix, ok := ds.Index("IBOV"); ok {
		members = len(ix.Index.Members)
	}
	if fund == "" || bdrs == 0 || members == 0 {
		t.Fatalf("real snapshot: fund %q, %d BDR tickers, %d IBOV members", fund, bdrs, members)
	}
	api, key := apiWithKey(t, ds)
	for _, rt := range httpapi.Routes() {
		if rt.Root || rt.Admin { // the push feed's: httpapi's tests
			continue
		}
		path := "/v2" + rt.Path
		path = strings.ReplaceAll(path, ":symbol", "IBOV")
		path = strings.ReplaceAll(path, ":ticker", "ABEV3")
		path = strings.ReplaceAll(path, ":name", "companies.parquet")
		path = strings.ReplaceAll(path, ":fundIdentifier", fund)
		path = strings.ReplaceAll(path, ":id", "ABEV")
		body := ""
		switch strings.TrimSuffix(rt.Path, ".csv") { // a CSV form's route takes its route's body
		case "/quotes":
			body = `{"tickers":["ABEV3","PETR4","` + fund + `"],"type":"current"}`
		case "/quotes/total-return", "/quotes/current", "/quotes/historical", "/quotes/chart":
			body = `{"tickers":["ABEV3","PETR4","` + fund + `"]}`
		case "/screener":
			body = `{}`
		}
		if rt.Stream {
			path += "?tickers=ABEV3,PETR4," + fund
		}
		r := httptest.NewRequest(rt.Method, path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+key)
		if rt.Stream {
			// A stream lasts: its context, ended at once, ends it after
			// its head and the session's state.
			ctx, cancel := context.WithCancel(r.Context())
			cancel()
			r = r.WithContext(ctx)
		}
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		// The files are built on the first request (503 meanwhile, with
		// Retry-After): asked again until they are.
		for deadline := time.Now().Add(5 * time.Minute); strings.HasPrefix(rt.Path, "/files") && w.Code == http.StatusServiceUnavailable && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
			r = httptest.NewRequest(rt.Method, path, nil)
			r.Header.Set("Authorization", "Bearer "+key)
			w = httptest.NewRecorder()
			api.ServeHTTP(w, r)
		}
		valid := json.Valid(w.Body.Bytes())
		switch {
		case strings.HasPrefix(rt.Path, "/files/"):
			valid = strings.HasPrefix(w.Body.String(), "PAR1")
		case rt.Media == "text/csv":
			valid = strings.HasPrefix(w.Header().Get("Content-Type"), "text/csv") && w.Body.Len() > 0
		case rt.Stream:
			valid = strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") &&
				strings.Contains(w.Body.String(), "event: session\n")
		}
		if w.Code != http.StatusOK || !valid {
			t.Errorf("%s %s: %d %.200s", rt.Method, path, w.Code, w.Body)
		}
	}
	// IBOV is the portfolio of 2021-03-26 (the latest on or before the
	// quotes' last session), whose footer reads "Redutor;;;18.296.80337677573";
	// SMLL's file lost its footer: no reductor. SMLL has no portfolio on
	// or before the as-of day (2022-02-04): the earliest after it, of
	// 2022-05-13, is served, and the answer says it is later.
	for sym, want := range map[string]string{
		"IBOV": `"portfolio_date":"2021-03-26T00:00:00Z","portfolio_after_as_of":false,"member_count":82,"reductor":18296803.37677573,`,
		"SMLL": `"portfolio_date":"2022-05-13T00:00:00Z","portfolio_after_as_of":true,`,
	} {
		r := httptest.NewRequest("GET", "/v2/indexes/"+sym, nil)
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), want) {
			t.Errorf("%s portfolio: %d %.300s, want %s", sym, w.Code, w.Body, want)
		}
	}
	// The share event of the samples (AMBEV's 2014 subscription) is served.
	r := httptest.NewRequest("GET", "/v2/companies/ABEV3/corporate-actions", nil)
	r.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	api.ServeHTTP(w, r)
	if !strings.Contains(w.Body.String(), `"type":"SUBSCRIPTION"`) {
		t.Errorf("AMBEV's share events: %s", w.Body)
	}
	t.Logf("real snapshot: fund %s, %d BDR tickers, %d IBOV members", fund, bdrs, members)
}

// A B3 supplement with a capital restitution in shares (records in the
// GetListedSupplementCompany layout: Bradespar handing out Vale shares,
// dated within the samples' sessions), imported with the real samples,
// is served with its legs' tickers resolved from the quotes' ISINs; the
// original's prices before it are adjusted by the value handed out,
// P / (P - r x P_received); the record under a label no type maps is
// named in the import summary.
func TestRealImportShareLegs(t *testing.T) {
	if testing.Short() {
		t.Skip("imports the real samples")
	}
	supp := filepath.Join(t.TempDir(), "GetListedSupplementCompany_BRAP.json")
	body := `[{"tradingName":"BRADESPAR","code":"BRAP","codeCVM":"18724","numberCommonShares":"122.523.049","numberPreferredShares":"226.652.194",` +
		`"cashDividends":[],"stockDividends":[` +
		`{"assetIssued":"BRVALEACNOR0","factor":"9,13000000000","approvedOn":"10/03/2021","isinCode":"BRBRAPACNPR2","label":"REST CAP ACOES","lastDatePrior":"25/03/2021","remarks":"Entrega de ações VALE3"},` +
		`{"assetIssued":"BRBRAPACNPR2","factor":"1,00000000000","approvedOn":"10/03/2021","isinCode":"BRBRAPACNPR2","label":"ATUALIZACAO","lastDatePrior":"25/03/2021","remarks":""}` +
		`],"subscriptions":[]}]`
	if err := os.WriteFile(supp, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, summary := realDataset(t, "--supplement", supp)
	if want := `skipped: 1 share events of B3 supplements under labels no share-action type maps: 1 "ATUALIZACAO"`; !strings.Contains(summary, want) {
		t.Errorf("summary lacks %q:\n%s", want, summary)
	}
	api, key := apiWithKey(t, ds)
	r := httptest.NewRequest("GET", "/v2/companies/BRAP4/corporate-actions", nil)
	r.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	api.ServeHTTP(w, r)
	want := `"legs":[{"leg_type":"ORIGINAL_ASSET","isin_code":"BRBRAPACNPR2","ticker":"BRAP4","factor":1},` +
		`{"leg_type":"RECEIVED_ASSET","isin_code":"BRVALEACNOR0","ticker":"VALE3","factor":0.0913}],"type":"CAPITAL_RESTITUTION_IN_SHARES","label":"REST CAP ACOES"}`
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), want) || !strings.Contains(w.Body.String(), `"issued_asset_isin_code":"BRVALEACNOR0"`) {
		t.Errorf("BRAP4 corporate actions: %d %s\nwant %s", w.Code, w.Body, want)
	}
	closeOn := func(ticker string, d engine.Date) engine.Num {
		a, ok := ds.Asset(ticker)
		if !ok {
			t.Fatalf("%s not quoted", ticker)
		}
		for i, x := range a.Daily.Dates {
			if x == d {
				return a.Daily.Close(i)
			}
		}
		t.Fatalf("%s has no session on %s", ticker, d)
		return 0
	}
	p, pv := closeOn("BRAP4", engine.MakeDate(2021, 3, 25)), closeOn("VALE3", engine.MakeDate(2021, 3, 26))
	wantF := p / (p - 0.0913*pv)
	for d, want := range map[engine.Date]engine.Num{engine.MakeDate(2021, 3, 23): wantF, engine.MakeDate(2021, 3, 25): wantF, engine.MakeDate(2021, 3, 26): 1} {
		if f, err := ds.AdjustmentFactor("BRAP4", d); err != nil || math.Abs(float64(f-want)) > 1e-12 {
			t.Errorf("BRAP4 adjustment factor on %s: %v %v, want %v", d, f, err, want)
		}
	}
}

// realDataset loads the snapshot of the real sample files, imported with
// the import flags extra (none: the shared realFixture's), and returns
// the dataset and the import's summary.
func realDataset(t *testing.T, extra ...string) (*engine.Dataset, string) {
	t.Helper()
	var snap, summary string
	if len(extra) == 0 {
		f := realFixtureOf(t)
		snap, summary = f.snap, f.summary
	} else {
		work := t.TempDir()
		var err error
		if snap, summary, err = importAndBuild(work, extra...); err != nil {
			t.Fatal(err)
		}
	}
	ds, _, err := snapshot.Load(snap, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ds, summary
}

// realFixture is the real sample files imported (pregao import
// --real-testdata) into a bundle and built into a snapshot, once per test
// binary: an import and a build take 15 to 25 s under the race detector,
// and five tests read them.
type realFixture struct {
	dir, bundle, snap string
	summary           string // the import's standard output
}

var realShared struct {
	sync.Once
	f   *realFixture
	err error
}

// realFixtureOf makes the shared fixture on first use; TestMain removes
// its folder.
func realFixtureOf(t *testing.T) *realFixture {
	t.Helper()
	realShared.Do(func() {
		dir, err := os.MkdirTemp("", "pregao-real-")
		if err != nil {
			realShared.err = err
			return
		}
		f := &realFixture{dir: dir}
		realShared.f = f
		f.snap, f.summary, realShared.err = importAndBuild(dir)
		f.bundle = filepath.Join(dir, "bundle")
	})
	if realShared.err != nil {
		t.Fatal(realShared.err)
	}
	return realShared.f
}

// importAndBuild imports the real sample files into work/bundle (with
// the import's extra arguments) and builds work/real.snap from it: the
// snapshot's path and the import's standard output.
func importAndBuild(work string, extra ...string) (snap, summary string, err error) {
	dir, err := datafile.RealDir()
	if err != nil {
		return "", "", err
	}
	var so, se bytes.Buffer
	if err := runImport(context.Background(), append([]string{"--out", filepath.Join(work, "bundle"), "--real-testdata", dir}, extra...), &so, &se); err != nil {
		return "", "", fmt.Errorf("import: %v\n%s", err, se.String())
	}
	summary = so.String()
	snap = filepath.Join(work, "real.snap")
	if err := runBuild(context.Background(), []string{"--from", filepath.Join(work, "bundle"), "--out", snap}, &so, &se); err != nil {
		return "", "", fmt.Errorf("build: %v", err)
	}
	return snap, summary, nil
}

// TestRealIBOVClose computes the IBOV level of 2021-03-26 from that day's
// portfolio download and COTAHIST (the real samples) and compares it with
// the close the press reported that day: 114,780 points, up 0.91 % from
// 113,749.90 (DCI, "Ibovespa hoje 26/03/2021"; Estadão/Diário da Região
// for the 25th). A wrong reductor, quantity base or price would be off by
// far more than the press's rounding to the point. The variation is not
// compared: the API prices the 25th with the 26th's portfolio (docs/api.md,
// index levels), B3 with the 25th's.
func TestRealIBOVClose(t *testing.T) {
	if testing.Short() {
		t.Skip("imports the real samples")
	}
	ds, _ := realDataset(t)
	api, key := apiWithKey(t, ds)
	r := httptest.NewRequest("GET", "/v2/quotes/IBOV?start_date=2021-03-26&end_date=2021-03-26", nil)
	r.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	api.ServeHTTP(w, r)
	var pts []struct {
		Date  string  `json:"date"`
		Close float64 `json:"close_price"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &pts); err != nil || w.Code != http.StatusOK || len(pts) != 1 {
		t.Fatalf("%d %.300s: %v", w.Code, w.Body, err)
	}
	const published = 114780 // points, as reported to the point
	if got := pts[0].Close; math.Abs(got-published) >= 1 {
		t.Errorf("IBOV 2021-03-26 close %.2f, published %d (to the point)", got, published)
	}
	t.Logf("IBOV 2021-03-26: computed %.2f, published 114,780", pts[0].Close)
}

// TestRealIBOVPreviousLevel checks the level docs/api.md gives for
// 2021-03-25 priced with the portfolio of the 26th against the official
// files themselves: Σ Qtde. Teórica (IBOVDia_26-03-21.csv) × PREULT of
// that member's standard-lot row (BDI 02) in COTAHIST_D25032021 ÷ the
// file's reductor, read here without the importers, and against what the
// API answers for that day and the variation of the 26th. A figure in the
// docs that neither the files nor the server give fails.
func TestRealIBOVPreviousLevel(t *testing.T) {
	if testing.Short() {
		t.Skip("imports the real samples")
	}
	dir, err := datafile.RealDir()
	if err != nil {
		t.Fatal(err)
	}
	read := func(rel string) []byte {
		t.Helper()
		f, err := datafile.Open(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// COTAHIST: CODBDI at 11-12, CODNEG at 13-24, PREULT (2 implied
	// decimals) at 109-121 (the layout's 1-based columns).
	closes := map[string]float64{}
	for _, l := range strings.Split(string(read("b3-cotahist/pedrosampaiomatias__Project-Ibovespa/COTAHIST_D25032021.TXT.zst")), "\n") {
		if len(l) < 121 || l[:2] != "01" || l[10:12] != "02" {
			continue
		}
		v, err := strconv.ParseInt(l[108:121], 10, 64)
		if err != nil {
			t.Fatalf("PREULT %q: %v", l[108:121], err)
		}
		closes[strings.TrimSpace(l[12:24])] = float64(v) / 100
	}
	// IBOVDia: "Código;Ação;Tipo;Qtde. Teórica;Part. (%)" rows, thousands
	// with dots; the footer's Redutor 18.296.80337677573 is 18,296,803.37677573
	// (its decimal comma missing: the integer ends three digits after the
	// last thousands dot).
	var sum, reductor float64
	members := 0
	for _, l := range strings.Split(string(read("b3-indexes/pedrosampaiomatias__Project-Ibovespa/IBOVDia_26-03-21.csv.zst")), "\n") {
		f := strings.Split(strings.TrimRight(l, "\r"), ";")
		if len(f) < 4 {
			continue
		}
		if strings.HasPrefix(f[0], "Redutor") {
			i := strings.LastIndexByte(f[3], '.') + 4
			r, err := strconv.ParseFloat(strings.ReplaceAll(f[3][:i], ".", "")+"."+f[3][i:], 64)
			if err != nil {
				t.Fatal(err)
			}
			reductor = r
			continue
		}
		q, err := strconv.ParseInt(strings.ReplaceAll(f[3], ".", ""), 10, 64)
		if err != nil || !engine.ValidTicker(f[0]) {
			continue // the title, header and total lines
		}
		c, ok := closes[f[0]]
		if !ok {
			t.Fatalf("member %s has no BDI 02 row on 2021-03-25", f[0])
		}
		sum += float64(q) * c
		members++
	}
	if members != 82 || reductor < 18e6 || reductor > 19e6 {
		t.Fatalf("%d members, reductor %v", members, reductor)
	}
	fromFiles := sum / reductor

	ds, _ := realDataset(t)
	api, key := apiWithKey(t, ds)
	r := httptest.NewRequest("GET", "/v2/quotes/IBOV?start_date=2021-03-25&end_date=2021-03-26", nil)
	r.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	api.ServeHTTP(w, r)
	var pts []struct {
		Close     float64 `json:"close_price"`
		Variation float64 `json:"variation"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &pts); err != nil || w.Code != http.StatusOK || len(pts) != 2 {
		t.Fatalf("%d %.300s: %v", w.Code, w.Body, err)
	}
	if math.Abs(pts[0].Close-fromFiles) > 1e-6 {
		t.Errorf("IBOV 2021-03-25 with the 26th's portfolio: API %.6f, the files %.6f", pts[0].Close, fromFiles)
	}
	doc, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	level := strconv.FormatFloat(math.Round(fromFiles*100)/100, 'f', 2, 64)
	level = level[:len(level)-6] + "," + level[len(level)-6:] // 113,765.09
	variation := strconv.FormatFloat(math.Round(pts[1].Variation*1e5)/1e3, 'f', 3, 64)
	for _, want := range []string{"(" + level + ":", "+" + variation + " %"} {
		if !strings.Contains(text, want) {
			t.Errorf("docs/api.md lacks %q: the files give %.4f for the 25th, the API a variation of %.5f %% for the 26th", want, fromFiles, 100*pts[1].Variation)
		}
	}
	t.Logf("IBOV 2021-03-25 priced with the 26th's portfolio: %.4f (82 members), variation of the 26th %+.4f %%", fromFiles, 100*pts[1].Variation)
}
