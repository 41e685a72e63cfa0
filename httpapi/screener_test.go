package httpapi

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

var (
	screenDSOnce sync.Once
	screenDS     *engine.Dataset
	screenErr    error
)

// mustScreenDS returns a demo Dataset with derived ratios and enough
// screener rows (about 100) for partial sorts to matter.
func mustScreenDS(tb testing.TB) *engine.Dataset {
	tb.Helper()
	screenDSOnce.Do(func() {
		u := demo.GenerateSize(11, demo.Size{Companies: 60, ETFs: 5, ReportsFrom: 2023, FundReportsFrom: 2025, EventsFrom: 2026, HistoryFrom: 2025})
		d, err := ratios.Derive(u)
		if err != nil {
			screenErr = err
			return
		}
		u.Derived = d
		screenDS, screenErr = engine.Build(u)
	})
	if screenErr != nil {
		tb.Fatal(screenErr)
	}
	return screenDS
}

func TestTopK(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type pair struct{ v, id int }
	cmpPair := func(a, b pair) int { return cmp.Or(cmp.Compare(a.v, b.v), cmp.Compare(a.id, b.id)) }
	for _, n := range []int{0, 1, 2, 3, 10, 64, 257} {
		for _, k := range []int{-1, 0, 1, 2, 5, n - 1, n, n + 3} {
			for range 5 {
				xs := make([]pair, n)
				for i := range xs {
					xs[i] = pair{rng.IntN(8), i} // many equal values: the id breaks ties
				}
				want := slices.Clone(xs)
				slices.SortFunc(want, cmpPair)
				want = want[:min(max(k, 0), n)]
				got := topK(xs, k, cmpPair)
				if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
					t.Fatalf("n=%d k=%d: got %v, want %v", n, k, got, want)
				}
			}
		}
	}
}

// A screener answer with a limit is the first rows of the same answer
// without one (the partial sort agrees with the whole sort), and the whole
// answer is in the order the specification asks: each sort key in its
// order with missing values last, then ticker.
func TestScreenerLimitIsPrefix(t *testing.T) {
	ds := mustScreenDS(t)
	store := &engine.Store{}
	store.Publish(ds)
	for _, kept := range []int64{-1, 0} { // answer cache off, on
		cfg := DefaultConfig()
		cfg.AnswerCacheBytes = kept
		api := New(cfg, store, testKeys(t), SnapshotClock{Store: store}, prometheus.NewRegistry(), nil)
		ts := &testServer{store: store, api: api}
		n := ds.Screener().Len()
		if n < 60 {
			t.Fatalf("only %d screener rows", n)
		}
		for _, q := range []struct{ filters, sort string }{
			{``, `[{"by":"close_price","order":"asc"}]`},
			{``, `[{"by":"volume","order":"desc"}]`},
			{``, `[{"by":"employee_count","order":"desc"}]`},
			{``, `[{"by":"droplet:DIVIDEND_YIELD","order":"desc"}]`},
			{``, `[{"by":"droplet:DIVIDEND_YIELD_CS","order":"asc"}]`},
			{``, `[{"by":"droplet:PRICE_TO_EARNINGS","order":"asc"},{"by":"close_price","order":"desc"}]`},
			{``, `[{"by":"employee_count","order":"asc"},{"by":"droplet:NET_MARGIN","order":"desc"}]`},
			{`[{"type":"droplet","id":"DIVIDEND_YIELD","op":">","value":0}]`, `[{"by":"droplet:DIVIDEND_YIELD","order":"desc"}]`},
			{`[{"type":"droplet","id":"PRICE_TO_EARNINGS_PS","op":"between","min":-100,"max":100},{"type":"close_price","op":">=","value":1}]`, `[{"by":"droplet:PRICE_TO_EARNINGS_PS","order":"desc"}]`},
		} {
			body := func(limit int) string {
				b := fmt.Sprintf(`{"primaryOnly":false,"limit":%d,"sort":%s`, limit, q.sort)
				if q.filters != "" {
					b += `,"filters":` + q.filters
				}
				return b + "}"
			}
			full := arr(obj(ts.getJSON(t, "POST", "/v2/screener", testKeyDelayed, body(500)))["data"])
			if len(full) == 0 {
				t.Fatalf("%s: no rows", body(500))
			}
			checkScreenerOrder(t, q.sort, full)
			for _, limit := range []int{1, 2, 3, 7, len(full) / 2, len(full) - 1, len(full)} {
				if limit < 1 {
					continue
				}
				got := arr(obj(ts.getJSON(t, "POST", "/v2/screener", testKeyDelayed, body(limit)))["data"])
				if !reflect.DeepEqual(got, full[:limit]) {
					t.Errorf("%s: not the first %d rows of the whole answer", body(limit), limit)
				}
			}
		}
	}
}

