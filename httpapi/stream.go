package httpapi

import (
	"net/http"
	"strconv"
)

// Answers larger than streamChunk are written to the client in chunks as
// they are encoded, so the memory of one request is bounded whatever the
// size of its answer (a batch of 500 full histories is ~470 MB of JSON).
//
// The budget of one request, documented in docs/api.md: the body cap,
// streamChunk plus the largest single item a handler encodes between two
// flushes (one ticker's answer, one cash action), and, for batches
// encoded by two goroutines, seriesGroup items per goroutine.
const streamChunk = 256 << 10 // bytes

// flush writes dst to the client when it holds at least streamChunk bytes
// and returns what the handler keeps appending to: dst[:0] after a write,
// dst otherwise. Handlers call it between items, only once every check
// that can fail the request is done: after the first write the status is
// 200 and can no longer change.
//
// It is also the answer's yield point: a long answer (a batch of
// tickers, a total return) gives the processor to other goroutines
// every yieldpoint.Every while computing requests hold every processor.
func (c *call) flush(dst []byte) []byte {
	c.yp.Yield()
	if len(dst) < streamChunk || !c.out.streams() {
		return dst
	}
	c.out.emit(dst)
	return dst[:0]
}

// gone reports whether writing the answer failed (the client left):
// encoding more is waste.
func (c *call) gone() bool { return c.out.werr != nil }

// setTotal sends the size of the whole list (X-Total-Count), before the
// body starts, and the links to its other pages (pageLinks).
func (c *call) setTotal(n int) { c.sendTotal([]string{strconv.Itoa(n)}) }

// sendTotal sends total (a shared X-Total-Count value) and the links to
// the list's other pages.
func (c *call) sendTotal(total []string) {
	c.out.setTotal(total)
	if c.out.w == nil {
		return
	}
	if l := pageLinks(c.out.r, c.route, total[0]); l != nil {
		c.out.w.Header()[hdrLink] = l
	}
}

// streams reports whether the answer can be streamed: it has a writer
// (tests call handlers without one).
func (o *answer) streams() bool { return o.w != nil }

// setTotal sets the X-Total-Count of a list answer (a shared value).
func (o *answer) setTotal(v []string) {
	if o.w != nil {
		o.w.Header()[hdrTotal] = v
	}
}

// emit writes b, sending the 200 header first if nothing was sent yet. A
// failed write (the client left) is kept in o.werr and later writes are
// skipped; handlers may stop early when gone reports it. A CSV answer is
// gathered whole instead (it is made from the whole JSON), up to its cap.
func (o *answer) emit(b []byte) {
	if o.csv {
		if o.werr == nil {
			if len(o.csvSrc)+len(b) > maxCSVSource {
				o.werr = errCSVTooLarge
				return
			}
			o.csvSrc = append(o.csvSrc, b...)
		}
		return
	}
	if !o.streamed {
		o.streamed = true
		o.jsonHeaders()
		setEncoding(o.w.Header(), o.enc, o.weak)
		allowWrite(o.w, o.writeTimeout, -1)
		o.w.WriteHeader(http.StatusOK)
		if o.enc != encIdentity {
			o.z = getCompressor(o.enc, o.w)
		}
	}
	if o.capt.on {
		o.capt.add(b)
	}
	if o.werr == nil && len(b) > 0 {
		var n int
		var err error
		if o.z != nil {
			n, err = o.z.Write(b)
		} else {
			n, err = o.w.Write(b)
		}
		o.sent += int64(n)
		o.werr = err
	}
}

// finish ends a streamed answer: it flushes and returns the compressor.
func (o *answer) finish() {
	if o.z != nil {
		if o.werr == nil {
			o.werr = o.z.Close()
		}
		putCompressor(o.enc, o.z)
		o.z = nil
	}
}
