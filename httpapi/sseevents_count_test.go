package httpapi

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// eventsBrokenWriter is a ResponseWriter whose writes fail (a client gone).
type eventsBrokenWriter struct{ *httptest.ResponseRecorder }

func (eventsBrokenWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// pregao_stream_events_total counts the events sent: those of a write
// that failed are not.
func TestStreamEventsCountedWhenSent(t *testing.T) {
	f := newSSEFixture(t)
	a := f.apis[0]
	evs := []sseEvent{
		{kind: kindSession, msg: []byte("event: session\ndata: {}\n\n")},
		{ticker: "AAAA3", kind: kindQuote, msg: []byte("event: quote\ndata: {}\n\n")},
		{ticker: "BBBB3", kind: kindQuote, msg: []byte("event: quote\ndata: {}\n\n")},
		{ticker: "BBBB3", kind: kindBar, msg: []byte("event: bar\ndata: {}\n\n")},
	}
	count := func() map[string]float64 {
		m := map[string]float64{}
		for _, k := range []string{"bar", "correction", "quote", "session"} {
			m[k] = testutil.ToFloat64(a.streams.m.events.WithLabelValues(k))
		}
		return m
	}
	before := count()
	bad := eventsBrokenWriter{httptest.NewRecorder()}
	out := &sseOut{a: a, w: bad, rc: http.NewResponseController(bad)}
	out.events(evs, nil)
	if out.err == nil {
		t.Fatal("the failing write reported no error")
	}
	if got := count(); got["quote"] != before["quote"] || got["session"] != before["session"] || got["bar"] != before["bar"] {
		t.Errorf("events of a failed write counted: %v, before %v", got, before)
	}
	rec := httptest.NewRecorder()
	out = &sseOut{a: a, w: rec, rc: http.NewResponseController(rec)}
	out.events(evs, []string{"BBBB3"})
	got := count()
	for k, want := range map[string]float64{"session": 1, "quote": 1, "bar": 1, "correction": 0} {
		if got[k]-before[k] != want {
			t.Errorf("%s events counted: %v, want %v (sent %q)", k, got[k]-before[k], want, rec.Body.String())
		}
	}
}
