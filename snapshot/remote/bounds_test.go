package remote

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// hostile is an origin that misbehaves as mode says (see the cases of
// TestFetchBounds); sent counts the body bytes it wrote.
type hostile struct {
	mode string
	body []byte
	etag string
	sent atomic.Int64
	gets atomic.Int64
	inm  atomic.Value // the last If-None-Match asked
}

func (h *hostile) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.gets.Add(1)
	h.inm.Store(r.Header.Get("If-None-Match"))
	w.Header().Set("ETag", h.etag)
	write := func(b []byte) bool {
		n, err := w.Write(b)
		h.sent.Add(int64(n))
		return err == nil
	}
	switch h.mode {
	case "huge-length":
		w.Header().Set("Content-Length", strconv.FormatInt(1e12, 10))
		w.WriteHeader(200)
		write(make([]byte, 1<<20)) // as much as the client takes before it hangs up
	case "endless":
		w.WriteHeader(200)
		chunk := bytes.Repeat([]byte{0xAB}, 32<<10)
		for write(chunk) {
		}
	case "stall":
		w.Header().Set("Content-Length", strconv.Itoa(len(h.body)))
		w.WriteHeader(200)
		write(h.body[:100])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	case "500", "404":
		code, _ := strconv.Atoi(h.mode)
		http.Error(w, "no", code)
	case "truncated":
		w.Header().Set("Content-Length", strconv.Itoa(len(h.body)))
		w.WriteHeader(200)
		write(h.body[:len(h.body)/2])
		panic(http.ErrAbortHandler)
	case "redirect":
		http.Redirect(w, r, "http://elsewhere.invalid"+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	case "slow":
		w.Header().Set("Content-Length", strconv.Itoa(len(h.body)))
		w.WriteHeader(200)
		for i := 0; i < len(h.body) && write(h.body[i:i+1]); i++ {
			w.(http.Flusher).Flush()
			time.Sleep(10 * time.Millisecond)
		}
	case "ignore-conditions": // a full answer whatever If-None-Match says
		w.Header().Set("Content-Length", strconv.Itoa(len(h.body)))
		w.WriteHeader(200)
		write(h.body)
	default:
		rec := &countingWriter{ResponseWriter: w, n: &h.sent}
		http.ServeContent(rec, r, "s.snap", time.Unix(0, 0), bytes.NewReader(h.body))
	}
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n.Add(int64(n))
	return n, err
}

