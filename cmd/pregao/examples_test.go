package main

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/snapshot/flatfiles"
)

// example is one documented request, with the first line of the answer
// the document shows ("" when it shows none).
type example struct {
	where, method, path, body, shown string
}

var (
	// GET /v2/… or POST /v2/… {body} at the start of a line in a code block.
	docRequest = regexp.MustCompile(`^(GET|POST) (/v2/\S+)(?: (\{.*\}))?`)
	// curl … [-d 'BODY'] ['http://127.0.0.1:8080/v2/…'].
	curlBody = regexp.MustCompile(`-d '([^']*)'`)
	curlURL  = regexp.MustCompile(`'?http://127\.0\.0\.1:8080(/v2/[^' ]*)'?`)
)

// docExamples returns the requests of the code blocks of file.
func docExamples(t *testing.T, file string) []example {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []example
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	in, n := false, 0
	for sc.Scan() {
		n++
		l := sc.Text()
		if strings.HasPrefix(l, "```") {
			in = !in
			continue
		}
		if !in {
			continue
		}
		where := file + ":" + itoa(n)
		if m := docRequest.FindStringSubmatch(l); m != nil {
			if len(out) > 0 && out[len(out)-1].shown == "?" {
				out[len(out)-1].shown = ""
			}
			out = append(out, example{where: where, method: m[1], path: m[2], body: m[3], shown: "?"})
			if i := strings.Index(l, "→"); i > 0 {
				out[len(out)-1].shown = strings.TrimSpace(l[i+len("→"):])
			}
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(l), "curl ") {
			if m := curlURL.FindStringSubmatch(l); m != nil {
				e := example{where: where, method: "GET", path: m[1]}
				if b := curlBody.FindStringSubmatch(l); b != nil {
					e.method, e.body = "POST", b[1]
				}
				out = append(out, e)
			}
			continue
		}
		if len(out) > 0 && out[len(out)-1].shown == "?" {
			out[len(out)-1].shown = l
		}
	}
	if len(out) > 0 && out[len(out)-1].shown == "?" {
		out[len(out)-1].shown = ""
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestDocsExamples: every request in README.md and docs/api.md answers 200
// on the demo snapshot `make run` serves (seed 1, scale 1, snapshot clock),
// and an answer the document shows starts as the real one does.
func TestDocsExamples(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds the scale-1 demo (make test runs it in its pass without -race)")
	}
	ds, err := demoDataset()
	if err != nil {
		t.Fatal(err)
	}
	api, key := apiWithKey(t, ds)
	exs := append(docExamples(t, "../../README.md"), docExamples(t, "../../docs/api.md")...)
	if len(exs) < 20 {
		t.Fatalf("%d examples found: the parser lost them", len(exs))
	}
	for _, ex := range exs {
		if strings.HasPrefix(ex.path, "/v2/admin/") {
			continue // the push feed's, with files for bodies: httpapi's TestPushDocExamples sends them
		}
		r := httptest.NewRequest(ex.method, ex.path, strings.NewReader(ex.body))
		r.Header.Set("Authorization", "Bearer "+key)
		if strings.HasPrefix(ex.path, "/v2/stream/") {
			// A stream lasts: its start (the session's state) is enough.
			ctx, cancel := context.WithTimeout(r.Context(), 200*time.Millisecond)
			r = r.WithContext(ctx)
			defer cancel()
		}
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Errorf("%s: %s %s: %d %.200s", ex.where, ex.method, ex.path, w.Code, w.Body)
			continue
		}
		if shown := strings.TrimSuffix(strings.TrimSuffix(ex.shown, "…"), ","); shown != "" && !strings.HasPrefix(w.Body.String(), shown[:min(len(shown), 60)]) {
			t.Errorf("%s: %s %s: the document shows %.60q, the demo answers %.60q", ex.where, ex.method, ex.path, shown, w.Body.String())
		}
	}
	t.Logf("%d documented requests checked", len(exs))
	checkReadmeTickers(t, api, key)
}