// checkScreenerOrder checks rows against the order asked by sortJSON.
func checkScreenerOrder(t *testing.T, sortJSON string, rows []any) {
	t.Helper()
	var sorts []screenerSort
	if err := json.Unmarshal([]byte(sortJSON), &sorts); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(rows); i++ {
		a, b := obj(rows[i-1]), obj(rows[i])
		c := 0
		for k := range sorts {
			av, bv := obj(arr(a["sort"])[k])["value"], obj(arr(b["sort"])[k])["value"]
			switch {
			case av == nil && bv == nil:
			case av == nil:
				c = 1
			case bv == nil:
				c = -1
			default:
				c = cmp.Compare(av.(float64), bv.(float64))
				if sorts[k].Order == "desc" {
					c = -c
				}
			}
			if c != 0 {
				break
			}
		}
		if c == 0 {
			c = strings.Compare(a["ticker"].(string), b["ticker"].(string))
		}
		if c >= 0 {
			t.Fatalf("sort %s: row %d (%v) before row %d (%v)", sortJSON, i, a, i+1, b)
		}
	}
}

// The screener's rows encoded once per Dataset are what encoding them per
// request gives, the column values of every kind included.
func TestScreenEnc(t *testing.T) {
	ds := mustScreenDS(t)
	s := ds.Screener()
	e := newScreenEnc(s, s.Prices())
	for r := range int32(s.Len()) {
		as, is := s.Assets[r], s.Issuers[r]
		var want []byte
		want = append(want, `"ticker":`...)
		want = appendString(want, as.Ticker)
		want = append(want, `,"trading_name":`...)
		want = appendString(want, is.TradingName)
		want = append(want, `,"current_price":`...)
		want = appendNum(want, s.Close[r])
		if sec := is.Sector[0]; sec != nil {
			want = append(want, `,"sector_id":`...)
			want = appendString(want, sec.ID)
			want = append(want, `,"sector_name":`...)
			want = appendString(want, sec.Name)
		} else {
			want = append(want, `,"sector_id":null,"sector_name":null`...)
		}
		if got := e.heads.at(r); string(got) != string(want) {
			t.Fatalf("row %d head %s, want %s", r, got, want)
		}
		if e.suffix[r] != engine.ClassSuffix(as.StockType) {
			t.Fatalf("row %d suffix %q", r, e.suffix[r])
		}
	}
	nulls := 0
	for k, vals := range s.Ratios {
		c := col(&e.ratios[k], vals)
		if col(&e.ratios[k], vals) != c {
			t.Fatal("a column is encoded twice")
		}
		for r, v := range vals {
			if got, want := string(c.at(int32(r))), string(appendNum(nil, v)); got != want {
				t.Fatalf("ratio %d row %d: %s, want %s", k, r, got, want)
			}
			if !v.Valid() {
				nulls++
			}
		}
	}
	if nulls == 0 {
		t.Error("no missing ratio: the null case is not covered")
	}
	// Ticker order.
	for r := range s.Len() {
		for q := range s.Len() {
			if (e.tickerRank[r] < e.tickerRank[q]) != (s.Assets[r].Ticker < s.Assets[q].Ticker) {
				t.Fatalf("ticker rank of %s and %s", s.Assets[r].Ticker, s.Assets[q].Ticker)
			}
		}
	}
}

