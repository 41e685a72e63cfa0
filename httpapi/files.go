package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/pregao/pregao/engine"
)

// The flat files (addition): a snapshot's datasets as Parquet and CSV
// files (docs/files.md), listed by GET /files and sent by GET
// /files/{name} with ETag and Range. The API does not write them: a
// FileSource does (pregao serve wires snapshot/flatfiles' Cache), built
// on first demand per snapshot and plan cut, kept on disk, never in the
// answer cache.

const (
	routeFiles = "/files"
	routeFile  = "/files/:name"
	// mediaFile is the Media of GET /files/{name}: Parquet or gzip.
	mediaFile = "application/vnd.apache.parquet"
)

// FileSource gives the flat files of a Dataset. Its methods are safe for
// concurrent use.
type FileSource interface {
	// Files returns the folder and the files of ds, the Dataset of the
	// snapshot id, with the priced datasets cut at through (NoDate:
	// whole), building them when missing. When ctx ends before they are
	// built it returns ErrFilesBuilding; another error is a failed build
	// (the server's disk), which it answers for a while before it tries
	// again (a minute by default), and which says when through a method
	// RetryAt() time.Time when it can (snapshot/flatfiles' BuildError);
	// it logs the failure (the API does not).
	Files(ctx context.Context, ds *engine.Dataset, id string, through engine.Date) (dir string, files []FileInfo, err error)
}

// ErrFilesBuilding is FileSource.Files's error while the files asked are
// being built: the API answers 503 with Retry-After.
var ErrFilesBuilding = errors.New("the files are being built")

// FileInfo is one file of a FileSource: a manifest.json entry.
type FileInfo struct {
	Dataset, Name, Format string
	Rows, Bytes           int64
	SHA256                string      // hex
	MinDate, MaxDate      engine.Date // NoDate: none
	// Priced files hold prices (bars, total return, macro series): the
	// eod plan, which gets previous-session prices only, does not get
	// them (eodHistory).
	Priced bool
}

// SetFiles makes the API serve the files of src on GET /files (nil: the
// routes answer 404, the server serves no files).
func (a *API) SetFiles(src FileSource) {
	if src == nil {
		a.files.Store(nil)
		return
	}
	a.files.Store(&src)
}

// filesWait is how long a request waits for files being built before it
// is answered 503.
const filesWait = 2 * time.Second

// filesRetry is the Retry-After of that 503, in seconds.
var filesRetry = []string{"10"}

// filesFailRetry is the Retry-After of the 503 of a failed build whose
// error does not say when the FileSource tries again: the default
// minute it answers with the failure (snapshot/flatfiles'
// DefaultRetryFailed).
const filesFailRetry = time.Minute

// retryAfterFailure returns the seconds until the FileSource tries the
// build that failed with err again: the time its error says (RetryAt),
// at least 1, else filesFailRetry.
func retryAfterFailure(err error, now time.Time) int {
	var r interface{ RetryAt() time.Time }
	if errors.As(err, &r) {
		return max(1, secondsUp(r.RetryAt().Sub(now)))
	}
	return secondsUp(filesFailRetry)
}

// filesThrough returns the last session the priced files hold (a
// session's date, never a day without one): whole sessions the delayed
// plan sees complete, NoDate for every session of
// the Dataset: every session once the cut-off (now − 15 min) is past the
// Dataset's last data, else the sessions before the cut-off's market
// date. The eod plan gets no priced file (eodFiles), and its other files
// are the delayed plan's: one build serves both.
func (a *API) filesThrough(c *call) engine.Date {
	in := a.info(c.ds)
	last := sessionDate(time.Unix(in.latestVisible, 0))
	cutoff := c.now.Add(-QuoteDelay)
	if cutoff.Unix() >= in.latestVisible {
		return engine.NoDate
	}
	if through := sessionDate(cutoff) - 1; through < last {
		// The last session on or before that day: a cut on a weekend or
		// a holiday is the session before it (one name and one build for
		// the days between), kept as it is when no session precedes it.
		if s := c.ds.SessionAt(engine.SessionClose(through)); s.Valid() {
			return s
		}
		return through
	}
	return engine.NoDate
}

