package httpapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi/datamodel"
)

var updateOpenAPI = flag.Bool("update-openapi", false, "rewrite docs/openapi.json from the route table")

// openAPIValidator is the validator of the document (built once: the
// schemas compile on first use).
var openAPIValidator = sync.OnceValues(func() (validator.Validator, error) {
	doc, err := OpenAPI("/v2", "test")
	if err != nil {
		return nil, err
	}
	d, err := libopenapi.NewDocumentWithConfiguration(doc, &datamodel.DocumentConfiguration{IgnoreArrayCircularReferences: true})
	if err != nil {
		return nil, err
	}
	// Formats are asserted: a "date-time" field sent as YYYY-MM-DD, or a
	// "date" one as a timestamp, fails the answer's validation.
	v, errs := validator.NewValidator(d, config.WithFormatAssertions())
	if len(errs) > 0 {
		return nil, fmt.Errorf("%v", errs)
	}
	return v, nil
})

// The generated document is valid OpenAPI 3.1.
func TestOpenAPIValid(t *testing.T) {
	v, err := openAPIValidator()
	if err != nil {
		t.Fatal(err)
	}
	if ok, errs := v.ValidateDocument(); !ok {
		for _, e := range errs {
			t.Errorf("%s: %s (%v)", e.Message, e.Reason, e.SchemaValidationErrors)
		}
	}
}

// The document lists every operation of the route table with every one of
// its parameters, and every schema it holds is used.
func TestOpenAPICoversRoutes(t *testing.T) {
	b, err := OpenAPI("/v2", "test")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]map[string]struct{ Parameters []struct{ Name, In string } }
		Components struct{ Schemas map[string]json.RawMessage }
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for p, item := range doc.Paths {
		for m, op := range item {
			ops = append(ops, strings.ToUpper(m)+" "+p)
			var rt *Route
			for i := range routeTable {
				if r := &routeTable[i]; r.Method == strings.ToUpper(m) && openAPIPath("/v2", r) == p {
					rt = r
				}
			}
			if rt == nil {
				t.Errorf("%s %s: no such route", m, p)
				continue
			}
			want := len(rt.Params)
			if rt.CSV != "" && slices.ContainsFunc(rt.Params, func(p Param) bool { return p.Name == formatParam.Name }) {
				want-- // format: the CSV form is the route at path.csv
			}
			if len(op.Parameters) != want {
				t.Errorf("%s %s: %d parameters, the route declares %d", m, p, len(op.Parameters), want)
			}
		}
	}
	sort.Strings(ops)
	if want := sortedRoutes("/v2"); strings.Join(ops, "\n") != strings.Join(want, "\n") {
		t.Errorf("operations:\n%s\nwant\n%s", strings.Join(ops, "\n"), strings.Join(want, "\n"))
	}
	for name := range doc.Components.Schemas {
		if !bytes.Contains(b, []byte(`"#/components/schemas/`+name+`"`)) {
			t.Errorf("schema %s is never used", name)
		}
	}
}

// docs/openapi.json is the document the server serves (regenerate it with
// go test ./httpapi -run TestOpenAPIFile -update-openapi).
func TestOpenAPIFile(t *testing.T) {
	b, err := OpenAPI("/v2", "unversioned")
	if err != nil && !*updateOpenAPI {
		t.Fatal(err)
	}
	b = append(b, '\n')
	descs, err := apiDocSections("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	if *updateOpenAPI {
		if err := os.WriteFile("openapi_descriptions.json", descs, 0o644); err != nil {
			t.Fatal(err)
		}
		if b, err = OpenAPI("/v2", "unversioned"); err != nil {
			t.Fatal(err)
		}
		b = append(b, '\n')
	} else if !bytes.Equal(descs, openAPIDescriptions) {
		t.Errorf("openapi_descriptions.json is stale (docs/api.md changed): go test ./httpapi -run TestOpenAPIFile -update-openapi")
	}
	const file = "../docs/openapi.json"
	if *updateOpenAPI {
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, b) {
		t.Errorf("%s is stale: go test ./httpapi -run TestOpenAPIFile -update-openapi", file)
	}
}

// validateAnswer checks one answer of the test server against the
// document: its status is documented for its operation and its body
// matches the schema of that status.
func validateAnswer(t *testing.T, method, target, body string, w *httptest.ResponseRecorder) {
	t.Helper()
	validateAnswerTB(t, method, target, body, w)
}

