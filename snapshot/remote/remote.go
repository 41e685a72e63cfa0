// Package remote fetches a snapshot file published at an http(s) URL into
// a local file that a server loads: conditionally (If-None-Match with the
// ETag of the local copy, so an unchanged snapshot costs one 304),
// resumably (a partial download continues with Range and If-Range after a
// failure or a restart), verified whole (header, sections and column
// blocks: Verify) before it replaces the local copy, and atomically (rename; the local copy
// is either the old file or the new one, whole).
//
// Downloads are bounded: in size (Fetcher.MaxBytes, by default four times
// the local copy), by the free space they leave (Fetcher.MinFree, checked
// before and during), and in time without progress
// (Fetcher.StallTimeout). Redirects stay on the URL's host unless
// allowed. A publication refused is remembered and not downloaded again
// while the origin serves it. Errors say why (FetchError.Reason) and never
// hold a URL's query string or credentials (Redact).
//
// Files beside the local copy PATH: .BASE.part (the download in progress),
// .BASE.part.etag (the ETag it belongs to), .BASE.etag (the ETag of PATH),
// .BASE.sha256 (the SHA-256 of PATH) and .BASE.refused (the publication
// refused last). A Fetcher is not safe for concurrent use; one process at
// a time should fetch to one PATH. It imports only the snapshot format and
// internal/atomicfile of this module.
package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pregao/pregao/internal/atomicfile"
	"github.com/pregao/pregao/snapshot"
)

// IsURL reports whether s names a remote snapshot (http://, https:// or
// s3://) rather than a local path.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "s3://")
}

// Fetcher fetches URL into Path.
type Fetcher struct {
	URL    string       // http://, https:// or s3://BUCKET/KEY (see s3.go)
	Path   string       // the local copy
	Client *http.Client // nil: a client with a 10-minute timeout; its CheckRedirect is replaced
	// Retries is how many times a failed attempt (network error, 5xx,
	// truncated or stalled body) is retried, with a doubling backoff from
	// RetryDelay (defaults 3 and 1s; a negative Retries: none).
	Retries    int
	RetryDelay time.Duration

	// MaxBytes caps a download, in bytes: an answer whose Content-Length
	// (or Content-Range size) is larger is refused before its body is
	// read, and a body that grows past it is cut and removed. 0: four
	// times the local copy's size, at least MinAutoMaxBytes; without a
	// local copy (the first fetch), FirstMaxBytes.
	MaxBytes int64
	// MinFree is the free space, in bytes, a download leaves on the local
	// copy's file system: an answer whose Content-Length would leave less
	// is refused before its body is read, and a download is stopped (and
	// removed) when less is left, checked every 8 MiB. 0: 64 MiB. Where
	// the free space is not known (see FreeSpace), only MaxBytes and a
	// write failing for want of space bound a download.
	MinFree int64
	// FreeSpace returns the bytes free on the file system of dir, false
	// when unknown. nil: statfs(2) on Linux, macOS, FreeBSD and
	// DragonFly; unknown elsewhere. Tests replace it.
	FreeSpace func(dir string) (int64, bool)
	// StallTimeout stops an attempt that receives no byte for this long,
	// waiting for the answer's headers included (0: 60s). A stalled
	// download is retried, resumed where it stopped.
	StallTimeout time.Duration
	// CrossHostRedirects lets a redirect lead to another host than the
	// URL's; without it such a redirect is refused (ReasonRedirect). A
	// redirect on the same host is followed; one from https to http never.
	CrossHostRedirects bool
	// Progress, when not nil, is told how far a download is: once when
	// its body starts (done: the bytes held already, a resumed part's;
	// total: the whole file's size, -1 when the answer does not say),
	// then after each read (done only; total as before), and with done
	// -1 once the download is whole and being verified (Verify). It is
	// called from Fetch's goroutine.
	Progress func(done, total int64)
}

// Defaults of the Fetcher's bounds.
const (
	// FirstMaxBytes is the default cap of a download with no local copy.
	FirstMaxBytes = 8 << 30
	// MinAutoMaxBytes is the least default cap (4× a small local copy is
	// too little for a publication that grew).
	MinAutoMaxBytes = 256 << 20
	defaultMinFree  = 64 << 20
	defaultStall    = 60 * time.Second
	// freeCheckEvery is how many bytes are written between two checks of
	// the free space.
	freeCheckEvery = 8 << 20
)

