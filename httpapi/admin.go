package httpapi

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
)

// The operator routes (Route.Admin): the push endpoints of the live
// session, POST /admin/live/trades and /admin/live/bars. A feed sends
// batches of lines (livelines.go), each numbered by the client with the
// query parameter seq; the API checks the whole batch and hands it to the
// LiveSink (livesink.go), which applies it or refuses it whole.
//
// Decisions (docs/api.md, "POST /admin/live/trades and /admin/live/bars"):
//
//   - Only keys with ScopeAdmin (403 for any other key); a key with only
//     that scope gets 403 on the market-data routes (authorize).
//   - No sink (serve without --feed push): 503, before the body is read.
//   - seq must be the sink's NextSeq: otherwise 409 naming it, in the
//     message and in X-Live-Next-Seq. A seq above it is refused before
//     the body is parsed. A seq below it (a retry of a batch whose answer
//     was lost, or another pusher's batch of that number) is compared
//     with the batch applied under it by digest (engine.LiveDigest, in
//     X-Live-Batch-Digest): the same body is "applied already" (the
//     client takes it as applied), another body a conflict naming both
//     digests (nothing of it is applied: the client sends it again under
//     the next seq).
//   - A push into a session that is over (complete, or handed over to the
//     snapshot of its day: engine.ErrLiveClosed) is a 409.
//   - The body is capped by Config.MaxPushBytes (413), is NDJSON or CSV
//     by Content-Type (415 otherwise), and every bad line is a 400 naming
//     line and field; nothing of a refused batch reaches the sink.
//   - A sink's refusal wrapping engine.ErrLiveBatch is a 400, engine.ErrLiveSeq
//     or engine.ErrLiveClosed a 409, engine.ErrLiveUnavailable a 503 (the
//     live stream unreachable, the session log being reopened: send the
//     batch again); any other error a 500 (logged).

// DefaultMaxPushBytes is the default cap of a push body (Config.MaxPushBytes):
// 16 MiB, about 150,000 trade lines.
const DefaultMaxPushBytes = 16 << 20

// hdrNextSeq names the seq the next batch must carry, on the answers of
// the push endpoints that know it (200 and 409); hdrDigest the digest of
// the batch applied under a seq below it (409).
const (
	hdrNextSeq = "X-Live-Next-Seq"
	hdrDigest  = "X-Live-Batch-Digest"
)

// Route templates of the push endpoints.
const (
	routeLiveTrades = "/admin/live/trades"
	routeLiveBars   = "/admin/live/bars"
)

// seqParam is the query parameter of a batch's number.
var seqParam = Param{Name: "seq", In: InQuery, Type: TypeInteger, Required: true, Min: 1, Max: 1<<53 - 1,
	Desc: "the batch's sequence number, chosen by the client: the seq the server expects next (X-Live-Next-Seq of the last answer; 409 otherwise)"}

// authorize checks that the key found by authenticate may call rt: an
// admin route needs ScopeAdmin, and a push feed to receive its batches
// (503: none; answered before the body is read); any other route needs a
// plan, which a key with only the admin scope lacks (403).
func (a *API) authorize(c *call, rt *Route) int {
	switch {
	case rt.Admin && !c.key.Admin():
		return c.out.fail(http.StatusForbidden, "forbidden: this operation needs a key with the admin scope (pregao keys add --admin); an API plan key may not call it")
	case rt.Admin && a.sink.Load() == nil:
		return c.out.fail(http.StatusServiceUnavailable, noSink)
	case !rt.Admin && c.key.Plan == "":
		return c.out.fail(http.StatusForbidden, "forbidden: this key has no plan (a key with only the admin scope may call only the /admin operations); market data needs a key with plan delayed or eod")
	}
	return 0
}

const noSink = "no push feed: start serve with --feed push"

// bodyCap is the most bytes a request body of rt may have.
func (a *API) bodyCap(rt *Route) int64 {
	if rt.Admin {
		return a.cfg.MaxPushBytes
	}
	return a.cfg.MaxBodyBytes
}

// The kinds of push, the label kind of the push counters.
const (
	pushTrades = "trades"
	pushBars   = "bars"
)

// Results of a push, the label result of the push counters.
const (
	pushApplied  = "applied"  // 200
	pushInvalid  = "invalid"  // 400 (a bad line, no line, a batch the sink refused), 415
	pushSequence = "sequence" // 409
	pushFailed   = "failed"   // the sink failed (500), or went away (503)
)

