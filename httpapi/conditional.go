package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
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

// conditional sets the validators of a GET answer on w and reports
// whether the request's If-None-Match matches them (the caller answers
// 304).
func (a *API) conditional(c *call, w http.ResponseWriter, r *http.Request) bool {
	in := a.info(c.ds)
	sum, live, key := a.answerKey(c, r, in, nil)
	hdr := in.etag(sum)
	etag := hdr[0]
	hd := w.Header()
	hd["Etag"] = hdr
	if live {
		hd["Cache-Control"] = []string{"private, max-age=" + strconv.FormatInt(60-c.now.Add(-QuoteDelay).Unix()%60, 10)}
		hd["Last-Modified"] = []string{time.Unix(key*60, 0).UTC().Format(http.TimeFormat)}
	} else {
		hd["Cache-Control"] = cacheStatic
		hd["Last-Modified"] = in.lastModified
	}
	for _, v := range r.Header["If-None-Match"] {
		if etagListed(v, etag) {
			return true
		}
	}
	return false
}

// answerKey hashes what an answer depends on besides the Dataset: the
// key's plan, the clock's cut-off (see conditional), the path, the query,
// the representation (CSV) and, for a POST, the body. It records the hash
// in c (c.akey, for the answer cache) and returns it with whether the
// cut-off is live (delayed quotes within their delay) and its key.
func (a *API) answerKey(c *call, r *http.Request, in *dsInfo, body []byte) (sum uint64, live bool, key int64) {
	if c.key.Plan == PlanEOD {
		key = int64(sessionDate(c.now))
	} else {
		cutoff := c.now.Add(-QuoteDelay).Unix()
		live = cutoff < in.latestVisible
		key = min(cutoff, in.latestVisible) / 60
	}
	h := &c.hash
	h.Reset()
	h.WriteString(c.key.Plan)
	var kb [8]byte
	for i := range kb {
		kb[i] = byte(key >> (8 * i))
	}
	h.Write(kb[:])
	h.WriteString(r.URL.Path)
	h.WriteString("?")
	h.WriteString(r.URL.RawQuery)
	if c.csv {
		h.WriteString("\x00text/csv") // by Accept: another representation
	}
	if body != nil {
		h.WriteString("\x00")
		h.Write(body)
	}
	sum = h.Sum64()
	c.akey, c.akeyOK = sum, true
	return sum, live, key
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

// etagEntry is one cached ETag header value.
type etagEntry struct {
	sum uint64
	hdr []string // {`"seed-sum"`}; shared, never modified
}

// etag returns the ETag header value of the request hash sum.
func (in *dsInfo) etag(sum uint64) []string {
	slot := &in.etags[sum%etagSlots]
	if e := slot.Load(); e != nil && e.sum == sum {
		return e.hdr
	}
	b := make([]byte, 0, len(in.seed)+20)
	b = append(b, '"')
	b = append(b, in.seed...)
	b = append(b, '-')
	b = strconv.AppendUint(b, sum, 16)
	b = append(b, '"')
	e := &etagEntry{sum: sum, hdr: []string{string(b)}}
	slot.Store(e)
	return e.hdr
}
