package httpapi

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

func TestParseQuotesRequest(t *testing.T) {
	ok := func(body string, check func(q *quotesRequest) bool) {
		t.Helper()
		var q quotesRequest
		if err := parseQuotesRequest([]byte(body), &q); err != nil {
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
		err := parseQuotesRequest([]byte(body), &q)
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
		return q.Type == TypeHistorical && q.Interval == 3600 && q.Start == engine.MakeDate(2024, 3, 25) && q.End == engine.MakeDate(2024, 3, 28) && q.Adjusted && q.hasInterval
	})
	ok(`{"tickers":["\u0050ETR4"],"type":null,"interval":null,"start_date":null,"adjusted":null}`, func(q *quotesRequest) bool {
		return string(q.Tickers[0]) == "PETR4" && !q.hasType && !q.hasInterval && !q.hasStart
	})
	ok(`{"tickers":["VALE3"],"interval":6e1}`, func(q *quotesRequest) bool { return q.Interval == 60 })
	bad(``, "empty")
	bad(`[]`, "want a JSON object")
	bad(`{}`, `"tickers"`)
	bad(`{"tickers":[]}`, "1 to 500")
	bad(`{"tickers":null}`, "required")
	bad(`{"tickers":"PETR4"}`, "want an array")
	bad(`{"tickers":[4]}`, "want a string")
	bad(`{"tickers":["petr4"]}`, `"petr4"`)
	bad(`{"tickers":["PETR4X"]}`, "PETR4X")
	bad(`{"tickers":["PET"]}`, "PET")
	bad(`{"tickers":["PETR456"]}`, "PETR456")
	bad(`{"tickers":["PETR4"],"typo":1}`, `unknown field "typo"`)
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
	parseQuotesRequest(body, &q)
	if n := testing.AllocsPerRun(100, func() {
		if err := parseQuotesRequest(body, &q); err != nil {
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
		if err := parseQuotesRequest(body, &q); err != nil {
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
		err := parseQuotesRequest(b, &q)
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
		if q.hasInterval && q.Interval < 60 {
			t.Fatalf("%q: interval %d accepted", b, q.Interval)
		}
	})
}