// pushMetrics count the batches and lines pushed, by kind and result.
type pushMetrics struct {
	batches, lines *prometheus.CounterVec
}

// newPushMetrics makes the push counters and registers them on reg (nil:
// none), every series from the start.
func newPushMetrics(reg prometheus.Registerer) *pushMetrics {
	m := &pushMetrics{
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pregao_live_push_batches_total",
			Help: "Batches received by the push endpoints (POST /admin/live/trades and /bars) by kind (trades, bars) and result: applied, invalid (400, 415), sequence (409), failed (the feed failed).",
		}, []string{"kind", "result"}),
		lines: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pregao_live_push_lines_total",
			Help: "Lines of the batches the push endpoints read whole, by kind and result (as pregao_live_push_batches_total; a batch refused before or while its lines were read adds none).",
		}, []string{"kind", "result"}),
	}
	for _, k := range []string{pushTrades, pushBars} {
		for _, r := range []string{pushApplied, pushInvalid, pushSequence, pushFailed} {
			m.batches.WithLabelValues(k, r)
			m.lines.WithLabelValues(k, r)
		}
	}
	if reg != nil {
		reg.MustRegister(m.batches, m.lines)
	}
	return m
}

func (m *pushMetrics) count(kind, result string, lines int) {
	m.batches.WithLabelValues(kind, result).Inc()
	if lines > 0 {
		m.lines.WithLabelValues(kind, result).Add(float64(lines))
	}
}

// liveTrades serves POST /admin/live/trades.
func (a *API) liveTrades(c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
	return a.push(c, dst, r, pushTrades)
}

// liveBars serves POST /admin/live/bars.
func (a *API) liveBars(c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
	return a.push(c, dst, r, pushBars)
}

// push checks the batch of kind in c.body and hands it to the sink. It
// answers {"seq":N,"lines":K,"next_seq":M}.
func (a *API) push(c *call, dst []byte, r *http.Request, kind string) ([]byte, error) {
	defer func() {
		// A push's body buffer is not kept for the call's next request.
		if int64(cap(c.body)) > a.cfg.MaxBodyBytes {
			c.body = nil
		}
	}()
	q := c.query(r)
	seq := q.integer("seq")
	if err := q.err(); err != nil {
		a.pushM.count(kind, pushInvalid, 0)
		return nil, err
	}
	if seq == 0 {
		a.pushM.count(kind, pushInvalid, 0)
		return nil, badRequest("query parameter seq is required: the batch's sequence number (%s of the last answer, or of a 409)", hdrNextSeq)
	}
	sp := a.sink.Load()
	if sp == nil { // SetLiveSink(nil) since authorize
		a.pushM.count(kind, pushFailed, 0)
		return nil, errorf(http.StatusServiceUnavailable, noSink)
	}
	sink := *sp
	csvForm, err := pushForm(r)
	if err != nil {
		a.pushM.count(kind, pushInvalid, 0)
		return nil, err
	}
	hd := c.out.w.Header()
	next := sink.NextSeq()
	if uint64(seq) > next {
		a.pushM.count(kind, pushSequence, 0)
		return nil, outOfSequence(hd, uint64(seq), next)
	}
	var (
		trades []engine.LiveTrade
		bars   []engine.LiveBar
	)
	if kind == pushTrades {
		trades, err = parseTrades(c.body, csvForm)
	} else {
		bars, err = parseBars(c.body, csvForm)
	}
	n := len(trades) + len(bars)
	if err == nil && n == 0 {
		err = badRequest("request body: no line; a batch holds at least one line")
	}
	if err != nil { // nothing reaches the sink
		a.pushM.count(kind, pushInvalid, 0)
		return nil, err
	}
	if uint64(seq) < next {
		a.pushM.count(kind, pushSequence, n)
		return nil, appliedAlready(hd, uint64(seq), next, engine.LiveDigest(bars, trades), sink)
	}
	if kind == pushTrades {
		err = sink.PushTrades(uint64(seq), trades)
	} else {
		err = sink.PushBars(uint64(seq), bars)
	}
	switch {
	case errors.Is(err, engine.ErrLiveSeq):
		a.pushM.count(kind, pushSequence, n)
		if next = sink.NextSeq(); uint64(seq) < next { // another pusher took the number meanwhile
			return nil, appliedAlready(hd, uint64(seq), next, engine.LiveDigest(bars, trades), sink)
		}
		return nil, outOfSequence(hd, uint64(seq), sink.NextSeq())
	case errors.Is(err, engine.ErrLiveClosed):
		a.pushM.count(kind, pushSequence, n)
		hd[hdrNextSeq] = []string{strconv.FormatUint(sink.NextSeq(), 10)}
		return nil, errorf(http.StatusConflict, "batch seq=%d refused: %v", seq, err)
	case errors.Is(err, engine.ErrLiveBatch):
		a.pushM.count(kind, pushInvalid, n)
		return nil, badRequest("batch seq=%d refused: %v", seq, err)
	case errors.Is(err, engine.ErrLiveUnavailable):
		a.pushM.count(kind, pushFailed, n)
		a.log.Warn("push batch not taken: the sink is unavailable", "kind", kind, "seq", seq, "err", err.Error())
		return nil, errorf(http.StatusServiceUnavailable, "batch seq=%d not taken (%v): send it again", seq, err)
	case err != nil:
		a.pushM.count(kind, pushFailed, n)
		return nil, fmt.Errorf("push of %s batch seq=%d: %w", kind, seq, err)
	}
	a.pushM.count(kind, pushApplied, n)
	next = sink.NextSeq()
	hd[hdrNextSeq] = []string{strconv.FormatUint(next, 10)}
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendInt(dst, int64(seq), 10)
	dst = append(dst, `,"lines":`...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, `,"next_seq":`...)
	dst = strconv.AppendUint(dst, next, 10)
	return append(dst, '}'), nil
}