// checkReadmeTickers checks what README.md's table of demo tickers says
// each one shows: a generator change that moves them fails here.
func checkReadmeTickers(t *testing.T, api http.Handler, key string) {
	get := func(path string) string {
		r := httptest.NewRequest("GET", path, nil)
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Errorf("README ticker: GET %s: %d %.200s", path, w.Code, w.Body)
		}
		return w.Body.String()
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ row, path, want string }{
		{"| `TQXZ11` | the top gainer", "/v2/stocks/variations?limit=1", `"gainers":[{"position":1,"ticker":"TQXZ11"`},
		{"| `LITA3`, `LITA4`, `LITA11` |", "/v2/companies?search=LITA", `"tickers":[{"ticker":"LITA11","stock_type":"UNIT"},{"ticker":"LITA3","stock_type":"CS"},{"ticker":"LITA4","stock_type":"PS"}]`},
		{"| `CAJT3` | a 1:3 split, ex-date 2025-02-13", "/v2/companies/CAJT3/corporate-actions", `"prior_ex_date":"2025-02-12T00:00:00Z"`},
		{"| `CAJT3` | a 1:3 split, ex-date 2025-02-13", "/v2/companies/CAJT3/corporate-actions", `"factor":3,"legs":[],"type":"STOCK_SPLIT"`},
		{"| `PAME3` | a spin-off with legs, its holders receiving `PONT3`", "/v2/companies/PAME3/corporate-actions", `"ticker":"PONT3"`},
		{"| `PAME3` | a spin-off with legs", "/v2/companies/PAME3/corporate-actions", `"type":"SPIN_OFF_CAPITAL_REDUCTION_QUANTITY"`},
		{"| `AILO11` | a fund (`/traded-funds/AILO11/ratios`) |", "/v2/traded-funds/AILO11/ratios?limit=1", `{"`},
		{"| `NORG33` | a BDR", "/v2/companies?bdr=true&search=NORG", `"kind":"BDR","tickers":[{"ticker":"NORG33","stock_type":"BDR"}]`},
		{"| `PLAE3` | 1-minute bars", "/v2/quotes/PLAE3?type=chart", `"chart":{"1d":[{`},
	} {
		if !strings.Contains(string(readme), c.row) {
			t.Errorf("README.md lacks the row %q", c.row)
		}
		if body := get(c.path); !strings.Contains(body, c.want) {
			t.Errorf("README.md says %q, but GET %s lacks %q: %.300s", c.row, c.path, c.want, body)
		}
	}
}

// apiWithKey serves ds (snapshot clock) to one delayed-plan key, returned.
func apiWithKey(t *testing.T, ds *engine.Dataset) (*httpapi.API, string) {
	t.Helper()
	store := &engine.Store{}
	store.Publish(ds)
	keys, key := delayedKey(t, ds)
	api := httpapi.New(httpapi.DefaultConfig(), store, keys, httpapi.SnapshotClock{Store: store}, prometheus.NewRegistry(), nil)
	// GET /files: the companies' and securities' files alone (the whole
	// demo's take half a minute), built on demand.
	files, err := flatfiles.NewCache(flatfiles.CacheConfig{Dir: t.TempDir(), Datasets: []string{"companies", "securities"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	api.SetFiles(fileSource{files})
	// Built before the callers ask (503 while they are being built).
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		r := httptest.NewRequest("GET", "/v2/files", nil)
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		if w.Code == http.StatusOK {
			break
		}
		if w.Code != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("GET /v2/files: %d %s", w.Code, w.Body)
		}
	}
	return api, key
}

// delayedKey returns keys holding one key of the delayed plan, and that
// key.
func delayedKey(t *testing.T, ds *engine.Dataset) (*httpapi.Keys, string) {
	t.Helper()
	var f httpapi.KeysFile
	key, e, err := httpapi.NewKey("test", httpapi.PlanDelayed, ds.AsOf())
	if err != nil {
		t.Fatal(err)
	}
	f.Keys = append(f.Keys, e)
	keys, err := httpapi.NewKeys(f)
	if err != nil {
		t.Fatal(err)
	}
	return keys, key
}
