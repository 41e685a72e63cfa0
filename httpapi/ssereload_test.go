package httpapi

import (
	"cmp"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/internal/mapfile"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// Streams of a replica serving a format 6 snapshot (its bars read in
// place from the mapped file) cross a reload while the replica lags
// behind their clients: the replaced Dataset is collected and its
// mapping released while the streams run (they hold none between their
// steps), and the steps that catch the replica up (the lagging path,
// which reads bars through the assets) are made from the assets of the
// step's Dataset: a client that moved from the replica ahead to this one
// ends with the bars of the one that stayed, each minute sent as a bar
// once, for tickers and an index; once they are closed, the hub keeps no
// view. Run with -race. Before the fix the
// streams held the first Dataset for their whole life through the
// request, and read the new views through its assets (their live bars
// are bound to the new Dataset's: a panic, the stream cut).
func TestStreamAcrossReload(t *testing.T) {
	f := newSSEFixture(t)
	// The live demo's base (the day before the session) as a format 6
	// file: generated again (a Dataset's Universe holds no bars).
	u, sess := demo.GenerateSession(5, liveDemoSize, nil)
	base := demo.HoldBack(u, sess)
	d, err := ratios.Derive(base)
	if err != nil {
		t.Fatal(err)
	}
	base.Derived = d
	path := filepath.Join(t.TempDir(), "base6.snap")
	if err := snapshot.WriteFile(path, base, snapshot.WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	// Replica 1 serves the file, mapped; wp is its first Dataset.
	load := func() weak.Pointer[engine.Dataset] {
		ds, _, err := snapshot.Load(path, snapshot.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f.stores[1].Publish(ds)
		return weak.Make(ds)
	}
	wp := load()

	tickers := f.ld.tickers
	if len(tickers) > 40 {
		tickers = tickers[:40]
	}
	paths := []string{"/v2/stream/quotes?tickers=" + strings.Join(tickers, ","), "/v2/stream/quotes?index=IBOV"}
	var as [2]*sseClient
	for i, p := range paths {
		as[i] = openStream(t, f.srvs[0].URL+p, testKeyDelayed, "")
		as[i].waitEvents(t, 1)
	}
	// The session's first hour and a half on both replicas.
	at := f.open.Add(time.Minute)
	for ; at.Before(f.open.Add(90 * time.Minute)); at = at.Add(3 * time.Minute) {
		f.step(t, at, false)
	}
	// Then two phases of batches, made ahead: replica 0 takes them one
	// by one, replica 1, reloaded meanwhile, all at once.
	type batch struct {
		at   time.Time
		seq  uint64
		bars []engine.LiveBar
	}
	var phases [2][]batch
	seq := f.seq
	for p := range phases {
		for range 8 {
			j := f.next
			for j < len(f.ld.trades) && f.ld.trades[j].Time < at.UnixMilli() {
				j++
			}
			seq++
			phases[p] = append(phases[p], batch{at: at, seq: seq, bars: liveBars(f.agg.Apply(f.ld.trades[f.next:j]))})
			f.next = j
			at = at.Add(3 * time.Minute)
		}
	}
	apply := func(store int, b batch) {
		t.Helper()
		if ok, err := f.stores[store].ApplyLive(&engine.LiveBatch{Seq: b.seq, Session: f.ld.day, Bars: b.bars, At: b.at.UnixMilli()}); !ok || err != nil {
			t.Fatalf("replica %d, batch %d: %v %v", store, b.seq, ok, err)
		}
		f.seq = max(f.seq, b.seq)
		f.clock.set(b.at)
		f.waitHubs(t, b.at)
	}
	for _, b := range phases[0] {
		apply(0, b)
	}
	// The clients of replica 0 move to replica 1, which has not the
	// second phase's batches: ahead of it.
	var ks [2]int
	var bs [2]*sseClient
	for i, p := range paths {
		got := settled(as[i])
		ks[i] = len(got)
		bs[i] = openStream(t, f.srvs[1].URL+p, testKeyDelayed, got[len(got)-1].id)
	}
	hub := f.apis[1].streams.hubs[PlanDelayed]
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		hub.mu.Lock()
		n := len(hub.subs)
		hub.mu.Unlock()
		if n == len(paths) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d streams on replica 1, want %d", n, len(paths))
		}
	}

	// The reload: the first Dataset and its mapping go while the
	// streams run.
	files, _ := mapfile.Held()
	load()
	f.waitHubs(t, f.clock.Now())
	held := true
	for range 100 {
		runtime.GC()
		if now, _ := mapfile.Held(); wp.Value() == nil && now <= files {
			held = false
			break
		}
		time.Sleep(time.Millisecond)
	}
	if held {
		t.Error("the Dataset replaced by the reload (or its mapping) is still held while the streams run")
	}

	// Replica 1 takes both phases' bars as one batch (the last seq): its
	// streams catch up from behind their clients; then replica 0 the
	// second phase's batches one by one, both replicas' clocks moving.
	merged := map[[2]int64]engine.LiveBar{}
	names := map[string]int64{}
	for _, p := range phases {
		for _, b := range p {
			for _, lb := range b.bars {
				if _, ok := names[lb.Ticker]; !ok {
					names[lb.Ticker] = int64(len(names))
				}
				merged[[2]int64{names[lb.Ticker], lb.Time}] = lb
			}
		}
	}
	// At the second phase's first clock: the step that catches the
	// streams up sends them the minutes that became visible.
	jump := batch{at: phases[1][0].at, seq: phases[1][len(phases[1])-1].seq}
	for _, lb := range merged {
		jump.bars = append(jump.bars, lb)
	}
	slices.SortFunc(jump.bars, func(x, y engine.LiveBar) int {
		return cmp.Or(cmp.Compare(x.Ticker, y.Ticker), cmp.Compare(x.Time, y.Time))
	})
	apply(1, jump)
	for _, b := range phases[1] {
		apply(0, b)
	}

	for i := range paths {
		gotA, after := settled(as[i]), settled(bs[i])
		gotB := append(slices.Clone(gotA[:ks[i]]), after...)
		as[i].close()
		bs[i].close()
		stateA, _ := foldEvents(t, gotA)
		stateB, _ := foldEvents(t, gotB)
		bars := 0
		for tk, ms := range stateA {
			for date, m := range ms {
				bars++
				switch b := stateB[tk][date]; {
				case b == nil:
					t.Errorf("%s: %s %s never sent after the move", paths[i], tk, date)
				case b.bar != m.bar || b.bars != m.bars:
					t.Errorf("%s: %s %s: %s (%d bar events) after the move, want %s (%d)", paths[i], tk, date, b.bar, b.bars, m.bar, m.bars)
				}
			}
		}
		for tk, ms := range stateB {
			for date := range ms {
				if stateA[tk][date] == nil {
					t.Errorf("%s: %s %s sent after the move only", paths[i], tk, date)
				}
			}
		}
		if bars < 100 {
			t.Errorf("%s: %d bars: the fixture is too small", paths[i], bars)
		}
		t.Logf("%s: %d bars; %d events on replica 0, then %d on replica 1", paths[i], bars, ks[i], len(gotB)-ks[i])
	}
	// With its streams gone, a hub keeps its cursor, not its last view
	// (which would hold a Dataset past the next publish).
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		hub.mu.Lock()
		stopped, last := hub.stop == nil, hub.last
		hub.mu.Unlock()
		if stopped {
			if last.ev.Base != nil || last.ev.Live != nil || !last.cur.session.Valid() {
				t.Errorf("a stopped hub keeps %+v, want only its cursor", last.ev)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("replica 1's hub still runs with its streams closed")
		}
	}
	if n := testutil.ToFloat64(f.apis[1].m.panics); n != 0 {
		t.Errorf("%v panics on replica 1", n)
	}
}

// waitHubs waits for every running hub of the replicas to make its step
// at at (the clock moved there) with the live session published.
func (f *sseFixture) waitHubs(t *testing.T, at time.Time) {
	t.Helper()
	for _, a := range f.apis {
		for _, hub := range a.streams.hubs {
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Microsecond) {
				v := a.store.View()
				hub.mu.Lock()
				idle, caught := hub.stop == nil, hub.last != nil && !hub.ran.Before(at) && hub.last.ev.Live == v.Live && hub.last.ev.Base == v.Base
				hub.mu.Unlock()
				if idle || caught {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the %s hub has not made the step at %s", hub.plan, at.Format(time.TimeOnly))
				}
			}
		}
	}
}

// settled returns c's events once no more come for settleQuiet.
func settled(c *sseClient) []sseMsg {
	n := -1
	for {
		got := c.got()
		if len(got) == n {
			return got
		}
		n = len(got)
		time.Sleep(settleQuiet)
	}
}

// settleQuiet is how long settled waits for one more event: the hubs'
// steps are made (waitHubs) when it starts, but their writes may still
// be on their way to the client. 20 ms read too early with the machine
// loaded (load average 20 on 2 cores: minutes said never sent).
const settleQuiet = 200 * time.Millisecond