// valuationsHidden reports whether file f holds what c's key may not
// see yet: the ratios file's valuation points of the Dataset's last
// session, priced at its close, while the key's quote view leaves that
// session out (valuationCut: an eod key on the evening of the session,
// a delayed key within 15 minutes of its data), which the plan's routes
// leave out until then. The files are one build for both plans.
func (a *API) valuationsHidden(c *call, f *FileInfo) bool {
	return f.Dataset == "ratios" && a.valuationCut(c) != 0 // 0: no cut
}

// valuationsHiddenError is the 403 of a request for a file that
// valuationsHidden withholds: it says from when it is served.
func (a *API) valuationsHiddenError(c *call, f *FileInfo) error {
	cut := a.valuationCut(c)
	when := "from the next market day"
	if c.key.Plan == PlanDelayed {
		when = "from " + time.Unix(a.delayedCutEnds(c, cut), 0).UTC().Format("15:04 UTC") + ", once the session's last quote is 15 minutes old"
	}
	return errorf(http.StatusForbidden, "your plan (%s) does not show the session of %s yet, whose valuations (each priced at that session's close) the file %s holds: it is served %s", c.key.Plan, cut, f.Name, when)
}

// eodFiles is what an eod key is told of a priced file: the eod plan's
// one rule (eodHistory), a whole history of prices being other sessions.
func eodFiles(c *call) error {
	return eodHistory(c, []string{"price files (daily_bars, minute_bars, total_return, index_levels, macro_series)"})
}

// filesOf returns the request's files: its plan's cut of the Dataset,
// and the Dataset's info, read once (its snapshot's id names the files;
// its build time is their Last-Modified).
//
// A request whose Dataset a reload replaced since it began is answered
// 503, to retry: the replaced Dataset's info is gone (a.info makes one
// with a random id for it), and its files built under that id would
// take the one build at a time from the new snapshot's for a minute,
// for a folder nobody asks again.
func (a *API) filesOf(c *call, r *http.Request) (*dsInfo, string, []FileInfo, engine.Date, error) {
	p := a.files.Load()
	if p == nil {
		return nil, "", nil, engine.NoDate, errorf(http.StatusNotFound, "this server serves no files (pregao serve --files-dir)")
	}
	in := a.info(c.ds)
	if a.store.Current() != c.ds {
		c.out.w.Header()["Retry-After"] = filesReplacedRetry
		return nil, "", nil, engine.NoDate, errorf(http.StatusServiceUnavailable, "the snapshot was replaced by a reload during the request; retry in %s s", filesReplacedRetry[0])
	}
	through := a.filesThrough(c)
	ctx, cancel := context.WithTimeout(r.Context(), filesWait)
	defer cancel()
	dir, files, err := (*p).Files(ctx, c.ds, in.seed, through)
	switch {
	case errors.Is(err, ErrFilesBuilding):
		c.out.w.Header()["Retry-After"] = filesRetry
		return nil, "", nil, through, errorf(http.StatusServiceUnavailable, "the files of this snapshot are being built; retry in %s s", filesRetry[0])
	case err != nil:
		// The server's disk, not the request: a 503 to retry when the
		// FileSource builds again (it answers the failure until then,
		// and logs each failed build once, not each request it
		// answers).
		wait := strconv.Itoa(retryAfterFailure(err, time.Now()))
		c.out.w.Header()["Retry-After"] = []string{wait}
		return nil, "", nil, through, errorf(http.StatusServiceUnavailable, "the files of this snapshot could not be built; retry in %s s", wait)
	}
	return in, dir, files, through, nil
}

