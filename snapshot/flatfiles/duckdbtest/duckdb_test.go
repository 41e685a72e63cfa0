package duckdbtest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/snapshot/flatfiles"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// scale is the demo's scale (PREGAO_FILES_SCALE, default 1).
func scale() int {
	if n, err := strconv.Atoi(os.Getenv("PREGAO_FILES_SCALE")); err == nil && n > 0 {
		return n
	}
	return 1
}

// fixture is the demo's Dataset, its Parquet files, the API serving it
// with a delayed key, and a DuckDB connection.
type fixture struct {
	ds  *engine.Dataset
	dir string
	m   *flatfiles.Manifest
	api http.Handler
	key string
	db  *sql.DB

	knownAtChecks int // companies whose known_at was checked (checkValuationKnownAt)
}

func setup(t *testing.T) *fixture {
	t.Helper()
	start := time.Now()
	u := demo.Generate(1, scale())
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = d
	ds, err := engine.Build(u)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("demo scale %d built in %s", scale(), time.Since(start).Round(time.Millisecond))
	f := &fixture{ds: ds, dir: t.TempDir()}
	start = time.Now()
	f.m, err = flatfiles.Export(context.Background(), ds, f.dir, flatfiles.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d Parquet and CSV files exported in %s", len(f.m.Files), time.Since(start).Round(time.Millisecond))
	store := &engine.Store{}
	store.Publish(ds)
	key, e, err := httpapi.NewKey("test", httpapi.PlanDelayed, ds.AsOf())
	if err != nil {
		t.Fatal(err)
	}
	keys, err := httpapi.NewKeys(httpapi.KeysFile{Keys: []httpapi.KeyEntry{e}})
	if err != nil {
		t.Fatal(err)
	}
	f.api = httpapi.New(httpapi.DefaultConfig(), store, keys, httpapi.SnapshotClock{Store: store}, nil, nil)
	f.key = key
	// Instants are compared in UTC, whatever the machine's zone: DuckDB
	// shows and formats a TIMESTAMP WITH TIME ZONE in the session's zone,
	// the machine's by default (TZ=America/Sao_Paulo wrote 00:01 UTC as
	// 21:01).
	conn, err := duckdb.NewConnector("", func(ex driver.ExecerContext) error {
		_, err := ex.ExecContext(context.Background(), "SET TimeZone = 'UTC'", nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	f.db = sql.OpenDB(conn)
	t.Cleanup(func() { f.db.Close() })
	return f
}

// get answers path with the API, decoded with numbers kept as text.
func (f *fixture) get(t *testing.T, path string, v any) {
	t.Helper()
	r := httptest.NewRequest("GET", path, nil)
	r.Header.Set("Authorization", "Bearer "+f.key)
	w := httptest.NewRecorder()
	f.api.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Fatalf("GET %s: %d %.200s", path, w.Code, w.Body)
	}
	dec := json.NewDecoder(w.Body)
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// files returns the DuckDB list literal of a dataset's Parquet files.
func (f *fixture) files(dataset string) string {
	var q []string
	for _, e := range f.m.Files {
		if e.Dataset == dataset && e.Format == flatfiles.Parquet {
			q = append(q, "'"+filepath.Join(f.dir, e.File)+"'")
		}
	}
	return "[" + strings.Join(q, ",") + "]"
}

// num is an API number (json.Number or nil) as a float64, NaN for null.
func num(t *testing.T, v any) float64 {
	t.Helper()
	switch v := v.(type) {
	case nil:
		return math.NaN()
	case json.Number:
		x, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	t.Fatalf("not a number: %#v", v)
	return 0
}

func nullable(v sql.NullFloat64) float64 {
	if !v.Valid {
		return math.NaN()
	}
	return v.Float64
}

// same reports whether a and b are the same double (both NaN: both null).
func same(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

// TestDuckDB opens every exported file with DuckDB and
// checks, for every ticker of the demo, the daily row counts, and for a
// sample of tickers every value of a year of raw and adjusted quotes,
// the total return, the cash actions and the ratios, and every index
// level, against the API's answers, bit for bit.
func TestDuckDB(t *testing.T) {
	f := setup(t)
	t.Run("api", func(t *testing.T) { f.readsTheAPIsNumbers(t) })
	t.Run("researcher example", func(t *testing.T) { f.researcherExample(t) })
	t.Run("csv", func(t *testing.T) { f.csvEqualsParquet(t) })
}

// csvEqualsParquet reads every CSV file with DuckDB, each column as the
// type of the Parquet file's (DESCRIBE), and checks that it holds the
// Parquet file's rows, value for value (nulls as nulls).
func (f *fixture) csvEqualsParquet(t *testing.T) {
	start := time.Now()
	n := 0
	for _, e := range f.m.Files {
		if e.Format != flatfiles.CSV {
			continue
		}
		pq := filepath.Join(f.dir, strings.TrimSuffix(e.File, ".csv.gz")+".parquet")
		rows, err := f.db.Query("DESCRIBE SELECT * FROM read_parquet('" + pq + "')")
		if err != nil {
			t.Fatal(err)
		}
		var cols []string
		for rows.Next() {
			var name, typ string
			var null, key, def, extra sql.NullString
			if err := rows.Scan(&name, &typ, &null, &key, &def, &extra); err != nil {
				t.Fatal(err)
			}
			cols = append(cols, fmt.Sprintf("'%s': '%s'", name, typ))
		}
		rows.Close()
		csv := fmt.Sprintf("read_csv('%s', header = true, auto_detect = false, delim = ',', quote = '\"', escape = '\"', columns = {%s})",
			filepath.Join(f.dir, e.File), strings.Join(cols, ", "))
		// The same rows, as multisets (the order is TestExportParquetEqualsCSV's):
		// the count and the sum of the rows' hashes, one scan of each.
		var rowsCSV, rowsParquet int64
		var sumCSV, sumParquet string
		if err := f.db.QueryRow("SELECT count(*), sum(hash(t))::VARCHAR FROM "+csv+" t").Scan(&rowsCSV, &sumCSV); err != nil {
			t.Fatalf("%s: %v", e.File, err)
		}
		if err := f.db.QueryRow("SELECT count(*), sum(hash(t))::VARCHAR FROM read_parquet('"+pq+"') t").Scan(&rowsParquet, &sumParquet); err != nil {
			t.Fatalf("%s: %v", pq, err)
		}
		if rowsCSV != e.Rows || rowsParquet != e.Rows || sumCSV != sumParquet {
			t.Errorf("%s: %d rows (manifest %d), their hashes summing to %s; %s: %d rows, %s", e.File, rowsCSV, e.Rows, sumCSV, filepath.Base(pq), rowsParquet, sumParquet)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no CSV file")
	}
	t.Logf("%d CSV files equal to their Parquet files in %s", n, time.Since(start).Round(time.Millisecond))
}

func (f *fixture) readsTheAPIsNumbers(t *testing.T) {
	start := time.Now()

	// Every file opens, with the manifest's rows.
	for _, e := range f.m.Files {
		if e.Format != flatfiles.Parquet {
			continue // csvEqualsParquet
		}
		var n int64
		if err := f.db.QueryRow("SELECT count(*) FROM read_parquet('" + filepath.Join(f.dir, e.File) + "')").Scan(&n); err != nil || n != e.Rows {
			t.Fatalf("%s: %d rows (%v), manifest %d", e.File, n, err, e.Rows)
		}
	}

	// Every ticker's daily rows: those the API serves.
	counts := map[string]int{}
	rows, err := f.db.Query("SELECT ticker, count(*) FROM read_parquet(" + f.files("daily_bars") + ") GROUP BY ticker")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var tk string
		var n int
		rows.Scan(&tk, &n)
		counts[tk] = n
	}
	rows.Close()
	as := f.ds.Assets()
	var traded []*engine.Asset
	for i := range as {
		if as[i].StockType == engine.ClassMacro {
			continue
		}
		traded = append(traded, &as[i])
		if counts[as[i].Ticker] != as[i].Daily.Len() {
			t.Errorf("%s: %d daily rows in the files, %d served", as[i].Ticker, counts[as[i].Ticker], as[i].Daily.Len())
		}
	}
	if len(counts) != len(traded) {
		t.Errorf("%d tickers in the files, %d traded", len(counts), len(traded))
	}

	// A sample of tickers, every value.
	step := max(1, len(traded)/40)
	year := f.ds.AsOf().Year() - 1
	checked, shareActions := 0, 0
	companies := map[string]bool{}
	for i := 0; i < len(traded); i += step {
		a := traded[i]
		if a.Daily.Len() == 0 {
			continue
		}
		f.checkQuotes(t, a.Ticker, year)
		f.checkTotalReturn(t, a)
		f.checkCash(t, a.Ticker)
		if a.CompanyID != "" && !companies[a.CompanyID] {
			companies[a.CompanyID] = true
			f.checkRatios(t, a.CompanyID)
			f.checkValuation(t, a.CompanyID)
			shareActions += f.checkShareActions(t, a.CompanyID)
		}
		checked++
	}
	t.Logf("%d files, %d tickers counted, %d checked value by value (%d companies' ratios, %d share action rows) in %s",
		len(f.m.Files), len(traded), checked, len(companies), shareActions, time.Since(start).Round(time.Millisecond))

	// The first and the last session's 1-minute bars of a sample of
	// tickers, and every macro series.
	start = time.Now()
	var minutes []string
	for _, e := range f.m.Files {
		if e.Dataset == "minute_bars" && e.Format == flatfiles.Parquet {
			minutes = append(minutes, e.File)
		}
	}
	if len(minutes) == 0 {
		t.Fatal("no minute_bars file")
	}
	for _, file := range []string{minutes[0], minutes[len(minutes)-1]} {
		rows, err := f.db.Query(`SELECT DISTINCT ticker FROM read_parquet(?) ORDER BY ticker`, filepath.Join(f.dir, file))
		if err != nil {
			t.Fatal(err)
		}
		var tickers []string
		for rows.Next() {
			var tk string
			rows.Scan(&tk)
			tickers = append(tickers, tk)
		}
		rows.Close()
		for i := 0; i < len(tickers); i += max(1, len(tickers)/5) {
			f.checkMinutes(t, file, tickers[i])
		}
	}
	macro := 0
	for i := range as {
		if as[i].StockType == engine.ClassMacro {
			macro += f.checkMacro(t, as[i].Ticker)
		}
	}
	t.Logf("%d minute files, their first and last checked; %d macro values checked in %s", len(minutes), macro, time.Since(start).Round(time.Millisecond))

	// Every index with a level, every session.
	start = time.Now()
	levels := 0
	ixs := f.ds.Indexes()
	for i := range ixs {
		if ixs[i].HasLevel() {
			levels += f.checkIndexLevels(t, &ixs[i])
		}
	}
	if levels == 0 {
		t.Error("no index level checked")
	}
	t.Logf("%d index levels checked in %s", levels, time.Since(start).Round(time.Millisecond))
}

// checkIndexLevels compares every session of an index's levels in the
// files (open, level, as_of) with the API's daily points, asked year by
// year, and returns the number of rows compared.
func (f *fixture) checkIndexLevels(t *testing.T, ix *engine.IndexData) int {
	t.Helper()
	var lo, hi string
	if err := f.db.QueryRow(`SELECT strftime(min(date), '%Y-%m-%d'), strftime(max(date), '%Y-%m-%d') FROM read_parquet(`+f.files("index_levels")+`) WHERE symbol = ?`, ix.Symbol).Scan(&lo, &hi); err != nil {
		t.Fatalf("%s: %v", ix.Symbol, err)
	}
	var api []map[string]any
	yLo, _ := strconv.Atoi(lo[:4])
	yHi, _ := strconv.Atoi(hi[:4])
	for y := yLo; y <= yHi; y++ {
		var part []map[string]any
		f.get(t, fmt.Sprintf("/v2/quotes/%s/historical?start_date=%d-01-01&end_date=%d-12-31", ix.Symbol, y, y), &part)
		api = append(api, part...)
	}
	rows, err := f.db.Query(`SELECT strftime(date, '%Y-%m-%d'), open, level, strftime(as_of, '%Y-%m-%d')
		FROM read_parquet(`+f.files("index_levels")+`) WHERE symbol = ? ORDER BY date`, ix.Symbol)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var d, asOf string
		var o, c float64
		if err := rows.Scan(&d, &o, &c, &asOf); err != nil {
			t.Fatal(err)
		}
		if n < len(api) {
			p := api[n]
			if !strings.HasPrefix(p["date"].(string), d) || !same(o, num(t, p["open_price"])) || !same(c, num(t, p["close_price"])) || asOf != ix.AsOf.String() {
				t.Fatalf("%s %s: files %v %v %s, API %v", ix.Symbol, d, o, c, asOf, p)
			}
		}
		n++
	}
	if n != len(api) || n == 0 {
		t.Fatalf("%s: %d level rows in the files, %d answered", ix.Symbol, n, len(api))
	}
	return n
}

// checkQuotes compares a year of raw and adjusted daily quotes.
func (f *fixture) checkQuotes(t *testing.T, ticker string, year int) {
	t.Helper()
	for _, adjusted := range []bool{false, true} {
		var api []map[string]any
		f.get(t, fmt.Sprintf("/v2/quotes/%s/historical?start_date=%d-01-01&end_date=%d-12-31&adjusted=%v", ticker, year, year, adjusted), &api)
		q := `SELECT strftime(date, '%Y-%m-%d'), open::DOUBLE, high::DOUBLE, low::DOUBLE, close::DOUBLE, volume::DOUBLE, adjustment_factor
			FROM read_parquet(?) WHERE ticker = ? ORDER BY date`
		rows, err := f.db.Query(q, filepath.Join(f.dir, fmt.Sprintf("daily_bars-%d.parquet", year)), ticker)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var d string
			var o, h, l, c, v sql.NullFloat64
			var fac float64
			if err := rows.Scan(&d, &o, &h, &l, &c, &v, &fac); err != nil {
				t.Fatal(err)
			}
			if n >= len(api) {
				n++
				continue
			}
			p := api[n]
			got := []float64{nullable(o), nullable(h), nullable(l), nullable(c), nullable(v)}
			if adjusted {
				for k := range 4 {
					got[k] /= fac // the API's rule: price / adjustment_factor
				}
			}
			want := []float64{num(t, p["open_price"]), num(t, p["highest_price"]), num(t, p["lowest_price"]), num(t, p["close_price"]), num(t, p["volume"])}
			for k := range got {
				if !same(got[k], want[k]) {
					t.Fatalf("%s %s adjusted=%v column %d: files %v, API %v", ticker, d, adjusted, k, got[k], want[k])
				}
			}
			if !strings.HasPrefix(p["date"].(string), d) {
				t.Fatalf("%s row %d: files %s, API %s", ticker, n, d, p["date"])
			}
			n++
		}
		rows.Close()
		if n != len(api) {
			t.Fatalf("%s %d adjusted=%v: %d rows in the files, %d answered", ticker, year, adjusted, n, len(api))
		}
	}
}

// checkTotalReturn compares the whole total-return series, gross and net
// (method=net).
func (f *fixture) checkTotalReturn(t *testing.T, a *engine.Asset) {
	t.Helper()
	first, last := a.Daily.Dates[0], a.Daily.Dates[a.Daily.Len()-1]
	for _, method := range []string{"gross", "net"} {
		var api []map[string]any
		f.get(t, fmt.Sprintf("/v2/quotes/%s/total-return?start_date=%s&end_date=%s&method=%s", a.Ticker, first, last, method), &api)
		rows, err := f.db.Query(`SELECT strftime(date, '%Y-%m-%d'), close::DOUBLE, cash_`+method+`::DOUBLE, index_`+method+`
			FROM read_parquet(`+f.files("total_return")+`) WHERE ticker = ? ORDER BY date`, a.Ticker)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var d string
			var c, cash, ix sql.NullFloat64
			rows.Scan(&d, &c, &cash, &ix)
			if n < len(api) {
				p := api[n]
				if !strings.HasPrefix(p["date"].(string), d) || !same(nullable(c), num(t, p["close_price"])) ||
					!same(nullable(cash), num(t, p["cash_value"])) || !same(nullable(ix), num(t, p["total_return_index"])) {
					t.Fatalf("%s %s %s: files %v %v %v, API %v", a.Ticker, method, d, nullable(c), nullable(cash), nullable(ix), p)
				}
			}
			n++
		}
		rows.Close()
		if n != len(api) {
			t.Fatalf("%s %s: %d total-return rows in the files, %d answered", a.Ticker, method, n, len(api))
		}
	}
}

// checkCash compares every version of the ticker's class's cash actions:
// amounts, dates, publication instant, adjustment factor and which
// version is current.
func (f *fixture) checkCash(t *testing.T, ticker string) {
	t.Helper()
	var api, current []map[string]any
	f.get(t, "/v2/companies/"+ticker+"/cash-corporate-actions?current=false&limit=1000", &api)
	f.get(t, "/v2/companies/"+ticker+"/cash-corporate-actions?limit=1000", &current)
	isCurrent := map[string]bool{}
	for _, p := range current {
		isCurrent[p["id"].(string)] = true
	}
	type row struct {
		declared, net, correction, factor float64
		priorEx, payment, approval, pub   string
		current                           bool
	}
	files := map[string]row{}
	rows, err := f.db.Query(`SELECT id, declared_value::DOUBLE, net_value::DOUBLE, monetary_correction::DOUBLE, adjustment_factor,
			coalesce(strftime(prior_ex_date, '%Y-%m-%d'), ''), coalesce(strftime(payment_date, '%Y-%m-%d'), ''),
			coalesce(strftime(approval_date, '%Y-%m-%d'), ''), strftime(publish_date, '%Y-%m-%dT%H:%M:%SZ'), "current"
		FROM read_parquet(`+f.files("cash_actions")+`) WHERE ticker = ?`, ticker)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var d, n, c, fac sql.NullFloat64
		var r row
		if err := rows.Scan(&id, &d, &n, &c, &fac, &r.priorEx, &r.payment, &r.approval, &r.pub, &r.current); err != nil {
			t.Fatal(err)
		}
		r.declared, r.net, r.correction, r.factor = nullable(d), nullable(n), nullable(c), nullable(fac)
		files[id] = r
	}
	rows.Close()
	if len(api) >= 1000 {
		return // more than a page: the counts are not comparable
	}
	day := func(v any) string {
		if s, ok := v.(string); ok && len(s) >= 10 {
			return s[:10]
		}
		return ""
	}
	for _, p := range api {
		id := p["id"].(string)
		r, ok := files[id]
		if !ok || !same(r.declared, num(t, p["declared_value"])) || !same(r.net, num(t, p["net_value"])) || !same(r.correction, num(t, p["monetary_correction"])) ||
			!same(r.factor, num(t, p["adjustment_factor"])) || r.priorEx != day(p["prior_ex_date"]) || r.payment != day(p["payment_date"]) ||
			r.approval != day(p["approval_date"]) || r.pub != p["publish_date"] || r.current != isCurrent[id] {
			t.Fatalf("%s cash action %s: files %+v (%v), API %v (current %v)", ticker, id, r, ok, p, isCurrent[id])
		}
	}
	if len(files) != len(api) {
		t.Fatalf("%s: %d cash actions in the files, %d answered", ticker, len(files), len(api))
	}
}

// checkRatios compares the company-level annual points of every
// fundamental indicator.
func (f *fixture) checkRatios(t *testing.T, company string) {
	t.Helper()
	var api map[string]map[string][]map[string]any
	f.get(t, "/v2/companies/"+company+"/ratios?frequency=ANNUAL", &api)
	// A per-class point's id is the indicator's with the class (the
	// API's EARNINGS_PER_SHARE_PN).
	rows, err := f.db.Query(`SELECT indicator || coalesce('_' || class, ''), strftime(reference_date, '%Y-%m-%d'), strftime(publish_date, '%Y-%m-%dT%H:%M:%SZ'), value
		FROM read_parquet(`+f.files("ratios")+`) WHERE company_id = ? AND frequency = 'ANNUAL' AND kind = 'FUNDAMENTAL'
		ORDER BY 1, reference_date, publish_date`, company)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string][]string{}
	for rows.Next() {
		var ind, ref, pub string
		var v sql.NullFloat64
		rows.Scan(&ind, &ref, &pub, &v)
		got[ind] = append(got[ind], fmt.Sprint(ref, " ", pub, " ", math.Float64bits(nullable(v))))
	}
	n := 0
	for ind, freqs := range api {
		if len(freqs["ANNUAL"]) == 0 {
			delete(api, ind)
			continue
		}
		var want []string
		for _, p := range freqs["ANNUAL"] {
			ref := p["reference_date"].(string)[:10]
			want = append(want, fmt.Sprint(ref, " ", p["publish_date"], " ", math.Float64bits(num(t, p["value"]))))
		}
		if fmt.Sprint(got[ind]) != fmt.Sprint(want) {
			t.Fatalf("%s %s: files %v, API %v", company, ind, got[ind], want)
		}
		n += len(want)
	}
	if len(got) != len(api) {
		t.Fatalf("%s: %d annual fundamental indicators in the files, %d answered", company, len(got), len(api))
	}
}

// checkValuation compares every point of every valuation indicator of a
// company, every frequency, per class (the API's id suffix), with its
// publication instant.
func (f *fixture) checkValuation(t *testing.T, company string) {
	t.Helper()
	var api map[string]map[string][]map[string]any
	f.get(t, "/v2/companies/"+company+"/ratios/valuation", &api)
	rows, err := f.db.Query(`SELECT indicator || coalesce('_' || class, ''), frequency, strftime(reference_date, '%Y-%m-%d'), strftime(publish_date, '%Y-%m-%dT%H:%M:%SZ'), value
		FROM read_parquet(`+f.files("ratios")+`) WHERE company_id = ? AND kind = 'VALUATION'
		ORDER BY 1, 2, reference_date, publish_date`, company)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string][]string{}
	for rows.Next() {
		var ind, freq, ref, pub string
		var v sql.NullFloat64
		rows.Scan(&ind, &freq, &ref, &pub, &v)
		got[ind+" "+freq] = append(got[ind+" "+freq], fmt.Sprint(ref, " ", pub, " ", math.Float64bits(nullable(v))))
	}
	want := map[string][]string{}
	for ind, freqs := range api {
		for freq, ps := range freqs {
			for _, p := range ps {
				want[ind+" "+freq] = append(want[ind+" "+freq], fmt.Sprint(p["reference_date"].(string)[:10], " ", p["publish_date"], " ", math.Float64bits(num(t, p["value"]))))
			}
		}
	}
	for k, w := range want {
		if fmt.Sprint(got[k]) != fmt.Sprint(w) {
			g := got[k]
			i := 0
			for i < len(g) && i < len(w) && g[i] == w[i] {
				i++
			}
			t.Fatalf("%s %s: %d points in the files, %d answered; first difference at %d: files %v, API %v",
				company, k, len(g), len(w), i, g[i:min(i+2, len(g))], w[i:min(i+2, len(w))])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d valuation series in the files, %d answered", company, len(got), len(want))
	}
	if f.knownAtChecks < knownAtCompanies {
		f.checkValuationKnownAt(t, company)
	}
}

// knownAtCompanies is how many companies checkValuationKnownAt checks
// (two queries over the whole ratios file each).
const knownAtCompanies = 5

// checkValuationKnownAt checks known_at as a point-in-time filter: just
// after the last publication of a filing that valuation points priced at
// later sessions divide by, the points published by then are in the
// API's answer with as_of then exactly when their known_at is at or
// before it (publish_date alone would let through the points priced at
// sessions not closed yet).
func (f *fixture) checkValuationKnownAt(t *testing.T, company string) {
	t.Helper()
	var last sql.NullTime
	err := f.db.QueryRow(`SELECT max(publish_date) FROM read_parquet(`+f.files("ratios")+`) WHERE company_id = ? AND kind = 'VALUATION' AND known_at > publish_date`, company).Scan(&last)
	if err != nil {
		t.Fatal(err)
	}
	if !last.Valid {
		return // no point known after its publication
	}
	at := last.Time.Add(time.Second)
	asOf := at.UTC().Format(time.RFC3339)
	var api map[string]map[string][]map[string]any
	f.get(t, "/v2/companies/"+company+"/ratios/valuation?as_of="+url.QueryEscape(asOf), &api)
	answered := map[string]bool{}
	for ind, freqs := range api {
		for freq, ps := range freqs {
			for _, p := range ps {
				answered[fmt.Sprint(ind, " ", freq, " ", p["reference_date"].(string)[:10], " ", p["publish_date"])] = true
			}
		}
	}
	rows, err := f.db.Query(`SELECT indicator || coalesce('_' || class, ''), frequency, strftime(reference_date, '%Y-%m-%d'), strftime(publish_date, '%Y-%m-%dT%H:%M:%SZ'), known_at <= ?
		FROM read_parquet(`+f.files("ratios")+`) WHERE company_id = ? AND kind = 'VALUATION' AND publish_date <= ?`, at, company, at)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	known, ahead := 0, 0
	for rows.Next() {
		var ind, freq, ref, pub string
		var isKnown bool
		rows.Scan(&ind, &freq, &ref, &pub, &isKnown)
		k := fmt.Sprint(ind, " ", freq, " ", ref, " ", pub)
		if isKnown != answered[k] {
			t.Fatalf("%s at %s: %s: known_at says known %t, the API's as_of answers it %t", company, asOf, k, isKnown, answered[k])
		}
		if isKnown {
			known++
		} else {
			ahead++
		}
	}
	if ahead == 0 {
		t.Errorf("%s at %s: no point published by then and priced later", company, asOf)
	}
	f.knownAtChecks++
	if f.knownAtChecks == 1 {
		t.Logf("%s at %s: %d valuation points published and known, %d published but priced at sessions closed later", company, asOf, known, ahead)
	}
}

// checkMinutes compares a session's 1-minute bars of a ticker, raw, with
// the instants in UTC, with the API's 60-second series of that day.
func (f *fixture) checkMinutes(t *testing.T, file, ticker string) {
	t.Helper()
	day := strings.TrimSuffix(strings.TrimPrefix(file, "minute_bars-"), ".parquet")
	var api []map[string]any
	f.get(t, fmt.Sprintf("/v2/quotes/%s/historical?interval=60&start_date=%s&end_date=%s", ticker, day, day), &api)
	rows, err := f.db.Query(`SELECT epoch_ms(time), open::DOUBLE, high::DOUBLE, low::DOUBLE, close::DOUBLE, volume::DOUBLE, adjustment_factor
		FROM read_parquet(?) WHERE ticker = ? ORDER BY time`, filepath.Join(f.dir, file), ticker)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var ms int64
		var o, h, l, c, v sql.NullFloat64
		var fac float64
		if err := rows.Scan(&ms, &o, &h, &l, &c, &v, &fac); err != nil {
			t.Fatal(err)
		}
		if n < len(api) {
			p := api[n]
			at, err := time.Parse(time.RFC3339, p["date"].(string))
			got := []float64{nullable(o), nullable(h), nullable(l), nullable(c), nullable(v), fac}
			want := []float64{num(t, p["open_price"]), num(t, p["highest_price"]), num(t, p["lowest_price"]), num(t, p["close_price"]), num(t, p["volume"]), num(t, p["adjustment_factor"])}
			if err != nil || at.UnixMilli() != ms || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s %s bar %d: files %s %v, API %v", ticker, day, n, time.UnixMilli(ms).UTC().Format(time.RFC3339), got, p)
			}
		}
		n++
	}
	if n != len(api) || n == 0 {
		t.Fatalf("%s %s: %d minute bars in the files, %d answered", ticker, day, n, len(api))
	}
}

