package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

// tradesNDJSON and tradesCSV write trades as the push endpoint reads them
// (times as unix milliseconds).
func tradesNDJSON(trades []engine.LiveTrade) string {
	var b strings.Builder
	for _, t := range trades {
		action, session := "new", "regular"
		if t.Cancel {
			action = "cancel"
		}
		if t.AfterMarket {
			session = "after"
		}
		fmt.Fprintf(&b, `{"ticker":%q,"time":%d,"price":%s,"quantity":%d,"id":%q,"action":%q,"session":%q}`+"\n",
			t.Ticker, t.Time, strconv.FormatFloat(float64(t.Price), 'g', -1, 64), t.Quantity, t.ID, action, session)
	}
	return b.String()
}

func tradesCSV(trades []engine.LiveTrade) string {
	var b strings.Builder
	b.WriteString("session,action,id,quantity,price,time,ticker\n")
	for _, t := range trades {
		action, session := "", "regular"
		if t.Cancel {
			action = "cancel"
		}
		if t.AfterMarket {
			session = "after"
		}
		fmt.Fprintf(&b, "%s,%s,%s,%d,%s,%d,%s\n", session, action, t.ID, t.Quantity, strconv.FormatFloat(float64(t.Price), 'g', -1, 64), t.Time, t.Ticker)
	}
	return b.String()
}

func num(n engine.Num) string { return strconv.FormatFloat(float64(n), 'g', -1, 64) }

func barsNDJSON(bars []engine.LiveBar) string {
	var b strings.Builder
	for _, r := range bars {
		if r.Removed {
			fmt.Fprintf(&b, `{"ticker":%q,"time":%d,"removed":true}`+"\n", r.Ticker, r.Time*1000)
			continue
		}
		fmt.Fprintf(&b, `{"ticker":%q,"time":%d,"open":%s,"high":%s,"low":%s,"close":%s,"volume":%s,"quantity":%d,"trades":%d}`+"\n",
			r.Ticker, r.Time*1000, num(r.Open), num(r.High), num(r.Low), num(r.Close), num(r.Volume), r.Quantity, r.Trades)
	}
	return b.String()
}

func barsCSV(bars []engine.LiveBar) string {
	var b strings.Builder
	b.WriteString("removed,trades,quantity,volume,close,low,high,open,time,ticker\n")
	for _, r := range bars {
		if r.Removed {
			fmt.Fprintf(&b, "true,,,,,,,,%d,%s\n", r.Time*1000, r.Ticker)
			continue
		}
		fmt.Fprintf(&b, "false,%d,%d,%s,%s,%s,%s,%s,%d,%s\n", r.Trades, r.Quantity, num(r.Volume), num(r.Close), num(r.Low), num(r.High), num(r.Open), r.Time*1000, r.Ticker)
	}
	return b.String()
}

// checkLineError checks that err is a 400 naming the request body.
func checkLineError(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Status != 400 || !strings.HasPrefix(e.Message, "request body") {
		t.Fatalf("error %v, want a 400 about the request body", err)
	}
}

// pushSeeds are the bodies the tests send, in both forms.
func pushSeeds(f *testing.F, lines ...string) {
	for _, l := range lines {
		f.Add(l, false)
	}
	f.Add(tradesCSV([]engine.LiveTrade{{Ticker: "ENHZ3", Time: 1711631112345, Price: 12.34, Quantity: 100, ID: "10", Cancel: true}}), true)
	f.Add(barsCSV([]engine.LiveBar{{Ticker: "ENHZ3", Time: 1711631100, Open: 1, High: 2, Low: 1, Close: 2, Volume: 3, Quantity: 2, Trades: 1}, {Ticker: "PETR4", Time: 1711631160, Removed: true}}), true)
	f.Add("ticker,time,price,quantity,id\nENHZ3,2024-03-28T10:05:12.345-03:00,\"12.34\",100,a\n", true)
	f.Add("\uFEFFticker,time\r\nENHZ3,1\r\n", true)
	f.Add("", true)
	f.Add("", false)
}

