package httpapi

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// GET /quotes/T1,T2 answers as POST /quotes does with the same tickers and
// options, byte for byte; bad lists are 400s naming the ticker or count.
func TestQuotesMultiGet(t *testing.T) {
	ts := newTestServer(t, true)
	get := ts.do("GET", "/v2/quotes/enhz3,MSAZ3,SELIC,XXXX3,ENHZ3?type=current", testKeyDelayed, "")
	post := ts.do("POST", "/v2/quotes", testKeyDelayed, `{"tickers":["ENHZ3","MSAZ3","SELIC","XXXX3","ENHZ3"],"type":"current"}`)
	if get.Code != 200 || get.Body.String() != post.Body.String() {
		t.Errorf("GET %d %s\nPOST %d %s", get.Code, get.Body, post.Code, post.Body)
	}
	hist := ts.do("GET", "/v2/quotes/ENHZ3,MSAZ3?start_date=2024-03-26&end_date=2024-03-27", testKeyDelayed, "")
	histPost := ts.do("POST", "/v2/quotes", testKeyDelayed, `{"tickers":["ENHZ3","MSAZ3"],"start_date":"2024-03-26","end_date":"2024-03-27"}`)
	if hist.Code != 200 || hist.Body.String() != histPost.Body.String() {
		t.Errorf("historical GET %d %s\nPOST %s", hist.Code, hist.Body, histPost.Body)
	}
	validateAnswer(t, "GET", "/v2/quotes/ENHZ3,MSAZ3?start_date=2024-03-26&end_date=2024-03-27", "", hist)
	checkError(t, ts.do("GET", "/v2/quotes/ENHZ3,PETR-4", testKeyDelayed, ""), 400, `ticker "PETR-4"`)
	checkError(t, ts.do("GET", "/v2/quotes/ENHZ3,,MSAZ3", testKeyDelayed, ""), 400, `ticker ""`)
	checkError(t, ts.do("GET", "/v2/quotes/"+strings.Repeat("ENHZ3,", 500)+"ENHZ3", testKeyDelayed, ""), 400, "501 tickers: at most 500")
}

// An adjusted datapoint's variation_value is the raw difference divided
// by the factor, not the binary noise of subtracting adjusted prices.
func TestAdjustedVariationValue(t *testing.T) {
	b := engine.Bar{Time: 1738800000, Open: 36.15 / 3, High: 36.15 / 3, Low: 36.15 / 3, Close: 36.15 / 3, Volume: 1, Factor: 3}
	got := string(appendBar(nil, &b, 35.5/3, []byte(`"BRL"`), true))
	if !strings.Contains(got, `"variation_value":0.21666666666666667`) {
		t.Errorf("adjusted: %s", got)
	}
	raw := engine.Bar{Time: 1738800000, Close: 36.15, Factor: 1}
	if got := string(appendBar(nil, &raw, 35.5, []byte(`"BRL"`), false)); !strings.Contains(got, `"variation_value":0.65`) {
		t.Errorf("unadjusted: %s", got)
	}
}

// A daily series' first datapoint compares with the last session dated
// before its bucket's start, also when the bucket (a width other than
// whole days) starts within the day of that session: the variation of a
// bucket does not depend on where the window starts.
func TestFirstBucketVariation(t *testing.T) {
	ts := newTestServer(t, true)
	type point struct {
		Time      time.Time `json:"date"`
		Date      int64     `json:"-"` // unix seconds
		Close     *float64  `json:"close_price"`
		Variation *float64  `json:"variation"`
	}
	series := func(body string) []point {
		t.Helper()
		w := ts.do("POST", "/v2/quotes", testKeyDelayed, body)
		var out map[string][]point
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &out) != nil {
			t.Fatalf("%s: %d %s", body, w.Code, w.Body)
		}
		pts := out["ENHZ3"]
		for i := range pts {
			pts[i].Date = pts[i].Time.Unix()
		}
		return pts
	}
	const width = 100000
	daily := series(`{"tickers":["ENHZ3"],"start_date":"2024-01-01","end_date":"2024-03-31"}`)
	whole := series(fmt.Sprintf(`{"tickers":["ENHZ3"],"interval":%d,"start_date":"2024-01-01","end_date":"2024-03-31"}`, width))
	checked := 0
	for i, b := range whole {
		if i == 0 || b.Date%86400 == 0 || b.Variation == nil {
			continue // only buckets starting within a day, after the window's first
		}
		// The session dated on the bucket's start day comes before the
		// bucket: it is the reference when there is one.
		var ref *point
		for j := range daily {
			if daily[j].Date < b.Date {
				ref = &daily[j]
			}
		}
		if ref == nil || ref.Date != b.Date/86400*86400 || ref.Close == nil {
			continue
		}
		first := ""
		for _, d := range daily {
			if d.Date >= b.Date {
				first = time.Unix(d.Date, 0).UTC().Format(time.DateOnly)
				break
			}
		}
		cut := series(fmt.Sprintf(`{"tickers":["ENHZ3"],"interval":%d,"start_date":"%s","end_date":"2024-03-31"}`, width, first))
		if len(cut) == 0 || cut[0].Date != b.Date || cut[0].Variation == nil {
			t.Fatalf("window from %s: first bucket %+v, want the bucket of %d", first, cut, b.Date)
		}
		want := *b.Close / *ref.Close - 1
		if math.Abs(*cut[0].Variation-want) > 1e-12 || math.Abs(*b.Variation-want) > 1e-12 {
			t.Errorf("bucket %d: variation %v first in its window, %v within a longer one; want %v (close %v against the session of %d, close %v)",
				b.Date, *cut[0].Variation, *b.Variation, want, *b.Close, ref.Date, *ref.Close)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no bucket starting within a day after a session of that day")
	}
}

