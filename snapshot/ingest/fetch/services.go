package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/atomicfile"
)

// Services names what FetchServices asks B3's listed-data services for.
type Services struct {
	// Indexes are index symbols whose portfolio of the day
	// (GetPortfolioDay) is stored, every page merged, as
	// indexProxy/indexCall/GetPortfolioDay/SYMBOL/YYYY-MM-DD.json (the
	// fetch day in São Paulo; the answer's header.date is the
	// portfolio's day). A file of the day already complete is not asked
	// again.
	Indexes []string
	// Companies are 4-character issuer codes (ABEV). Each costs three
	// calls or more: GetListedSupplementCompany, then GetDetail (by the
	// CVM code it names) and GetListedCashDividends (by its trading
	// name, every page), stored as SERVICE/CODE.json. A company B3 does
	// not know (an empty supplement) is counted missing, not an error.
	Companies []string
	// Listings stores the listed-fund exports (FundLists) as
	// fundsProxy/fundsCall/GetListFundDownload/NAME.csv, decoded.
	Listings bool
	// Instruments asks for B3's listed-instruments file
	// (InstrumentsConsolidatedFile) of InstrumentsDay (0 or NoDate: today
	// in São Paulo), or of the latest weekday before it B3 has one for
	// (a week at most), stored as InstrumentsDir/YYYY-MM-DD.csv.
	Instruments    bool
	InstrumentsDay engine.Date
}

// ServiceResult counts what FetchServices did.
type ServiceResult struct {
	Result         // Downloaded: answers stored; Skipped: fresh already; Missing: unknown to B3
	Requests int   // HTTP requests made (every page and retry)
	Bytes    int64 // bytes stored
}

// Defaults of the Client fields that FetchServices uses.
const (
	DefaultPageSize       = 120      // results per page asked of paginated services
	DefaultMaxAnswerBytes = 16 << 20 // largest answer (one page) accepted, bytes
	maxPages              = 1000     // pages of one answer
)

// brt is São Paulo's time (UTC-3, no daylight saving since 2019): the
// day B3 data belongs to.
var brt = time.FixedZone("BRT", -3*3600)

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// spDay is t's date in São Paulo, YYYY-MM-DD.
func spDay(t time.Time) string { return t.In(brt).Format("2006-01-02") }

// FetchServices stores the answers of B3's listed-data services that s
// names into dir, recording each in dir's manifest with the time it was
// fetched. Answers change at most once a day: one fetched on the same
// São Paulo day (or found absent that day) is not asked again, so a run
// that was interrupted resumes where it stopped and a second run asks
// nothing. Each request is retried with backoff on network errors, 5xx
// and 429 answers and malformed JSON; pages are fetched until
// page.totalPages and merged into one answer, written atomically
// (NAME.part, then renamed). It stops at the first error, which names
// the URL.
func (c *Client) FetchServices(ctx context.Context, dir string, s Services) (_ ServiceResult, rerr error) {
	var res ServiceResult
	man, unlock, err := openDir(dir)
	if err != nil {
		return res, err
	}
	defer unlock()
	today := spDay(c.now())
	st := &svcRun{c: c, ctx: ctx, dir: dir, man: man, today: today, res: &res}
	defer func() {
		if st.dirty {
			if err := st.save(true); err != nil && rerr == nil {
				rerr = err
			}
		}
	}()
	for _, x := range s.Indexes {
		if !ValidIndex(x) {
			return res, fmt.Errorf("bad index symbol %q (want 2 to 12 capital letters and digits)", x)
		}
	}
	for _, x := range s.Companies {
		if !ValidCompany(x) {
			return res, fmt.Errorf("bad company code %q (want 4 capital letters or digits)", x)
		}
	}
	for _, x := range s.Indexes {
		p := SvcPortfolioDay + "/" + x + "/" + today + ".json"
		params := map[string]any{"language": "pt-br", "index": x, "segment": "1"}
		if err := st.paged(p, SvcPortfolioDay, params, false); err != nil {
			return res, fmt.Errorf("index %s: %w", x, err)
		}
	}
	for _, co := range s.Companies {
		if err := st.company(co); err != nil {
			return res, fmt.Errorf("company %s: %w", co, err)
		}
	}
	if s.Listings {
		for _, l := range FundLists {
			p := SvcFundList + "/" + l.Name
			u := serviceURL(B3APIHost, SvcFundList, map[string]any{"typeFund": l.TypeFund, "pageNumber": 1, "pageSize": 20})
			if err := st.single(p, u, func(b []byte) ([]byte, bool, error) {
				if t := string(bytes.TrimSpace(b)); t == "" || t == `""` || t == "null" {
					return nil, false, nil
				}
				csv, err := DecodeFundList(b)
				return csv, err == nil, err
			}); err != nil {
				return res, fmt.Errorf("fund list %s: %w", l.Name, err)
			}
		}
	}
	if s.Instruments {
		day := s.InstrumentsDay
		if day == 0 || !day.Valid() {
			if day, err = engine.ParseDate(today); err != nil {
				return res, err
			}
		}
		if err := st.instruments(day); err != nil {
			return res, fmt.Errorf("instruments: %w", err)
		}
	}
	return res, nil
}

