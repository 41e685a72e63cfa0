package main

import (
	"bytes"
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
)

// The generator and the runtime its code needs, pinned: fetched through
// the Go module proxy on first use (make client-test).
const (
	oapiCodegen        = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2"
	oapiRuntime        = "github.com/oapi-codegen/runtime@v1.9.0"
	oapiClientTestEnv  = "PREGAO_CLIENT_TEST"
	clientTestMainFile = "main.go"
)

// TestGeneratedClient generates a Go client from the document the server
// serves (oapi-codegen, pinned), compiles it and calls every operation
// of the document against the scale-1 demo: each answers its documented
// success status and decodes without error into the generated types,
// and no generated field is a float32. HEAD on every GET and OPTIONS on
// every path, which the document describes once, are sent too. Outside
// make test (it fetches the generator and builds a megabyte of generated
// code): make client-test, which CI runs.
func TestGeneratedClient(t *testing.T) {
	if os.Getenv(oapiClientTestEnv) == "" {
		t.Skipf("set %s=1 (make client-test): fetches oapi-codegen and builds the generated client", oapiClientTestEnv)
	}
	ds, err := demoDataset()
	if err != nil {
		t.Fatal(err)
	}
	api, key := apiWithKey(t, ds)
	srv := httptest.NewServer(api)
	defer srv.Close()
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
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
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
	write("openapi.json", string(doc))
	write("oapi-codegen.yaml", "package: main\ngenerate:\n  client: true\n  models: true\noutput: client.gen.go\n")
	write("go.mod", "module pregaoclient\n\ngo 1.26\n")
	main, ops := clientTestMain(t, doc)
	write(clientTestMainFile, main)

	start := time.Now()
	run(nil, "go", "run", oapiCodegen, "-config", "oapi-codegen.yaml", "openapi.json")
	gen, err := os.ReadFile(filepath.Join(dir, "client.gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(gen, []byte("float32")); n > 0 {
		t.Errorf("the generated client has %d float32 fields: a number of the document lacks format double", n)
	}
	run(nil, "go", "get", oapiRuntime)
	run(nil, "go", "mod", "tidy")
	run(nil, "go", "build", "-o", "client", ".")
	t.Logf("generated and compiled in %v (%d bytes of generated code)", time.Since(start).Round(time.Millisecond), len(gen))

	out := run([]string{"PREGAO_URL=" + srv.URL, "PREGAO_KEY=" + key}, filepath.Join(dir, "client"))
	var okOps []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if op, found := strings.CutPrefix(l, "ok "); found {
			okOps = append(okOps, op)
		} else {
			t.Errorf("%s", l)
		}
	}
	if len(okOps) != len(ops) {
		t.Errorf("%d of %d operations answered and decoded", len(okOps), len(ops))
	}
	t.Logf("%d operations called, %d decoded into the generated types", len(ops), len(okOps))
	t.Logf("HEAD and OPTIONS: %d requests answered as described", headAndOptions(t, srv.URL, key, doc))
}