// ErrVerify wraps a downloaded file that is not a valid snapshot: it is
// deleted and the local copy is kept.
var ErrVerify = errors.New("remote: downloaded snapshot does not verify")

// Fetch brings Path up to date with URL and reports whether Path changed.
// On any error Path is left as it was, and the error is a *FetchError
// (ReasonOf) whose message holds no query string nor credentials.
//
// A publication refused (it did not verify, or was larger than
// MaxBytes) is remembered by its ETag (or Last-Modified and size) and
// SHA-256, and is not downloaded again while the origin serves it: Fetch
// then reports no change and no error. The same bytes as the local copy
// under another ETag are no change either: the new ETag is kept, so that
// the next check costs a 304.
func (f *Fetcher) Fetch(ctx context.Context) (changed bool, err error) {
	if !IsURL(f.URL) {
		return false, failure(ReasonConfig, fmt.Errorf("remote: %q: want an http://, https:// or s3:// location", Redact(f.URL)))
	}
	if _, err := url.Parse(f.URL); err != nil {
		return false, failure(ReasonConfig, fmt.Errorf("remote: %s: %w", Redact(f.URL), err))
	}
	retries, delay := f.Retries, f.RetryDelay
	if retries == 0 {
		retries = 3
	}
	if delay == 0 {
		delay = time.Second
	}
	for attempt := 0; ; attempt++ {
		changed, err = f.attempt(ctx)
		var perm *permanentError
		if err == nil || errors.As(err, &perm) || attempt >= retries || ctx.Err() != nil {
			if perm != nil {
				err = perm.err
			}
			if err != nil {
				err = failure(classify(ctx, ctx, err), err)
			}
			return changed, err
		}
		select {
		case <-ctx.Done():
			return false, failure(classify(ctx, ctx, ctx.Err()), fmt.Errorf("remote: %s: %w", Redact(f.URL), ctx.Err()))
		case <-time.After(delay << attempt):
		}
	}
}

// permanentError is a failure that retrying does not change (4xx, too
// large, no space, refused redirect, a file that does not verify).
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// permanent returns a permanentError of a FetchError of reason for err.
func permanent(reason string, err error) error {
	return &permanentError{failure(reason, err)}
}

// client returns the client of a fetch: f.Client (or the default one)
// with f's redirect policy.
func (f *Fetcher) client() *http.Client {
	c := http.Client{Timeout: 10 * time.Minute}
	if f.Client != nil {
		c = *f.Client
	}
	c.CheckRedirect = f.checkRedirect
	return &c
}

// checkRedirect follows a redirect on the URL's own host (at most 10);
// another host only with CrossHostRedirects; never from https to http.
func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	from := via[0].URL
	switch {
	case len(via) >= 10:
		return &redirectError{fmt.Sprintf("remote: %s: stopped after 10 redirects", Redact(from.String()))}
	case from.Scheme == "https" && req.URL.Scheme != "https":
		return &redirectError{fmt.Sprintf("remote: %s: redirect from https to %s refused", Redact(from.String()), Redact(req.URL.String()))}
	case !f.CrossHostRedirects && !strings.EqualFold(req.URL.Host, from.Host):
		return &redirectError{fmt.Sprintf("remote: %s: redirect to another host (%s) refused (allow it with the cross-host redirects setting)", Redact(from.String()), req.URL.Host)}
	}
	return nil
}

// maxBytes returns the cap of a download (see MaxBytes).
func (f *Fetcher) maxBytes() int64 {
	if f.MaxBytes > 0 {
		return f.MaxBytes
	}
	st, err := os.Stat(f.Path)
	if err != nil {
		return FirstMaxBytes
	}
	return max(4*st.Size(), MinAutoMaxBytes)
}

func (f *Fetcher) minFree() int64 {
	if f.MinFree > 0 {
		return f.MinFree
	}
	return defaultMinFree
}

func (f *Fetcher) stallTimeout() time.Duration {
	if f.StallTimeout > 0 {
		return f.StallTimeout
	}
	return defaultStall
}

