package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

var updateExamples = flag.Bool("update-examples", false, "rewrite httpapi/openapi_examples.json from the scale-1 demo's answers")

// demoDataset is the scale-1, seed-1 demo universe `make run` serves,
// built once for the tests that need it.
var demoDataset = sync.OnceValues(func() (*engine.Dataset, error) {
	u := demo.Generate(1, 1)
	d, err := ratios.Derive(u)
	if err != nil {
		return nil, err
	}
	u.Derived = d
	return engine.Build(u)
})

// openAPIExampleRequests is the request whose demo answer illustrates
// each operation in the OpenAPI document, by "METHOD route" (the route
// table's); an empty body is a GET.
var openAPIExampleRequests = map[string]struct{ target, body string }{
	"GET /indexes":                                             {"/v2/indexes", ""},
	"GET /indexes/:symbol":                                     {"/v2/indexes/IBOV", ""},
	"GET /indexes/:symbol/highs":                               {"/v2/indexes/IBOV/highs?limit=2", ""},
	"GET /indexes/:symbol/lows":                                {"/v2/indexes/IBOV/lows?limit=2", ""},
	"GET /quotes/:ticker/current":                              {"/v2/quotes/LITA3/current", ""},
	"GET /quotes/:ticker/historical":                           {"/v2/quotes/CAJT3/historical?start_date=2025-02-12&end_date=2025-02-13&adjusted=true", ""},
	"GET /quotes/:ticker/chart":                                {"/v2/quotes/PLAE3/chart", ""},
	"POST /quotes/current":                                     {"/v2/quotes/current", `{"tickers":["LITA3","XXXX3"]}`},
	"POST /quotes/historical":                                  {"/v2/quotes/historical", `{"tickers":["CAJT3"],"start_date":"2025-02-12","end_date":"2025-02-13","adjusted":true}`},
	"POST /quotes/chart":                                       {"/v2/quotes/chart", `{"tickers":["PLAE3"]}`},
	"POST /quotes/total-return":                                {"/v2/quotes/total-return", `{"tickers":["ITAG3","XXXX3"],"start_date":"2026-06-26","end_date":"2026-06-29","method":"net"}`},
	"GET /quotes/:ticker/total-return":                         {"/v2/quotes/ITAG3/total-return?start_date=2026-06-26&end_date=2026-06-29", ""},
	"GET /stocks/variations":                                   {"/v2/stocks/variations?limit=2", ""},
	"GET /companies":                                           {"/v2/companies?search=LITA", ""},
	"GET /companies/:id":                                       {"/v2/companies/LITA4?show_sector=true&show_market_cap=true", ""},
	"GET /companies/cash-corporate-actions":                    {"/v2/companies/cash-corporate-actions?start_date=2026-11-03&end_date=2026-11-03&limit=2", ""},
	"GET /companies/:id/cash-corporate-actions":                {"/v2/companies/ITAG3/cash-corporate-actions?limit=2", ""},
	"GET /traded-funds/:fundIdentifier/cash-corporate-actions": {"/v2/traded-funds/AILO11/cash-corporate-actions?limit=2", ""},
	"GET /companies/:id/ratios":                                {"/v2/companies/LITA3/ratios?ids=GROSS_MARGIN&frequency=ANNUAL&latest_by_reference_date=true", ""},
	"GET /companies/:id/ratios/valuation":                      {"/v2/companies/LITA3/ratios/valuation?ids=PRICE_TO_EARNINGS&frequency=TTM&latest_by_reference_date=true", ""},
	"GET /companies/:id/raw-reports":                           {"/v2/companies/LITA3/raw-reports?report_type=DRE&aggregation=CONSOLIDATED&latest_by_reference_date=true&limit=1", ""},
	"GET /companies/:id/reports":                               {"/v2/companies/LITA3/reports?section=INCOME_STATEMENT&aggregation=CONSOLIDATED&limit=1", ""},
	"GET /companies/:id/corporate-actions":                     {"/v2/companies/PAME3/corporate-actions", ""},
	"GET /companies/:id/insider-transactions":                  {"/v2/companies/LITA/insider-transactions", ""},
	"GET /companies/:id/documents":                             {"/v2/companies/LITA/documents?limit=2", ""},
	"GET /companies/:id/shares-history":                        {"/v2/companies/LITA/shares-history", ""},
	"POST /screener":                                           {"/v2/screener", `{"limit":2}`},
	"GET /traded-funds/:fundIdentifier/ratios":                 {"/v2/traded-funds/AILO11/ratios?id=P_NAV&limit=2", ""},
	"GET /sectors":                                             {"/v2/sectors?level=1", ""},
	"GET /files":                                               {"/v2/files", ""},
	"GET /traded-funds":                                        {"/v2/traded-funds?kind=FII&limit=2", ""},
	"GET /traded-funds/:fundIdentifier":                        {"/v2/traded-funds/AILO11", ""},
	"GET /ratios/catalog":                                      {"/v2/ratios/catalog?kind=FUND", ""},
}

