package bench

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

const benchKey = "pg_bench000000000000000000000000000"

// benchKeyLight is a second key (BenchmarkFairShare: the light client
// beside the heavy one).
const benchKeyLight = "pg_light000000000000000000000000000"

// benchKeyHeavy2 is a third key (BenchmarkFairShare with
// PREGAO_FAIR_HEAVY_KEYS=2: a second heavy key).
const benchKeyHeavy2 = "pg_heavy200000000000000000000000000"

// benchKeyEOD is a key of the eod plan (BenchmarkCompaniesEOD).
const benchKeyEOD = "pg_eod00000000000000000000000000000"

var (
	once    sync.Once
	api     *httpapi.API // answer cache off: every request runs its handler
	apiKept *httpapi.API // answer cache on (the server's default)
	apiFree *httpapi.API // answer cache off, admission off
	// apiSpare is api with its admission's slots fixed at GOMAXPROCS, for
	// BenchmarkFairShare's -spare configuration (one Go processor more).
	apiSpare *httpapi.API
	ds       *engine.Dataset
	loadErr  error
)

// setup builds the scale-1 demo dataset and the API once.
func setup(b *testing.B) (*httpapi.API, *engine.Dataset) {
	b.Helper()
	once.Do(func() {
		if ds, loadErr = benchDataset(); loadErr != nil {
			return
		}
		store := &engine.Store{}
		store.Publish(ds)
		var f httpapi.KeysFile
		_, e, _ := httpapi.NewKey("bench", httpapi.PlanDelayed, ds.AsOf())
		e.SHA256 = hexSHA(benchKey)
		f.Keys = append(f.Keys, e)
		_, e2, _ := httpapi.NewKey("light", httpapi.PlanDelayed, ds.AsOf())
		e2.SHA256 = hexSHA(benchKeyLight)
		f.Keys = append(f.Keys, e2)
		_, e3, _ := httpapi.NewKey("heavy2", httpapi.PlanDelayed, ds.AsOf())
		e3.SHA256 = hexSHA(benchKeyHeavy2)
		f.Keys = append(f.Keys, e3)
		_, e4, _ := httpapi.NewKey("eod", httpapi.PlanEOD, ds.AsOf())
		e4.SHA256 = hexSHA(benchKeyEOD)
		f.Keys = append(f.Keys, e4)
		keys, err := httpapi.NewKeys(f)
		if err != nil {
			loadErr = err
			return
		}
		cfg := httpapi.DefaultConfig()
		cfg.AnswerCacheBytes = -1
		api = httpapi.New(cfg, store, keys, httpapi.SnapshotClock{Store: store}, prometheus.NewRegistry(), nil)
		apiKept = httpapi.New(httpapi.DefaultConfig(), store, keys, httpapi.SnapshotClock{Store: store}, prometheus.NewRegistry(), nil)
		cfg.Admission = &httpapi.Admission{Cores: -1}
		apiFree = httpapi.New(cfg, store, keys, httpapi.SnapshotClock{Store: store}, prometheus.NewRegistry(), nil)
		cfg.Admission = &httpapi.Admission{Cores: runtime.GOMAXPROCS(0)}
		apiSpare = httpapi.New(cfg, store, keys, httpapi.SnapshotClock{Store: store}, prometheus.NewRegistry(), nil)
	})
	if loadErr != nil {
		b.Fatal(loadErr)
	}
	return api, ds
}

// benchDataset returns the scale-1 demo dataset, built in memory, or,
// when PREGAO_BENCH_SNAPSHOT names a snapshot file, that file loaded as
// serve loads it (a format 6 file's blocks verified on first use; with
// PREGAO_BENCH_BLOCKS=off, as if verified at open: the requests then
// pay no check).
func benchDataset() (*engine.Dataset, error) {
	if path := os.Getenv("PREGAO_BENCH_SNAPSHOT"); path != "" {
		ds, _, err := snapshot.Load(path, snapshot.LoadOptions{LazyVerify: true})
		if err == nil && os.Getenv("PREGAO_BENCH_BLOCKS") == "off" {
			ds.SetBlocks(nil)
		}
		return ds, err
	}
	u := demo.Generate(1, 1)
	d, err := ratios.Derive(u)
	if err != nil {
		return nil, err
	}
	u.Derived = d
	return engine.Build(u)
}

