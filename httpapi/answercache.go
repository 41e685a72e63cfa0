package httpapi

import (
	"hash/maphash"
	"net/http"
	"sync"
	"sync/atomic"
)

// The answer cache. A Dataset never changes, so an answer is a function of
// what answerKey hashes (plan, clock cut-off, path, query, representation,
// body): answers of up to maxCachedAnswer bytes are kept, per Dataset, the
// first time they are encoded, and the same request later is answered
// with the kept bytes (and their compressed forms, made once) without
// running its handler. The bytes kept are bounded by Config.AnswerCacheBytes
// per Dataset (random eviction past it); the cache goes with its Dataset
// on a reload. Answers that fail are not kept.
//
// Large answers. An answer over maxCachedAnswer is streamed, never built
// whole, so it is not kept the first time. The cache notes its key (the
// doorkeeper, seenSlots keys); when the same request comes back, its
// answer is also captured as it is streamed, up to largeMax bytes, and
// kept: from the third time on it is sent with one write of the kept
// bytes, like any kept answer. One-off large answers (the usual research
// download) therefore never displace the small answers. Large answers
// hold at most half of the bound (a large answer evicts large ones
// first), and the bytes captured by requests in flight are bounded by
// captureBudget, whatever their number. Their compressed forms are not
// kept: a compressed request compresses the kept bytes as it sends them.

// maxCachedAnswer is the largest answer the cache keeps.
const maxCachedAnswer = 4 << 20

// DefaultAnswerCacheBytes is the default bound of a Dataset's answer cache.
const DefaultAnswerCacheBytes = 128 << 20

// seenSlots is the size of the doorkeeper of large answers.
const seenSlots = 256

// captureBudget bounds the bytes held by the captures of large answers in
// flight, over every request of the API.
const captureBudget = 128 << 20

// answerCache is one Dataset's cache.
type answerCache struct {
	mu      sync.RWMutex
	entries map[uint64]*answerEntry
	bytes   int64 // kept, as entrySize counts them
	large   int64 // of which large answers (over maxCachedAnswer)
	limit   int64
	seen    [seenSlots]atomic.Uint64 // keys of large answers sent once (doorkeeper)
}

// largeMax is the largest answer the cache keeps: a quarter of its bound
// (maxCachedAnswer at least).
func (ac *answerCache) largeMax() int64 { return max(ac.limit/4, maxCachedAnswer) }

// sawLarge reports whether the large answer of key was sent before (the
// doorkeeper holds its key): it is worth keeping.
func (ac *answerCache) sawLarge(key uint64) bool {
	return key != 0 && ac.seen[key%seenSlots].Load() == key
}

// noteLarge remembers that the large answer of key was sent once.
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
	check uint64
	ans   cachedAnswer // with the X-Total-Count of a paginated list
}

var checkSeed = maphash.MakeSeed()

// checkOf is the second hash of a request (see answerEntry).
func checkOf(c *call, r *http.Request, body []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(checkSeed)
	h.WriteString(c.key.Plan)
	h.WriteString(r.URL.Path)
	h.WriteString("?")
	h.WriteString(r.URL.RawQuery)
	if c.csv {
		h.WriteString("\x00csv")
	}
	h.Write(body)
	return h.Sum64()
}

// get returns the entry of key, if kept and matching check.
func (ac *answerCache) get(key, check uint64) *answerEntry {
	ac.mu.RLock()
	e := ac.entries[key]
	ac.mu.RUnlock()
	if e == nil || e.check != check {
		return nil
	}
	return e
}

// put keeps a copy of body under key, evicting others past the bound. A
// large answer (over maxCachedAnswer) is kept up to largeMax, within half
// of the bound.
func (ac *answerCache) put(key, check uint64, body []byte, total string) {
	large := isLarge(body)
	if ac.limit <= 0 || int64(len(body)) > ac.largeMax() {
		return
	}
	e := &answerEntry{check: check, ans: cachedAnswer{raw: append([]byte(nil), body...)}}
	if total != "" {
		e.ans.total = []string{total}
	}
	size := entrySize(e)
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if ac.entries == nil {
		ac.entries = map[uint64]*answerEntry{}
	}
	if old := ac.entries[key]; old != nil {
		ac.remove(key, old)
	}
	if large {
		for k, old := range ac.entries { // random order: random eviction
			if ac.large+size <= ac.limit/2 {
				break
			}
			if isLarge(old.ans.raw) {
				ac.remove(k, old)
			}
		}
	}
	for k, old := range ac.entries {
		if ac.bytes+size <= ac.limit {
			break
		}
		ac.remove(k, old)
	}
	ac.entries[key] = e
	ac.bytes += size
	if large {
		ac.large += size
	}
}

