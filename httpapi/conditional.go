package httpapi

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"hash/maphash"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/pregao/pregao/engine"
)

// Conditional requests. An answer of a GET route depends only on the
// Dataset, the request (path and query), the key's plan and, for quotes,
// the clock's cut-off (the minute for the delayed plan while data within
// its delay exists, the session date for eod). Its strong ETag hashes
// those, so it is known before the answer is encoded: a request whose
// If-None-Match holds it is answered 304 without encoding anything.
//
//	ETag: "<snapshot id>-<16 hex digits>"
//	Cache-Control: private, max-age=N   (N: until the cut-off moves, else 300)
//	Last-Modified: the snapshot's build time (or the cut-off's minute)

// staleAfter is the max-age of answers that change only with the snapshot.
const staleAfter = 300 // seconds

// newSeed returns an ETag prefix for a Dataset whose snapshot id is not
// known (built in process): random, so ETags never collide across
// Datasets.
func newSeed() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// lookup is the phase between the request's checks and its handler: it
// names the answer (answerKey), sets the validators of a GET, answers a
// matching If-None-Match with 304, and answers from the answer cache a
// request it holds. It returns the status sent, or 0 when the handler
// must run. A query the declarations refuse skips it all: the handler
// answers the error, with no validators.
func (a *API) lookup(c *call, r *http.Request) int {
	get := r.Method == http.MethodGet || r.Method == http.MethodHead
	var in *dsInfo
	if get {
		in = a.info(c.ds)
		if p, moving := a.findPrepared(c, r, in); p != nil {
			return a.lookupPrepared(c, r, in, p, moving)
		}
	}
	if !a.queryKey(c, r) {
		return 0
	}
	o := &c.out
	if c.live != nil && c.route.Priced {
		o.w.Header()[hdrLiveSeq] = a.liveSeq(c.live)
	}
	// The cache of the current Dataset only: a request still served by a
	// replaced one (during a reload) would fill a cache nobody keeps.
	kept := a.cfg.AnswerCacheBytes > 0 && c.ds == a.store.Current()
	if !get && !kept {
		return 0
	}
	if in == nil {
		in = a.info(c.ds)
	}
	var keyBody []byte
	if !get {
		keyBody = a.bodyKey(c)
	}
	sum, live, vk := a.answerKey(c, r, in, keyBody)
	if kept {
		o.acheck = checkOf(c, r, keyBody)
	}
	if get {
		p := &prepared{route: c.route, plan: c.key.Plan, csv: o.csv, live: c.live, path: r.URL.Path, query: r.URL.RawQuery,
			vk: vk, sum: sum, check: o.acheck, checked: kept, lm: in.lastModified}
		p.etag, p.weak = in.etag(sum)
		switch t, part := a.pricedModified(c, in, vk); {
		case part:
			p.lm = nil
		case t > in.lastMod:
			p.lm = []string{time.Unix(t, 0).UTC().Format(http.TimeFormat)}
		}
		in.prepared[p.slot()].Store(p)
		if st := a.validate(c, r, p, live); st != 0 {
			return st
		}
	}
	return a.lookupCache(c, in, kept)
}

// lookupPrepared is lookup for a GET whose answer was named before at
// the same view (findPrepared found p): its key, check and validators are
// p's, not computed again.
func (a *API) lookupPrepared(c *call, r *http.Request, in *dsInfo, p *prepared, moving bool) int {
	o := &c.out
	if c.live != nil && c.route.Priced {
		o.w.Header()[hdrLiveSeq] = a.liveSeq(c.live)
	}
	o.akey, o.akeyOK = p.sum, true
	if st := a.validate(c, r, p, moving); st != 0 {
		return st
	}
	kept := a.cfg.AnswerCacheBytes > 0 && c.ds == a.store.Current()
	if kept && !p.checked {
		// Named on a replaced Dataset's request: the check was not made.
		if !a.queryKey(c, r) { // cannot fail: p was made from this query
			return 0
		}
		a.answerKey(c, r, in, nil)
		o.acheck = checkOf(c, r, nil)
	} else {
		o.acheck = p.check
	}
	return a.lookupCache(c, in, kept)
}

// validate sets the validators of p's answer and answers 304 when the
// request's If-None-Match or If-Modified-Since match them (returning
// the status), else 0. moving says the answer may still change at its
// view (delayedKey): it is kept to the end of the cut-off's minute.
func (a *API) validate(c *call, r *http.Request, p *prepared, moving bool) int {
	cc := cacheStatic
	if moving {
		cc = a.movingCacheControl(c.now)
	}
	if c.out.validators(r, p.etag, p.weak, cc, p.lm) || notModifiedSince(r, p.lm) {
		return c.out.notModified()
	}
	return 0
}

