package httpapi

import (
	"testing"
)

// The routes of one type answer byte for byte as the untyped quote routes
// do with that type: GET /quotes/{ticker}/TYPE as GET
// /quotes/{ticker}?type=TYPE (an index's levels, a macro series, an
// unknown ticker's 404, CSV included), POST /quotes/TYPE as POST /quotes
// with "type"; each accepts only the options its type reads.
func TestQuotesTyped(t *testing.T) {
	ts := newTestServer(t, true)
	same := func(key, typedMethod, typed, typedBody, method, untyped, body string) {
		t.Helper()
		got := ts.do(typedMethod, typed, key, typedBody)
		want := ts.do(method, untyped, key, body)
		if got.Code != want.Code || got.Body.String() != want.Body.String() {
			t.Errorf("%s %s %s: %d %.300s\nwant (%s %s %s) %d %.300s", typedMethod, typed, typedBody, got.Code, got.Body, method, untyped, body, want.Code, want.Body)
		}
		if got.Code == 200 && got.Header().Get("Content-Type") == "application/json" {
			validateAnswer(t, typedMethod, typed, typedBody, got)
		}
	}
	for _, ticker := range []string{"ENHZ3", "enhz3", "IBOV", "SELIC", "XXXX3"} {
		same(testKeyDelayed, "GET", "/v2/quotes/"+ticker+"/current", "", "GET", "/v2/quotes/"+ticker+"?type=current", "")
		same(testKeyDelayed, "GET", "/v2/quotes/"+ticker+"/current?adjusted=true", "", "GET", "/v2/quotes/"+ticker+"?type=current&adjusted=true", "")
		same(testKeyDelayed, "GET", "/v2/quotes/"+ticker+"/historical", "", "GET", "/v2/quotes/"+ticker, "")
		same(testKeyDelayed, "GET", "/v2/quotes/"+ticker+"/historical?start_date=2024-03-20&end_date=2024-03-27&adjusted=true", "",
			"GET", "/v2/quotes/"+ticker+"?type=historical&start_date=2024-03-20&end_date=2024-03-27&adjusted=true", "")
		same(testKeyDelayed, "GET", "/v2/quotes/"+ticker+"/historical?interval=300&end_date=2024-03-27", "",
			"GET", "/v2/quotes/"+ticker+"?interval=300&end_date=2024-03-27", "")
		same(testKeyDelayed, "GET", "/v2/quotes/"+ticker+"/chart", "", "GET", "/v2/quotes/"+ticker+"?type=chart", "")
		same(testKeyDelayed, "GET", "/v2/quotes/"+ticker+"/historical?format=csv", "", "GET", "/v2/quotes/"+ticker+"?format=csv", "")
	}
	const tickers = `"tickers":["ENHZ3","MSAZ3","SELIC","XXXX3","ENHZ3"]`
	same(testKeyDelayed, "POST", "/v2/quotes/current", `{`+tickers+`}`, "POST", "/v2/quotes", `{`+tickers+`,"type":"current"}`)
	same(testKeyDelayed, "POST", "/v2/quotes/current", `{`+tickers+`,"adjusted":true}`, "POST", "/v2/quotes", `{`+tickers+`,"type":"current","adjusted":true}`)
	same(testKeyDelayed, "POST", "/v2/quotes/historical", `{`+tickers+`,"start_date":"2024-03-20","interval":604800}`,
		"POST", "/v2/quotes", `{`+tickers+`,"start_date":"2024-03-20","interval":604800}`)
	same(testKeyDelayed, "POST", "/v2/quotes/chart", `{`+tickers+`}`, "POST", "/v2/quotes", `{`+tickers+`,"type":"chart"}`)

	// eod: the previous session's quote on the current route, as the
	// untyped route answers it without options; the other types refused.
	same(testKeyEOD, "GET", "/v2/quotes/ENHZ3/current?adjusted=true", "", "GET", "/v2/quotes/ENHZ3?adjusted=true", "")
	same(testKeyEOD, "POST", "/v2/quotes/current", `{`+tickers+`}`, "POST", "/v2/quotes", `{`+tickers+`}`)
	checkError(t, ts.do("GET", "/v2/quotes/ENHZ3/historical", testKeyEOD, ""), 403, "your plan (eod) does not include historical quotes")
	checkError(t, ts.do("POST", "/v2/quotes/chart", testKeyEOD, `{`+tickers+`}`), 403, "your plan (eod) does not include chart quotes")

	// Only the options of the type.
	checkError(t, ts.do("GET", "/v2/quotes/ENHZ3/current?type=current", testKeyDelayed, ""), 400, `unknown query parameter "type" (accepted: adjusted, format)`)
	checkError(t, ts.do("GET", "/v2/quotes/ENHZ3/chart?interval=60", testKeyDelayed, ""), 400, `unknown query parameter "interval"`)
	checkError(t, ts.do("GET", "/v2/quotes/ENHZ3,MSAZ3/current", testKeyDelayed, ""), 400, `ticker "ENHZ3,MSAZ3"`)
	checkError(t, ts.do("POST", "/v2/quotes/current", testKeyDelayed, `{`+tickers+`,"type":"current"}`), 400, `unknown field "type" (accepted: tickers, adjusted)`)
	checkError(t, ts.do("POST", "/v2/quotes/chart", testKeyDelayed, `{`+tickers+`,"start_date":"2024-03-20"}`), 400, `unknown field "start_date"`)
	checkError(t, ts.do("POST", "/v2/quotes/historical", testKeyDelayed, `{"tickers":[]}`), 400, `field "tickers": required`)
}

// interval's errors name its unit, seconds, in the query and in a body.
func TestIntervalErrorsSayTheUnit(t *testing.T) {
	ts := newTestServer(t, true)
	for _, c := range []struct{ method, target, body, want string }{
		{"GET", "/v2/quotes/ENHZ3?interval=30", "", `query parameter interval=30: want 60 to 1099511627776 seconds`},
		{"GET", "/v2/quotes/ENHZ3/historical?interval=5m", "", `query parameter interval="5m": want a whole number of seconds`},
		{"GET", "/v2/quotes/ENHZ3?interval=1.5", "", `query parameter interval="1.5": want a whole number of seconds`},
		{"POST", "/v2/quotes", `{"tickers":["ENHZ3"],"interval":30}`, `request body: field "interval": 30: want a whole number of seconds, at least 60`},
		{"POST", "/v2/quotes/historical", `{"tickers":["ENHZ3"],"interval":"5m"}`, `request body: field "interval": want a number of seconds, got a string`},
	} {
		checkError(t, ts.do(c.method, c.target, testKeyDelayed, c.body), 400, c.want)
	}
}
