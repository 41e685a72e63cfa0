package httpapi

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// deadlineWriter is a ResponseWriter with a write deadline, as the
// server's: it records the deadlines set (http.ResponseController).
type deadlineWriter struct {
	countingWriter
	deadlines []time.Time
}

func (w *deadlineWriter) SetWriteDeadline(t time.Time) error {
	w.deadlines = append(w.deadlines, t)
	return nil
}

// An answer over longAnswer bytes gets the whole write timeout from its
// first byte (encoded, kept, streamed, CSV, compressed or a static file);
// a shorter one leaves the connection's deadline alone.
func TestWriteTimeoutLongAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a long-history dataset")
	}
	cfg := DefaultConfig()
	cfg.WriteTimeout = 7 * time.Second
	api, ds := longAPI(t, cfg)
	// The same requests through the access log's writer, which the
	// deadline reaches through Unwrap.
	logged := cfg
	logged.AccessLog = NewAccessLog(io.Discard, false, 1)
	t.Cleanup(logged.AccessLog.Close)
	loggedAPI, _ := longAPI(t, logged)
	tk := ds.Assets()[0].Ticker
	var all []string
	for _, as := range ds.Assets() {
		all = append(all, as.Ticker)
	}
	for _, c := range []deadlineCase{
		{"short", "GET", "/v2/companies/" + tk, "", "", false},
		{"short again (kept)", "GET", "/v2/companies/" + tk, "", "", false},
		{"long", "GET", "/v2/quotes/" + tk + "?start_date=2000-01-01", "", "", true},
		{"long again (kept)", "GET", "/v2/quotes/" + tk + "?start_date=2000-01-01", "", "", true},
		{"long, but short gzipped", "GET", "/v2/quotes/" + tk + "?start_date=2000-01-01", "", "gzip", false},
		{"long CSV", "GET", "/v2/quotes/" + tk + "?start_date=2000-01-01&format=csv", "", "", true},
		{"streamed", "POST", "/v2/quotes", `{"tickers":["` + strings.Join(all, `","`) + `"],"type":"historical","start_date":"2000-01-01"}`, "", true},
		{"static file", "GET", "/openapi.json", "", "", true},
	} {
		for _, api := range []*API{api, loggedAPI} {
			if api == loggedAPI {
				c.name += ", logged"
			}
			checkDeadlines(t, api, cfg.WriteTimeout, c)
		}
	}
}

// deadlineCase is one request of TestWriteTimeoutLongAnswers and whether
// its answer is long (over longAnswer bytes as sent).
type deadlineCase struct {
	name, method, path, body, enc string
	long                          bool
}

// checkDeadlines serves c and checks the write deadlines it set: one, the
// timeout from the answer's start, for a long answer; none for a short
// one.
func checkDeadlines(t *testing.T, api *API, timeout time.Duration, c deadlineCase) {
	t.Helper()
	var r *http.Request
	if c.body != "" {
		r, _ = http.NewRequest(c.method, c.path, strings.NewReader(c.body))
	} else {
		r, _ = http.NewRequest(c.method, c.path, nil)
	}
	r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	if c.enc != "" {
		r.Header.Set("Accept-Encoding", c.enc)
	}
	w := &deadlineWriter{countingWriter: countingWriter{h: http.Header{}}}
	before := time.Now()
	api.ServeHTTP(w, r)
	if w.status != 200 {
		t.Fatalf("%s: status %d", c.name, w.status)
	}
	if !c.long {
		if len(w.deadlines) != 0 || w.n > longAnswer {
			t.Errorf("%s: %d bytes, deadlines %v: a short answer keeps the connection's deadline", c.name, w.n, w.deadlines)
		}
		return
	}
	if len(w.deadlines) != 1 || w.deadlines[0].Before(before.Add(timeout)) || w.deadlines[0].After(time.Now().Add(timeout)) {
		t.Errorf("%s: %d bytes, deadlines %v: want one, the write timeout from the answer's start", c.name, w.n, w.deadlines)
	}
}
