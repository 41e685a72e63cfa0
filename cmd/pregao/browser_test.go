//go:build browser

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/pregao/pregao/httpapi"
)

// TestDocsInBrowser opens /docs in headless Chromium (make test-browser:
// apt-get install chromium), checks that the reference lists every
// operation, gives the demo key to Authorize, runs Try it out on
// GET /v2/quotes/{ticker}/historical with its example (ITAG3) and
// expects a 200 with quotes, and checks that the page asked no other
// host for anything.
// PREGAO_BROWSER_SNAPSHOT names the snapshot to serve (the demo's);
// PREGAO_BROWSER_SCREENSHOT, if set, receives a PNG of the page.
func TestDocsInBrowser(t *testing.T) {
	snap := os.Getenv("PREGAO_BROWSER_SNAPSHOT")
	if snap == "" {
		t.Skip("PREGAO_BROWSER_SNAPSHOT not set (make test-browser)")
	}
	snap, _ = filepath.Abs(snap)
	_, keys, key := serveFixture(t)
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.AccessLog = snap, keys, "off"
	m, stop := startServe(t, cfg, nil)
	defer stop()
	base := "http://" + m.Addr()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if st, _ := get(t, base+"/readyz", ""); st == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("not ready in 60 s")
		}
	}

	ctx := browserContext(t, chromedp.WindowSize(1280, 1600))

	var mu sync.Mutex
	var requested []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requested = append(requested, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}

	const op = "#operations-quotes-getQuotesTickerHistorical"
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/docs"),
		chromedp.WaitVisible(css(".opblock")),
	)
	if err != nil {
		t.Fatalf("open /docs: %v", err)
	}
	paths, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('.opblock-summary-path')).map(e => e.getAttribute('data-path'))`))
	if err != nil {
		t.Fatal(err)
	}
	// Authorize with the key, as a user does, then Try it out on one quote
	// route with its example ticker.
	err = chromedp.Do(ctx,
		chromedp.Click(css("button.authorize")),
		chromedp.WaitVisible(css(".modal-ux input")),
		chromedp.SendKeys(css(".modal-ux input"), key),
		chromedp.Click(css(".modal-ux .auth-btn-wrapper button.authorize")),
		chromedp.Click(css(".modal-ux button.btn-done")),
		chromedp.WaitNotPresent(css(".modal-ux")),
		chromedp.Click(css(op+" .opblock-summary-control")),
		chromedp.WaitVisible(css(op+" button.execute")),
		chromedp.Click(css(op+" button.execute")),
		chromedp.WaitVisible(css(op+" .live-responses-table tbody .response-col_status")),
	)
	if err != nil {
		t.Fatalf("authorize and try it out: %v", err)
	}
	status, err := chromedp.Run(ctx, chromedp.Text(css(op+" .live-responses-table tbody .response-col_status")))
	if err != nil {
		t.Fatal(err)
	}
	body, err := chromedp.Run(ctx, chromedp.Text(css(op+" .live-responses-table .response-col_description pre")))
	if err != nil {
		t.Fatal(err)
	}
	if shot := os.Getenv("PREGAO_BROWSER_SCREENSHOT"); shot != "" {
		if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
			os.WriteFile(shot, png, 0o644)
			t.Logf("screenshot: %s (%d bytes)", shot, len(png))
		}
	}
	want := map[string]bool{}
	for _, rt := range httpapi.Routes() {
		if rt.Untyped {
			continue // not in the document
		}
		p := rt.Path
		if !rt.Root {
			p = "/v2" + p
		}
		segs := strings.Split(p, "/")
		for i, s := range segs {
			if strings.HasPrefix(s, ":") {
				segs[i] = "{" + s[1:] + "}"
			}
		}
		want[strings.Join(segs, "/")] = true
	}
	got := map[string]bool{}
	for _, p := range paths {
		got[p] = true
	}
	for p := range want {
		if !got[p] {
			t.Errorf("the page does not list %s", p)
		}
	}
	t.Logf("%d operations listed", len(paths))
	if !strings.HasPrefix(strings.TrimSpace(status), "200") || !strings.Contains(body, `"close_price"`) {
		t.Errorf("Try it out: status %q, body %.300s", status, body)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, u := range requested {
		pu, err := url.Parse(u)
		if err != nil || (pu.Scheme != "data" && "http://"+pu.Host != base) {
			t.Errorf("the page requested another host: %s", u)
		}
	}
	t.Logf("%d requests, all to %s", len(requested), base)
}

// TestEventSourceInBrowser: a page's EventSource refused because its key
// holds all its streams (--stream-conns-per-key 1, one stream open) is
// not stopped by the refusal: it gets it as an error event with the
// JSON error, stays CONNECTING, and once the open stream closes it
// reconnects by itself (after the 10 s the refusal asked) and gets the
// stream. Headless Chromium (make test-browser); skipped without one.
func TestEventSourceInBrowser(t *testing.T) {
	found := false
	for _, b := range []string{"headless-shell", "headless_shell", "chromium", "chromium-browser", "google-chrome"} {
		if _, err := exec.LookPath(b); err == nil {
			found = true
		}
	}
	if !found {
		t.Skip("no Chromium (make test-browser: apt-get install chromium)")
	}
	snap, keys, key := serveFixture(t)
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.AccessLog = snap, keys, "off"
	cfg.QueryToken, cfg.StreamConnsPerKey = true, 1
	m, stop := startServe(t, cfg, nil)
	defer stop()
	base := "http://" + m.Addr()
	waitUntil(t, "ready", func() bool { st, _ := get(t, base+"/readyz", ""); return st == 200 })

	// The key's one stream, open until the page was refused.
	sctx, closeFirst := context.WithCancel(context.Background())
	defer closeFirst()
	req, _ := http.NewRequestWithContext(sctx, "GET", base+"/v2/stream/quotes?tickers=ENHZ3", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the first stream: %v %v", resp, err)
	}
	defer resp.Body.Close()

	ctx := browserContext(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/healthz")); err != nil {
		t.Fatalf("open a page of the server: %v", err)
	}
	script := `window.got = [];
