package httpapi

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// The OpenAPI 3.1 document of the API is generated from routeTable: every
// operation, its path and query parameters (with their types, enums,
// bounds and defaults) and its request body come from the declarations
// the server validates requests with, so the document cannot describe a
// parameter the server does not read. The answers' schemas, which the
// handlers write by hand, are in openapi_schemas.json (components), named
// by Route.Response; a test validates every golden answer and every error
// answer of the test suite against the schema of its route.

//go:embed openapi_schemas.json
var openAPISchemas []byte

// OpenAPIPath is where the document is served (no key needed).
const OpenAPIPath = "/openapi.json"

// OpenAPI returns the OpenAPI 3.1 document of an API under prefix ("/v2")
// at version (the server's), as indented JSON with sorted keys: the same
// bytes for the same arguments.
func OpenAPI(prefix, version string) ([]byte, error) {
	var schemas map[string]any
	if err := json.Unmarshal(openAPISchemas, &schemas); err != nil {
		return nil, fmt.Errorf("openapi: openapi_schemas.json: %w", err)
	}
	descs, err := routeDescriptions(version)
	if err != nil {
		return nil, err
	}
	examples, err := routeExamples()
	if err != nil {
		return nil, err
	}
	bodies := requestBodies()
	paths := map[string]any{}
	for i := range routeTable {
		rt := &routeTable[i]
		if rt.Untyped {
			continue // described by the routes of one type
		}
		if rt.Response != "" && schemas[rt.Response] == nil {
			return nil, fmt.Errorf("openapi: %s %s: no schema %q", rt.Method, rt.Path, rt.Response)
		}
		p := openAPIPath(prefix, rt)
		item, _ := paths[p].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[p] = item
		}
		op := operation(rt)
		op["description"] = descs[rt.Method+" "+rt.Path]
		if ex, ok := examples[rt.Method+" "+rt.Path]; ok {
			media := op["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)
			media["examples"] = map[string]any{"demo": map[string]any{"summary": ex.Summary, "value": ex.Value}}
			if rt.Body != nil && ex.Body != "" {
				var body any
				if err := json.Unmarshal([]byte(ex.Body), &body); err != nil {
					return nil, fmt.Errorf("openapi: %s %s: example body: %w", rt.Method, rt.Path, err)
				}
				bodies[rt.Body.Name].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["example"] = body
			}
		}
		item[strings.ToLower(rt.Method)] = op
	}
	doc := map[string]any{
		"openapi":           "3.1.0",
		"jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
		"info": map[string]any{
			"title":   "Pregão market-data API",
			"version": version,
			"summary": "Brazilian market data (B3 quotes, CVM filings) served from official open data.",
			"description": "Quotes, index rankings and portfolios, company registry data, fundamental and valuation ratios, " +
				"financial reports, corporate actions, a screener and listed-fund ratios. `null` means missing data, never zero. " +
				"Percentage variations are decimal fractions (0.0621 is +6.21%). Every error answer is `{\"error\":{\"status\":N,\"message\":\"…\"}}`. " +
				"Plans: `delayed` sees quotes of the current session 15 minutes late; `eod` sees the previous session only " +
				"and may send only `adjusted` to the quote routes. Operations marked (addition) go beyond the reference specification.\n\n" +
				"Every path also answers `OPTIONS` (204, no key: `Allow` lists its methods; with `--cors-origin`, a CORS preflight " +
				"is answered the same way with the `Access-Control-*` headers), and every GET operation `HEAD` (the status and headers, " +
				"`ETag`, `Last-Modified` and `X-Total-Count` included, that GET would answer, without the body). " +
				"They are described here once rather than as an operation of each path.\n\n" +
				"Each operation links to its rules (defaults, errors, decisions, examples) in the reference, " +
				"[docs/api.md](" + docsRepo + docsRef(version) + "/docs/api.md).",
			"license": map[string]any{"name": "Apache-2.0", "identifier": "Apache-2.0"},
			"contact": map[string]any{"name": "Pregão", "url": "https://github.com/pregao/pregao/issues"},
		},
		"servers":  []any{map[string]any{"url": "/", "description": "this server"}},
		"security": []any{map[string]any{"bearerAuth": []any{}}, map[string]any{"queryToken": []any{}}},
		"tags":     openAPITags(),
		"paths":    paths,
		"components": map[string]any{
			"schemas":       schemas,
			"requestBodies": bodies,
			"securitySchemes": map[string]any{
				"bearerAuth": map[string]any{
					"type": "http", "scheme": "bearer",
					"description": "An API key (pregao keys add) in Authorization: Bearer <key>. Its plan, delayed or eod, decides which quotes it sees.",
				},
				"queryToken": map[string]any{
					"type": "apiKey", "in": "query", "name": queryTokenParam,
					"description": "The same API key as ?token=<key>, for spreadsheets and browser address bars, only on a server started with --query-token (off by default) and only without an Authorization header.",
				},
			},
			"responses": errorResponses(),
			"headers": map[string]any{
				"ETag":            map[string]any{"description": "strong validator of the answer (snapshot and request); send it back in If-None-Match for a 304", "schema": map[string]any{"type": "string"}},
				"Last-Modified":   map[string]any{"description": "when the served snapshot was built", "schema": map[string]any{"type": "string"}},
				"X-Total-Count":   map[string]any{"description": "items of the whole list, before limit and offset", "schema": map[string]any{"type": "integer", "format": "int64"}},
				"X-Live-Next-Seq": map[string]any{"description": "the seq the next batch of the push feed must carry", "schema": map[string]any{"type": "integer", "format": "int64"}},
				"X-Live-Seq":      map[string]any{"description": "while a live session runs, on answers from prices: the last batch of the session the answer's view holds", "schema": map[string]any{"type": "integer", "format": "int64"}},
				"Link":            map[string]any{"description": "the list's other pages (RFC 8288): the same request with offset moved, as rel=\"next\" (when items follow), rel=\"prev\" (when some precede), rel=\"first\" and rel=\"last\"; absent when the answer is the whole list", "schema": map[string]any{"type": "string"}},
			},
		},
	}
	return json.MarshalIndent(doc, "", "  ")
}

