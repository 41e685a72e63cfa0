package httpapi

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// GET /quotes/IBOV answers the index's levels, recomputed here from the
// portfolio: Σ theoretical quantity × adjusted close ÷ reductor per
// session (daily), per minute (intraday), and from the current quotes
// (current); each answer validates against the document.
func TestIndexLevels(t *testing.T) {
	ts := newTestServer(t, true)
	ds := ts.store.Current()
	ix, ok := indexLevelTicker(ds, "IBOV")
	if !ok {
		t.Fatal("the fixture's IBOV has no computable level")
	}
	level := func(price func(as *engine.Asset) (engine.Num, bool)) (float64, bool) {
		var sum float64
		for i, as := range ix.Members {
			p, ok := price(as)
			if !ok || !p.Valid() {
				return 0, false
			}
			sum += float64(ix.Index.Members[i].TheoreticalQty) * float64(p)
		}
		return sum / float64(ix.Reductor), true
	}
	type point struct {
		Date      string
		Open      *float64 `json:"open_price"`
		CloseP    *float64 `json:"close_price"`
		High      *float64 `json:"highest_price"`
		Volume    *float64
		Variation *float64
	}
	get := func(target string) []point {
		t.Helper()
		w := ts.do("GET", target, testKeyDelayed, "")
		if w.Code != 200 {
			t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
		}
		validateAnswer(t, "GET", target, "", w)
		var pts []point
		if err := json.Unmarshal(w.Body.Bytes(), &pts); err != nil {
			t.Fatalf("GET %s: %v: %.300s", target, err, w.Body)
		}
		return pts
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

	// Daily: every session of the window.
	daily := get("/v2/quotes/ibov?type=historical&start_date=2000-01-01")
	if len(daily) < 2 {
		t.Fatalf("%d daily points", len(daily))
	}
	for _, p := range daily {
		d, err := engine.ParseDate(p.Date[:10])
		if err != nil {
			t.Fatal(err)
		}
		want, ok := level(func(as *engine.Asset) (engine.Num, bool) {
			k := as.DayIndex(d)
			if k < 0 {
				return engine.Null, false
			}
			return as.DailyBar(k, true).Close, true
		})
		if !ok || p.CloseP == nil || !near(*p.CloseP, want) {
			t.Errorf("%s: level %v, recomputed %v", p.Date, p.CloseP, want)
		}
		if p.Volume != nil || p.High != nil {
			t.Errorf("%s: volume %v, high %v: want null", p.Date, p.Volume, p.High)
		}
	}

	// Intraday: each minute's level from the members' last prices.
	as0 := ix.Members[0]
	if as0.Intraday.Len() == 0 {
		t.Fatalf("%s has no 1-minute bars in the fixture", as0.Ticker)
	}
	{
		last := as0.Intraday.Times[as0.Intraday.Len()-1]
		day := engine.Date(last / 86400)
		pts := get("/v2/quotes/IBOV?type=historical&interval=60&start_date=" + day.String() + "&end_date=" + day.String())
		if len(pts) == 0 {
			t.Fatal("no intraday point")
		}
		t.Logf("%d daily points, %d intraday points on %s", len(daily), len(pts), day)
		p := pts[len(pts)-1]
		tm, err := time.Parse(time.RFC3339, p.Date)
		if err != nil {
			t.Fatal(err)
		}
		at := tm.Unix()
		want, ok := level(func(as *engine.Asset) (engine.Num, bool) {
			lo, hi := as.MinuteRange(int64(day)*86400, at)
			for i := hi - 1; i >= lo; i-- {
				if b := as.AppendIntraday(nil, i, i+1, true); len(b) == 1 && b[0].Close.Valid() {
					return b[0].Close, true
				}
			}
			k := as.DayIndex(day - 1)
			if k < 0 {
				return engine.Null, false
			}
			return as.DailyBar(k, true).Close, true
		})
		if !ok || p.CloseP == nil || !near(*p.CloseP, want) {
			t.Errorf("intraday %s: level %v, recomputed %v", p.Date, p.CloseP, want)
		}
	}

	// Current: the members' current quotes.
	w := ts.do("GET", "/v2/quotes/IBOV?type=current", testKeyDelayed, "")
	validateAnswer(t, "GET", "/v2/quotes/IBOV?type=current", "", w)
	var cur point
	json.Unmarshal(w.Body.Bytes(), &cur)
	v := ts.api.view(&call{ds: ds, key: KeyEntry{Plan: PlanDelayed}, now: ts.api.clock.Now()})
	want, ok := level(func(as *engine.Asset) (engine.Num, bool) { q := v.quote(as).Adjusted(); return q.Close, q.Valid() })
	if w.Code != 200 || !ok || cur.CloseP == nil || !near(*cur.CloseP, want) || cur.Variation == nil {
		t.Errorf("current: %d %s, recomputed %v", w.Code, w.Body, want)
	}

	checkError(t, ts.do("GET", "/v2/quotes/IBOV?type=chart", testKeyDelayed, ""), 400, "IBOV is an index")
}
