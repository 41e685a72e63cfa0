package httpapi

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/bundle"
)

func decodeList(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%v: %.200s", err, b)
	}
	return out
}

// The cash actions of one company are the items of the all-companies list
// with its company_id, in the same order and shape; by ticker, those of its
// class; a fund's are its distributions (FUND_UNIT). Every list carries
// X-Total-Count and validates against the document.
func TestOneIssuerCash(t *testing.T) {
	ts := newTestServer(t, true)
	all := ts.do("GET", "/v2/companies/cash-corporate-actions?bdr=true", testKeyDelayed, "")
	items := decodeList(t, all.Body.Bytes())
	if got := all.Header().Get("X-Total-Count"); got != strconv.Itoa(len(items)) {
		t.Errorf("all: X-Total-Count %q, %d items", got, len(items))
	}
	company := ts.do("GET", "/v2/companies/ENHZ/cash-corporate-actions", testKeyDelayed, "")
	one := decodeList(t, company.Body.Bytes())
	var want []map[string]any
	var id string
	for _, it := range items {
		if it["ticker"] == "ENHZ3" || it["ticker"] == "ENHZ4" {
			id = it["company_id"].(string)
		}
	}
	for _, it := range items {
		if it["company_id"] == id {
			want = append(want, it)
		}
	}
	wb, _ := json.Marshal(want)
	ob, _ := json.Marshal(one)
	if len(want) == 0 || string(wb) != string(ob) {
		t.Errorf("ENHZ: %d items, want the %d of the list\n%s\n%s", len(one), len(want), ob, wb)
	}
	validateAnswer(t, "GET", "/v2/companies/ENHZ/cash-corporate-actions", "", company)

	pn := decodeList(t, ts.do("GET", "/v2/companies/ENHZ4/cash-corporate-actions", testKeyDelayed, "").Body.Bytes())
	for _, it := range pn {
		if it["stock_type"] != "PS" {
			t.Errorf("by ENHZ4: an event of class %v", it["stock_type"])
		}
	}
	if len(pn) == 0 || len(pn) >= len(one) {
		t.Errorf("by ENHZ4: %d of the company's %d events", len(pn), len(one))
	}

	fund := ts.do("GET", "/v2/traded-funds/GSUL11/cash-corporate-actions?current=false", testKeyDelayed, "")
	if fund.Code != 200 {
		t.Fatalf("fund: %d %s", fund.Code, fund.Body)
	}
	for _, it := range decodeList(t, fund.Body.Bytes()) {
		if it["stock_type"] != "FUND_UNIT" {
			t.Errorf("fund event of class %v", it["stock_type"])
		}
	}
	validateAnswer(t, "GET", "/v2/traded-funds/GSUL11/cash-corporate-actions?current=false", "", fund)
	checkError(t, ts.do("GET", "/v2/traded-funds/NOPE11/cash-corporate-actions", testKeyDelayed, ""), 404, "fund")
	checkError(t, ts.do("GET", "/v2/companies/NOPE/cash-corporate-actions", testKeyDelayed, ""), 404, "company")
}