// lookupCache answers from in's answer cache when kept and it holds the
// answer (whose key and check are set), returning the status; else it
// readies the capture and returns 0.
func (a *API) lookupCache(c *call, in *dsInfo, kept bool) int {
	if !kept {
		return 0
	}
	o := &c.out
	o.cache, o.owner = &in.answers, c.key.Name
	if a.lookupKept(c) {
		return o.end(o.buf[:0], nil)
	}
	o.startCapture(&a.captured)
	return 0
}

// preparedSlots is the size of a Dataset's table of named answers
// (prepared).
const preparedSlots = 1024

// prepared is a GET answer as named once: what the answer's key,
// check and validators are for one route, plan, representation, path,
// raw query and view (the cut-off's minute and the live session's state).
// The answer of a priced route moves with the cut-off's minute and the
// live revision, not with each request: a request that matches every
// field is answered with these, computed once. Never modified.
type prepared struct {
	route   *Route
	plan    string
	csv     bool
	live    *engine.Live // the live state the view was read in (nil: none)
	path    string
	query   string
	vk      viewKey
	sum     uint64 // answerKey
	check   uint64 // checkOf (checked: made)
	checked bool
	etag    []string // shared header values
	weak    []string // etag's weak form (weakETag)
	lm      []string
}

// slot returns p's place in dsInfo.prepared.
func (p *prepared) slot() uint64 { return preparedSlot(p.plan, p.path, p.query) }

func preparedSlot(plan, path, query string) uint64 {
	var h maphash.Hash
	h.SetSeed(checkSeed)
	h.WriteString(plan)
	h.WriteByte(0)
	h.WriteString(path)
	h.WriteByte('?')
	h.WriteString(query)
	return h.Sum64() % preparedSlots
}

// findPrepared returns the answer named before for c's request at c's
// view, or nil, and whether the answer may still change at that view
// (delayedKey's moving).
func (a *API) findPrepared(c *call, r *http.Request, in *dsInfo) (p *prepared, moving bool) {
	p = in.prepared[preparedSlot(c.key.Plan, r.URL.Path, r.URL.RawQuery)].Load()
	if p == nil || p.route != c.route || p.plan != c.key.Plan || p.csv != c.out.csv ||
		(c.route.Priced && p.live != c.live) || p.path != r.URL.Path || p.query != r.URL.RawQuery {
		return nil, false
	}
	var vk viewKey
	switch {
	case !c.route.Priced:
		if c.route.valued {
			vk, moving = a.valuedKey(c)
		}
	case c.key.Plan == PlanEOD:
		vk = eodKey(c)
	default:
		vk, moving = a.delayedKey(c, in)
	}
	if vk != p.vk {
		return nil, false
	}
	return p, moving
}

// movingCacheControl returns the Cache-Control of an answer that moves
// with the cut-off: private, until the end of the cut-off's minute. The
// value is made once a second (shared: never modified).
func (a *API) movingCacheControl(now time.Time) []string {
	s := now.Add(-QuoteDelay).Unix()
	if e := a.movingCC.Load(); e != nil && e.sec == s {
		return e.hdr
	}
	e := &secondHdr{sec: s, hdr: []string{"private, max-age=" + strconv.FormatInt(60-s%60, 10)}}
	a.movingCC.Store(e)
	return e.hdr
}

// secondHdr is a header value made for one second.
type secondHdr struct {
	sec int64
	hdr []string
}

// hdrLiveSeq names, on a priced answer while a live session runs, the
// last batch of the session the answer's view holds.
var hdrLiveSeq = http.CanonicalHeaderKey("X-Live-Seq")

// liveSeqHdr is the X-Live-Seq value of one batch, made once. It keeps
// the batch's number, not the live state: that holds its Dataset, which a
// publish may replace.
type liveSeqHdr struct {
	seq uint64
	h   []string
}

// liveSeq returns the X-Live-Seq value of l (shared: not to be modified).
func (a *API) liveSeq(l *engine.Live) []string {
	if e := a.liveHdr.Load(); e != nil && e.seq == l.Seq {
		return e.h
	}
	e := &liveSeqHdr{seq: l.Seq, h: []string{strconv.FormatUint(l.Seq, 10)}}
	a.liveHdr.Store(e)
	return e.h
}

// querySlots is the size of the table of query strings seen (queryAlias).
const querySlots = 1024

// maxAliasQuery is the longest raw query string the table of queries
// seen keeps (bytes): a longer one is parsed each time it comes, so that
// the table holds at most querySlots × (2 × maxAliasQuery + aliasOverhead)
// bytes (2.2 MiB) whatever the queries sent.
const maxAliasQuery = 1024

// aliasOverhead is what a queryAlias or bodyAlias counts in keyTableBytes
// beside its strings: the struct and its slot.
const aliasOverhead = 64

