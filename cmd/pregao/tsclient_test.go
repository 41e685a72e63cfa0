package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// tsClientDir holds the TypeScript client test's project: package.json
// and its lockfile (openapi-typescript, openapi-fetch and typescript,
// pinned), tsconfig.json (strict) and the calling code.
const tsClientDir = "testdata/tsclient"

// TestGeneratedClientTypeScript generates a TypeScript client from the
// document the server serves (openapi-typescript, then openapi-fetch's
// client over its types; npm ci from the committed lockfile), compiles it
// with tsc --strict, and runs it against the scale-1 demo: every
// operation of the document called and its answer decoded (the calls
// written from the document, as TestGeneratedClient's), calls written by
// hand that use each answer through its generated type, and the
// event-stream reader's self-test. The calling code holds no cast, no
// non-null assertion and no any. Then the live stream: a second server
// replays the live fixture's held-back session, and stream.ts reads it
// through the client from before the session, every event checked
// against its schema and every bar of three tickers against the server's
// historical answer. Outside make test (it needs Node.js and
// npm, from the OS packages, and the npm registry or its cache): make
// client-test, which CI runs.
func TestGeneratedClientTypeScript(t *testing.T) {
	if os.Getenv(oapiClientTestEnv) == "" {
		t.Skipf("set %s=1 (make client-test): installs the npm packages and builds the TypeScript client", oapiClientTestEnv)
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: apt-get install nodejs npm (README.md, \"Two commands\")", tool)
		}
	}
	ds, err := demoDataset()
	if err != nil {
		t.Fatal(err)
	}
	api, key := apiWithKey(t, ds)
	srv := httptest.NewServer(api)
	defer srv.Close()
	liveURL, liveKey, session, liveTickers, stopLive := replayedSession(t)
	defer stopLive()
	resp, err := http.Get(srv.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/openapi.json: %d %v", resp.StatusCode, err)
	}

	dir := t.TempDir()
	entries, err := os.ReadDir(tsClientDir)
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, e := range entries {
		if e.IsDir() {
			continue // node_modules of a local npm install
		}
		b, err := os.ReadFile(filepath.Join(tsClientDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(e.Name(), ".ts") {
			sources = append(sources, e.Name())
		}
	}
	calls, ops, stream := tsClientCalls(t, doc)
	for name, text := range map[string]string{"openapi.json": string(doc), "calls.ts": calls} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sources = append(sources, "calls.ts")
	checkNoCasts(t, dir, sources)

	run := func(env []string, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	start := time.Now()
	nodeVersion := strings.TrimSpace(run(nil, "node", "--version"))
	run(nil, "npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	installed := time.Since(start)
	run(nil, filepath.Join("node_modules", ".bin", "openapi-typescript"), "openapi.json", "-o", "schema.ts")
	schema, err := os.ReadFile(filepath.Join(dir, "schema.ts"))
	if err != nil {
		t.Fatal(err)
	}
	run(nil, filepath.Join("node_modules", ".bin", "tsc"), "-p", ".")
	t.Logf("node %s: npm ci in %v, generated (%d bytes of types) and compiled with tsc --strict in %v",
		nodeVersion, installed.Round(time.Millisecond), len(schema), (time.Since(start) - installed).Round(time.Millisecond))

	// Its lines on stdout; stderr (Node 18 warns that fetch is
	// experimental) only with a failure.
	prog := exec.Command("node", filepath.Join("out", "main.js"))
	prog.Dir = dir
	prog.Env = append(os.Environ(), "PREGAO_URL="+srv.URL, "PREGAO_KEY="+key,
		"PREGAO_STREAM_URL="+liveURL, "PREGAO_STREAM_KEY="+liveKey, "PREGAO_STREAM_TICKERS="+strings.Join(liveTickers, ","), "PREGAO_STREAM_SESSION="+session.String())
	var stderr strings.Builder
	prog.Stderr = &stderr
	stdout, err := prog.Output()
	if err != nil {
		t.Errorf("node out/main.js: %v\n%s", err, stderr.String())
	}
	out := string(stdout)
	var okOps, okTyped, okStream []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		op, found := strings.CutPrefix(l, "ok ")
		switch {
		case !found:
			t.Errorf("%s", l)
		case strings.HasPrefix(op, "typed: ") || strings.HasPrefix(op, "sse: "):
			okTyped = append(okTyped, op)
		case strings.HasPrefix(op, "stream: "):
			okStream = append(okStream, op)
		default:
			okOps = append(okOps, op)
		}
	}
	if len(okOps) != len(ops) {
		t.Errorf("%d of %d operations answered and decoded", len(okOps), len(ops))
	}
	if stream != "" && len(okStream) == 0 {
		t.Errorf("the document has the stream %s: stream.ts must read it", stream)
	}
	t.Logf("%d operations called, %d decoded; %d typed checks passed: %s; %s", len(ops), len(okOps), len(okTyped), strings.Join(okTyped, "; "), strings.Join(okStream, "; "))
}

// replayedSession serves the live fixture's held-back snapshot with the
// replay of its session at full speed, and waits for the session to be
// complete. It returns the server's base URL, its key, the session's day
// and three tickers that trade in the session.
func replayedSession(t *testing.T) (url, key string, day engine.Date, tickers []string, stop func()) {
	t.Helper()
	f := liveFixtureOf(t)
	m, stop := serveLive(t, f, f.base, func(c *ServeConfig) {
		c.Live.Feed, c.Live.FeedSpeed, c.Live.Dir = "replay:"+f.session, "max", t.TempDir()
	})
	waitComplete(t, m)
	full := loadDataset(t, f.full)
	for i := range full.Assets() {
		as := &full.Assets()[i]
		if lo, hi := as.MinuteRange(int64(f.day)*86400, int64(f.day+1)*86400-1); hi > lo && len(tickers) < 3 {
			tickers = append(tickers, as.Ticker)
		}
	}
	if len(tickers) < 3 {
		stop()
		t.Fatalf("%d tickers trade in the session", len(tickers))
	}
	return "http://" + m.Addr(), f.key, f.day, tickers, stop
}

// tsClientCalls writes calls.ts: a function that calls every operation
// of doc with the generated client (path parameters from their examples,
// no query parameters, request bodies from their examples, as
// TestGeneratedClient's program does) and reports each. It returns the
// file, the operations it calls and the path of a text/event-stream
// operation ("" when the document has none).
func tsClientCalls(t *testing.T, doc []byte) (string, []string, string) {
	t.Helper()
	type body struct {
		Ref     string `json:"$ref"`
		Content map[string]struct{ Example any }
	}
	var d struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name, In string
				Example  any
			}
			RequestBody *body
			Responses   map[string]struct {
				Content map[string]json.RawMessage
			}
		}
		Components struct{ RequestBodies map[string]*body }
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	var calls, ops []string
	stream := ""
	for path, item := range d.Paths {
		for method, op := range item {
			label := strings.ToUpper(method) + " " + path
			content := op.Responses["200"].Content
			if _, ok := content["text/event-stream"]; ok {
				stream = label // read by main.ts, not here
				continue
			}
			var init []string
			var pathParams []string
			for _, p := range op.Parameters {
				if p.In == "path" {
					if p.Example == nil {
						t.Fatalf("%s: path parameter %s without an example", label, p.Name)
					}
					pathParams = append(pathParams, fmt.Sprintf("%s: %q", p.Name, fmt.Sprint(p.Example)))
				}
			}
			if len(pathParams) > 0 {
				init = append(init, "params: { path: { "+strings.Join(pathParams, ", ")+" } }")
			}
			if rb := op.RequestBody; rb != nil {
				if rb.Ref != "" {
					rb = d.Components.RequestBodies[strings.TrimPrefix(rb.Ref, "#/components/requestBodies/")]
				}
				if rb == nil {
					t.Fatalf("%s: request body %s not in the document", label, op.RequestBody.Ref)
				}
				media, ok := rb.Content["application/json"]
				if !ok {
					continue // the push feed's lines (NDJSON, CSV), admin keys only: compiled, not called
				}
				if media.Example == nil {
					t.Fatalf("%s: request body without an example", label)
				}
				ex, _ := json.Marshal(media.Example)
				init = append(init, "body: "+string(ex))
			}
			_, isJSON := content["application/json"]
			decoded := `typeof data === "object" && data !== null`
			if !isJSON {
				init = append(init, `parseAs: "text"`)
				decoded = `typeof data === "string" && data.length > 0`
			}
			args := fmt.Sprintf("%q", path)
			if len(init) > 0 {
				args += ", { " + strings.Join(init, ", ") + " }"
			}
			calls = append(calls, fmt.Sprintf("  {\n    const { data, response } = await c.%s(%s);\n    report(%q, response.status, 200, %s);\n  }\n",
				strings.ToUpper(method), args, label, decoded))
			ops = append(ops, label)
		}
	}
	sort.Strings(calls)
	sort.Strings(ops)
	src := `// Written by TestGeneratedClientTypeScript: every operation of the
// document, called with the client generated from it.
import type { PregaoClient, Report } from "./client.js";

export async function everyOperation(c: PregaoClient, report: Report): Promise<void> {
` + strings.Join(calls, "") + "}\n"
	return src, ops, stream
}