// trimExample cuts every array of v to its first two items, so that an
// example shows the shape without the length.
func trimExample(v any) any {
	switch v := v.(type) {
	case []any:
		if len(v) > 2 {
			v = v[:2]
		}
		for i := range v {
			v[i] = trimExample(v[i])
		}
		return v
	case map[string]any:
		for k := range v {
			v[k] = trimExample(v[k])
		}
	}
	return v
}

// TestDocsExamplesOpenAPI: the OpenAPI document's response examples
// (httpapi/openapi_examples.json) are the scale-1 demo's own answers to
// the requests above, arrays cut to two items; every API operation has
// one; and every path parameter's declared example answers on the demo.
// Refresh with go test ./cmd/pregao -run TestDocsExamplesOpenAPI
// -update-examples, then go test ./httpapi -run TestOpenAPIFile
// -update-openapi.
func TestDocsExamplesOpenAPI(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds the scale-1 demo (make test runs it in its pass without -race)")
	}
	ds, err := demoDataset()
	if err != nil {
		t.Fatal(err)
	}
	api, key := apiWithKey(t, ds)
	api.Prepare(ds, "demo", time.Time{}) // GET /files's snapshot id
	do := func(method, target, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, target, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		return w
	}
	examples := map[string]httpapi.OpenAPIExample{}
	for _, rt := range httpapi.Routes() {
		if rt.Root || rt.Admin || rt.Stream || rt.Untyped || rt.Media != "" { // the push endpoints answer a feed, a stream streams (docs/api.md shows both); an untyped route is not in the document; a CSV form is its route's
			continue
		}
		k := rt.Method + " " + rt.Path
		req, ok := openAPIExampleRequests[k]
		if !ok {
			t.Errorf("%s: no example request", k)
			continue
		}
		method := http.MethodGet
		if req.body != "" {
			method = http.MethodPost
		}
		w := do(method, req.target, req.body)
		if w.Code != http.StatusOK {
			t.Errorf("%s: %s %s: %d %.200s", k, method, req.target, w.Code, w.Body)
			continue
		}
		dec := json.NewDecoder(w.Body)
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		summary := method + " " + req.target
		if req.body != "" {
			summary += " " + req.body
		}
		examples[k] = httpapi.OpenAPIExample{Summary: summary, Body: req.body, Value: trimExample(v)}

		// The path parameters' examples (the document's and the docs
		// page's Try it out) name what the demo has.
		if rt.Method == http.MethodGet {
			path := "/v2" + rt.Path
			for _, p := range rt.Params {
				if p.In == httpapi.InPath {
					path = strings.Replace(path, ":"+p.Name, p.Example, 1)
				}
			}
			if w := do(http.MethodGet, path, ""); w.Code != http.StatusOK {
				t.Errorf("%s: the path parameters' examples: GET %s: %d %.200s", k, path, w.Code, w.Body)
			}
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(examples); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	const file = "../../httpapi/openapi_examples.json"
	if *updateExamples {
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := os.ReadFile(file); err != nil || !bytes.Equal(got, b) {
		t.Errorf("%s is not the demo's answers (%v): go test ./cmd/pregao -run TestDocsExamplesOpenAPI -update-examples", file, err)
	}
}
