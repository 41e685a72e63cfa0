package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
)

// Banco Central hosts: the SGS time series and the PTAX files.
const (
	BCBSGSHost  = "https://api.bcb.gov.br"
	BCBPTAXHost = "https://www4.bcb.gov.br"
)

// SGSCodes are the SGS series the bcb source fetches: 432 (Selic target),
// 433 (IPCA, change in the month) and 4389 (CDI, annualized), the series
// package bcb maps to SELIC, IPCA and CDI.
var SGSCodes = []int{432, 433, 4389}

// SGSMaxYears is the longest window the SGS serves a daily series in one
// request since March 2025 (a longer one answers 406 "O sistema aceita
// uma janela de consulta de, no máximo, 10 anos em séries de
// periodicidade diária"); the bcb source asks windows of ten calendar
// years aligned on decades (2020-01-01 to 2029-12-31), within it.
const SGSMaxYears = 10

// SGSSettleDays is how long after a window's last day the Banco Central
// may still revise its values: an answer fetched that many days after the
// window ends is final, never asked again; an earlier one is asked again
// at most once a São Paulo day (the newest publication replaces it).
const SGSSettleDays = 90

// SGSWindow is one request of an SGS series: the days Start..End
// (inclusive; End is today for the current decade) of the decade block
// that starts in year Block.
type SGSWindow struct {
	Block      int
	Start, End engine.Date
}

// SGSWindows returns the decade blocks of the days from..to, each cut at
// today, none after it: the requests that cover the range, at most
// SGSMaxYears each. A range before any data or in the future asks
// nothing it does not need: blocks starting after today are left out.
func SGSWindows(from, to, today engine.Date) []SGSWindow {
	var out []SGSWindow
	fy, ty := from.Time().Year(), to.Time().Year()
	for b := fy - fy%SGSMaxYears; b <= ty; b += SGSMaxYears {
		start := engine.MakeDate(b, time.January, 1)
		end := engine.MakeDate(b+SGSMaxYears-1, time.December, 31)
		if start > today {
			break
		}
		out = append(out, SGSWindow{Block: b, Start: start, End: min(end, today)})
	}
	return out
}

// SGSPath is where the answer of series code over the decade block is
// stored: the URL path and the block, dados/serie/bcdata.sgs.432/dados/2020-2029.json.
func SGSPath(code, block int) string {
	return fmt.Sprintf("dados/serie/bcdata.sgs.%d/dados/%d-%d.json", code, block, block+SGSMaxYears-1)
}

// SGSURL is the request of series code over w: formato=json and the
// window's days as dd/mm/yyyy.
func SGSURL(code int, w SGSWindow) string {
	return fmt.Sprintf("%s/dados/serie/bcdata.sgs.%d/dados?formato=json&dataInicial=%s&dataFinal=%s",
		BCBSGSHost, code, brDate(w.Start), brDate(w.End))
}

// brDate writes d as dd/mm/yyyy.
func brDate(d engine.Date) string { return d.Time().Format("02/01/2006") }

// ClosingPath is the PTAX closing-rates file of day d on the Banco
// Central's host: Download/fechamento/YYYYMMDD.csv.
func ClosingPath(d engine.Date) string {
	return "Download/fechamento/" + d.Time().Format("20060102") + ".csv"
}

