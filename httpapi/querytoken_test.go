package httpapi

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
)

// ?token=KEY authenticates only when Config.QueryToken is on; the
// parameter is taken out of the query (the answer and its ETag are those
// of the header's request) and never reaches the access log.
func TestQueryToken(t *testing.T) {
	var buf lockedBuffer
	al := NewAccessLog(&buf, false, 1)
	t.Cleanup(al.Close)
	store := &engine.Store{}
	store.Publish(mustSmall(t))
	cfg := DefaultConfig()
	cfg.AccessLog = al
	cfg.QueryToken = true
	on := New(cfg, store, testKeys(t), nil, prometheus.NewRegistry(), nil)
	off := New(DefaultConfig(), store, testKeys(t), nil, prometheus.NewRegistry(), nil)

	get := func(api http.Handler, target, key string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", target, nil)
		if key != "" {
			r.Header.Set("Authorization", "Bearer "+key)
		}
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		return w
	}
	tok := url.QueryEscape(testKeyDelayed)
	byHeader := get(on, "/v2/companies?limit=2", testKeyDelayed)
	byToken := get(on, "/v2/companies?token="+tok+"&limit=2", "")
	if byToken.Code != 200 || byToken.Body.String() != byHeader.Body.String() || byToken.Header().Get("ETag") != byHeader.Header().Get("ETag") {
		t.Errorf("?token=: %d %q, the header's request: %d %q", byToken.Code, byToken.Header().Get("ETag"), byHeader.Code, byHeader.Header().Get("ETag"))
	}
	if w := get(on, "/v2/companies?limit=2&token="+tok+"&offset=1", ""); w.Code != 200 || w.Header().Get("X-Total-Count") == "" {
		t.Errorf("token between parameters: %d %s", w.Code, w.Body)
	}
	if w := get(on, "/v2/companies?token=pg_nope", ""); w.Code != 401 || !strings.Contains(w.Body.String(), "unknown API key") {
		t.Errorf("unknown token: %d %s", w.Code, w.Body)
	}
	// Off (the default): a 401 that says why.
	if w := get(off, "/v2/companies?token="+tok, ""); w.Code != 401 || !strings.Contains(w.Body.String(), "--query-token") {
		t.Errorf("token on a server without --query-token: %d %s", w.Code, w.Body)
	}
	// The access log writes on a goroutine of its own: wait for the
	// line (the bound only guards a hang).
	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(buf.String(), "status=401"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no status=401 line in the access log:\n%s", buf.String())
		}
	}
	al.Close()
	if log := buf.String(); strings.Contains(log, testKeyDelayed) || strings.Contains(log, "pg_nope") || strings.Contains(log, "token") || !strings.Contains(log, "/v2/companies") {
		t.Errorf("the access log shows the token (or nothing):\n%s", log)
	}
}
