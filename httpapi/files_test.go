package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
)

// fakeFiles is a FileSource of two files per cut, whose bytes name the
// cut, written into dir on first demand; building holds it as being
// built. It records the cuts asked.
type fakeFiles struct {
	dir      string
	mu       sync.Mutex
	building bool
	fail     error // returned by Files when set (a full disk)
	asked    []engine.Date
	ids      []string // the snapshot ids asked
}

func (f *fakeFiles) Files(ctx context.Context, ds *engine.Dataset, id string, through engine.Date) (string, []FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, through)
	f.ids = append(f.ids, id)
	if f.building {
		return "", nil, ErrFilesBuilding
	}
	if f.fail != nil {
		return "", nil, f.fail
	}
	cut := "all"
	if through.Valid() {
		cut = through.String()
	}
	dir := filepath.Join(f.dir, id+"-"+cut)
	os.MkdirAll(dir, 0o755)
	var out []FileInfo
	for _, name := range []string{"daily_bars-2025.parquet", "companies.csv.gz"} {
		b := []byte(strings.Repeat(name+" "+cut+"\n", 100))
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
		sum := sha256.Sum256(b)
		format := "parquet"
		if strings.HasSuffix(name, ".gz") {
			format = "csv"
		}
		out = append(out, FileInfo{Dataset: strings.Split(strings.TrimSuffix(strings.TrimSuffix(name, ".parquet"), ".csv.gz"), "-")[0], Name: name, Format: format,
			Rows: 100, Bytes: int64(len(b)), SHA256: hex.EncodeToString(sum[:]), MinDate: engine.MakeDate(2025, 1, 2), MaxDate: engine.NoDate,
			Priced: strings.HasPrefix(name, "daily_bars")})
	}
	return dir, out, nil
}

func (ts *testServer) withFiles(tb testing.TB) *fakeFiles {
	f := &fakeFiles{dir: tb.TempDir()}
	ts.api.SetFiles(f)
	return f
}

