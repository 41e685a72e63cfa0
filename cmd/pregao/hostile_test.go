package main

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/snapshot/remote"
)

// hostileOrigin publishes a snapshot and misbehaves as its mode says.
type hostileOrigin struct {
	mu         sync.Mutex
	mode       string
	body       []byte
	etag       string
	redirectTo string        // base URL of the "redirect" mode's target
	started    chan struct{} // closed at the first byte of a "slow" body
	startOnce  *sync.Once
	full       atomic.Int64 // answers that began a whole body
	notMod     atomic.Int64 // 304 answers
	crawling   atomic.Int32 // "slow" bodies being sent
}

func (o *hostileOrigin) set(mode string, body []byte, etag string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.mode, o.body, o.etag = mode, body, etag
	o.started, o.startOnce = make(chan struct{}), new(sync.Once)
}

func (o *hostileOrigin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	mode, body, etag, to, started, once := o.mode, o.body, o.etag, o.redirectTo, o.started, o.startOnce
	o.mu.Unlock()
	w.Header().Set("ETag", etag)
	if inm := r.Header.Get("If-None-Match"); mode != "" && mode != "flipped" && strings.Contains(inm, etag) {
		w.WriteHeader(http.StatusNotModified) // as S3 does
		o.notMod.Add(1)
		return
	}
	length := func(n int64) {
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		w.WriteHeader(200)
		o.full.Add(1)
	}
	switch mode {
	case "truncated": // the connection drops halfway
		length(int64(len(body)))
		w.Write(body[:len(body)/2])
		panic(http.ErrAbortHandler)
	case "flipped", "": // ServeContent: conditions and ranges honoured
		if mode == "flipped" {
			body = bytes.Clone(body)
			body[len(body)-10] ^= 0xff
		}
		rec := &statusOf{ResponseWriter: w}
		http.ServeContent(rec, r, "s.snap", time.Unix(0, 0), bytes.NewReader(body))
		switch rec.code {
		case 200:
			o.full.Add(1)
		case http.StatusNotModified:
			o.notMod.Add(1)
		}
	case "endless":
		w.WriteHeader(200)
		o.full.Add(1)
		chunk := bytes.Repeat([]byte{0x5A}, 32<<10)
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	case "huge-length": // 10^12 bytes announced
		length(1e12)
		w.Write(make([]byte, 64<<10))
	case "big-length": // under the cap, over the free space
		length(3 << 19)
		w.Write(make([]byte, 64<<10))
	case "stall": // until the client leaves, or the next case
		length(int64(len(body)))
		w.Write(body[:100])
		w.(http.Flusher).Flush()
		for o.current() == mode && r.Context().Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
	case "slow": // 1 KiB/s
		length(int64(len(body)))
		o.crawling.Add(1)
		defer o.crawling.Add(-1)
		for i := 0; i < len(body); i += 128 {
			if _, err := w.Write(body[i:min(i+128, len(body))]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			once.Do(func() { close(started) })
			select {
			case <-r.Context().Done():
				return
			case <-time.After(125 * time.Millisecond):
			}
			if o.current() != mode {
				panic(http.ErrAbortHandler) // the next case has begun
			}
		}
	case "redirect": // to another host, the query (a presigned URL's) kept
		http.Redirect(w, r, to+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	case "500", "404":
		code, _ := strconv.Atoi(mode)
		http.Error(w, "no", code)
	case "reset": // the connection closes without an answer
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}
}

func (o *hostileOrigin) current() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.mode
}

type statusOf struct {
	http.ResponseWriter
	code int
}

func (s *statusOf) WriteHeader(c int) { s.code = c; s.ResponseWriter.WriteHeader(c) }

// Secrets of the hostile test's locations: none may reach a log or an
// error.
const (
	hostileKeyID  = "AKIDHOSTILEKEYID"
	hostileSecret = "hostile-secret-access-key"
	hostileToken  = "hostile-session-token"
	hostileSig    = "HOSTILEQUERYSIGNATURE"
)

// TestHostileOrigin runs a server on a remote snapshot whose origin
// misbehaves in turn: a bad file after a good one (a flipped byte), a
// truncated body, an endless body, 10^12 bytes announced, more bytes than
// the disk has free, a stalled body, a 1 KiB/s body (a key is revoked
// meanwhile), a redirect to another host, 500, 404, a connection reset,
// the same bytes under a new ETag. After each, the server still serves
// its last good snapshot, the cache folder holds at most the local copy
// and the cap, the heap has not grown, the failure is counted by reason
// and as a refused reload, and neither the log nor the error holds the
// location's query string or credentials. A refused file is not
// downloaded again; the revoked key is refused while the slow body still
// crawls in (its download ends after a second); a good publication then
// loads. Once through s3:// (a presigned URL) and once through an
// https-style URL with a signature in its query.
func TestHostileOrigin(t *testing.T) {
	if testing.Short() {
		t.Skip("hostile origin: about 10 s")
	}
	defer func(d, f time.Duration) { fetchRetryDelay, fetchTimeout = d, f }(fetchRetryDelay, fetchTimeout)
	fetchRetryDelay, fetchTimeout = time.Millisecond, time.Second
	for _, flavor := range []string{"s3", "http"} {
		t.Run(flavor, func(t *testing.T) { hostileRun(t, flavor) })
	}
}

func hostileRun(t *testing.T, flavor string) {
	snap, keys, key := serveFixture(t)
	good1, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	good2 := otherSnapshot(t)
	var out bytes.Buffer
	if err := runKeys(context.Background(), []string{"add", "--file", keys, "--name", "other"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	otherKey := strings.TrimSpace(out.String())
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "s.snap", time.Unix(0, 0), bytes.NewReader(good2))
	}))
	defer elsewhere.Close()
	o := &hostileOrigin{redirectTo: elsewhere.URL}
	o.set("", good1, `"v1"`)
	origin := httptest.NewServer(o)
	defer origin.Close()

	const capBytes = 2 << 20
	cache := t.TempDir()
	cfg := DefaultServeConfig()
	cfg.Keys, cfg.SnapshotCache, cfg.Addr, cfg.AccessLog = keys, cache, "127.0.0.1:0", "off"
	cfg.Watch, cfg.SnapshotStallTimeout, cfg.SnapshotMaxBytes = 50*time.Millisecond, 200*time.Millisecond, capBytes
	if flavor == "s3" {
		t.Setenv("AWS_ENDPOINT_URL", origin.URL)
		t.Setenv("AWS_ACCESS_KEY_ID", hostileKeyID)
		t.Setenv("AWS_SECRET_ACCESS_KEY", hostileSecret)
		t.Setenv("AWS_SESSION_TOKEN", hostileToken)
		t.Setenv("AWS_REGION", "us-east-1")
		cfg.Snapshot = "s3://snaps/prod/pregao.snap"
	} else {
		cfg.Snapshot = origin.URL + "/prod/pregao.snap?sig=" + hostileSig + "&key=" + hostileKeyID
	}
	var logs syncBuffer
	m, err := NewMain(cfg, &logs)
	if err != nil {
		t.Fatal(err)
	}
	// 65 MiB free: a snapshot fits, 1.5 MiB would leave less than 64 MiB.
	m.fetcher.FreeSpace = func(string) (int64, bool) { return 65 << 20, true }
	stop, _ := runMain(t, m)
	defer stop()
	base := "http://" + m.Addr()

	secrets := regexp.MustCompile(`(?i)x-amz|` + hostileKeyID + `|` + hostileSecret + `|` + hostileToken + `|` + hostileSig + `|://[^\s"]*\?`)
	clean := func(what, s string) {
		t.Helper()
		if loc := secrets.FindStringIndex(s); loc != nil {
			t.Errorf("%s shows a secret: …%s…", what, s[max(0, loc[0]-80):min(len(s), loc[1]+40)])
		}
	}
	failures := func(reason string) float64 {
		return counterValue(t, m.Registry, "pregao_snapshot_fetch_failures_total", "reason", reason)
	}
	reloads := func(result string) float64 {
		return counterValue(t, m.Registry, "pregao_snapshot_reloads_total", "result", result)
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		waitUntil(t, what, cond)
	}

	// A good file, then another: served.
	first := m.Store.Current()
	o.set("", good2, `"v2"`)
	waitFor("the second good publication", func() bool { return m.Store.Current() != first })
	lastGood := m.Store.Current()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heap0 := ms.HeapAlloc
	localSize := int64(len(good2))

	// bounded checks what must hold after every failure.
	bounded := func(name string) {
		t.Helper()
		if m.Store.Current() != lastGood {
			t.Errorf("%s: the server left its last good snapshot", name)
		}
		if code, _ := get(t, base+"/v2/companies/ENHZ", otherKey); code != 200 {
			t.Errorf("%s: the API answered %d", name, code)
		}
		var disk int64
		filepath.WalkDir(cache, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if info, err := d.Info(); err == nil {
					disk += info.Size()
				}
			}
			return nil
		})
		if disk > localSize+capBytes+64<<10 {
			t.Errorf("%s: the cache holds %d bytes, over the copy (%d) and the cap (%d)", name, disk, localSize, capBytes)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc > heap0+32<<20 {
			t.Errorf("%s: heap %d MiB after a collection, %d MiB before the failures", name, ms.HeapAlloc>>20, heap0>>20)
		}
		t.Logf("%s: cache %d bytes, heap %.1f MiB (%.1f before)", name, disk, float64(ms.HeapAlloc)/(1<<20), float64(heap0)/(1<<20))
	}

	cases := []struct {
		name, mode, reason string
		body               []byte
		refusedOnce        bool // not downloaded again while served
	}{
		{"a bad file after a good one", "flipped", remote.ReasonVerify, good1, true},
		{"truncated body", "truncated", remote.ReasonTruncated, good1, false},
		{"endless body", "endless", remote.ReasonTooLarge, nil, true},
		{"10^12 bytes announced", "huge-length", remote.ReasonTooLarge, nil, true},
		{"more than the free disk", "big-length", remote.ReasonNoSpace, nil, false},
		{"stalled body", "stall", remote.ReasonStalled, good1, false},
		{"1 KiB/s body", "slow", remote.ReasonTimeout, good1, false},
		{"redirect to another host", "redirect", remote.ReasonRedirect, good1, false},
		{"500", "500", remote.ReasonStatus, good1, false},
		{"404", "404", remote.ReasonStatus, good1, false},
		{"connection reset", "reset", remote.ReasonNetwork, good1, false},
	}
	for i, c := range cases {
		caseStart := time.Now()
		before, errors0 := failures(c.reason), reloads("error")
		o.set(c.mode, c.body, `"bad`+strconv.Itoa(i)+`"`)
		if c.mode == "slow" {
			// A key removed while the body crawls in is refused before
			// the download ends (at fetchTimeout, a second).
			select {
			case <-o.started:
			case <-time.After(waitBound):
				t.Fatal("the slow download did not start")
			}
			if code, _ := get(t, base+"/v2/companies/ENHZ", key); code != 200 {
				t.Fatalf("the key before its removal: %d", code)
			}
			if err := runKeys(context.Background(), []string{"remove", "--file", keys, "--name", "test"}, io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			revoked := time.Now()
			var during bool
			waitFor("the removed key refused", func() bool {
				code, _ := get(t, base+"/v2/companies/ENHZ", key)
				during = o.crawling.Load() > 0
				return code == 401
			})
			if !during {
				t.Errorf("the removed key was refused %s after the change, once the 1 KiB/s download had ended", time.Since(revoked))
			}
			t.Logf("%s: the removed key refused %s after the change", c.name, time.Since(revoked).Round(time.Millisecond))
		}
		waitFor(c.name+": the failure counted", func() bool { return failures(c.reason) > before && reloads("error") > errors0 })
		if c.refusedOnce {
			n, checked := o.full.Load(), o.notMod.Load()
			waitFor(c.name+": six more checks", func() bool { return o.notMod.Load() >= checked+6 })
			if d := o.full.Load() - n; d != 0 {
				t.Errorf("%s: the refused publication downloaded again %d times", c.name, d)
			}
			if failures(c.reason) != before+1 {
				t.Errorf("%s: counted %v times, want once", c.name, failures(c.reason)-before)
			}
		}
		if c.mode != "slow" && c.mode != "stall" { // as slow as the origin: the log has their errors
			if err := m.Reload(); err != nil {
				clean(c.name+": Reload's error", err.Error())
			} else if !c.refusedOnce {
				t.Errorf("%s: Reload succeeded", c.name)
			}
		}
		bounded(c.name)
		t.Logf("%s: %s", c.name, time.Since(caseStart).Round(time.Millisecond))
		if _, err := os.Stat(m.fetcher.Path); err != nil {
			t.Errorf("%s: the local copy is gone: %v", c.name, err)
		}
	}

	// The same bytes under a new ETag: no reload, and then a 304.
	ok0, full0, checked := reloads("ok"), o.full.Load(), o.notMod.Load()
	o.set("", good2, `"same"`)
	waitFor("the new ETag downloaded, then asked again", func() bool { return o.full.Load() > full0 && o.notMod.Load() > checked })
	if reloads("ok") != ok0 || m.Store.Current() != lastGood || o.full.Load() != full0+1 {
		t.Errorf("the same bytes under a new ETag: %v reloads, replaced %v, %d downloads", reloads("ok")-ok0, m.Store.Current() != lastGood, o.full.Load()-full0)
	}
	// A good publication loads.
	o.set("", good1, `"good"`)
	waitFor("a good publication after the failures", func() bool { return m.Store.Current() != lastGood })
	clean("the log", logs.String())
	if !strings.Contains(logs.String(), "reason=stalled") {
		t.Error("the log does not say why a fetch failed")
	}
}

// counterValue returns the value of the counter name{label="value"} in
// reg (0 when absent).
func counterValue(t testing.TB, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mf, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range mf {
		if f.GetName() != name {
			continue
		}
		for _, mm := range f.GetMetric() {
			for _, lp := range mm.GetLabel() {
				if lp.GetName() == label && lp.GetValue() == value {
					return mm.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
