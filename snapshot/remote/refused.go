// refused.go owns what the Fetcher remembers between fetches, beside the
// local copy: the publication it refused last (.BASE.refused), so that
// it is not downloaded again until the origin publishes another, and the
// SHA-256 of the local copy (.BASE.sha256), so that the same bytes under
// a new ETag are not a change.

package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
)

// refusal describes a publication refused: the validators it was served
// with, its size and digest when known, and why.
type refusal struct {
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	Size         int64  `json:"size"` // bytes; -1: unknown
	SHA256       string `json:"sha256,omitempty"`
	Reason       string `json:"reason"`
	// MaxBytes is the cap a too_large publication was refused under: a
	// larger cap (the flag raised, a larger local copy) may take it.
	MaxBytes int64 `json:"max_bytes,omitempty"`
}

// applies reports whether r still holds under the cap maxBytes.
func (r *refusal) applies(maxBytes int64) bool {
	return r != nil && (r.Reason != ReasonTooLarge || maxBytes <= r.MaxBytes)
}

// matches reports whether an answer with header h and a body of total
// bytes (-1: unknown) is the publication r refused: the same ETag, or,
// without ETags, the same Last-Modified and size.
func (r *refusal) matches(h http.Header, total, maxBytes int64) bool {
	if !r.applies(maxBytes) {
		return false
	}
	if r.ETag != "" {
		return h.Get("ETag") == r.ETag
	}
	return r.LastModified != "" && h.Get("Last-Modified") == r.LastModified && r.Size >= 0 && total == r.Size
}

// readRefusal returns the refusal remembered, nil when there is none.
func (f *Fetcher) readRefusal() *refusal {
	b, err := os.ReadFile(f.side(".refused"))
	if err != nil {
		return nil
	}
	var r refusal
	if json.Unmarshal(b, &r) != nil {
		return nil
	}
	return &r
}

// remember records r as the refusal (replacing the file atomically).
func (f *Fetcher) remember(r refusal) {
	b, _ := json.Marshal(r)
	writeTag(f.side(".refused"), string(b))
}

// localDigest returns the hex SHA-256 of the local copy: from its side
// file, or computed (and then kept) when the side file is missing. "":
// no local copy.
func (f *Fetcher) localDigest() string {
	if d := readTag(f.side(".sha256")); len(d) == sha256.Size*2 {
		return d
	}
	fh, err := os.Open(f.Path)
	if err != nil {
		return ""
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return ""
	}
	d := hex.EncodeToString(h.Sum(nil))
	writeTag(f.side(".sha256"), d)
	return d
}
