package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// errBadBlock is badBlocks' bad block.
var errBadBlock = errors.New("block 3 of the daily bars: checksum mismatch")

// badBlocks is the engine.Blocks of a snapshot published before its
// blocks were verified (a reload of a fetched copy) with a bad block:
// the first verification that reads, of any ticker or company or all,
// finds it.
type badBlocks struct{ found atomic.Bool }

func (b *badBlocks) bad() error              { b.found.Store(true); return errBadBlock }
func (b *badBlocks) Ticker(t string) error   { return b.bad() }
func (b *badBlocks) Company(id string) error { return b.bad() }
func (b *badBlocks) All() error              { return b.bad() }

func (b *badBlocks) Err() error {
	if b.found.Load() {
		return errBadBlock
	}
	return nil
}

func (b *badBlocks) Status() engine.BlockStatus {
	s := engine.BlockStatus{Blocks: 8, Bytes: 8 << 20}
	if b.found.Load() {
		s.Verified, s.Bad, s.Err = 1, 1, errBadBlock
	}
	return s
}

// liveDemoBase builds the live demo's base (the day before its session)
// again, as a Dataset of its own that a test may fail; deferred leaves
// its deferred kinds out (for FinishDeferred).
func liveDemoBase(t *testing.T, deferred bool) *engine.Dataset {
	t.Helper()
	u, sess := demo.GenerateSession(5, liveDemoSize, nil)
	base := demo.HoldBack(u, sess)
	d, err := ratios.Derive(base)
	if err != nil {
		t.Fatal(err)
	}
	base.Derived = d
	ds, err := engine.BuildWith(base, engine.BuildOptions{Deferred: deferred})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// A stream follows its snapshot as a request does: a snapshot a reload
// published before verifying its blocks (a fetched copy) is verified by
// the streams' step before it reads a bar of it, and one with a bad
// block, or failed since (a fault reading its file, its deferred kinds),
// ends the open streams with a comment saying so (counted as cut,
// "damaged") instead of feeding them; no event is made from it, and the
// clients' reconnections are refused 503 as its requests are. Before
// the fix the steps never looked at the Dataset's error: the streams
// went on reading the unverified (or failed) snapshot.
func TestStreamFailedSnapshot(t *testing.T) {
	for _, c := range []struct {
		name string
		// publish returns the Dataset the replica serves once the stream
		// runs; fail, if set, fails it after a step was made from it.
		publish func(t *testing.T) *engine.Dataset
		fail    func(ds *engine.Dataset)
		want    string // in the reconnection's 503
	}{
		{name: "unverified", publish: func(t *testing.T) *engine.Dataset {
			ds := liveDemoBase(t, false)
			ds.SetBlocks(&badBlocks{})
			return ds
		}, want: "the snapshot is damaged"},
		{name: "fault", publish: func(t *testing.T) *engine.Dataset { return liveDemoBase(t, false) },
			fail: func(ds *engine.Dataset) { ds.Fail(errors.New("a read of the mapped file faulted")) },
			want: "the snapshot is damaged"},
		{name: "deferred", publish: func(t *testing.T) *engine.Dataset { return liveDemoBase(t, true) },
			fail: func(ds *engine.Dataset) { ds.FinishDeferred(nil, errors.New("cash_actions: bad part")) },
			want: "the snapshot could not be loaded whole"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newSSEFixture(t)
			api := f.apis[0]
			path := "/v2/stream/quotes?tickers=" + strings.Join(f.ld.tickers[:min(20, len(f.ld.tickers))], ",")
			r := rawStream(t, f.srvs[0].URL+path, testKeyDelayed)
			defer r.close()
			at := f.stepTwoHours(t)
			for deadline := time.Now().Add(20 * time.Second); !strings.Contains(r.text(), "event: bar"); time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("no bar: %.300s", r.text())
				}
			}
			ds := c.publish(t)
			f.stores[0].Publish(ds)
			seq := f.seq
			if c.fail != nil {
				f.step(t, at.Add(5*time.Minute), false) // made from ds
				seq = f.seq
				c.fail(ds)
			}
			f.step(t, at.Add(10*time.Minute), false)
			select {
			case <-r.done:
			case <-time.After(20 * time.Second):
				t.Fatalf("the stream of a failed snapshot still open: %q", r.text()[max(0, len(r.text())-200):])
			}
			txt := r.text()
			if !strings.HasSuffix(txt, sseDamaged) {
				t.Errorf("the stream ends %q", txt[max(0, len(txt)-120):])
			}
			// No event of a step past the failure.
			for _, line := range strings.Split(txt, "\n") {
				id, ok := strings.CutPrefix(line, "id: ")
				if !ok {
					continue
				}
				m, err := parseID(id)
				if err != nil {
					t.Fatalf("id %q: %v", id, err)
				}
				if m.to.seq > seq {
					t.Fatalf("an event made after the snapshot failed: %s", id)
				}
			}
			if n := testutil.ToFloat64(api.streams.m.cut.WithLabelValues("damaged")); n != 1 {
				t.Errorf("streams cut as damaged: %v, want 1", n)
			}
			if ds.BlockErr() == nil && ds.DeferredErr() == nil {
				t.Error("the snapshot is not failed")
			}
			// The reconnection, and a request, are refused as long as it
			// serves.
			for _, p := range []string{path, "/v2/quotes/" + f.ld.tickers[0]} {
				req := httptest.NewRequest("GET", p, nil)
				req.Header.Set("Authorization", "Bearer "+testKeyDelayed)
				req.Header.Set("Last-Event-ID", "0.0.0.0/0.0.0.0//s0")
				w := httptest.NewRecorder()
				api.ServeHTTP(w, req)
				checkError(t, w, http.StatusServiceUnavailable, c.want)
			}
		})
	}
}

