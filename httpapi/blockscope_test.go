//go:build linux

package httpapi

import (
	"bufio"
	"cmp"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// scopeSnapshot writes a small demo market (companies with ratios, funds,
// 1-minute bars, indexes) as a format 6 file at path.
func scopeSnapshot(tb testing.TB, path string) {
	tb.Helper()
	u := demo.GenerateSize(7, demo.Size{Companies: 8, FIIs: 2, ETFs: 1, HistoryFrom: 2023, IntradayTickers: 3, IntradaySessions: 2,
		ReportsFrom: 2023, FundReportsFrom: 2024, EventsFrom: 2024})
	d, err := ratios.Derive(u)
	if err != nil {
		tb.Fatal(err)
	}
	u.Derived = d
	if err := snapshot.WriteFile(path, u, snapshot.WriteOptions{Version: 6}); err != nil {
		tb.Fatal(err)
	}
}

// scopeServer serves ds as serve does (Prepare, then Publish) at clock.
func scopeServer(tb testing.TB, ds *engine.Dataset, clock Clock) *testServer {
	tb.Helper()
	ts := &testServer{store: &engine.Store{}, reg: prometheus.NewRegistry()}
	ts.api = New(DefaultConfig(), ts.store, testKeys(tb), clock, ts.reg, nil)
	if clock == nil {
		ts.store.Publish(ds) // the snapshot clock reads the store
	}
	ts.api.Prepare(ds, "", time.Time{})
	ts.store.Publish(ds)
	return ts
}

// scopeRequest is one request of the block scope tests.
type scopeRequest struct {
	path, key string
}

// noneRequests returns realistic requests of every route that reads no
// column block (Route.Blocks BlocksNone, or blocksFor answering
// BlocksNone for these parameters), for both plans' keys: ds's index,
// company, fund and dates.
func noneRequests(tb testing.TB, ds *engine.Dataset) []scopeRequest {
	tb.Helper()
	ix := ds.Indexes()[0].Symbol
	var company, fund, search string
	for i := range ds.Issuers() {
		is := &ds.Issuers()[i]
		switch {
		case is.Kind == engine.KindCompany && company == "" && len(is.Assets) > 0:
			company, search = is.ID, strings.Fields(is.Name)[0]
		case is.Kind == engine.KindFII && fund == "" && len(is.Assets) > 0:
			fund = is.Assets[0].Ticker
		}
	}
	if company == "" || fund == "" {
		tb.Fatalf("no company (%q) or fund (%q) in the demo market", company, fund)
	}
	ticker := ""
	for i := range ds.Issuers() {
		if is := &ds.Issuers()[i]; is.ID == company {
			ticker = is.Assets[0].Ticker
		}
	}
	asOf := (engine.DateOf(ds.AsOf()) - 40).String()
	paths := []string{
		"/indexes", "/indexes?limit=1&offset=1", "/indexes/" + ix, "/indexes/" + strings.ToLower(ix),
		"/indexes/" + ix + "/highs?limit=10", "/indexes/" + ix + "/lows", "/indexes/" + ix + "/highs?limit=100",
		"/stocks/variations", "/stocks/variations?limit=3",
		"/companies", "/companies?bdr=true&show_sector=true&status=ALL&limit=5&offset=1", "/companies?search=" + search,
		"/companies/" + company, "/companies/" + ticker + "?show_logo=true&show_company_details=true&show_sector=true",
		"/companies/" + company + "?as_of=" + asOf,
		"/companies/cash-corporate-actions", "/companies/cash-corporate-actions?bdr=true&current=false&as_of=" + asOf,
		"/companies/cash-corporate-actions?format=csv", "/companies/cash-corporate-actions.csv?limit=20",
		"/companies/" + company + "/cash-corporate-actions", "/companies/" + ticker + "/cash-corporate-actions.csv",
		"/companies/" + company + "/cash-corporate-actions?as_of=" + asOf + "&format=csv",
		"/traded-funds/" + fund + "/cash-corporate-actions", "/traded-funds/" + fund + "/cash-corporate-actions.csv",
		"/companies/" + company + "/corporate-actions", "/companies/" + company + "/corporate-actions?as_of=" + asOf,
		"/companies/" + company + "/insider-transactions", "/companies/" + company + "/insider-transactions?trade=BUY",
		"/companies/" + company + "/documents", "/companies/" + company + "/documents?limit=3",
		"/companies/" + company + "/shares-history",
		"/traded-funds", "/traded-funds?limit=2",
		"/sectors", "/sectors?level=2", "/ratios/catalog", "/ratios/catalog?kind=fund",
	}
	var rs []scopeRequest
	for _, key := range []string{testKeyDelayed, testKeyEOD} {
		for _, p := range paths {
			rs = append(rs, scopeRequest{DefaultConfig().Prefix + p, key})
		}
	}
	return rs
}

// routeOf returns the route of routeTable that serves GET path (no
// prefix, no query), nil for none.
func routeOf(path string) *Route {
	for i := range routeTable { // /companies/cash-corporate-actions before /companies/:id
		if rt := &routeTable[i]; rt.Method == http.MethodGet && rt.Path == path {
			return rt
		}
	}
	param := regexp.MustCompile(`:[A-Za-z]+`)
	for i := range routeTable {
		rt := &routeTable[i]
		if rt.Method != http.MethodGet || rt.Root || !strings.Contains(rt.Path, ":") {
			continue
		}
		if regexp.MustCompile("^" + param.ReplaceAllString(regexp.QuoteMeta(rt.Path), `[^/]+`) + "$").MatchString(path) {
			return rt
		}
	}
	return nil
}

// mappingsOf returns how many mappings of path start at its first byte
// (/proc/self/maps; 0 when it cannot be read).
func mappingsOf(path string) int {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if fs := strings.Fields(l); len(fs) >= 6 && fs[5] == path && fs[2] == "00000000" {
			n++
		}
	}
	return n
}