// checkMacro compares every value of a macro series with the API's
// daily quotes, asked year by year.
func (f *fixture) checkMacro(t *testing.T, series string) int {
	t.Helper()
	rows, err := f.db.Query(`SELECT strftime(date, '%Y-%m-%d'), value::DOUBLE FROM read_parquet(`+f.files("macro_series")+`) WHERE series = ? ORDER BY date`, series)
	if err != nil {
		t.Fatal(err)
	}
	var dates []string
	var values []float64
	for rows.Next() {
		var d string
		var v sql.NullFloat64
		rows.Scan(&d, &v)
		dates, values = append(dates, d), append(values, nullable(v))
	}
	rows.Close()
	if len(dates) == 0 {
		t.Fatalf("%s: no row", series)
	}
	var api []map[string]any
	y0, _ := strconv.Atoi(dates[0][:4])
	y1, _ := strconv.Atoi(dates[len(dates)-1][:4])
	for y := y0; y <= y1; y++ {
		var part []map[string]any
		f.get(t, fmt.Sprintf("/v2/quotes/%s/historical?start_date=%d-01-01&end_date=%d-12-31", series, y, y), &part)
		api = append(api, part...)
	}
	if len(api) != len(dates) {
		t.Fatalf("%s: %d values in the files, %d answered", series, len(dates), len(api))
	}
	for i, p := range api {
		if !strings.HasPrefix(p["date"].(string), dates[i]) || !same(values[i], num(t, p["close_price"])) {
			t.Fatalf("%s %s: files %v, API %v", series, dates[i], values[i], p)
		}
	}
	return len(api)
}

