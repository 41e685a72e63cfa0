package httpapi

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// lookAheadSize is the demo of the look-ahead test: small enough to be
// built once per as_of instant under -race, with restatements of reports,
// cash events and fund reports.
var lookAheadSize = demo.Size{Companies: 40, FIIs: 10, ETFs: 2, ReportsFrom: 2023, FundReportsFrom: 2024, EventsFrom: 2026, HistoryFrom: 2022}

// buildDemoDS derives and builds u (which it does not modify).
func buildDemoDS(tb testing.TB, u *engine.Universe) *engine.Dataset {
	tb.Helper()
	uu := *u
	d, err := ratios.Derive(&uu)
	if err != nil {
		tb.Fatal(err)
	}
	uu.Derived = d
	ds, err := engine.Build(&uu)
	if err != nil {
		tb.Fatal(err)
	}
	return ds
}

// serverOf serves ds with the test keys.
func serverOf(tb testing.TB, ds *engine.Dataset) *testServer {
	tb.Helper()
	ts := &testServer{store: &engine.Store{}, reg: prometheus.NewRegistry()}
	ts.store.Publish(ds)
	ts.api = New(DefaultConfig(), ts.store, testKeys(tb), nil, ts.reg, nil)
	return ts
}

// publishedBy returns the universe of what u published by t: reports,
// cash actions and fund reports published at or before t, share counts
// dated by t's day, share actions approved by then, the sessions closed
// by then, dated as of the close of the last of them (as pregao import
// dates a snapshot: its report-independent valuation points carry that
// retrieval date), the renames whose first session is one of them (the
// securities as before the others); everything else (registry, securities, the catalog's
// derivation rules, the rest of the metadata) as in u. Its derived
// ratios are computed from that data only.
func publishedBy(u *engine.Universe, t time.Time) *engine.Universe {
	p := *u
	p.Derived = engine.Derived{}
	p.Intraday = nil
	p.Reports = nil
	for _, r := range u.Reports {
		if r.KnownAt(t) {
			p.Reports = append(p.Reports, r)
		}
	}
	p.CashActions = nil
	for _, a := range u.CashActions {
		if !a.PublishDate.After(engine.StampOf(t)) {
			p.CashActions = append(p.CashActions, a)
		}
	}
	p.FundReports = nil
	for _, r := range u.FundReports {
		if !r.PublishDate.After(t) {
			p.FundReports = append(p.FundReports, r)
		}
	}
	p.Shares = nil
	for _, s := range u.Shares {
		if s.Date <= engine.SaoPauloDay(t) {
			p.Shares = append(p.Shares, s)
		}
	}
	p.ShareActions = nil
	for _, sa := range u.ShareActions {
		if sa.KnownAt(t) {
			p.ShareActions = append(p.ShareActions, sa)
		}
	}
	p.Daily = make([]engine.Series, len(u.Daily))
	for i, s := range u.Daily {
		n := sort.Search(len(s.Dates), func(k int) bool { return engine.SessionClose(s.Dates[k]).After(t) })
		p.Daily[i] = engine.Series{Ticker: s.Ticker, Dates: s.Dates[:n], Open: s.Open[:n], High: s.High[:n], Low: s.Low[:n],
			Close: s.Close[:n], Volume: s.Volume[:n], Quantity: s.Quantity[:n], Trades: s.Trades[:n]}
	}
	last := lastSessionOf(&p)
	if last.Valid() && engine.SessionClose(last).Before(p.Meta.AsOf) {
		p.Meta.AsOf = engine.SessionClose(last)
	}
	// A rename is known from its first session under the new ticker: a
	// snapshot of before lists the ticker under its former name, still
	// listed, and has no security of the new one.
	p.Renames = nil
	later := map[string]string{} // new ticker -> former, renamed after last
	for _, rn := range u.Renames {
		if rn.Date <= last {
			p.Renames = append(p.Renames, rn)
		} else {
			later[rn.To] = rn.From
		}
	}
	if len(later) > 0 {
		p.Securities = nil
		for _, sec := range u.Securities {
			if _, ok := later[sec.Ticker]; ok {
				continue
			}
			for _, from := range later {
				if sec.Ticker == from {
					sec.ListedTo = engine.NoDate
				}
			}
			p.Securities = append(p.Securities, sec)
		}
		p.Daily = slices.DeleteFunc(p.Daily, func(s engine.Series) bool { _, ok := later[s.Ticker]; return ok })
	}
	return &p
}

