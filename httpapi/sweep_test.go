package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The hostile-input sweep: every route of routeTable, each of its declared
// query parameters, path parameters and body fields, with values a client
// should never send (empty, 1 MB, NUL, invalid UTF-8 and percent escapes,
// numbers and dates out of range, wrong JSON types, deep nesting, arrays
// over their bound), other methods, and garbage in the conditional,
// encoding and range headers. Every answer must be under 500; a 4xx must
// be the documented JSON error; no request may hang. Requests are written
// as raw HTTP/1.1 and parsed by http.ReadRequest, as the server parses
// them; a request the server's own parser refuses (answered by net/http in
// plain text, docs/api.md "Errors") is left out.
//
// With PREGAO_SWEEP_ADDR=host:port (and PREGAO_SWEEP_KEY_DELAYED,
// PREGAO_SWEEP_KEY_EOD, PREGAO_SWEEP_KEY_ADMIN, and the path identifiers
// PREGAO_SWEEP_TICKER, _COMPANY, _FUND, _INDEX, _FILE) the same requests
// go over TCP to a running `pregao serve` instead.

// sweepReq is one request of the sweep, as raw parts.
type sweepReq struct {
	method, target string
	key            string
	hdr            [][2]string
	body           []byte
	stream         bool // an SSE route: read the status, then leave
}

