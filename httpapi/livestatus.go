package httpapi

import (
	"net/http"
	"strconv"

	"github.com/pregao/pregao/engine"
)

// SetLiveStatus makes /readyz carry a "live" object with what fn returns
// while it reports true (a live session runs): fn is called by each
// /readyz answer (concurrently) and must be cheap. nil: no live object.
func (a *API) SetLiveStatus(fn func() (engine.LiveStatus, bool)) {
	if fn == nil {
		a.liveStatus.Store(nil)
		return
	}
	a.liveStatus.Store(&fn)
}

// SetLiveRestoring makes the priced routes (quotes, rankings, the
// screener, the live stream…) answer 503 with Retry-After while fn
// reports true: the live session is being read back from its log, and
// what it holds so far is part of it (a client of a lone server would
// take a session half restored for the present). fn is called by each
// priced request and must be cheap (an atomic load). nil: never.
func (a *API) SetLiveRestoring(fn func() bool) {
	if fn == nil {
		a.liveRestoring.Store(nil)
		return
	}
	a.liveRestoring.Store(&fn)
}

// retryRestoring is the Retry-After, in seconds, of the 503 of a priced
// request while the live session is restored (a few seconds at most).
var retryRestoring = []string{"2"}

// restoring answers a priced request 503 while the live session is
// restored (SetLiveRestoring); 0 otherwise.
func (a *API) restoring(c *call) int {
	fn := a.liveRestoring.Load()
	if fn == nil || !(*fn)() {
		return 0
	}
	c.out.w.Header()["Retry-After"] = retryRestoring
	return c.out.fail(http.StatusServiceUnavailable, "restoring the live session from its log: prices are answered once it is whole, in a few seconds")
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
	if s.Session.Valid() {
		dst = append(dst, `,"session":"`...)
		dst = s.Session.AppendFormat(dst)
		dst = append(dst, `","seq":`...)
	} else {
		dst = append(dst, `,"session":null,"seq":`...)
	}
	dst = strconv.AppendUint(dst, s.Seq, 10)
	dst = append(dst, `,"watermark":`...)
	dst = appendTime(dst, s.Watermark)
	dst = append(dst, `,"lag_seconds":`...)
	dst = strconv.AppendFloat(dst, max(s.Lag, 0).Seconds(), 'f', -1, 64)
	dst = append(dst, `,"complete":`...)
	dst = strconv.AppendBool(dst, s.Complete)
	dst = append(dst, `,"gaps":`...)
	dst = strconv.AppendInt(dst, s.Gaps, 10)
	dst = append(dst, `,"session_gaps":`...)
	dst = strconv.AppendInt(dst, s.SessionGaps, 10)
	dst = append(dst, `,"last_gap":`...)
	dst = appendGap(dst, s.LastGap)
	dst = append(dst, `,"degraded":`...)
	if s.Degraded == "" {
		dst = append(dst, "null"...)
	} else {
		dst = appendString(dst, s.Degraded)
	}
	if st := s.Stream; st != nil {
		dst = append(dst, `,"stream":{"sequence":`...)
		dst = strconv.AppendUint(dst, st.Sequence, 10)
		dst = append(dst, `,"pending":`...)
		dst = strconv.AppendUint(dst, st.Pending, 10)
		dst = append(dst, `,"lag_seconds":`...)
		dst = strconv.AppendFloat(dst, max(st.Lag, 0).Seconds(), 'f', -1, 64)
		dst = append(dst, `,"redeliveries":`...)
		dst = strconv.AppendInt(dst, st.Redeliveries, 10)
		dst = append(dst, `,"connected":`...)
		dst = strconv.AppendBool(dst, st.Connected)
		dst = append(dst, `,"stale_seconds":`...)
		dst = strconv.AppendFloat(dst, max(st.Stale, 0).Seconds(), 'f', -1, 64)
		dst = append(dst, `,"caught_up":`...)
		dst = strconv.AppendBool(dst, st.CaughtUp)
		dst = append(dst, `,"start":`...)
		dst = strconv.AppendUint(dst, st.Start, 10)
		dst = append(dst, `,"snapshot_position":`...)
		if p := st.Position; p.Known() {
			dst = append(dst, `{"next":`...)
			dst = strconv.AppendUint(dst, p.Next, 10)
			dst = append(dst, `,"name":`...)
			dst = appendString(dst, p.Name)
			dst = append(dst, `,"session":`...)
			dst = appendDate(dst, p.Session)
			dst = append(dst, `,"batch":`...)
			dst = strconv.AppendUint(dst, p.Batch, 10)
			dst = append(dst, '}')
		} else {
			dst = append(dst, "null"...)
		}
		dst = append(dst, `,"gaps":`...)
		dst = strconv.AppendInt(dst, st.Gaps, 10)
		dst = append(dst, `,"session_gaps":`...)
		dst = strconv.AppendInt(dst, st.SessionGaps, 10)
		dst = append(dst, `,"last_gap":`...)
		dst = appendGap(dst, st.LastGap)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// appendGap appends gap g as a JSON object ({kind, session, first,
// last, stream_sequence}), or null.
func appendGap(dst []byte, g *engine.LiveGap) []byte {
	if g == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, `{"kind":`...)
	dst = appendString(dst, g.Kind)
	if g.Session.Valid() {
		dst = append(dst, `,"session":"`...)
		dst = g.Session.AppendFormat(dst)
		dst = append(dst, '"')
	} else {
		dst = append(dst, `,"session":null`...)
	}
	dst = append(dst, `,"first":`...)
	dst = strconv.AppendUint(dst, g.First, 10)
	dst = append(dst, `,"last":`...)
	dst = strconv.AppendUint(dst, g.Last, 10)
	dst = append(dst, `,"stream_sequence":`...)
	dst = strconv.AppendUint(dst, g.StreamSeq, 10)
	return append(dst, '}')
}

// liveNotReady returns why the live session keeps the server from being
// ready ("": it does not): it is being restored from its log, or, for a
// replica, the live stream is not caught up yet.
func (a *API) liveNotReady() string {
	fn := a.liveStatus.Load()
	if fn == nil {
		return ""
	}
	s, ok := (*fn)()
	if ok && s.Restoring {
		if s.Session.Valid() {
			return "restoring the live session " + s.Session.String() + " from its log"
		}
		return "restoring the live session from its log"
	}
	if !ok || s.Stream == nil || s.Stream.CaughtUp {
		return ""
	}
	if !s.Stream.Connected {
		return "catching up the live stream: not connected to it yet"
	}
	return "catching up the live stream: " + strconv.FormatUint(s.Stream.Pending, 10) + " messages behind, at sequence " + strconv.FormatUint(s.Stream.Sequence, 10)
}