// lastSessionOf returns the newest date of u's daily series that are not
// macro series (B3's last session), NoDate when none.
func lastSessionOf(u *engine.Universe) engine.Date {
	macro := map[string]bool{}
	for _, s := range u.Securities {
		if s.StockType == engine.ClassMacro {
			macro[s.Ticker] = true
		}
	}
	last := engine.NoDate
	for _, s := range u.Daily {
		if n := len(s.Dates); n > 0 && !macro[s.Ticker] {
			last = max(last, s.Dates[n-1])
		}
	}
	return last
}

// TestAsOfLookAhead is the look-ahead proof of as_of, on a demo with
// restatements: for random (route, identifier, as_of) triples,
//
//   - no publish_date in the answer is after as_of;
//   - the answer equals the one a Dataset built from only the data
//     published by as_of (publishedBy) gives without as_of, valuation
//     points at that Dataset's last session and the company detail's
//     market capitalization included (as_of prices the latest valuation
//     at the last session closed by then: docs/api.md);
//   - every route has triples where as_of shows a version that a later
//     publication replaced (a restatement, a corrected dividend, a new
//     share count): as_of changes the answer, not only its length.
func TestAsOfLookAhead(t *testing.T) {
	if testing.Short() {
		t.Skip("builds one Dataset per as_of instant")
	}
	if raceEnabled {
		t.Skip("77 s under the race detector against 10 s without: make test runs it in its pass without -race")
	}
	u := demo.GenerateSize(5, lookAheadSize)
	delisted, delistedOn := delistOne(t, u)
	full := buildDemoDS(t, u)
	fs := serverOf(t, full)
	r := rand.New(rand.NewPCG(29, 4))

	var companies, funds []string
	for _, is := range full.Issuers() {
		switch {
		case is.IsFund() && len(is.FundReports()) > 0:
			funds = append(funds, is.ID)
		case !is.IsFund() && len(is.Reports()) > 0:
			companies = append(companies, is.ID)
		}
	}
	// The instants: shortly before a restatement (a later version's
	// publication: as_of then shows the version it replaced), with the
	// restated issuer among the identifiers asked, and random ones.
	type mark struct {
		t    time.Time
		id   string
		fund bool
		dy   time.Time // a dividend's correction published then (see dyMarks)
	}
	var reportMarks, cashMarks, fundMarks, fundCashMarks []mark
	for _, rep := range u.Reports {
		if rep.Version > 1 {
			reportMarks = append(reportMarks, mark{t: rep.PublishDate.Time(), id: rep.CompanyID})
		}
	}
	for _, a := range u.CashActions {
		if a.Version > 1 {
			if is, ok := full.Issuer(a.CompanyID.String()); ok && is.IsFund() {
				fundCashMarks = append(fundCashMarks, mark{t: a.PublishDate.Time(), id: a.CompanyID.String(), fund: true})
			} else {
				cashMarks = append(cashMarks, mark{t: a.PublishDate.Time(), id: a.CompanyID.String()})
			}
		}
	}
	// Corrections of a company's declared dividend published after its
	// ex date (the demo publishes some late). Between the two, the
	// valuation's DIVIDEND_YIELD at the last session counts the first
	// version: an instant in the hour before the correction, after that
	// day's session closed, so that as_of at the correction has the same
	// last session (sessionDY). So does a quarter-end DIVIDEND_YIELD point
	// whose twelve months hold the event, known before the correction: an
	// instant between the two (quarterDY).
	first := map[string]engine.Num{}
	for _, a := range u.CashActions {
		if a.Version == 1 {
			first[a.EventID] = a.DeclaredValue
		}
	}
	cat := full.Catalog()
	var sessionDY, quarterDY []mark
	for _, a := range u.CashActions {
		is, ok := full.Issuer(a.CompanyID.String())
		if a.Version == 1 || !ok || is.IsFund() || !cashCountedName(a.Name.String()) || a.DeclaredValue == first[a.EventID] ||
			!a.PublishDate.After(engine.StampOf(engine.SessionClose(a.PriorExDate).AddDate(0, 0, 1))) {
			continue
		}
		sessionDY = append(sessionDY, mark{t: a.PublishDate.Time().Add(-time.Duration(1+r.IntN(59)) * time.Minute), id: a.CompanyID.String(), dy: a.PublishDate.Time()})
		for _, s := range is.Ratios() {
			if cat[s.Indicator].ID != "DIVIDEND_YIELD" || cat[s.Indicator].Kind != engine.IndValuation {
				continue
			}
			for k, p := range s.Points {
				from := p.PublishDate.Time()
				if s.KnownFrom != nil {
					from = s.KnownFrom[k].Time()
				}
				if from.Before(engine.SessionClose(p.ReferenceDate)) {
					from = engine.SessionClose(p.ReferenceDate)
				}
				if p.ReferenceDate >= a.PriorExDate && p.ReferenceDate < a.PriorExDate+365 && from.Before(a.PublishDate.Time()) {
					quarterDY = append(quarterDY, mark{t: from.Add(time.Duration(r.Int64N(int64(a.PublishDate.Time().Sub(from))))), id: a.CompanyID.String(), dy: a.PublishDate.Time()})
				}
			}
		}
	}
	for _, fr := range u.FundReports {
		if fr.Version > 1 {
			fundMarks = append(fundMarks, mark{t: fr.PublishDate, id: fr.FundID, fund: true})
		}
	}
	firstPub, last := full.FirstPublished(), full.AsOf()
	var instants []mark
	for range 2 {
		for _, ms := range [][]mark{reportMarks, cashMarks, fundMarks, fundCashMarks} {
			if len(ms) == 0 {
				t.Fatal("the demo has no restatement of a kind")
			}
			m := ms[r.IntN(len(ms))]
			m.t = m.t.Add(-time.Duration(1+r.IntN(47)) * time.Hour)
			instants = append(instants, m)
		}
	}
	if len(sessionDY) == 0 || len(quarterDY) == 0 {
		t.Fatalf("the demo has %d dividends corrected after their ex date, %d quarter-end DIVIDEND_YIELD points known before one", len(sessionDY), len(quarterDY))
	}
	for _, ms := range [][]mark{sessionDY, sessionDY, quarterDY} {
		instants = append(instants, ms[r.IntN(len(ms))])
	}
	for range 2 {
		instants = append(instants, mark{t: firstPub.Add(time.Duration(r.Int64N(int64(last.Sub(firstPub)))))})
	}
	// Either side of a session's close: the last session before as_of
	// is that one, or the one before.
	for range 2 {
		d := engine.SaoPauloDay(firstPub.Add(time.Duration(r.Int64N(int64(last.Sub(firstPub))))))
		instants = append(instants, mark{t: engine.SessionClose(d)}, mark{t: engine.SessionClose(d).Add(-time.Second)})
	}
	// Either side of the close of the session after the delisting: the
	// last session before as_of is the delisting's, or the next.
	after := engine.NoDate
	for _, a := range full.Assets() {
		if i, _ := slices.BinarySearch(a.Daily.Dates, delistedOn+1); a.StockType != engine.ClassMacro && i < len(a.Daily.Dates) && (!after.Valid() || a.Daily.Dates[i] < after) {
			after = a.Daily.Dates[i]
		}
	}
	next := engine.SessionClose(after)
	instants = append(instants, mark{t: engine.SessionClose(delistedOn)}, mark{t: next.Add(-time.Second)}, mark{t: next})

	type route struct {
		name, path, query string
		fund              bool
		latest            bool // answers the latest version of each item: as_of must show replaced ones
	}
	routes := []route{
		{"ratios", "/v2/companies/%s/ratios", "show_calculation=true", false, false},
		{"ratios latest", "/v2/companies/%s/ratios", "latest_by_reference_date=true&frequency=TTM", false, true},
		{"valuation", "/v2/companies/%s/ratios/valuation", "show_calculation=true", false, false},
		{"raw reports", "/v2/companies/%s/raw-reports", "flat=true&limit=100", false, false},
		{"reports latest", "/v2/companies/%s/reports", "latest_by_reference_date=true&limit=100", false, true},
		{"company", "/v2/companies/%s", "show_sector=true", false, true},
		{"company market cap", "/v2/companies/%s", "show_market_cap=true", false, false},
		{"company cash", "/v2/companies/%s/cash-corporate-actions", "", false, true},
		{"company cash versions", "/v2/companies/%s/cash-corporate-actions", "current=false", false, false},
		{"share actions", "/v2/companies/%s/corporate-actions", "", false, false},
		{"cash", "/v2/companies/cash-corporate-actions", "limit=500", false, false},
		{"fund ratios", "/v2/traded-funds/%s/ratios", "latest_by_reference_date=true", true, true},
		{"fund cash", "/v2/traded-funds/%s/cash-corporate-actions", "", true, true},
	}
	changed := map[string]int{}
	checked, screenRows, sessionPoints, delistedRows := 0, 0, 0, 0
	dyChanged := map[string]int{} // by kind of instant: session, quarter
	for _, m := range instants {
		at := m.t.Truncate(time.Second)
		if at.Before(firstPub) || at.After(last) {
			continue
		}
		pu := publishedBy(u, at)
		ps := serverOf(t, buildDemoDS(t, pu))
		lastDay := lastSessionOf(pu) // the derivation's last session
		asOf := at.In(engine.SaoPaulo).Format("2006-01-02T15:04:05")
		checked++
		n, ch := screenerAt(t, fs, ps, asOf)
		screenRows += n
		if ch {
			changed["screener"]++
		}
		if !m.dy.IsZero() {
			// The valuation of the corrected company before and at the
			// correction: each equals a Dataset's of what was published
			// then, and a DIVIDEND_YIELD point changes.
			path := "/v2/companies/" + m.id + "/ratios/valuation?show_calculation=true&as_of="
			after := m.dy.In(engine.SaoPaulo).Format("2006-01-02T15:04:05")
			got := getJSON(t, fs, path+url.QueryEscape(asOf))
			gotAfter := getJSON(t, fs, path+url.QueryEscape(after))
			wantAfter := getJSON(t, serverOf(t, buildDemoDS(t, publishedBy(u, m.dy))), "/v2/companies/"+m.id+"/ratios/valuation?show_calculation=true")
			if d := firstDiff(gotAfter, wantAfter, ""); d != "" {
				t.Errorf("%s%s: %s (want: a Dataset of what was published by then)", path, after, d)
			}
			if kind := "quarter"; dividendYieldChanged(got, gotAfter) {
				if m.dy.Sub(at) < time.Hour {
					kind = "session"
				}
				dyChanged[kind]++
			}
		}
		if n > 0 && screenerHas(t, ps, delisted) {
			delistedRows++
		}
		for _, rt := range routes {
			ids := companies
			if rt.fund {
				ids = funds
			}
			for k := range 3 {
				path := rt.path
				if slices.Contains([]byte(path), '%') {
					id := ids[r.IntN(len(ids))]
					if k == 0 && m.id != "" && m.fund == rt.fund {
						id = m.id
					}
					path = fmt.Sprintf(path, id)
				}
				q := rt.query
				sep := func(q string) string {
					if q == "" {
						return ""
					}
					return "&"
				}
				got := getJSON(t, fs, path+"?"+q+sep(q)+"as_of="+url.QueryEscape(asOf))
				want := getJSON(t, ps, path+"?"+q)
				now := getJSON(t, fs, path+"?"+q)
				checked++
				if p, ok := publishedAfter(got, at); ok {
					t.Errorf("%s as_of=%s: publish_date %s is after as_of", path, asOf, p)
				}
				if rt.name == "valuation" && hasReference(got, lastDay) {
					sessionPoints++
				}
				if rt.name == "company market cap" && !reflect.DeepEqual(got, now) {
					changed[rt.name]++
				}
				if d := firstDiff(got, want, ""); d != "" {
					t.Errorf("%s?%s as_of=%s: %s (want: a Dataset of what was published by then)", path, q, asOf, d)
				}
				if replaced(got, now) {
					changed[rt.name]++
				}
			}
		}
	}
	t.Logf("%d answers checked (%d screener rows, %d valuation answers priced at the last session, DIVIDEND_YIELD changed by a dividend's correction: %v, %d screeners listing %s, delisted on %v); answers showing a replaced version, by route: %v",
		checked, screenRows, sessionPoints, dyChanged, delistedRows, delisted, delistedOn, changed)
	if delistedRows == 0 {
		t.Errorf("screener: %s (delisted on %v) was a row at no as_of", delisted, delistedOn)
	}
	if changed["company market cap"] == 0 {
		t.Error("company market cap: as_of never changed it")
	}
	if dyChanged["session"] == 0 || dyChanged["quarter"] == 0 {
		t.Errorf("valuation: DIVIDEND_YIELD changed between an as_of before a dividend's correction and one at it %v times by kind, want both kinds", dyChanged)
	}
	if sessionPoints == 0 {
		t.Error("valuation: no answer had a point priced at the last session before as_of")
	}
	if changed["screener"] == 0 || screenRows == 0 {
		t.Errorf("screener: %d rows compared, as_of changed the answer %d times", screenRows, changed["screener"])
	}
	for _, rt := range routes {
		if changed[rt.name] == 0 && rt.latest {
			t.Errorf("route %s: as_of never showed a replaced version", rt.name)
		}
	}
}

