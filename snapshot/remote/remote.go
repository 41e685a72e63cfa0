// Package remote fetches a snapshot file published at an http(s) URL into
// a local file that a server loads: conditionally (If-None-Match with the
// ETag of the local copy, so an unchanged snapshot costs one 304),
// resumably (a partial download continues with Range and If-Range after a
// failure or a restart), verified (header and every section's checksum)
// before it replaces the local copy, and atomically (rename; the local copy
// is either the old file or the new one, whole).
//
// Files beside the local copy PATH: .BASE.part (the download in progress),
// .BASE.part.etag (the ETag it belongs to) and .BASE.etag (the ETag of
// PATH). A Fetcher is not safe for concurrent use; one process at a time
// should fetch to one PATH.
package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"

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
	Client *http.Client // nil: a client with a 10-minute timeout
	// Retries is how many times a failed attempt (network error, 5xx,
	// truncated body) is retried, with a doubling backoff from
	// RetryDelay (defaults 3 and 1s; a negative Retries: none).
	Retries    int
	RetryDelay time.Duration
}

// ErrVerify wraps a downloaded file that is not a valid snapshot: it is
// deleted and the local copy is kept.
var ErrVerify = errors.New("remote: downloaded snapshot does not verify")

// Fetch brings Path up to date with URL and reports whether Path changed.
// On any error Path is left as it was.
func (f *Fetcher) Fetch(ctx context.Context) (changed bool, err error) {
	if !IsURL(f.URL) {
		return false, fmt.Errorf("remote: %q: want an http://, https:// or s3:// location", f.URL)
	}
	if _, err := url.Parse(f.URL); err != nil {
		return false, fmt.Errorf("remote: %q: %w", f.URL, err)
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
		if err == nil || errors.As(err, &perm) || errors.Is(err, ErrVerify) || attempt >= retries || ctx.Err() != nil {
			if perm != nil {
				err = perm.err
			}
			return changed, err
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(delay << attempt):
		}
	}
}

// permanentError is an answer that retrying does not change (4xx).
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }

func (f *Fetcher) client() *http.Client {
	if f.Client != nil {
		return f.Client
	}
	return &http.Client{Timeout: 10 * time.Minute}
}

func (f *Fetcher) side(suffix string) string {
	return filepath.Join(filepath.Dir(f.Path), "."+filepath.Base(f.Path)+suffix)
}

// attempt is one conditional, possibly resumed, download.
func (f *Fetcher) attempt(ctx context.Context) (bool, error) {
	part, partTag, curTag := f.side(".part"), f.side(".part.etag"), f.side(".etag")
	get, err := resolve(ctx, f.URL)
	if err != nil {
		return false, &permanentError{err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, get, nil)
	if err != nil {
		return false, err
	}
	if _, err := os.Stat(f.Path); err == nil {
		if tag := readTag(curTag); tag != "" {
			req.Header.Set("If-None-Match", tag)
		}
	}
	var have int64
	if st, err := os.Stat(part); err == nil && st.Size() > 0 {
		if tag := readTag(partTag); tag != "" && !strings.HasPrefix(tag, "W/") {
			have = st.Size()
			req.Header.Set("Range", "bytes="+strconv.FormatInt(have, 10)+"-")
			req.Header.Set("If-Range", tag)
		}
	}
	resp, err := f.client().Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	switch resp.StatusCode {
	case http.StatusNotModified:
		return false, nil
	case http.StatusOK:
		have = 0
	case http.StatusPartialContent:
		if start, ok := rangeStart(resp.Header.Get("Content-Range")); !ok || start != have {
			os.Remove(part)
			return false, fmt.Errorf("remote: %s: Content-Range %q does not continue the %d bytes held", f.URL, resp.Header.Get("Content-Range"), have)
		}
		flags = os.O_WRONLY | os.O_APPEND
	default:
		err := fmt.Errorf("remote: %s: %s", f.URL, resp.Status)
		if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests {
			return false, &permanentError{err}
		}
		return false, err
	}
	tag := resp.Header.Get("ETag")
	if err := writeTag(partTag, tag); err != nil {
		return false, err
	}
	out, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return false, err
	}
	n, err := io.Copy(out, resp.Body)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, fmt.Errorf("remote: %s: after %d bytes: %w", f.URL, have+n, err)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return false, fmt.Errorf("remote: %s: %d of %d bytes", f.URL, n, resp.ContentLength)
	}
	if err := Verify(part); err != nil {
		os.Remove(part)
		os.Remove(partTag)
		return false, fmt.Errorf("%w: %s: %v", ErrVerify, f.URL, err)
	}
	if err := os.Rename(part, f.Path); err != nil {
		return false, err
	}
	os.Remove(partTag)
	if err := writeTag(curTag, tag); err != nil {
		return true, err
	}
	return true, syncDir(filepath.Dir(f.Path))
}

// Verify checks the snapshot file at path without decoding it: its header
// (checksum, format, section table matching the file's size) and the
// checksum of every section's bytes.
func Verify(path string) error {
	h, err := snapshot.ReadHeader(path)
	if err != nil {
		return err
	}
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	for _, s := range h.Sections {
		d := xxhash.New()
		if _, err := io.Copy(d, io.NewSectionReader(fh, s.Offset, s.Compressed)); err != nil {
			return err
		}
		if got := d.Sum64(); got != s.Checksum {
			return fmt.Errorf("section %s: checksum %016x, stored %016x", s.Name, got, s.Checksum)
		}
	}
	return nil
}

// rangeStart parses the first byte of "bytes START-END/SIZE".
func rangeStart(cr string) (int64, bool) {
	rest, ok := strings.CutPrefix(cr, "bytes ")
	if !ok {
		return 0, false
	}
	start, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(start, 10, 64)
	return n, err == nil
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
	tmp := path + ".tmp-" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, []byte(tag+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
