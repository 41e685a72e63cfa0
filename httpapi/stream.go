package httpapi

import "net/http"

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
func (c *call) flush(dst []byte) []byte {
	if len(dst) < streamChunk || c.w == nil {
		return dst
	}
	c.emit(dst)
	return dst[:0]
}

// emit writes b, sending the 200 header first if nothing was sent yet. A
// failed write (the client left) is kept in c.werr and later writes are
// skipped; handlers may stop early when c.gone reports it.
func (c *call) emit(b []byte) {
	if c.csv {
		// A CSV answer is made from the whole JSON: keep it, up to the cap.
		if c.werr == nil {
			if len(c.csvSrc)+len(b) > maxCSVSource {
				c.werr = errCSVTooLarge
				return
			}
			c.csvSrc = append(c.csvSrc, b...)
		}
		return
	}
	if !c.streamed {
		c.streamed = true
		hd := c.w.Header()
		hd["Content-Type"] = ctJSON
		hd["X-Content-Type-Options"] = noSniff
		setEncoding(hd, c.enc)
		allowWrite(c.w, c.writeTimeout, -1)
		c.w.WriteHeader(http.StatusOK)
		if c.enc != encIdentity {
			c.z = getCompressor(c.enc, c.w)
		}
	}
	if c.capturing {
		c.capture(b)
	}
	if c.werr == nil && len(b) > 0 {
		var n int
		var err error
		if c.z != nil {
			n, err = c.z.Write(b)
		} else {
			n, err = c.w.Write(b)
		}
		c.sent += int64(n)
		c.werr = err
	}
}

// finish ends a streamed answer: it flushes and returns the compressor.
func (c *call) finish() {
	if c.z != nil {
		if c.werr == nil {
			c.werr = c.z.Close()
		}
		putCompressor(c.enc, c.z)
		c.z = nil
	}
}

// gone reports whether writing the answer failed: encoding more is waste.
func (c *call) gone() bool { return c.werr != nil }