// remove drops the entry e of key; ac.mu is held.
func (ac *answerCache) remove(key uint64, e *answerEntry) {
	ac.bytes -= entrySize(e)
	if isLarge(e.ans.raw) {
		ac.large -= entrySize(e)
	}
	delete(ac.entries, key)
}

// isLarge reports whether an answer is large: streamed when made, kept
// only on its second request, without its compressed forms.
func isLarge(raw []byte) bool { return len(raw) > maxCachedAnswer }

// entrySize is what an entry counts against the bound: the raw answer
// plus 256 bytes for the entry, its map slot and the compressed forms'
// headers. Compressed forms, made on demand for answers up to
// maxCachedAnswer, are smaller than the raw answer and not counted: the
// bound is on the raw bytes (at most twice that in memory with them).
func entrySize(e *answerEntry) int64 { return int64(len(e.ans.raw)) + 256 }

// size returns the bytes kept and the number of entries.
func (ac *answerCache) size() (int64, int) {
	ac.mu.RLock()
	defer ac.mu.RUnlock()
	return ac.bytes, len(ac.entries)
}

// serveKept answers from the cache when it holds the request's answer.
func (a *API) serveKept(c *call, w http.ResponseWriter, r *http.Request, in *dsInfo) bool {
	if !c.akeyOK {
		return false
	}
	c.acheck = checkOf(c, r, c.body)
	e := in.answers.get(c.akey, c.acheck)
	if e == nil {
		return false
	}
	if e.ans.total != nil {
		w.Header()[hdrTotal] = e.ans.total
	}
	c.cached = &e.ans
	a.m.answerHits.Inc()
	return true
}

// keep stores the answer just made, when it may be kept.
func (a *API) keep(c *call, w http.ResponseWriter, in *dsInfo, body []byte) {
	if !c.akeyOK || c.streamed || c.cached != nil {
		return
	}
	in.answers.put(c.akey, c.acheck, body, totalOf(w))
}

func totalOf(w http.ResponseWriter) string {
	if v := w.Header()[hdrTotal]; len(v) == 1 {
		return v[0]
	}
	return ""
}

// startCapture makes c capture its answer as it streams it, when the
// answer is worth keeping: its request came before (sawLarge).
func (a *API) startCapture(c *call, in *dsInfo) {
	if c.akeyOK && !c.csv && in.answers.sawLarge(c.akey) {
		c.capturing, c.capMax, c.capBudget = true, in.answers.largeMax(), &a.captured
	}
}

// keepStreamed ends the capture of a streamed answer sent whole: it keeps
// the captured answer, or notes the request for the next time.
func (a *API) keepStreamed(c *call, w http.ResponseWriter, in *dsInfo) {
	if !c.akeyOK || c.csv || c.werr != nil {
		return
	}
	switch {
	case c.capturing:
		in.answers.put(c.akey, c.acheck, c.capBuf, totalOf(w))
	case c.capTooLarge:
		in.answers.noteTooLarge(c.akey)
	case c.capBudget == nil && !in.answers.tooLarge(c.akey):
		in.answers.noteLarge(c.akey)
	}
	c.dropCapture()
}

// capture appends b, a part of the answer as streamed, to the captured
// answer. Past the answer's bound (capMax) or the budget of captures in
// flight, it gives up and frees what it held.
func (c *call) capture(b []byte) {
	if need := len(c.capBuf) + len(b); need > cap(c.capBuf) {
		if int64(need) > c.capMax {
			c.capTooLarge = true
			c.dropCapture()
			return
		}
		n := int64(min(max(2*cap(c.capBuf), need, 1<<20), int(c.capMax)))
		if c.capBudget.Add(n-c.capHeld) > captureBudget {
			c.capBudget.Add(c.capHeld - n)
			c.dropCapture()
			return
		}
		c.capHeld = n
		c.capBuf = append(make([]byte, 0, n), c.capBuf...)
	}
	c.capBuf = append(c.capBuf, b...)
}

// dropCapture ends a capture and returns its bytes to the budget. A
// capture given up keeps capBudget set, so that the request is not noted
// again as one to keep.
func (c *call) dropCapture() {
	if c.capBudget != nil {
		c.capBudget.Add(-c.capHeld)
	}
	c.capturing, c.capBuf, c.capHeld = false, nil, 0
}