func (q sweepReq) raw(host string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", q.method, q.target, host)
	if q.key != "" {
		b.WriteString("Authorization: Bearer " + q.key + "\r\n")
	}
	chunked := false
	for _, h := range q.hdr {
		b.WriteString(h[0] + ": " + h[1] + "\r\n")
		if strings.EqualFold(h[0], "Transfer-Encoding") {
			chunked = true
		}
	}
	if chunked {
		b.WriteString("\r\n")
		fmt.Fprintf(&b, "%x\r\n", len(q.body))
		b.Write(q.body)
		b.WriteString("\r\n0\r\n\r\n")
		return b.Bytes()
	}
	if q.body != nil {
		b.WriteString("Content-Length: " + strconv.Itoa(len(q.body)) + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(q.body)
	return b.Bytes()
}

func (q sweepReq) String() string {
	t := q.target
	if len(t) > 160 {
		t = t[:160] + fmt.Sprintf("…(%d bytes)", len(q.target))
	}
	s := q.method + " " + t
	for _, h := range q.hdr {
		v := h[1]
		if len(v) > 80 {
			v = v[:80] + "…"
		}
		s += fmt.Sprintf(" [%s: %q]", h[0], v)
	}
	if q.body != nil {
		bd := string(q.body)
		if len(bd) > 160 {
			bd = bd[:160] + fmt.Sprintf("…(%d bytes)", len(q.body))
		}
		s += fmt.Sprintf(" body %q", bd)
	}
	return s
}

// sweepAnswer is what the checks look at.
type sweepAnswer struct {
	code int
	hdr  http.Header
	body []byte
}

// sweepIDs are the path identifiers that answer on the snapshot served.
type sweepIDs struct {
	ticker, company, fund, index, file string
	delayed, eod, admin                string
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// hostileScalars are raw (already percent-encoded) query or path values.
func hostileScalars() []string {
	return []string{
		"", "%00", "a%00b", "%zz", "%", "%e9", "%C3%A9", "%E2%80%A8", "%EF%BF%BF", "%F0%9F%92%A9",
		strings.Repeat("A", 1<<20), strings.Repeat("%C3%A9", 1000),
		"-1", "-0", "0", "+1", "%201", "0x10", "1_000", "NaN", "Inf", "-Inf", "1e400", "1e-400", "4.5",
		"9223372036854775808", "-9223372036854775809", "99999999999999999999999999999999",
		"2147483648", "4294967296",
		"true", "TRUE", "yes", "1",
		"0000-01-01", "9999-12-31", "2024-02-30", "2023-02-29", "2024-13-01", "2024-00-10", "-2024-01-01", "+12024-01-01",
		"2024-01-01T24:00:00Z", "2024-01-01T23:59:60Z", "2024-01-01T00:00:00%2B99:00", "2024-01-01T00:00:00.%31%32%33456789123Z",
		"9999-12-31T23:59:59.999999999%2B14:00", "0001-01-01T00:00:00-14:00", "2024-01-01T00:00", "20240101",
		",", ",,,", "a,,b", "%2C", strings.Repeat("A,", 100000),
		"..", "%2E%2E", "%2F", "a%2Fb", "%5C", "null", "undefined", "%22%3E%3Cscript%3E",
	}
}

// hostileJSON are JSON values of every type and shape, for body fields.
func hostileJSON() []string {
	long := `"` + strings.Repeat("A", 200<<10) + `"`
	return []string{
		`null`, `true`, `0`, `-0`, `-1`, `1.5`, `1e400`, `-1e400`, `1e-400`, `9223372036854775808`, `18446744073709551616`,
		`123456789012345678901234567890`, `""`, `"\u0000"`, `"\ud800"`, "\"\xff\xfe\"", `"é"`, long,
		`"0000-01-01"`, `"9999-12-31"`, `"2024-02-30"`, `"2024-01-01T24:00:00Z"`, `"9999-12-31T23:59:59+14:00"`,
		`"NaN"`, `"1e400"`, `[]`, `{}`, `[null]`, `[""]`, `[1]`, `[[]]`, `[{}]`, `{"a":1}`,
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
	}
}

// sweepRequests builds the sweep's requests for routes, with ids.delayed
// as the key of the market-data routes; the hostile bodies only when
// bodies.
func sweepRequests(routes []Route, prefix string, ids sweepIDs, bodies bool) []sweepReq {
	var out []sweepReq
	for _, rt := range routes {
		key := ids.delayed
		if rt.Admin {
			key = ids.admin
		}
		base := prefix
		if rt.Root {
			base = ""
		}
		pathOf := func(override map[string]string) string {
			segs := strings.Split(rt.Path, "/")
			for i, s := range segs {
				if !strings.HasPrefix(s, ":") && !strings.HasPrefix(s, "*") {
					continue
				}
				name := s[1:]
				if v, ok := override[name]; ok {
					segs[i] = v
					continue
				}
				switch {
				case name == "symbol":
					segs[i] = ids.index
				case name == "ticker":
					segs[i] = ids.ticker
				case name == "name" && strings.HasPrefix(rt.Path, "/files"):
					segs[i] = ids.file
				case name == "id" && strings.HasPrefix(rt.Path, "/traded-funds"):
					segs[i] = ids.fund
				case name == "id":
					segs[i] = ids.company
				default:
					segs[i] = "x"
				}
			}
			return base + strings.Join(segs, "/")
		}
		path := pathOf(nil)
		var body []byte
		var ctype [][2]string
		switch {
		case rt.Body != nil:
			body = []byte(sweepBaseBody(rt, ids))
			ctype = [][2]string{{"Content-Type", "application/json"}}
		case rt.Lines != nil:
			body = []byte(`{"ticker":"` + ids.ticker + `"}` + "\n")
			ctype = [][2]string{{"Content-Type", "application/x-ndjson"}}
		}
		add := func(method, target string, hdr [][2]string, b []byte) {
			out = append(out, sweepReq{method: method, target: target, key: key, hdr: hdr, body: b, stream: rt.Stream})
		}
		// The route as it is, and with other methods.
		add(rt.Method, path, ctype, body)
		for _, m := range []string{"HEAD", "OPTIONS", "PUT", "DELETE", "PATCH", "TRACE", "FOO", "get"} {
			add(m, path, nil, nil)
		}
		if rt.Method == http.MethodGet {
			add("POST", path, [][2]string{{"Content-Type", "application/json"}}, []byte(`{}`))
		} else {
			add("GET", path, nil, nil)
		}
		// Query parameters: each one alone with each hostile value, given
		// once and twice; an unknown one; many of them.
		for _, p := range rt.Params {
			if p.In != InQuery {
				continue
			}
			for _, v := range hostileScalars() {
				add(rt.Method, path+"?"+p.Name+"="+v, ctype, body)
			}
			add(rt.Method, path+"?"+p.Name+"=1&"+p.Name+"=2", ctype, body)
			add(rt.Method, path+"?"+p.Name+"&"+p.Name, ctype, body)
			add(rt.Method, path+"?"+p.Name+"=&"+p.Name+"=", ctype, body)
			add(rt.Method, path+"?"+strings.ToUpper(p.Name)+"=1", ctype, body)
			add(rt.Method, path+"?"+p.Name+"%00=1", ctype, body)
		}
		add(rt.Method, path+"?nope=1", ctype, body)
		add(rt.Method, path+"?%zz=1", ctype, body)
		add(rt.Method, path+"?a=1;b=2", ctype, body)
		add(rt.Method, path+"?"+strings.Repeat("&", 100000), ctype, body)
		add(rt.Method, path+"?"+strings.Repeat("a=1&", 50000), ctype, body)
		add(rt.Method, path+"?=", ctype, body)
		add(rt.Method, path+"?&=&=&", ctype, body)
		// Path parameters.
		for _, p := range rt.Params {
			if p.In != InPath {
				continue
			}
			for _, v := range []string{"%00", "%C3%A9", "%e9", "%2F", "a%2Fb", "%2E%2E", "%20", "%E2%80%A8",
				strings.Repeat("A", 1<<20), strings.Repeat("%C3%A9", 1000), "-1", "1e400", "NaN", "null", "%22%3C%3E"} {
				add(rt.Method, pathOf(map[string]string{p.Name: v}), ctype, body)
			}
		}
		// Headers.
		hostileHeaders := [][2]string{
			{"If-None-Match", "garbage"}, {"If-None-Match", "*"}, {"If-None-Match", `W/"x", "y",,,`}, {"If-None-Match", strings.Repeat(`"a",`, 10000)},
			{"If-None-Match", `"` + strings.Repeat("\x01", 100) + `"`},
			{"If-Modified-Since", "garbage"}, {"If-Modified-Since", "Mon, 01 Jan 0001 00:00:00 GMT"}, {"If-Modified-Since", "Fri, 31 Dec 9999 23:59:59 GMT"},
			{"If-Unmodified-Since", "garbage"}, {"If-Unmodified-Since", "Mon, 01 Jan 1990 00:00:00 GMT"},
			{"If-Match", "garbage"}, {"If-Match", `"nope"`}, {"If-Range", "garbage"},
			{"Accept-Encoding", "garbage"}, {"Accept-Encoding", "gzip;q=abc, zstd;q=-1, br;q=2"}, {"Accept-Encoding", "*;q=0"},
			{"Accept-Encoding", "identity;q=0, *;q=0"}, {"Accept-Encoding", strings.Repeat("gzip,", 20000)},
			{"Accept", "garbage"}, {"Accept", "text/csv"}, {"Accept", "text/csv;q=x, */*;q=0"}, {"Accept", "application/xml"},
			{"Accept-Charset", "latin1"}, {"Origin", "null"}, {"Origin", "https://a.example"}, {"Access-Control-Request-Method", "FOO"}, {"X-Request-Id", strings.Repeat("\x7f", 300)},
			{"Range", "bytes=abc"}, {"Range", "bytes=5-1"}, {"Range", "bytes=0-0" + strings.Repeat(",0-0", 2000)},
			{"Range", "bytes=-0"}, {"Range", "bytes=99999999999999999999-"}, {"Range", "items=0-1"}, {"Range", "bytes="},
			{"Range", "bytes=0-1"}, {"Range", "bytes=1000000-"},
			{"Cache-Control", "no-cache"}, {"Content-Encoding", "gzip"},
		}
		for _, h := range hostileHeaders {
			add(rt.Method, path, append(append([][2]string{}, ctype...), h), body)
		}
		add(rt.Method, path, [][2]string{{"Range", "bytes=0-1"}, {"If-Range", "garbage"}}, nil)
		add(rt.Method, path, [][2]string{{"Range", "bytes=0-1"}, {"If-Range", "Mon, 01 Jan 0001 00:00:00 GMT"}}, nil)
		// Keys.
		for _, k := range []string{ids.eod, "", "pg_garbage", strings.Repeat("x", 10000)} {
			out = append(out, sweepReq{method: rt.Method, target: path, key: k, hdr: ctype, body: body, stream: rt.Stream})
		}
		out = append(out, sweepReq{method: rt.Method, target: path, hdr: append([][2]string{{"Authorization", "Basic %%%"}}, ctype...), body: body, stream: rt.Stream})
		// Bodies.
		if bodies && (rt.Body != nil || rt.Lines != nil || rt.Method == http.MethodGet) {
			for _, b := range sweepBodies(rt, ids) {
				add(rt.Method, path, b.hdr, b.body)
			}
		}
	}
	return out
}

type sweepBody struct {
	hdr  [][2]string
	body []byte
}

func sweepBaseBody(rt Route, ids sweepIDs) string {
	if rt.Body == &screenerBody {
		return `{}`
	}
	return `{"tickers":["` + ids.ticker + `"]}`
}

// sweepBodies are hostile bodies for rt: the body as a whole, then each
// declared field (and each field of the items of an array of objects)
// with each hostile JSON value.
func sweepBodies(rt Route, ids sweepIDs) []sweepBody {
	js := [][2]string{{"Content-Type", "application/json"}}
	var out []sweepBody
	addj := func(b string) { out = append(out, sweepBody{js, []byte(b)}) }
	for _, b := range []string{"", " ", "null", "[]", "{", "}", "not json", "\x00", "\xff\xfe{}", "\ufeff{}", `"str"`, `1e400`,
		`{} {}`, `{}x`, `{"a":1}`, `{"a":1,"a":2}`, strings.Repeat("[", 100000), strings.Repeat(`{"a":`, 100000),
		strings.Repeat(" ", 2<<20) + "{}", "{}" + strings.Repeat(" ", 1<<20-10), `{"tickers":` + strings.Repeat("[", 50000) + "}"} {
		addj(b)
	}
	base := sweepBaseBody(rt, ids)
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=latin1", "garbage", ""} {
		out = append(out, sweepBody{[][2]string{{"Content-Type", ct}}, []byte(base)})
	}
	out = append(out, sweepBody{[][2]string{{"Content-Type", "application/json"}, {"Transfer-Encoding", "chunked"}}, []byte(base)})
	out = append(out, sweepBody{[][2]string{{"Content-Type", "application/json"}, {"Transfer-Encoding", "chunked"}}, bytes.Repeat([]byte(" "), 3<<20)})
	if rt.Body != nil {
		out = append(out, sweepFieldBodies(rt.Body, "", base)...)
		// Duplicate keys, the second one hostile.
		addj(`{"tickers":["` + ids.ticker + `"],"tickers":"x"}`)
		addj(`{"tickers":["` + ids.ticker + `"],"tickers":null}`)
	}
	if rt.Lines != nil {
		nd := [][2]string{{"Content-Type", "application/x-ndjson"}}
		cs := [][2]string{{"Content-Type", "text/csv"}}
		for _, b := range []string{"\n\n\n", "{}\n{}\n", "[]\n", "{\n", strings.Repeat(`{"ticker":"X"}`+"\n", 200000), `{"ticker":"` + strings.Repeat("A", 1<<20) + `"}`,
			`{"ticker":"ENHZ3","price":1e400,"qty":-1,"time":"9999-12-31T23:59:59Z"}`, `{"ticker":"ENHZ3","time":"0000-01-01T00:00:00Z"}`, "\x00\n"} {
			out = append(out, sweepBody{nd, []byte(b)})
		}
		for _, b := range []string{"", "a,b\n1,2\n", "ticker\n\x00\n", "ticker,price\n\"unterminated\n", strings.Repeat(",", 1<<20)} {
			out = append(out, sweepBody{cs, []byte(b)})
		}
		for _, f := range rt.Lines.Fields {
			for _, v := range hostileJSON() {
				out = append(out, sweepBody{nd, []byte(`{"` + f.Name + `":` + v + "}\n")})
			}
		}
	}
	return out
}

// sweepFieldBodies sets each field of obj, in turn, to each hostile JSON
// value, in the object base (a JSON object's text); the items of an array
// of objects get the same, as the array's one item, and over its bound.
func sweepFieldBodies(obj *Param, _ string, base string) []sweepBody {
	js := [][2]string{{"Content-Type", "application/json"}}
	var out []sweepBody
	with := func(name, v string) string {
		inner := strings.TrimSuffix(strings.TrimSpace(base), "}")
		if strings.TrimSpace(inner) == "{" {
			return inner + `"` + name + `":` + v + "}"
		}
		return inner + `,"` + name + `":` + v + "}"
	}
	for _, f := range obj.Fields {
		for _, v := range hostileJSON() {
			out = append(out, sweepBody{js, []byte(with(f.Name, v))})
		}
		if f.Type == TypeArray && f.Items != nil {
			n := f.Max + 1
			if f.Max == 0 {
				n = 100000
			}
			item := `"A"`
			if f.Items.Type == TypeObject {
				item = `{}`
				for _, g := range f.Items.Fields {
					for _, v := range hostileJSON() {
						out = append(out, sweepBody{js, []byte(with(f.Name, `[{"`+g.Name+`":`+v+`}]`))})
					}
				}
			}
			out = append(out, sweepBody{js, []byte(with(f.Name, "["+strings.TrimSuffix(strings.Repeat(item+",", n), ",")+"]"))})
			out = append(out, sweepBody{js, []byte(with(f.Name, "["+strings.TrimSuffix(strings.Repeat(item+",", 200000), ",")+"]"))})
		}
	}
	return out
}

// sweepCheck checks one answer; it returns what is wrong, or "".
func sweepCheck(q sweepReq, a sweepAnswer) string {
	if a.code >= 500 {
		return fmt.Sprintf("status %d: %.300s", a.code, a.body)
	}
	if a.code < 200 {
		return fmt.Sprintf("status %d", a.code)
	}
	ct := a.hdr.Get("Content-Type")
	if a.code >= 400 {
		if ct != "application/json" {
			return fmt.Sprintf("status %d with Content-Type %q: %.300q", a.code, ct, a.body)
		}
		if q.method == "HEAD" {
			return ""
		}
		var e struct {
			Error struct {
				Status  int    `json:"status"`
				Message string `json:"message"`
			} `json:"error"`
		}
		dec := json.NewDecoder(bytes.NewReader(a.body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil || dec.More() {
			return fmt.Sprintf("status %d: error body %.300q: %v", a.code, a.body, err)
		}
		if e.Error.Status != a.code || e.Error.Message == "" {
			return fmt.Sprintf("status %d: error body %.300s", a.code, a.body)
		}
		if len(a.body) > 1300 {
			return fmt.Sprintf("status %d: error body of %d bytes: %.300s", a.code, len(a.body), a.body)
		}
		return ""
	}
	if q.method != "HEAD" && strings.HasPrefix(ct, "application/json") && a.hdr.Get("Content-Encoding") == "" && !json.Valid(a.body) {
		return fmt.Sprintf("status %d: invalid JSON %.300q", a.code, a.body)
	}
	return ""
}

// TestHostileInputSweep runs the sweep in process on the small bundle
// (or over TCP against PREGAO_SWEEP_ADDR). Under the race detector,
// which makes it 7 times slower (94 s against 13 s), it sends every
// fourth request: make test sends them all in its pass without -race.
func TestHostileInputSweep(t *testing.T) {
	addr := os.Getenv("PREGAO_SWEEP_ADDR")
	ids := sweepIDs{ticker: "ENHZ3", company: "ENHZ", fund: "GSUL11", index: "IBOV", file: "companies.csv.gz",
		delayed: testKeyDelayed, eod: testKeyEOD, admin: testKeyAdminPlan}
	prefix := "/v2"
	var ts *testServer
	if addr != "" {
		ids = sweepIDs{ticker: envOr("PREGAO_SWEEP_TICKER", ids.ticker), company: envOr("PREGAO_SWEEP_COMPANY", ids.company),
			fund: envOr("PREGAO_SWEEP_FUND", ids.fund), index: envOr("PREGAO_SWEEP_INDEX", ids.index), file: envOr("PREGAO_SWEEP_FILE", ids.file),
			delayed: os.Getenv("PREGAO_SWEEP_KEY_DELAYED"), eod: os.Getenv("PREGAO_SWEEP_KEY_EOD"), admin: os.Getenv("PREGAO_SWEEP_KEY_ADMIN")}
	} else {
		ts = newAdminTestServer(t, DefaultConfig())
		ts.withFiles(t)
		ts.api.SetLiveSink(newFakeSink())
	}
	// The delayed plan with everything, then the eod plan (which refuses
	// the window options) with all but the hostile bodies.
	reqs := sweepRequests(routeTable, prefix, ids, true)
	eod := ids
	eod.delayed, eod.eod = ids.eod, ids.delayed
	reqs = append(reqs, sweepRequests(routeTable, prefix, eod, false)...)
	t.Logf("%d requests", len(reqs))
	bad := 0
	pid := os.Getenv("PREGAO_SWEEP_PID") // the server's: log the requests that raise its peak RSS
	hwm := peakRSS(pid)
	for i, q := range reqs {
		if raceEnabled && i%4 != 0 {
			continue
		}
		var a sweepAnswer
		var skip bool
		if addr != "" {
			a, skip = sweepTCP(t, addr, q)
		} else {
			a, skip = sweepInProcess(t, ts, q)
		}
		if skip {
			continue
		}
		if pid != "" {
			if h := peakRSS(pid); h > hwm+32<<20 {
				t.Logf("%s: the server's peak RSS grew from %d to %d MiB", q, hwm>>20, h>>20)
				hwm = h
			}
		}
		if msg := sweepCheck(q, a); msg != "" {
			bad++
			if bad <= 40 {
				t.Errorf("%s: %s", q, msg)
			}
		}
	}
	if bad > 40 {
		t.Errorf("%d answers wrong in all", bad)
	}
}

// sweepInProcess serves q through ts.api, parsed by http.ReadRequest;
// skip is true when net/http refuses it before any handler.
func sweepInProcess(t *testing.T, ts *testServer, q sweepReq) (sweepAnswer, bool) {
	t.Helper()
	r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(q.raw("pregao.test"))))
	if err != nil {
		return sweepAnswer{}, true
	}
	for _, h := range q.hdr {
		if strings.ContainsFunc(h[1], func(c rune) bool { return c < ' ' && c != '\t' || c == 0x7f }) {
			return sweepAnswer{}, true // the server refuses a header value with a control character
		}
	}
	r.RemoteAddr = "192.0.2.1:1234"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	if q.stream {
		ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	}
	defer cancel()
	r = r.WithContext(ctx)
	w := httptest.NewRecorder()
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		ts.api.ServeHTTP(w, r)
	}()
	select {
	case p := <-done:
		if p != nil {
			t.Fatalf("%s: panic %v", q, p)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no answer in 30 s", q)
	}
	return sweepAnswer{w.Code, w.Header(), w.Body.Bytes()}, false
}

// sweepTCP sends q to addr; skip is true when the server's own HTTP parser
// answered (plain text 400, 413 or 431 before any route).
func sweepTCP(t *testing.T, addr string, q sweepReq) (sweepAnswer, bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := 30 * time.Second
	if q.stream {
		deadline = 2 * time.Second
	}
	c.SetDeadline(time.Now().Add(deadline))
	go c.Write(q.raw(addr))
	method := q.method
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		t.Errorf("%s: %v", q, err)
		return sweepAnswer{}, true
	}
	defer resp.Body.Close()
	if q.stream && resp.StatusCode == 200 {
		return sweepAnswer{resp.StatusCode, resp.Header, nil}, false
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") &&
		(resp.StatusCode == 400 || resp.StatusCode == 431 || resp.StatusCode == 505 || resp.StatusCode == 501) &&
		bytes.HasPrefix(body, []byte(strconv.Itoa(resp.StatusCode)+" "+http.StatusText(resp.StatusCode))) {
		return sweepAnswer{}, true // net/http's own answer ("400 Bad Request: …")
	}
	if err != nil {
		if len(q.body) > 0 {
			// Answered before the body was read (an error, or a GET that
			// ignores it), then closed (Connection: close) with the body
			// unread: the reset cut the answer; its status and headers
			// are checked.
			if resp.StatusCode < 400 {
				resp.Header.Del("Content-Type")
			}
			return sweepAnswer{resp.StatusCode, resp.Header, []byte(fmt.Sprintf(`{"error":{"status":%d,"message":"(cut)"}}`, resp.StatusCode))}, false
		}
		t.Errorf("%s: reading the answer: %v", q, err)
	}
	return sweepAnswer{resp.StatusCode, resp.Header, body}, false
}

// peakRSS is VmHWM of process pid in bytes (0 when unknown).
func peakRSS(pid string) int64 {
	if pid == "" {
		return 0
	}
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n << 10
		}
	}
	return 0
}
