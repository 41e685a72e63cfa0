package snapshot

import (
	"sync/atomic"
	"time"
)

// Progress reports how far a Load has gone, for a server that answers its
// readiness probe while it loads. A Load given one (LoadOptions.Progress)
// moves it through the phases "verify" (compressed bytes checked against
// their checksums), "decode" (raw bytes decoded) and "index" (the engine's
// indexes built; no byte count), then "done". Its methods are safe for
// concurrent use and do nothing on a nil *Progress; the zero Progress is
// ready to use and reports the phase "waiting".
type Progress struct {
	phase atomic.Pointer[string]
	done  atomic.Int64 // bytes of the phase done
	total atomic.Int64 // bytes of the phase (0: unknown)
	start atomic.Int64 // Unix nanoseconds of the first Begin (0: not begun)
}

// Begin starts phase, whose work is total bytes (0: unknown), with no
// bytes done. The first Begin starts the elapsed time.
func (p *Progress) Begin(phase string, total int64) {
	if p == nil {
		return
	}
	p.start.CompareAndSwap(0, time.Now().UnixNano())
	p.done.Store(0)
	p.total.Store(total)
	p.phase.Store(&phase)
}

// Add records n more bytes done in the current phase.
func (p *Progress) Add(n int64) {
	if p != nil {
		p.done.Add(n)
	}
}

// State is a reading of a Progress.
type State struct {
	Phase       string        // "waiting", "fetch", "verify", "decode", "index" or "done"
	Done, Total int64         // bytes of the phase done and to do (Total 0: unknown)
	Elapsed     time.Duration // since the first phase began
}

// State returns the current phase, its bytes and the time elapsed.
func (p *Progress) State() State {
	if p == nil {
		return State{Phase: "waiting"}
	}
	s := State{Phase: "waiting", Done: p.done.Load(), Total: p.total.Load()}
	if ph := p.phase.Load(); ph != nil {
		s.Phase = *ph
	}
	if st := p.start.Load(); st != 0 {
		s.Elapsed = time.Since(time.Unix(0, st))
	}
	return s
}