// limit and offset take a window of the list, in order; X-Total-Count is
// the whole list's size; bounds are checked.
func TestListPagination(t *testing.T) {
	ts := newTestServer(t, true)
	for _, base := range []string{"/v2/companies/cash-corporate-actions?current=false&bdr=true", "/v2/companies/ENHZ/cash-corporate-actions?current=false",
		"/v2/companies/ENHZ/raw-reports?flat=true", "/v2/companies/ENHZ/reports?aggregation=CONSOLIDATED"} {
		full := ts.do("GET", base, testKeyDelayed, "")
		items := decodeList(t, full.Body.Bytes())
		if len(items) < 3 {
			t.Fatalf("%s: %d items", base, len(items))
		}
		for _, c := range []struct{ off, lim int }{{0, 1}, {1, 2}, {len(items) - 1, 5}, {len(items), 3}, {2, 0}} {
			path := base + "&offset=" + strconv.Itoa(c.off)
			if c.lim > 0 {
				path += "&limit=" + strconv.Itoa(c.lim)
			}
			w := ts.do("GET", path, testKeyDelayed, "")
			got := decodeList(t, w.Body.Bytes())
			end := len(items)
			if c.lim > 0 {
				end = min(end, c.off+c.lim)
			}
			want := items[min(c.off, len(items)):end]
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			if string(gb) != string(wb) || len(got) != len(want) {
				t.Errorf("%s: %d items, want %d", path, len(got), len(want))
			}
			if h := w.Header().Get("X-Total-Count"); h != strconv.Itoa(len(items)) {
				t.Errorf("%s: X-Total-Count %q, want %d", path, h, len(items))
			}
		}
	}
	checkError(t, ts.do("GET", "/v2/companies/cash-corporate-actions?limit=0", testKeyDelayed, ""), 400, "limit")
	checkError(t, ts.do("GET", "/v2/companies/cash-corporate-actions?limit=10001", testKeyDelayed, ""), 400, "limit")
	checkError(t, ts.do("GET", "/v2/companies/cash-corporate-actions?offset=-1", testKeyDelayed, ""), 400, "offset")
	// The default list (cached) carries its size too.
	d := ts.do("GET", "/v2/companies/cash-corporate-actions", testKeyDelayed, "")
	if h := d.Header().Get("X-Total-Count"); h != strconv.Itoa(len(decodeList(t, d.Body.Bytes()))) {
		t.Errorf("default list: X-Total-Count %q", h)
	}
}

// The companies list pages as the cash lists do, the searched list too.
func TestCompaniesPagination(t *testing.T) {
	ts := newTestServer(t, true)
	full := ts.do("GET", "/v2/companies?bdr=true", testKeyDelayed, "")
	items := decodeList(t, full.Body.Bytes())
	if h := full.Header().Get("X-Total-Count"); h != strconv.Itoa(len(items)) || len(items) < 3 {
		t.Fatalf("X-Total-Count %q, %d items", h, len(items))
	}
	w := ts.do("GET", "/v2/companies?bdr=true&offset=1&limit=2", testKeyDelayed, "")
	got := decodeList(t, w.Body.Bytes())
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(items[1:3])
	if string(gb) != string(wb) || w.Header().Get("X-Total-Count") != strconv.Itoa(len(items)) {
		t.Errorf("window [1,3): %s\nwant %s", gb, wb)
	}
	validateAnswer(t, "GET", "/v2/companies?bdr=true&offset=1&limit=2", "", w)
	s := ts.do("GET", "/v2/companies?search=enhz&limit=1", testKeyDelayed, "")
	if n := len(decodeList(t, s.Body.Bytes())); n != 1 || s.Header().Get("X-Total-Count") == "" {
		t.Errorf("search with limit=1: %d items, total %q", n, s.Header().Get("X-Total-Count"))
	}
}

// A portfolio member without a security (no quote yet) is served in the
// portfolio with company_id null, counted, and not ranked; the rankings
// still answer.
func TestIndexMemberWithoutQuotes(t *testing.T) {
	u, err := bundle.Read(smallBundle)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = d
	u.Indexes[0].Members = append(u.Indexes[0].Members, engine.IndexMember{Ticker: "NEWL3", Weight: 0.001, TheoreticalQty: 1000})
	ds, err := engine.Build(u)
	if err != nil {
		t.Fatal(err)
	}
	store := &engine.Store{}
	store.Publish(ds)
	ts := &testServer{store: store, reg: prometheus.NewRegistry()}
	ts.api = New(DefaultConfig(), store, testKeys(t), nil, ts.reg, nil)
	sym := u.Indexes[0].Symbol
	w := ts.do("GET", "/v2/indexes/"+sym, testKeyDelayed, "")
	if w.Code != 200 || !strings.Contains(w.Body.String(), `{"ticker":"NEWL3","company_id":null,"weight":0.001,"theoretical_quantity":1000}`) {
		t.Errorf("portfolio: %d %s", w.Code, w.Body)
	}
	validateAnswer(t, "GET", "/v2/indexes/"+sym, "", w)
	h := ts.do("GET", "/v2/indexes/"+sym+"/highs", testKeyDelayed, "")
	if h.Code != 200 || strings.Contains(h.Body.String(), "NEWL3") {
		t.Errorf("highs: %d %s", h.Code, h.Body)
	}
}