// openAPIPath is rt's path as OpenAPI writes it: prefixed unless Root,
// ":name" segments as "{name}".
func openAPIPath(prefix string, rt *Route) string {
	p := rt.Path
	if !rt.Root {
		p = prefix + p
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ":") {
			segs[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(segs, "/")
}

// tagOf groups an operation by its first path segment.
func tagOf(rt *Route) string {
	if rt.Root {
		return "operations"
	}
	seg := strings.Split(strings.Trim(rt.Path, "/"), "/")[0]
	if seg == "stocks" || seg == "stream" {
		return "quotes"
	}
	if seg == "ratios" {
		return "companies"
	}
	return seg
}

func openAPITags() []any {
	return []any{
		map[string]any{"name": "indexes", "description": "Index portfolios and rankings of their members"},
		map[string]any{"name": "quotes", "description": "Quotes of tickers and macro series, session rankings"},
		map[string]any{"name": "companies", "description": "Registry data, ratios, reports, corporate actions and documents of companies"},
		map[string]any{"name": "screener", "description": "Tickers filtered and sorted"},
		map[string]any{"name": "traded-funds", "description": "Listed funds (FIIs, ETFs)"},
		map[string]any{"name": "sectors", "description": "The sector taxonomy the screener filters by"},
		map[string]any{"name": "files", "description": "Whole histories as Parquet and CSV files, for DuckDB, pandas and Polars"},
		map[string]any{"name": "operations", "description": "Health, readiness, metrics and this document (no key)"},
		map[string]any{"name": "admin", "description": "Operator routes, not market data: the live session's push feed. Only keys with the admin scope (pregao keys add --admin) may call them; an API plan key gets 403."},
	}
}

// operation is rt's OpenAPI operation object.
func operation(rt *Route) map[string]any {
	op := map[string]any{
		"operationId": operationID(rt),
		"summary":     rt.Summary,
		"tags":        []any{tagOf(rt)},
	}
	var params []any
	for _, p := range rt.Params {
		if p.Name == formatParam.Name && p.In == InQuery && rt.CSV != "" {
			continue // format=csv is the CSV route's (the route at path.csv)
		}
		params = append(params, parameter(p))
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	if rt.Body != nil {
		op["requestBody"] = map[string]any{"$ref": "#/components/requestBodies/" + rt.Body.Name}
	}
	if rt.Lines != nil {
		op["requestBody"] = map[string]any{"$ref": "#/components/requestBodies/" + rt.Lines.Name}
	}
	ok := map[string]any{"description": "OK"}
	switch {
	case rt.Path == routeMetricsPath:
		ok["content"] = map[string]any{"text/plain": map[string]any{"schema": map[string]any{"type": "string"}}}
	case rt.Path == OpenAPIPath:
		ok["content"] = map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object", "description": "this document"}}}
	case rt.Path == docsPath:
		ok["content"] = map[string]any{"text/html": map[string]any{"schema": map[string]any{"type": "string"}}}
	case rt.Path == routeDocsFile:
		ok["content"] = map[string]any{"text/javascript": map[string]any{"schema": map[string]any{"type": "string"}}, "text/css": map[string]any{"schema": map[string]any{"type": "string"}}}
	case rt.Stream:
		// Server-Sent Events: the body is a stream of text events; the
		// data of each event kind has its schema (x-events).
		ok["content"] = map[string]any{"text/event-stream": map[string]any{
			"schema": map[string]any{"type": "string", "description": "Server-Sent Events: `id`, `event` (bar, correction, quote, session) and `data` (JSON) lines, a blank line after each; comments (`: keep-alive`) every 15 s. A temporary refusal (429, 503) to a request whose Accept lists text/event-stream is this answer too: `retry:` (its Retry-After in milliseconds), one `error` event without id whose data is the JSON error, then the end"},
			"x-events": map[string]any{
				"bar": schemaRef("StreamBar"), "correction": schemaRef("StreamCorrection"),
				"quote": schemaRef("StreamQuote"), "session": schemaRef("StreamSession"),
				"error": schemaRef("Error"),
			},
		}}
	case rt.Media == mediaFile:
		bin := map[string]any{"schema": map[string]any{"type": "string", "format": "binary"}}
		ok["content"] = map[string]any{mediaFile: bin, "application/gzip": bin}
	case rt.Media == mediaCSV:
		ok["content"] = map[string]any{"text/csv": map[string]any{"schema": map[string]any{
			"type": "string", "description": "the answer of " + rt.Method + " " + strings.TrimSuffix(openAPIPath("", rt), ".csv") +
				" as CSV (its format=csv, or Accept: text/csv): one header row with the JSON field names, null as an empty cell"}}}
	default:
		// JSON alone: the CSV form is the route at path.csv, so that a
		// generated client does not type this answer as JSON or a string.
		ok["content"] = map[string]any{"application/json": map[string]any{"schema": schemaRef(rt.Response)}}
	}
	switch {
	case rt.Admin:
		ok["headers"] = map[string]any{"X-Live-Next-Seq": map[string]any{"$ref": "#/components/headers/X-Live-Next-Seq"}}
	case rt.Stream:
	case !rt.Root:
		hd := map[string]any{
			"ETag":          map[string]any{"$ref": "#/components/headers/ETag"},
			"Last-Modified": map[string]any{"$ref": "#/components/headers/Last-Modified"},
		}
		if paginated(rt) {
			hd["X-Total-Count"] = map[string]any{"$ref": "#/components/headers/X-Total-Count"}
			hd["Link"] = map[string]any{"$ref": "#/components/headers/Link"}
		} else if rt.Body != nil && slices.ContainsFunc(rt.Body.Fields, func(f Param) bool { return f.Name == "offset" }) {
			hd["X-Total-Count"] = map[string]any{"$ref": "#/components/headers/X-Total-Count"} // paged by the body (the screener)
		}
		if rt.Priced {
			hd["X-Live-Seq"] = map[string]any{"$ref": "#/components/headers/X-Live-Seq"}
		}
		ok["headers"] = hd
	}
	resp := map[string]any{"200": ok}
	if rt.Root {
		op["security"] = []any{}
		if rt.Path == routeReadyz {
			resp["503"] = errorRef("NotReady")
		}
		if rt.Path == routeDocsFile {
			resp["404"] = errorRef("NotFound")
		}
	} else {
		resp["400"] = errorRef("BadRequest")
		resp["401"] = errorRef("Unauthorized")
		resp["403"] = errorRef("Forbidden")
		resp["429"] = errorRef("TooManyRequests")
		resp["503"] = errorRef("NotReady")
		if rt.Media == mediaFile {
			resp["206"] = map[string]any{"description": "Partial Content: the byte ranges the Range header asked (several as multipart/byteranges)"}
			resp["412"] = errorRef("PreconditionFailed")
			resp["416"] = errorRef("RangeNotSatisfiable")
		}
		if rt.Method == http.MethodGet && !rt.Stream {
			resp["304"] = map[string]any{"description": "Not Modified: the If-None-Match validator matches, or (without If-None-Match) If-Modified-Since is at or after Last-Modified (no body)"}
		}
		if rt.Method == http.MethodPost {
			resp["413"] = errorRef("TooLarge")
			resp["415"] = errorRef("UnsupportedMediaType")
		}
		if rt.Admin {
			resp["409"] = map[string]any{
				"description": "The batch's seq is not the one expected (X-Live-Next-Seq, also named by the message): below it, the batch was applied already; above it, batches are missing",
				"headers":     map[string]any{"X-Live-Next-Seq": map[string]any{"$ref": "#/components/headers/X-Live-Next-Seq"}},
				"content":     map[string]any{"application/json": map[string]any{"schema": schemaRef("Error")}},
			}
			resp["503"] = errorRef("NoFeed")
		}
		for _, p := range rt.Params {
			if p.In == InPath {
				resp["404"] = errorRef("NotFound")
			}
		}
	}
	op["responses"] = resp
	return op
}

// paginated reports whether rt is a list that takes limit and offset (its
// answers carry X-Total-Count and Link).
func paginated(rt *Route) bool {
	for _, p := range rt.Params {
		if p.Name == "offset" && p.In == InQuery {
			return true
		}
	}
	return false
}

// operationID is a stable camel-case name: getCompaniesIdRatios.
func operationID(rt *Route) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(rt.Method))
	up := true
	for _, r := range rt.Path {
		switch {
		case r == '/' || r == '-' || r == ':' || r == '.' || r == '_':
			up = true
		case up:
			b.WriteString(strings.ToUpper(string(r)))
			up = false
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func schemaRef(name string) map[string]any {
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

func errorRef(name string) map[string]any {
	return map[string]any{"$ref": "#/components/responses/" + name}
}

// errorResponses are the shared error answers, all of the Error shape.
func errorResponses() map[string]any {
	out := map[string]any{}
	for name, desc := range map[string]string{
		"BadRequest":           "A parameter or body field is missing, unknown or invalid; the message names it and what is accepted",
		"Unauthorized":         "No valid API key in Authorization: Bearer <key>",
		"Forbidden":            "The key may not do this: a quote option its plan lacks (eod), market data with a key that has no plan (only the admin scope)",
		"NotFound":             "The company, ticker, index or fund of the path is unknown (or, for funds, has no indicator)",
		"TooManyRequests":      "The key's request-rate limit is reached, or its requests already compute on its share of the cores; Retry-After says when to retry",
		"TooLarge":             "The request body is over the server's cap",
		"UnsupportedMediaType": "The request body is sent compressed (a Content-Encoding but identity: Accept-Encoding says identity), or, on the push routes, its Content-Type is not NDJSON or CSV",
		"PreconditionFailed":   "If-Match does not list the file's ETag, or If-Unmodified-Since is before its Last-Modified",
		"NoFeed":               "The server has no push feed (serve without --feed push), or no snapshot loaded yet",
		"NotReady":             "No snapshot is loaded yet (the message says how far the load has gone), or the server is shutting down",
		"RangeNotSatisfiable":  "Every range of the Range header starts at or past the file's end, or the header is not a byte range set; Content-Range gives the file's size (bytes */SIZE)",
	} {
		out[name] = map[string]any{
			"description": desc,
			"content":     map[string]any{"application/json": map[string]any{"schema": schemaRef("Error")}},
		}
	}
	return out
}

// parameter is the OpenAPI parameter object of a path or query Param.
func parameter(p Param) map[string]any {
	o := map[string]any{
		"name":     p.Name,
		"in":       p.In,
		"required": p.In == InPath || p.Required,
		"schema":   paramSchema(p),
	}
	if p.Desc != "" {
		o["description"] = p.Desc
	}
	if p.Type == TypeList {
		o["style"], o["explode"] = "form", false
	}
	if p.Example != "" {
		o["example"] = p.Example
	}
	return o
}

// paramSchema is the JSON schema of a declaration (parameters, body
// fields and bodies).
func paramSchema(p Param) map[string]any {
	s := map[string]any{}
	switch p.Type {
	case TypeString:
		s["type"] = "string"
		if p.Pattern != "" {
			s["pattern"] = p.Pattern
		}
	case TypeEnum:
		s["type"] = "string"
		s["enum"] = p.Enum
	case TypeBoolean:
		s["type"] = "boolean"
	case TypeInteger:
		s["type"], s["format"] = "integer", "int32"
		if p.Max > 1<<31-1 {
			s["format"] = "int64"
		}
		if p.Min != 0 || p.Max != 0 {
			s["minimum"], s["maximum"] = p.Min, p.Max
		}
	case TypeNumber:
		s["type"], s["format"] = "number", "double"
	case TypeDate:
		s["type"], s["format"] = "string", "date"
	case TypeTimestamp:
		s["type"] = "string"
		s["pattern"] = `^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$`
		s["description"] = "ISO 8601: YYYY-MM-DD (midnight UTC), YYYY-MM-DDTHH:MM:SS (UTC) or RFC 3339"
	case TypeAsOf:
		s["type"] = "string"
		s["pattern"] = asOfPattern
		s["description"] = "YYYY-MM-DD (the end of that day in São Paulo), YYYY-MM-DDTHH:MM[:SS[.fraction]] (São Paulo time, UTC-3) or RFC 3339 with Z or an offset"
	case TypeTime:
		s["oneOf"] = []any{
			map[string]any{"type": "string", "format": "date-time", "description": "RFC 3339 with Z or an offset (fractions allowed)"},
			map[string]any{"type": "integer", "format": "int64", "description": "unix milliseconds"},
		}
	case TypeList:
		s["type"] = "array"
		s["items"] = map[string]any{"type": "string"}
	case TypeArray:
		s["type"] = "array"
		if p.Items != nil {
			s["items"] = paramSchema(*p.Items)
		}
		if p.Min != 0 || p.Max != 0 {
			if p.Min > 0 {
				s["minItems"] = p.Min
			}
			s["maxItems"] = p.Max
		}
	case TypeObject:
		s["type"] = "object"
		props := map[string]any{}
		var req []string
		for _, f := range p.Fields {
			fs := paramSchema(f)
			if f.Desc != "" {
				fs["description"] = f.Desc
			}
			props[f.Name] = fs
			if f.Required {
				req = append(req, f.Name)
			}
		}
		s["properties"] = props
		if len(req) > 0 {
			s["required"] = req
		}
		s["additionalProperties"] = false
		if p.In == "" && p.Desc != "" {
			s["description"] = p.Desc // a body's or an item's (a field's is set by its object)
		}
	}
	if p.Fold && p.Type == TypeEnum {
		// Matched ignoring case: the schema accepts any spelling; the
		// values are listed as examples.
		delete(s, "enum")
		s["examples"] = p.Enum
	}
	if p.Default != nil {
		s["default"] = p.Default
	}
	return s
}

// requestBodies are the request bodies of the routes
// (components/requestBodies), by the name of their declaration, each
// with its whole schema inline, items included. A field with a default is
// optional (only Required fields are listed as required), and generators
// type it so: openapi-typescript, by default, makes a property with a
// default required in a named schema (components/schemas, which it reads
// as an answer), but not in a request body.
func requestBodies() map[string]any {
	out := map[string]any{}
	for i := range routeTable {
		rt := &routeTable[i]
		switch {
		case rt.Untyped:
		case rt.Body != nil:
			out[rt.Body.Name] = map[string]any{
				"required": true,
				"content":  map[string]any{"application/json": map[string]any{"schema": paramSchema(*rt.Body)}},
			}
		case rt.Lines != nil:
			out[rt.Lines.Name] = map[string]any{
				"required": true,
				"description": "A batch of lines, at most --max-push-body bytes (16 MiB by default): NDJSON, one " + rt.Lines.Name +
					" object per line (application/x-ndjson, the default without Content-Type), or CSV (text/csv) with a header row naming " +
					"the same fields in any order and an empty cell for an absent value. Every bad line is a 400 naming line and field; nothing of a refused batch is applied.",
				"content": map[string]any{
					"application/x-ndjson": map[string]any{"schema": paramSchema(*rt.Lines)},
					"text/csv":             map[string]any{"schema": map[string]any{"type": "string"}},
				},
			}
		}
	}
	return out
}
