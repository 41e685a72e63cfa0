package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// samplePath returns rt's path (under /v2) with its path parameters set to
// values the small bundle knows.
func samplePath(rt *Route) string {
	path := rt.Path
	for _, seg := range strings.Split(rt.Path, "/") {
		name, ok := strings.CutPrefix(seg, ":")
		if !ok {
			continue
		}
		v := map[string]string{"symbol": "IBOV", "ticker": "ENHZ3", "id": "ENHZ", "file": "init.js", "name": "daily_bars-2025.parquet"}[name]
		if strings.HasPrefix(rt.Path, routeFunds+"/") {
			v = "GSUL11"
		}
		path = strings.Replace(path, seg, v, 1)
	}
	if rt.Root {
		return path
	}
	return "/v2" + path
}

// sampleBody returns a valid body for rt ("" without one).
func sampleBody(rt *Route) string {
	switch {
	case rt.Lines == &liveTradeLine:
		return sampleTradeLine
	case rt.Lines == &liveBarLine:
		return sampleBarLine
	case rt.Body == nil:
		return ""
	case rt.Body == &quotesBody, rt.Body == &totalReturnBody, rt.Body == &currentQuotesBody, rt.Body == &historicalQuotesBody, rt.Body == &chartQuotesBody:
		return `{"tickers":["ENHZ3"]}`
	}
	return `{}`
}

// sampleKey returns a key that may call rt, giving the test server a push
// feed for an admin route.
func sampleKey(tb testing.TB, ts *testServer, rt *Route) string {
	if !rt.Admin {
		return testKeyDelayed
	}
	ts.api.SetKeys(adminTestKeys(tb))
	ts.api.SetLiveSink(newFakeSink())
	return testKeyAdmin
}

// sampleValue returns a valid value of the query parameter p of rt.
func sampleValue(rt *Route, p *Param) string {
	switch p.Name {
	case "ids", "id":
		switch strings.TrimSuffix(rt.Path, ".csv") {
		case routeRatios:
			return "NET_MARGIN"
		case routeValuation:
			return "PRICE_TO_EARNINGS"
		case routeFundRatios:
			return "P_NAV"
		}
	case "month":
		return "2024-02"
	case "category":
		return "Fato Relevante"
	case "sector":
		return "" // the fixture's sector ids: TestTradedFunds
	}
	switch p.Type {
	case TypeBoolean:
		return "true"
	case TypeInteger:
		if d, ok := p.Default.(int); ok {
			return strconv.Itoa(d)
		}
		return strconv.Itoa(p.Min)
	case TypeEnum:
		return p.Enum[0]
	case TypeDate:
		return "2024-03-28"
	case TypeTimestamp:
		return "2024-03-28T00:00:00Z"
	case TypeAsOf:
		return "2024-03-28"
	}
	return "x"
}

// requestsOf returns the requests counted for a route label.
func requestsOf(tb testing.TB, reg *prometheus.Registry, route string) float64 {
	tb.Helper()
	return requestsWith(tb, reg, route, "")
}