func (ts *testServer) doHeaders(method, path, key string, hd map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	r.Header.Set("Authorization", "Bearer "+key)
	for k, v := range hd {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	ts.api.ServeHTTP(w, r)
	return w
}

func timeUnix(sec int64) time.Time { return time.Unix(sec, 0).UTC() }

func mustTime(tb testing.TB, s string) time.Time {
	tb.Helper()
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// TestFilesList: the listing of the plan's files, each with its url;
// the eod plan's cut ends before the market date of now, the delayed
// plan's is whole at the snapshot's as_of; 503 while they are built,
// 404 on a server without files.
func TestFilesList(t *testing.T) {
	ts := newTestServer(t, true)
	ts.api.SetFiles(nil)
	checkError(t, ts.do("GET", "/v2/files", testKeyDelayed, ""), 404, "serves no files")
	f := ts.withFiles(t)
	w := ts.do("GET", "/v2/files", testKeyDelayed, "")
	if w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	validateAnswer(t, "GET", "/v2/files", "", w)
	var l struct {
		Snapshot string  `json:"snapshot"`
		Through  *string `json:"through"`
		Files    []struct {
			File, URL, SHA256 string
			MinDate           *string `json:"min_date"`
		} `json:"files"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &l); err != nil {
		t.Fatal(err)
	}
	if l.Through != nil || len(l.Files) != 2 || l.Files[0].URL != "/v2/files/daily_bars-2025.parquet" || *l.Files[0].MinDate != "2025-01-02" || l.Snapshot == "" {
		t.Errorf("delayed listing: %s", w.Body)
	}
	// The eod plan: the files without prices, the same build.
	asked := len(f.asked)
	w = ts.do("GET", "/v2/files", testKeyEOD, "")
	l.Files = nil
	if err := json.Unmarshal(w.Body.Bytes(), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Files) != 1 || l.Files[0].File != "companies.csv.gz" {
		t.Errorf("eod listing: %s", w.Body)
	}
	if f.asked[asked] != f.asked[0] {
		t.Errorf("the eod files were cut at %s, the delayed ones at %s", f.asked[asked], f.asked[0])
	}
	ts = newTestServer(t, true)
	f = ts.withFiles(t)
	f.building = true
	w = ts.do("GET", "/v2/files", testKeyEOD, "")
	checkError(t, w, 503, "being built")
	if w.Header().Get("Retry-After") != "10" {
		t.Errorf("Retry-After %q", w.Header().Get("Retry-After"))
	}
	checkError(t, ts.do("GET", "/v2/files/companies.csv.gz", testKeyEOD, ""), 503, "being built")
	// A build that fails (the server's disk): 503 to retry, never a 500,
	// when the FileSource builds again: a minute (flatfiles'
	// DefaultRetryFailed) when its error does not say.
	f.building, f.fail = false, errors.New("write /files/x: no space left on device")
	var logs bytes.Buffer
	ts.api.log = slog.New(slog.NewTextHandler(&logs, nil))
	w = ts.do("GET", "/v2/files", testKeyDelayed, "")
	checkError(t, w, 503, "could not be built; retry in 60 s")
	if w.Header().Get("Retry-After") != "60" {
		t.Errorf("Retry-After %q", w.Header().Get("Retry-After"))
	}
	checkError(t, ts.do("GET", "/v2/files/companies.csv.gz", testKeyDelayed, ""), 503, "could not be built")
	// An error that says when (flatfiles' BuildError): the seconds left,
	// rounded up (4.9 s: 5 unless the request takes 0.9 s to arrive).
	f.fail = retryError{errors.New("no space left on device"), time.Now().Add(4900 * time.Millisecond)}
	w = ts.do("GET", "/v2/files", testKeyDelayed, "")
	checkError(t, w, 503, "could not be built; retry in 5 s")
	if w.Header().Get("Retry-After") != "5" {
		t.Errorf("Retry-After %q, want 5", w.Header().Get("Retry-After"))
	}
	// The FileSource logs its failed build once; the requests it answers
	// are not each an error record (a client retrying for the minute).
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("the failed build's answers logged as errors:\n%s", logs.String())
	}
}

// TestFilesThrough: the plans' cuts against the clock.
func TestFilesThrough(t *testing.T) {
	ts := newTestServer(t, true)
	ds := mustSmall(t)
	in := ts.api.info(ds)
	last := sessionDate(timeUnix(in.latestVisible))
	f := func(plan string, now string, want engine.Date) {
		t.Helper()
		c := &call{ds: ds, now: mustTime(t, now), key: KeyEntry{Plan: plan}}
		if got := ts.api.filesThrough(c); got != want {
			t.Errorf("%s at %s: through %s, want %s", plan, now, got, want)
		}
	}
	lastClose := timeUnix(in.latestVisible)
	f(PlanDelayed, lastClose.Add(QuoteDelay).Format("2006-01-02T15:04:05Z"), engine.NoDate)
	f(PlanDelayed, lastClose.Add(QuoteDelay-60e9).Format("2006-01-02T15:04:05Z"), last-1)
	f(PlanEOD, lastClose.Add(QuoteDelay).Format("2006-01-02T15:04:05Z"), engine.NoDate) // the delayed plan's cut
	// A cut whose day before has no session (a Monday's: the Sunday) is
	// the session before it, so that the weekend's cuts share one name.
	var sessions []engine.Date
	for _, a := range ds.Assets() {
		sessions = append(sessions, a.Daily.Dates...)
	}
	slices.Sort(sessions)
	sessions = slices.Compact(sessions)
	found := false
	for i := 1; i < len(sessions); i++ {
		if s := sessions[i]; s < last && sessions[i-1] < s-1 {
			at := engine.SessionClose(s).Add(-time.Hour).Format("2006-01-02T15:04:05Z")
			f(PlanDelayed, at, sessions[i-1])
			found = true
			break
		}
	}
	if !found {
		t.Fatal("no session after a day without one: the fixture does not cover the case")
	}
}

// TestFilesEOD: the eod plan's one rule on the files (eodHistory): a
// priced file is a 403 naming the price files, listed or asked by name;
// a file without prices is served.
func TestFilesEOD(t *testing.T) {
	ts := newTestServer(t, true)
	ts.withFiles(t)
	checkError(t, ts.do("GET", "/v2/files/daily_bars-2025.parquet", testKeyEOD, ""), 403,
		"your plan (eod) does not include price files (daily_bars, minute_bars, total_return, index_levels, macro_series): it gives previous-session (D-1) prices only")
	if w := ts.do("GET", "/v2/files/daily_bars-2025.parquet", testKeyDelayed, ""); w.Code != 200 {
		t.Errorf("delayed: %d %s", w.Code, w.Body)
	}
	if w := ts.do("GET", "/v2/files/companies.csv.gz", testKeyEOD, ""); w.Code != 200 || !strings.HasPrefix(w.Body.String(), "companies.csv.gz") {
		t.Errorf("eod, a file without prices: %d %.80s", w.Code, w.Body)
	}
}

// TestFileServe: a file whole, by ranges, conditionally; unknown names
// 404 naming the listing; a range past the end 416.
func TestFileServe(t *testing.T) {
	ts := newTestServer(t, true)
	ts.withFiles(t)
	const path = "/v2/files/daily_bars-2025.parquet"
	w := ts.do("GET", path, testKeyDelayed, "")
	body := w.Body.String()
	if w.Code != 200 || !strings.HasPrefix(body, "daily_bars-2025.parquet all\n") || len(body) != 100*len("daily_bars-2025.parquet all\n") {
		t.Fatalf("%d %.80q", w.Code, body)
	}
	sum := sha256.Sum256([]byte(body))
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	if w.Header().Get("Etag") != etag || w.Header().Get("Content-Type") != "application/vnd.apache.parquet" || w.Header().Get("Accept-Ranges") != "bytes" {
		t.Errorf("headers %v", w.Header())
	}
	// Ranges: one, a suffix, two.
	for _, tc := range []struct{ rng, want string }{{"bytes=0-9", body[:10]}, {"bytes=-5", body[len(body)-5:]}, {"bytes=10-", body[10:]}} {
		w := ts.doHeaders("GET", path, testKeyDelayed, map[string]string{"Range": tc.rng})
		if w.Code != 206 || w.Body.String() != tc.want {
			t.Errorf("Range %s: %d %.40q", tc.rng, w.Code, w.Body.String())
		}
	}
	w2 := ts.doHeaders("GET", path, testKeyDelayed, map[string]string{"Range": "bytes=0-1,5-6"})
	_, params, _ := mime.ParseMediaType(w2.Header().Get("Content-Type"))
	mr := multipart.NewReader(w2.Body, params["boundary"])
	var parts []string
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		b, _ := io.ReadAll(p)
		parts = append(parts, string(b))
	}
	if w2.Code != 206 || fmt.Sprint(parts) != fmt.Sprint([]string{body[:2], body[5:7]}) {
		t.Errorf("two ranges: %d %q", w2.Code, parts)
	}
	if w := ts.doHeaders("GET", path, testKeyDelayed, map[string]string{"If-None-Match": etag}); w.Code != 304 {
		t.Errorf("If-None-Match: %d", w.Code)
	}
	if w := ts.doHeaders("GET", path, testKeyDelayed, map[string]string{"Range": "bytes=0-3", "If-Range": `"other"`}); w.Code != 200 || w.Body.String() != body {
		t.Errorf("If-Range of another ETag: %d", w.Code)
	}
	// A last position or suffix too large for an int64 selects the rest,
	// or the whole file (RFC 9110 §14.1.2), as any past the end does.
	for _, rng := range []string{"bytes=2-99999999999999999999", "bytes=-99999999999999999999"} {
		w = ts.doHeaders("GET", path, testKeyDelayed, map[string]string{"Range": rng})
		want, first := body[2:], 2
		if rng[6] == '-' {
			want, first = body, 0
		}
		if w.Code != 206 || w.Body.String() != want || w.Header().Get("Content-Range") != fmt.Sprintf("bytes %d-%d/%d", first, len(body)-1, len(body)) {
			t.Errorf("Range %s: %d %q %q", rng, w.Code, w.Header().Get("Content-Range"), w.Body.String())
		}
	}
	for _, rng := range []string{fmt.Sprintf("bytes=%d-", len(body)), "bytes=-0", "bytes=99999999999999999999-"} {
		w = ts.doHeaders("GET", path, testKeyDelayed, map[string]string{"Range": rng})
		checkError(t, w, 416, "selects no byte of the file's")
		if w.Header().Get("Content-Range") != fmt.Sprintf("bytes */%d", len(body)) {
			t.Errorf("%s: 416 Content-Range %q", rng, w.Header().Get("Content-Range"))
		}
	}
	checkError(t, ts.do("GET", "/v2/files/daily_bars-1999.parquet", testKeyDelayed, ""), 404, `no file "daily_bars-1999.parquet" for this key's plan: GET /v2/files lists them`)
	checkError(t, ts.do("GET", path, "", ""), 401, "unauthorized")
	// HEAD: the headers, no body.
	if w := ts.do("HEAD", path, testKeyDelayed, ""); w.Code != 200 || w.Header().Get("Content-Length") != fmt.Sprint(len(body)) {
		t.Errorf("HEAD: %d %v", w.Code, w.Header())
	}
}

func TestUnsatisfiable(t *testing.T) {
	f := func(h string, size int64, want bool) {
		t.Helper()
		if got := unsatisfiable(h, size); got != want {
			t.Errorf("unsatisfiable(%q, %d) = %v", h, size, got)
		}
	}
	f("bytes=10-", 10, true)
	f("bytes=9-", 10, false)
	f("bytes=10-20,30-40", 10, true)
	f("bytes=10-20,0-1", 10, false)
	f("bytes=-5", 10, false)
	f("bytes=-0", 10, true) // the last 0 bytes: none (http.ServeContent sent 206 "bytes 10-9/10")
	f("bytes=-0,0-1", 10, false)
	f("bytes=-0,10-", 10, true)
	f("bytes=abc", 10, false)
	f("items=10-", 10, false)
	f("", 10, false)
	f("bytes=99999999999999999999-", 10, true) // past the end, however large
	f("bytes=99999999999999999999-,0-1", 10, false)
	f("bytes=0-99999999999999999999", 10, false)
	f("bytes=-99999999999999999999", 10, false)
	f("bytes=+99999999999999999999-", 10, false) // not a number of the grammar: ServeContent's to refuse
}

func TestClampRange(t *testing.T) {
	for _, tc := range []struct {
		h    string
		size int64
		want string
	}{
		{"bytes=0-99999999999999999999", 10, "bytes=0-9"},
		{"bytes=-99999999999999999999", 10, "bytes=-10"},
		{"bytes=0-1, 5-99999999999999999999", 10, "bytes=0-1,5-9"},
		{"bytes=0-0,-0", 10, "bytes=0-0"}, // the last 0 bytes of a set: none, left out
		{"bytes=-0, 2-3", 10, "bytes=2-3"},
		{"bytes=-000,0-1,-0", 10, "bytes=0-1"},
		{"bytes=-0", 10, "bytes=-0"},                                       // alone: unsatisfiable decides first
		{"bytes=0-05", 10, "bytes=0-05"},                                   // not a suffix
		{"bytes=0-9223372036854775807", 10, "bytes=0-9223372036854775807"}, // fits: ServeContent's
		{"bytes=0-99999999999999999999", 0, "bytes=0-0"},                   // no byte: unsatisfiable decides first
		{"bytes=0-1", 10, "bytes=0-1"},
		{"bytes=0-+99999999999999999999", 10, "bytes=0-+99999999999999999999"},
		{"items=0-99999999999999999999", 10, "items=0-99999999999999999999"},
		{"bytes=99999999999999999999-", 10, "bytes=99999999999999999999-"},
	} {
		if got := clampRange(tc.h, tc.size); got != tc.want {
			t.Errorf("clampRange(%q, %d) = %q, want %q", tc.h, tc.size, got, tc.want)
		}
	}
}

// oneFile is a FileSource of one file.
type oneFile struct {
	dir  string
	info FileInfo
}

func (o *oneFile) Files(context.Context, *engine.Dataset, string, engine.Date) (string, []FileInfo, error) {
	return o.dir, []FileInfo{o.info}, nil
}

// TestFileServeSlowClient: a file takes as long as its client takes to
// read it. A client reading 16 MiB at about 5 MB/s, three times the
// write timeout, through a server that gives every request the write
// timeout (as pregao serve's connections have), gets the whole file; a
// fixed deadline cut it after the timeout.
func TestFileServeSlowClient(t *testing.T) {
	got, took, sum := slowRead{timeout: time.Second, size: 16 << 20, chunk: 256 << 10, pause: every(50 * time.Millisecond)}.run(t)
	if len(got) != 16<<20 || sha256.Sum256(got) != sum {
		t.Fatalf("%d bytes of %d read in %s (write timeout 1s)", len(got), 16<<20, took)
	}
	if took < 2*time.Second {
		t.Errorf("read in %s: not slower than twice the write timeout (1s), the test tests nothing", took)
	}
}

// TestFileServeSteadyClient: a client that reads steadily but slowly
// gets the whole file even when one write waits longer than the write
// timeout. The kernel wakes a blocked writer once half of the send
// buffer is free (here a 512 KiB SO_SNDBUF, which it doubles), so at
// about 250 KB/s each write waits about 2 s, twice the 1 s timeout: the
// watch of what the client acknowledges (writeWatch, given the
// connection by ConnContext) keeps the deadline ahead. Without the watch
// the same download is cut.
func TestFileServeSteadyClient(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no acknowledged bytes on this system: each write keeps its own deadline")
	}
	const size = 3 << 19
	steady := slowRead{timeout: time.Second, size: size, sndbuf: 512 << 10, chunk: 32 << 10, pause: every(130 * time.Millisecond)}
	got, took, sum := steady.run(t)
	if len(got) != size || sha256.Sum256(got) != sum {
		t.Fatalf("%d bytes of %d read in %s at about 250 KB/s (write timeout 1s): a client reading steadily was cut", len(got), size, took)
	}
	t.Logf("read in %s", took)
	steady.noWatch = true
	got, took, _ = steady.run(t)
	if len(got) == size {
		t.Errorf("without the watch the whole file was read in %s: no write waited past the timeout, the test tests nothing", took)
	}
	t.Logf("without the watch: %d bytes in %s", len(got), took)
}

// TestFileServeStoppedClient: a client that stops reading is cut once a
// write has waited the write timeout (and the watch's quarter), and the
// rest of the file is not sent when it reads again.
func TestFileServeStoppedClient(t *testing.T) {
	got, took, _ := slowRead{timeout: 300 * time.Millisecond, size: 16 << 20, chunk: 256 << 10, pause: func(i int) time.Duration {
		if i == 0 {
			return 2 * time.Second
		}
		return 0
	}}.run(t)
	if len(got) >= 16<<20 {
		t.Fatalf("the whole file (%d bytes) read in %s with a 2 s pause: a client that stops reading is not cut (write timeout 300ms)", len(got), took)
	}
}

// every is a slowRead pause of d after every read.
func every(d time.Duration) func(int) time.Duration { return func(int) time.Duration { return d } }

// slowRead serves a file of size bytes through a server with write
// timeout timeout (its connections given to the API by ConnContext
// unless noWatch, their send buffer sndbuf bytes when above 0) and reads
// it in reads of chunk bytes, pausing pause(i) after read i.
type slowRead struct {
	timeout time.Duration
	size    int
	sndbuf  int
	noWatch bool
	chunk   int
	pause   func(i int) time.Duration
}

// run returns what was read until the body ended or failed, how long
// that took and the file's SHA-256.
func (o slowRead) run(t *testing.T) (got []byte, took time.Duration, sum [32]byte) {
	t.Helper()
	ts := newTestServer(t, true)
	cfg := DefaultConfig()
	cfg.WriteTimeout = o.timeout
	api := New(cfg, ts.store, testKeys(t), nil, prometheus.NewRegistry(), nil)
	dir := t.TempDir()
	data := make([]byte, o.size)
	for i := range data {
		data[i] = byte(i * 7 / 3)
	}
	if err := os.WriteFile(filepath.Join(dir, "reports.csv.gz"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	sum = sha256.Sum256(data)
	api.SetFiles(&oneFile{dir, FileInfo{Dataset: "reports", Name: "reports.csv.gz", Format: "csv", Rows: 1, Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), MinDate: engine.NoDate, MaxDate: engine.NoDate}})
	srv := httptest.NewUnstartedServer(api)
	srv.Config.WriteTimeout = cfg.WriteTimeout
	if !o.noWatch {
		srv.Config.ConnContext = ConnContext
	}
	if o.sndbuf > 0 {
		srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
			if tc, ok := c.(*net.TCPConn); ok && st == http.StateNew {
				tc.SetWriteBuffer(o.sndbuf)
			}
		}
	}
	srv.Start()
	defer srv.Close()

	// A small receive buffer, so that the kernel's buffers hold a few
	// MiB at most and the server's writes wait for the reader.
	var d net.Dialer
	tr := &http.Transport{DisableCompression: true, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetReadBuffer(64 << 10)
		}
		return c, err
	}}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest("GET", srv.URL+"/v2/files/reports.csv.gz", nil)
	req.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	start := time.Now()
	buf := make([]byte, o.chunk)
	for i := 0; ; i++ {
		n, err := io.ReadFull(resp.Body, buf)
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
		time.Sleep(o.pause(i))
	}
	return got, time.Since(start), sum
}