// tsCast matches what the calling code must not hold: a type assertion
// (x as T, <T>x), a non-null assertion (x!.y) or the any type.
var tsCast = regexp.MustCompile(`[\w)\]"'` + "`" + `]\s+as\s+[\w{(\[]|[=(,:]\s*<[A-Z]\w*>|[\w)\]]!(?:[.\[)\];,]|\s)|[:<,]\s*any\b`)

// checkNoCasts fails on a cast in the TypeScript sources (comments left
// out).
func checkNoCasts(t *testing.T, dir string, sources []string) {
	t.Helper()
	comment := regexp.MustCompile(`(^|\s)//.*$`)
	for _, name := range sources {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if m := tsCast.FindString(comment.ReplaceAllString(l, "")); m != "" {
				t.Errorf("%s:%d: %q: a cast in the calling code", name, i+1, m)
			}
		}
	}
}

// checkNoCasts's pattern finds the casts and leaves the rest.
func TestTSCastPattern(t *testing.T) {
	for line, cast := range map[string]bool{
		`const q = data as Quote;`:                        true,
		`const q = (data ?? {}) as { a: number };`:        true,
		`const n = <Quote>data;`:                          true,
		`const c = data!.close_price;`:                    true,
		`f(data!);`:                                       true,
		`let x: any = 1;`:                                 true,
		`const m: Record<string, any> = {};`:              true,
		`if (a !== b) {`:                                  false,
		`if (!ok) {`:                                      false,
		`for (const [t, v] of Object.entries(m)) {`:       false,
		`import createClient, { type Client } from`:       false,
		`const close: number | null = q.close_price;`:     false,
		`report(op, status, 200, typeof x === "string");`: false,
	} {
		if got := tsCast.MatchString(line); got != cast {
			t.Errorf("%q: cast %v, want %v", line, got, cast)
		}
	}
}
