package httpapi

import (
	"strings"
	"testing"
)

// A fresh server, before any request, exports every counter family the
// dashboard and the alerting rules read, at 0: pregao_rate_limited_total
// has a series per key, so the rate-limited panel reads 0, not "No data".
func TestCounterFamiliesFromTheStart(t *testing.T) {
	ts := newTestServer(t, true)
	mfs, err := ts.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]int{}
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			series[mf.GetName()]++
			if c := m.GetCounter(); c != nil && c.GetValue() != 0 && strings.HasPrefix(mf.GetName(), "pregao_") {
				t.Errorf("%s %v: %v before any request", mf.GetName(), m.Label, c.GetValue())
			}
		}
	}
	for name, min := range map[string]int{
		"pregao_rate_limited_total":           testKeys(t).Len(),
		"pregao_auth_failures_total":          2,
		"pregao_snapshot_reloads_total":       2,
		"pregao_keys_reloads_total":           3,
		"pregao_http_requests_total":          len(routeTable) - 1,
		"pregao_answer_cache_hits_total":      1,
		"pregao_http_panics_total":            1,
		"pregao_access_log_dropped_total":     1,
		"pregao_answer_cache_evictions_total": 1,
		"pregao_key_busy_seconds_total":       testKeys(t).Len(),
		"pregao_admission_refused_total":      testKeys(t).Len(),
		"pregao_admission_waited_total":       testKeys(t).Len(),
	} {
		if series[name] < min {
			t.Errorf("%s: %d series at start, want %d", name, series[name], min)
		}
	}
}