// failRecorder records failures instead of failing a test.
type failRecorder struct {
	testing.TB
	failed bool
}

func (f *failRecorder) Helper()               {}
func (f *failRecorder) Errorf(string, ...any) { f.failed = true }
func (f *failRecorder) Fatal(args ...any)     { f.failed = true }

func validateAnswerTB(t testing.TB, method, target, body string, w *httptest.ResponseRecorder) {
	t.Helper()
	v, err := openAPIValidator()
	if err != nil {
		t.Fatal(err)
	}
	method, target, body = typedTarget(method, target, body, w.Body.Bytes())
	var rb io.Reader
	if body != "" {
		rb = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rb)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp := &http.Response{StatusCode: w.Code, Header: w.Header().Clone(), Body: io.NopCloser(bytes.NewReader(w.Body.Bytes())), Request: req}
	if ok, errs := v.ValidateHttpResponse(req, resp); !ok {
		for _, e := range errs {
			var details []string
			for _, s := range e.SchemaValidationErrors {
				details = append(details, s.FieldPath+": "+s.Reason)
			}
			t.Errorf("%s %s → %d: %s: %s %v", method, target, w.Code, e.Message, e.Reason, details)
		}
	}
}

// typedTarget returns the request of the document's route of one type
// that answers as the request to an Untyped route (GET /v2/quotes/{ticker}
// or POST /v2/quotes) did, judging the type by the answer: the document
// describes those answers under their type's route. Other requests are
// returned as they are.
func typedTarget(method, target, body string, answer []byte) (string, string, string) {
	path, rawQuery, _ := strings.Cut(target, "?")
	ticker, ok := strings.CutPrefix(path, "/v2/quotes/")
	single := ok && method == http.MethodGet && !strings.Contains(ticker, "/")
	if !single && !(method == http.MethodPost && path == "/v2/quotes") {
		return method, target, body
	}
	var v any
	if err := json.Unmarshal(answer, &v); err != nil {
		return method, target, body // an error or a CSV answer: the route is named by its status
	}
	typeOf := func(v any) string {
		switch v := v.(type) {
		case []any:
			return TypeHistorical
		case map[string]any:
			if _, ok := v["chart"]; ok {
				return TypeChart
			}
		}
		return TypeCurrent
	}
	if single && !strings.Contains(ticker, ",") {
		q, _ := url.ParseQuery(rawQuery)
		q.Del("type")
		if typeOf(v) != TypeHistorical {
			q.Del("interval")
			q.Del("start_date")
			q.Del("end_date")
		}
		t := "/v2/quotes/" + ticker + "/" + typeOf(v)
		if len(q) > 0 {
			t += "?" + q.Encode()
		}
		return http.MethodGet, t, ""
	}
	// A batch: keyed by ticker, the type is that of the first answer
	// that is not an error.
	typ := TypeCurrent
	m, _ := v.(map[string]any)
	for _, x := range m {
		if e, isMap := x.(map[string]any); !isMap || e["error"] == nil {
			typ = typeOf(x)
			break
		}
	}
	tickers := strings.Split(ticker, ",")
	if method == http.MethodPost {
		var b struct{ Tickers []string }
		json.Unmarshal([]byte(body), &b)
		tickers = b.Tickers
	}
	nb, _ := json.Marshal(map[string]any{"tickers": tickers})
	return http.MethodPost, "/v2/quotes/" + typ, string(nb)
}

// Every golden answer validates against the schema of its route.
func TestGoldenAnswersValidate(t *testing.T) {
	ts := newTestServer(t, true)
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			w := ts.do(tc.method, tc.path, tc.key, tc.body)
			if w.Code != 200 {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			validateAnswer(t, tc.method, tc.path, tc.body, w)
		})
	}
}

