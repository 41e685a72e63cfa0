package session

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// Reasons the session counts bad input and failures under
// (pregao_live_feed_errors_total), beside the feeds' (live.Reasons).
const (
	reasonRefused = "refused" // a batch the engine refused
	reasonLog     = "log"     // the session log could not be written or read
	reasonLogCut  = "log_cut" // a torn tail cut from a session log
	// reasonLogDamaged: a damaged record of a session log, set aside.
	reasonLogDamaged = "log_damaged"
	reasonStalled    = "feed"     // a feed's transient failure
	reasonSeq        = "sequence" // a push with another sequence number than the next
	reasonMessage    = "message"  // a stream message that does not decode
	reasonGap        = "gap"      // stream sequences missing, or a batch sequence skipped
	reasonSession    = "session"  // a stream batch of an earlier session than the live one
	reasonBus        = "bus"      // the stream could not be reached
	// reasonSnapshot: the snapshot's position names a batch the stream
	// does not hold there (another stream, one made again).
	reasonSnapshot = "snapshot"
)

// metrics are the pregao_live_* metrics, registered whether or not a
// feed or a stream runs (their series at 0).
type metrics struct {
	batches                           *prometheus.CounterVec
	bars, corrections, aside, covered prometheus.Counter
	publish, logAppend                prometheus.Histogram
	feedErrors                        *prometheus.CounterVec
	handovers                         prometheus.Counter
	// The live stream's: batches published by the feed side, batches
	// delivered again to a replica, and the delay from a batch's publish
	// to its apply on a replica.
	published, redeliveries prometheus.Counter
	applyDelay              prometheus.Histogram
}

// newMetrics registers the live metrics on reg. state returns the state
// the gauges show (nil: none) and lag the watermark's lag.
func newMetrics(reg prometheus.Registerer, s *Session) *metrics {
	m := &metrics{
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pregao_live_batches_total",
			Help: "Batches of the live session by result: applied, redelivered (a sequence number already applied: nothing changed) or refused (a bar a minute cannot hold, another session: nothing applied)."}, []string{"result"}),
		bars: prometheus.NewCounter(prometheus.CounterOpts{Name: "pregao_live_bars_total",
			Help: "1-minute bars applied to the live session, corrections included."}),
		corrections: prometheus.NewCounter(prometheus.CounterOpts{Name: "pregao_live_corrections_total",
			Help: "Live bars that changed or removed a minute already held (a cancelled or late trade)."}),
		aside: prometheus.NewCounter(prometheus.CounterOpts{Name: "pregao_live_bars_aside_total",
			Help: "Live bars of tickers the snapshot does not know (an IPO's first day), held aside and served from the next snapshot."}),
		covered: prometheus.NewCounter(prometheus.CounterOpts{Name: "pregao_live_bars_covered_total",
			Help: "Live bars of tickers whose history in the snapshot already covers the session (the snapshot serves them)."}),
		publish: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pregao_live_publish_duration_seconds",
			Help:    "Time to apply a live batch and publish the new view (Store.ApplyLive).",
			Buckets: []float64{10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 100e-3, 1}}),
		logAppend: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pregao_live_log_append_duration_seconds",
			Help:    "Time to append a batch to the session log and make it durable (write and fsync).",
			Buckets: []float64{50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 1}}),
		feedErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pregao_live_feed_errors_total",
			Help: "Bad input and failures of the live feed by reason: malformed rows, trades of another day, bad prices, quantities or codes, rows that are not tickers, duplicates, cancellations of unknown trades, out-of-order trades, fetch failures, refused batches, session log failures, torn log tails cut, damaged log records set aside, pushes out of sequence."}, []string{"reason"}),
		handovers: prometheus.NewCounter(prometheus.CounterOpts{Name: "pregao_live_handovers_total",
			Help: "Live sessions handed over to the snapshot of their day."}),
		published: prometheus.NewCounter(prometheus.CounterOpts{Name: "pregao_live_stream_published_total",
			Help: "Batches the feed published to the live stream (--live) and the stream acknowledged."}),
		redeliveries: prometheus.NewCounter(prometheus.CounterOpts{Name: "pregao_live_stream_redeliveries_total",
			Help: "Batches of the live stream delivered again to this replica (a sequence number already applied: nothing changed)."}),
		applyDelay: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pregao_live_stream_apply_delay_seconds",
			Help:    "Time from a batch's store in the live stream to its apply on this replica (visible to requests).",
			Buckets: []float64{250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 1, 5, 30}}),
	}
	gauge := func(name, help string, f func(*State) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			if st := s.gaugeState(); st != nil {
				return f(st)
			}
			return 0
		})
	}
	reg.MustRegister(m.batches, m.bars, m.corrections, m.aside, m.covered, m.publish, m.logAppend, m.feedErrors, m.handovers,
		m.published, m.redeliveries, m.applyDelay,
		gauge("pregao_live_running", "1 while a live session runs (a feed is configured and its session started).", func(s *State) float64 { return b2f(s.Running) }),
		gauge("pregao_live_complete", "1 once the feed has nothing more for the session.", func(s *State) float64 { return b2f(s.Complete) }),
		gauge("pregao_live_seq", "Sequence number of the last batch applied to the live session.", func(s *State) float64 { return float64(s.Seq) }),
		gauge("pregao_live_watermark_seconds", "End of the latest minute holding a live bar, unix seconds (0: none).", func(s *State) float64 { return float64(s.Watermark) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "pregao_live_session_gaps",
			Help: "Gaps (batches gone from the live stream or skipped, damaged records of the session log) in the live session under way, while no snapshot has taken it over: its minutes only the missing batches carried are missing."}, func() float64 { return float64(s.sessionGaps()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "pregao_live_lag_seconds",
			Help: "How far the live session's watermark is behind the feed's clock (0 when complete or before the open)."}, func() float64 { return s.lag().Seconds() }),
	)
	for _, res := range []string{"applied", "redelivered", "refused", "covered"} {
		m.batches.WithLabelValues(res)
	}
	for _, reason := range append(slices.Clone(live.Reasons), reasonRefused, reasonLog, reasonLogCut, reasonLogDamaged, reasonStalled, reasonSeq,
		reasonMessage, reasonGap, reasonSession, reasonBus, reasonSnapshot) {
		m.feedErrors.WithLabelValues(reason)
	}
	return m
}