// filesReplacedRetry is the Retry-After of the 503 of a request whose
// Dataset a reload replaced: the next request sees the new one.
var filesReplacedRetry = []string{"1"}

// filesList serves GET /files: the manifest of the plan's files, each
// with its url.
func (a *API) filesList(c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
	q := c.query(r)
	if err := q.err(); err != nil {
		return nil, err
	}
	in, _, files, through, err := a.filesOf(c, r)
	if err != nil {
		return nil, err
	}
	dst = append(dst, `{"snapshot":`...)
	dst = appendString(dst, in.seed)
	dst = append(dst, `,"as_of":`...)
	dst = appendTime(dst, c.ds.AsOf())
	dst = append(dst, `,"through":`...)
	dst = appendDate(dst, through)
	dst = append(dst, `,"files":[`...)
	n := 0
	for i := range files {
		f := &files[i]
		if f.Priced && c.key.Plan == PlanEOD || a.valuationsHidden(c, f) {
			continue // eodFiles, valuationsHidden
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, `{"dataset":`...)
		dst = appendString(dst, f.Dataset)
		dst = append(dst, `,"file":`...)
		dst = appendString(dst, f.Name)
		dst = append(dst, `,"format":`...)
		dst = appendString(dst, f.Format)
		dst = append(dst, `,"rows":`...)
		dst = strconv.AppendInt(dst, f.Rows, 10)
		dst = append(dst, `,"bytes":`...)
		dst = strconv.AppendInt(dst, f.Bytes, 10)
		dst = append(dst, `,"sha256":`...)
		dst = appendString(dst, f.SHA256)
		dst = append(dst, `,"min_date":`...)
		dst = appendDate(dst, f.MinDate)
		dst = append(dst, `,"max_date":`...)
		dst = appendDate(dst, f.MaxDate)
		dst = append(dst, `,"url":`...)
		dst = appendString(dst, a.cfg.Prefix+routeFiles+"/"+f.Name)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...), nil
}