// Error answers validate against the documented error responses: each
// status is one the operation documents, each body the Error shape.
func TestErrorAnswersValidate(t *testing.T) {
	ts := newTestServer(t, true)
	for _, c := range []struct{ method, path, key, body string }{
		{"GET", "/v2/companies/NOPE", testKeyDelayed, ""},
		{"GET", "/v2/companies/ENHZ?show_logo=maybe", testKeyDelayed, ""},
		{"GET", "/v2/companies/ENHZ", "", ""},
		{"GET", "/v2/indexes/NOPE/highs", testKeyDelayed, ""},
		{"GET", "/v2/indexes/IBOV/highs?limit=0", testKeyDelayed, ""},
		{"GET", "/v2/companies?status=GONE", testKeyDelayed, ""},
		{"GET", "/v2/quotes/ENHZ3?type=sometimes", testKeyDelayed, ""},
		{"GET", "/v2/quotes/NOPE3", testKeyDelayed, ""},
		{"POST", "/v2/quotes", testKeyDelayed, `{"tickers":[]}`},
		{"POST", "/v2/quotes", testKeyDelayed, `{"tickers":["ENHZ3"],"colour":"red"}`},
		{"POST", "/v2/screener", testKeyDelayed, `{"limit":501}`},
		{"POST", "/v2/screener", "", `{}`},
		{"GET", "/v2/traded-funds/NOPE11/ratios", testKeyDelayed, ""},
		{"GET", "/v2/companies/ENHZ/ratios?frequency=HOURLY", testKeyDelayed, ""},
		{"GET", "/v2/companies/cash-corporate-actions?start_date=yesterday", testKeyDelayed, ""},
	} {
		w := ts.do(c.method, c.path, c.key, c.body)
		if w.Code < 400 {
			t.Errorf("%s %s: %d, want an error", c.method, c.path, w.Code)
			continue
		}
		validateAnswer(t, c.method, c.path, c.body, w)
	}
	// Before a snapshot: 503 on the API and on /readyz.
	empty := newTestServer(t, false)
	for _, p := range []string{"/v2/companies", "/readyz"} {
		w := empty.do("GET", p, testKeyDelayed, "")
		validateAnswer(t, "GET", p, "", w)
	}
	for _, p := range []string{"/healthz", "/openapi.json"} {
		validateAnswer(t, "GET", p, "", ts.do("GET", p, "", ""))
	}
}

// The validation above can fail: an answer that breaks its schema (a
// wrong type, a missing field, an undocumented status) is refused.
func TestOpenAPIValidationCatches(t *testing.T) {
	ts := newTestServer(t, true)
	good := ts.do("GET", "/v2/companies/ENHZ", testKeyDelayed, "")
	for name, mutate := range map[string]func(w *httptest.ResponseRecorder){
		"number for a string": func(w *httptest.ResponseRecorder) {
			b := bytes.Replace(w.Body.Bytes(), []byte(`"name":"`), []byte(`"name":5,"x":"`), 1)
			w.Body = bytes.NewBuffer(b)
		},
		"missing field": func(w *httptest.ResponseRecorder) {
			var m map[string]any
			json.Unmarshal(w.Body.Bytes(), &m)
			delete(m, "company_id")
			b, _ := json.Marshal(m)
			w.Body = bytes.NewBuffer(b)
		},
		"undocumented status": func(w *httptest.ResponseRecorder) { w.Code = http.StatusTeapot },
	} {
		w := httptest.NewRecorder()
		w.Code = good.Code
		for k, v := range good.Header() {
			w.Header()[k] = v
		}
		w.Body = bytes.NewBuffer(append([]byte(nil), good.Body.Bytes()...))
		mutate(w)
		ft := &failRecorder{}
		validateAnswerTB(ft, "GET", "/v2/companies/ENHZ", "", w)
		if !ft.failed {
			t.Errorf("%s: validated", name)
		}
	}
}

// sortedRoutes lists "METHOD path" of every operation of the route table
// (HEAD and OPTIONS, answered on every GET and every path, are described
// once in info.description, not as operations).
func sortedRoutes(prefix string) []string {
	var out []string
	for i := range routeTable {
		if !routeTable[i].Untyped {
			out = append(out, routeTable[i].Method+" "+openAPIPath(prefix, &routeTable[i]))
		}
	}
	sort.Strings(out)
	return out
}

// /docs lists each path once: one operation per path, HEAD and OPTIONS
// described once in info.description.
func TestOpenAPIOnePathOnce(t *testing.T) {
	b, err := OpenAPI("/v2", "test")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Info  struct{ Description string }
		Paths map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for p, item := range doc.Paths {
		if len(item) != 1 {
			t.Errorf("%s: %d operations, want 1", p, len(item))
		}
		for m := range item {
			if m == "head" || m == "options" {
				t.Errorf("%s: a %s operation", p, m)
			}
		}
	}
	for _, w := range []string{"`OPTIONS`", "`HEAD`"} {
		if !strings.Contains(doc.Info.Description, w) {
			t.Errorf("info.description does not describe %s", w)
		}
	}
}