// TestFetchBounds: a Content-Length over the cap is refused before its
// body, an endless body is cut at the cap, a stalled body is abandoned
// after StallTimeout; the partial file is removed (a stalled one kept to
// be resumed, within the cap), the local copy is untouched, and the
// reason is reported. A refused publication is not downloaded again.
func TestFetchBounds(t *testing.T) {
	good := snapBytes(t)
	for _, tc := range []struct {
		mode   string
		reason string
		cap    int64
	}{
		{"huge-length", ReasonTooLarge, 1 << 20},
		{"endless", ReasonTooLarge, 1 << 20},
		{"stall", ReasonStalled, 0},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			h := &hostile{body: good, etag: `"v1"`}
			srv := httptest.NewServer(h)
			defer srv.Close()
			// Only the stalled body may stall: a loaded machine's pauses
			// must not make another case one.
			f := &Fetcher{URL: srv.URL + "/s.snap", Path: filepath.Join(t.TempDir(), "local.snap"), RetryDelay: time.Millisecond, Retries: -1, StallTimeout: time.Minute, MaxBytes: tc.cap}
			if _, err := f.Fetch(context.Background()); err != nil {
				t.Fatal(err)
			}
			if tc.mode == "stall" {
				f.StallTimeout = 200 * time.Millisecond
			}
			h.mode, h.etag = tc.mode, `"v2"`
			sent := h.sent.Load()
			start := time.Now()
			changed, err := f.Fetch(context.Background())
			if changed || ReasonOf(err) != tc.reason {
				t.Fatalf("changed %v, reason %q (%v), want %s", changed, ReasonOf(err), err, tc.reason)
			}
			t.Logf("%s: %v after %s, %d bytes sent", tc.mode, err, time.Since(start).Round(time.Millisecond), h.sent.Load()-sent)
			if got, _ := os.ReadFile(f.Path); !bytes.Equal(got, good) {
				t.Fatal("the local copy was touched")
			}
			st, err := os.Stat(f.side(".part"))
			switch {
			case tc.mode == "stall" && (err != nil || st.Size() != 100):
				t.Errorf("stalled part: %v, want its 100 bytes kept to be resumed", err)
			case tc.mode != "stall" && !os.IsNotExist(err):
				t.Errorf("the part of a refused download is still there: %v", err)
			}
			if tc.reason != ReasonTooLarge {
				return
			}
			// Refused: not downloaded again while the origin serves it
			// (asked with its ETag; the body left unread when the origin
			// answers it anyway).
			read := readCounter(f)
			if changed, err := f.Fetch(context.Background()); changed || err != nil || read.Load() != 0 || !strings.Contains(h.inm.Load().(string), `"v2"`) {
				t.Errorf("the refused publication again: %v %v, %d bytes read, If-None-Match %s", changed, err, read.Load(), h.inm.Load())
			}
			if _, err := os.Stat(f.side(".part")); !os.IsNotExist(err) {
				t.Error("a part of the refused publication")
			}
			// A larger cap takes a publication refused as too large.
			h.mode, h.body, f.MaxBytes = "", snapBytes2(t), 1<<30
			if changed, err := f.Fetch(context.Background()); !changed || err != nil {
				t.Errorf("with a larger cap: %v %v", changed, err)
			}
		})
	}
}

// readCounter makes f count the body bytes its client reads.
func readCounter(f *Fetcher) *atomic.Int64 {
	n := new(atomic.Int64)
	f.Client = &http.Client{Transport: countingTransport{n}}
	return n
}

type countingTransport struct{ n *atomic.Int64 }

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = &countingBody{resp.Body, c.n}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// TestFetchAutoCap: without MaxBytes, the cap is four times the local
// copy, at least MinAutoMaxBytes; FirstMaxBytes with no copy.
func TestFetchAutoCap(t *testing.T) {
	f := &Fetcher{Path: filepath.Join(t.TempDir(), "local.snap")}
	if got := f.maxBytes(); got != FirstMaxBytes {
		t.Errorf("no local copy: cap %d", got)
	}
	os.WriteFile(f.Path, []byte("x"), 0o644)
	if got := f.maxBytes(); got != MinAutoMaxBytes {
		t.Errorf("a small copy: cap %d", got)
	}
	os.Truncate(f.Path, 100<<20)
	if got := f.maxBytes(); got != 400<<20 {
		t.Errorf("a 100 MiB copy: cap %d", got)
	}
}

// TestFetchFreeSpace: a download that would leave less than MinFree free
// is refused before its body (by its Content-Length) or stopped when the
// space runs low; the part is removed.
func TestFetchFreeSpace(t *testing.T) {
	body := bytes.Repeat([]byte{1}, 20<<20) // over freeCheckEvery
	h := &hostile{body: body, etag: `"v1"`}
	srv := httptest.NewServer(h)
	defer srv.Close()
	var free atomic.Int64 // before the part's bytes
	f := &Fetcher{URL: srv.URL + "/s.snap", Path: filepath.Join(t.TempDir(), "local.snap"), Retries: -1, MinFree: 1 << 20, MaxBytes: 1 << 30}
	f.FreeSpace = func(string) (int64, bool) {
		st, _ := os.Stat(f.side(".part"))
		if st == nil {
			return free.Load(), true
		}
		return free.Load() - st.Size(), true
	}
	read := readCounter(f)
	free.Store(int64(len(body))) // less than the body and MinFree
	if _, err := f.Fetch(context.Background()); ReasonOf(err) != ReasonNoSpace || read.Load() != 0 {
		t.Fatalf("%v (%s), %d bytes read", err, ReasonOf(err), read.Load())
	}
	h.mode = "endless" // no Content-Length: stopped as the space runs out
	free.Store(12 << 20)
	if _, err := f.Fetch(context.Background()); ReasonOf(err) != ReasonNoSpace || read.Load() > 20<<20 {
		t.Fatalf("%v (%s), %d bytes read", err, ReasonOf(err), read.Load())
	}
	if _, err := os.Stat(f.side(".part")); !os.IsNotExist(err) {
		t.Error("the part was kept")
	}
}

