package httpapi

import (
	"net/http"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/yieldpoint"
)

// call is the state of one request between the router and the handler:
// what the request is (route, key, body, query), what it sees (the view:
// one Dataset and one clock reading), and its answer, which owns the way
// out (answer.go). Handler scratch sits behind its own pointer. A call is
// pooled by the API: nothing in it may be kept after the request.
type call struct {
	route *Route        // the operation served: its parameter declarations
	key   KeyEntry      // the authenticated key (zero on public routes)
	lim   *limiter      // the key's rate limit (nil: none)
	adm   *keyAdmission // the key's admission state (nil: no key)
	// admitted: the request holds a slot of its key since admAt
	// (admission.go); leave gives it back.
	admitted bool
	admAt    time.Time
	ds       *engine.Dataset // the one Dataset of this request (the view's base)
	live     *engine.Live    // the live session beside it (nil: none)
	now      time.Time       // the clock's now for this request (the view)
	body     []byte          // the request body (POST), read up to the cap

	// yp is the request's yield point: flush gives the processor to
	// other goroutines there while computing requests hold them all.
	yp yieldpoint.Point

	// q is the request's query string read through the route's
	// declarations (qok: read), once, before the answer cache is asked:
	// the answer's key is made of its values (answerKey).
	q   query
	qok bool

	hash xxhash.Digest // scratch of the answer's key and ETag

	// vk is the delayed plan's view key of the request (delayedKey), once
	// computed (vkOK).
	vk             viewKey
	vkMoving, vkOK bool
	// pin is the quote view a ranking answers from, found made when its
	// blocks were declared (pricedBlocks); nil: none.
	pin *quoteView

	out answer   // the way out: framing, representation, cache, log record
	s   *scratch // the handlers' scratch (made with the call, kept)
}

// scratch holds the handlers' reusable buffers. Each belongs to one
// handler family; a handler leaves its buffers emptied of references to
// the request's data (reset does it for the others).
type scratch struct {
	quotes quotesRequest       // POST /quotes
	bars   []engine.Bar        // bar series
	tr     []engine.TRPoint    // total-return series
	bars2  []engine.Bar        // bar series of the second encoder of POST /quotes
	buf2   []byte              // output of the second encoder of POST /quotes
	items  []quoteItem         // POST /quotes
	ranks  []engine.RankEntry  // rankings
	rows   []int32             // the screener and cash actions
	keys   []sortKey           // the screener's sort keys
	scr    *screenerScratch    // the screener (made on its first request)
	seen   map[string]struct{} // POST /quotes (cleared after use)

	// The answer key's (answerKey): the query's normalized values, the
	// canonical body and its writer's scratch.
	qkey, keyBody []byte
	canon         canonJSON
	vkey          [24]byte // the view's key (viewKey), as hashed
	bkey          [16]byte // the body's key (bodyKey)
}

// reset drops the references to the request's data and keeps the
// buffers, emptied.
func (s *scratch) reset() {
	clear(s.items) // assets and the body
	clear(s.ranks)
	s.quotes = quotesRequest{Tickers: s.quotes.Tickers[:0]}
	s.bars, s.bars2, s.buf2, s.tr = s.bars[:0], s.bars2[:0], s.buf2[:0], s.tr[:0]
	s.items, s.ranks, s.rows, s.keys = s.items[:0], s.ranks[:0], s.rows[:0], s.keys[:0]
	s.qkey, s.keyBody = s.qkey[:0], s.keyBody[:0]
	// The key of a large body (up to the body cap) is not kept with the
	// call: a flood of large distinct bodies would leave one per pooled
	// call (the bodies' canonical forms, uncounted).
	if cap(s.keyBody) > maxKeptScratch {
		s.keyBody = nil
	}
	if cap(s.qkey) > maxKeptScratch {
		s.qkey = nil
	}
	if cap(s.canon.mem) > maxKeptScratch/32 {
		s.canon.mem = nil
	}
}

// maxKeptScratch is the largest answer-key scratch buffer (bytes) a
// pooled call keeps for its next request.
const maxKeptScratch = 64 << 10

// newCall returns a call with its buffers made.
func newCall() *call {
	return &call{out: answer{buf: make([]byte, 0, 64<<10)}, s: new(scratch)}
}

// reset readies c for the next request: its answer and scratch keep their
// buffers (emptied); everything that refers to this request goes.
func (c *call) reset() {
	c.out.reset()
	c.s.reset()
	c.body = c.body[:0]
	if cap(c.body) > 1<<20 { // a push's body (up to MaxPushBytes) is not kept
		c.body = nil
	}
	// Field by field: the answer and the scratch stay in place.
	c.route, c.key, c.lim, c.ds, c.live, c.now = nil, KeyEntry{}, nil, nil, nil, time.Time{}
	c.adm, c.admitted, c.yp = nil, false, yieldpoint.Point{}
	c.vkOK, c.pin = false, nil
	if c.qok {
		c.q, c.qok = query{}, false // the query aliases the request's URL
	}
}

// query returns the reader of the request's query string, declared by the
// route c is serving: a fresh copy for the handler to read (its reads
// are checked by err), parsed once per request.
func (c *call) query(r *http.Request) query {
	c.parseQuery(r)
	q := c.q
	if c.route.CSV != "" {
		// format (formatParam) is read for every route with a CSV form;
		// negotiate already decided the representation from it.
		if i := q.find("format"); i >= 0 {
			if q.seen&(1<<i) == 0 {
				q.read |= 1 << i // absent: nothing to parse
			} else {
				q.enum("format")
			}
		}
	}
	return q
}

// parseQuery reads the request's query string through the route's
// declarations, once.
func (c *call) parseQuery(r *http.Request) {
	if !c.qok {
		c.q = newQuery(r.URL.RawQuery, c.route.Params)
		c.qok = true
	}
}