// requestsWith returns the requests counted for a route label and a
// status code ("": every code).
func requestsWith(tb testing.TB, reg *prometheus.Registry, route, code string) float64 {
	tb.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "pregao_http_requests_total" {
			continue
		}
		for _, m := range mf.Metric {
			var r, c string
			for _, l := range m.Label {
				switch l.GetName() {
				case "route":
					r = l.GetValue()
				case "code":
					c = l.GetValue()
				}
			}
			if r == route && (code == "" || c == code) {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// TestRouteTable checks that the router serves exactly routeTable: every
// registration is a route of the table and every route of the table is
// registered and reaches its own handler (counted under its path).
func TestRouteTable(t *testing.T) {
	ts := newTestServer(t, true)
	var want []string
	for i := range routeTable {
		rt := &routeTable[i]
		if rt.Path == routeCash || rt.Path == routeCash+".csv" {
			continue // dispatched by the /companies/:id handle
		}
		p := "/v2" + rt.Path
		if rt.Root {
			p = rt.Path
		}
		want = append(want, rt.Method+" "+p)
	}
	got := slices.Clone(ts.api.patterns)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("registered routes:\n%s\nwant (routeTable):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range routeTable {
		rt := &routeTable[i]
		if rt.Stream {
			continue // a stream lasts until its client leaves: sse_test.go
		}
		before := requestsOf(t, ts.reg, rt.Path)
		path := samplePath(rt)
		if rt.Admin {
			path += "?seq=1"
		}
		w := ts.do(rt.Method, path, sampleKey(t, ts, rt), sampleBody(rt))
		if w.Code != 200 {
			t.Errorf("%s %s: %d %s", rt.Method, samplePath(rt), w.Code, w.Body)
		}
		if after := requestsOf(t, ts.reg, rt.Path); after != before+1 {
			t.Errorf("%s %s: not counted under route %s", rt.Method, samplePath(rt), rt.Path)
		}
	}
}

// TestRouteParams checks, for every route, that each declared query
// parameter is accepted with a valid value and that an undeclared one is
// refused naming the declared ones: the handler accepts exactly what the
// table declares. (A handler reading an undeclared parameter, or not
// reading a declared one, panics, which these requests would show as 500s.)
func TestRouteParams(t *testing.T) {
	ts := newTestServer(t, true)
	for i := range routeTable {
		rt := &routeTable[i]
		if rt.Root || rt.Stream {
			continue // operational routes ignore the query string; a stream lasts (sse_test.go)
		}
		base := samplePath(rt)
		body := sampleBody(rt)
		key := sampleKey(t, ts, rt)
		for j := range rt.Params {
			p := &rt.Params[j]
			if p.In != InQuery {
				continue
			}
			u := base + "?" + url.Values{p.Name: {sampleValue(rt, p)}}.Encode()
			if w := ts.do(rt.Method, u, key, body); w.Code != 200 && w.Code != 404 {
				t.Errorf("%s %s: %d %s", rt.Method, u, w.Code, w.Body)
			}
		}
		want := `unknown query parameter "undeclared"`
		if names := queryNames(rt.Params); names != "" {
			want += " (accepted: " + names + ")"
		} else {
			want += ": this operation accepts none"
		}
		w := ts.do(rt.Method, base+"?undeclared=1", key, body)
		if w.Code != 400 || !strings.Contains(w.Body.String(), strconv.Quote(want)[1:len(strconv.Quote(want))-1]) {
			t.Errorf("%s %s?undeclared=1: %d %s, want 400 %s", rt.Method, base, w.Code, w.Body, want)
		}
	}
}

// TestRouteBodies walks the body declarations: every declared field, at
// every level, is decoded (null is accepted; a field the decoder has no
// case for would panic, a 500), and an undeclared field at every level is
// refused naming the declared ones.
func TestRouteBodies(t *testing.T) {
	ts := newTestServer(t, true)
	for i := range routeTable {
		rt := &routeTable[i]
		if rt.Body == nil {
			continue
		}
		base := sampleBody(rt)
		var walk func(obj *Param, path string, wrap func(member string) string)
		walk = func(obj *Param, path string, wrap func(string) string) {
			body := wrap(`"undeclared":1`)
			want := fmt.Sprintf("request body: unknown field %q (accepted: %s)", path+"undeclared", fieldNames(obj))
			checkError(t, ts.do(rt.Method, samplePath(rt), testKeyDelayed, body), 400, want)
			for j := range obj.Fields {
				f := &obj.Fields[j]
				body := wrap(strconv.Quote(f.Name) + ":null")
				if w := ts.do(rt.Method, samplePath(rt), testKeyDelayed, body); w.Code >= 500 || strings.Contains(w.Body.String(), "unknown field") {
					t.Errorf("%s %s %s: %d %s", rt.Method, rt.Path, body, w.Code, w.Body)
				}
				if f.Type == TypeArray && f.Items.Type == TypeObject {
					walk(f.Items, path+f.Name+"[0].", func(m string) string { return wrap(strconv.Quote(f.Name) + ":[{" + m + "}]") })
				}
			}
		}
		walk(rt.Body, "", func(m string) string {
			if base == "{}" {
				return "{" + m + "}"
			}
			return base[:len(base)-1] + "," + m + "}"
		})
	}
}

// TestRouteDeclarations checks the declarations' invariants: path
// parameters are the path's, query names are unique, defaults fit, and the
// handlers' route constants are declared once.
func TestRouteDeclarations(t *testing.T) {
	seen := map[string]bool{}
	for i := range routeTable {
		rt := &routeTable[i]
		checkRoute(rt) // panics on a mistake
		key := rt.Method + " " + rt.Path
		if seen[key] {
			t.Errorf("%s declared twice", key)
		}
		seen[key] = true
		if rt.Summary == "" {
			t.Errorf("%s: no summary", key)
		}
		if rt.Response == "" && !unwrapped[rt.Path] && !rt.Untyped && rt.Media != mediaFile {
			t.Errorf("%s: no response schema", key)
		}
		for j := range rt.Params {
			if rt.Params[j].Desc == "" {
				t.Errorf("%s: parameter %q has no description", key, rt.Params[j].Name)
			}
		}
	}
	// The declarations are plain data: they marshal to JSON (what a
	// generator walks).
	if _, err := json.Marshal(Routes()); err != nil {
		t.Fatal(err)
	}
}

func TestCheckRoute(t *testing.T) {
	ok := func(*API, *call, []byte, *http.Request, httprouterParams) ([]byte, error) { return nil, nil }
	bad := func(name string, rt Route) {
		t.Helper()
		defer func() {
			if p, _ := recover().(string); !strings.HasPrefix(p, "BUG: ") {
				t.Errorf("%s: no BUG panic", name)
			}
		}()
		rt.serve = ok
		checkRoute(&rt)
	}
	id := Param{Name: "id", In: InPath, Type: TypeString}
	bad("path parameter not declared", Route{Method: "GET", Path: "/companies/:id"})
	bad("path parameter not in the path", Route{Method: "GET", Path: "/companies", Params: []Param{id}})
	bad("query parameter twice", Route{Method: "GET", Path: "/x", Params: []Param{
		{Name: "a", In: InQuery, Type: TypeBoolean}, {Name: "a", In: InQuery, Type: TypeBoolean}}})
	bad("no In", Route{Method: "GET", Path: "/x", Params: []Param{{Name: "a", Type: TypeBoolean}}})
	bad("enum without values", Route{Method: "GET", Path: "/x", Params: []Param{{Name: "a", In: InQuery, Type: TypeEnum}}})
	bad("default of another type", Route{Method: "GET", Path: "/x", Params: []Param{{Name: "a", In: InQuery, Type: TypeBoolean, Default: 1}}})
	bad("default out of range", Route{Method: "GET", Path: "/x", Params: []Param{{Name: "a", In: InQuery, Type: TypeInteger, Default: 0, Min: 1, Max: 9}}})
	bad("default not in the enum", Route{Method: "GET", Path: "/x", Params: []Param{{Name: "a", In: InQuery, Type: TypeEnum, Enum: []string{"A"}, Default: "B"}}})
	bad("body on a GET", Route{Method: "GET", Path: "/x", Body: &quotesBody})
	bad("lines on a GET", Route{Method: "GET", Path: "/x", Lines: &liveTradeLine})
	bad("lines and a body", Route{Method: "POST", Path: "/x", Lines: &liveTradeLine, Body: &quotesBody})
	bad("a time in the query", Route{Method: "GET", Path: "/x", Params: []Param{{Name: "t", In: InQuery, Type: TypeTime}}})
	bad("an admin route without a key", Route{Method: "POST", Path: "/x", Admin: true, Root: true})
	bad("body field twice", Route{Method: "POST", Path: "/x", Body: &Param{Type: TypeObject, Fields: []Param{
		{Name: "a", Type: TypeNumber}, {Name: "a", Type: TypeNumber}}}})
	bad("array without items", Route{Method: "POST", Path: "/x", Body: &Param{Type: TypeObject, Fields: []Param{{Name: "a", Type: TypeArray}}}})
	bad("too many parameters", Route{Method: "GET", Path: "/x", Params: make([]Param, maxParams+1)})
	// What the table does is fine.
	rt := Route{Method: "GET", Path: "/companies/:id", Params: []Param{id, {Name: "id", In: InQuery, Type: TypeString}}, serve: ok}
	checkRoute(&rt)
}