// Generated clients need one type per field and the width of every
// number: each schema's type is one type, or one type and "null"; each
// number is a double; each integer an int32 or, for counts and share
// quantities, an int64.
func TestOpenAPITypesAndFormats(t *testing.T) {
	b, err := OpenAPI("/v2", "test")
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	wide := regexp.MustCompile(`(shares|quantity|count)$`)
	var walk func(v any, path, name string)
	walk = func(v any, path, name string) {
		switch v := v.(type) {
		case map[string]any:
			props := strings.HasSuffix(path, "/properties") || strings.HasSuffix(path, "/schemas") || strings.HasSuffix(path, "/headers")
			if typ, ok := v["type"]; ok && !props {
				var types []string
				switch typ := typ.(type) {
				case string:
					types = []string{typ}
				case []any:
					for _, x := range typ {
						if s, ok := x.(string); ok && s != "null" {
							types = append(types, s)
						}
					}
				}
				if len(types) != 1 {
					t.Errorf("%s: type %v: one type (and null) per field", path, typ)
				}
				format, _ := v["format"].(string)
				switch {
				case slices.Contains(types, "number") && format != "double":
					t.Errorf("%s: number with format %q, want double", path, format)
				case slices.Contains(types, "integer") && wide.MatchString(name) && format != "int64":
					t.Errorf("%s: integer with format %q, want int64", path, format)
				case slices.Contains(types, "integer") && format != "int64" && format != "int32":
					t.Errorf("%s: integer with format %q, want int32 or int64", path, format)
				}
			}
			for k, x := range v {
				n := name
				if props {
					n = k
				}
				if p, ok := v["name"].(string); ok && k == "schema" {
					n = p
				}
				walk(x, path+"/"+k, n)
			}
		case []any:
			for i, x := range v {
				walk(x, fmt.Sprintf("%s/%d", path, i), name)
			}
		}
	}
	walk(doc, "", "")
}

