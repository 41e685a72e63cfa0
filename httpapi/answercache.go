package httpapi

import (
	"hash/maphash"
	"net/http"
	"sync"
)

// The answer cache. A Dataset never changes, so an answer is a function of
// what answerKey hashes (plan, clock cut-off, path, query, representation,
// body): answers of up to maxCachedAnswer bytes are kept, per Dataset, the
// first time they are encoded, and the same request later is answered
// with the kept bytes (and their compressed forms, made once) without
// running its handler. The bytes kept are bounded by Config.AnswerCacheBytes
// per Dataset (random eviction past it); the cache goes with its Dataset
// on a reload. Streamed answers (over streamChunk) are not kept: their
// handlers already bound their memory. Answers that fail are not kept.

// maxCachedAnswer is the largest answer the cache keeps.
const maxCachedAnswer = 4 << 20

// DefaultAnswerCacheBytes is the default bound of a Dataset's answer cache.
const DefaultAnswerCacheBytes = 128 << 20

// answerCache is one Dataset's cache.
type answerCache struct {
	mu      sync.RWMutex
	entries map[uint64]*answerEntry
	bytes   int64
	limit   int64
}

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

// put keeps a copy of body under key, evicting others past the bound.
func (ac *answerCache) put(key, check uint64, body []byte, total string) {
	if ac.limit <= 0 || len(body) > maxCachedAnswer {
		return
	}
	e := &answerEntry{check: check, ans: cachedAnswer{raw: append([]byte(nil), body...)}}
	if total != "" {
		e.ans.total = []string{total}
	}
	size := int64(len(body)) + 256 // the entry, the map slot, and the compressed forms' headers
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if ac.entries == nil {
		ac.entries = map[uint64]*answerEntry{}
	}
	if old := ac.entries[key]; old != nil {
		ac.bytes -= entrySize(old)
	}
	for k, old := range ac.entries { // random order: random eviction
		if ac.bytes+size <= ac.limit {
			break
		}
		ac.bytes -= entrySize(old)
		delete(ac.entries, k)
	}
	ac.entries[key] = e
	ac.bytes += size
}

// entrySize is what an entry counts against the bound. Compressed forms,
// made on demand, are smaller than the raw answer and not counted: the
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
	total := ""
	if v := w.Header()[hdrTotal]; len(v) == 1 {
		total = v[0]
	}
	in.answers.put(c.akey, c.acheck, body, total)
}