// checkShareActions compares a company's share actions, leg by leg.
func (f *fixture) checkShareActions(t *testing.T, company string) int {
	t.Helper()
	var api []map[string]any
	f.get(t, "/v2/companies/"+company+"/corporate-actions", &api)
	var want []string
	for _, p := range api {
		legs, _ := p["legs"].([]any)
		if len(legs) == 0 {
			want = append(want, fmt.Sprint(p["prior_ex_date"].(string)[:10], " ", p["type"], " ", math.Float64bits(num(t, p["factor"])), " - -"))
		}
		for _, l := range legs {
			l := l.(map[string]any)
			want = append(want, fmt.Sprint(p["prior_ex_date"].(string)[:10], " ", p["type"], " ", math.Float64bits(math.NaN()), " ", l["ticker"], " ", math.Float64bits(num(t, l["factor"]))))
		}
	}
	rows, err := f.db.Query(`SELECT strftime(prior_ex_date, '%Y-%m-%d'), type, factor, coalesce(leg_ticker, '-'), leg_factor
		FROM read_parquet(`+f.files("share_actions")+`) WHERE company_id = ?`, company)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var d, typ, leg string
		var fac, legFac sql.NullFloat64
		rows.Scan(&d, &typ, &fac, &leg, &legFac)
		lf := "-"
		if legFac.Valid {
			lf = fmt.Sprint(math.Float64bits(legFac.Float64))
		}
		got = append(got, fmt.Sprint(d, " ", typ, " ", math.Float64bits(nullable(fac)), " ", leg, " ", lf))
	}
	slices.Sort(got)
	slices.Sort(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s share actions: files %v, API %v", company, got, want)
	}
	return len(got)
}

// researcherExample returns docs/files.md's DuckDB example: its first
// sql block.
func researcherExample(t *testing.T) string {
	t.Helper()
	return docsBlock(t, "sql")
}

// docsBlock returns the first code block of docs/files.md in lang.
func docsBlock(t *testing.T, lang string) string {
	t.Helper()
	b, err := os.ReadFile("../../../docs/files.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```"+lang+"\n")
	if !ok {
		t.Fatalf("docs/files.md: no %s block", lang)
	}
	q, _, _ := strings.Cut(rest, "```")
	return q
}

// researcherExample runs docs/files.md's DuckDB example: a year of
// daily bars joined with the total-return index.
func (f *fixture) researcherExample(t *testing.T) {
	researcherSQL := researcherExample(t)
	query := strings.NewReplacer("daily_bars-*.parquet", filepath.Join(f.dir, "daily_bars-*.parquet"),
		"total_return-*.parquet", filepath.Join(f.dir, "total_return-*.parquet")).Replace(researcherSQL)
	rows, err := f.db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var tk string
		var price, tr sql.NullFloat64
		if err := rows.Scan(&tk, &price, &tr); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("the example answered no rows")
	}
}