// svcRun is one FetchServices run.
type svcRun struct {
	c     *Client
	ctx   context.Context
	dir   string
	man   map[string]Entry
	today string
	res   *ServiceResult
	last  time.Time // last request, for Client.Pace
	saved time.Time // last manifest write
	dirty bool      // entries not written yet
}

// fresh reports whether p was fetched (or found absent) today and, when
// present, is still on disk with its recorded size.
func (st *svcRun) fresh(p string) bool {
	e, ok := st.man[p]
	if !ok || e.Fetched == "" {
		return false
	}
	t, err := time.Parse(time.RFC3339, e.Fetched)
	if err != nil || spDay(t) != st.today {
		return false
	}
	if e.Absent {
		return true
	}
	return st.onDisk(p, e)
}

// onDisk reports whether the file of p is on disk with e's size.
func (st *svcRun) onDisk(p string, e Entry) bool {
	dst, err := localPath(st.dir, p)
	if err != nil {
		return false
	}
	fi, err := os.Stat(dst)
	return err == nil && fi.Size() == e.Size
}

// company fetches one issuer's supplement, details and cash dividends.
func (st *svcRun) company(co string) error {
	sp := SvcSupplement + "/" + co + ".json"
	var sup []byte
	if st.fresh(sp) {
		st.res.Skipped++
		if st.man[sp].Absent {
			return nil
		}
		dst, _ := localPath(st.dir, sp)
		b, err := os.ReadFile(dst)
		if err != nil {
			return err
		}
		sup = b
	} else {
		u := serviceURL(B3APIHost, SvcSupplement, map[string]any{"issuingCompany": co, "language": "pt-br"})
		var known bool
		err := st.single(sp, u, func(b []byte) ([]byte, bool, error) {
			_, _, ok, err := supplementKeys(b)
			known = ok
			return b, ok, err
		})
		if err != nil || !known {
			return err
		}
		dst, _ := localPath(st.dir, sp)
		if sup, err = os.ReadFile(dst); err != nil {
			return err
		}
	}
	cvm, trading, _, err := supplementKeys(sup)
	if err != nil {
		return fmt.Errorf("%s: %w", sp, err)
	}
	if cvm != "" {
		u := serviceURL(B3APIHost, SvcDetail, map[string]any{"codeCVM": cvm, "language": "pt-br"})
		if err := st.single(SvcDetail+"/"+co+".json", u, func(b []byte) ([]byte, bool, error) {
			ok, err := checkDetail(b)
			return b, ok, err
		}); err != nil {
			return err
		}
	}
	if name := CleanTradingName(trading); name != "" {
		params := map[string]any{"tradingName": name, "language": "pt-br"}
		if err := st.paged(SvcCashDividends+"/"+co+".json", SvcCashDividends, params, true); err != nil {
			return err
		}
	}
	return nil
}

