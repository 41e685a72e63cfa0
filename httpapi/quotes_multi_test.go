package httpapi

import (
	"strings"
	"testing"

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