window.es = new EventSource("/v2/stream/quotes?tickers=ENHZ3&token=" + ` + strconv.Quote(key) + `);
es.addEventListener("error", e => got.push({type: "error", data: e.data ?? null, state: es.readyState}));
es.addEventListener("session", e => got.push({type: "session", data: e.data, state: es.readyState}));
true`
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](script)); err != nil {
		t.Fatal(err)
	}
	type seen struct {
		Type, Data string
		State      int
	}
	// page returns the events the page got and its EventSource's state.
	page := func() ([]seen, int) {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({got: got, state: es.readyState})`))
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Got   []seen
			State int
		}
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v.Got, v.State
	}
	has := func(got []seen, typ, data string) bool {
		for _, e := range got {
			if e.Type == typ && strings.Contains(e.Data, data) {
				return true
			}
		}
		return false
	}
	var got []seen
	var state int
	waitUntil(t, "the page's refusal", func() bool {
		got, state = page()
		return len(got) >= 2 || state == 2
	})
	// The refusal's event, then the browser's own error as the answer
	// ends: reconnecting (0), not closed (2).
	if !has(got, "error", "too many streams for this key") || state == 2 {
		t.Fatalf("refused: the page got %+v, readyState %d, want the refusal's error event and CONNECTING", got, state)
	}
	closeFirst()
	start := time.Now()
	for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if got, state = page(); has(got, "session", `"state"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not reconnected in 40 s: the page got %+v, readyState %d", got, state)
		}
	}
	t.Logf("the page reconnected by itself %.1f s after the first stream closed: %+v, readyState %d", time.Since(start).Seconds(), got, state)
	if state != 1 {
		t.Errorf("readyState %d after the reconnection, want OPEN (1)", state)
	}
}

// browserContext starts a headless Chromium (with opts beside the
// defaults) for the test, its tab's context ending after 90 s or with
// the test.
func browserContext(t *testing.T, opts ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	all := append(append(chromedp.DefaultExecAllocatorOptions[:], chromedp.NoSandbox), opts...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), all...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancel(); cancelTab(); cancelAlloc() })
	return ctx
}