// TestFetchRedirects: a redirect on the same host is followed, to
// another host refused unless CrossHostRedirects.
func TestFetchRedirects(t *testing.T) {
	h := &hostile{body: snapBytes(t), etag: `"v1"`}
	other := httptest.NewServer(h)
	defer other.Close()
	mux := http.NewServeMux()
	mux.Handle("/real.snap", h)
	mux.HandleFunc("/same.snap", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/real.snap", http.StatusFound) })
	mux.HandleFunc("/away.snap", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/s.snap?X-Amz-Signature=secret", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	dir := t.TempDir()
	f := &Fetcher{URL: srv.URL + "/same.snap", Path: filepath.Join(dir, "a.snap"), Retries: -1}
	if changed, err := f.Fetch(context.Background()); err != nil || !changed {
		t.Fatalf("same host: %v %v", changed, err)
	}
	f = &Fetcher{URL: srv.URL + "/away.snap", Path: filepath.Join(dir, "b.snap"), Retries: 2, RetryDelay: time.Millisecond}
	gets := h.gets.Load()
	_, err := f.Fetch(context.Background())
	if ReasonOf(err) != ReasonRedirect || h.gets.Load() != gets {
		t.Fatalf("another host: %v (%s), %d requests there", err, ReasonOf(err), h.gets.Load()-gets)
	}
	if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "?") {
		t.Errorf("error shows the query: %v", err)
	}
	f.CrossHostRedirects = true
	if changed, err := f.Fetch(context.Background()); err != nil || !changed {
		t.Fatalf("another host allowed: %v %v", changed, err)
	}
}

// TestFetchRemembersRefusal: a publication that does not verify is not
// downloaded again while the origin serves it (a 304 from an origin that
// honours If-None-Match, the body left unread from one that does not),
// nor its bytes under another ETag; the next good publication is.
func TestFetchRemembersRefusal(t *testing.T) {
	good := snapBytes(t)
	bad := bytes.Clone(good)
	bad[len(bad)-10] ^= 0xff
	h := &hostile{body: good, etag: `"v1"`}
	srv := httptest.NewServer(h)
	defer srv.Close()
	f := &Fetcher{URL: srv.URL + "/s.snap", Path: filepath.Join(t.TempDir(), "local.snap"), Retries: -1}
	ctx := context.Background()
	if _, err := f.Fetch(ctx); err != nil {
		t.Fatal(err)
	}
	h.body, h.etag = bad, `"v2"`
	if _, err := f.Fetch(ctx); !errors.Is(err, ErrVerify) || ReasonOf(err) != ReasonVerify {
		t.Fatalf("corrupt: %v", err)
	}
	read := readCounter(f)
	for _, mode := range []string{"", "ignore-conditions"} {
		h.mode = mode
		if changed, err := f.Fetch(ctx); changed || err != nil || read.Load() != 0 {
			t.Errorf("%q: the refused publication again: %v %v, %d bytes read", mode, changed, err, read.Load())
		}
	}
	h.mode, h.etag = "", `"v3"` // the same bad bytes, another ETag
	if _, err := f.Fetch(ctx); ReasonOf(err) != ReasonVerify || !strings.Contains(err.Error(), "refused before") {
		t.Errorf("the refused bytes under another ETag: %v", err)
	}
	h.body, h.etag = snapBytes2(t), `"v4"`
	if changed, err := f.Fetch(ctx); !changed || err != nil {
		t.Errorf("a good publication after a refused one: %v %v", changed, err)
	}
}

// TestRedact: query strings, fragments and user information go.
func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:p@h.example/k/s.snap?X-Amz-Credential=AKIA&X-Amz-Signature=ab#f": "https://h.example/k/s.snap",
		"s3://bucket/key/s.snap": "s3://bucket/key/s.snap",
		"http://h:8080/s.snap":   "http://h:8080/s.snap",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	msg := `Get "http://127.0.0.1:9/b/k?X-Amz-Signature=abc": dial tcp; and https://user:pw@x/y?z=1 too`
	if got := scrub(msg); strings.Contains(got, "X-Amz") || strings.Contains(got, "pw") || strings.Contains(got, "z=1") {
		t.Errorf("scrub: %s", got)
	}
}

