package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/ingest/assemble"
)

// meterEvery is how often a progress line is redrawn.
const meterEvery = 200 * time.Millisecond

// startMeter returns a Progress that long work (generate, build, the
// write of import's bundle) moves through its phases, drawn on the
// terminal w as one line rewritten in place every meterEvery: the
// command, the phase, a bar and a percentage where the total is known,
// units done and to do, the rate, the time elapsed. stop erases the line.
// When w is not a terminal (piped, redirected) nothing is drawn and the
// Progress is nil (its methods do nothing).
func startMeter(w io.Writer, cmd string) (p *snapshot.Progress, stop func()) {
	if !isTerminal(w) {
		return nil, func() {}
	}
	return drawMeter(w, cmd, meterEvery)
}

// drawMeter is startMeter for any writer.
func drawMeter(w io.Writer, cmd string, every time.Duration) (*snapshot.Progress, func()) {
	p := &snapshot.Progress{}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-quit:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-t.C:
				if st := p.State(); st.Phase != "waiting" {
					fmt.Fprint(w, "\r\033[K"+meterLine(cmd, st))
				}
			}
		}
	}()
	var once sync.Once
	return p, func() { once.Do(func() { close(quit); <-done }) }
}

// meterBar is the width of the bar, in characters.
const meterBar = 24

// meterLine renders one reading of a Progress:
//
//	build: decode [##########--------------] 41%  512.0 of 1250.3 MB  210.4 MB/s  4.1 s
//	build: derive ratios 1,234 companies  310/s  12.3 s
//	build: index  15.0 s
func meterLine(cmd string, st snapshot.State) string {
	var b strings.Builder
	b.WriteString(cmd)
	b.WriteString(": ")
	b.WriteString(st.Phase)
	if st.Total > 0 {
		frac := min(1, float64(st.Done)/float64(st.Total))
		n := int(frac * meterBar)
		b.WriteString(" [")
		b.WriteString(strings.Repeat("#", n))
		b.WriteString(strings.Repeat("-", meterBar-n))
		fmt.Fprintf(&b, "] %d%%", int(frac*100))
	}
	if st.Unit != "" && (st.Done > 0 || st.Total > 0) {
		b.WriteString("  ")
		b.WriteString(meterAmount(st.Done, st.Total, st.Unit))
		if secs := st.PhaseElapsed.Seconds(); secs >= 0.5 && st.Done > 0 {
			b.WriteString("  ")
			b.WriteString(meterRate(float64(st.Done)/secs, st.Unit))
		}
	}
	fmt.Fprintf(&b, "  %.1f s", st.Elapsed.Seconds())
	return b.String()
}

// meterAmount is "512.0 of 1250.3 MB" for bytes, "6 of 14 sections" or
// "1,234 companies" for other units.
func meterAmount(done, total int64, unit string) string {
	if unit == "bytes" {
		if total > 0 {
			return fmt.Sprintf("%.1f of %.1f MB", float64(done)/1e6, float64(total)/1e6)
		}
		return fmt.Sprintf("%.1f MB", float64(done)/1e6)
	}
	if total > 0 {
		return groupDigits(done) + " of " + groupDigits(total) + " " + unit
	}
	return groupDigits(done) + " " + unit
}

// meterRate is "210.4 MB/s" for bytes, "310/s" otherwise.
func meterRate(perSec float64, unit string) string {
	if unit == "bytes" {
		return fmt.Sprintf("%.1f MB/s", perSec/1e6)
	}
	return groupDigits(int64(perSec+0.5)) + "/s"
}

// groupDigits writes n with thousands separated by commas.
func groupDigits(n int64) string { return assemble.Commas(n) }
