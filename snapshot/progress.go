package snapshot

import (
	"sync/atomic"
	"time"
)

// Progress reports how far long work has gone: a server's load, for its
// readiness probe, or a build, for the progress line of a terminal. A Load
// given one (LoadOptions.Progress) moves it through the phases "verify"
// (compressed bytes checked against their checksums), "decode" (raw bytes
// decoded) and "index" (the engine's indexes built; no count), then
// "done"; BuildFromBundle (WriteOptions.Progress) through "read bundle"
// (bytes), "encode" (sections), "derive ratios" (companies), "encode
// ratios", then its check load's phases. Its methods are safe for
// concurrent use and do nothing on a nil *Progress; the zero Progress is
// ready to use and reports the phase "waiting". It satisfies the Meter
// interfaces of the bundle and demo packages.
type Progress struct {
	phase      atomic.Pointer[phaseName]
	done       atomic.Int64 // units of the phase done
	total      atomic.Int64 // units of the phase (0: unknown)
	start      atomic.Int64 // Unix nanoseconds of the first Begin (0: not begun)
	phaseStart atomic.Int64 // Unix nanoseconds of the current phase's Begin

	onBegin func(phase, unit string, total int64) // tests: sees every Begin, before it
}

type phaseName struct{ name, unit string }

// Begin starts phase, whose work is total units (bytes, sections,
// companies...; 0: unknown), with none done. The first Begin starts the
// elapsed time.
func (p *Progress) Begin(phase, unit string, total int64) {
	if p == nil {
		return
	}
	if p.onBegin != nil {
		p.onBegin(phase, unit, total) // before the reset: the last phase is readable
	}
	now := time.Now().UnixNano()
	p.start.CompareAndSwap(0, now)
	p.phaseStart.Store(now)
	p.done.Store(0)
	p.total.Store(total)
	p.phase.Store(&phaseName{phase, unit})
}

// Add records n more units done in the current phase.
func (p *Progress) Add(n int64) {
	if p != nil {
		p.done.Add(n)
	}
}

// State is a reading of a Progress.
type State struct {
	Phase        string        // "waiting", "fetch", "verify", "decode", "index", "done"...
	Unit         string        // of Done and Total: "bytes", "sections", "companies"...
	Done, Total  int64         // units of the phase done and to do (Total 0: unknown)
	Elapsed      time.Duration // since the first phase began
	PhaseElapsed time.Duration // since the current phase began
}

// State returns the current phase, its units and the times elapsed.
func (p *Progress) State() State {
	if p == nil {
		return State{Phase: "waiting"}
	}
	s := State{Phase: "waiting", Done: p.done.Load(), Total: p.total.Load()}
	if ph := p.phase.Load(); ph != nil {
		s.Phase, s.Unit = ph.name, ph.unit
	}
	if st := p.start.Load(); st != 0 {
		s.Elapsed = time.Since(time.Unix(0, st))
		s.PhaseElapsed = time.Since(time.Unix(0, p.phaseStart.Load()))
	}
	return s
}