// A start_date after the last session, without end_date, is an empty
// series (as with both dates ahead), not a 400 about an end_date the
// client did not send; after an end_date sent, it is still a 400.
func TestStartDateAhead(t *testing.T) {
	ts := newTestServer(t, true)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v2/quotes/ENHZ3?start_date=2030-01-01", ""},
		{"GET", "/v2/quotes/ENHZ3?start_date=2030-01-01&interval=300", ""},
		{"POST", "/v2/quotes", `{"tickers":["ENHZ3"],"start_date":"2030-01-01"}`},
		{"GET", "/v2/quotes/ENHZ3/total-return?start_date=2030-01-01", ""},
	} {
		w := ts.do(c.method, c.path, testKeyDelayed, c.body)
		if w.Code != 200 || strings.Contains(w.Body.String(), "close_price") {
			t.Errorf("%s %s %s: %d %s", c.method, c.path, c.body, w.Code, w.Body)
		}
	}
	checkError(t, ts.do("GET", "/v2/quotes/ENHZ3?start_date=2024-03-27&end_date=2024-03-26", testKeyDelayed, ""), 400, "start_date 2024-03-27 is after end_date 2024-03-26")
	checkError(t, ts.do("GET", "/v2/quotes/ENHZ3/total-return?start_date=2030-01-01&end_date=2029-01-01", testKeyDelayed, ""), 400, "is after end_date")
}

// A company-level indicator's id takes no class suffix: GROSS_MARGIN_CS
// is a 400, not an empty answer.
func TestRatioIDSuffix(t *testing.T) {
	ts := newTestServer(t, true)
	checkError(t, ts.do("GET", "/v2/companies/ENHZ/ratios?ids=GROSS_MARGIN_CS", testKeyDelayed, ""), 400, `indicator id "GROSS_MARGIN_CS": GROSS_MARGIN is a company-level indicator`)
	if w := ts.do("GET", "/v2/companies/ENHZ/ratios?ids=GROSS_MARGIN", testKeyDelayed, ""); w.Code != 200 || !strings.Contains(w.Body.String(), "GROSS_MARGIN") {
		t.Errorf("GROSS_MARGIN: %d %.200s", w.Code, w.Body)
	}
}

// The corporate-actions filter takes PSA, a class of the spec's share
// classes that events carry, beside the others.
func TestShareActionsPSA(t *testing.T) {
	ts := newTestServer(t, true)
	if w := ts.do("GET", "/v2/companies/ENHZ/corporate-actions?stock_type=PSA", testKeyDelayed, ""); w.Code != 200 {
		t.Errorf("stock_type=PSA: %d %s", w.Code, w.Body)
	}
	checkError(t, ts.do("GET", "/v2/companies/ENHZ/corporate-actions?stock_type=PSE", testKeyDelayed, ""), 400, "stock_type")
}

// type=chart ignores interval, start_date and end_date: valid values
// change nothing; a value no request could take is still a 400.
func TestChartIgnoresWindow(t *testing.T) {
	ts := newTestServer(t, true)
	plain := ts.do("POST", "/v2/quotes", testKeyDelayed, `{"tickers":["ENHZ3"],"type":"chart"}`)
	with := ts.do("POST", "/v2/quotes", testKeyDelayed, `{"tickers":["ENHZ3"],"type":"chart","interval":300,"start_date":"2024-03-26","end_date":"2024-03-26"}`)
	if plain.Code != 200 || with.Body.String() != plain.Body.String() || !strings.Contains(plain.Body.String(), `"chart"`) {
		t.Errorf("chart with a window: %d %.200s\nwithout: %d %.200s", with.Code, with.Body, plain.Code, plain.Body)
	}
	checkError(t, ts.do("POST", "/v2/quotes", testKeyDelayed, `{"tickers":["ENHZ3"],"type":"chart","interval":5}`), 400, "interval")
}