// FuzzLiveTrades: any body, in either form, is parsed into trades or
// refused with a 400 naming the body; parsed trades are valid and written
// again in either form parse to the same trades; the endpoint answers
// 200 or a JSON 4xx.
func FuzzLiveTrades(f *testing.F) {
	pushSeeds(f, sampleTradeLine, sampleTradeLine+"\n"+`{"ticker":"MSAZ3","time":1711631112345,"price":1e2,"quantity":3,"id":"x:1","action":"cancel","session":"after"}`,
		`{"ticker":"ENHZ3","time":"2024-03-28T10:05:12.345-03:00","price":12.34,"quantity":100,"id":"10","id":"11"}`, `[]`, `{"price":-0}`)
	ts, sink := pushServer(f, DefaultConfig())
	f.Fuzz(func(t *testing.T, body string, csvForm bool) {
		trades, err := parseTrades([]byte(body), csvForm)
		if err != nil {
			checkLineError(t, err)
		}
		for _, tr := range trades {
			if !engine.ValidTicker(tr.Ticker) || !(tr.Price > 0) || math.IsInf(float64(tr.Price), 0) || tr.Quantity < 1 || tr.Quantity > maxQuantity ||
				!validTradeID(tr.ID) || tr.Time < minTimeMs || tr.Time >= maxTimeMs {
				t.Fatalf("invalid trade parsed: %+v", tr)
			}
		}
		if err == nil {
			for _, again := range []struct {
				body string
				csv  bool
			}{{tradesNDJSON(trades), false}, {tradesCSV(trades), true}} {
				got, err := parseTrades([]byte(again.body), again.csv)
				if err != nil || !reflect.DeepEqual(got, trades) {
					t.Fatalf("round trip of %q: %v\n%+v\nwant\n%+v", again.body, err, got, trades)
				}
			}
		}
		fuzzPush(t, ts, pushTradesPath+"?seq="+strconv.FormatUint(sink.NextSeq(), 10), body, csvForm)
	})
}

// FuzzLiveBars is FuzzLiveTrades for bars.
func FuzzLiveBars(f *testing.F) {
	pushSeeds(f, sampleBarLine, `{"ticker":"ENHZ3","time":1711631160000,"removed":true,"open":null}`,
		`{"ticker":"ENHZ3","time":"2024-03-28T13:05:00.000+00:00","open":1,"high":1,"low":1,"close":1,"volume":0,"quantity":0,"trades":0,"removed":false}`)
	ts, sink := pushServer(f, DefaultConfig())
	f.Fuzz(func(t *testing.T, body string, csvForm bool) {
		bars, err := parseBars([]byte(body), csvForm)
		if err != nil {
			checkLineError(t, err)
		}
		for _, b := range bars {
			ok := engine.ValidTicker(b.Ticker) && b.Time%60 == 0 && b.Time >= minTimeMs/1000 && b.Time < maxTimeMs/1000
			if !b.Removed {
				ok = ok && b.Low > 0 && b.Low <= b.Open && b.Low <= b.Close && b.High >= b.Open && b.High >= b.Close &&
					!math.IsInf(float64(b.High), 0) && b.Volume >= 0 && !math.IsInf(float64(b.Volume), 0) && b.Quantity >= 0 && b.Trades >= 0
			} else {
				ok = ok && b == engine.LiveBar{Ticker: b.Ticker, Time: b.Time, Removed: true}
			}
			if !ok {
				t.Fatalf("invalid bar parsed: %+v", b)
			}
		}
		if err == nil {
			for _, again := range []struct {
				body string
				csv  bool
			}{{barsNDJSON(bars), false}, {barsCSV(bars), true}} {
				got, err := parseBars([]byte(again.body), again.csv)
				if err != nil || !reflect.DeepEqual(got, bars) {
					t.Fatalf("round trip of %q: %v\n%+v\nwant\n%+v", again.body, err, got, bars)
				}
			}
		}
		fuzzPush(t, ts, pushBarsPath+"?seq="+strconv.FormatUint(sink.NextSeq(), 10), body, csvForm)
	})
}

// fuzzPush pushes body and checks the answer is a 200 or a JSON 4xx.
func fuzzPush(t *testing.T, ts *testServer, path, body string, csvForm bool) {
	ct := ndjson
	if csvForm {
		ct = "text/csv"
	}
	w := ts.push(path, testKeyAdmin, ct, body)
	if w.Code != 200 && (w.Code < 400 || w.Code >= 500) || !json.Valid(w.Body.Bytes()) {
		t.Fatalf("POST %s %q: %d %s", path, body, w.Code, w.Body)
	}
}
