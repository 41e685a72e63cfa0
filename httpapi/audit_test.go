package httpapi

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/bundle"
)

// TestSingleQuoteTickerCase: tickers in paths are matched ignoring case,
// like every other path identifier (docs/api.md, Parameters).
func TestSingleQuoteTickerCase(t *testing.T) {
	ts := newTestServer(t, true)
	up := ts.do("GET", "/v2/quotes/ENHZ3?type=current", testKeyDelayed, "")
	for _, p := range []string{"/v2/quotes/enhz3?type=current", "/v2/quotes/Enhz3?type=current"} {
		w := ts.do("GET", p, testKeyDelayed, "")
		if w.Code != 200 || w.Body.String() != up.Body.String() {
			t.Errorf("%s: %d %s, want %s", p, w.Code, w.Body, up.Body)
		}
	}
	checkError(t, ts.do("GET", "/v2/quotes/en1?type=current", testKeyDelayed, ""), 400, "want 4 letters")
	checkError(t, ts.do("GET", "/v2/quotes/eur?type=current", testKeyDelayed, ""), 404, "Ticker not found") // a currency's macro series the snapshot lacks
	checkError(t, ts.do("GET", "/v2/quotes/nope3", testKeyDelayed, ""), 404, "Ticker not found")
	if w := ts.do("GET", "/v2/quotes/selic?type=current", testKeyDelayed, ""); w.Code != 200 {
		t.Errorf("selic: %d %s", w.Code, w.Body)
	}
}

// TestUpdatedAtIsDataTime: updated_at is the time of the data used: the
// close of a daily session (not its midnight), the end of the last
// 1-minute bar of a running session.
func TestUpdatedAtIsDataTime(t *testing.T) {
	day := time.Date(2024, 3, 28, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		at   time.Time
		key  string
		path string
		want string
	}{
		{"highs after the close", day.Add(21 * time.Hour), testKeyDelayed, "/v2/indexes/IBOV/highs", "2024-03-28T20:00:00Z"},
		{"lows after the close", day.Add(21 * time.Hour), testKeyDelayed, "/v2/indexes/IBOV/lows", "2024-03-28T20:00:00Z"},
		// 13:30: cut-off 13:15; ENHZ3's last bar is 13:03, complete at 13:04.
		{"highs in the session", day.Add(13*time.Hour + 30*time.Minute), testKeyDelayed, "/v2/indexes/IBOV/highs", "2024-03-28T13:04:00Z"},
		// The newest data of every ranked member, whatever the limit.
		{"highs in the session, limit 1", day.Add(13*time.Hour + 30*time.Minute), testKeyDelayed, "/v2/indexes/IBOV/highs?limit=1", "2024-03-28T13:04:00Z"}, // MSAZ3 (daily 03-27) first
		{"eod highs", day.Add(21 * time.Hour), testKeyEOD, "/v2/indexes/IBOV/highs", "2024-03-27T20:00:00Z"},
		{"variations after the close", day.Add(21 * time.Hour), testKeyDelayed, "/v2/stocks/variations", "2024-03-28T20:00:00Z"},
		{"eod variations", day.Add(21 * time.Hour), testKeyEOD, "/v2/stocks/variations", "2024-03-27T20:00:00Z"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := serverAt(t, tc.at)
			m := obj(ts.getJSON(t, "GET", tc.path, tc.key, ""))
			if got := m["updated_at"]; got != tc.want {
				t.Errorf("updated_at %v, want %s", got, tc.want)
			}
		})
	}
}

// TestVariationsPreviousSession: /stocks/variations ranks the previous
// complete session, never a session still running.
func TestVariationsPreviousSession(t *testing.T) {
	day := time.Date(2024, 3, 28, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		at          time.Time
		wantSession string
	}{
		{day.Add(13*time.Hour + 30*time.Minute), "2024-03-27"}, // 03-28 is running
		{day.Add(20*time.Hour + 10*time.Minute), "2024-03-27"}, // closed, but inside the delay
		{day.Add(20*time.Hour + 15*time.Minute), "2024-03-28"},
		{day.Add(21 * time.Hour), "2024-03-28"},
	}
	for _, tc := range cases {
		ts := serverAt(t, tc.at)
		m := obj(ts.getJSON(t, "GET", "/v2/stocks/variations", testKeyDelayed, ""))
		if m["session"] != tc.wantSession {
			t.Errorf("at %s: session %v, want %s", tc.at, m["session"], tc.wantSession)
		}
		if len(arr(m["gainers"])) == 0 {
			t.Errorf("at %s: no gainers", tc.at)
		}
	}
}