// fileServe serves GET /files/{name}: the file, with its sha256 as the
// ETag, Range (206, several ranges as multipart/byteranges; 416 for a
// range past the end), If-None-Match and If-Range. It writes the answer
// itself (Route.raw) and returns the status sent.
func (a *API) fileServe(c *call, r *http.Request, ps httprouter.Params) int {
	q := c.query(r)
	if err := q.err(); err != nil {
		return c.out.failErr(err)
	}
	name := ps.ByName("name")
	in, dir, files, through, err := a.filesOf(c, r)
	if err != nil {
		return c.out.failErr(err)
	}
	var f *FileInfo
	for i := range files {
		if files[i].Name == name {
			f = &files[i]
			break
		}
	}
	if f != nil && f.Priced && c.key.Plan == PlanEOD {
		return c.out.failErr(eodFiles(c))
	}
	if f != nil && a.valuationsHidden(c, f) {
		return c.out.failErr(a.valuationsHiddenError(c, f))
	}
	if f == nil {
		return c.out.fail(http.StatusNotFound, fmt.Sprintf("no file %q for this key's plan: GET %s%s lists them", echo(name), a.cfg.Prefix, routeFiles))
	}
	fh, err := os.Open(filepath.Join(dir, f.Name))
	if errors.Is(err, fs.ErrNotExist) {
		// Removed to keep the files within their bound since the listing:
		// the next request builds them again.
		c.out.w.Header()["Retry-After"] = filesRetry
		return c.out.fail(http.StatusServiceUnavailable, "the files of this snapshot are being built again; retry in "+filesRetry[0]+" s")
	}
	if err != nil {
		a.log.Error("files: open failed", "file", f.Name, "err", err.Error())
		c.out.w.Header()["Retry-After"] = filesRetry
		return c.out.fail(http.StatusServiceUnavailable, "the file could not be read; retry in "+filesRetry[0]+" s")
	}
	defer fh.Close()
	hd := c.out.w.Header()
	if unsatisfiable(r.Header.Get("Range"), f.Bytes) && r.Header.Get("If-Range") == "" {
		hd["Content-Range"] = []string{"bytes */" + strconv.FormatInt(f.Bytes, 10)}
		return c.out.fail(http.StatusRequestedRangeNotSatisfiable, fmt.Sprintf("range %q selects no byte of the file's %d bytes: each range starts at or past its end, or asks for its last 0 bytes", echo(r.Header.Get("Range")), f.Bytes))
	}
	if h := r.Header.Get("Range"); h != "" {
		if c := clampRange(h, f.Bytes); c != h {
			r.Header.Set("Range", c)
		}
	}
	hd["Etag"] = []string{`"` + f.SHA256 + `"`}
	hd["Cache-Control"] = []string{"private, no-cache"} // the same name in the next snapshot is another file: revalidate
	hd["X-Content-Type-Options"] = noSniff
	if strings.HasSuffix(f.Name, ".parquet") {
		hd["Content-Type"] = []string{"application/vnd.apache.parquet"}
	} else {
		hd["Content-Type"] = []string{"application/gzip"}
	}
	hd["Content-Disposition"] = []string{`attachment; filename="` + f.Name + `"`}
	var mod time.Time
	if lm := in.lastModified; len(lm) > 0 {
		mod, _ = http.ParseTime(lm[0])
	}
	if through.Valid() {
		// A cut short of the snapshot: the same name holds more once the
		// clock moves past its data, while the snapshot's date stays. No
		// Last-Modified (its priced listing has none either), so that a
		// client revalidating by date alone (If-Modified-Since) is never
		// answered 304 on other bytes: the ETag names them.
		mod = time.Time{}
	}
	fw := &fileWriter{ResponseWriter: c.out.w, status: http.StatusOK, rc: http.NewResponseController(c.out.w), timeout: a.cfg.WriteTimeout}
	watch := watchWrites(ContextConn(r.Context()), a.cfg.WriteTimeout)
	defer watch.stop()
	http.ServeContent(fw, r, "", mod, fh)
	switch {
	case !fw.held:
		return fw.status
	case fw.status == http.StatusPreconditionFailed:
		delete(hd, "Content-Disposition")
		if im := r.Header.Get("If-Match"); im != "" { // decides alone (RFC 9110 §13.2.2)
			return c.out.fail(fw.status, fmt.Sprintf("precondition failed: If-Match %q does not list the file's ETag %s", echo(im), hd["Etag"][0]))
		}
		return c.out.fail(fw.status, fmt.Sprintf("precondition failed: If-Unmodified-Since %q is before the file's Last-Modified (%s)",
			echo(r.Header.Get("If-Unmodified-Since")), mod.UTC().Format(http.TimeFormat)))
	case fw.status == http.StatusRequestedRangeNotSatisfiable:
		delete(hd, "Content-Disposition")
		hd["Content-Range"] = []string{"bytes */" + strconv.FormatInt(f.Bytes, 10)}
		return c.out.fail(fw.status, fmt.Sprintf("range %q: want bytes=FIRST-LAST, bytes=FIRST- or bytes=-SUFFIX (comma-separated) within the file's %d bytes", echo(r.Header.Get("Range")), f.Bytes))
	default:
		delete(hd, "Content-Disposition")
		return c.out.fail(fw.status, strings.ToLower(http.StatusText(fw.status)))
	}
}

