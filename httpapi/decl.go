package httpapi

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/julienschmidt/httprouter"
)

// Type is the type of a parameter or of a body field as the client writes
// it.
type Type uint8

// Parameter and body field types.
const (
	TypeString    Type = iota + 1 // free text
	TypeEnum                      // one of Param.Enum
	TypeBoolean                   // true or false
	TypeInteger                   // a whole number in [Param.Min, Param.Max]
	TypeNumber                    // a JSON number (body fields)
	TypeDate                      // YYYY-MM-DD
	TypeTimestamp                 // ISO 8601: YYYY-MM-DD (midnight UTC), YYYY-MM-DDTHH:MM:SS (UTC) or RFC 3339
	TypeList                      // comma-separated strings (query parameters)
	TypeArray                     // a JSON array of Param.Items (body fields)
	TypeObject                    // a JSON object of Param.Fields (bodies)
	TypeTime                      // an instant (body fields): RFC 3339 with Z or an offset, or unix milliseconds
	TypeAsOf                      // an as_of instant: YYYY-MM-DD (that day's end in São Paulo), YYYY-MM-DDTHH:MM[:SS] (São Paulo time) or RFC 3339
)

var typeNames = [...]string{
	TypeString: "string", TypeEnum: "enum", TypeBoolean: "boolean", TypeInteger: "integer",
	TypeNumber: "number", TypeDate: "date", TypeTimestamp: "timestamp", TypeList: "list",
	TypeArray: "array", TypeObject: "object", TypeTime: "time", TypeAsOf: "as_of",
}