// registerStreamGauges registers the live stream's gauges on reg (0
// without a stream).
func registerStreamGauges(reg prometheus.Registerer, s *Session) {
	gauge := func(name, help string, f func(*engine.StreamStatus) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			if s.stream != nil {
				return f(s.stream.status())
			}
			return 0
		})
	}
	reg.MustRegister(
		gauge("pregao_live_stream_sequence", "Last stream sequence of the live stream applied (or skipped) by this replica.", func(s *engine.StreamStatus) float64 { return float64(s.Sequence) }),
		gauge("pregao_live_stream_lag_messages", "Messages of the live stream not applied yet by this replica.", func(s *engine.StreamStatus) float64 { return float64(s.Pending) }),
		gauge("pregao_live_stream_lag_seconds", "How long the oldest message of the live stream not applied yet has waited (0: none).", func(s *engine.StreamStatus) float64 { return s.Lag.Seconds() }),
		gauge("pregao_live_stream_connected", "1 while this replica reaches the live stream.", func(s *engine.StreamStatus) float64 { return b2f(s.Connected) }),
		gauge("pregao_live_stream_stale_seconds", "How long this replica has not reached the live stream (0 while it does): it serves its last state meanwhile.", func(s *engine.StreamStatus) float64 { return s.Stale.Seconds() }),
		gauge("pregao_live_stream_session_gaps", "Gaps (stream messages gone, batch sequence numbers skipped) in the live session this replica applies, while no snapshot has taken it over: its minutes only the missing batches carried are missing.", func(s *engine.StreamStatus) float64 { return float64(s.SessionGaps) }),
		gauge("pregao_live_stream_caught_up", "1 once this replica has applied the live stream up to its head since it started (/readyz answers 503 before).", func(s *engine.StreamStatus) float64 { return b2f(s.CaughtUp) }),
	)
}

// addDeltas adds the growth of the engine's live counters from p (zero:
// none yet) to l to the metrics.
func (m *metrics) addDeltas(l, p liveCounts) {
	m.bars.Add(float64(l.bars - p.bars))
	m.corrections.Add(float64(l.corrections - p.corrections))
	m.aside.Add(float64(l.aside - p.aside))
	m.covered.Add(float64(l.covered - p.covered))
}

// liveCounts are a live session's counters: kept between two batches in
// place of the session, which would hold its Dataset past a publish.
type liveCounts struct{ bars, corrections, aside, covered int64 }

func countsOf(l *engine.Live) liveCounts {
	return liveCounts{bars: l.Bars, corrections: l.Corrections, aside: l.Aside, covered: l.Covered}
}

func b2f(v bool) float64 {
	if v {
		return 1
	}
	return 0
}
