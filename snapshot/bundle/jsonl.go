package bundle

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"
	"github.com/pregao/pregao/engine"
)

// rec is an entity with the line it was read from.
type rec[T any] struct {
	line int
	v    T
}

// readJSONL decodes every line of r (named file) into an In reset by def,
// converts and checks it with conv and returns the results in file order.
// Blank lines are skipped. Lines are decoded in batches by up to
// GOMAXPROCS goroutines. Problems go to c; the returned error is an I/O
// error. def must reset every field of its argument (it is reused).
func readJSONL[In, Out any](r io.Reader, file string, c *collector, def func(*In), conv func(*In, *lineCtx) Out) ([]rec[Out], error) {
	type batch struct {
		idx   int
		buf   []byte
		ends  []int // end offset in buf of each line
		lines []int // line numbers
	}
	var results [][]rec[Out]
	var mu sync.Mutex
	work := make(chan *batch)
	var wg sync.WaitGroup
	decoders := max(1, runtime.GOMAXPROCS(0))
	for range decoders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var in In
			it := &interner{}
			for b := range work {
				out := make([]rec[Out], 0, len(b.ends))
				start := 0
				for i, end := range b.ends {
					line := b.buf[start:end]
					start = end
					if c.stop() {
						break
					}
					def(&in)
					l := lineCtx{c: c, file: file, line: b.lines[i], in: it}
					if field, msg := decodeLine(line, &in); msg != "" {
						l.errf(field, "%s", msg)
						continue
					}
					v := conv(&in, &l)
					if !l.bad {
						out = append(out, rec[Out]{line: l.line, v: v})
					}
				}
				mu.Lock()
				results[b.idx] = out
				mu.Unlock()
			}
		}()
	}
	lr := newLineReader(r)
	const batchBytes = 1 << 20
	cur := &batch{}
	flush := func() {
		if len(cur.ends) == 0 {
			return
		}
		mu.Lock()
		cur.idx = len(results)
		results = append(results, nil)
		mu.Unlock()
		work <- cur
		cur = &batch{}
	}
	for {
		line, n, ok := lr.next()
		if !ok || c.stop() {
			break
		}
		if isBlank(line) {
			continue
		}
		if cur.buf == nil {
			cur.buf = make([]byte, 0, max(64<<10, len(line)))
		}
		cur.buf = append(cur.buf, line...)
		cur.ends = append(cur.ends, len(cur.buf))
		cur.lines = append(cur.lines, n)
		if len(cur.buf) >= batchBytes {
			flush()
		}
	}
	flush()
	close(work)
	wg.Wait()
	if err := lr.err(); err != nil {
		return nil, err
	}
	n := 0
	for _, r := range results {
		n += len(r)
	}
	out := make([]rec[Out], 0, n)
	for i, r := range results {
		out = append(out, r...)
		results[i] = nil
	}
	return out, nil
}

func isBlank(b []byte) bool {
	for _, ch := range b {
		if ch != ' ' && ch != '\t' && ch != '\r' {
			return false
		}
	}
	return true
}

// disallowUnknown is the decode option rejecting unknown fields with
// json.Unmarshal (the library offers it on its stream Decoder only; the
// stream decoder is much slower per line). disallowWorks records that the
// option was verified at start-up; without it decodeLine falls back to a
// Decoder per line.
var (
	disallowUnknown json.DecodeOptionFunc = func(o *json.DecodeOption) { o.Flags |= 1 << 4 }
	disallowWorks                         = func() bool {
		var v struct {
			A int `json:"a"`
		}
		err := json.UnmarshalWithOption([]byte(`{"a":1,"zz":2}`), &v, disallowUnknown)
		if err == nil || !strings.Contains(err.Error(), `"zz"`) {
			return false
		}
		// and nothing else changes: a known field still decodes
		return json.UnmarshalWithOption([]byte(`{"a":1}`), &v, disallowUnknown) == nil && v.A == 1
	}()
)

// decodeLine decodes one JSON object into v, rejecting unknown fields and
// trailing data. On failure it returns the offending field path ("" when
// none applies) and a message.
func decodeLine[T any](line []byte, v *T) (field, msg string) {
	trim := bytes.TrimSpace(line)
	if len(trim) == 0 || trim[0] != '{' {
		return "", "want one JSON object per line"
	}
	var err error
	if disallowWorks {
		err = json.UnmarshalWithOption(trim, v, disallowUnknown)
	} else {
		dec := json.NewDecoder(bytes.NewReader(trim))
		dec.DisallowUnknownFields()
		if err = dec.Decode(v); err == nil {
			if off := dec.InputOffset(); off < int64(len(trim)) && !isBlank(trim[off:]) {
				return "", fmt.Sprintf("malformed JSON: unexpected data after the object at byte %d", off+1)
			}
		}
	}
	if err == nil {
		return "", ""
	}
	return explain(reflect.TypeFor[T](), trim, err)
}