// Prepare and Warm encode the screener's rows before the first screener
// request; Warm also builds the search index.
func TestScreenEncPrepared(t *testing.T) {
	ds := mustScreenDS(t)
	store := &engine.Store{}
	api := New(DefaultConfig(), store, testKeys(t), SnapshotClock{Store: store}, prometheus.NewRegistry(), nil)
	api.Prepare(ds, "id", time.Time{})
	if in := api.dsnext.Load(); in == nil || in.screen.e == nil {
		t.Error("Prepare left the screener's rows to the first request")
	}
	store.Publish(mustSmall(t))
	api.Warm()
	if in := api.info(store.Current()); in.screen.e == nil || in.searchIx.text == "" {
		t.Error("Warm left the screener's rows or the search index to the first request")
	}
}

// A screener request leaves its call's scratch empty: nothing of its body
// or of the Dataset is held by the pooled call after it, also when the
// request fails after its filters were compiled.
func TestScreenerScratchEmptied(t *testing.T) {
	ds := mustScreenDS(t)
	store := &engine.Store{}
	store.Publish(ds)
	api := New(DefaultConfig(), store, testKeys(t), SnapshotClock{Store: store}, prometheus.NewRegistry(), nil)
	var rt *Route
	for i := range routeTable {
		if routeTable[i].Path == routeScreener {
			rt = &routeTable[i]
		}
	}
	if rt == nil {
		t.Fatal("no screener route")
	}
	sector := ds.Screener().SectorID[0][0]
	for _, body := range []string{
		`{"primaryOnly":false,"filters":[{"type":"droplet","id":"DIVIDEND_YIELD","op":">","value":0},{"type":"sector","in":["` + sector + `"]}],"sort":[{"by":"droplet:DIVIDEND_YIELD"},{"by":"volume"}]}`,
		`{"filters":[{"type":"close_price","op":">","value":1}],"sort":[{"by":"nope"}]}`, // fails after a filter is compiled
	} {
		c := &call{ds: ds, route: rt, body: []byte(body), s: new(scratch)}
		r := httptest.NewRequest("POST", "/v2/screener", nil)
		_, err := api.screener(c, nil, r, nil)
		x := c.s.scr
		if x == nil || len(x.filters) != 0 || len(x.sorts) != 0 || len(x.heads) != 0 {
			t.Fatalf("%s: scratch not emptied: %+v", body, x)
		}
		for _, f := range x.filters[:cap(x.filters)] {
			if f.src != nil || f.col.vals != nil || f.sectors != nil {
				t.Fatalf("%s: a filter still refers to the request", body)
			}
		}
		for _, so := range x.sorts[:cap(x.sorts)] {
			if so.col.vals != nil || so.src.By != "" {
				t.Fatalf("%s: a sort still refers to the request", body)
			}
		}
		if fails := strings.Contains(body, "nope"); (err != nil) != fails || !fails && cap(x.filters) == 0 {
			t.Fatalf("%s: error %v, %d filters kept", body, err, cap(x.filters))
		}
	}
}

// offset pages through the whole answer: the pages, in turn, are the
// whole answer (ranks continuing), X-Total-Count gives its length, a page
// past the end is empty, and metadata mirrors an offset sent.
func TestScreenerOffset(t *testing.T) {
	ds := mustScreenDS(t)
	store := &engine.Store{}
	store.Publish(ds)
	api := New(DefaultConfig(), store, testKeys(t), SnapshotClock{Store: store}, prometheus.NewRegistry(), nil)
	ts := &testServer{store: store, api: api}
	for _, sort := range []string{`[{"by":"volume","order":"desc"}]`, `[{"by":"droplet:DIVIDEND_YIELD","order":"asc"},{"by":"close_price","order":"desc"}]`} {
		whole := ts.do("POST", "/v2/screener", testKeyDelayed, `{"primaryOnly":false,"limit":500,"sort":`+sort+`}`)
		full := arr(obj(decodeJSON(t, whole.Body.Bytes()))["data"])
		if total := whole.Header().Get("X-Total-Count"); total != fmt.Sprint(len(full)) || len(full) < 60 {
			t.Fatalf("%s: X-Total-Count %q, %d rows", sort, total, len(full))
		}
		var pages []any
		for offset := 0; offset <= len(full); offset += 7 {
			w := ts.do("POST", "/v2/screener", testKeyDelayed, fmt.Sprintf(`{"primaryOnly":false,"limit":7,"offset":%d,"sort":%s}`, offset, sort))
			page := obj(decodeJSON(t, w.Body.Bytes()))
			md := obj(page["metadata"])
			if md["offset"] != float64(offset) || md["count"] != float64(len(arr(page["data"]))) || w.Header().Get("X-Total-Count") != fmt.Sprint(len(full)) {
				t.Fatalf("offset %d: metadata %v, X-Total-Count %q", offset, md, w.Header().Get("X-Total-Count"))
			}
			validateAnswer(t, "POST", "/v2/screener", `{"offset":1}`, w)
			pages = append(pages, arr(page["data"])...)
		}
		if !reflect.DeepEqual(pages, full) {
			t.Errorf("%s: the pages are not the whole answer", sort)
		}
	}
	if w := ts.do("POST", "/v2/screener", testKeyDelayed, `{"offset":100000}`); w.Code != 200 || !strings.Contains(w.Body.String(), `"offset":100000,"primaryOnly":true,"count":0},"data":[]}`) {
		t.Errorf("past the end: %d %s", w.Code, w.Body)
	}
	if w := ts.do("POST", "/v2/screener", testKeyDelayed, `{"limit":2}`); strings.Contains(w.Body.String(), `"offset"`) {
		t.Errorf("metadata names an offset not sent: %s", w.Body)
	}
	checkError(t, ts.do("POST", "/v2/screener", testKeyDelayed, `{"offset":-1}`), 400, `field "offset"`)
}

