package httpapi

import (
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

func TestParseQuotesRequest(t *testing.T) {
	ok := func(body string, check func(q *quotesRequest) bool) {
		t.Helper()
		var q quotesRequest
		if err := parseQuotesRequest([]byte(body), &q, &quotesBody); err != nil {
			t.Errorf("%s: %v", body, err)
			return
		}
		if !check(&q) {
			t.Errorf("%s: got %+v", body, q)
		}
	}
	bad := func(body, wantMsg string) {
		t.Helper()
		var q quotesRequest
		err := parseQuotesRequest([]byte(body), &q, &quotesBody)
		if err == nil {
			t.Errorf("%s: accepted", body)
			return
		}
		st, msg := statusOf(err)
		if st != 400 || !strings.Contains(msg, wantMsg) {
			t.Errorf("%s: %d %q, want 400 containing %q", body, st, msg, wantMsg)
		}
	}
	ok(`{"tickers":["PETR4","VALE3","SELIC","IPCA","USD","BOVA11","ABCD"]}`, func(q *quotesRequest) bool {
		return len(q.Tickers) == 7 && string(q.Tickers[6]) == "ABCD" && q.Type == "" && q.Start == engine.NoDate && !q.Adjusted
	})
	ok(` { "tickers" : [ "PETR4" ] , "type":"historical","interval":3600,"start_date":"2024-03-25","end_date":"2024-03-28","adjusted":true } `, func(q *quotesRequest) bool {
		return q.Type == TypeHistorical && q.Interval == 3600 && q.Start == engine.MakeDate(2024, 3, 25) && q.End == engine.MakeDate(2024, 3, 28) && q.Adjusted
	})
	ok(`{"tickers":["\u0050ETR4"],"type":null,"interval":null,"start_date":null,"adjusted":null}`, func(q *quotesRequest) bool {
		return string(q.Tickers[0]) == "PETR4" && q.Type == "" && q.Interval == 0 && q.Start == engine.NoDate && !q.Adjusted
	})
	ok(`{"tickers":["VALE3"],"interval":6e1}`, func(q *quotesRequest) bool { return q.Interval == 60 })
	// Macro series: CDI and the currencies by ISO code (the PTAX rates).
	ok(`{"tickers":["CDI","EUR","ARS","CNY","PET"]}`, func(q *quotesRequest) bool { return len(q.Tickers) == 5 })
	bad(``, "empty")
	bad(`[]`, "want a JSON object")
	bad(`{}`, `"tickers"`)
	bad(`{"tickers":[]}`, "1 to 500")
	bad(`{"tickers":null}`, "required")
	bad(`{"tickers":"PETR4"}`, "want an array")
	bad(`{"tickers":[4]}`, "want a string")
	bad(`{"tickers":["petr4"]}`, `"petr4"`)
	bad(`{"tickers":["PETR4X"]}`, "PETR4X")
	bad(`{"tickers":["PE4"]}`, "PE4")
	bad(`{"tickers":["PETR456"]}`, "PETR456")
	bad(`{"tickers":["PETR4"],"typo":1}`, `unknown field "typo"`)
	bad(`{"tickers":["PETR4"],"type":"current","type":"historical"}`, `request body: field "type" is given more than once`)
	bad(`{"tickers":["PETR4"],"adjusted":null,"adjusted":true}`, `field "adjusted" is given more than once`)
	bad(`{"tickers":["PETR4"],"type":"spot"}`, `"type"`)
	bad(`{"tickers":["PETR4"],"type":1}`, `"type": want a string`)
	bad(`{"tickers":["PETR4"],"interval":59}`, "at least 60")
	bad(`{"tickers":["PETR4"],"interval":60.5}`, "whole number")
	bad(`{"tickers":["PETR4"],"interval":"60"}`, `"interval"`)
	bad(`{"tickers":["PETR4"],"start_date":"2024-13-01"}`, `"start_date"`)
	bad(`{"tickers":["PETR4"],"end_date":"28/03/2024"}`, `"end_date"`)
	bad(`{"tickers":["PETR4"],"adjusted":"true"}`, `"adjusted"`)
	bad(`{"tickers":["PETR4"]} {}`, "after the JSON object")
	bad(`{"tickers":["PETR4"]`, "want , or }")
	bad(`{"tickers":["PETR4",]}`, "want a string")
	bad(`{"tickers":["PETR4"],}`, "field name")
	bad(`{"tickers":["PE`, "unterminated")
	bad(`{"tickers":["PETR4"],"interval":01}`, "leading zero")
	bad(`{"tickers":["PETR4"],"interval":1e999}`, "out of range")
	many := `{"tickers":["A000"` + strings.Repeat(`,"A000"`, 500) + `]}`
	bad(many, "at most 500")
}

func TestParseQuotesRequestReusesTickers(t *testing.T) {
	var q quotesRequest
	body := []byte(`{"tickers":["PETR4","VALE3"],"type":"current"}`)
	parseQuotesRequest(body, &q, &quotesBody)
	if n := testing.AllocsPerRun(100, func() {
		if err := parseQuotesRequest(body, &q, &quotesBody); err != nil {
			t.Fatal(err)
		}
	}); n > 0 {
		t.Errorf("parseQuotesRequest allocates %v times", n)
	}
}

// TestNumberZeroAlloc: numbers are parsed from the body bytes without a
// copy (a short string(b) passed to ParseFloat stays on the stack).
func TestNumberZeroAlloc(t *testing.T) {
	for _, in := range []string{"60", "86400", "-1.5e3", "3600.000000000000000000000000"} {
		s := &jsonScanner{b: []byte(in)}
		f, err := s.number()
		want, _ := strconv.ParseFloat(in, 64)
		if err != nil || f != want {
			t.Fatalf("number(%q) = %v, %v", in, f, err)
		}
		if n := testing.AllocsPerRun(100, func() {
			s.i = 0
			if _, err := s.number(); err != nil {
				t.Fatal(err)
			}
		}); n > 0 {
			t.Errorf("number(%q) allocates %v times", in, n)
		}
	}
	var q quotesRequest
	body := []byte(`{"tickers":["PETR4"],"type":"historical","interval":3600,"start_date":"2024-03-25","end_date":"2024-03-28"}`)
	if n := testing.AllocsPerRun(100, func() {
		if err := parseQuotesRequest(body, &q, &quotesBody); err != nil {
			t.Fatal(err)
		}
	}); n > 0 {
		t.Errorf("parseQuotesRequest with an interval allocates %v times", n)
	}
}

func FuzzQuotesBody(f *testing.F) {
	for _, s := range []string{
		`{"tickers":["PETR4"]}`, `{"tickers":["PETR4","SELIC"],"type":"chart"}`,
		`{"tickers":["PETR4"],"type":"historical","interval":60,"start_date":"2024-03-25","end_date":"2024-03-28","adjusted":true}`,
		`{"tickers":["\ud83d\ude00"]}`, `{"tickers":["PETR4"]}x`, `{"a":`, `"\u12`, `{"tickers":[1e5]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var q quotesRequest
		err := parseQuotesRequest(b, &q, &quotesBody)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Status != 400 {
				t.Fatalf("%q: error %v is not a 400", b, err)
			}
			return
		}
		if len(q.Tickers) < 1 || len(q.Tickers) > MaxTickers {
			t.Fatalf("%q: %d tickers accepted", b, len(q.Tickers))
		}
		for _, tk := range q.Tickers {
			if !validTicker(string(tk)) {
				t.Fatalf("%q: invalid ticker %q accepted", b, tk)
			}
		}
		if q.Interval != 0 && q.Interval < 60 {
			t.Fatalf("%q: interval %d accepted", b, q.Interval)
		}
	})
}

func TestParseScreenerRequest(t *testing.T) {
	num := func(v float64) *float64 { return &v }
	ok := func(body string, want screenerRequest) {
		t.Helper()
		var got screenerRequest
		if err := parseScreenerRequest([]byte(body), &got); err != nil {
			t.Errorf("%s: %v", body, err)
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", body, got, want)
		}
	}
	limit, no := 7, false
	ok(`{}`, screenerRequest{})
	ok(` {"limit":null,"primaryOnly":null,"filters":null,"sort":null} `, screenerRequest{})
	ok(`{"limit":7,"primaryOnly":false,"filters":[],"sort":[]}`, screenerRequest{Limit: &limit, PrimaryOnly: &no, Filters: []screenerFilter{}, Sort: []screenerSort{}})
	ok(`{"limit":7e0}`, screenerRequest{Limit: &limit})
	ok(`{"filters":[{"type":"close_price","op":"between","min":-1.5,"max":2e3},{"type":"sector","in":["10","\u0032\u0030"]},{"type":"sector","in":[]},{"type":"droplet","id":"NET_MARGIN_CS","op":">","value":0,"in":null}],"sort":[{"by":"volume"},{"by":"droplet:X","order":"asc"}]}`,
		screenerRequest{
			Filters: []screenerFilter{
				{Type: "close_price", Op: "between", Min: num(-1.5), Max: num(2000)},
				{Type: "sector", In: []string{"10", "20"}},
				{Type: "sector", In: []string{}},
				{Type: "droplet", ID: "NET_MARGIN_CS", Op: ">", Value: num(0)},
			},
			Sort: []screenerSort{{By: "volume"}, {By: "droplet:X", Order: "asc"}},
		})
	bad := func(body, wantMsg string) {
		t.Helper()
		var req screenerRequest
		st, msg := statusOf(parseScreenerRequest([]byte(body), &req))
		if st != 400 || msg != wantMsg {
			t.Errorf("%s: %d %q, want 400 %q", body, st, msg, wantMsg)
		}
	}
	bad(``, "request body: empty; want a JSON object")
	bad(`[]`, "request body: want a JSON object (at byte 0)")
	bad(`{"limit":0}`, `request body: field "limit": 0: want 1 to 500`)
	bad(`{"limit":501}`, `request body: field "limit": 501: want 1 to 500`)
	bad(`{"limit":1e20}`, `request body: field "limit": 1e+20: want 1 to 500`)
	bad(`{"limit":"10"}`, `request body: field "limit": want a number, got a string`)
	bad(`{"primaryOnly":1}`, `request body: field "primaryOnly": want true or false, got a number`)
	bad(`{"filters":{}}`, `request body: field "filters": want an array of objects, got an object`)
	bad(`{"filters":[null]}`, `request body: field "filters[0]": want an object, got null`)
	bad(`{"filters":[{},7]}`, `request body: field "filters[1]": want an object, got a number`)
	bad(`{"filters":[{"in":"10"}]}`, `request body: field "filters[0].in": want an array of strings, got a string`)
	bad(`{"filters":[{"in":["10",1]}]}`, `request body: field "filters[0].in[1]": want a string, got a number`)
	bad(`{"filters":[{"type":"volume","op":">","op":"<"}]}`, `request body: field "filters[0].op" is given more than once`)
	bad(`{"limit":5,"sort":[],"limit":6}`, `request body: field "limit" is given more than once`)
	bad(`{"filters":[{"type":"volume","valor":1}]}`, `request body: unknown field "filters[0].valor" (accepted: type, op, value, min, max, in, id)`)
	bad(`{"sort":[{"by":"volume","order":true}]}`, `request body: field "sort[0].order": want a string, got a boolean`)
	bad(`{"limit":5} {}`, "request body: unexpected data after the JSON object (at byte 12)")
	bad(`{"limit":5`, "request body: want , or } (at byte 10)")
	bad(`{"filters":[{"type":"volume"}`, "request body: want , or ] in filters (at byte 29)")
	bad(`{"limit":tru}`, `request body: field "limit": want a number (at byte 9)`)
	// Caps: at the cap accepted, one more refused naming it.
	rep := func(item string, n int) string { return strings.TrimSuffix(strings.Repeat(item+",", n), ",") }
	sorts := func(n int) string { return `{"sort":[` + rep(`{"by":"volume"}`, n) + `]}` }
	filters := func(n int) string { return `{"filters":[` + rep(`{"type":"volume","op":">","value":1}`, n) + `]}` }
	sectors := func(n int) string { return `{"filters":[{"type":"sector","in":[` + rep(`"10"`, n) + `]}]}` }
	for _, body := range []string{sorts(MaxScreenerSorts), filters(MaxScreenerFilters), sectors(MaxScreenerSectors)} {
		var req screenerRequest
		if err := parseScreenerRequest([]byte(body), &req); err != nil {
			t.Errorf("at the cap: %v", err)
		}
	}
	bad(sorts(MaxScreenerSorts+1), `request body: field "sort": at most 8 sort keys per request`)
	bad(sorts(20000), `request body: field "sort": at most 8 sort keys per request`)
	bad(filters(MaxScreenerFilters+1), `request body: field "filters": at most 64 filters per request`)
	bad(sectors(MaxScreenerSectors+1), `request body: field "filters[0].in": at most 256 ids per request`)
}

// TestBodyWording checks that both bodies word the same mistakes the same
// way: each case is one mistake in either body, and the two messages are
// want with the field's name (and the accepted names, the JSON kind or the
// byte offset) filled in.
func TestBodyWording(t *testing.T) {
	quotes := func(b string) string {
		var q quotesRequest
		_, msg := statusOf(parseQuotesRequest([]byte(b), &q, &quotesBody))
		return msg
	}
	screener := func(b string) string {
		var r screenerRequest
		_, msg := statusOf(parseScreenerRequest([]byte(b), &r))
		return msg
	}
	for _, c := range []struct{ quotes, screener, want string }{
		{`{"x":1}`, `{"x":1}`, `request body: unknown field "x" (accepted: %s)`},
		{``, ``, `request body: empty; want a JSON object`},
		{` 7`, ` 7`, `request body: want a JSON object (at byte 1)`},
		{`{"adjusted":"yes"}`, `{"primaryOnly":"yes"}`, `request body: field "%s": want true or false, got a string`},
		{`{"interval":[]}`, `{"limit":[]}`, `request body: field "%s": want a number%s got an array`}, // interval: "of seconds,"
		{`{"tickers":{}}`, `{"filters":{}}`, `request body: field "%s": want an array of %s, got an object`},
		{`{"tickers":["A"]}x`, `{}x`, `request body: unexpected data after the JSON object (at byte %s)`},
		{`{"tickers":["A"],}`, `{"limit":1,}`, `request body: want a field name (at byte %s)`},
		{`{"tickers":["A`, `{"sort":[{"by":"vol`, `request body: unterminated string (at byte %s)`},
	} {
		re := regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(c.want), "%s", ".+") + "$")
		if q, s := quotes(c.quotes), screener(c.screener); !re.MatchString(q) || !re.MatchString(s) {
			t.Errorf("quotes %q\nscreener %q\nwant both like %q", q, s, c.want)
		}
	}
}

// TestScreenerDecodeMatchesEncodingJSON checks the screener's decoder
// against encoding/json, which decoded the body before, on bodies both
// accept.
func TestScreenerDecodeMatchesEncodingJSON(t *testing.T) {
	type filter struct {
		Type  string   `json:"type"`
		Op    string   `json:"op"`
		Value *float64 `json:"value"`
		Min   *float64 `json:"min"`
		Max   *float64 `json:"max"`
		In    []string `json:"in"`
		ID    string   `json:"id"`
	}
	type sort struct {
		By    string `json:"by"`
		Order string `json:"order"`
	}
	type request struct {
		Limit       *int     `json:"limit"`
		PrimaryOnly *bool    `json:"primaryOnly"`
		Filters     []filter `json:"filters"`
		Sort        []sort   `json:"sort"`
	}
	for _, body := range []string{
		`{}`, `{"limit":500,"primaryOnly":true}`, `{"filters":[],"sort":[]}`, `{"filters":null,"limit":null}`,
		`{"primaryOnly":false,"filters":[{"type":"close_price","op":"between","min":10,"max":45},{"type":"volume","op":">","value":1000},{"type":"sector","in":["10"]}],"sort":[{"by":"volume","order":"asc"}]}`,
		`{"filters":[{"type":"droplet","id":"PRICE_TO_EARNINGS","op":">","value":0}],"sort":[{"by":"droplet:PRICE_TO_EARNINGS","order":"desc"}]}`,
		`{"filters":[{"type":"sector","in":[]},{"type":"x","in":null,"value":-0.5e-3}]}`,
		`{"sort":[{"by":"a\"b\\c\u00e9\n"}], "limit" : 3 }`,
	} {
		var want request
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		var got screenerRequest
		if err := parseScreenerRequest([]byte(body), &got); err != nil {
			t.Errorf("%s: %v", body, err)
			continue
		}
		wj, _ := json.Marshal(want)
		var mirror request
		mirror.Limit, mirror.PrimaryOnly = got.Limit, got.PrimaryOnly
		for _, f := range got.Filters {
			mirror.Filters = append(mirror.Filters, filter(f))
		}
		if got.Filters != nil && mirror.Filters == nil {
			mirror.Filters = []filter{}
		}
		for _, s := range got.Sort {
			mirror.Sort = append(mirror.Sort, sort(s))
		}
		if got.Sort != nil && mirror.Sort == nil {
			mirror.Sort = []sort{}
		}
		gj, _ := json.Marshal(mirror)
		if string(gj) != string(wj) {
			t.Errorf("%s:\ngot  %s\nwant %s", body, gj, wj)
		}
	}
}