// outOfSequence is the 409 of a batch numbered seq when next is expected;
// it sets X-Live-Next-Seq.
func outOfSequence(hd http.Header, seq, next uint64) error {
	hd[hdrNextSeq] = []string{strconv.FormatUint(next, 10)}
	switch {
	case seq < next:
		return errorf(http.StatusConflict, "batch seq=%d is out of sequence: expected seq=%d; batch %d was applied already (a retry of it is done)", seq, next, seq)
	case seq == next+1:
		return errorf(http.StatusConflict, "batch seq=%d is out of sequence: expected seq=%d; batch %d was never applied", seq, next, next)
	}
	return errorf(http.StatusConflict, "batch seq=%d is out of sequence: expected seq=%d; batches %d to %d were never applied", seq, next, next, seq-1)
}

// appliedAlready is the 409 of a batch numbered seq below next, whose
// body's digest is digest: the batch applied under seq has the same
// digest (a retry: done), another one (a second pusher's batch: not
// applied), or none the sink knows. It sets X-Live-Next-Seq and, when
// known, X-Live-Batch-Digest.
func appliedAlready(hd http.Header, seq, next uint64, digest string, sink engine.LiveSink) error {
	hd[hdrNextSeq] = []string{strconv.FormatUint(next, 10)}
	had, ok := sink.Applied(seq)
	if !ok || had != digest {
		// Not a retry of the batch applied: were the session over, sending
		// it again under the next seq would be refused too.
		if err := sink.Closed(); err != nil {
			return errorf(http.StatusConflict, "batch seq=%d refused: %v", seq, err)
		}
	}
	switch {
	case !ok:
		return errorf(http.StatusConflict, "batch seq=%d is out of sequence: expected seq=%d; batch %d of this session is not known, so this body (digest %s) cannot be compared: it was not applied", seq, next, seq, digest)
	case had == digest:
		hd[hdrDigest] = []string{had}
		return errorf(http.StatusConflict, "batch seq=%d is out of sequence: expected seq=%d; batch %d was applied already with this body (digest %s): a retry of it is done", seq, next, seq, digest)
	}
	hd[hdrDigest] = []string{had}
	return errorf(http.StatusConflict, "batch seq=%d conflicts: batch %d was applied with another body (digest %s); this body (digest %s) was not applied: send it as seq=%d", seq, seq, had, digest, next)
}

// pushForm returns whether the body is CSV, by Content-Type: text/csv, or
// application/x-ndjson (the default, when none is sent); UTF-8 only. 415
// otherwise.
func pushForm(r *http.Request) (bool, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return false, nil
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return false, errorf(http.StatusUnsupportedMediaType, "Content-Type %q: malformed; want application/x-ndjson or text/csv", ct)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return false, errorf(http.StatusUnsupportedMediaType, "Content-Type %q: charset %q; want utf-8", ct, cs)
	}
	switch mt {
	case "application/x-ndjson":
		return false, nil
	case "text/csv":
		return true, nil
	}
	return false, errorf(http.StatusUnsupportedMediaType, "Content-Type %q: want application/x-ndjson (one JSON object per line, the default) or text/csv (a header row naming the fields)", ct)
}