// {"type":"index","in":[...]} keeps the members of any of the indexes
// (symbols in any case), echoed as sent; an unknown index is a 400 naming
// the indexes, other fields with it are a 400.
func TestScreenerIndexFilter(t *testing.T) {
	ds := mustScreenDS(t)
	store := &engine.Store{}
	store.Publish(ds)
	api := New(DefaultConfig(), store, testKeys(t), SnapshotClock{Store: store}, prometheus.NewRegistry(), nil)
	ts := &testServer{store: store, api: api}
	if len(ds.Indexes()) < 2 {
		t.Fatalf("%d indexes: the fixture needs two", len(ds.Indexes()))
	}
	a, b := &ds.Indexes()[0], &ds.Indexes()[1]
	members := map[string]bool{}
	for _, ix := range []*engine.IndexData{a, b} {
		for _, as := range ix.Members {
			if as != nil {
				members[as.Ticker] = true
			}
		}
	}
	body := fmt.Sprintf(`{"primaryOnly":false,"limit":500,"filters":[{"type":"index","in":[%q,%q]}]}`, strings.ToLower(a.Symbol), b.Symbol)
	w := ts.do("POST", "/v2/screener", testKeyDelayed, body)
	rows := arr(obj(decodeJSON(t, w.Body.Bytes()))["data"])
	all := arr(obj(ts.getJSON(t, "POST", "/v2/screener", testKeyDelayed, `{"primaryOnly":false,"limit":500}`))["data"])
	var want []string
	for _, r := range all {
		if tk := obj(r)["ticker"].(string); members[tk] {
			want = append(want, tk)
		}
	}
	var got []string
	for _, r := range rows {
		got = append(got, obj(r)["ticker"].(string))
		if f := arr(obj(r)["filters"]); len(f) != 1 || !reflect.DeepEqual(obj(f[0]), map[string]any{"type": "index", "in": []any{strings.ToLower(a.Symbol), b.Symbol}}) {
			t.Fatalf("filters echoed as %v", f)
		}
	}
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("index filter: %v\nwant %v", got, want)
	}
	validateAnswer(t, "POST", "/v2/screener", body, w)
	checkError(t, ts.do("POST", "/v2/screener", testKeyDelayed, `{"filters":[{"type":"index","in":["NOPE"]}]}`), 400, `filters[0]: index "NOPE" not found (indexes: `)
	checkError(t, ts.do("POST", "/v2/screener", testKeyDelayed, `{"filters":[{"type":"index","in":[]}]}`), 400, `filters[0]: an index filter needs a non-empty "in" list`)
	checkError(t, ts.do("POST", "/v2/screener", testKeyDelayed, `{"filters":[{"type":"index","in":["`+a.Symbol+`"],"op":">"}]}`), 400, `filters[0]: an index filter takes only type and in`)
}

// decodeJSON decodes an answer body.
func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %.200s", err, b)
	}
	return v
}