// TestCashActionsOnlyCompanies: the cross-company cash list holds Brazilian
// companies' events (plus BDR issuers' with bdr=true), never listed funds',
// so stock_type stays within CS, PS, PSA, PSB, PSC, PSD, UNIT, BDR.
func TestCashActionsOnlyCompanies(t *testing.T) {
	ts := newTestServer(t, true)
	allowed := map[string]bool{}
	for _, c := range cashClasses {
		allowed[c] = true
	}
	for _, q := range []string{"", "?bdr=true", "?current=false&bdr=true", "?stock_type=UNIT&bdr=true"} {
		for _, e := range arr(ts.getJSON(t, "GET", "/v2/companies/cash-corporate-actions"+q, testKeyDelayed, "")) {
			m := obj(e)
			if st := m["stock_type"].(string); !allowed[st] {
				t.Errorf("%s: event %v of stock_type %s", q, m["id"], st)
			}
			if m["company_id"] == "11222333000181" {
				t.Errorf("%s: event %v of a listed fund", q, m["id"])
			}
		}
	}
	found := false
	for _, e := range arr(ts.getJSON(t, "GET", "/v2/companies/cash-corporate-actions", testKeyDelayed, "")) {
		found = found || obj(e)["company_id"] == "12345678000195"
	}
	if !found {
		t.Error("no event of a Brazilian company")
	}
}

// TestClassFromISIN: the share class of an ISIN not held by any current
// asset is read from the ISIN's B3 type code.
func TestClassFromISIN(t *testing.T) {
	for _, tc := range []struct{ isin, want string }{
		{"BRPETRACNOR9", engine.ClassCS},
		{"BRPETRACNPR6", engine.ClassPS},
		{"BRUSIMACNPA6", engine.ClassPSA},
		{"BRCMIGACNPB1", engine.ClassPSB},
		{"BRXXXXACNPC0", engine.ClassPSC},
		{"BRXXXXACNPD0", engine.ClassPSD},
		{"BRSANBCDAM13", engine.ClassUnit},
		{"BRHGLGCTF004", engine.ClassFundUnit},
		{"BRAAPLBDR004", engine.ClassBDR},
		{"BRPETRACNOR", ""}, // too short
		{"USPETRACNOR9", ""},
		{"BRPETRDEB001", ""},
		{"", ""},
	} {
		if got := classFromISIN(tc.isin); got != tc.want {
			t.Errorf("classFromISIN(%q) = %q, want %q", tc.isin, got, tc.want)
		}
	}
}

// TestRawReportTreeNodes: tree_data nodes are {name, code, value,
// children}; aggregating nodes (with children) have value null, leaves the
// reported value, the same as the flat data's.
func TestRawReportTreeNodes(t *testing.T) {
	ts := newTestServer(t, true)
	for _, rt := range engine.Statements {
		tree := arr(ts.getJSON(t, "GET", "/v2/companies/ENHZ/raw-reports?report_type="+rt, testKeyDelayed, ""))
		flat := arr(ts.getJSON(t, "GET", "/v2/companies/ENHZ/raw-reports?flat=true&report_type="+rt, testKeyDelayed, ""))
		if len(tree) != len(flat) {
			t.Fatalf("%s: %d tree reports, %d flat", rt, len(tree), len(flat))
		}
		for i := range tree {
			if _, ok := obj(tree[i])["data"]; ok {
				t.Errorf("%s: tree report has data", rt)
			}
			if _, ok := obj(flat[i])["tree_data"]; ok {
				t.Errorf("%s: flat report has tree_data", rt)
			}
			leaves := 0
			var walk func(n map[string]any, path string)
			walk = func(n map[string]any, path string) {
				if len(n) != 4 || n["name"] == nil || n["code"] == nil {
					t.Errorf("%s: node %v", rt, n)
				}
				kids := arr(n["children"])
				if n["children"] == nil {
					t.Errorf("%s: node %v without children array", rt, n["code"])
				}
				if len(kids) > 0 {
					if n["value"] != nil {
						t.Errorf("%s: aggregating node %v has value %v", rt, n["code"], n["value"])
					}
				} else {
					leaves++
					if v, ok := obj(obj(flat[i])["data"])[path]; !ok || v != n["value"] {
						t.Errorf("%s: leaf %q value %v, flat %v (%v)", rt, path, n["value"], v, ok)
					}
				}
				for _, k := range kids {
					c := obj(k)
					p := c["name"].(string)
					if path != "" {
						p = path + " | " + p
					}
					walk(c, p)
				}
			}
			root := obj(obj(tree[i])["tree_data"])
			rootPath := root["name"].(string)
			if root["value"] == nil && len(arr(root["children"])) > 0 && obj(obj(flat[i])["data"])[rootPath] == nil {
				rootPath = "" // a synthetic root named after the report
			}
			walk(root, rootPath)
			if leaves == 0 {
				t.Errorf("%s: no leaf", rt)
			}
		}
	}
}

