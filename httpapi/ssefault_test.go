package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/julienschmidt/httprouter"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/mapfile"
)

// faultSink keeps the tests' reads of a cut mapping from being left out.
var faultSink byte

// cutMapping maps a file, cuts it (truncated to nothing) and returns a
// read of its mapping, which faults as a read of a snapshot cut in place
// does (SIGBUS): a panic that mapfile.Fault names on a goroutine with
// debug.SetPanicOnFault set. It skips the test where files are not
// mapped.
func cutMapping(t *testing.T) func() {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cut")
	if err := os.WriteFile(path, make([]byte, 1<<16), 0o644); err != nil {
		t.Fatal(err)
	}
	mf, err := mapfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mf.Close() })
	if !mf.Mapped() {
		t.Skip("files are not mapped here")
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	return func() { faultSink = mf.Bytes()[1<<15] }
}

// A stream's catch-up, after its status was sent, reads its view's
// Dataset (the stream holds none in its call): a fault there (the
// snapshot's file cut in place: here a read of a mapping whose file was
// truncated) fails that Dataset, whose requests then answer 503, and ends
// the stream with a comment saying so; no handler panic is counted.
func TestStreamDiffFault(t *testing.T) {
	ds := freshSmall(t) // its own: the test fails it
	cutMapping := cutMapping(t)
	defer func(h func()) { beforeStreamDiff = h }(beforeStreamDiff)
	beforeStreamDiff = cutMapping

	store := &engine.Store{}
	store.Publish(ds)
	reg := prometheus.NewRegistry()
	api := New(DefaultConfig(), store, testKeys(t), nil, reg, nil)
	srv := httptest.NewServer(api)
	defer func() { api.EndStreams(); srv.Close() }()
	ticker := ds.Assets()[0].Ticker
	do := func(path, lastID string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body) // the stream ends by itself
		if err != nil {
			t.Fatalf("%s: %d, %v after %.300s", path, resp.StatusCode, err, b)
		}
		return resp.StatusCode, string(b)
	}
	// Resumed (from before any session), the stream's catch-up diffs.
	if code, body := do("/v2/stream/quotes?tickers="+ticker, "0.0.0.0/0.0.0.0//s0"); code != 200 || !strings.Contains(body, ": the snapshot is damaged") {
		t.Fatalf("a stream whose catch-up faults: %d %.500s", code, body)
	}
	if err := ds.BlockErr(); !errors.Is(err, mapfile.ErrFault) {
		t.Errorf("the Dataset's error after the fault: %v", err)
	}
	if code, body := do("/v2/quotes/"+ticker, ""); code != 503 {
		t.Errorf("a request after the fault: %d %.300s", code, body)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mfs {
		if m.GetName() == "pregao_http_panics_total" && m.Metric[0].GetCounter().GetValue() != 0 {
			t.Errorf("a fault counted as a handler panic: %v", m.Metric[0].GetCounter().GetValue())
		}
	}
}

// A streamed answer that fails after its status went out, by an error or
// by a fault reading its snapshot's mapped file (cut in place), reaches
// its client as a cut connection (an error reading the body), through
// the whole server (the router, net/http), never as a complete body with
// an error appended. A panic there (a bug) is cut too, and counted; the
// fault fails the Dataset.
func TestStreamedFailureCutsConnection(t *testing.T) {
	for _, c := range []struct {
		name         string
		fault, panic bool
	}{{"error", false, false}, {"fault", true, false}, {"panic", false, true}} {
		t.Run(c.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			store := &engine.Store{}
			ds := freshSmall(t)
			store.Publish(ds)
			api := New(DefaultConfig(), store, testKeys(t), nil, reg, nil)
			read := cutMapping(t)
			rt := &Route{Method: "GET", Path: "/test/large", serve: func(a *API, cl *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
				chunk := bytes.Repeat([]byte("x"), streamChunk)
				for range 20 { // 5 MiB: past what the answer holds back
					dst = cl.flush(append(dst, chunk...))
				}
				if c.fault {
					read()
				}
				if c.panic {
					panic("a handler bug")
				}
				return dst, errors.New("failed halfway")
			}}
			api.router.Handle(rt.Method, rt.Path, api.wrap(rt))
			srv := httptest.NewServer(api)
			defer srv.Close()
			req, _ := http.NewRequest("GET", srv.URL+"/test/large", nil)
			req.Header.Set("Authorization", "Bearer "+testKeyDelayed)
			// Not compressed: a body with an error appended would read whole.
			req.Header.Set("Accept-Encoding", "identity")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || err == nil {
				t.Errorf("a streamed answer failed halfway: %d, %d bytes read whole (%.80q)", resp.StatusCode, len(b), b[max(len(b)-80, 0):])
			}
			if err := ds.BlockErr(); c.fault != errors.Is(err, mapfile.ErrFault) {
				t.Errorf("the Dataset's error: %v", err)
			}
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range mfs {
				if m.GetName() == "pregao_http_panics_total" && (m.Metric[0].GetCounter().GetValue() != 0) != c.panic {
					t.Errorf("panics counted: %v", m.Metric[0].GetCounter().GetValue())
				}
			}
		})
	}
}