// free returns the bytes free beside the local copy (false: unknown).
func (f *Fetcher) free() (int64, bool) {
	dir := filepath.Dir(f.Path)
	if f.FreeSpace != nil {
		return f.FreeSpace(dir)
	}
	return diskFree(dir)
}

func (f *Fetcher) side(suffix string) string {
	return filepath.Join(filepath.Dir(f.Path), "."+filepath.Base(f.Path)+suffix)
}

// attempt is one conditional, possibly resumed, download.
func (f *Fetcher) attempt(ctx context.Context) (bool, error) {
	part, partTag, curTag := f.side(".part"), f.side(".part.etag"), f.side(".etag")
	where := Redact(f.URL)
	get, err := resolve(ctx, f.URL)
	if err != nil {
		return false, permanent(ReasonConfig, err)
	}
	stall := f.stallTimeout()
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchdog := time.AfterFunc(stall, func() { cancel(errStalled) })
	defer watchdog.Stop()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, get, nil)
	if err != nil {
		return false, permanent(ReasonConfig, fmt.Errorf("remote: %s: %w", where, err))
	}
	_, statErr := os.Stat(f.Path)
	haveCopy := statErr == nil
	maxBytes := f.maxBytes()
	var refused *refusal
	if haveCopy { // without a local copy, a refused publication is tried again
		refused = f.readRefusal()
		var tags []string
		if tag := readTag(curTag); tag != "" {
			tags = append(tags, tag)
		}
		if refused.applies(maxBytes) && refused.ETag != "" {
			tags = append(tags, refused.ETag)
		}
		if len(tags) > 0 {
			req.Header.Set("If-None-Match", strings.Join(tags, ", "))
		}
	}
	var have int64
	if st, err := os.Stat(part); err == nil && st.Size() > 0 {
		if tag := readTag(partTag); tag != "" && !strings.HasPrefix(tag, "W/") {
			have = st.Size()
			req.Header.Set("Range", "bytes="+strconv.FormatInt(have, 10)+"-")
			req.Header.Set("If-Range", tag)
		} else {
			removeAll(part, partTag) // cannot be resumed
		}
	}
	resp, err := f.client().Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = Redact(ue.URL) // a presigned URL's query holds credentials
		}
		if reason := classify(ctx, actx, err); reason == ReasonRedirect || reason == ReasonTimeout {
			return false, permanent(reason, err)
		}
		return false, failure(classify(ctx, actx, err), err)
	}
	defer resp.Body.Close()
	watchdog.Reset(stall)
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	total := int64(-1) // the whole file's bytes
	switch resp.StatusCode {
	case http.StatusNotModified:
		return false, nil
	case http.StatusOK:
		if have > 0 {
			// The part held is another publication's: it goes before the
			// new one's ETag is written beside it, so that a crash
			// between the two never leaves its bytes under that ETag (a
			// resume would append the new publication's to them).
			removeAll(part)
		}
		have = 0
		total = resp.ContentLength
	case http.StatusPartialContent:
		start, size, ok := contentRange(resp.Header.Get("Content-Range"))
		if have == 0 || !ok || start != have {
			removeAll(part, partTag)
			return false, failure(ReasonStatus, fmt.Errorf("remote: %s: Content-Range %q does not continue the %d bytes held", where, resp.Header.Get("Content-Range"), have))
		}
		total = size
		flags = os.O_WRONLY | os.O_APPEND
	default:
		err := failure(ReasonStatus, fmt.Errorf("remote: %s: %s", where, resp.Status))
		if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests {
			return false, &permanentError{err}
		}
		return false, err
	}
	tag := resp.Header.Get("ETag")
	if refused.matches(resp.Header, total, maxBytes) {
		return false, nil // refused before: not downloaded again
	}
	if total > maxBytes {
		removeAll(part, partTag)
		f.remember(refusal{ETag: tag, LastModified: resp.Header.Get("Last-Modified"), Size: total, Reason: ReasonTooLarge, MaxBytes: maxBytes})
		return false, permanent(ReasonTooLarge, fmt.Errorf("remote: %s: %d bytes, over the cap of %d", where, total, maxBytes))
	}
	if resp.ContentLength > 0 {
		if free, ok := f.free(); ok && free-resp.ContentLength < f.minFree() {
			removeAll(part, partTag)
			return false, permanent(ReasonNoSpace, fmt.Errorf("remote: %s: %d bytes to download, %d free beside %s (at least %d must stay free)", where, resp.ContentLength, free, f.Path, f.minFree()))
		}
	}
	if err := writeTag(partTag, tag); err != nil {
		return false, permanent(ReasonLocal, err)
	}
	if partTagged != nil {
		partTagged(part)
	}
	out, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return false, permanent(ReasonLocal, err)
	}
	digest := sha256.New()
	if have > 0 {
		if err := hashFile(digest, part, have); err != nil {
			out.Close()
			removeAll(part, partTag)
			return false, permanent(ReasonLocal, err)
		}
	}
	if f.Progress != nil {
		f.Progress(have, total)
	}
	n, err := f.copyBody(out, digest, resp.Body, have, maxBytes, watchdog, stall, total)
	if err == nil {
		err = out.Sync()
		if err != nil {
			err = failure(ReasonLocal, err)
		}
	}
	if cerr := out.Close(); err == nil && cerr != nil {
		err = failure(ReasonLocal, cerr)
	}
	if err != nil {
		reason := ReasonOf(err) // copyBody's own
		if reason == "" {
			reason = classify(ctx, actx, err)
			if reason == ReasonNetwork && errors.Is(err, io.ErrUnexpectedEOF) {
				reason = ReasonTruncated
			}
		}
		err = failure(reason, fmt.Errorf("remote: %s: after %d bytes: %w", where, have+n, err))
		switch reason {
		case ReasonTooLarge:
			removeAll(part, partTag)
			f.remember(refusal{ETag: tag, LastModified: resp.Header.Get("Last-Modified"), Size: -1, Reason: ReasonTooLarge, MaxBytes: maxBytes})
			return false, &permanentError{err}
		case ReasonNoSpace, ReasonLocal:
			removeAll(part, partTag)
			return false, &permanentError{err}
		case ReasonTimeout:
			return false, &permanentError{err}
		}
		return false, err // the part is resumed by the next attempt
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return false, failure(ReasonTruncated, fmt.Errorf("remote: %s: %d of %d bytes", where, n, resp.ContentLength))
	}
	sum := hex.EncodeToString(digest.Sum(nil))
	if haveCopy && sum == f.localDigest() {
		// The same bytes under another ETag: no change; keep the ETag so
		// that the next check is a 304.
		removeAll(part, partTag)
		return false, writeTagErr(curTag, tag)
	}
	size := have + n
	if refused != nil && refused.SHA256 == sum {
		removeAll(part, partTag)
		f.remember(refusal{ETag: tag, LastModified: resp.Header.Get("Last-Modified"), Size: size, SHA256: sum, Reason: refused.Reason})
		return false, permanent(ReasonVerify, fmt.Errorf("%w: %s: the same bytes as the publication refused before (%s)", ErrVerify, where, refused.Reason))
	}
	if f.Progress != nil {
		f.Progress(-1, size)
	}
	if err := verify(part); err != nil {
		removeAll(part, partTag)
		if !badFile(err) {
			// The download could not be read here (no file descriptor
			// or memory left, an I/O error): not the publication's
			// fault, so it is not remembered as refused.
			return false, permanent(ReasonLocal, fmt.Errorf("remote: %s: verifying the download: %w", where, err))
		}
		if have > 0 {
			// Resumed: the bytes held before may not be this
			// publication's (a part left by a crash, or an origin that
			// kept an ETag for new bytes). Downloaded whole by the next
			// attempt before the publication is refused.
			return false, failure(ReasonVerify, fmt.Errorf("%w: %s: resumed after %d bytes: %v; downloading it whole", ErrVerify, where, have, err))
		}
		f.remember(refusal{ETag: tag, LastModified: resp.Header.Get("Last-Modified"), Size: size, SHA256: sum, Reason: ReasonVerify})
		return false, permanent(ReasonVerify, fmt.Errorf("%w: %s: %v", ErrVerify, where, err))
	}
	os.Remove(f.side(".sha256")) // the old copy's: never left beside the new one
	if err := os.Rename(part, f.Path); err != nil {
		return false, permanent(ReasonLocal, err)
	}
	os.Remove(partTag)
	writeTag(f.side(".sha256"), sum)
	if err := writeTag(curTag, tag); err != nil {
		return true, failure(ReasonLocal, err)
	}
	if err := syncDir(filepath.Dir(f.Path)); err != nil {
		return true, failure(ReasonLocal, err)
	}
	return true, nil
}