// retryError is a failed build's error that says when the build is
// tried again, as flatfiles' BuildError does.
type retryError struct {
	error
	at time.Time
}

func (e retryError) RetryAt() time.Time { return e.at }

func TestRetryAfterFailure(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		err  error
		want int
	}{
		{"plain error: the default minute", errors.New("disk full"), 60},
		{"retried in 2.1 s", retryError{errors.New("disk full"), now.Add(2100 * time.Millisecond)}, 3},
		{"retried in 90 s", retryError{errors.New("disk full"), now.Add(90 * time.Second)}, 90},
		{"wrapped", fmt.Errorf("files: %w", retryError{errors.New("disk full"), now.Add(10 * time.Second)}), 10},
		{"due already: at least 1", retryError{errors.New("disk full"), now.Add(-time.Second)}, 1},
	} {
		if got := retryAfterFailure(c.err, now); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// TestFileServeCutValidators: a file's name in a cut short of the
// snapshot holds more once the clock moves past its data, under the
// snapshot's date: the file and the listing carry no Last-Modified
// there, so that a client that revalidates by date alone
// (If-Modified-Since, as wget -N and curl -z do) never gets a 304 on
// other bytes; the whole cut carries the snapshot's and answers 304 to
// it.
func TestFileServeCutValidators(t *testing.T) {
	ds := mustSmall(t)
	store := &engine.Store{}
	store.Publish(ds)
	clk := &movingClock{}
	api := New(DefaultConfig(), store, testKeys(t), clk, prometheus.NewRegistry(), nil)
	api.SetFiles(&fakeFiles{dir: t.TempDir()})
	ts := &testServer{api: api, store: store}
	get := func(path, ims string) *httptest.ResponseRecorder {
		return doH(ts, "GET", path, testKeyDelayed, "", "If-Modified-Since", ims)
	}
	const file = "/v2/files/daily_bars-2025.parquet"
	built := api.info(ds).lastModified[0]
	lastClose := timeUnix(api.info(ds).latestVisible)
	clk.set(lastClose.Add(QuoteDelay - time.Minute)) // the cut ends the session before
	for _, path := range []string{file, "/v2/files"} {
		w := get(path, built)
		if w.Code != 200 || w.Header().Get("Last-Modified") != "" {
			t.Errorf("%s, the early cut, If-Modified-Since the snapshot's date: %d, Last-Modified %q", path, w.Code, w.Header().Get("Last-Modified"))
		}
	}
	if w := get(file, ""); strings.Contains(w.Body.String(), " all\n") {
		t.Fatalf("the early cut: %.40q", w.Body.String())
	}
	clk.set(lastClose.Add(QuoteDelay)) // whole
	for _, path := range []string{file, "/v2/files"} {
		w := get(path, "")
		if w.Code != 200 || w.Header().Get("Last-Modified") != built {
			t.Errorf("%s, whole: %d, Last-Modified %q, want %q", path, w.Code, w.Header().Get("Last-Modified"), built)
		}
		if w := get(path, built); w.Code != 304 {
			t.Errorf("%s, whole, If-Modified-Since its date: %d", path, w.Code)
		}
	}
}

// TestFilesEODValuations: the ratios file holds the valuation points of
// the snapshot's last session, priced at its close, which the eod plan
// does not show on the evening of that session (valuationCut): an eod
// key is not given it then (not listed, 403 by name), and is from the
// next market day; the delayed plan always is.
func TestFilesEODValuations(t *testing.T) {
	ds := mustSmall(t)
	store := &engine.Store{}
	store.Publish(ds)
	clk := &movingClock{}
	api := New(DefaultConfig(), store, testKeys(t), clk, prometheus.NewRegistry(), nil)
	dir := t.TempDir()
	api.SetFiles(ratiosFiles{dir: dir})
	ts := &testServer{api: api, store: store}
	last := ds.LastSession()
	for _, c := range []struct {
		name, key string
		at        time.Time
		served    bool
	}{
		{"eod, the evening of the last session", testKeyEOD, engine.SessionClose(last).Add(time.Hour), false},
		{"eod, the next day", testKeyEOD, engine.SessionClose(last).Add(14 * time.Hour), true},
		{"delayed, the evening", testKeyDelayed, engine.SessionClose(last).Add(time.Hour), true},
	} {
		clk.set(c.at)
		list := doH(ts, "GET", "/v2/files", c.key, "")
		listed := strings.Contains(list.Body.String(), `"ratios.parquet"`)
		w := doH(ts, "GET", "/v2/files/ratios.parquet", c.key, "")
		if list.Code != 200 || listed != c.served || (w.Code == 200) != c.served {
			t.Errorf("%s: listing %d (ratios listed %t), file %d %.200s; want served %t", c.name, list.Code, listed, w.Code, w.Body, c.served)
		}
		if !c.served {
			checkError(t, w, 403, "does not show the session of "+last.String()+" yet")
		}
	}
}

// ratiosFiles is a FileSource of one ratios file.
type ratiosFiles struct{ dir string }

func (f ratiosFiles) Files(ctx context.Context, ds *engine.Dataset, id string, through engine.Date) (string, []FileInfo, error) {
	b := []byte("ratios\n")
	if err := os.WriteFile(filepath.Join(f.dir, "ratios.parquet"), b, 0o644); err != nil {
		return "", nil, err
	}
	sum := sha256.Sum256(b)
	return f.dir, []FileInfo{{Dataset: "ratios", Name: "ratios.parquet", Format: "parquet", Rows: 1, Bytes: int64(len(b)), SHA256: hex.EncodeToString(sum[:]), MinDate: engine.NoDate, MaxDate: engine.NoDate}}, nil
}

// reloadingFiles is fakeFiles whose first Files call runs reload first:
// a reload published while a request waits for its files.
type reloadingFiles struct {
	*fakeFiles
	once   sync.Once
	reload func()
}

func (f *reloadingFiles) Files(ctx context.Context, ds *engine.Dataset, id string, through engine.Date) (string, []FileInfo, error) {
	f.once.Do(f.reload)
	return f.fakeFiles.Files(ctx, ds, id, through)
}

// TestFilesReplacedDataset: the files of a request are those of its
// snapshot's id, whatever a reload publishes meanwhile. A reload while
// the request waits for its files leaves the listing naming the
// snapshot they were built from; a request whose Dataset was replaced
// before it asked for its files is a 503 to retry, not a build of the
// replaced snapshot's files under an id made up for it (which took the
// one build at a time from the new snapshot's).
func TestFilesReplacedDataset(t *testing.T) {
	ts := newTestServer(t, true)
	old := ts.store.Current()
	ts.api.Prepare(old, "snapold", time.Unix(1e9, 0))
	ts.api.Published()
	neu := freshSmall(t)
	src := &reloadingFiles{fakeFiles: &fakeFiles{dir: t.TempDir()}, reload: func() {
		ts.api.Prepare(neu, "snapnew", time.Unix(2e9, 0))
		ts.store.Publish(neu)
		ts.api.Published()
	}}
	ts.api.SetFiles(src)

	w := ts.do("GET", "/v2/files", testKeyDelayed, "")
	var l struct {
		Snapshot string `json:"snapshot"`
	}
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &l) != nil {
		t.Fatalf("GET /v2/files: %d %s", w.Code, w.Body)
	}
	if l.Snapshot != "snapold" || !slices.Equal(src.ids, []string{"snapold"}) {
		t.Errorf("listing of snapshot %q, files asked of %q; want snapold, reloaded during the wait", l.Snapshot, src.ids)
	}

	// A request that began on the replaced Dataset.
	c := &call{ds: old, now: ts.api.clock.Now(), key: KeyEntry{Plan: PlanDelayed}}
	rec := httptest.NewRecorder()
	c.out.w = rec
	_, _, _, _, err := ts.api.filesOf(c, httptest.NewRequest("GET", "/v2/files", nil))
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable || !strings.Contains(e.Message, "replaced") {
		t.Errorf("files of a replaced Dataset: %v, want a 503 saying it was replaced", err)
	}
	if got := rec.Header().Get("Retry-After"); got == "" {
		t.Error("the 503 has no Retry-After")
	}
	if !slices.Equal(src.ids, []string{"snapold"}) {
		t.Errorf("files asked of %q: the replaced Dataset's asked again", src.ids)
	}
	if w := ts.do("GET", "/v2/files", testKeyDelayed, ""); w.Code != 200 || !strings.Contains(w.Body.String(), `"snapshot":"snapnew"`) {
		t.Errorf("GET /v2/files after the reload: %d %s", w.Code, w.Body)
	}
}