// String returns the type's name ("integer").
func (t Type) String() string {
	if int(t) < len(typeNames) && typeNames[t] != "" {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// Where a parameter is sent (Param.In); body fields have none.
const (
	InPath  = "path"
	InQuery = "query"
)

// Param declares one path or query parameter of a Route, one field of a
// request body (In ""), or a body itself (TypeObject with Fields). The
// declarations are data: the query reader (see query) and the body decoder
// (see bodyDecoder) validate requests through them, and an OpenAPI
// generator can walk them, so the documentation and the server cannot
// drift. Declarations are never modified after package initialization.
type Param struct {
	// Name is the parameter's or field's name as sent (a body's schema
	// name, e.g. "QuotesRequest").
	Name string
	// In is InPath, InQuery, or "" for a body field.
	In string
	// Type is what the value must be.
	Type Type
	// Desc documents the parameter for clients (units, semantics).
	Desc string
	// Enum lists the values a TypeEnum accepts, upper case as documented.
	Enum []string
	// Fold makes a TypeEnum match ignoring case (the declared spelling is
	// what the handler gets).
	Fold bool
	// Default is what the handler gets when the parameter is absent: a
	// bool (TypeBoolean), an int (TypeInteger) or a string (TypeEnum,
	// TypeString). nil: the zero value, and absence has the meaning Desc
	// gives (e.g. a default computed from other parameters or the plan).
	Default any
	// Min and Max bound a TypeInteger (inclusive) or the number of items
	// of a TypeArray; unused when both are 0.
	Min, Max int
	// Unit is the unit of a TypeInteger or TypeNumber ("seconds"), which
	// the messages of a bad value name; "" for none.
	Unit string
	// Noun names the items of a TypeArray in messages ("at most 8 sort
	// keys per request"); "" is "items".
	Noun string
	// Required marks a body field that must be present (path parameters
	// always are), or a query parameter the handler requires (it checks).
	Required bool
	// Pattern is a regular expression the value matches (documentation:
	// the handler checks it).
	Pattern string
	// Example is a value that answers on the demo snapshot (README,
	// "Tickers to try"), shown by the OpenAPI document and the docs page's
	// Try it out; "" for none.
	Example string
	// Items declares the items of a TypeArray.
	Items *Param
	// Fields declares the fields of a TypeObject, in the order the
	// "accepted" list of an unknown-field error names them.
	Fields []Param
}

// Route is one operation of the API as data: the router is built from
// routeTable, and an OpenAPI generator can walk it (see Routes).
type Route struct {
	// Method is http.MethodGet or http.MethodPost.
	Method string
	// Path is the httprouter pattern, relative to Config.Prefix unless Root
	// (":name" segments are the path parameters).
	Path string
	// Summary says in one line what the operation answers.
	Summary string
	// Params declares the path and query parameters. The query ones are
	// the only ones accepted, in the order the "accepted" list of an
	// unknown-parameter error names them.
	Params []Param
	// Body declares the request body (TypeObject); nil: none.
	Body *Param
	// Response names the schema of a 200 answer (JSON); "" for the
	// Prometheus text of /metrics and for an Untyped route.
	Response string
	// Root routes are operational: served at the root, without
	// authentication and without a dataset.
	Root bool
	// CSV names the route's text/csv form (csvQuotes, csvTotalReturn,
	// csvRatios, csvFundRatios, csvCash; see csv.go), "" for none; such a
	// route declares formatParam, unless its Media is mediaCSV.
	CSV string
	// Media is the media type of the route's answers when it is not
	// negotiated: "" for JSON (or, on a route with a CSV form, JSON or
	// CSV by format and Accept), mediaCSV for the CSV form's own route
	// (see csvRoutes). The OpenAPI document gives each operation the one
	// media type of its answer, so that a generated client types it
	// (a route answering Server-Sent Events would be another Media).
	Media string
	// Priced routes answer from the plan's view of prices (quotes,
	// rankings, variations, the screener): their answer, ETag and kept
	// answer follow the plan's cut-off and the live session's revision
	// there; other routes depend on the Dataset and the request only.
	Priced bool
	// Blocks declares which column blocks of a mapped snapshot (daily
	// and 1-minute bars, ratio points: verified on first use, see
	// engine.Blocks) the route's answer reads, and so what its request
	// verifies before it is served (resolveView): BlocksAll, the zero
	// value, for any route not proven to read fewer.
	Blocks BlockScope
	// blocksFor, when not nil, declares Blocks per request, for a route
	// whose answer reads blocks only with some parameters or views. It
	// is called after the key and the clock are known, before the body
	// is read, and may pin on c what it found (see pricedBlocks).
	blocksFor func(a *API, c *call, r *http.Request) BlockScope
	// valued marks a route that is not Priced but shows valuation
	// ratios (market cap, the price multiples), which a key sees at the
	// session its quote view shows while that view leaves out the
	// Dataset's last session (valuationCut): that answer's key names
	// the view (valuedKey), as a priced answer's does.
	valued bool
	// Deferred marks a route whose answer reads a deferred kind of the
	// Dataset (cash actions, fund reports, insider reports, documents,
	// and the fund ratio points' sources: engine.Dataset.FinishDeferred): while a
	// snapshot's deferred kinds are still being loaded its requests wait
	// for them (readsDeferred), then are served. Any request with as_of
	// waits too (the earliest time it may name reads them).
	Deferred bool
	// Admin routes are the operator's (under /admin): only keys with
	// ScopeAdmin may call them, whatever their plan (admin.go).
	Admin bool
	// Untyped marks a route whose answer's shape depends on its
	// parameters (the specification's GET /quotes/{ticker} and POST
	// /quotes: a quote, a series or the chart presets by type, keyed by
	// ticker for a batch). It is served but left out of the OpenAPI
	// document, which describes instead a route per shape (GET
	// /quotes/{ticker}/current…), so that every operation of the
	// document has one answer type a generated client can name.
	Untyped bool
	// Lines declares a body of lines (TypeObject, one per line: NDJSON,
	// or CSV with a header row naming its fields); nil: none. Not with
	// Body.
	Lines *Param
	// Stream routes answer a stream of Server-Sent Events
	// (text/event-stream, sse.go): no answer cache, no compression, no
	// validators.
	Stream bool

	// raw, when not nil, serves the route instead of serve: it writes the
	// answer itself (a file, with ranges) and returns the status sent; no
	// answer cache, no negotiation (GET /files/{name}).
	raw func(a *API, c *call, r *http.Request, ps httprouter.Params) int

	// serve is the thin handler: it reads its parameters through Params
	// (see query), appends its JSON answer to dst, or returns an error
	// that the wrapper writes. nil for /metrics (promhttp).
	serve func(a *API, c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error)
}

// mediaCSV is the Media of the routes that answer CSV only.
const mediaCSV = "text/csv"

// csvRoutes returns routes with, after each route that has a CSV form
// (and is not Untyped), the route of that form alone: its path with
// ".csv" appended, its parameters but format, Media mediaCSV. It answers
// what the route answers with format=csv, as an operation of its own,
// so that the OpenAPI document gives the route's operation JSON alone
// and a generated client types the two apart.
func csvRoutes(routes []Route) []Route {
	out := make([]Route, 0, 2*len(routes))
	for _, rt := range routes {
		out = append(out, rt)
		if rt.CSV == "" || rt.Untyped {
			continue
		}
		c := rt
		c.Path += ".csv"
		c.Summary = "CSV: " + rt.Summary
		c.Media = mediaCSV
		c.Params = nil
		for _, p := range rt.Params {
			if p.Name != formatParam.Name {
				c.Params = append(c.Params, p)
			}
		}
		out = append(out, c)
	}
	return out
}

// BlockScope is what a route's answer reads of the column blocks of a
// mapped snapshot (format 6 loaded with LazyVerify: its bars, 1-minute
// bars and ratio points, each block verified on its first use).
type BlockScope uint8

const (
	// BlocksAll: any block. The route's first request verifies every
	// block not yet verified (engine.Dataset.CheckAll) before it is
	// served; once they all are, that costs a call.
	BlocksAll BlockScope = iota
	// BlocksOwn: the blocks of the tickers the request names, which the
	// handler verifies itself (engine.Dataset.CheckAsset) before it
	// reads their bars; no ratio point (no ticker's blocks hold them).
	BlocksOwn
	// BlocksCompany: the blocks of the ratio points (a fund's: its fund
	// ratio points) of the company the request names, which the handler
	// verifies itself (engine.Dataset.CheckIssuer) before it reads them;
	// no bar.
	BlocksCompany
	// BlocksNone: no block. The answer comes from the heap and from the
	// index sections, verified at open (the latest quotes, the rankings
	// and the end-of-day view come from the series' summaries there).
	// A route is declared so only with the proof of
	// TestNoneRoutesReadNoColumn, which serves it with every column
	// page of the mapping unreadable.
	BlocksNone
)

// Routes returns the API's operations (the operational ones included), in
// the order of the documentation. The result and everything it points to
// must not be modified.
func Routes() []Route { return routeTable }

// queryNames returns the names of the route's query parameters, comma
// separated, for error messages.
func queryNames(params []Param) string {
	var b strings.Builder
	for i := range params {
		if params[i].In != InQuery {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(params[i].Name)
	}
	return b.String()
}

// fieldNames returns the names of obj's fields, comma separated.
func fieldNames(obj *Param) string {
	names := make([]string, len(obj.Fields))
	for i := range obj.Fields {
		names[i] = obj.Fields[i].Name
	}
	return strings.Join(names, ", ")
}

// checkRoute panics ("BUG: ...") on a declaration mistake: a path
// parameter not in the path (or the reverse), a name declared twice where
// it is sent, too many parameters for the query reader, a default of the
// wrong type, an enumeration without values, a body on a GET.
func checkRoute(rt *Route) {
	bug := func(format string, args ...any) {
		panic(fmt.Sprintf("BUG: route %s %s: ", rt.Method, rt.Path) + fmt.Sprintf(format, args...))
	}
	if len(rt.Params) > maxParams {
		bug("%d parameters, at most %d", len(rt.Params), maxParams)
	}
	var segs []string
	for _, s := range strings.Split(rt.Path, "/") {
		if name, ok := strings.CutPrefix(s, ":"); ok {
			segs = append(segs, name)
		}
	}
	npath := 0
	for i := range rt.Params {
		p := &rt.Params[i]
		switch p.In {
		case InPath:
			if npath >= len(segs) || segs[npath] != p.Name {
				bug("path parameter %q is not segment %d of the path", p.Name, npath)
			}
			npath++
		case InQuery:
		default:
			bug("parameter %q: In %q", p.Name, p.In)
		}
		for j := range rt.Params[:i] {
			if q := &rt.Params[j]; q.Name == p.Name && q.In == p.In {
				bug("parameter %q declared twice", p.Name)
			}
		}
		if err := checkParam(p); err != "" {
			bug("parameter %q: %s", p.Name, err)
		}
	}
	if npath != len(segs) {
		bug("path parameters %q declared, %d in the path", segs[:npath], len(segs))
	}
	if rt.Body != nil {
		if rt.Method != http.MethodPost || rt.Body.Type != TypeObject {
			bug("a body must be an object of a POST")
		}
		if err := checkParam(rt.Body); err != "" {
			bug("body: %s", err)
		}
	}
	if rt.Lines != nil {
		if rt.Method != http.MethodPost || rt.Lines.Type != TypeObject || rt.Body != nil || rt.Lines.Name == "" || len(rt.Lines.Fields) > 32 {
			bug("lines must be a named object of at most 32 fields, of a POST without Body")
		}
		if err := checkParam(rt.Lines); err != "" {
			bug("lines: %s", err)
		}
	}
	if rt.Admin && rt.Root {
		bug("an admin route needs a key: it cannot be Root")
	}
	if rt.raw != nil && (rt.serve != nil || rt.Root || rt.Method != http.MethodGet) {
		bug("a raw route is a GET with a key, served by raw alone")
	}
	if (rt.serve == nil && rt.raw == nil) != unwrapped[rt.Path] {
		bug("only /metrics, /openapi.json and the docs page are served outside wrap")
	}
}

// unwrapped are the routes served by handles of their own (Prometheus's,
// static assets), not through wrap.
var unwrapped = map[string]bool{routeMetricsPath: true, OpenAPIPath: true, docsPath: true, routeDocsFile: true}

// checkParam returns what is wrong with p ("" when nothing).
func checkParam(p *Param) string {
	if p.Type == 0 || int(p.Type) >= len(typeNames) {
		return fmt.Sprintf("type %v", p.Type)
	}
	if (p.Type == TypeEnum) != (len(p.Enum) > 0) {
		return "Enum goes with TypeEnum"
	}
	if p.Fold && p.Type != TypeEnum {
		return "Fold goes with TypeEnum"
	}
	if p.Unit != "" && p.Type != TypeInteger && p.Type != TypeNumber {
		return "Unit goes with a number"
	}
	if p.Min > p.Max {
		return "Min > Max"
	}
	if (p.Type == TypeArray) != (p.Items != nil) {
		return "Items goes with TypeArray"
	}
	if (p.Type == TypeObject) != (p.Fields != nil) {
		return "Fields go with TypeObject"
	}
	if len(p.Fields) > 64 {
		return "at most 64 Fields (the body decoder marks each field read in a uint64)"
	}
	if p.In != "" && (p.Type == TypeArray || p.Type == TypeObject || p.Type == TypeNumber || p.Type == TypeTime) {
		return fmt.Sprintf("a %v is a body type", p.Type)
	}
	if p.In == "" && p.Type == TypeList {
		return "a list is a query type"
	}
	ok := false
	switch d := p.Default.(type) {
	case nil:
		ok = true
	case bool:
		ok = p.Type == TypeBoolean
	case int:
		ok = p.Type == TypeInteger && p.Min <= d && d <= p.Max
	case string:
		ok = p.Type == TypeString || p.Type == TypeEnum && slices.Contains(p.Enum, d)
	}
	if !ok {
		return fmt.Sprintf("default %#v does not fit a %v", p.Default, p.Type)
	}
	if p.Items != nil {
		if err := checkParam(p.Items); err != "" {
			return "items: " + err
		}
	}
	for i := range p.Fields {
		f := &p.Fields[i]
		if f.In != "" {
			return fmt.Sprintf("field %q: In %q", f.Name, f.In)
		}
		for j := range p.Fields[:i] {
			if p.Fields[j].Name == f.Name {
				return fmt.Sprintf("field %q declared twice", f.Name)
			}
		}
		if err := checkParam(f); err != "" {
			return fmt.Sprintf("field %q: %s", f.Name, err)
		}
	}
	return ""
}