// cashCountedName reports whether the dividend yield counts a cash action
// of that name.
func cashCountedName(name string) bool {
	return name == "DIVIDEND" || name == "INTEREST_ON_EQUITY" || name == "RENDIMENTO"
}

// dividendYieldChanged reports whether two ratios answers hold a
// DIVIDEND_YIELD point (any class) of one reference date with different
// values.
func dividendYieldChanged(a, b any) bool {
	am, _ := a.(map[string]any)
	bm, _ := b.(map[string]any)
	for id, fs := range am {
		if !strings.HasPrefix(id, "DIVIDEND_YIELD") {
			continue
		}
		bf, _ := bm[id].(map[string]any)
		for f, ps := range fs.(map[string]any) {
			bps, _ := bf[f].([]any)
			for _, p := range ps.([]any) {
				pm := p.(map[string]any)
				for _, q := range bps {
					qm := q.(map[string]any)
					if qm["reference_date"] == pm["reference_date"] && !reflect.DeepEqual(qm["value"], pm["value"]) {
						return true
					}
				}
			}
		}
	}
	return false
}

// getJSON serves a GET with the test key and decodes its 200 answer.
func getJSON(tb testing.TB, ts *testServer, path string) any {
	tb.Helper()
	w := ts.do("GET", path, testKeyDelayed, "")
	if w.Code == 404 {
		return "404"
	}
	if w.Code != 200 {
		tb.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
	}
	var v any
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		tb.Fatalf("GET %s: %v", path, err)
	}
	return v
}

