package bench

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	rtrace "runtime/trace"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/exp/trace"
)

// A lightCycle is one light request as its connection's goroutine lived
// it in an execution trace: from the network poller's wake (the request
// arrived) to the goroutine's next block (waiting for the next request),
// split by the goroutine's state. Runnable is the Go scheduler's share
// (waiting for a processor); Running and Syscall include any time the
// goroutine's OS thread was off its CPU, which the trace cannot see.
type lightCycle struct {
	Total, Runnable, Running, Syscall, Waiting time.Duration
	// Assist is the part of Running spent helping the collector mark
	// (GC mark assist); StopTheWorld is whether a stop of the world fell
	// in the cycle.
	Assist       time.Duration
	StopTheWorld bool
	// Long lists the goroutine's spans of running or syscall over 1 ms,
	// each with where it began.
	Long []string
}

// traceBreakdown reads an execution trace written by BenchmarkFairShare
// (PREGAO_FAIR_TRACE) and returns its light requests' cycles, slowest
// first.
func traceBreakdown(r io.Reader) ([]lightCycle, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, err
	}
	type span struct {
		from, to trace.Time
		state    trace.GoState
		began    string
	}
	type task struct {
		g          trace.GoID
		start, end trace.Time
	}
	var (
		light = map[trace.TaskID]*task{}
		spans = map[trace.GoID][]span{}
		cur   = map[trace.GoID]span{}
		// GC mark assists by goroutine, stops of the world
		assist = map[trace.GoID][]span{}
		began  = map[trace.GoID]trace.Time{}
		stws   []span
		stw    trace.Time
	)
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch ev.Kind() {
		case trace.EventTaskBegin:
			if t := ev.Task(); t.Type == "light" {
				light[t.ID] = &task{g: ev.Goroutine(), start: ev.Time()}
			}
		case trace.EventTaskEnd:
			if t := light[ev.Task().ID]; t != nil {
				t.end = ev.Time()
			}
		case trace.EventRangeBegin:
			switch r := ev.Range(); {
			case r.Name == "GC mark assist":
				began[ev.Goroutine()] = ev.Time()
			case strings.HasPrefix(r.Name, "stop-the-world"):
				stw = ev.Time()
			}
		case trace.EventRangeEnd:
			switch r := ev.Range(); {
			case r.Name == "GC mark assist":
				g := ev.Goroutine()
				assist[g] = append(assist[g], span{from: began[g], to: ev.Time()})
			case strings.HasPrefix(r.Name, "stop-the-world"):
				stws = append(stws, span{from: stw, to: ev.Time()})
			}
		case trace.EventStateTransition:
			st := ev.StateTransition()
			if st.Resource.Kind != trace.ResourceGoroutine {
				continue
			}
			g := st.Resource.Goroutine()
			_, to := st.Goroutine()
			if c, ok := cur[g]; ok {
				c.to = ev.Time()
				spans[g] = append(spans[g], c)
			}
			s := span{from: ev.Time(), state: to}
			if to == trace.GoSyscall {
				s.began = stackFuncs(st.Stack, 4)
			}
			cur[g] = s
		}
	}
	var cycles []lightCycle
	for _, t := range light {
		sp := spans[t.g]
		if t.end == 0 || len(sp) == 0 {
			continue
		}
		// The cycle starts where the goroutine last went from waiting to
		// runnable before the task, and ends at its first block after it.
		i := sort.Search(len(sp), func(i int) bool { return sp[i].from > t.start }) - 1
		for i >= 0 && !(sp[i].state == trace.GoRunnable && (i == 0 || sp[i-1].state == trace.GoWaiting)) {
			i--
		}
		if i < 0 {
			continue
		}
		var c lightCycle
		end := trace.Time(0)
		for _, s := range sp[i:] {
			if s.state == trace.GoWaiting && s.from >= t.end {
				end = s.from
				break
			}
			d := s.to.Sub(s.from)
			switch s.state {
			case trace.GoRunnable:
				c.Runnable += d
			case trace.GoRunning:
				c.Running += d
			case trace.GoSyscall:
				c.Syscall += d
			default:
				c.Waiting += d
			}
			if (s.state == trace.GoRunning || s.state == trace.GoSyscall) && d > time.Millisecond {
				c.Long = append(c.Long, fmt.Sprintf("%v %v %s", strings.ToLower(s.state.String()), d.Round(time.Microsecond), s.began))
			}
		}
		if end == 0 {
			continue
		}
		c.Total = end.Sub(sp[i].from)
		for _, a := range assist[t.g] {
			if a.from >= sp[i].from && a.to <= end {
				c.Assist += a.to.Sub(a.from)
			}
		}
		for _, x := range stws {
			c.StopTheWorld = c.StopTheWorld || x.from < end && x.to > sp[i].from
		}
		cycles = append(cycles, c)
	}
	slices.SortFunc(cycles, func(a, b lightCycle) int { return int(b.Total - a.Total) })
	return cycles, nil
}