// headAndOptions sends HEAD to every GET operation of doc (path
// parameters from their examples) and OPTIONS to every path, as
// info.description says they are answered: HEAD as GET without a body,
// OPTIONS 204 with Allow. It returns the number of requests.
func headAndOptions(t *testing.T, base, key string, doc []byte) int {
	t.Helper()
	var d struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name, In string
				Example  any
			}
		}
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	n := 0
	for path, item := range d.Paths {
		for method, op := range item {
			target := path
			for _, p := range op.Parameters {
				if p.In == "path" {
					target = strings.Replace(target, "{"+p.Name+"}", fmt.Sprint(p.Example), 1)
				}
			}
			if strings.Contains(path, "/stream/") { // a stream wants what to stream
				for _, p := range op.Parameters {
					if p.In == "query" && p.Name == "tickers" {
						target += "?tickers=" + fmt.Sprint(p.Example)
					}
				}
			}
			send := func(m string) *http.Response {
				req, _ := http.NewRequest(m, base+target, nil)
				req.Header.Set("Authorization", "Bearer "+key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatalf("%s %s: %v", m, target, err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if len(body) > 0 && m != http.MethodGet {
					t.Errorf("%s %s: %d bytes of body", m, target, len(body))
				}
				n++
				return resp
			}
			if r := send(http.MethodOptions); r.StatusCode != http.StatusNoContent || !strings.Contains(r.Header.Get("Allow"), strings.ToUpper(method)) {
				t.Errorf("OPTIONS %s: %d, Allow %q", target, r.StatusCode, r.Header.Get("Allow"))
			}
			if method == "get" {
				if r := send(http.MethodHead); r.StatusCode != http.StatusOK {
					t.Errorf("HEAD %s: %d", target, r.StatusCode)
				}
			}
		}
	}
	return n
}

// clientTestMain writes the program that calls every operation of doc
// with the generated client: path parameters from their examples, no
// query parameters, request bodies from their examples. It prints "ok
// METHOD path" per operation that answered its success status and
// decoded, an explanation otherwise. It returns the program and the
// operations it calls.
func clientTestMain(t *testing.T, doc []byte) (string, []string) {
	t.Helper()
	type param struct {
		Name, In string
		Example  any
	}
	type body struct {
		Ref     string `json:"$ref"`
		Content map[string]struct{ Example any }
	}
	var d struct {
		Paths map[string]map[string]struct {
			OperationID string
			Parameters  []param
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
	var calls []string
	var ops []string
	for path, item := range d.Paths {
		for method, op := range item {
			name := strings.ToUpper(op.OperationID[:1]) + op.OperationID[1:]
			args := []string{"ctx"}
			hasQuery := false
			for _, p := range op.Parameters {
				switch p.In {
				case "path":
					if p.Example == nil {
						t.Fatalf("%s %s: path parameter %s without an example", method, path, p.Name)
					}
					args = append(args, fmt.Sprintf("%q", fmt.Sprint(p.Example)))
				case "query":
					hasQuery = true
				}
			}
			if hasQuery {
				args = append(args, "&"+name+"Params{}")
			}
			var b strings.Builder
			label := strings.ToUpper(method) + " " + path
			fmt.Fprintf(&b, "\t{ // %s\n", label)
			if rb := op.RequestBody; rb != nil && rb.Ref != "" {
				op.RequestBody = d.Components.RequestBodies[strings.TrimPrefix(rb.Ref, "#/components/requestBodies/")]
				if op.RequestBody == nil {
					t.Fatalf("%s %s: request body %s not in the document", method, path, rb.Ref)
				}
			}
			if op.RequestBody != nil {
				if _, ok := op.RequestBody.Content["application/json"]; !ok {
					// The push feed's lines (NDJSON, CSV), admin keys only: the
					// client is generated and compiled with them, not called.
					continue
				}
				ex := op.RequestBody.Content["application/json"].Example
				if ex == nil {
					t.Fatalf("%s: request body without an example", label)
				}
				body, _ := json.Marshal(ex)
				fmt.Fprintf(&b, "\t\tvar body %sJSONRequestBody\n\t\tmust(json.Unmarshal([]byte(%q), &body))\n", name, body)
				args = append(args, "body")
			}
			if _, ok := op.Responses["200"].Content["text/event-stream"]; ok {
				// A stream lasts: the plain client's call, the answer's head
				// and its first event (the session's state), then the end.
				var tickers any
				for _, p := range op.Parameters {
					if p.In == "query" && p.Name == "tickers" {
						tickers = p.Example
					}
				}
				if tickers == nil {
					t.Fatalf("%s: no tickers example", label)
				}
				fmt.Fprintf(&b, "\t\ttk := strings.Split(%q, \",\")\n", fmt.Sprint(tickers))
				fmt.Fprintf(&b, "\t\tsctx, cancel := context.WithTimeout(ctx, time.Minute)\n")
				fmt.Fprintf(&b, "\t\tr, err := c.%s(sctx, &%sParams{Tickers: &tk})\n", name, name)
				fmt.Fprintf(&b, "\t\tif err != nil {\n\t\t\tfmt.Printf(\"%%s: %%v\\n\", %q, err)\n\t\t} else {\n", label)
				fmt.Fprintf(&b, "\t\t\tev := firstEvent(r.Body)\n\t\t\tr.Body.Close()\n")
				fmt.Fprintf(&b, "\t\t\tcheck(%q, r.StatusCode, 200, strings.HasPrefix(r.Header.Get(\"Content-Type\"), \"text/event-stream\") && strings.Contains(ev, \"event: session\\n\"), []byte(ev))\n\t\t}\n\t\tcancel()\n\t}\n", label)
				calls = append(calls, b.String())
				ops = append(ops, label)
				continue
			}
			status, decoded := 200, "true"
			if _, ok := op.Responses["200"].Content["application/json"]; ok {
				decoded = "r.JSON200 != nil"
			}
			fmt.Fprintf(&b, "\t\tr, err := c.%sWithResponse(%s)\n", name, strings.Join(args, ", "))
			fmt.Fprintf(&b, "\t\tif err != nil {\n\t\t\tfmt.Printf(\"%%s: %%v\\n\", %q, err)\n\t\t} else {\n\t\t\tcheck(%q, r.StatusCode(), %d, %s, r.Body)\n\t\t}\n\t}\n", label, label, status, decoded)
			calls = append(calls, b.String())
			ops = append(ops, label)
		}
	}
	sort.Strings(calls)
	sort.Strings(ops)
	src := `package main

// Written by TestGeneratedClient: every operation of the document,
// called with the client generated from it.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// firstEvent reads a stream up to its first event (after the retry
// line): its lines, each ending in a line feed.
func firstEvent(r io.Reader) string {
	var b strings.Builder
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if sc.Text() == "" && strings.Contains(b.String(), "event: ") {
			break
		}
	}
	return b.String()
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func check(op string, status, want int, decoded bool, body []byte) {
	switch {
	case status != want:
		fmt.Printf("%s: status %d, want %d: %.200s\n", op, status, want, body)
	case !decoded:
		fmt.Printf("%s: not decoded: %.200s\n", op, body)
	default:
		fmt.Printf("ok %s\n", op)
	}
}

func main() {
	ctx := context.Background()
	key := os.Getenv("PREGAO_KEY")
	c, err := NewClientWithResponses(os.Getenv("PREGAO_URL"), WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+key)
		return nil
	}))
	must(err)
` + strings.Join(calls, "") + "}\n"
	if regexp.MustCompile(`float32`).MatchString(src) {
		t.Fatal("BUG: the test program names float32")
	}
	return src, ops
}
