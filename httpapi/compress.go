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

// cachedAnswer is an answer encoded once per Dataset, with its compressed
// forms made on first demand at the best compression (they are sent many
// times). Each form carries its Content-Length header value, made once.
type cachedAnswer struct {
	raw    []byte
	total  []string // the X-Total-Count header value of a list answer (nil: none)
	rawLen atomic.Pointer[[]string]
	gz     atomic.Pointer[answerForm]
	zst    atomic.Pointer[answerForm]
}

// answerForm is a compressed form of a cachedAnswer and its Content-Length
// header value.
type answerForm struct {
	b      []byte
	length []string
}

// encoded returns the answer in coding enc, compressing it on first use,
// with its Content-Length header value (shared: not to be modified).
func (c *cachedAnswer) encoded(enc int) ([]byte, []string) {
	var slot *atomic.Pointer[answerForm]
	switch enc {
	case encGzip:
		slot = &c.gz
	case encZstd:
		slot = &c.zst
	default:
		if l := c.rawLen.Load(); l != nil {
			return c.raw, *l
		}
		l := []string{strconv.Itoa(len(c.raw))}
		c.rawLen.Store(&l)
		return c.raw, l
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
	z.Write(c.raw)
	z.Close()
	f := &answerForm{b: []byte(out.String())}
	f.length = []string{strconv.Itoa(len(f.b))}
	slot.Store(f)
	return f.b, f.length
}

// cachedList is cachedBody for a list answer: enc also returns the
// number of items, sent as X-Total-Count.
func cachedList(c *call, dst []byte, slot *atomic.Pointer[cachedAnswer], enc func([]byte) ([]byte, int)) []byte {
	a := slot.Load()
	if a == nil {
		raw, n := enc(nil)
		a = &cachedAnswer{raw: raw, total: []string{strconv.Itoa(n)}}
		slot.Store(a)
	}
	c.cached = a
	if c.w != nil {
		c.w.Header()[hdrTotal] = a.total // shared: no allocation per request
	}
	return dst
}

// cachedBody makes the answer of the call the one held in slot, encoding
// it with enc (which appends to its argument) on first use; the call's
// writer sends it (or its compressed form) without a copy. Concurrent
// first uses may both encode; they store the same bytes. It returns dst
// unchanged.
func cachedBody(c *call, dst []byte, slot *atomic.Pointer[cachedAnswer], enc func([]byte) []byte) []byte {
	a := slot.Load()
	if a == nil {
		a = &cachedAnswer{raw: enc(nil)}
		slot.Store(a)
	}
	c.cached = a
	return dst
}