// queryAlias ties a route's raw query string, read without error, to its
// normalized values (appendQueryKey): a query sent again is keyed without
// being parsed again.
type queryAlias struct {
	route *Route
	raw   string
	key   []byte // never modified
}

// queryKey makes the request's query key in c.s.qkey (appendQueryKey),
// from the table of queries seen when it holds the raw query, else by
// reading the query through the route's declarations (c.q). It reports
// false when the declarations refuse the query: the handler answers the
// error.
func (a *API) queryKey(c *call, r *http.Request) bool {
	raw := r.URL.RawQuery
	if raw == "" && !c.qok {
		c.s.qkey = c.s.qkey[:0]
		return true
	}
	slot := &a.queries[maphash.String(checkSeed, raw)%querySlots]
	if e := slot.Load(); e != nil && e.route == c.route && e.raw == raw && !c.qok {
		c.s.qkey = append(c.s.qkey[:0], e.key...)
		return true
	}
	c.parseQuery(r)
	if c.q.first != nil {
		return false
	}
	c.s.qkey = appendQueryKey(c.s.qkey[:0], &c.q)
	if len(raw) <= maxAliasQuery && len(c.s.qkey) <= 2*maxAliasQuery {
		e := &queryAlias{route: c.route, raw: strings.Clone(raw), key: slices.Clone(c.s.qkey)}
		a.keyBytes.Add(e.bytes() - slot.Swap(e).bytes())
	}
	return true
}

// bytes is what e counts in keyTableBytes (0 for nil).
func (e *queryAlias) bytes() int64 {
	if e == nil {
		return 0
	}
	return int64(len(e.raw)+cap(e.key)) + aliasOverhead
}

// bodySlots is the size of the table of bodies seen (bodyAlias).
const bodySlots = 1024

// bodyAlias ties a request body, by two hashes of its bytes and its
// length, to two hashes of its canonical form: a body sent again is keyed
// without being canonicalized again (a 500-ticker batch is 5 KB).
type bodyAlias struct {
	rawX, rawM uint64
	n          int
	key        [16]byte // xxhash and maphash of the canonical form
}

// bodyKey returns what keys the request body in the answer's key: the two
// hashes of its canonical form (canon.go), or of the body as sent when it
// is not JSON, as 16 bytes. The result is valid until the call's reset.
func (a *API) bodyKey(c *call) []byte {
	rx, rm := xxhash.Sum64(c.body), maphash.Bytes(checkSeed, c.body)
	slot := &a.bodies[rx%bodySlots]
	if e := slot.Load(); e != nil && e.rawX == rx && e.rawM == rm && e.n == len(c.body) {
		c.s.bkey = e.key
		return c.s.bkey[:]
	}
	canon := c.canonicalBody()
	e := &bodyAlias{rawX: rx, rawM: rm, n: len(c.body)}
	binary.LittleEndian.PutUint64(e.key[:8], xxhash.Sum64(canon))
	binary.LittleEndian.PutUint64(e.key[8:], maphash.Bytes(checkSeed, canon))
	if slot.Swap(e) == nil {
		a.keyBytes.Add(int64(unsafe.Sizeof(*e)) + aliasOverhead)
	}
	c.s.bkey = e.key
	return c.s.bkey[:]
}

// canonicalBody returns the request body in canonical JSON form (canon.go),
// or as sent when it is not JSON.
func (c *call) canonicalBody() []byte {
	if b, ok := c.s.canon.appendCanonical(c.s.keyBody[:0], c.body); ok {
		c.s.keyBody = b
		return b
	}
	return c.body
}

// answerKey hashes what an answer depends on besides the Dataset: the
// key's plan, for a priced route the view's key (the clock's cut-off and
// the live session's revision there: delayedKey, eodKey), the path, the
// query's values (normalized, canon.go), the representation (CSV) and,
// for a POST, the body (canonical). Other routes do not move with the
// clock or the feed. It records the hash in the answer (for the
// answer cache) and returns it with whether the cut-off is live (delayed
// quotes within their delay) and its key.
func (a *API) answerKey(c *call, r *http.Request, in *dsInfo, body []byte) (sum uint64, live bool, k viewKey) {
	switch {
	case !c.route.Priced: // the Dataset and the request only
		if c.route.valued { // but valuations cut short of the Dataset: their view
			k, live = a.valuedKey(c)
		}
	case c.key.Plan == PlanEOD:
		k = eodKey(c)
	default:
		k, live = a.delayedKey(c, in)
	}
	h := &c.hash
	h.Reset()
	h.WriteString(c.key.Plan)
	kb := &c.s.vkey
	for i := range 8 {
		kb[i] = byte(k.at >> (8 * i))
		kb[8+i] = byte(k.rev >> (8 * i))
	}
	for i := range 4 {
		kb[16+i] = byte(k.session >> (8 * i))
	}
	kb[20], kb[21], kb[22], kb[23] = 0, 0, 0, 0
	h.Write(kb[:])
	h.WriteString(r.URL.Path)
	h.WriteString("?")
	h.Write(c.s.qkey) // queryKey made it
	if c.out.csv {
		h.WriteString("\x00text/csv") // by Accept: another representation
	}
	if body != nil {
		h.WriteString("\x00")
		h.Write(body)
	}
	sum = h.Sum64()
	c.out.akey, c.out.akeyOK = sum, true
	return sum, live, k
}