// TestFetchS3HidesCredentials: on every way an s3:// fetch fails, the
// error names the s3:// location or the endpoint, never the presigned
// URL's query (access key id, signature).
func TestFetchS3HidesCredentials(t *testing.T) {
	good := snapBytes(t)
	bad := bytes.Clone(good)
	bad[len(bad)-10] ^= 0xff
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, tc := range []struct {
		mode, reason string
		body         []byte
		endpoint     string // "": the hostile origin's
		setup        func(f *Fetcher, ctx context.Context) (context.Context, context.CancelFunc)
	}{
		{"", ReasonNetwork, good, closed.URL, nil},
		{"", ReasonConfig, good, "ftp://AKIDPREGAOSECRETID:pregao-secret-key@store.example", nil},
		{"500", ReasonStatus, good, "", nil},
		{"404", ReasonStatus, good, "", nil},
		{"redirect", ReasonRedirect, good, "", nil},
		{"truncated", ReasonTruncated, good, "", nil},
		{"", ReasonVerify, bad, "", nil},
		{"endless", ReasonTooLarge, good, "", func(f *Fetcher, ctx context.Context) (context.Context, context.CancelFunc) {
			f.MaxBytes = 1 << 20
			return ctx, func() {}
		}},
		{"huge-length", ReasonNoSpace, good, "", func(f *Fetcher, ctx context.Context) (context.Context, context.CancelFunc) {
			f.FreeSpace = func(string) (int64, bool) { return 1 << 30, true }
			f.MaxBytes = 1 << 50
			return ctx, func() {}
		}},
		{"stall", ReasonStalled, good, "", nil},
		{"slow", ReasonTimeout, good, "", func(f *Fetcher, ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 300*time.Millisecond)
		}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			h := &hostile{mode: tc.mode, body: tc.body, etag: `"v1"`}
			srv := httptest.NewServer(h)
			defer srv.Close()
			endpoint := srv.URL
			if tc.endpoint != "" {
				endpoint = tc.endpoint
			}
			t.Setenv("AWS_ENDPOINT_URL", endpoint)
			t.Setenv("AWS_ACCESS_KEY_ID", "AKIDPREGAOSECRETID")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "pregao-secret-key")
			t.Setenv("AWS_SESSION_TOKEN", "pregao-session-token")
			f := &Fetcher{URL: "s3://snaps/prod/pregao.snap", Path: filepath.Join(t.TempDir(), "local.snap"), Retries: 1, RetryDelay: time.Millisecond, StallTimeout: time.Minute}
			if tc.mode == "stall" { // only the stalled body may stall on a loaded machine
				f.StallTimeout = 200 * time.Millisecond
			}
			ctx, cancel := context.Background(), func() {}
			if tc.setup != nil {
				ctx, cancel = tc.setup(f, ctx)
			}
			defer cancel()
			_, err := f.Fetch(ctx)
			if ReasonOf(err) != tc.reason {
				t.Fatalf("reason %q (%v), want %s", ReasonOf(err), err, tc.reason)
			}
			msg := err.Error()
			for _, secret := range []string{"?", "X-Amz", "AKIDPREGAOSECRETID", "pregao-secret-key", "pregao-session-token"} {
				if strings.Contains(msg, secret) {
					t.Errorf("the error shows %q: %s", secret, msg)
				}
			}
			t.Log(msg)
		})
	}
}