// partTagged, when set (tests), is called with the part's path once the
// ETag of the download is written beside it, before the part is opened.
var partTagged func(part string)

// copyBody copies body to out and digest, have bytes being held already:
// it stops the body at maxBytes (ReasonTooLarge), when the file system's
// free space falls under MinFree (ReasonNoSpace), on a write error
// (ReasonLocal, or ReasonNoSpace) and on a read error (returned as it
// is); each byte received renews watchdog. It returns the bytes copied.
func (f *Fetcher) copyBody(out io.Writer, digest hash.Hash, body io.Reader, have, maxBytes int64, watchdog *time.Timer, stall time.Duration, total int64) (int64, error) {
	buf := make([]byte, 64<<10)
	var n int64
	nextCheck := int64(freeCheckEvery)
	for {
		k, rerr := body.Read(buf)
		if k > 0 {
			watchdog.Reset(stall)
			if have+n+int64(k) > maxBytes {
				return n, failure(ReasonTooLarge, fmt.Errorf("the body passed the cap of %d bytes", maxBytes))
			}
			if _, err := out.Write(buf[:k]); err != nil {
				if errors.Is(err, syscall.ENOSPC) {
					return n, failure(ReasonNoSpace, err)
				}
				return n, failure(ReasonLocal, err)
			}
			digest.Write(buf[:k])
			n += int64(k)
			if f.Progress != nil {
				f.Progress(have+n, total)
			}
			if n >= nextCheck {
				nextCheck += freeCheckEvery
				if free, ok := f.free(); ok && free < f.minFree() {
					return n, failure(ReasonNoSpace, fmt.Errorf("%d bytes free beside %s, under the %d that must stay free", free, f.Path, f.minFree()))
				}
			}
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

// hashFile writes the first n bytes of the file at path to h.
func hashFile(h io.Writer, path string, n int64) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	_, err = io.CopyN(h, fh, n)
	return err
}

// removeAll removes the files named, ignoring those missing.
func removeAll(paths ...string) {
	for _, p := range paths {
		os.Remove(p)
	}
}

// writeTagErr is writeTag, its error a FetchError.
func writeTagErr(path, tag string) error {
	if err := writeTag(path, tag); err != nil {
		return failure(ReasonLocal, err)
	}
	return nil
}

// Verify checks the snapshot file at path whole, as a server's reload
// does before it publishes one, but without indexing it: its header,
// every section (checksum and contents) and, in a format 6 file, every
// column block, read from the file (snapshot.VerifyFile). A damaged
// block found only once the file served would have replaced the good
// local copy.
func Verify(path string) error {
	return snapshot.VerifyFile(path)
}

// verify is Verify (tests replace it).
var verify = Verify

// badFile reports whether err, Verify's, says that the file is not a
// valid snapshot (its bytes: checksums, format, version, length), rather
// than that it could not be read.
func badFile(err error) bool {
	return errors.Is(err, snapshot.ErrChecksum) || errors.Is(err, snapshot.ErrFormat) ||
		errors.Is(err, snapshot.ErrVersion) || errors.Is(err, snapshot.ErrTruncated)
}

// contentRange parses "bytes START-END/SIZE": START, and SIZE (-1 for
// "*").
func contentRange(cr string) (start, size int64, ok bool) {
	rest, ok := strings.CutPrefix(cr, "bytes ")
	if !ok {
		return 0, 0, false
	}
	rng, sz, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, 0, false
	}
	first, _, ok := strings.Cut(rng, "-")
	if !ok {
		return 0, 0, false
	}
	start, err := strconv.ParseInt(first, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	size = -1
	if sz != "*" {
		if size, err = strconv.ParseInt(sz, 10, 64); err != nil {
			return 0, 0, false
		}
	}
	return start, size, true
}

func readTag(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// writeTag replaces path with tag atomically (removes it when tag is "").
func writeTag(path, tag string) error {
	if tag == "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	return atomicfile.WriteFile(path, 0o644, func(w io.Writer) error {
		_, err := io.WriteString(w, tag+"\n")
		return err
	})
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