// FetchSGS stores the answers of the SGS series codes (SGSCodes when nil)
// over the days from..to into dir, one file per series and decade block
// (SGSPath, SGSWindows), recording each in dir's manifest with the time
// it was fetched. An answer is asked at most once a São Paulo day, and
// never again once fetched SGSSettleDays after its window's end, so a run
// that was interrupted resumes where it stopped and a second run the same
// day asks nothing. A window without values (404) is recorded absent, not
// an error. The body must be a JSON array: a page (the Banco Central's
// firewall answers a rejected request with an HTML page and status 200)
// or an error object is retried with backoff, then an error naming the
// URL; 406 (a window over the Banco Central's cap) is an error at once.
// Answers are written atomically (NAME.part, then renamed).
func (c *Client) FetchSGS(ctx context.Context, dir string, from, to engine.Date, codes []int) (_ ServiceResult, rerr error) {
	var res ServiceResult
	if !from.Valid() || !to.Valid() || to < from {
		return res, fmt.Errorf("bad date range %s..%s", from, to)
	}
	if codes == nil {
		codes = SGSCodes
	}
	man, unlock, err := openDir(dir)
	if err != nil {
		return res, err
	}
	defer unlock()
	now := c.now()
	todaySP, err := engine.ParseDate(spDay(now))
	if err != nil {
		return res, err
	}
	st := &svcRun{c: c, ctx: ctx, dir: dir, man: man, today: spDay(now), res: &res}
	defer func() {
		if st.dirty {
			if err := st.save(true); err != nil && rerr == nil {
				rerr = err
			}
		}
	}()
	for _, code := range codes {
		if code <= 0 {
			return res, fmt.Errorf("bad SGS series code %d", code)
		}
		for _, w := range SGSWindows(from, to, todaySP) {
			p := SGSPath(code, w.Block)
			if st.settled(p, w.End+SGSSettleDays) || st.fresh(p) {
				res.Skipped++
				continue
			}
			if err := st.sgs(p, SGSURL(code, w)); err != nil {
				return res, fmt.Errorf("SGS series %d, %s to %s: %w", code, w.Start, w.End, err)
			}
		}
	}
	return res, nil
}

// settled reports whether p was fetched (or found absent) on or after day
// final, and, when present, is still on disk with its recorded size.
func (st *svcRun) settled(p string, final engine.Date) bool {
	e, ok := st.man[p]
	if !ok || e.Fetched == "" {
		return false
	}
	t, err := time.Parse(time.RFC3339, e.Fetched)
	if err != nil {
		return false
	}
	d, err := engine.ParseDate(spDay(t))
	if err != nil || d < final {
		return false
	}
	return e.Absent || st.onDisk(p, e)
}

// sgs asks u once (with retries) and stores its answer at p, or records
// p absent when the window has no value.
func (st *svcRun) sgs(p, u string) error {
	var body []byte
	absent := false
	err := st.retry(u, func() (bool, error) {
		b, err := st.get(u, 0)
		var se *statusError
		switch {
		case errors.As(err, &se) && se.code == http.StatusNotFound:
			absent = true
			return false, nil
		case errors.As(err, &se) && se.code == http.StatusNotAcceptable:
			return false, fmt.Errorf("%w (the SGS refuses a daily series over more than %d years in one request)", err, SGSMaxYears)
		case err != nil:
			return retryable(err), err
		}
		if err := checkSGS(b); err != nil {
			return true, fmt.Errorf("%s: %w", u, err)
		}
		body = b
		return false, nil
	})
	if err != nil {
		return err
	}
	if absent {
		return st.absent(p, u)
	}
	return st.store(p, u, body)
}

// checkSGS checks that b is a JSON array (an SGS answer), saying what it
// is otherwise.
func checkSGS(b []byte) error {
	t := bytes.TrimSpace(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")))
	if len(t) > 0 && t[0] == '[' && json.Valid(t) {
		return nil
	}
	what := strconv.Quote(firstLine(t, 60))
	switch {
	case len(t) == 0:
		what = "an empty body"
	case bytes.Contains(t, []byte("<html")) || bytes.Contains(t, []byte("<!DOCTYPE")):
		what = "an HTML page (the Banco Central's firewall rejecting the request?)"
	case t[0] == '{':
		what = "a JSON object " + what
	}
	return fmt.Errorf("the answer is %s, not a series", what)
}

func firstLine(b []byte, n int) string {
	s := string(b)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if len(s) > n {
		s = s[:n]
	}
	return s
}
