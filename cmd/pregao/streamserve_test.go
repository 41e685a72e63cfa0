package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestServeStream: serve replaying the held-back session, a client of
// GET /stream/quotes (from before the session: Last-Event-ID of the
// state "none") for the tickers that trade in it and one of IBOV:
// at the end of the replay, every minute a stream sent holds the bar
// the server's own GET /quotes/{ticker} answers, each minute sent as a
// bar once; the session's state events come; SIGTERM's drain ends the
// streams.
func TestServeStream(t *testing.T) {
	f := liveFixtureOf(t)
	m, stop := serveLive(t, f, f.base, func(c *ServeConfig) {
		c.Live.Feed, c.Live.FeedSpeed, c.Live.Dir = "replay:"+f.session, "max", t.TempDir()
	})
	defer stop()
	// The tickers with 1-minute bars that day (up to 50).
	full := loadDataset(t, f.full)
	var tickers []string
	for i := range full.Assets() {
		as := &full.Assets()[i]
		if lo, hi := as.MinuteRange(int64(f.day)*86400, int64(f.day+1)*86400-1); hi > lo && len(tickers) < 50 {
			tickers = append(tickers, as.Ticker)
		}
	}
	if len(tickers) < 5 {
		t.Fatalf("%d tickers trade in the session", len(tickers))
	}
	type event struct{ id, kind, data string }
	read := func(path string) (func() []event, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+m.Addr()+path, nil)
		req.Header.Set("Authorization", "Bearer "+f.key)
		// From before the session (the id of the state "none"): the
		// replay may have started when the stream opens.
		req.Header.Set("Last-Event-ID", "0.0.0.0/0.0.0.0//s0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			cancel()
			t.Fatalf("%s: %v %v", path, resp, err)
		}
		var mu sync.Mutex
		var got []event
		go func() {
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 1<<20)
			var e event
			for sc.Scan() {
				switch l := sc.Text(); {
				case l == "":
					if e.kind != "" {
						mu.Lock()
						got = append(got, e)
						mu.Unlock()
					}
					e = event{}
				case strings.HasPrefix(l, "id: "):
					e.id = l[4:]
				case strings.HasPrefix(l, "event: "):
					e.kind = l[7:]
				case strings.HasPrefix(l, "data: "):
					e.data = l[6:]
				}
			}
		}()
		return func() []event { mu.Lock(); defer mu.Unlock(); return append([]event(nil), got...) }, cancel
	}
	events, cancel := read("/v2/stream/quotes?tickers=" + strings.Join(tickers, ","))
	defer cancel()
	ibov, cancelIbov := read("/v2/stream/quotes?index=IBOV")
	defer cancelIbov()
	waitComplete(t, m)
	// What the server answers for each ticker's session: the stream must
	// come to hold it.
	want := map[string]string{}
	for _, tk := range tickers {
		_, body := get(t, "http://"+m.Addr()+"/v2/quotes/"+tk+"?type=historical&interval=60&start_date="+f.day.String()+"&end_date="+f.day.String(), f.key)
		var series []json.RawMessage
		if err := json.Unmarshal([]byte(body), &series); err != nil || len(series) == 0 {
			t.Fatalf("%s: %v %.200s", tk, err, body)
		}
		for _, raw := range series {
			var b struct {
				Date string `json:"date"`
			}
			json.Unmarshal(raw, &b)
			want[tk+" "+b.Date] = string(raw)
		}
	}
	var held map[string]string
	var bars map[string]int
	var states []string
	fold := func() {
		held, bars, states = map[string]string{}, map[string]int{}, nil
		for _, e := range events() {
			var d struct {
				Ticker string          `json:"ticker"`
				Bar    json.RawMessage `json:"bar"`
				State  string          `json:"state"`
			}
			json.Unmarshal([]byte(e.data), &d)
			var b struct {
				Date string `json:"date"`
			}
			json.Unmarshal(d.Bar, &b)
			switch e.kind {
			case "session":
				states = append(states, d.State)
			case "bar":
				bars[d.Ticker+" "+b.Date]++
				fallthrough
			case "correction":
				held[d.Ticker+" "+b.Date] = string(d.Bar)
			}
		}
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		fold()
		same := len(held) == len(want)
		for k, w := range want {
			if held[k] != w {
				same = false
				break
			}
		}
		if same || time.Now().After(deadline) {
			break
		}
	}
	if !slices.Contains(states, "open") {
		t.Errorf("session states %v", states)
	}
	levels := 0
	for _, e := range ibov() {
		if e.kind == "bar" && strings.Contains(e.data, `"ticker":"IBOV"`) {
			levels++
		}
	}
	if levels < 100 {
		t.Errorf("%d IBOV levels streamed", levels)
	}
	shown := false
	for k, w := range want {
		if held[k] != w || bars[k] != 1 {
			t.Errorf("%s: sent %d times, held %s\nwant %s", k, bars[k], held[k], w)
			if !shown && os.Getenv("PREGAO_TEST_DEBUG") != "" {
				shown = true
				tk := strings.Fields(k)[0]
				for _, e := range events() {
					if strings.Contains(e.data, `"`+tk+`"`) || e.kind == "session" {
						t.Logf("%s %s %.90s", e.kind, e.id, e.data)
					}
				}
			}
		}
	}
}