// columnArea returns the address and length of the column area of the
// mapping of path, in whole pages ([ColumnsOffset, +Columns) of the file),
// read from /proc/self/maps.
func columnArea(tb testing.TB, path string, h snapshot.Header) (uintptr, uintptr) {
	tb.Helper()
	start := uint64(mappingStart(tb, path))
	page := uint64(os.Getpagesize())
	lo := (start + uint64(h.ColumnsOffset) + page - 1) / page * page
	hi := (start + uint64(h.ColumnsOffset+h.Columns)) / page * page
	if hi <= lo || h.Columns == 0 {
		tb.Fatalf("no column area: %+v", h)
	}
	return uintptr(lo), uintptr(hi - lo)
}

// mappingStart returns the address of the first byte of the mapping of
// path, read from /proc/self/maps.
func mappingStart(tb testing.TB, path string) uintptr {
	tb.Helper()
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		tb.Skipf("no /proc/self/maps: %v", err)
	}
	defer f.Close()
	var start uint64
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[5] != path || fs[2] != "00000000" {
			continue
		}
		lo, _, _ := strings.Cut(fs[0], "-")
		if start, err = strconv.ParseUint(lo, 16, 64); err != nil {
			tb.Fatal(err)
		}
		n++
	}
	if n != 1 {
		tb.Skipf("%d mappings of %s", n, path)
	}
	return uintptr(start)
}

func protect(tb testing.TB, addr, n uintptr, prot int) {
	tb.Helper()
	if _, _, e := unix.Syscall(unix.SYS_MPROTECT, addr, n, uintptr(prot)); e != 0 {
		tb.Fatalf("mprotect: %v", e)
	}
}