// Every operation has a description (links to its rules in docs/api.md) and a
// declared tag, with a description, and the document names a contact.
func TestOpenAPITagsAndContact(t *testing.T) {
	b, err := OpenAPI("/v2", "test")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Info struct {
			Contact struct{ Name, URL string }
		}
		Tags  []struct{ Name, Description string }
		Paths map[string]map[string]struct {
			OperationID string
			Tags        []string
			Description string
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Info.Contact.URL == "" {
		t.Errorf("info.contact: %+v", doc.Info.Contact)
	}
	declared := map[string]bool{}
	for _, tg := range doc.Tags {
		declared[tg.Name] = tg.Description != ""
	}
	ids := map[string]string{}
	for p, item := range doc.Paths {
		for m, op := range item {
			if len(op.Tags) != 1 || !declared[op.Tags[0]] {
				t.Errorf("%s %s: tags %q, declared %v", m, p, op.Tags, declared)
			}
			if len(op.Description) < 40 {
				t.Errorf("%s %s: description %q", m, p, op.Description)
			}
			if prev, ok := ids[op.OperationID]; ok || op.OperationID == "" {
				t.Errorf("%s %s: operationId %q (also %s)", m, p, op.OperationID, prev)
			}
			ids[op.OperationID] = m + " " + p
		}
	}
}

// apiDocSections returns, as indented JSON, the anchor of each heading
// of the file (docs/api.md) that routeDocs (or docCSV) names, as GitHub writes it
// (githubAnchor, over every heading of the file in order, code blocks
// left out). A heading or a bullet that is not in the file is an error.
func apiDocSections(file string) ([]byte, error) {
	md, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(md), "\n")
	anchors := map[string]string{}
	seen := map[string]int{}
	inCode := false
	for _, l := range lines {
		if strings.HasPrefix(l, "```") {
			inCode = !inCode
		}
		if !inCode && strings.HasPrefix(l, "#") {
			if _, dup := anchors[l]; !dup {
				anchors[l] = githubAnchor(strings.TrimLeft(l, "#"), seen)
			}
		}
	}
	out := map[string]string{}
	docs := []string{docCSV} // the parts of the CSV forms' routes
	for _, doc := range routeDocs {
		docs = append(docs, doc)
	}
	for _, doc := range docs {
		for _, part := range strings.Split(doc, "\n") {
			heading, bullet, _ := strings.Cut(part, "|")
			a, ok := anchors[heading]
			if !ok {
				return nil, fmt.Errorf("%s: no heading %q", file, heading)
			}
			if bullet != "" && !apiDocHasBullet(lines, heading, bullet) {
				return nil, fmt.Errorf("%s: no bullet %q under %q", file, bullet, heading)
			}
			out[heading] = a
		}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	return append(b, '\n'), err
}

// apiDocHasBullet reports whether the section of heading has a line that
// starts with bullet.
func apiDocHasBullet(lines []string, heading, bullet string) bool {
	start := slices.Index(lines, heading)
	inCode := false
	for _, l := range lines[start+1:] {
		if strings.HasPrefix(l, "```") {
			inCode = !inCode
		}
		if !inCode && strings.HasPrefix(l, "#") {
			return false
		}
		if strings.HasPrefix(l, bullet) {
			return true
		}
	}
	return false
}

// githubAnchor gives the anchors GitHub gives these headings.
func TestGitHubAnchor(t *testing.T) {
	seen := map[string]int{}
	for _, c := range []struct{ heading, want string }{
		{"3. POST /quotes and GET /quotes/{ticker}", "3-post-quotes-and-get-quotesticker"},
		{"1, 2. GET /indexes/{indexSymbol}/highs and /lows", "1-2-get-indexesindexsymbolhighs-and-lows"},
		{"Point in time: as_of (addition)", "point-in-time-as_of-addition"},
		{"/insider-transactions, /documents, /shares-history", "insider-transactions-documents-shares-history"},
		{"Pregão HTTP API", "pregão-http-api"},
		{"`pregao serve` flags", "pregao-serve-flags"},
		{"Parameters", "parameters"},
		{"Parameters", "parameters-1"},
	} {
		if got := githubAnchor(c.heading, seen); got != c.want {
			t.Errorf("%q: %q, want %q", c.heading, got, c.want)
		}
	}
}

// Each operation's description is short and links to docs/api.md: at
// the release's tag for a release, on main otherwise.
func TestOpenAPIDescriptionsLink(t *testing.T) {
	for version, ref := range map[string]string{"v0.1.0": "v0.1.0", "v0.1.0-89-g4f16615": "main", "devel": "main"} {
		b, err := OpenAPI("/v2", version)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Paths map[string]map[string]struct{ Description string }
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		for p, item := range doc.Paths {
			for m, op := range item {
				if len(op.Description) > 600 || !strings.Contains(op.Description, "(https://github.com/pregao/pregao/blob/"+ref+"/docs/api.md#") {
					t.Errorf("%s: %s %s: description %q", version, m, p, op.Description)
				}
			}
		}
	}
}

// Every API operation has a response example (the demo's answer, see
// cmd/pregao's TestDocsExamplesOpenAPI), and each one validates against
// its operation's schema.
func TestOpenAPIExamplesValidate(t *testing.T) {
	examples, err := routeExamples()
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range routeTable {
		k := rt.Method + " " + rt.Path
		ex, ok := examples[k]
		if rt.Root || rt.Admin || rt.Stream || rt.Untyped || rt.Media != "" { // the push endpoints answer a feed, a stream streams (docs/api.md shows them); an untyped route is not in the document; a CSV form has its route's
			continue
		}
		if !ok {
			t.Errorf("%s: no response example", k)
			continue
		}
		method, target, _ := strings.Cut(ex.Summary, " ")
		target, _, _ = strings.Cut(target, " ")
		b, err := json.Marshal(ex.Value)
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		w.Header().Set("Content-Type", "application/json")
		w.Code = http.StatusOK
		w.Body = bytes.NewBuffer(b)
		validateAnswer(t, method, target, ex.Body, w)
	}
}

// No operation has two parameters of one name (a path and a query
// parameter both called id): a generated client names its arguments
// after them, and two of one name collide.
func TestOpenAPIParameterNamesUnique(t *testing.T) {
	b, err := OpenAPI("/v2", "unversioned")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	ops := 0
	for path, methods := range doc.Paths {
		for method, raw := range methods {
			var op struct {
				Parameters []struct {
					Name string `json:"name"`
					In   string `json:"in"`
				} `json:"parameters"`
			}
			if json.Unmarshal(raw, &op) != nil {
				continue // not an operation
			}
			ops++
			seen := map[string]string{}
			for _, p := range op.Parameters {
				if in, ok := seen[p.Name]; ok {
					t.Errorf("%s %s: parameter %q both in %s and in %s", method, path, p.Name, in, p.In)
				}
				seen[p.Name] = p.In
			}
		}
	}
	if ops == 0 {
		t.Fatal("no operation read")
	}
}
