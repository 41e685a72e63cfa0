package session

import (
	"sync/atomic"
	"time"

	"github.com/pregao/pregao/snapshot/ingest/live"
)

// Clock is "now" for the API and the session's lag: a feed's own clock
// (a replay's virtual time) while the last time set was virtual, else
// the wall clock. Its methods are safe for concurrent use.
type Clock struct {
	virtual atomic.Bool
	ns      atomic.Int64 // unix nanoseconds
}

// Now returns the time last set when it was virtual, else time.Now().
func (c *Clock) Now() time.Time {
	if c.virtual.Load() {
		return time.Unix(0, c.ns.Load()).UTC()
	}
	return time.Now()
}

// set takes t as now when virtual; a clock set with virtual false is the
// wall clock.
func (c *Clock) set(t time.Time, virtual bool) {
	if virtual {
		c.ns.Store(t.UnixNano())
	}
	c.virtual.Store(virtual)
}

// sessionOpen is 10:00 at B3's local time: the regular session's open.
const sessionOpen = 13 * time.Hour

// lag is how far st's watermark is behind now: 0 once complete; before
// the open, nothing is late; for a session of an earlier day still
// incomplete (a day's file not out yet), from that day's end.
func lag(st *State, now time.Time) time.Duration {
	if st.Complete || !st.Running {
		return 0
	}
	ref := st.Session.Time().Add(sessionOpen)
	if live.LocalDate(now) > st.Session {
		ref = live.SessionEnd(st.Session)
	}
	if w := time.Unix(st.Watermark, 0); st.Watermark > 0 && w.After(ref) {
		ref = w
	}
	return max(now.Sub(ref), 0)
}