func stackFuncs(s trace.Stack, n int) string {
	var l []string
	for f := range s.Frames() {
		l = append(l, f.Func)
		if len(l) == n {
			break
		}
	}
	return strings.Join(l, " < ")
}

// summarize tells where the slowest percent of cycles spent their time.
func summarize(cycles []lightCycle) string {
	if len(cycles) == 0 {
		return "no light request in the trace"
	}
	var b strings.Builder
	n := len(cycles)
	var all lightCycle
	for _, c := range cycles {
		all.Total += c.Total
		all.Runnable += c.Runnable
		all.Running += c.Running
		all.Syscall += c.Syscall
		all.Waiting += c.Waiting
	}
	fmt.Fprintf(&b, "%d light requests: p50 %v, p99 %v, max %v; in all, runnable %v, running %v, syscall %v, waiting %v of %v\n",
		n, cycles[n/2].Total, cycles[n/100].Total, cycles[0].Total, all.Runnable, all.Running, all.Syscall, all.Waiting, all.Total)
	for _, c := range cycles[:min(n, max(5, n/50))] {
		gc := ""
		if c.Assist > 0 {
			gc += fmt.Sprintf(", of which GC assist %v", c.Assist)
		}
		if c.StopTheWorld {
			gc += ", a stop of the world"
		}
		fmt.Fprintf(&b, "  %v: runnable %v, running %v%s, syscall %v, waiting %v; %s\n", c.Total, c.Runnable, c.Running, gc, c.Syscall, c.Waiting, strings.Join(c.Long, "; "))
	}
	return b.String()
}

// TestFairShareTrace reads the traces named in PREGAO_FAIR_TRACE_READ
// (comma-separated) and logs where their light requests spent their
// time.
func TestFairShareTrace(t *testing.T) {
	files := os.Getenv("PREGAO_FAIR_TRACE_READ")
	if files == "" {
		t.Skip("set PREGAO_FAIR_TRACE_READ to traces of BenchmarkFairShare")
	}
	for _, name := range strings.Split(files, ",") {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		cycles, err := traceBreakdown(f)
		f.Close()
		if err != nil {
			t.Fatal(name, err)
		}
		t.Logf("%s: %s", name, summarize(cycles))
	}
}

// TestTraceBreakdown traces light requests to a server and finds each
// of them, its time split by the goroutine's states.
func TestTraceBreakdown(t *testing.T) {
	tw := &timedHandler{h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond) // waiting, inside the task
		fmt.Fprint(w, "ok")
	})}
	tw.tasks.Store(true)
	srv := httptest.NewServer(tw)
	defer srv.Close()
	var buf bytes.Buffer
	if err := rtrace.Start(&buf); err != nil {
		t.Skip("a trace is running:", err)
	}
	const n = 5
	for range n {
		res, err := http.Get(srv.URL + "/x")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	rtrace.Stop()
	cycles, err := traceBreakdown(&buf)
	if err != nil {
		t.Fatal(err)
	}
	// The last request's cycle ends when its goroutine blocks for the
	// next request, which may come after the trace stopped.
	if light, _ := tw.take(); len(cycles) < n-1 || len(cycles) > n || len(light) != n {
		t.Fatalf("%d cycles, want %d (or %d)", len(cycles), n, n-1)
	}
	for _, c := range cycles {
		if c.Waiting < time.Millisecond || c.Total < c.Runnable+c.Running+c.Syscall+c.Waiting-time.Microsecond {
			t.Errorf("cycle %+v: the handler's 1 ms sleep or its parts are missing", c)
		}
	}
	if s := summarize(cycles); !strings.HasPrefix(s, fmt.Sprintf("%d light requests", len(cycles))) {
		t.Errorf("summary %q", s)
	}
}