// explain finds where line fails to decode as a t, for a message naming
// the field. It is the slow path, run only on bad lines.
func explain(t reflect.Type, line []byte, err error) (field, msg string) {
	if !stdjson.Valid(line) {
		var v any
		serr := stdjson.Unmarshal(line, &v)
		var se *stdjson.SyntaxError
		if errors.As(serr, &se) {
			return "", fmt.Sprintf("malformed JSON: %v (byte %d)", se, se.Offset)
		}
		return "", fmt.Sprintf("malformed JSON: %v", serr)
	}
	if f, m, ok := locate(t, line, ""); ok {
		return f, m
	}
	return "", fmt.Sprintf("cannot decode: %v", err)
}

var (
	typeNum     = reflect.TypeFor[engine.Num]()
	typeOptNum  = reflect.TypeFor[optNum]()
	typeDate    = reflect.TypeFor[engine.Date]()
	typeOptDate = reflect.TypeFor[optDate]()
	typeTime    = reflect.TypeFor[time.Time]()
	typeOptInt  = reflect.TypeFor[*int64]()
)

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// locate walks raw (valid JSON) against type t and reports the first field
// that does not decode.
func locate(t reflect.Type, raw []byte, path string) (field, msg string, found bool) {
	raw = bytes.TrimSpace(raw)
	switch t {
	case typeNum, typeOptNum:
		if n, err := strconv.ParseFloat(string(raw), 64); string(raw) != "null" && (err != nil || raw[0] == '"' || !engine.Num(n).Valid()) {
			return path, fmt.Sprintf("bad number %s (want a finite JSON number or null)", clip(raw)), true
		}
		return "", "", false
	case typeDate, typeOptDate:
		var d engine.Date
		if err := d.UnmarshalJSON(raw); err != nil {
			return path, fmt.Sprintf("bad date %s (want \"YYYY-MM-DD\" or null)", clip(raw)), true
		}
		return "", "", false
	case typeTime:
		var tm time.Time
		if err := tm.UnmarshalJSON(raw); err != nil {
			return path, fmt.Sprintf("bad timestamp %s (want RFC 3339, e.g. \"2024-03-28T18:00:00Z\", or null)", clip(raw)), true
		}
		return "", "", false
	}
	switch t.Kind() {
	case reflect.Struct:
		if string(raw) == "null" {
			return "", "", false
		}
		var m map[string]stdjson.RawMessage
		if err := stdjson.Unmarshal(raw, &m); err != nil {
			return path, fmt.Sprintf("want an object, got %s", jsonKind(raw)), true
		}
		fields := jsonFields(t)
		for _, k := range sortedKeys(m) {
			ft, ok := fields[k]
			if !ok {
				return joinPath(path, k), "unknown field", true
			}
			if f, msg, ok := locate(ft, m[k], joinPath(path, k)); ok {
				return f, msg, true
			}
		}
		return "", "", false
	case reflect.Slice:
		if string(raw) == "null" {
			return "", "", false
		}
		var arr []stdjson.RawMessage
		if err := stdjson.Unmarshal(raw, &arr); err != nil {
			return path, fmt.Sprintf("want an array, got %s", jsonKind(raw)), true
		}
		for i, el := range arr {
			if f, msg, ok := locate(t.Elem(), el, path+"["+strconv.Itoa(i)+"]"); ok {
				return f, msg, true
			}
		}
		return "", "", false
	}
	if t == typeOptInt {
		t = t.Elem()
	}
	v := reflect.New(t)
	if err := stdjson.Unmarshal(raw, v.Interface()); err != nil {
		want := t.Kind().String()
		switch t.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			want = "an integer"
		case reflect.String:
			want = "a string"
		case reflect.Bool:
			want = "true or false"
		}
		return path, fmt.Sprintf("want %s, got %s", want, clip(raw)), true
	}
	return "", "", false
}

// jsonFields maps the JSON names of t's fields to their types; a field of
// an outer struct hides an embedded one of the same name.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	type cand struct {
		depth int
		t     reflect.Type
	}
	best := map[string]cand{}
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if c, ok := best[name]; !ok || len(f.Index) < c.depth {
			best[name] = cand{len(f.Index), f.Type}
		}
	}
	out := make(map[string]reflect.Type, len(best))
	for k, c := range best {
		out[k] = c.t
	}
	return out
}

func jsonKind(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func clip(raw []byte) string {
	if len(raw) > 60 {
		return string(raw[:57]) + "..."
	}
	return string(raw)
}

// optNum is a Num that knows whether its field was present.
type optNum struct {
	v   engine.Num
	set bool
}

func (n *optNum) UnmarshalJSON(b []byte) error { n.set = true; return n.v.UnmarshalJSON(b) }

func (n optNum) get() engine.Num {
	if !n.set {
		return engine.Null
	}
	return n.v
}

// optDate is a Date that knows whether its field was present.
type optDate struct {
	v   engine.Date
	set bool
}

func (d *optDate) UnmarshalJSON(b []byte) error { d.set = true; return d.v.UnmarshalJSON(b) }

func (d optDate) get() engine.Date {
	if !d.set {
		return engine.NoDate
	}
	return d.v
}

func values[T any](rs []rec[T]) []T {
	if len(rs) == 0 {
		return nil
	}
	out := make([]T, len(rs))
	for i := range rs {
		out[i] = rs[i].v
	}
	return out
}