// GET /indexes/{symbol} serves the portfolio's reductor with the bundle's
// own digits, and null for an index whose source carries none.
func TestIndexReductor(t *testing.T) {
	ts := newTestServer(t, true)
	for sym, want := range map[string]string{"IBOV": `"reductor":18296803.37677573,`, "IFIX": `"reductor":null,`} {
		w := ts.do("GET", "/v2/indexes/"+sym, testKeyDelayed, "")
		if w.Code != 200 || !strings.Contains(w.Body.String(), want) {
			t.Errorf("%s: %d %s, want %s", sym, w.Code, w.Body, want)
		}
		validateAnswer(t, "GET", "/v2/indexes/"+sym, "", w)
	}
}

// GET /sectors lists the taxonomy by id with parents and issuer counts; a
// level filter keeps one level; the ids are those the screener takes.
func TestSectors(t *testing.T) {
	ts := newTestServer(t, true)
	w := ts.do("GET", "/v2/sectors", testKeyDelayed, "")
	validateAnswer(t, "GET", "/v2/sectors", "", w)
	var all []struct {
		ID, Name     string
		Level        int
		ParentID     *string `json:"parent_id"`
		CompanyCount int     `json:"company_count"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &all); err != nil || len(all) == 0 {
		t.Fatalf("%v %s", err, w.Body)
	}
	if h := w.Header().Get("X-Total-Count"); h != strconv.Itoa(len(all)) {
		t.Errorf("X-Total-Count %q for %d", h, len(all))
	}
	byID := map[string]int{}
	total1 := 0
	for i, s := range all {
		byID[s.ID] = i
		if (s.Level == 1) != (s.ParentID == nil) {
			t.Errorf("%s: level %d, parent %v", s.ID, s.Level, s.ParentID)
		}
		if s.Level == 1 {
			total1 += s.CompanyCount
		}
		if i > 0 && all[i-1].ID >= s.ID {
			t.Errorf("not by id: %s then %s", all[i-1].ID, s.ID)
		}
	}
	for _, s := range all {
		if s.ParentID != nil {
			p, ok := byID[*s.ParentID]
			if !ok || all[p].Level != s.Level-1 || all[p].CompanyCount < s.CompanyCount {
				t.Errorf("%s: parent %s (level %d, %d issuers) for level %d, %d issuers", s.ID, *s.ParentID, all[p].Level, all[p].CompanyCount, s.Level, s.CompanyCount)
			}
		}
	}
	if total1 == 0 {
		t.Error("no issuer classified")
	}
	var lv []struct{ Level int }
	json.Unmarshal(ts.do("GET", "/v2/sectors?level=1", testKeyDelayed, "").Body.Bytes(), &lv)
	if len(lv) == 0 {
		t.Error("level=1: none")
	}
	for _, s := range lv {
		if s.Level != 1 {
			t.Errorf("level=1: a level %d node", s.Level)
		}
	}
	// A level-1 id filters the screener (its descendants are expanded).
	id := ""
	for _, s := range all {
		if s.Level == 1 && s.CompanyCount > 0 {
			id = s.ID
			break
		}
	}
	if sw := ts.do("POST", "/v2/screener", testKeyDelayed, `{"primaryOnly":false,"filters":[{"type":"sector","in":["`+id+`"]}]}`); sw.Code != 200 {
		t.Errorf("screener on sector %s: %d %s", id, sw.Code, sw.Body)
	}
	checkError(t, ts.do("GET", "/v2/sectors?level=5", testKeyDelayed, ""), 400, "level")
}