// A stream whose hub is stopped makes its first view from the published
// snapshot: one a reload published between the request's checks and the
// subscription, with a bad block, is verified first and refuses the
// stream (503), as its requests are refused; before the fix the stream
// was served from the unverified snapshot.
func TestStreamSubscribeFailedSnapshot(t *testing.T) {
	ls := newLiveStreamSetup(t)
	ls.store.StartLive(ls.ld.day)
	api := ls.api(testKeys(t), nil)
	defer api.EndStreams()
	ds := liveDemoBase(t, false)
	bb := &badBlocks{}
	ds.SetBlocks(bb)
	defer func(h func()) { beforeStreamSubscribe = h }(beforeStreamSubscribe)
	beforeStreamSubscribe = func() { ls.store.Publish(ds) }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // a stream served (before the fix) ends with the test
	req := httptest.NewRequestWithContext(ctx, "GET", "/v2/stream/quotes?tickers="+ls.ld.tickers[0], nil)
	req.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	w := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { defer close(done); api.ServeHTTP(w, req) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a stream subscribed to a snapshot with a bad block is served")
	}
	checkError(t, w, http.StatusServiceUnavailable, "the snapshot is damaged")
	if !bb.found.Load() {
		t.Error("the snapshot's blocks were not verified")
	}
	if n := api.streams.total; n != 0 {
		t.Errorf("%d streams counted after the refusal", n)
	}
}

// A catch-up reads its view's Dataset only while it may feed a stream:
// one failed since its step (and the hub's step not yet made: a reload
// racing the failure) sends nothing and ends the stream.
func TestStreamDiffFailedSnapshot(t *testing.T) {
	f := newSSEFixture(t)
	ds := liveDemoBase(t, false)
	f.stores[0].Publish(ds)
	f.stepTwoHours(t)
	a := f.apis[0]
	sv := a.sseViewOf(PlanDelayed, *f.stores[0].View(), f.clock.Now(), sseCursor{session: engine.NoDate})
	m, err := parseID("0.0.0.0/0.0.0.0//s0")
	if err != nil {
		t.Fatal(err)
	}
	want := &sseWant{tickers: f.ld.tickers}
	rec := httptest.NewRecorder()
	out := &sseOut{a: a, w: rec, rc: http.NewResponseController(rec)}
	if err := a.streamDiff(out, &m, sv, want); err != nil || rec.Body.Len() == 0 {
		t.Fatalf("the catch-up of a good snapshot: %v, %d bytes", err, rec.Body.Len())
	}
	ds.Fail(errors.New("a read of the mapped file faulted"))
	rec = httptest.NewRecorder()
	out = &sseOut{a: a, w: rec, rc: http.NewResponseController(rec)}
	m, _ = parseID("0.0.0.0/0.0.0.0//s0")
	if err := a.streamDiff(out, &m, sv, want); err == nil || rec.Body.Len() != 0 {
		t.Errorf("the catch-up of a failed snapshot: %v, sent %.200q", err, rec.Body.String())
	}
}