// fileWriter passes http.ServeContent's answer to the client, but for
// the error answers ServeContent writes itself (412 on a failed If-Match
// or If-Unmodified-Since, with no body; 416 on a Range it cannot parse,
// in plain text), which it holds back (held) so that fileServe answers
// them as the API's JSON errors.
//
// A file takes as long to send as the client takes to read it (35 MB at
// scale 1 is 30 s at 9.4 Mbit/s): its write deadline follows the writes
// (each write of http.ServeContent's 32 KiB gets Config.WriteTimeout
// from its start) and, while a write waits, what the client
// acknowledges (writeWatch), so that a client reading slowly gets the
// whole file and one that stops reading is cut within the timeout (and
// a quarter), as a stream's (sseOut). A fixed deadline cut every
// download slower than the file's size per WriteTimeout, the client
// seeing a truncated body; renewing it only once half of it was left
// gave a write that began then half the timeout, and cut a client whose
// reads paused that long.
type fileWriter struct {
	http.ResponseWriter
	status  int
	held    bool
	rc      *http.ResponseController
	timeout time.Duration // Config.WriteTimeout; 0: none
}

func (f *fileWriter) WriteHeader(code int) {
	f.status = code
	if code >= 400 {
		f.held = true
		return
	}
	f.ResponseWriter.WriteHeader(code)
}

func (f *fileWriter) Write(b []byte) (int, error) {
	if f.held {
		return len(b), nil
	}
	if f.timeout > 0 {
		// An error means a writer without deadlines (tests): nothing to do.
		_ = f.rc.SetWriteDeadline(time.Now().Add(f.timeout))
	}
	return f.ResponseWriter.Write(b)
}

// unsatisfiable reports whether the Range header h asks only for byte
// ranges that start at or past size, or for the last 0 bytes (RFC 9110
// §14.1.2: 416); a header that is not a byte range set is left to
// http.ServeContent.
func unsatisfiable(h string, size int64) bool {
	spec, ok := strings.CutPrefix(h, "bytes=")
	if !ok {
		return false
	}
	for _, r := range strings.Split(spec, ",") {
		r = strings.TrimSpace(r)
		first, last, ok := strings.Cut(r, "-")
		if !ok {
			return false
		}
		if first == "" { // a suffix: the last N bytes, none when N is 0
			if n, err := strconv.ParseInt(last, 10, 64); err != nil || n > 0 {
				return false
			}
			continue
		}
		if n, err := strconv.ParseInt(first, 10, 64); err != nil && !overflows(first) || err == nil && n < size {
			return false // a first byte too large for int64 is past the end
		}
	}
	return true
}

// clampRange returns the Range header h with each last position or
// suffix length too large for an int64 (bytes=0-99999999999999999999)
// replaced by the file's last byte or its size, which it means (RFC 9110
// §14.1.2: a last position at or past the end selects the rest, a
// suffix longer than the file the whole file); http.ServeContent cannot
// parse such a number and answered 416. A suffix of 0 bytes (-0) among
// other ranges selects nothing and is left out (RFC 9110 §14.1.1: an
// unsatisfiable range of a set is ignored): http.ServeContent sent it as
// an empty part whose Content-Range ends before it starts (alone, it is
// unsatisfiable). Any other header is h.
func clampRange(h string, size int64) string {
	spec, ok := strings.CutPrefix(h, "bytes=")
	if !ok || len(spec) < 19 && !strings.Contains(spec, "-0") { // nothing overflows, no empty suffix
		return h
	}
	parts := strings.Split(spec, ",")
	kept := parts[:0]
	changed := false
	for _, r := range parts {
		first, last, ok := strings.Cut(strings.TrimSpace(r), "-")
		switch {
		case ok && first == "" && strings.Trim(last, "0") == "" && last != "" && len(parts) > 1:
			changed = true // the last 0 bytes: none
			continue
		case ok && overflows(last):
			if first == "" {
				last = strconv.FormatInt(size, 10)
			} else {
				last = strconv.FormatInt(max(size-1, 0), 10)
			}
			r, changed = first+"-"+last, true
		}
		kept = append(kept, strings.TrimSpace(r))
	}
	if !changed {
		return h
	}
	return "bytes=" + strings.Join(kept, ",")
}

// overflows reports whether s is all decimal digits and too large for
// an int64.
func overflows(s string) bool {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return false
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return errors.Is(err, strconv.ErrRange)
}