// sink is a reusable http.ResponseWriter that counts the body.
type sink struct {
	h      http.Header
	status int
	n      int
}

func (s *sink) Header() http.Header         { return s.h }
func (s *sink) WriteHeader(code int)        { s.status = code }
func (s *sink) Write(p []byte) (int, error) { s.n += len(p); return len(p), nil }

// rereader is a request body that can be rewound without allocating.
type rereader struct{ bytes.Reader }

func (r *rereader) Close() error { return nil }

// run serves the same request b.N times and reports the body size (as
// sent: compressed when hdr asks for it). hdr holds header name/value
// pairs; the value "$ETAG" is the ETag of the plain answer, and an
// If-None-Match header makes 304 the expected status.
func run(b *testing.B, method, path, body string, hdr ...string) {
	a, _ := setup(b)
	runOn(b, a, method, path, body, hdr...)
}

// runKept is run on the API with its answer cache on: after the first
// request, the answer is sent from the cache.
func runKept(b *testing.B, method, path, body string) {
	setup(b)
	runOn(b, apiKept, method, path, body)
}

func runOn(b *testing.B, a *httpapi.API, method, path, body string, hdr ...string) {
	req, err := http.NewRequest(method, path, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+benchKey)
	want := http.StatusOK
	for i := 0; i+1 < len(hdr); i += 2 {
		v := hdr[i+1]
		if v == "$ETAG" {
			w := &sink{h: http.Header{}}
			a.ServeHTTP(w, req)
			v = w.h.Get("ETag")
		}
		if http.CanonicalHeaderKey(hdr[i]) == "If-None-Match" {
			want = http.StatusNotModified
		}
		req.Header.Set(hdr[i], v)
	}
	rb := &rereader{}
	raw := []byte(body)
	w := &sink{h: http.Header{}}
	serve := func() {
		if body != "" {
			rb.Reset(raw)
			req.Body = rb
			req.ContentLength = int64(len(raw))
		}
		w.n, w.status = 0, 0
		clear(w.h)
		a.ServeHTTP(w, req)
	}
	serve()
	if w.status != want {
		b.Fatalf("%s %s: status %d (body %d bytes), want %d", method, path, w.status, w.n, want)
	}
	b.SetBytes(int64(w.n))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		serve()
	}
}

