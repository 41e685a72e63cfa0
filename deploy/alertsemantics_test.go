package deploy

import (
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/promqltest"
)

// alertExprs returns each alert's expression in prometheus/alerts.yml.
func alertExprs(t *testing.T) map[string]string {
	t.Helper()
	groups, errs := rulefmt.ParseFile("prometheus/alerts.yml", false, model.LegacyValidation, newParser(), slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	out := map[string]string{}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			out[r.Alert] = strings.Join(strings.Fields(r.Expr), " ")
		}
	}
	return out
}

// The alerts fire on what they describe, evaluated by Prometheus's own
// engine on made-up series (1970-01-01 is a Thursday, so 14:00 UTC is
// within trading hours):
//   - PregaoHighErrorRate: not on the probes' expected 503s (a replica
//     loading or draining), but on the API's;
//   - PregaoLatencySLO: not on streams and file downloads, which last as
//     long as their clients read, but on slow API answers;
//   - PregaoLiveFeedStalled: its value is the lag in seconds, which the
//     description prints as a duration.
func TestAlertsSemantics(t *testing.T) {
	ex := alertExprs(t)
	const at = "eval instant at 14h "
	script := `
load 1m
	pregao_http_requests_total{job="pregao",instance="probed",route="/readyz",code="503"} 0+10x900
	pregao_http_requests_total{job="pregao",instance="probed",route="/metrics",code="200"} 0+1x900
	pregao_http_requests_total{job="pregao",instance="probed",route="/quotes/:ticker",code="200"} 0+100x900
	pregao_http_requests_total{job="pregao",instance="failing",route="/quotes/:ticker",code="503"} 0+10x900
	pregao_http_requests_total{job="pregao",instance="failing",route="/quotes/:ticker",code="200"} 0+100x900
	pregao_http_request_duration_seconds_bucket{job="pregao",instance="streaming",route="/stream/quotes",le="0.25"} 0x900
	pregao_http_request_duration_seconds_bucket{job="pregao",instance="streaming",route="/stream/quotes",le="5"} 0+10x900
	pregao_http_request_duration_seconds_bucket{job="pregao",instance="streaming",route="/stream/quotes",le="+Inf"} 0+10x900
	pregao_http_request_duration_seconds_bucket{job="pregao",instance="streaming",route="/files/:name",le="0.25"} 0x900
	pregao_http_request_duration_seconds_bucket{job="pregao",instance="streaming",route="/files/:name",le="5"} 0+10x900
	pregao_http_request_duration_seconds_bucket{job="pregao",instance="streaming",route="/files/:name",le="+Inf"} 0+10x900
	pregao_http_request_duration_seconds_bucket{job="pregao",instance="streaming",route="/quotes/:ticker",le="0.25"} 0+100x900
	pregao_http_request_duration_seconds_bucket{job="pregao",instance="streaming",route="/quotes/:ticker",le="5"} 0+100x900
	pregao_http_request_duration_seconds_bucket{job="pregao",instance="streaming",route="/quotes/:ticker",le="+Inf"} 0+100x900
	pregao_http_request_duration_seconds_bucket{job="pregao",instance="slow",route="/quotes/:ticker",le="0.25"} 0x900
	pregao_http_request_duration_seconds_bucket{job="pregao",instance="slow",route="/quotes/:ticker",le="5"} 0+100x900
	pregao_http_request_duration_seconds_bucket{job="pregao",instance="slow",route="/quotes/:ticker",le="+Inf"} 0+100x900
	pregao_live_running{job="pregao",instance="live"} 1x900
	pregao_live_complete{job="pregao",instance="live"} 0x900
	pregao_live_lag_seconds{job="pregao",instance="live"} 3600x900

` + at + ex["PregaoHighErrorRate"] + `
	{job="pregao",instance="failing"} 0.09090909090909091

` + at + ex["PregaoLatencySLO"] + `
	{job="pregao",instance="slow"} 4.9525

` + at + ex["PregaoLiveFeedStalled"] + `
	pregao_live_lag_seconds{job="pregao",instance="live"} 3600
`
	promqltest.RunTest(t, script, promqltest.NewTestEngine(t, false, 5*time.Minute, 1e6))
}

// Every alert of prometheus/alerts.yml has its row in the table of
// docs/operations.md, "Monitoring", and every row names an alert.
func TestAlertsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\s*\\| `(Pregao[A-Za-z]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		rows[m[1]] = true
	}
	ex := alertExprs(t)
	for a := range ex {
		if !rows[a] {
			t.Errorf("alert %s has no row in docs/operations.md's table", a)
		}
	}
	for r := range rows {
		if _, ok := ex[r]; !ok {
			t.Errorf("docs/operations.md's table has %s, which alerts.yml does not define", r)
		}
	}
}
