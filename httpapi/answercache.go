package httpapi

import (
	"hash/maphash"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
)

// The answer cache. A Dataset never changes, so an answer is a function of
// what answerKey hashes (plan, clock cut-off, path, the query's values,
// representation, body): answers are kept, per Dataset, the first time
// they are encoded, and the same request later is answered with the kept
// bytes (and their compressed forms, made once) without running its
// handler. The cache goes with its Dataset on a reload. Answers that fail
// are not kept.
//
// Its bound (Config.AnswerCacheBytes) is on what it really holds: every
// kept answer's bytes (the chunks of a captured one, whole), the
// compressed forms made of them, and entryOverhead per entry.
//
// Streamed answers. An answer over streamChunk is streamed, never built
// whole, so it is not kept the first time. The cache notes its key (the
// doorkeeper, seenSlots keys); when the same request comes back, its
// answer is also captured as it is streamed, in chunks of captureChunk
// bytes taken from a pool, and the chunks themselves are kept (no copy):
// from the third time on it is sent from them. One-off large answers (the
// usual research download) therefore never displace the small answers.
// Large answers (over maxCachedAnswer) hold at most half of the bound,
// and their compressed forms are not kept (they are compressed as sent).
// The chunks of an evicted answer go back to the pool once no request is
// sending them, so a flood of large answers reuses the same memory
// instead of leaving garbage for the collector; the bytes captured by
// requests in flight are bounded by captureBudget, whatever their number.
//
// Fairness. Each entry belongs to the API key whose request made it, until
// a second key asks for it: then it is shared. A key may fill the cache
// while there is room, but once it is full, a key whose entries hold more
// than keyShare of the bound evicts its own entries first: one client
// flooding distinct requests churns its own answers, not everyone's (the
// others keep at least half the bound), while a server with one key uses
// all of it. Otherwise, entries asked by one key are evicted before
// shared ones.

// maxCachedAnswer is the size over which an answer is large: kept only
// within half of the bound, without its compressed forms.
const maxCachedAnswer = 4 << 20

// DefaultAnswerCacheBytes is the default bound of a Dataset's answer cache.
const DefaultAnswerCacheBytes = 128 << 20

// seenSlots is the size of the doorkeeper of streamed answers.
const seenSlots = 256

// captureBudget bounds the bytes held by the captures of streamed answers
// in flight, over every request of the API.
const captureBudget = 128 << 20

// captureChunk is the unit a streamed answer is captured in.
const captureChunk = streamChunk

// maxFreeChunks bounds the chunks the pool keeps for reuse (16 MiB).
const maxFreeChunks = 64

// keptPage is the unit an answer built whole is kept in (keptCopy), when
// it fills one: small, so that an answer of tens of kilobytes (an as_of
// screener page) is held out of the heap but for a tail under a page.
const keptPage = 16 << 10

// maxFreePages bounds the pages the page pool keeps for reuse (16 MiB).
const maxFreePages = 1024

// entryOverhead is what an entry counts against the bound beside its
// bytes: the entry, its map slot and header values.
const entryOverhead = 256

// answerCache is one Dataset's cache. Its methods are safe for concurrent
// use.
type answerCache struct {
	mu      sync.RWMutex
	entries map[uint64]*answerEntry
	owned   map[string]*ownerEntries // entries only one key asked for, by key name
	bytes   int64                    // kept, as entrySize counts them (forms apart)
	large   int64                    // of which large answers
	forms   atomic.Int64             // compressed forms made of kept answers
	limit   int64
	seen    [seenSlots]atomic.Uint64 // keys of streamed answers sent once (doorkeeper)

	pool      *chunkPool         // where captured chunks come from and go back to
	pages     *chunkPool         // where the pages of answers built whole come from (keptCopy)
	evictions prometheus.Counter // nil: not counted
	closed    bool               // its Dataset was replaced: nothing more is kept (close)
}

// ownerEntries are the keys of the entries one API key made and no other
// key asked for, and their bytes.
type ownerEntries struct {
	keys  []uint64
	bytes int64
}

// keyShare is the part of the bound the entries of one key may hold.
func (ac *answerCache) keyShare() int64 { return ac.limit / 2 }

// largeMax is the largest answer the cache keeps: a quarter of its bound
// (maxCachedAnswer at least).
func (ac *answerCache) largeMax() int64 { return max(ac.limit/4, maxCachedAnswer) }

// sawLarge reports whether the streamed answer of key was sent before
// (the doorkeeper holds its key): it is worth keeping.
func (ac *answerCache) sawLarge(key uint64) bool {
	return key != 0 && ac.seen[key%seenSlots].Load() == key
}

