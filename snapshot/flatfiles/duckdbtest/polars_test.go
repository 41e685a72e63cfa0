package duckdbtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// polarsTestEnv opts in to TestPolarsExample (make files-polars-test).
const polarsTestEnv = "PREGAO_POLARS_TEST"

// polarsDir holds the package.json and lockfile of nodejs-polars.
const polarsDir = "testdata/polars"

// TestPolarsExample runs docs/files.md's JavaScript example, as written,
// with Polars (nodejs-polars, npm ci from the committed lockfile) in the
// folder of the scale-1 demo's exported files, then checks every value
// it read against the API's answers, bit for bit: ITAG3's whole
// total-return index, gross and net, and its 2025 closes adjusted as
// adjusted=true answers them. A line the test appends prints the
// example's two frames as JSON. Outside make files-test: it needs
// Node.js 20 or later, npm and the npm registry (or its cache).
func TestPolarsExample(t *testing.T) {
	if os.Getenv(polarsTestEnv) == "" {
		t.Skipf("set %s=1 (make files-polars-test): installs nodejs-polars from npm", polarsTestEnv)
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (Node.js 20 or later and npm)", tool)
		}
	}
	example := docsBlock(t, "js")
	if !strings.Contains(example, `"ITAG3"`) || !strings.Contains(example, `"daily_bars-2025.parquet"`) {
		t.Fatalf("docs/files.md's js example no longer reads ITAG3's 2025 bars; update this test:\n%s", example)
	}

	// Install nodejs-polars in a folder of its own, the example beside it.
	js := t.TempDir()
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(polarsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(js, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	install := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	install.Dir = js
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
	installed := time.Since(start)
	printer := `console.log(JSON.stringify({tr: tr.toRecords(), bars: bars.select("date", "adj_close").toRecords()}));` + "\n"
	if err := os.WriteFile(filepath.Join(js, "example.mjs"), []byte(example+printer), 0o644); err != nil {
		t.Fatal(err)
	}

	f := setup(t)
	start = time.Now()
	run := exec.Command("node", filepath.Join(js, "example.mjs"))
	run.Dir = f.dir // the example names the files relative to their folder
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("node example.mjs: %v\n%s%s", err, stdout.Bytes(), stderr.Bytes())
	}
	ran := time.Since(start)
	out := strings.TrimSpace(stdout.String())
	last := out[strings.LastIndexByte(out, '\n')+1:]
	var got struct {
		TR []struct {
			Date       string
			IndexGross *float64 `json:"index_gross"`
			IndexNet   *float64 `json:"index_net"`
		} `json:"tr"`
		Bars []struct {
			Date     string
			AdjClose *float64 `json:"adj_close"`
		} `json:"bars"`
	}
	if err := json.Unmarshal([]byte(last), &got); err != nil {
		t.Fatalf("the example's frames as JSON: %v\n%s", err, out)
	}

	// The total-return index, gross and net: every session of ITAG3.
	var first, lastDay string
	for _, a := range f.ds.Assets() {
		if a.Ticker == "ITAG3" {
			first, lastDay = a.Daily.Dates[0].String(), a.Daily.Dates[a.Daily.Len()-1].String()
		}
	}
	if first == "" {
		t.Fatal("no ITAG3 in the demo")
	}
	for _, method := range []string{"gross", "net"} {
		var api []map[string]any
		f.get(t, fmt.Sprintf("/v2/quotes/ITAG3/total-return?start_date=%s&end_date=%s&method=%s", first, lastDay, method), &api)
		if len(got.TR) != len(api) {
			t.Fatalf("total return %s: %d rows read by Polars, %d answered", method, len(got.TR), len(api))
		}
		for i, r := range got.TR {
			v := r.IndexGross
			if method == "net" {
				v = r.IndexNet
			}
			if !strings.HasPrefix(r.Date, api[i]["date"].(string)[:10]) || !same(orNaN(v), num(t, api[i]["total_return_index"])) {
				t.Fatalf("total return %s row %d: Polars %s %v, API %v", method, i, r.Date, orNaN(v), api[i])
			}
		}
	}

	// A year of adjusted closes: close / adjustment_factor.
	var api []map[string]any
	f.get(t, "/v2/quotes/ITAG3/historical?start_date=2025-01-01&end_date=2025-12-31&adjusted=true", &api)
	if len(got.Bars) != len(api) || len(api) == 0 {
		t.Fatalf("adjusted closes: %d rows read by Polars, %d answered", len(got.Bars), len(api))
	}
	for i, r := range got.Bars {
		if !strings.HasPrefix(r.Date, api[i]["date"].(string)[:10]) || !same(orNaN(r.AdjClose), num(t, api[i]["close_price"])) {
			t.Fatalf("adjusted close row %d: Polars %s %v, API %v", i, r.Date, orNaN(r.AdjClose), api[i])
		}
	}
	node, _ := exec.Command("node", "--version").Output()
	t.Logf("node %s: npm ci in %v; the example read %d total-return rows and %d bars in %v, each the API's",
		bytes.TrimSpace(node), installed.Round(time.Millisecond), len(got.TR), len(got.Bars), ran.Round(time.Millisecond))
}

func orNaN(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}