// What serve prepares for a snapshot before it publishes it (Prepare)
// reads no column page, and every route declared to read no column block
// (Route.Blocks BlocksNone, or by blocksFor for the request) answers a
// lazily loaded format 6
// snapshot with every page of its column area unreadable (mprotect
// PROT_NONE: the daily and 1-minute bars and the ratio points), for both
// plans' keys, at the snapshot's clock and at clocks after it (the
// end-of-day view of the evening of its last session, of the next day),
// with no block verified but those the load verified (the bars the index
// build read, engine.Dataset.OpenReads); each answer is that of the same file loaded
// with every block verified. A read of a column page faults: a panic
// (SetPanicOnFault) that the server answers 503 and that fails the
// Dataset (mapfile.Fault).
func TestNoneRoutesReadNoColumn(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lazy.snap")
	scopeSnapshot(t, path)
	ref := filepath.Join(dir, "ref.snap")
	if err := copyFile(path, ref); err != nil {
		t.Fatal(err)
	}
	ds, h, err := snapshot.Load(path, snapshot.LoadOptions{LazyVerify: true, VerifyRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Blocks() == nil {
		t.Fatal("no blocks to verify: not a lazy format 6 load")
	}
	full, _, err := snapshot.Load(ref, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reqs := noneRequests(t, ds)
	// The load verified the blocks of the bars the index build read
	// (OpenReads), no other.
	atOpen := ds.Blocks().Status().Verified

	// Every route declared BlocksNone, or per request, is sent.
	sent := map[*Route]bool{}
	for _, rq := range reqs {
		p, _, _ := strings.Cut(strings.TrimPrefix(rq.path, DefaultConfig().Prefix), "?")
		if rt := routeOf(p); rt != nil {
			sent[rt] = true
		} else {
			t.Fatalf("no route serves %s", p)
		}
	}
	for _, p := range companyPaths("C", "T") {
		p, _, _ = strings.Cut(p, "?")
		sent[routeOf(p)] = true // proven by TestCompanyRoutesReadTheirCompany
	}
	for i := range routeTable {
		if rt := &routeTable[i]; (rt.Blocks == BlocksNone || rt.blocksFor != nil) && !sent[rt] {
			t.Errorf("%s %s reads no block by its declaration, but is not proven here", rt.Method, rt.Path)
		}
	}

	last := engine.DateOf(ds.AsOf())
	evening := time.Date(last.Time().Year(), last.Time().Month(), last.Time().Day(), 23, 0, 0, 0, time.UTC) // 20:00 in São Paulo
	clocks := []struct {
		name  string
		clock Clock
	}{{"snapshot clock", nil}, {"the last session's evening", fixedClock(evening)}, {"the next day", fixedClock(evening.Add(14 * time.Hour))}}
	addr, n := columnArea(t, path, h)
	for _, ck := range clocks {
		want := scopeServer(t, full, ck.clock)
		type answer struct {
			status int
			body   string
		}
		got := make([]answer, len(reqs))
		func() {
			protect(t, addr, n, unix.PROT_NONE)
			defer protect(t, addr, n, unix.PROT_READ)
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			// What serve prepares before it publishes reads no column
			// page either (a fault panics the test).
			lazy := scopeServer(t, ds, ck.clock)
			for i, rq := range reqs {
				w := lazy.do(http.MethodGet, rq.path, rq.key, "")
				got[i] = answer{w.Code, w.Body.String()}
			}
		}()
		for i, rq := range reqs {
			w := want.do(http.MethodGet, rq.path, rq.key, "")
			if got[i].status != w.Code || got[i].body != w.Body.String() {
				t.Errorf("%s: %s (key %s): %d %.200s, want %d %.200s", ck.name, rq.path, rq.key[len(rq.key)-1:], got[i].status, got[i].body, w.Code, w.Body.String())
			}
			if w.Code != http.StatusOK {
				t.Errorf("%s: %s: %d %.200s", ck.name, rq.path, w.Code, w.Body.String())
			}
		}
		if st := ds.Blocks().Status(); st.Verified != atOpen {
			t.Errorf("%s: %d blocks verified by routes that read none", ck.name, st.Verified-atOpen)
		}
	}
}

// companyPaths returns requests of every route that reads the ratio
// points of the company it names and no other block (BlocksCompany,
// for these parameters): company (a company_id) and ticker (one of its
// tickers).
func companyPaths(company, ticker string) []string {
	return []string{
		"/companies/" + company + "/ratios", "/companies/" + ticker + "/ratios?format=csv",
		"/companies/" + company + "/ratios?frequency=TTM&show_calculation=true&latest_by_reference_date=true",
		"/companies/" + company + "/ratios/valuation", "/companies/" + ticker + "/ratios/valuation?show_calculation=true",
		"/companies/" + ticker + "/ratios.csv", "/companies/" + company + "/ratios/valuation.csv?frequency=ANNUAL",
		"/companies/" + company + "?show_market_cap=true", "/companies/" + ticker + "?show_market_cap=true&show_sector=true",
		"/companies/" + company + "/reports", "/companies/" + ticker + "/reports?frequency=ANNUAL&latest_by_reference_date=true",
		"/companies/" + company + "/raw-reports", "/companies/" + ticker + "/raw-reports?flat=true&report_type=DRE",
	}
}

// fundPaths returns requests of every route that reads the fund ratio
// points of the fund it names and no other block (BlocksCompany): fund
// (a company_id) and ticker (one of its tickers).
func fundPaths(fund, ticker, asOf string) []string {
	return []string{
		"/traded-funds/" + fund, "/traded-funds/" + ticker,
		"/traded-funds/" + fund + "/ratios", "/traded-funds/" + ticker + "/ratios?latest_by_reference_date=true&as_of=" + asOf,
		"/traded-funds/" + fund + "/ratios?format=csv", "/traded-funds/" + ticker + "/ratios.csv?frequency=MONTHLY",
	}
}

// The routes that read the ratio points of the company they name
// (blocksFor answering BlocksCompany) answer a lazily loaded format 6
// snapshot with every page of its column area unreadable (mprotect
// PROT_NONE) but those of that company's points and variables, for both
// plans' keys, at the snapshot's clock and the next day, verifying that
// company's blocks only; each answer is that of the same file loaded
// with every block verified. A read of another page faults: a panic
// (SetPanicOnFault) that the server answers 503 and that fails the
// Dataset (mapfile.Fault).
func TestCompanyRoutesReadTheirCompany(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lazy.snap")
	scopeSnapshot(t, path)
	ref := filepath.Join(dir, "ref.snap")
	if err := copyFile(path, ref); err != nil {
		t.Fatal(err)
	}
	full, _, err := snapshot.Load(ref, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	page := uintptr(os.Getpagesize())
	n, funds := 0, 0
	for i := range full.Issuers() {
		fi := &full.Issuers()[i]
		switch {
		case len(fi.Assets) == 0:
			continue
		case fi.IsFund() && len(fi.FundRatios()) > 0:
			if funds++; funds > 2 {
				continue
			}
		case fi.Kind != engine.KindCompany || len(fi.Ratios()) == 0:
			continue
		default:
			if n++; n > 3 {
				continue
			}
		}
		// The previous issuer's mapping, released once its Dataset is
		// collected (columnArea wants one mapping of path).
		for try := 0; try < 200 && mappingsOf(path) > 0; try++ {
			runtime.GC()
			time.Sleep(5 * time.Millisecond)
		}
		ds, h, err := snapshot.Load(path, snapshot.LoadOptions{LazyVerify: true, VerifyRate: -1})
		if err != nil {
			t.Fatal(err)
		}
		log := &blockLog{Blocks: ds.Blocks()}
		ds.SetBlocks(log)
		is, _ := ds.Issuer(fi.ID)
		// The company's points and variables, where the mapping holds
		// them: verified and split into series while readable, then the
		// rest of the column area is made unreadable.
		if err := ds.CheckIssuer(is); err != nil {
			t.Fatal(err)
		}
		lo, hi := ^uintptr(0), uintptr(0)
		span := func(p unsafe.Pointer, size uintptr) {
			a := uintptr(p)
			lo, hi = min(lo, a), max(hi, a+size)
		}
		vlo, vhi := lo, hi
		for _, g := range is.Ratios() {
			span(unsafe.Pointer(unsafe.SliceData(g.Points)), uintptr(len(g.Points))*unsafe.Sizeof(g.Points[0]))
		}
		for _, g := range is.FundRatios() {
			span(unsafe.Pointer(unsafe.SliceData(g.Points)), uintptr(len(g.Points))*unsafe.Sizeof(g.Points[0]))
		}
		plo, phi := lo, hi
		lo, hi = vlo, vhi
		for _, g := range is.Ratios() {
			for k := range g.Points {
				if vs := ds.RatioVars(&g.Points[k]); len(vs) > 0 {
					span(unsafe.Pointer(unsafe.SliceData(vs)), uintptr(len(vs))*8)
				}
			}
		}
		keep := [][2]uintptr{{plo / page * page, (phi + page - 1) / page * page}}
		if hi > lo {
			keep = append(keep, [2]uintptr{lo / page * page, (hi + page - 1) / page * page})
		}
		// The company's reports: their heads read on this first use
		// (while readable), their accounts where the mapping holds them.
		for _, r := range is.Reports() {
			if len(r.Accounts) > 0 {
				a := uintptr(unsafe.Pointer(unsafe.SliceData(r.Accounts)))
				keep = append(keep, [2]uintptr{a / page * page, (a + uintptr(len(r.Accounts))*16 + page - 1) / page * page})
			}
		}
		slices.SortFunc(keep, func(x, y [2]uintptr) int { return cmp.Compare(x[0], y[0]) })
		addr, size := columnArea(t, path, h)
		var locked [][2]uintptr
		from := addr
		for _, k := range append(keep, [2]uintptr{addr + size, addr + size}) {
			to := min(max(k[0], from), addr+size)
			if to > from {
				locked = append(locked, [2]uintptr{from, to - from})
			}
			from = max(from, k[1])
		}
		var lockedBytes uintptr
		for _, l := range locked {
			lockedBytes += l[1]
		}
		if lockedBytes < size/2 {
			t.Fatalf("%s: %d of %d bytes of the column area made unreadable: too few to tell", fi.ID, lockedBytes, size)
		}
		verified := ds.Blocks().Status().Verified
		ticker := is.Assets[0].Ticker
		last := engine.DateOf(ds.AsOf())
		nextDay := time.Date(last.Time().Year(), last.Time().Month(), last.Time().Day(), 13, 0, 0, 0, time.UTC).Add(24 * time.Hour)
		for _, ck := range []struct {
			name  string
			clock Clock
		}{{"snapshot clock", nil}, {"the next day", fixedClock(nextDay)}} {
			lazy := scopeServer(t, ds, ck.clock)
			want := scopeServer(t, full, ck.clock)
			for _, key := range []string{testKeyDelayed, testKeyEOD} {
				paths := companyPaths(fi.ID, ticker)
				if fi.IsFund() {
					paths = fundPaths(fi.ID, ticker, (last - 40).String())
				}
				for _, p := range paths {
					rq := DefaultConfig().Prefix + p
					var got *httptest.ResponseRecorder
					func() {
						for _, l := range locked {
							protect(t, l[0], l[1], unix.PROT_NONE)
						}
						defer func() {
							for _, l := range locked {
								protect(t, l[0], l[1], unix.PROT_READ)
							}
						}()
						defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
						got = lazy.do(http.MethodGet, rq, key, "")
					}()
					w := want.do(http.MethodGet, rq, key, "")
					if got.Code != w.Code || got.Body.String() != w.Body.String() || w.Code != http.StatusOK {
						t.Errorf("%s, %s: %s (key %s): %d %.200s, want %d %.200s", fi.ID, ck.name, rq, key[len(key)-1:], got.Code, got.Body.String(), w.Code, w.Body.String())
					}
				}
			}
		}
		if st := ds.Blocks().Status(); st.Verified != verified || log.all != 0 || len(log.tickers) != 0 || !slices.Equal(dedup(log.companies), []string{fi.ID}) {
			t.Errorf("%s: %d blocks verified (%d by the check), All %d times, tickers %q, companies %q", fi.ID, st.Verified, verified, log.all, log.tickers, log.companies)
		}
	}
	if n == 0 || funds == 0 {
		t.Fatalf("%d companies with ratio points, %d funds with fund ratio points in the demo market", n, funds)
	}
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// blockLog is the engine.Blocks of a Dataset that records what its
// requests verify: the tickers (CheckAsset) and the calls to All
// (CheckAll).
type blockLog struct {
	engine.Blocks
	tickers   []string
	companies []string
	all       int
}

func (b *blockLog) Company(id string) error {
	b.companies = append(b.companies, id)
	return b.Blocks.Company(id)
}

func (b *blockLog) Ticker(t string) error {
	b.tickers = append(b.tickers, t)
	return b.Blocks.Ticker(t)
}

func (b *blockLog) All() error {
	b.all++
	return b.Blocks.All()
}

// resolveView verifies what the route declares it reads (Route.Blocks,
// or blocksFor for the request), before the background pass: a route
// that reads no block answers with none verified; one that may read any
// verifies them all first; one that reads the tickers it names verifies
// those only. The rankings read none while the plan's view is made from
// the summaries (at open), and all when it is still to be made from the
// bars (a cut-off in the last session's 1-minute bars; an end-of-day view
// of a day older than the summaries hold).
func TestBlockScopeInResolveView(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lazy.snap")
	scopeSnapshot(t, path)
	probe, _, err := snapshot.Load(path, snapshot.LoadOptions{LazyVerify: true, VerifyRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	ix := probe.Indexes()[0].Symbol
	var company, a, b, intraday string
	for i := range probe.Issuers() {
		if is := &probe.Issuers()[i]; is.Kind == engine.KindCompany && len(is.Assets) > 0 {
			switch {
			case company == "":
				company, a = is.ID, is.Assets[0].Ticker
			case b == "":
				b = is.Assets[0].Ticker
			}
		}
	}
	latest := int64(0)
	for i := range probe.Assets() {
		if as := &probe.Assets()[i]; as.Intraday.Len() > 0 && as.Intraday.Times[as.Intraday.Len()-1] > latest {
			latest, intraday = as.Intraday.Times[as.Intraday.Len()-1], as.Ticker
		}
	}
	if intraday == "" {
		t.Fatal("no 1-minute bars in the demo market")
	}
	// own returns the tickers whose blocks a request naming ts verifies:
	// theirs and the ones renamed into them.
	own := func(ts ...string) []string {
		var out []string
		for _, t := range ts {
			as, _ := probe.Asset(t)
			out = append(append(out, t), as.Former...)
		}
		return out
	}
	asOf := probe.AsOf()
	inSession := time.Unix(latest, 0).Add(QuoteDelay - 30*time.Minute) // cut-off half an hour before the last bar
	old := asOf.AddDate(0, -6, 0)
	// within: the delayed cut-off a minute before the last session's
	// close, whose valuations the key's view does not show yet.
	within := timeUnix(engine.SessionComplete(probe.LastSession())).Add(QuoteDelay - time.Minute)

	for _, tc := range []struct {
		name, method, path, key, body string
		prepared, now                 time.Time // the clock at Prepare, and at the request
		want                          BlockScope
		tickers                       []string // verified (BlocksOwn)
	}{
		{name: "highs, delayed", method: "GET", path: "/indexes/" + ix + "/highs?limit=10", key: testKeyDelayed, want: BlocksNone},
		{name: "highs, eod", method: "GET", path: "/indexes/" + ix + "/highs?limit=10", key: testKeyEOD, want: BlocksNone},
		{name: "lows, eod, the next day", method: "GET", path: "/indexes/" + ix + "/lows", key: testKeyEOD, prepared: asOf.Add(24 * time.Hour), want: BlocksNone},
		{name: "variations, delayed", method: "GET", path: "/stocks/variations", key: testKeyDelayed, want: BlocksNone},
		{name: "highs, delayed, cut-off in the session", method: "GET", path: "/indexes/" + ix + "/highs", key: testKeyDelayed, now: inSession, want: BlocksAll},
		{name: "variations, eod, a day older than the summaries", method: "GET", path: "/stocks/variations", key: testKeyEOD, prepared: old, want: BlocksAll},
		{name: "company", method: "GET", path: "/companies/" + company + "?show_sector=true", key: testKeyDelayed, want: BlocksNone},
		{name: "company with market cap", method: "GET", path: "/companies/" + company + "?show_market_cap=true", key: testKeyDelayed, want: BlocksCompany},
		{name: "company with market cap, as_of", method: "GET", path: "/companies/" + company + "?show_market_cap=true&as_of=" + old.Format(time.RFC3339), key: testKeyDelayed, want: BlocksAll},
		{name: "companies with market cap, encoded", method: "GET", path: "/companies?show%5Fmarket%5Fcap=true", key: testKeyDelayed, want: BlocksAll},
		{name: "sectors", method: "GET", path: "/sectors", key: testKeyEOD, want: BlocksNone},
		{name: "ratios", method: "GET", path: "/companies/" + company + "/ratios", key: testKeyDelayed, want: BlocksCompany},
		{name: "ratios by ticker, csv", method: "GET", path: "/companies/" + a + "/ratios?format=csv", key: testKeyDelayed, want: BlocksCompany},
		{name: "valuation", method: "GET", path: "/companies/" + company + "/ratios/valuation?show_calculation=true", key: testKeyDelayed, want: BlocksCompany},
		{name: "valuation, delayed, within the delay", method: "GET", path: "/companies/" + company + "/ratios/valuation", key: testKeyDelayed, prepared: within, now: within, want: BlocksCompany},
		{name: "company with market cap, delayed, within the delay", method: "GET", path: "/companies/" + company + "?show_market_cap=true", key: testKeyDelayed, prepared: within, now: within, want: BlocksCompany},
		{name: "valuation, delayed, within the delay, its view not made", method: "GET", path: "/companies/" + company + "/ratios/valuation", key: testKeyDelayed, prepared: old, now: within, want: BlocksAll},
		{name: "valuation, as_of", method: "GET", path: "/companies/" + company + "/ratios/valuation?as_of=" + old.Format(time.RFC3339), key: testKeyDelayed, want: BlocksAll},
		{name: "ratios, encoded", method: "GET", path: "/companies/" + company + "/ratios?show%5Fcalculation=true", key: testKeyDelayed, want: BlocksAll},
		{name: "reports", method: "GET", path: "/companies/" + company + "/reports", key: testKeyDelayed, want: BlocksCompany},
		{name: "raw reports", method: "GET", path: "/companies/" + company + "/raw-reports?flat=true", key: testKeyDelayed, want: BlocksCompany},
		{name: "reports, as_of", method: "GET", path: "/companies/" + company + "/reports?as_of=" + old.Format(time.RFC3339), key: testKeyDelayed, want: BlocksAll},
		{name: "screener", method: "POST", path: "/screener", key: testKeyDelayed, body: `{}`, want: BlocksAll},
		{name: "a quote", method: "GET", path: "/quotes/" + intraday + "/current", key: testKeyDelayed, want: BlocksOwn, tickers: own(intraday)},
		{name: "two quotes", method: "POST", path: "/quotes/historical", key: testKeyDelayed, body: `{"tickers":["` + a + `","` + b + `"]}`, want: BlocksOwn, tickers: own(a, b)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds, _, err := snapshot.Load(path, snapshot.LoadOptions{LazyVerify: true, VerifyRate: -1})
			if err != nil {
				t.Fatal(err)
			}
			// The load verified the blocks of the bars the index build
			// read (OpenReads): the request's are the others.
			atOpen := ds.Blocks().Status().Verified
			log := &blockLog{Blocks: ds.Blocks()}
			ds.SetBlocks(log)
			clk := new(fixedClock)
			*clk = fixedClock(asOf)
			if !tc.prepared.IsZero() {
				*clk = fixedClock(tc.prepared)
			}
			ts := scopeServer(t, ds, clk)
			if !tc.now.IsZero() {
				*clk = fixedClock(tc.now)
			}
			w := ts.do(tc.method, DefaultConfig().Prefix+tc.path, tc.key, tc.body)
			if w.Code != http.StatusOK {
				t.Fatalf("%d %.300s", w.Code, w.Body.String())
			}
			st := log.Status()
			verified := st.Verified - atOpen
			switch tc.want {
			case BlocksCompany:
				// The company's point and variable blocks, its report
				// heads' and their accounts': at most four in the demo.
				if log.all != 0 || len(log.tickers) != 0 || verified == 0 || verified > 4 || st.Verified >= st.Blocks || !slices.Equal(dedup(log.companies), []string{company}) {
					t.Errorf("%d of %d blocks verified (All %d times, tickers %q), companies %q, want %s's blocks only", verified, st.Blocks, log.all, log.tickers, log.companies, company)
				}
			case BlocksNone:
				if verified != 0 || log.all != 0 || len(log.tickers) != 0 || len(log.companies) != 0 {
					t.Errorf("%d of %d blocks verified (All %d times, tickers %q), want none", verified, st.Blocks, log.all, log.tickers)
				}
			case BlocksAll:
				if !st.Complete() || log.all == 0 {
					t.Errorf("%d of %d blocks verified (All %d times), want all", st.Verified, st.Blocks, log.all)
				}
			case BlocksOwn:
				if log.all != 0 || len(log.companies) != 0 || st.Verified >= st.Blocks || !slices.Equal(dedup(log.tickers), tc.tickers) {
					t.Errorf("%d of %d blocks verified (All %d times), tickers %q, want those of %q only", verified, st.Blocks, log.all, log.tickers, tc.tickers)
				}
			}
		})
	}
}

// dedup returns the distinct strings of s, in their first order.
func dedup(s []string) []string {
	var out []string
	for _, x := range s {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
