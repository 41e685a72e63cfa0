package deploy

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

// metricNames returns the metric names of every selector in expr.
func metricNames(tb testing.TB, expr parser.Expr) []string {
	tb.Helper()
	var names []string
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
				name = m.Value
			}
		}
		if name == "" {
			tb.Errorf("%s: a selector without a metric name", expr)
		}
		names = append(names, name)
		return nil
	})
	return names
}

// knownMetric reports whether name is one that cmd/pregao's
// TestDeployMetricsExported checks against the server: it finds names by
// their prefix, so every name here must have one of these (or be up,
// which Prometheus itself records).
func knownMetric(name string) bool {
	return name == "up" || strings.HasPrefix(name, "pregao_") || strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_")
}

func newParser() parser.Parser { return parser.NewParser(parser.Options{}) }

func TestAlertingRules(t *testing.T) {
	const file = "prometheus/alerts.yml"
	groups, errs := rulefmt.ParseFile(file, false, model.LegacyValidation, newParser(), slog.New(slog.DiscardHandler))
	for _, err := range errs {
		t.Errorf("%s: %v", file, err)
	}
	if len(errs) > 0 {
		t.FailNow()
	}
	if len(groups.Groups) == 0 {
		t.Fatalf("%s: no groups", file)
	}
	alerts := map[string]bool{}
	p := newParser()
	for _, g := range groups.Groups {
		if g.Name == "" || len(g.Rules) == 0 {
			t.Errorf("group %q: want a name and rules", g.Name)
		}
		for _, r := range g.Rules {
			if r.Alert == "" {
				t.Errorf("group %s: a rule that is not an alert (record %q)", g.Name, r.Record)
				continue
			}
			alerts[r.Alert] = true
			if time.Duration(r.For) <= 0 {
				t.Errorf("%s: no for: one bad scrape would page", r.Alert)
			}
			if s := r.Labels["severity"]; s != "warning" && s != "critical" {
				t.Errorf("%s: severity %q, want warning or critical", r.Alert, s)
			}
			for _, a := range []string{"summary", "description"} {
				if strings.TrimSpace(r.Annotations[a]) == "" {
					t.Errorf("%s: no %s annotation", r.Alert, a)
				}
			}
			expr, err := p.ParseExpr(r.Expr)
			if err != nil {
				t.Errorf("%s: %v", r.Alert, err)
				continue
			}
			for _, n := range metricNames(t, expr) {
				if !knownMetric(n) {
					t.Errorf("%s: metric %s has no prefix the server test checks", r.Alert, n)
				}
			}
		}
	}
	for _, want := range []string{"PregaoDown", "PregaoNotReady", "PregaoSnapshotStale", "PregaoSnapshotReloadFailing", "PregaoHighErrorRate", "PregaoLatencySLO"} {
		if !alerts[want] {
			t.Errorf("no alert %s", want)
		}
	}
}

// grafanaVars replaces the dashboard's variables with values PromQL
// accepts: intervals with a duration, the others (used only inside label
// matchers) with a regular expression.
var grafanaVars = regexp.MustCompile(`\$(?:\{[a-zA-Z_]+\}|[a-zA-Z_]+)`)

func expandVars(expr string) string {
	return grafanaVars.ReplaceAllStringFunc(expr, func(v string) string {
		switch strings.Trim(v, "${}") {
		case "__rate_interval", "__interval", "__range":
			return "5m"
		}
		return ".*"
	})
}

type dashPanel struct {
	ID         int             `json:"id"`
	Type       string          `json:"type"`
	Title      string          `json:"title"`
	Datasource json.RawMessage `json:"datasource"`
	GridPos    *struct{ H, W, X, Y int }
	Targets    []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []dashPanel `json:"panels"`
}

type dashboard struct {
	UID           string      `json:"uid"`
	Title         string      `json:"title"`
	SchemaVersion int         `json:"schemaVersion"`
	Panels        []dashPanel `json:"panels"`
	Templating    struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Definition string          `json:"definition"`
			Query      json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

func TestGrafanaDashboard(t *testing.T) {
	const file = "grafana/pregao.json"
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if d.UID == "" || d.Title == "" || d.SchemaVersion == 0 || len(d.Panels) == 0 {
		t.Fatalf("%s: want uid, title, schemaVersion and panels", file)
	}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
		if v.Type != "query" {
			continue
		}
		// label_values(SELECTOR, label): the selector must parse too.
		m := regexp.MustCompile(`^label_values\((.*),\s*([a-zA-Z_]+)\)$`).FindStringSubmatch(v.Definition)
		if m == nil {
			t.Errorf("variable %s: definition %q, want label_values(selector, label)", v.Name, v.Definition)
			continue
		}
		checkExpr(t, "variable "+v.Name, m[1])
	}
	ids := map[int]bool{}
	var walk func([]dashPanel)
	walk = func(ps []dashPanel) {
		for _, p := range ps {
			where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
			if p.ID == 0 || ids[p.ID] {
				t.Errorf("%s: missing or repeated id", where)
			}
			ids[p.ID] = true
			if p.GridPos == nil || p.GridPos.W == 0 || p.GridPos.H == 0 || p.GridPos.X+p.GridPos.W > 24 {
				t.Errorf("%s: bad gridPos", where)
			}
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if !strings.Contains(string(p.Datasource), "${datasource}") {
				t.Errorf("%s: datasource %s, want the ${datasource} variable", where, p.Datasource)
			}
			if len(p.Targets) == 0 {
				t.Errorf("%s: no query", where)
			}
			for _, tg := range p.Targets {
				for _, v := range grafanaVars.FindAllString(tg.Expr, -1) {
					if name := strings.Trim(v, "${}"); !strings.HasPrefix(name, "__") && !vars[name] {
						t.Errorf("%s: %s is not a dashboard variable", where, v)
					}
				}
				checkExpr(t, where+" "+tg.RefID, tg.Expr)
			}
		}
	}
	walk(d.Panels)
}

// checkExpr parses expr (Grafana variables expanded) and checks its
// metric names.
func checkExpr(tb testing.TB, where, expr string) {
	tb.Helper()
	e, err := newParser().ParseExpr(expandVars(expr))
	if err != nil {
		tb.Errorf("%s: %q: %v", where, expr, err)
		return
	}
	names := metricNames(tb, e)
	if len(names) == 0 {
		tb.Errorf("%s: %q selects no metric", where, expr)
	}
	for _, n := range names {
		if !knownMetric(n) {
			tb.Errorf("%s: metric %s has no prefix the server test checks", where, n)
		}
	}
}