// single stores the answer of one request at p, through check: it
// returns the bytes to store and false when the answer says "unknown"
// (recorded absent, nothing written), or an error (retried: a cut or
// garbled answer).
func (st *svcRun) single(p, u string, check func([]byte) ([]byte, bool, error)) error {
	if st.fresh(p) {
		st.res.Skipped++
		return nil
	}
	var out []byte
	var ok bool
	err := st.retry(u, func() (bool, error) {
		b, err := st.get(u, 0)
		if err != nil {
			return retryable(err), err
		}
		out, ok, err = check(b)
		if err != nil {
			return true, fmt.Errorf("%s: %w", u, err)
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	if !ok {
		return st.absent(p, u)
	}
	return st.store(p, u, out)
}

// paged stores at p every page of a paginated service's answer to params
// (pageNumber and pageSize are added), merged. emptyOK tells whether an
// answer without results is stored (a company without cash
// distributions) or is an error (an index B3 does not know).
func (st *svcRun) paged(p, service string, params map[string]any, emptyOK bool) error {
	if st.fresh(p) {
		st.res.Skipped++
		return nil
	}
	size := st.c.PageSize
	if size <= 0 {
		size = DefaultPageSize
	}
	var pages []*page
	first := ""
	for n := 1; ; n++ {
		q := make(map[string]any, len(params)+2)
		for k, v := range params {
			q[k] = v
		}
		q["pageNumber"], q["pageSize"] = n, size
		u := serviceURL(B3APIHost, service, q)
		if n == 1 {
			first = u
		}
		var pg *page
		err := st.retry(u, func() (bool, error) {
			b, err := st.get(u, 0)
			if err != nil {
				return retryable(err), err
			}
			pg, err = parsePage(b)
			if err != nil {
				return true, fmt.Errorf("%s: %w", u, err)
			}
			return false, nil
		})
		if err != nil {
			return err
		}
		pages = append(pages, pg)
		total := pages[0].info.TotalPages
		if total > maxPages {
			return fmt.Errorf("%s: %d pages, more than %d", u, total, maxPages)
		}
		if n >= total || len(pg.results) == 0 {
			break
		}
	}
	merged, err := mergePages(pages)
	if err != nil {
		return fmt.Errorf("%s: %w", first, err)
	}
	if !emptyOK && len(pages[0].results) == 0 {
		return fmt.Errorf("%s: no result (is %v a symbol B3 knows?)", first, params["index"])
	}
	return st.store(p, first, merged)
}

// retry runs try until it succeeds, says not to retry, or the attempts
// run out, waiting Backoff, doubled each time, between attempts.
func (st *svcRun) retry(u string, try func() (retry bool, err error)) error {
	attempts := st.c.Attempts
	if attempts <= 0 {
		attempts = 4
	}
	wait := st.c.Backoff
	if wait <= 0 {
		wait = time.Second
	}
	var last error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			select {
			case <-st.ctx.Done():
				return st.ctx.Err()
			case <-time.After(wait):
			}
			wait *= 2
		}
		again, err := try()
		if err == nil {
			return nil
		}
		last = err
		if !again || st.ctx.Err() != nil {
			break
		}
	}
	if strings.Contains(last.Error(), u) {
		return fmt.Errorf("fetch: %w", last) // the error names the URL already
	}
	return fmt.Errorf("fetch %s: %w", u, last)
}

// errTooBig is wrapped by errors for answers over MaxAnswerBytes.
var errTooBig = errors.New("answer too large")

func retryable(err error) bool {
	var se *statusError
	if errors.As(err, &se) {
		return se.code >= 500 || se.code == http.StatusTooManyRequests
	}
	return !errors.Is(err, errTooBig) && !errors.Is(err, context.Canceled)
}

// get makes one GET of a service URL (through Client.BaseURL) and returns
// a 200 answer's body, at most limit bytes of it (0: MaxAnswerBytes).
func (st *svcRun) get(u string, limit int64) ([]byte, error) {
	return st.do(http.MethodGet, u, nil, limit)
}

// do makes one request of method with a JSON body (nil: none) to a
// service URL, as get does.
func (st *svcRun) do(method, u string, body []byte, limit int64) ([]byte, error) {
	c := st.c
	if c.Pace > 0 && !st.last.IsZero() {
		if w := c.Pace - time.Since(st.last); w > 0 {
			select {
			case <-st.ctx.Done():
				return nil, st.ctx.Err()
			case <-time.After(w):
			}
		}
	}
	st.last = time.Now()
	target, err := c.url(Item{URL: u})
	if err != nil {
		return nil, err
	}
	var rb io.Reader
	if body != nil {
		rb = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(st.ctx, method, target, rb)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/plain, */*")
	req.Header.Set("User-Agent", "pregao-fetch")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	st.res.Requests++
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, &statusError{resp.StatusCode, u}
	}
	if limit <= 0 {
		limit = c.MaxAnswerBytes
	}
	if limit <= 0 {
		limit = DefaultMaxAnswerBytes
	}
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("%s: %w: %d bytes, limit %d", u, errTooBig, resp.ContentLength, limit)
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: after %d bytes: %w", u, n, err)
	}
	if n > limit {
		return nil, fmt.Errorf("%s: %w: more than %d bytes", u, errTooBig, limit)
	}
	return buf.Bytes(), nil
}

// store writes b at p atomically (atomicfile.WriteFile) and records it.
func (st *svcRun) store(p, u string, b []byte) error {
	dst, err := localPath(st.dir, p)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	err = atomicfile.WriteFile(dst, 0o644, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	st.man[p] = Entry{URL: u, Size: int64(len(b)), Fetched: st.c.now().UTC().Format(time.RFC3339)}
	st.res.Downloaded++
	st.res.Bytes += int64(len(b))
	if st.c.Progress != nil {
		st.c.Progress(Progress{Path: p, Bytes: st.res.Bytes})
	}
	return st.save(false)
}

// save writes the manifest, at most once a second unless final: a run
// killed in between fetches the last second's answers again.
func (st *svcRun) save(final bool) error {
	if !final && time.Since(st.saved) < time.Second {
		st.dirty = true
		return nil
	}
	st.saved, st.dirty = time.Now(), false
	return writeManifest(st.dir, st.man)
}

// absent records that u answered "unknown" today; a file of an earlier
// answer at p is left as it was.
func (st *svcRun) absent(p, u string) error {
	e := st.man[p]
	e.URL, e.Absent, e.Fetched = u, true, st.c.now().UTC().Format(time.RFC3339)
	if dst, err := localPath(st.dir, p); err == nil {
		if fi, err := os.Stat(dst); err == nil {
			e.Size = fi.Size()
		}
	}
	st.man[p] = e
	st.res.Missing++
	return st.save(false)
}

// String formats r as the fetch command reports it.
func (r ServiceResult) String() string {
	return strconv.Itoa(r.Downloaded) + " answers stored (" + strconv.FormatFloat(float64(r.Bytes)/1e6, 'f', 1, 64) +
		" MB), " + strconv.Itoa(r.Skipped) + " already fetched today, " + strconv.Itoa(r.Missing) + " unknown to B3, " +
		strconv.Itoa(r.Requests) + " requests"
}