// tickers returns the n most liquid stock tickers of the dataset.
func tickers(b *testing.B, n int) []string {
	_, d := setup(b)
	s := d.Screener()
	var out []string
	for _, r := range s.ByVolume {
		out = append(out, s.Assets[r].Ticker)
		if len(out) == n {
			break
		}
	}
	if len(out) < n {
		for _, a := range d.Assets() {
			if len(out) == n {
				break
			}
			if a.StockType != engine.ClassMacro && !contains(out, a.Ticker) {
				out = append(out, a.Ticker)
			}
		}
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func quotesBody(b *testing.B, n int, extra string) string {
	ts := tickers(b, n)
	return `{"tickers":["` + strings.Join(ts, `","`) + `"]` + extra + `}`
}

func BenchmarkQuotesCurrent500(b *testing.B) {
	run(b, "POST", "/v2/quotes", quotesBody(b, 500, `,"type":"current"`))
}

func BenchmarkQuotesHistorical500x1Y(b *testing.B) {
	_, d := setup(b)
	end := d.LastSession()
	body := quotesBody(b, 500, fmt.Sprintf(`,"type":"historical","start_date":"%s","end_date":"%s"`, end-365, end))
	run(b, "POST", "/v2/quotes", body)
}

// BenchmarkTotalReturn500x20Y: POST /quotes/total-return of the 500 most
// liquid tickers over the 20 years to the last session (the demo's
// histories start in 2000; younger tickers answer their whole history).
// ns/op divided by 500 is the time per ticker.
func BenchmarkTotalReturn500x20Y(b *testing.B) {
	_, d := setup(b)
	end := d.LastSession()
	start := engine.MakeDate(end.Time().Year()-20, end.Time().Month(), end.Time().Day())
	body := quotesBody(b, 500, fmt.Sprintf(`,"start_date":"%s","end_date":"%s","method":"net"`, start, end))
	sessions := 0
	for _, t := range tickers(b, 500) {
		a, _ := d.Asset(t)
		lo, hi := a.DayRange(start, end)
		sessions += hi - lo
	}
	run(b, "POST", "/v2/quotes/total-return", body)
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/500, "µs/ticker")
	b.ReportMetric(float64(sessions)/500, "sessions/ticker")
}

func BenchmarkScreenerDefault(b *testing.B) {
	run(b, "POST", "/v2/screener", `{}`)
}

func BenchmarkScreenerDropletFilterSort(b *testing.B) {
	run(b, "POST", "/v2/screener", `{"primaryOnly":false,"filters":[{"type":"droplet","id":"PRICE_TO_EARNINGS","op":"between","min":0,"max":30}],"sort":[{"by":"droplet:DIVIDEND_YIELD","order":"desc"}]}`)
}

// The side-by-side harness's screener request (w3), made per request:
// what a client gets when its query is not one the answer cache holds.
func BenchmarkScreenerW3(b *testing.B) {
	run(b, "POST", "/v2/screener", `{"filters":[{"type":"droplet","id":"DIVIDEND_YIELD","op":">","value":0.05}],"sort":[{"by":"droplet:DIVIDEND_YIELD","order":"desc"}],"limit":50}`)
}

func BenchmarkIndexHighs(b *testing.B) {
	run(b, "GET", "/v2/indexes/IBOV/highs", "")
}

func BenchmarkQuoteSingleCurrent(b *testing.B) {
	t := tickers(b, 1)[0]
	run(b, "GET", "/v2/quotes/"+t+"?type=current", "")
}

func BenchmarkCompanyDetail(b *testing.B) {
	_, d := setup(b)
	run(b, "GET", "/v2/companies/"+d.Screener().Assets[d.Screener().ByVolume[0]].Ticker, "")
}

func BenchmarkQuoteSingleChart(b *testing.B) {
	t := tickers(b, 1)[0]
	run(b, "GET", "/v2/quotes/"+t+"?type=chart", "")
}

func BenchmarkCompanies(b *testing.B) {
	for _, q := range []string{"", "?bdr=true&show_sector=true&show_market_cap=true"} {
		b.Run("query="+q, func(b *testing.B) { run(b, "GET", "/v2/companies"+q, "") })
	}
}

// BenchmarkCompaniesEOD: the companies with their market caps, as a
// delayed key and an eod key see them (answer cache off). With the
// snapshot's clock the eod plan does not show the last session: its
// market caps are priced at the session before, one valuation per
// company, the list made once per quote view (dsInfo.cutCompanies), as
// the eod screener's columns are.
func BenchmarkCompaniesEOD(b *testing.B) {
	_, d := setup(b)
	one := d.Screener().Assets[d.Screener().ByVolume[0]].Ticker
	for _, k := range []struct{ name, key string }{{"delayed", benchKey}, {"eod", benchKeyEOD}} {
		b.Run(k.name, func(b *testing.B) {
			run(b, "GET", "/v2/companies?show_market_cap=true", "", "Authorization", "Bearer "+k.key)
		})
		b.Run(k.name+"/one", func(b *testing.B) {
			run(b, "GET", "/v2/companies/"+one+"?show_market_cap=true&show_sector=true", "", "Authorization", "Bearer "+k.key)
		})
	}
}

func BenchmarkCashActions(b *testing.B) {
	run(b, "GET", "/v2/companies/cash-corporate-actions", "")
}

func BenchmarkCatalog(b *testing.B) {
	run(b, "GET", "/v2/ratios/catalog", "")
}

func BenchmarkCashActionsMonth(b *testing.B) {
	_, d := setup(b)
	end := d.LastSession()
	run(b, "GET", fmt.Sprintf("/v2/companies/cash-corporate-actions?start_date=%s&end_date=%s", end-30, end), "")
}

// BenchmarkRatios serves a liquid company's ratios: every fundamental
// indicator and frequency with calculations (the largest answer), the
// latest TTM valuation per reference date, and a fund's monthly ratios.
func BenchmarkRatios(b *testing.B) {
	_, d := setup(b)
	t := d.Screener().Assets[d.Screener().ByVolume[0]].Ticker
	var fund string
	for _, a := range d.Assets() {
		if a.StockType == engine.ClassFundUnit && a.Issuer != nil && len(a.Issuer.FundRatios()) > 0 {
			fund = a.Ticker
			break
		}
	}
	if fund == "" {
		b.Fatal("no fund with ratios in the demo")
	}
	for _, c := range []struct{ name, path string }{
		{"fundamental-all", "/v2/companies/" + t + "/ratios?show_calculation=true"},
		{"valuation-ttm-latest", "/v2/companies/" + t + "/ratios/valuation?frequency=TTM&latest_by_reference_date=true"},
		{"fund", "/v2/traded-funds/" + fund + "/ratios"},
	} {
		b.Run(c.name, func(b *testing.B) { run(b, "GET", c.path, "") })
	}
}

// BenchmarkRawReports serves a liquid company's raw CVM reports of one
// year (every statement, aggregation and version) as trees and flat, and
// its standardized reports of that year.
func BenchmarkRawReports(b *testing.B) {
	_, d := setup(b)
	t := d.Screener().Assets[d.Screener().ByVolume[0]].Ticker
	year := d.LastSession().Time().Year() - 1
	for _, c := range []struct{ name, path string }{
		{"tree-1y", fmt.Sprintf("/v2/companies/%s/raw-reports?year=%d", t, year)},
		{"flat-1y", fmt.Sprintf("/v2/companies/%s/raw-reports?flat=true&year=%d", t, year)},
		{"standardized-1y", fmt.Sprintf("/v2/companies/%s/reports?year=%d", t, year)},
	} {
		b.Run(c.name, func(b *testing.B) { run(b, "GET", c.path, "") })
	}
}

// Conditional and compressed answers (bytes/op is what goes on the wire).

func BenchmarkCompanyDetail304(b *testing.B) {
	_, d := setup(b)
	run(b, "GET", "/v2/companies/"+d.Screener().Assets[d.Screener().ByVolume[0]].Ticker, "", "If-None-Match", "$ETAG")
}

func BenchmarkCashActionsGzip(b *testing.B) {
	run(b, "GET", "/v2/companies/cash-corporate-actions", "", "Accept-Encoding", "gzip")
}

func BenchmarkCashActionsZstd(b *testing.B) {
	run(b, "GET", "/v2/companies/cash-corporate-actions", "", "Accept-Encoding", "zstd")
}

func BenchmarkCompaniesZstd(b *testing.B) {
	run(b, "GET", "/v2/companies", "", "Accept-Encoding", "zstd")
}

func BenchmarkQuotesHistorical500x1YZstd(b *testing.B) {
	_, d := setup(b)
	end := d.LastSession()
	body := quotesBody(b, 500, fmt.Sprintf(`,"type":"historical","start_date":"%s","end_date":"%s"`, end-365, end))
	run(b, "POST", "/v2/quotes", body, "Accept-Encoding", "zstd")
}

func BenchmarkQuotesHistorical500x1YGzip(b *testing.B) {
	_, d := setup(b)
	end := d.LastSession()
	body := quotesBody(b, 500, fmt.Sprintf(`,"type":"historical","start_date":"%s","end_date":"%s"`, end-365, end))
	run(b, "POST", "/v2/quotes", body, "Accept-Encoding", "gzip")
}

// Company search: a ticker prefix (the ordered ticker index) and a name
// word (a scan of the folded names, computed once per dataset).
func BenchmarkSearchTicker(b *testing.B) { run(b, "GET", "/v2/companies?search=LITA", "") }

func BenchmarkSearchName(b *testing.B) { run(b, "GET", "/v2/companies?search=energia", "") }

// The five workloads of the side-by-side harness (../shared/perf), with
// the answer cache on: the cost of a repeated request.
func BenchmarkKept(b *testing.B) {
	_, d := setup(b)
	t := d.Screener().Assets[d.Screener().ByVolume[0]].Ticker
	for _, c := range []struct{ name, method, path, body string }{
		{"quotes-current-500", "POST", "/v2/quotes", quotesBody(b, 500, `,"type":"current"`)},
		{"screener-droplet", "POST", "/v2/screener", `{"primaryOnly":false,"filters":[{"type":"droplet","id":"PRICE_TO_EARNINGS","op":">","value":0}],"sort":[{"by":"droplet:PRICE_TO_EARNINGS","order":"desc"}],"limit":50}`},
		{"index-highs", "GET", "/v2/indexes/IBOV/highs", ""},
		{"index-highs-limit10", "GET", "/v2/indexes/IBOV/highs?limit=10", ""}, // w4
		{"ratios-ttm", "GET", "/v2/companies/" + t + "/ratios?frequency=TTM", ""},
	} {
		b.Run(c.name, func(b *testing.B) { runKept(b, c.method, c.path, c.body) })
	}
}

// BenchmarkAsOf serves the point-in-time routes of a liquid company with
// as_of a year before the snapshot's as_of (a restated past: every
// series filtered by publication) and, for comparison, the same request
// without it.
func BenchmarkAsOf(b *testing.B) {
	_, d := setup(b)
	t := d.Screener().Assets[d.Screener().ByVolume[0]].Ticker
	asOf := d.LastSession().Time().AddDate(-1, 0, 0).Format(time.DateOnly)
	for _, c := range []struct{ name, path string }{
		{"fundamental-all", "/v2/companies/" + t + "/ratios?show_calculation=true"},
		{"valuation-ttm-latest", "/v2/companies/" + t + "/ratios/valuation?frequency=TTM&latest_by_reference_date=true"},
		{"valuation-all", "/v2/companies/" + t + "/ratios/valuation?show_calculation=true"},
		{"raw-reports-latest", "/v2/companies/" + t + "/raw-reports?latest_by_reference_date=true&flat=true"},
		{"company-market-cap", "/v2/companies/" + t + "?show_market_cap=true"},
		{"company-cash", "/v2/companies/" + t + "/cash-corporate-actions"},
	} {
		b.Run(c.name+"/now", func(b *testing.B) { run(b, "GET", c.path, "") })
		sep := "?"
		if strings.Contains(c.path, "?") {
			sep = "&"
		}
		b.Run(c.name+"/as_of", func(b *testing.B) { run(b, "GET", c.path+sep+"as_of="+asOf, "") })
	}
}

// BenchmarkScreenerAsOf screens as BenchmarkScreenerDefault and
// BenchmarkScreenerDropletFilterSort do, with as_of a year before the
// snapshot's as_of: the screener's columns as known then, computed for
// the request.
func BenchmarkScreenerAsOf(b *testing.B) {
	_, d := setup(b)
	asOf := d.LastSession().Time().AddDate(-1, 0, 0).Format(time.DateOnly)
	for _, c := range []struct{ name, body string }{
		{"default", `{"as_of":"` + asOf + `"}`},
		{"droplet-filter-sort", `{"as_of":"` + asOf + `","primaryOnly":false,"filters":[{"type":"droplet","id":"PRICE_TO_EARNINGS","op":"between","min":0,"max":30}],"sort":[{"by":"droplet:DIVIDEND_YIELD","order":"desc"}]}`},
	} {
		b.Run(c.name, func(b *testing.B) { run(b, "POST", "/v2/screener", c.body) })
	}
}

// BenchmarkQuotesAdjusted500x20Y: POST /quotes of the tickers and window
// of BenchmarkTotalReturn500x20Y, daily and adjusted: what the total
// return's answer is measured against.
func BenchmarkQuotesAdjusted500x20Y(b *testing.B) {
	_, d := setup(b)
	end := d.LastSession()
	start := engine.MakeDate(end.Time().Year()-20, end.Time().Month(), end.Time().Day())
	body := quotesBody(b, 500, fmt.Sprintf(`,"type":"historical","adjusted":true,"start_date":"%s","end_date":"%s"`, start, end))
	run(b, "POST", "/v2/quotes", body)
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/500, "µs/ticker")
}