// publishedAfter returns the first publish_date (or a source's
// published_at) of v after t.
func publishedAfter(v any, t time.Time) (string, bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && (k == "publish_date" || k == "published_at") {
				if p, err := time.Parse(time.RFC3339Nano, s); err == nil && p.After(t) {
					return s, true
				}
			}
			if s, ok := publishedAfter(e, t); ok {
				return s, true
			}
		}
	case []any:
		for _, e := range x {
			if s, ok := publishedAfter(e, t); ok {
				return s, true
			}
		}
	}
	return "", false
}

// hasReference reports whether a ratios answer has a point of reference
// date d.
func hasReference(v any, d engine.Date) bool {
	m, _ := v.(map[string]any)
	for _, fs := range m {
		for _, ps := range fs.(map[string]any) {
			for _, p := range ps.([]any) {
				if p.(map[string]any)["reference_date"] == d.Time().Format(time.RFC3339) {
					return true
				}
			}
		}
	}
	return false
}

// replaced reports whether the as_of answer got holds a version that the
// current answer now does not: an item (a report, a cash action, a ratio
// point, the share counts) that a later publication replaced.
func replaced(got, now any) bool {
	switch g := got.(type) {
	case []any:
		n, _ := now.([]any)
		for _, x := range g {
			if !containsJSON(n, x) {
				return true
			}
		}
	case map[string]any:
		n, _ := now.(map[string]any)
		if _, ok := g["total_shares"]; ok {
			return !reflect.DeepEqual(g["total_shares"], n["total_shares"]) || !reflect.DeepEqual(g["common_shares"], n["common_shares"])
		}
		for id, fs := range g {
			nf, _ := n[id].(map[string]any)
			for f, ps := range fs.(map[string]any) {
				np, _ := nf[f].([]any)
				for _, p := range ps.([]any) {
					if !containsJSON(np, p) {
						return true
					}
				}
			}
		}
	}
	return false
}