// TestRankingsLeaveStaleMembersOut: an index member whose last session is
// older than the session before the newest one (delisted, or renamed
// without a rename record) is not ranked with its stale variation, in
// every view (delayed precomputed, delayed at another time, eod).
func TestRankingsLeaveStaleMembersOut(t *testing.T) {
	u, err := bundle.Read(smallBundle)
	if err != nil {
		t.Fatal(err)
	}
	sec := u.Securities[0]
	sec.Ticker, sec.ISIN, sec.LiquidityRank = "GONE3", "BRGONEACNOR1", 0
	u.Securities = append(u.Securities, sec)
	d0 := engine.MakeDate(2023, 1, 2)
	u.Daily = append(u.Daily, engine.Series{Ticker: "GONE3", Dates: []engine.Date{d0, d0 + 1},
		Open: []engine.Num{10, 20}, High: []engine.Num{10, 20}, Low: []engine.Num{10, 20}, Close: []engine.Num{10, 20},
		Volume: []engine.Num{1000, 2000}, Quantity: []int64{100, 100}, Trades: []int64{1, 1}})
	for i := range u.Indexes {
		if u.Indexes[i].Symbol == "IBOV" {
			u.Indexes[i].Members = append(u.Indexes[i].Members, engine.IndexMember{Ticker: "GONE3", Weight: 0.01, TheoreticalQty: engine.Null})
		}
	}
	der, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = der
	ds, err := engine.Build(u)
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2024, 3, 28, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		at  time.Time
		key string
	}{
		{ds.AsOf(), testKeyDelayed},
		{day.Add(13*time.Hour + 30*time.Minute), testKeyDelayed},
		{ds.AsOf(), testKeyEOD},
		{day.Add(13 * time.Hour), testKeyEOD},
	} {
		ts := &testServer{store: &engine.Store{}, reg: prometheus.NewRegistry()}
		ts.store.Publish(ds)
		ts.api = New(DefaultConfig(), ts.store, testKeys(t), fixedClock(tc.at), ts.reg, nil)
		for _, side := range []string{"highs", "lows"} {
			r := arr(obj(ts.getJSON(t, "GET", "/v2/indexes/IBOV/"+side, tc.key, ""))["ranking"])
			if len(r) == 0 {
				t.Errorf("%s %s at %s: empty", side, tc.key, tc.at)
			}
			for _, e := range r {
				if obj(e)["ticker"] == "GONE3" {
					t.Errorf("%s %s at %s: stale GONE3 ranked", side, tc.key, tc.at)
				}
			}
		}
	}
}

// TestFoldedEnumsDocumented: the enumerated parameters matched ignoring
// case are the ones docs/api.md names (Parameters); every other
// enumeration is matched exactly.
func TestFoldedEnumsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(doc, []byte("- The spec's enumerations are upper case"))
	if i < 0 {
		t.Fatal("docs/api.md: the enumerations' case rule is missing")
	}
	rule := string(doc[i:])
	rule = rule[:strings.Index(rule, "\n- ")]
	folded := map[string]bool{}
	for _, rt := range Routes() {
		for _, p := range rt.Params {
			if p.Fold {
				folded[p.Name] = true
				if !strings.Contains(rule, "`"+p.Name+"`") {
					t.Errorf("%s %s: %s matches ignoring case, the rule does not name it", rt.Method, rt.Path, p.Name)
				}
			}
		}
	}
	for _, name := range []string{"format", "status", "kind", "trade", "frequency"} {
		if !folded[name] {
			t.Errorf("the rule names %s, which no operation matches ignoring case", name)
		}
	}
}