// pricedModified returns when the view k of a priced answer last changed,
// unix seconds (0: not priced, or nothing later than the snapshot): for
// the delayed plan, the cut-off's minute and the time of the live
// session's revision there (LiveBatch.At); for the eod plan, the time of
// the last batch of the complete live session it holds. The
// Last-Modified of an answer is the later of it and the snapshot's
// build time, so that it never moves back while the answer changes
// (the live session completing, a correction, a reload).
//
// part reports a view that holds less than the snapshot: the delayed
// plan's cut-off short of the snapshot's last data without a live
// session (a snapshot served within QuoteDelay of its data's end; with
// one, the cut-off's minute dates the answer), the eod plan's market
// date not past the snapshot's last session (the evening its snapshot
// is built), and an answer of a route that shows valuations while its
// key's view leaves out the Dataset's last session (valuationCut).
// Such an answer changes with the clock while the snapshot's build time
// stays: it carries no Last-Modified, so that a client revalidating by
// date alone (If-Modified-Since) is never answered 304 on what changed
// since; its ETag names its view.
func (a *API) pricedModified(c *call, in *dsInfo, k viewKey) (t int64, part bool) {
	switch {
	case !c.route.Priced:
		return 0, c.route.valued && a.valuationCut(c) != 0
	case c.key.Plan == PlanEOD:
		if a.valuationCut(c) != 0 { // the snapshot's last session is today's: hidden
			return 0, true
		}
		if k.session.Valid() && c.live != nil {
			return c.live.At / 1000, false
		}
		return 0, false
	}
	if c.live == nil && k.at < in.latestVisible {
		return 0, true
	}
	t = k.at
	if c.live != nil {
		t = max(t, c.live.RevTime(k.at)/1000)
	}
	return t, false
}

// notModifiedSince reports whether r's If-Modified-Since is at or after
// lastModified (the answer's Last-Modified), which makes a GET a 304. As
// RFC 9110 (13.1.3) says, it is ignored when the request has an
// If-None-Match (the ETag decides) or a date that does not parse.
func notModifiedSince(r *http.Request, lastModified []string) bool {
	ims := r.Header["If-Modified-Since"] // the canonical key: no canonicalization per request
	if len(ims) == 0 || ims[0] == "" || len(lastModified) == 0 || len(r.Header["If-None-Match"]) > 0 {
		return false
	}
	since, err := http.ParseTime(ims[0])
	if err != nil {
		return false
	}
	lm, err := http.ParseTime(lastModified[0])
	return err == nil && !lm.After(since)
}

var cacheStatic = []string{"private, max-age=" + strconv.Itoa(staleAfter)}

// etagListed reports whether the If-None-Match value v lists etag, by weak
// comparison as RFC 9110 asks of If-None-Match. "*" is not honoured: the
// ETag is known before the handler finds out whether the resource exists.
func etagListed(v, etag string) bool {
	for len(v) > 0 {
		var t string
		t, v, _ = strings.Cut(v, ",")
		t = strings.TrimSpace(t)
		if strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}

// etagSlots is the size of a Dataset's ETag cache: the header values of
// the ETags last computed, by hash, so that repeated requests build none.
const etagSlots = 4096

// etagEntry is one cached ETag header value, and its weak form.
type etagEntry struct {
	sum  uint64
	hdr  []string // {`"seed-sum"`}; shared, never modified
	weak []string // {`W/"seed-sum"`}: a compressed answer's; the same
}

// etag returns the ETag header value of the request hash sum, and its
// weak form (weakETag).
func (in *dsInfo) etag(sum uint64) (strong, weak []string) {
	slot := &in.etags[sum%etagSlots]
	if e := slot.Load(); e != nil && e.sum == sum {
		return e.hdr, e.weak
	}
	b := make([]byte, 0, len(in.seed)+22)
	b = append(b, `W/"`...)
	b = append(b, in.seed...)
	b = append(b, '-')
	b = strconv.AppendUint(b, sum, 16)
	b = append(b, '"')
	w := string(b)
	e := &etagEntry{sum: sum, hdr: []string{w[2:]}, weak: []string{w}}
	slot.Store(e)
	return e.hdr, e.weak
}