func containsJSON(xs []any, x any) bool {
	for _, y := range xs {
		if reflect.DeepEqual(x, y) {
			return true
		}
	}
	return false
}

// firstDiff describes the first difference between two decoded JSON
// values ("" when equal).
func firstDiff(got, want any, at string) string {
	switch g := got.(type) {
	case map[string]any:
		w, ok := want.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(g)+len(w))
		for k := range g {
			keys = append(keys, k)
		}
		for k := range w {
			if _, ok := g[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			gv, gok := g[k]
			wv, wok := w[k]
			if !gok || !wok {
				return fmt.Sprintf("%s.%s: present %v, want present %v", at, k, gok, wok)
			}
			if d := firstDiff(gv, wv, at+"."+k); d != "" {
				return d
			}
		}
		return ""
	case []any:
		w, ok := want.([]any)
		if !ok {
			break
		}
		for i := range min(len(g), len(w)) {
			if d := firstDiff(g[i], w[i], fmt.Sprintf("%s[%d]", at, i)); d != "" {
				return d
			}
		}
		if len(g) != len(w) {
			return fmt.Sprintf("%s: %d items, want %d", at, len(g), len(w))
		}
		return ""
	}
	if reflect.DeepEqual(got, want) {
		return ""
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	return fmt.Sprintf("%s: %.300s, want %.300s", at, gj, wj)
}

// screenerBodyAt is the screener request of the look-ahead test: every
// ticker with a close (not only the primary ones), sorted by two
// fundamental ratios, with the close and volume as filters that every
// row with them passes, so that each row shows those four values.
func screenerBodyAt(asOf string) string {
	b := `{"limit":500,"primaryOnly":false,"sort":[{"by":"droplet:NET_MARGIN","order":"desc"},{"by":"droplet:RETURN_ON_EQUITY"},{"by":"droplet:PRICE_TO_EARNINGS"},{"by":"droplet:DIVIDEND_YIELD"},{"by":"droplet:MARKET_CAP"},{"by":"droplet:EV_TO_EBITDA"}],"filters":[` +
		`{"type":"close_price","op":">=","value":-1e300},{"type":"volume","op":">=","value":-1e300}]`
	if asOf != "" {
		b += `,"as_of":"` + asOf + `"`
	}
	return b + "}"
}

// screenerAt checks the screener with as_of against the one of the
// Dataset of what was published by then (ps): the same rows (every one,
// and the primary ones), each with the same close, volume and ratios.
// It returns the number of rows compared and whether as_of showed a
// fundamental value that the current screener no longer shows for the
// same ticker (a restatement, or a newer period since).
func screenerAt(t *testing.T, fs, ps *testServer, asOf string) (int, bool) {
	t.Helper()
	rows := func(ts *testServer, body string) map[string][]any {
		w := ts.do("POST", "/v2/screener", testKeyDelayed, body)
		if w.Code != 200 {
			t.Fatalf("POST /v2/screener %s: %d %s", body, w.Code, w.Body)
		}
		var ans struct {
			Data []struct {
				Ticker string `json:"ticker"`
				Sort   []struct {
					Value any `json:"value"`
				} `json:"sort"`
				Filters []struct {
					Value any `json:"applied_value"`
				} `json:"filters"`
			} `json:"data"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &ans); err != nil {
			t.Fatal(err)
		}
		out := map[string][]any{}
		for _, r := range ans.Data {
			var vs []any
			for _, f := range r.Sort {
				vs = append(vs, f.Value)
			}
			for _, f := range r.Filters {
				vs = append(vs, f.Value)
			}
			out[r.Ticker] = vs
		}
		return out
	}
	got := rows(fs, screenerBodyAt(asOf))
	want := rows(ps, screenerBodyAt(""))
	now := rows(fs, screenerBodyAt(""))
	for tk := range got {
		if _, ok := want[tk]; !ok {
			t.Errorf("screener as_of=%s: %s is a row (not one of a Dataset of what was published by then)", asOf, tk)
		}
	}
	primary := func(ts *testServer, body string) []string {
		var tks []string
		for tk := range rows(ts, strings.Replace(body, `"primaryOnly":false`, `"primaryOnly":true`, 1)) {
			tks = append(tks, tk)
		}
		slices.Sort(tks)
		return tks
	}
	if g, w := primary(fs, screenerBodyAt(asOf)), primary(ps, screenerBodyAt("")); !slices.Equal(g, w) {
		t.Errorf("screener as_of=%s primaryOnly: rows %v, want %v (a Dataset of what was published by then)", asOf, g, w)
	}
	common, changed := 0, false
	for tk, w := range want {
		g, ok := got[tk]
		if !ok {
			t.Errorf("screener as_of=%s: %s is not a row (one of a Dataset of what was published by then)", asOf, tk)
			continue
		}
		common++
		if d := firstDiff(g, w, tk); d != "" {
			t.Errorf("screener as_of=%s: %s (want: a Dataset of what was published by then)", asOf, d)
		}
		if n, ok := now[tk]; ok && g[0] != nil && !reflect.DeepEqual(n[:2], g[:2]) {
			changed = true
		}
	}
	return common, changed
}

// screenerHas reports whether ticker is a row of ts's screener.
func screenerHas(tb testing.TB, ts *testServer, ticker string) bool {
	tb.Helper()
	w := ts.do("POST", "/v2/screener", testKeyDelayed, `{"limit":500,"primaryOnly":false}`)
	if w.Code != 200 {
		tb.Fatalf("POST /v2/screener: %d %s", w.Code, w.Body)
	}
	return strings.Contains(w.Body.String(), `"ticker":"`+ticker+`"`)
}

// delistOne delists a ticker of u (which it modifies) about 90 sessions
// before its last: its company keeps another row, it is no ticker of a
// rename, and its bars after its delisting are dropped. The demo's own
// delisted tickers are of cancelled companies, rows at no instant; this
// one is a screener row of the Datasets of the instants before its
// delisting and of none after. It returns the ticker and its ListedTo.
func delistOne(tb testing.TB, u *engine.Universe) (string, engine.Date) {
	tb.Helper()
	renamed := map[string]bool{}
	for _, rn := range u.Renames {
		renamed[rn.From], renamed[rn.To] = true, true
	}
	kind := map[string]string{}
	for _, c := range u.Companies {
		if c.Status != "CANCELLED" {
			kind[c.ID] = c.Kind
		}
	}
	classes := map[string]int{}
	for _, sec := range u.Securities {
		if engine.ScreenerClass(sec.StockType) {
			classes[sec.CompanyID]++
		}
	}
	for i := range u.Securities {
		sec := &u.Securities[i]
		if !engine.ScreenerClass(sec.StockType) || kind[sec.CompanyID] != engine.KindCompany || classes[sec.CompanyID] < 2 ||
			renamed[sec.Ticker] || sec.ListedTo.Valid() {
			continue
		}
		for j := range u.Daily {
			sr := &u.Daily[j]
			if sr.Ticker != sec.Ticker || len(sr.Dates) < 200 {
				continue
			}
			n := len(sr.Dates) - 90
			on := sr.Dates[n-1]
			sec.ListedTo = on
			*sr = engine.Series{Ticker: sr.Ticker, Dates: sr.Dates[:n], Open: sr.Open[:n], High: sr.High[:n], Low: sr.Low[:n],
				Close: sr.Close[:n], Volume: sr.Volume[:n], Quantity: sr.Quantity[:n], Trades: sr.Trades[:n]}
			u.Intraday = slices.DeleteFunc(u.Intraday, func(x engine.Intraday) bool { return x.Ticker == sec.Ticker })
			return sec.Ticker, on
		}
	}
	tb.Fatal("no ticker to delist")
	return "", engine.NoDate
}