// noteLarge remembers that the streamed answer of key was sent once.
func (ac *answerCache) noteLarge(key uint64) { ac.seen[key%seenSlots].Store(key) }

// noteTooLarge remembers that the answer of key is over largeMax: it is
// not captured again.
func (ac *answerCache) noteTooLarge(key uint64) { ac.seen[key%seenSlots].Store(^key) }

// tooLarge reports whether noteTooLarge holds key.
func (ac *answerCache) tooLarge(key uint64) bool { return ac.seen[key%seenSlots].Load() == ^key }

// answerEntry is one kept answer. check is a second, independent hash of
// the same inputs, so that two requests whose first hashes collide are
// never given each other's answer.
type answerEntry struct {
	check   uint64
	csvKind string       // kept.csvKind
	ans     cachedAnswer // with the X-Total-Count of a paginated list
	size    int64        // entrySize, fixed when kept
	owner   string       // the key whose request made it
	shared  atomic.Bool  // a second key asked for it
	pos     int          // its place in owned[owner].keys (not shared)
	// refs counts the holders of a captured answer's chunks: the cache
	// (1 while kept) and each request sending it; the last one gives the
	// chunks back to the pool.
	refs atomic.Int32
}

// acquire takes a reference to e's chunks; false when e was evicted and
// its chunks are going back to the pool.
func (e *answerEntry) acquire() bool {
	if e.ans.parts == nil {
		return true
	}
	for {
		n := e.refs.Load()
		if n <= 0 {
			return false
		}
		if e.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release drops a reference taken by acquire (or the cache's own); the
// last one gives the parts back to their pools (ac.give).
func (e *answerEntry) release(ac *answerCache) {
	if e.ans.parts == nil {
		return
	}
	if e.refs.Add(-1) == 0 {
		for _, b := range e.ans.parts {
			ac.give(b)
		}
	}
}

// give gives b, a part of a kept answer, back to the pool it came from:
// a captured chunk, a page, or neither (a tail copied to its size, left
// to the collector).
func (ac *answerCache) give(b []byte) {
	ac.pool.put(b)
	ac.pages.put(b)
}

var checkSeed = maphash.MakeSeed()

// entrySize is what an entry counts against the bound, its compressed
// forms apart (counted in forms as they are made): its bytes as held (a
// captured answer's chunks whole) and entryOverhead.
func entrySize(ans *cachedAnswer) int64 {
	n := int64(cap(ans.raw)) + entryOverhead
	for _, b := range ans.parts {
		n += int64(cap(b))
	}
	return n
}

// get returns the entry of key, if kept and matching check, asked by
// the key named owner; a captured entry is acquired (the caller
// releases it).
func (ac *answerCache) get(key, check uint64, owner string) *answerEntry {
	ac.mu.RLock()
	e := ac.entries[key]
	ac.mu.RUnlock()
	if e == nil || e.check != check || !e.acquire() {
		return nil
	}
	if e.owner != owner && !e.shared.Load() {
		ac.share(key, e)
	}
	return e
}

// share marks e, asked by a second key, as shared: it no longer counts
// in its owner's share.
func (ac *answerCache) share(key uint64, e *answerEntry) {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if e.shared.Load() || ac.entries[key] != e {
		return
	}
	ac.disown(e)
	e.shared.Store(true)
}

// disown takes e out of its owner's entries; ac.mu is held.
func (ac *answerCache) disown(e *answerEntry) {
	o := ac.owned[e.owner]
	if o == nil || e.shared.Load() {
		return
	}
	last := len(o.keys) - 1
	moved := o.keys[last]
	o.keys[e.pos] = moved
	ac.entries[moved].pos = e.pos
	o.keys = o.keys[:last]
	o.bytes -= e.size
	if len(o.keys) == 0 {
		delete(ac.owned, e.owner)
	}
}

// admits reports whether an answer of n bytes may be kept.
func (ac *answerCache) admits(n int) bool {
	return ac.limit > 0 && int64(n) <= ac.largeMax()
}

// kept is the body of an answer to keep: raw bytes, or captured chunks
// (n bytes in all).
type kept struct {
	raw   []byte
	parts [][]byte
	n     int
	// csvKind is the CSV form of the JSON kept, as its handler chose it
	// (csvQuotesCurrent for a current quote…): a later CSV request
	// answered from the cache, its handler not run, gets the same columns.
	csvKind string
}

// size returns the body's length.
func (k kept) size() int {
	if k.parts != nil {
		return k.n
	}
	return len(k.raw)
}

// put keeps body (which it owns from now on: bytes shared with nothing)
// and the list's total under key, made by the key named owner, evicting
// others past the bounds. It reports whether body was kept; when not, the
// caller still owns it.
func (ac *answerCache) put(key, check uint64, owner string, body kept, total []string) bool {
	n := body.size()
	if !ac.admits(n) {
		return false
	}
	large := isLarge(n)
	e := &answerEntry{check: check, owner: owner, csvKind: body.csvKind}
	e.ans.raw, e.ans.parts, e.ans.n, e.ans.total = body.raw, body.parts, body.n, total
	e.size = entrySize(&e.ans)
	e.ans.forms = &ac.forms
	if e.ans.parts != nil {
		e.refs.Store(1)
	}
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if ac.closed {
		return false
	}
	if ac.entries == nil {
		ac.entries = map[uint64]*answerEntry{}
		ac.owned = map[string]*ownerEntries{}
	}
	if old := ac.entries[key]; old != nil {
		ac.remove(key, old)
	}
	if large {
		ac.evict(func(old *answerEntry) bool { return isLarge(old.ans.size()) }, func() bool { return ac.large+e.size <= ac.limit/2 })
	}
	enough := func() bool { return ac.bytes+ac.forms.Load()+e.size <= ac.limit }
	// The cache full, a key past its share evicts its own entries first.
	if o := ac.owned[owner]; o != nil && o.bytes+e.size > ac.keyShare() {
		for !enough() && len(o.keys) > 0 {
			k := o.keys[rand.IntN(len(o.keys))]
			ac.remove(k, ac.entries[k])
		}
	}
	ac.evict(nil, enough)
	ac.entries[key] = e
	ac.bytes += e.size
	if large {
		ac.large += e.size
	}
	o := ac.owned[owner]
	if o == nil {
		o = &ownerEntries{}
		ac.owned[owner] = o
	}
	e.pos = len(o.keys)
	o.keys = append(o.keys, key)
	o.bytes += e.size
	return true
}

// evict removes entries that match (nil: any) until enough reports true:
// in random order, those only one key asked for first, then shared ones.
// ac.mu is held.
func (ac *answerCache) evict(match func(*answerEntry) bool, enough func() bool) {
	for _, shared := range [2]bool{false, true} {
		for k, old := range ac.entries { // random order: random eviction
			if enough() {
				return
			}
			if old.shared.Load() == shared && (match == nil || match(old)) {
				ac.remove(k, old)
			}
		}
	}
}

// remove drops the entry e of key; ac.mu is held.
func (ac *answerCache) remove(key uint64, e *answerEntry) {
	ac.disown(e)
	ac.bytes -= e.size
	if isLarge(e.ans.size()) {
		ac.large -= e.size
	}
	e.ans.dropForms()
	delete(ac.entries, key)
	if ac.evictions != nil {
		ac.evictions.Inc()
	}
	e.release(ac)
}

// close drops every entry of a cache whose Dataset was replaced, so that
// the chunks they hold go back to the pool (once the requests sending
// them are done), and keeps nothing more.
func (ac *answerCache) close() {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	ac.closed = true
	ev := ac.evictions
	ac.evictions = nil // not evictions: the Dataset went
	for k, e := range ac.entries {
		ac.remove(k, e)
	}
	ac.evictions = ev
}

// isLarge reports whether an answer of n bytes is large: kept within half
// of the bound, without its compressed forms.
func isLarge(n int) bool { return n > maxCachedAnswer }

// size returns the bytes held (forms included) and the number of entries.
func (ac *answerCache) size() (int64, int) {
	ac.mu.RLock()
	defer ac.mu.RUnlock()
	return ac.bytes + ac.forms.Load(), len(ac.entries)
}

// checkOf is the second hash of a request (see answerEntry): the same
// inputs as its key, by another function.
func checkOf(c *call, r *http.Request, body []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(checkSeed)
	h.WriteString(c.key.Plan)
	h.Write(c.s.vkey[:]) // answerKey made it
	h.WriteString(r.URL.Path)
	h.Write(c.s.qkey) // answerKey made it

	if c.out.csv {
		h.WriteString("\x00csv")
	}
	h.Write(body)
	return h.Sum64()
}

// lookupKept answers from the cache when it holds the request's answer
// (reporting true; the caller ends the answer). The answer's key and
// check are set.
func (a *API) lookupKept(c *call) bool {
	o := &c.out
	if !o.akeyOK || o.cache == nil {
		return false
	}
	e := o.cache.get(o.akey, o.acheck, o.owner)
	if e == nil {
		return false
	}
	if e.ans.total != nil {
		c.sendTotal(e.ans.total)
	}
	o.cached, o.held = &e.ans, e
	if e.csvKind != "" {
		o.csvKind = e.csvKind
	}
	a.m.answerHits.Inc()
	return true
}

// release gives back the kept answer being sent, if any.
func (o *answer) release() {
	if o.held != nil {
		o.held.release(o.cache)
		o.held = nil
	}
	o.cached = nil
}

// keep stores the answer just made, when it may be kept: a copy of body,
// in chunks of the pool when it fills one (keptCopy).
func (o *answer) keep(body []byte) {
	ac := o.cache
	if !o.akeyOK || ac == nil || o.streamed || o.cached != nil || !ac.admits(len(body)) {
		return
	}
	k := keptCopy(body, ac.pages)
	k.csvKind = o.csvKind
	if !ac.put(o.akey, o.acheck, o.owner, k, o.total()) {
		for _, b := range k.parts {
			ac.give(b)
		}
	}
}

// keptCopy returns a copy of body to keep. An answer of at least a page
// is copied into pages of pool (the last part, shorter, to its size on
// the heap), held as a captured answer is: the pages live out of the Go
// heap (chunkPool), and those of an evicted answer go back to the pool
// and are reused by the next one kept. Kept on the heap, the cache's
// bytes counted twice (the collector lets the heap grow by what is live)
// and every evicted answer was garbage: a flood of distinct as_of
// screener pages (117 KB each) raised resident memory 505 MB above the
// same flood without the cache, for a 128 MiB bound. A shorter answer is
// one copy of its size.
func keptCopy(body []byte, pool *chunkPool) kept {
	size := pool.chunkSize()
	if pool == nil || len(body) < size {
		return kept{raw: append([]byte(nil), body...)}
	}
	k := kept{n: len(body)}
	k.parts = make([][]byte, 0, (len(body)+size-1)/size)
	for len(body) > 0 {
		if len(body) < size {
			k.parts = append(k.parts, append([]byte(nil), body...))
			break
		}
		c := append(pool.get(), body[:size]...)
		k.parts = append(k.parts, c)
		body = body[size:]
	}
	return k
}

// total is the X-Total-Count the answer carries, if any.
func (o *answer) total() []string {
	if v := o.w.Header()[hdrTotal]; len(v) == 1 {
		return v
	}
	return nil
}

// startCapture makes the answer capture itself as it streams, when it is
// worth keeping: its request came before (sawLarge).
func (o *answer) startCapture(budget *atomic.Int64) {
	ac := o.cache
	if ac != nil && o.akeyOK && !o.csv && ac.sawLarge(o.akey) {
		o.capt.start(ac.largeMax(), budget, ac.pool)
	}
}

// keepStreamed ends the capture of a streamed answer sent whole: it hands
// the captured chunks to the cache, or notes the request for the next
// time.
func (o *answer) keepStreamed() {
	ac := o.cache
	if ac == nil || !o.akeyOK || o.csv || o.werr != nil {
		o.dropCapture()
		return
	}
	switch k := &o.capt; {
	case k.on:
		parts, n := k.handOver()
		if !ac.put(o.akey, o.acheck, o.owner, kept{parts: parts, n: n, csvKind: o.csvKind}, o.total()) {
			for _, b := range parts {
				ac.give(b)
			}
		}
	case k.tooLarge:
		ac.noteTooLarge(o.akey)
	case !k.tried && !ac.tooLarge(o.akey):
		ac.noteLarge(o.akey)
	}
	o.dropCapture()
}

// dropCapture ends a capture, giving its chunks back.
func (o *answer) dropCapture() { o.capt.drop() }

// capture gathers a streamed answer for the cache, in chunks of
// captureChunk bytes from a pool, counted in a budget shared by every
// capture in flight.
type capture struct {
	on       bool
	tried    bool // a capture was started, even if given up: not noted again
	tooLarge bool // given up past max
	chunks   [][]byte
	n        int   // bytes captured
	held     int64 // bytes counted in budget
	max      int64
	budget   *atomic.Int64
	pool     *chunkPool
}

func (k *capture) start(max int64, budget *atomic.Int64, pool *chunkPool) {
	k.on, k.tried, k.max, k.budget, k.pool = true, true, max, budget, pool
}

// add appends b, a part of the answer as streamed. Past the answer's
// bound or the budget of captures in flight, it gives up and gives back
// what it held.
func (k *capture) add(b []byte) {
	if int64(k.n+len(b)) > k.max {
		k.tooLarge = true
		k.drop()
		return
	}
	for len(b) > 0 {
		last := len(k.chunks) - 1
		if last < 0 || len(k.chunks[last]) == cap(k.chunks[last]) {
			if k.budget.Add(captureChunk) > captureBudget {
				k.budget.Add(-captureChunk)
				k.drop()
				return
			}
			k.held += captureChunk
			k.chunks = append(k.chunks, k.pool.get())
			last++
		}
		c := k.chunks[last]
		m := min(len(b), cap(c)-len(c))
		k.chunks[last] = append(c, b[:m]...)
		b = b[m:]
		k.n += m
	}
}

// handOver ends a capture and returns its chunks and size, which the
// caller owns from now on: the last chunk, when partly filled, is copied
// to its size (the pool gets the chunk back).
func (k *capture) handOver() ([][]byte, int) {
	parts, n := k.chunks, k.n
	if last := len(parts) - 1; last >= 0 && len(parts[last]) < cap(parts[last]) {
		tail := parts[last]
		parts[last] = append([]byte(nil), tail...)
		k.pool.put(tail)
	}
	k.budget.Add(-k.held)
	k.chunks, k.n, k.held, k.on = nil, 0, 0, false
	return parts, n
}

// drop ends a capture and gives its chunks back to the pool and its bytes
// to the budget.
func (k *capture) drop() {
	for i, b := range k.chunks {
		k.pool.put(b)
		k.chunks[i] = nil
	}
	if k.budget != nil {
		k.budget.Add(-k.held)
	}
	k.chunks, k.n, k.held, k.on = k.chunks[:0], 0, 0, false
}

// chunkPool hands out the chunks of size bytes (captureChunk, for
// captured answers; keptPage, for kept ones) that answers are held in,
// and keeps up to maxFree given back for reuse. Its chunks live outside the Go heap where the system
// allows (mapChunk): the collector does not count them, so the answer
// cache's chunks cost the process their size, not twice it. A chunk the
// pool has no room for is unmapped; put takes back only the pool's own
// chunks (by address), never a heap slice of the same capacity. Every
// chunk taken must be given back exactly once, when nothing refers to it
// (the answer entries' references, answerEntry.refs). Safe for
// concurrent use.
type chunkPool struct {
	size    int // bytes of a chunk (0: captureChunk)
	maxFree int // chunks kept for reuse (0: maxFreeChunks)
	mu      sync.Mutex
	free    [][]byte
	mapped  map[*byte]bool // the pool's chunks out of the heap (true) or in it, by address
	made    atomic.Int64   // chunks made (not taken from free)
	out     atomic.Int64   // chunks handed out and not given back
}

// chunkSize is the size of the pool's chunks (captureChunk for nil).
func (p *chunkPool) chunkSize() int {
	if p == nil || p.size == 0 {
		return captureChunk
	}
	return p.size
}

// get returns an empty chunk of capacity chunkSize.
func (p *chunkPool) get() []byte {
	p.out.Add(1)
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return b
	}
	p.mu.Unlock()
	p.made.Add(1)
	b, m := mapChunk(p.chunkSize())
	p.mu.Lock()
	if p.mapped == nil {
		p.mapped = map[*byte]bool{}
	}
	p.mapped[unsafe.SliceData(b[:1])] = m
	p.mu.Unlock()
	return b
}

// put gives b back, when it is one of the pool's chunks: kept for reuse
// while the pool has room, else unmapped (or left to the collector).
func (p *chunkPool) put(b []byte) {
	if p == nil || cap(b) != p.chunkSize() {
		return
	}
	ptr := unsafe.SliceData(b[:1])
	p.mu.Lock()
	m, ours := p.mapped[ptr]
	if !ours {
		p.mu.Unlock()
		return
	}
	p.out.Add(-1)
	maxFree := p.maxFree
	if maxFree == 0 {
		maxFree = maxFreeChunks
	}
	if len(p.free) < maxFree {
		p.free = append(p.free, b[:0])
		p.mu.Unlock()
		return
	}
	delete(p.mapped, ptr)
	p.mu.Unlock()
	if m {
		unmapChunk(b[:cap(b)])
	}
}

// held returns the bytes the pool keeps.
func (p *chunkPool) held() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return int64(len(p.free)) * int64(p.chunkSize())
}
