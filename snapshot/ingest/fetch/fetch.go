package fetch

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pregao/pregao/internal/atomicfile"
)

// ManifestName is the manifest file in the download folder.
const ManifestName = ".pregao-fetch.json"

// Entry records one complete file in the manifest.
type Entry struct {
	URL          string `json:"url"`
	Size         int64  `json:"size"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	// Fetched is when a file or service answer was stored (RFC 3339,
	// UTC); Absent records that the service answered "unknown" then.
	Fetched string `json:"fetched,omitempty"`
	Absent  bool   `json:"absent,omitempty"`
}

// Progress reports a download in progress.
type Progress struct {
	Path  string // Item.Path
	Bytes int64  // bytes of the file on disk so far
}

// Result counts what FetchAll did.
type Result struct {
	Downloaded int // files (re)downloaded and stored
	Skipped    int // files already complete
	Missing    int // optional files that answered 404
	// Kept counts the earlier downloads of Item.Keep files kept beside a
	// new one of other content (KeptName); Unchanged, the downloads of
	// such files (a new ETag) whose content was the one held, dropped.
	Kept      int
	Unchanged int
}

// Client downloads Items. The zero value uses http.DefaultClient, the
// official hosts, 4 attempts and a 1 s initial backoff.
type Client struct {
	HTTP *http.Client
	// BaseURL, when set, replaces the scheme and host of every Item.URL
	// (a mirror, or a test server).
	BaseURL string
	// Attempts per file (default 4); Backoff is the first wait between
	// attempts (default 1 s), doubled after each failure.
	Attempts int
	Backoff  time.Duration
	// Progress, when set, is called as bytes arrive.
	Progress func(Progress)
	// MaxFileBytes bounds a downloaded file (default DefaultMaxFileBytes);
	// MaxAnswerBytes bounds one answer of a B3 service
	// (DefaultMaxAnswerBytes).
	MaxFileBytes   int64
	MaxAnswerBytes int64
	// PageSize is the number of results asked per page of a paginated B3
	// service (default DefaultPageSize).
	PageSize int
	// Pace is the least time between two requests to the B3 services
	// (zero: none); the fetch command sets 200 ms.
	Pace time.Duration
	// Now, when set, replaces time.Now (tests).
	Now func() time.Time
}

// DefaultMaxFileBytes bounds a downloaded file: 4 GiB, well above any
// official file (the largest, CVM's yearly archives and B3's annual
// COTAHIST, are hundreds of MB at most).
const DefaultMaxFileBytes = 4 << 30

// ErrStatus is wrapped by errors for unexpected HTTP answers.
var ErrStatus = errors.New("unexpected HTTP status")

type statusError struct {
	code int
	url  string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s: %d %s", e.url, e.code, http.StatusText(e.code))
}
func (e *statusError) Unwrap() error { return ErrStatus }

func (c *Client) url(it Item) (string, error) {
	if c.BaseURL == "" {
		return it.URL, nil
	}
	u, err := url.Parse(it.URL)
	if err != nil {
		return "", err
	}
	q := ""
	if u.RawQuery != "" {
		q = "?" + u.RawQuery
	}
	return strings.TrimRight(c.BaseURL, "/") + u.EscapedPath() + q, nil
}

// LockName is the file in a download folder that a fetch holds locked
// while it runs: fetches into one folder take turns.
const LockName = ".pregao-fetch.lock"

// FetchAll downloads items into dir in order, recording each complete file
// in dir's manifest. It stops at the first error (after retries). It holds
// dir's lock (LockName) meanwhile.
func (c *Client) FetchAll(ctx context.Context, dir string, items []Item) (Result, error) {
	var res Result
	man, unlock, err := openDir(dir)
	if err != nil {
		return res, err
	}
	defer unlock()
	for _, it := range items {
		st, err := c.fetch(ctx, dir, it, man)
		if err != nil {
			return res, err
		}
		switch st {
		case stDownloaded, stKept, stUnchanged:
			if st == stUnchanged {
				res.Unchanged++
			} else {
				res.Downloaded++
			}
			if st == stKept {
				res.Kept++
			}
			if err := writeManifest(dir, man); err != nil {
				return res, err
			}
		case stSkipped:
			res.Skipped++
		case stMissing:
			res.Missing++
		}
	}
	return res, nil
}

type status int

const (
	stDownloaded status = iota
	stSkipped
	stMissing
	stKept      // downloaded, the earlier content kept beside it
	stUnchanged // downloaded, the content held already: dropped
)

// openDir takes dir's lock (lockDir) and reads its manifest; unlock
// releases the lock (nil on error: nothing to release).
func openDir(dir string) (man map[string]Entry, unlock func(), err error) {
	if unlock, err = lockDir(dir); err != nil {
		return nil, nil, err
	}
	if man, err = readManifest(dir); err != nil {
		unlock()
		return nil, nil, err
	}
	return man, unlock, nil
}

// readManifest reads dir's manifest (ManifestName); a missing one is empty.
func readManifest(dir string) (map[string]Entry, error) {
	m := map[string]Entry{}
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestName), err)
	}
	return m, nil
}

func writeManifest(dir string, m map[string]Entry) error {
	b, err := json.MarshalIndent(m, "", "  ") // keys sorted: stable output
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, ManifestName), 0o644, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// localPath returns the file's path under dir, refusing paths that would
// leave it.
func localPath(dir, p string) (string, error) {
	clean := path.Clean("/" + p)[1:]
	if clean == "" || clean != p || strings.HasPrefix(clean, "../") || strings.Contains(clean, "/../") {
		return "", fmt.Errorf("bad item path %q", p)
	}
	return filepath.Join(dir, filepath.FromSlash(clean)), nil
}

func (c *Client) fetch(ctx context.Context, dir string, it Item, man map[string]Entry) (status, error) {
	dst, err := localPath(dir, it.Path)
	if err != nil {
		return 0, err
	}
	u, err := c.url(it)
	if err != nil {
		return 0, err
	}
	old, known := man[it.Path]
	if known {
		if fi, err := os.Stat(dst); err != nil || fi.Size() != old.Size {
			known = false // recorded but gone or changed locally: download again
		}
	}
	if known && it.Immutable {
		return stSkipped, nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, err
	}
	attempts := c.Attempts
	if attempts <= 0 {
		attempts = 4
	}
	wait := c.Backoff
	if wait <= 0 {
		wait = time.Second
	}
	var last error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(wait):
			}
			wait *= 2
		}
		st, e, retry := c.try(ctx, dst, u, it, old, known, man, func() error { return writeManifest(dir, man) })
		if e == nil {
			return st, nil
		}
		last = e
		if !retry || ctx.Err() != nil {
			break
		}
	}
	return 0, fmt.Errorf("fetch %s: %w", it.Path, last)
}

// try makes one request. retry reports whether a failure is worth another
// attempt.
func (c *Client) try(ctx context.Context, dst, u string, it Item, old Entry, known bool, man map[string]Entry, save func() error) (st status, err error, retry bool) {
	part := dst + ".part"
	pending := man[it.Path+".part"] // validators of the partial download
	var have int64
	if fi, err := os.Stat(part); err == nil {
		have = fi.Size()
		if pending.ETag == "" && pending.LastModified == "" {
			// Nothing proves the partial file is of the current version:
			// start again rather than splice two versions.
			os.Remove(part)
			have = 0
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err, false
	}
	if have > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(have, 10)+"-")
		if pending.ETag != "" {
			req.Header.Set("If-Range", pending.ETag)
		} else if pending.LastModified != "" {
			req.Header.Set("If-Range", pending.LastModified)
		}
	} else if known && old.ETag != "" {
		req.Header.Set("If-None-Match", old.ETag)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err, true
	}
	defer resp.Body.Close()
	var f *os.File
	switch {
	case resp.StatusCode == http.StatusNotModified && known:
		return stSkipped, nil, false
	case resp.StatusCode == http.StatusNotFound && it.Optional:
		return stMissing, nil, false
	case resp.StatusCode == http.StatusPartialContent && have > 0:
		start, total, ok := contentRange(resp.Header.Get("Content-Range"))
		if !ok || start != have {
			os.Remove(part)
			return 0, fmt.Errorf("%s: bad Content-Range %q for a resume at %d", u, resp.Header.Get("Content-Range"), have), true
		}
		f, err = openPart(part, os.O_WRONLY|os.O_APPEND)
		if err != nil {
			return 0, err, false
		}
		pending.Size = total
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		os.Remove(part) // the file changed or shrank: start again
		return 0, &statusError{resp.StatusCode, u}, true
	case resp.StatusCode == http.StatusOK:
		f, err = openPart(part, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
		if err != nil {
			return 0, err, false
		}
		have = 0
		pending = Entry{URL: it.URL, Size: resp.ContentLength, ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}
		man[it.Path+".part"] = pending
		if err := save(); err != nil {
			f.Close()
			return 0, err, false
		}
	default:
		retry := resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests
		return 0, &statusError{resp.StatusCode, u}, retry
	}
	limit := c.MaxFileBytes
	if limit <= 0 {
		limit = DefaultMaxFileBytes
	}
	if pending.Size > limit {
		f.Close()
		os.Remove(part)
		return 0, fmt.Errorf("%s: %d bytes, more than the limit of %d", u, pending.Size, limit), false
	}
	n, cerr := copyProgress(f, io.LimitReader(resp.Body, limit-have+1), have, it.Path, c.Progress)
	if cerr == nil && have+n > limit {
		cerr = fmt.Errorf("%s: more than the limit of %d bytes", u, limit)
		f.Close()
		os.Remove(part)
		return 0, cerr, false
	}
	if cerr == nil {
		cerr = f.Sync() // complete before any rename makes it a download
	}
	if err := f.Close(); err != nil && cerr == nil {
		cerr = err
	}
	if cerr != nil {
		return 0, fmt.Errorf("after %d bytes: %w", have+n, cerr), true
	}
	size := have + n
	if pending.Size >= 0 && size != pending.Size {
		return 0, fmt.Errorf("got %d bytes, want %d", size, pending.Size), true
	}
	var stored time.Time // when dst's content was stored, if the manifest knows
	if known {
		stored, _ = time.Parse(time.RFC3339, old.Fetched)
	}
	same, keptAs, err := settle(part, dst, it.Keep, stored)
	if err != nil {
		return 0, err, false
	}
	delete(man, it.Path+".part")
	now := c.now().UTC().Format(time.RFC3339)
	if same {
		// The content held: the new validators, and the time it was
		// first stored.
		e := Entry{URL: it.URL, ETag: pending.ETag, LastModified: pending.LastModified, Fetched: old.Fetched}
		if fi, err := os.Stat(dst); err == nil {
			e.Size = fi.Size()
			if !known || e.Fetched == "" {
				e.Fetched = fi.ModTime().UTC().Format(time.RFC3339)
			}
		}
		man[it.Path] = e
		return stUnchanged, nil, false
	}
	man[it.Path] = Entry{URL: it.URL, Size: size, ETag: pending.ETag, LastModified: pending.LastModified, Fetched: now}
	if keptAs == "" {
		return stDownloaded, nil, false
	}
	k := Entry{URL: it.URL}
	if fi, err := os.Stat(keptAs); err == nil {
		k.Size = fi.Size()
		k.Fetched = fi.ModTime().UTC().Format(time.RFC3339)
	}
	if known {
		k.ETag, k.LastModified, k.Fetched = old.ETag, old.LastModified, cmp.Or(old.Fetched, k.Fetched)
	}
	man[path.Join(path.Dir(it.Path), filepath.Base(keptAs))] = k
	return stKept, nil, false
}

// openPart opens a download's partial file (a variable: tests write to
// a full disk).
var openPart = func(name string, flag int) (*os.File, error) {
	return os.OpenFile(name, flag, 0o644)
}

func copyProgress(w io.Writer, r io.Reader, have int64, p string, prog func(Progress)) (int64, error) {
	buf := make([]byte, 256<<10)
	var n int64
	for {
		k, err := r.Read(buf)
		if k > 0 {
			if _, werr := w.Write(buf[:k]); werr != nil {
				return n, werr
			}
			n += int64(k)
			if prog != nil {
				prog(Progress{Path: p, Bytes: have + n})
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// contentRange parses "bytes START-END/TOTAL" (TOTAL may be "*": -1).
func contentRange(s string) (start, total int64, ok bool) {
	s, found := strings.CutPrefix(s, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, tot, found := strings.Cut(s, "/")
	if !found {
		return 0, 0, false
	}
	a, _, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	start, err := strconv.ParseInt(a, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	total = -1
	if tot != "*" {
		if total, err = strconv.ParseInt(tot, 10, 64); err != nil {
			return 0, 0, false
		}
	}
	return start, total, true
}
