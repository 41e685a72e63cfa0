package httpapi

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Answers of at least compressMin bytes are compressed when the client
// accepts it (Accept-Encoding: zstd preferred, then gzip); smaller ones
// are not worth the header and the CPU.
const compressMin = 1024 // bytes

// Content codings.
const (
	encIdentity = iota
	encGzip
	encZstd
)

var (
	hdrGzip   = []string{"gzip"}
	hdrZstd   = []string{"zstd"}
	hdrVaryAE = []string{"Accept-Encoding"}
	// hdrVaryAEAccept is the Vary of a route with a CSV form.
	hdrVaryAEAccept = []string{"Accept-Encoding", "Accept"}
)

// negotiate picks the coding of an answer from the Accept-Encoding
// headers: zstd, else gzip, else identity; a coding with q=0 is refused.
func negotiate(r *http.Request) int {
	ae := r.Header["Accept-Encoding"]
	if len(ae) == 0 {
		return encIdentity
	}
	best := encIdentity
	for _, h := range ae {
		for len(h) > 0 {
			var item string
			item, h, _ = strings.Cut(h, ",")
			name, params, _ := strings.Cut(item, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			if q := strings.TrimSpace(params); strings.HasPrefix(q, "q=0") && strings.Trim(q[3:], ".0") == "" {
				continue // q=0, q=0.0, q=0.00: not acceptable
			}
			switch name {
			case "zstd":
				best = encZstd
			case "gzip", "x-gzip":
				best = max(best, encGzip)
			}
		}
	}
	return best
}

// Pooled encoders, at their fastest levels: they compress answers per
// request. Cached answers are compressed once at the best levels
// (compressOnce).
var (
	gzipPool = sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
		return w
	}}
	zstdPool = sync.Pool{New: func() any {
		w, _ := zstd.NewWriter(io.Discard, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		return w
	}}
)

// compressor is a pooled encoder writing to an answer.
type compressor interface {
	io.WriteCloser
	Reset(io.Writer)
}

func getCompressor(enc int, w io.Writer) compressor {
	var z compressor
	if enc == encZstd {
		z = zstdPool.Get().(*zstd.Encoder)
	} else {
		z = gzipPool.Get().(*gzip.Writer)
	}
	z.Reset(w)
	return z
}

func putCompressor(enc int, z compressor) {
	z.Reset(io.Discard)
	if enc == encZstd {
		zstdPool.Put(z)
	} else {
		gzipPool.Put(z)
	}
}

// cachedAnswer is an answer encoded once (per Dataset, or for the life of
// the process), with its compressed forms made on first demand at the
// best compression (they are sent many times). Each form carries its
// Content-Length header value, made once. Its bytes are raw, or, for an
// answer captured as it was streamed, the chunks parts (n bytes in all).
// Nothing in it is modified once it is shared.
type cachedAnswer struct {
	raw    []byte
	parts  [][]byte
	n      int
	total  []string // the X-Total-Count header value of a list answer (nil: none)
	rawLen atomic.Pointer[[]string]
	gz     atomic.Pointer[answerForm]
	zst    atomic.Pointer[answerForm]
	// forms, when set, counts the bytes of the compressed forms made (an
	// answer cache's total); formBytes is this answer's part of it,
	// formsDropped once it no longer counts (evicted).
	forms     *atomic.Int64
	formBytes atomic.Int64
}

// formsDropped marks formBytes of an answer whose forms no longer count.
const formsDropped = -1 << 62

// size returns the answer's length in bytes.
func (c *cachedAnswer) size() int {
	if c.parts != nil {
		return c.n
	}
	return len(c.raw)
}

// each calls fn with the answer's bytes, in order.
func (c *cachedAnswer) each(fn func([]byte)) {
	if c.parts == nil {
		fn(c.raw)
		return
	}
	for _, b := range c.parts {
		fn(b)
	}
}

// flat returns the answer's bytes in one slice (a copy for a captured
// one), not to be modified.
func (c *cachedAnswer) flat() []byte {
	if c.parts == nil {
		return c.raw
	}
	b := make([]byte, 0, c.n)
	for _, p := range c.parts {
		b = append(b, p...)
	}
	return b
}

// length returns the Content-Length header value of the answer
// uncompressed (shared: not to be modified).
func (c *cachedAnswer) length() []string {
	if l := c.rawLen.Load(); l != nil {
		return *l
	}
	l := []string{strconv.Itoa(c.size())}
	c.rawLen.Store(&l)
	return l
}

// dropForms stops counting the answer's compressed forms in forms.
func (c *cachedAnswer) dropForms() {
	if c.forms != nil {
		if n := c.formBytes.Swap(formsDropped); n > 0 {
			c.forms.Add(-n)
		}
	}
}

// answerForm is a compressed form of a cachedAnswer and its Content-Length
// header value.
type answerForm struct {
	b      []byte
	length []string
}

// encoded returns the answer in coding enc, compressing it on first use,
// with its Content-Length header value (shared: not to be modified).
// Identity is for raw answers only (a captured one is sent by parts).
func (c *cachedAnswer) encoded(enc int) ([]byte, []string) {
	var slot *atomic.Pointer[answerForm]
	switch enc {
	case encGzip:
		slot = &c.gz
	case encZstd:
		slot = &c.zst
	default:
		return c.raw, c.length()
	}
	if f := slot.Load(); f != nil {
		return f.b, f.length
	}
	var out strings.Builder
	var z io.WriteCloser
	if enc == encZstd {
		z, _ = zstd.NewWriter(&out, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderConcurrency(1))
	} else {
		z, _ = gzip.NewWriterLevel(&out, gzip.BestCompression)
	}
	c.each(func(b []byte) { z.Write(b) })
	z.Close()
	f := &answerForm{b: []byte(out.String())}
	f.length = []string{strconv.Itoa(len(f.b))}
	if slot.CompareAndSwap(nil, f) && c.forms != nil {
		n := int64(cap(f.b))
		if c.formBytes.Add(n) >= 0 { // not dropped: count it
			c.forms.Add(n)
		}
	}
	f = slot.Load()
	return f.b, f.length
}

// cachedList makes the answer of the call the list held in slot,
// encoding it with enc (which appends to its argument and returns the
// number of items, sent as X-Total-Count) on first use; the call's writer
// sends it (or its compressed form) without a copy. Concurrent first uses
// may both encode; they store the same bytes. It returns dst unchanged.
func cachedList(c *call, dst []byte, slot *atomic.Pointer[cachedAnswer], enc func([]byte) ([]byte, int)) []byte {
	a := slot.Load()
	if a == nil {
		raw, n := enc(nil)
		a = &cachedAnswer{raw: raw, total: []string{strconv.Itoa(n)}}
		slot.Store(a)
	}
	c.out.cached = a
	c.sendTotal(a.total) // shared: no allocation per request (unless paged: Link)
	return dst
}
