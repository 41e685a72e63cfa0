package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
)

// leaving sends api a GET of path with the delayed plan's key whose
// client leaves 20 ms after it is sent.
func leaving(api *API, path string) *httptest.ResponseRecorder {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	w := httptest.NewRecorder()
	api.ServeHTTP(w, r)
	return w
}

// checkGone checks that w got nothing (no status line, no error body: the
// client left) and that the access log and the metrics count one 499 of
// route, and no 5xx or 429.
func checkGone(t *testing.T, w *httptest.ResponseRecorder, reg *prometheus.Registry, log *lockedBuffer, route string) {
	t.Helper()
	if w.Body.Len() != 0 || w.Header().Get("Content-Type") != "" || w.Header().Get("Retry-After") != "" {
		t.Errorf("a request whose client left was answered: %d %v %s", w.Code, w.Header(), w.Body)
	}
	if got := requestsWith(t, reg, route, "499"); got != 1 {
		t.Errorf("requests{route=%q,code=499} %v, want 1", route, got)
	}
	for _, code := range []string{"503", "429", "500"} {
		if got := requestsWith(t, reg, route, code); got != 0 {
			t.Errorf("requests{route=%q,code=%s} %v, want 0", route, code, got)
		}
	}
	if line := log.String(); !strings.Contains(line, "status=499 ") {
		t.Errorf("access log %q, want status=499", line)
	}
}

// A request whose client leaves while it waits for its snapshot's
// deferred kinds is logged and counted as 499 (client closed request),
// not as the 503 of a server that could not answer, and nothing is sent.
func TestClientGoneWhileDeferredIs499(t *testing.T) {
	ds, _ := smallDeferred(t)
	var log lockedBuffer
	cfg := DefaultConfig()
	al := NewAccessLog(&log, false, 1)
	cfg.AccessLog = al
	reg := prometheus.NewRegistry()
	store := &engine.Store{}
	api := New(cfg, store, testKeys(t), nil, reg, nil)
	api.PrepareLater(ds, "", time.Time{})
	store.Publish(ds)
	api.Published()

	w := leaving(api, "/v2/companies/ENHZ/documents")
	al.Close()
	checkGone(t, w, reg, &log, "/companies/:id/documents")
}

// A request whose client leaves while it waits for a slot of its key is
// logged and counted as 499, not refused: no 429, no refusal counted
// against the key, nothing sent.
func TestClientGoneWhileAdmittingIs499(t *testing.T) {
	store := &engine.Store{}
	store.Publish(mustSmall(t))
	var log lockedBuffer
	cfg := DefaultConfig()
	al := NewAccessLog(&log, false, 1)
	cfg.AccessLog = al
	cfg.Admission = &Admission{Cores: 1, MaxWait: 10 * time.Second}
	reg := prometheus.NewRegistry()
	keys := testKeys(t)
	api := New(cfg, store, keys, nil, reg, nil)
	k := keys.find(testKeyDelayed).adm
	if _, _, ok := api.adm.acquire(context.Background(), k, time.Now()); !ok {
		t.Fatal("slot refused")
	}
	w := leaving(api, "/v2/companies/ENHZ")
	al.Close()
	checkGone(t, w, reg, &log, "/companies/:id")
	if got := metricValue(t, reg, "pregao_admission_refused_total", "delayed"); got != 0 {
		t.Errorf("refused (delayed) %v, want 0", got)
	}
	if got := metricValue(t, reg, "pregao_admission_waited_total", "delayed"); got != 1 {
		t.Errorf("waited (delayed) %v, want 1", got)
	}
}
