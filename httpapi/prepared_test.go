package httpapi

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
)

// A GET answer named once at its view is named again from the table of
// prepared answers (no key, check or validator computed again), and a
// warm server answers byte for byte, headers included, as a server that
// never saw the request: at each second of a moving cut-off, across its
// minutes, for both plans and both representations.
func TestPreparedAnswersFollowTheView(t *testing.T) {
	day := time.Date(2024, 3, 28, 0, 0, 0, 0, time.UTC)
	clock := &movingClock{}
	clock.set(day.Add(13*time.Hour + 16*time.Minute + 30*time.Second))
	warm := &testServer{store: &engine.Store{}, reg: prometheus.NewRegistry()}
	warm.store.Publish(mustSmall(t))
	warm.api = New(DefaultConfig(), warm.store, testKeys(t), clock, warm.reg, nil)

	paths := []string{
		"/v2/indexes/IBOV/highs?limit=10",
		"/v2/indexes/IBOV/highs",
		"/v2/companies/ENHZ",
		"/v2/quotes/ENHZ3?type=current",
		"/v2/quotes/ENHZ3?type=historical&start_date=2024-03-20&end_date=2024-03-28&format=csv",
	}
	headers := []string{"Etag", "Last-Modified", "Cache-Control", "Content-Type", "Vary", "X-Total-Count", "Link"}
	for _, at := range []time.Duration{
		13*time.Hour + 16*time.Minute + 30*time.Second,
		13*time.Hour + 16*time.Minute + 45*time.Second, // same minute: same ETag, shorter max-age
		13*time.Hour + 17*time.Minute + 5*time.Second,  // the next minute: another view
		13*time.Hour + 30*time.Minute,                  // every bar complete
		21 * time.Hour,                                 // the session closed
		30 * time.Hour,                                 // the next day (eod plan moves)
	} {
		now := day.Add(at)
		clock.set(now)
		cold := serverAt(t, now)
		for _, key := range []string{testKeyDelayed, testKeyEOD} {
			for _, p := range paths {
				for range 3 { // first named, then prepared (and kept)
					got := doH(warm, "GET", p, key, "")
					want := doH(cold, "GET", p, key, "")
					if got.Code != want.Code || got.Body.String() != want.Body.String() {
						t.Fatalf("at %v %s %s: %d %s, a cold server %d %s", now, key, p, got.Code, got.Body, want.Code, want.Body)
					}
					for _, h := range headers {
						g, w := got.Header().Values(h), want.Header().Values(h)
						if h == "Etag" { // each server seeds its ETags: the answer's part follows
							g, w = etagTails(g), etagTails(w)
						}
						if !slices.Equal(g, w) {
							t.Errorf("at %v %s %s: %s %q, a cold server %q", now, key, p, h, g, w)
						}
					}
					if etag := got.Header().Get("Etag"); etag != "" {
						if w := doH(warm, "GET", p, key, "", "If-None-Match", etag); w.Code != 304 {
							t.Errorf("at %v %s %s: If-None-Match its ETag: %d", now, key, p, w.Code)
						}
					}
				}
				// The request was named: the table holds it at this view.
				u := httptest.NewRequest("GET", p, nil).URL
				pr := warm.api.info(warm.store.Current()).prepared[preparedSlot(planOf(key), u.Path, u.RawQuery)].Load()
				if pr == nil || pr.path != u.Path || pr.query != u.RawQuery || pr.plan != planOf(key) {
					t.Errorf("at %v %s %s: not prepared after 3 requests", now, key, p)
				}
			}
		}
	}
}

func etagTails(v []string) []string {
	out := make([]string, len(v))
	for i, e := range v {
		_, out[i], _ = strings.Cut(e, "-")
	}
	return out
}

func planOf(key string) string {
	if key == testKeyEOD {
		return PlanEOD
	}
	return PlanDelayed
}
