package httpapi

import (
	"strings"
	"testing"
)

// TestReloadSeriesFromStart: both reload results are exported at 0 before
// any reload, so that an alert on increase(...{result="error"}) fires on
// the first failure after a restart.
func TestReloadSeriesFromStart(t *testing.T) {
	ts := newTestServer(t, true)
	body := ts.do("GET", "/metrics", "", "").Body.String()
	for _, want := range []string{`pregao_snapshot_reloads_total{result="error"} 0`, `pregao_snapshot_reloads_total{result="ok"} 0`} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
