package httpapi

import (
	"strconv"
	"time"

	"github.com/pregao/pregao/engine"
)

// LiveStatus is the state of the live session that /readyz reports in
// its "live" object.
type LiveStatus struct {
	Feed    string      // the feed: replay, b3 or push
	Session engine.Date // the session's day
	Seq     uint64      // the last batch applied (0: none yet)
	// Watermark is the end of the latest minute holding a bar (zero: no
	// bar yet).
	Watermark time.Time
	// Lag is how far the watermark is behind the feed's clock (0 once
	// the session is complete).
	Lag time.Duration
	// Complete says the feed has nothing more for the session.
	Complete bool
}

// SetLiveStatus makes /readyz carry a "live" object with what fn returns
// while it reports true (a live session runs): fn is called by each
// /readyz answer (concurrently) and must be cheap. nil: no live object.
func (a *API) SetLiveStatus(fn func() (LiveStatus, bool)) {
	if fn == nil {
		a.liveStatus.Store(nil)
		return
	}
	a.liveStatus.Store(&fn)
}

// appendLiveStatus appends `,"live":{...}` when a live session runs.
func (a *API) appendLiveStatus(dst []byte) []byte {
	fn := a.liveStatus.Load()
	if fn == nil {
		return dst
	}
	s, ok := (*fn)()
	if !ok {
		return dst
	}
	dst = append(dst, `,"live":{"feed":`...)
	dst = appendString(dst, s.Feed)
	dst = append(dst, `,"session":"`...)
	dst = s.Session.AppendFormat(dst)
	dst = append(dst, `","seq":`...)
	dst = strconv.AppendUint(dst, s.Seq, 10)
	dst = append(dst, `,"watermark":`...)
	dst = appendTime(dst, s.Watermark)
	dst = append(dst, `,"lag_seconds":`...)
	dst = strconv.AppendFloat(dst, max(s.Lag, 0).Seconds(), 'f', -1, 64)
	dst = append(dst, `,"complete":`...)
	dst = strconv.AppendBool(dst, s.Complete)
	return append(dst, '}')
}
