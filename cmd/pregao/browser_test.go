//go:build browser

package main

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
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

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.NoSandbox, chromedp.WindowSize(1280, 1600))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

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
