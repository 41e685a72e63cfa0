package httpapi

import (
	"cmp"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/pregao/pregao/engine"
)

// Screener limits.
const (
	defaultScreenerLimit = 50
	MaxScreenerLimit     = 500
	dropletPrefix        = "droplet:"
)

// screenerRequest is the body of POST /screener, as declared by
// screenerBody and decoded by parseScreenerRequest (nil: absent).
type screenerRequest struct {
	Limit       *int
	Offset      *int
	PrimaryOnly *bool
	Filters     []screenerFilter
	Sort        []screenerSort
	AsOf        string // "" when absent
}

// screenerFilter is one filter as sent; its kind is Type: a scalar field
// (close_price, volume, employee_count), "sector", "index" or "droplet".
type screenerFilter struct {
	Type  string
	Op    string
	Value *float64
	Min   *float64
	Max   *float64
	In    []string // nil: absent; empty: sent empty
	ID    string
}

type screenerSort struct {
	By    string
	Order string
}

// column is a numeric screener column resolved for one request.
type column struct {
	vals  []engine.Num // per row
	enc   *encCol      // vals encoded (screenEnc: once per Dataset)
	class string       // droplet ids with a class suffix: only rows of that class
	byCls bool         // the indicator is per class (resolved_id gets the row's suffix)
	id    string       // droplet: base indicator id
}

func (col *column) at(s *engine.Screener, r int32) engine.Num {
	if col.class != "" && s.Assets[r].StockType != col.class {
		return engine.Null
	}
	return col.vals[r]
}

// appendAt appends row r's value as at returns it, encoded.
func (col *column) appendAt(dst []byte, s *engine.Screener, r int32) []byte {
	if col.class != "" && s.Assets[r].StockType != col.class {
		return append(dst, "null"...)
	}
	return append(dst, col.enc.at(r)...)
}

// compiled filter / sort.
type cFilter struct {
	src     *screenerFilter
	col     column
	sectors map[string]bool        // sector filters
	members map[*engine.Asset]bool // index filters: the indexes' members
	lo, hi  float64                // bounds of between (inclusive)
	op      filterOp
	v       float64
	// head is the filter as every row repeats it, up to the row's own
	// value: heads[head[0]:head[1]] (screenerScratch).
	head [2]int32
}

// filterOp is a compiled filter's comparison.
type filterOp uint8

const (
	opEQ filterOp = iota
	opBetween
	opGE
	opGT
	opLE
	opLT
)

var filterOps = map[string]filterOp{"between": opBetween, ">=": opGE, ">": opGT, "<=": opLE, "<": opLT, "==": opEQ}

type cSort struct {
	src  screenerSort
	col  column
	desc bool
	// head is {"by":…,"order":…,"value": as every row repeats it:
	// heads[head[0]:head[1]] (screenerScratch).
	head [2]int32
}

// scalarColumn returns the column of a scalar field or sort key.
func scalarColumn(s *engine.Screener, e *screenEnc, name string) (column, bool) {
	var vals []engine.Num
	var i int
	switch name {
	case "close_price", "current_price":
		vals, i = e.p.Close, 0
	case "volume":
		vals, i = e.p.Volume, 1
	case "employee_count":
		vals, i = s.Employees, 2
	default:
		return column{}, false
	}
	return column{vals: vals, enc: col(&e.scalar[i], vals)}, true
}

// dropletColumn resolves a ratio id (fundamental or valuation, with or
// without class suffix).
func (a *API) dropletColumn(ds *engine.Dataset, e *screenEnc, id string) (column, error) {
	base, class := engine.SplitClassSuffix(strings.ToUpper(strings.TrimSpace(id)))
	k, ok := ds.IndicatorIndex("", base) // FUNDAMENTAL, then VALUATION
	if !ok || k >= len(e.p.Ratios) {
		return column{}, badRequest("unknown ratio id %q (see /ratios/catalog)", id)
	}
	ind := &ds.Catalog()[k]
	if class != "" && !ind.ByClass {
		return column{}, badRequest("ratio %q is company-level: it takes no class suffix", base)
	}
	return column{vals: e.p.Ratios[k], enc: col(&e.ratios[k], e.p.Ratios[k]), class: class, byCls: ind.ByClass, id: ind.ID}, nil
}

// dropletIndexes returns the catalog indexes of the ratios req's filters
// and sorts name (those of the ids that resolve; compileScreener refuses
// the others).
func dropletIndexes(ds *engine.Dataset, req *screenerRequest) []int {
	var ks []int
	add := func(id string) {
		base, _ := engine.SplitClassSuffix(strings.ToUpper(strings.TrimSpace(id)))
		if k, ok := ds.IndicatorIndex("", base); ok {
			ks = append(ks, k)
		}
	}
	for i := range req.Filters {
		if req.Filters[i].Type == "droplet" {
			add(req.Filters[i].ID)
		}
	}
	for i := range req.Sort {
		if id, ok := strings.CutPrefix(req.Sort[i].By, dropletPrefix); ok {
			add(id)
		}
	}
	return ks
}

// compileScreener resolves req's filters and sorts, appended to fs and ss
// (the call's scratch).
func (a *API) compileScreener(ds *engine.Dataset, e *screenEnc, req *screenerRequest, fs []cFilter, ss []cSort) ([]cFilter, []cSort, error) {
	s := e.s
	for i := range req.Filters {
		f := &req.Filters[i]
		cf := cFilter{src: f}
		switch f.Type {
		case "sector":
			if len(f.In) == 0 {
				return nil, nil, badRequest("filters[%d]: a sector filter needs a non-empty \"in\" list of sector ids", i)
			}
			if f.Op != "" || f.Value != nil || f.Min != nil || f.Max != nil || f.ID != "" {
				return nil, nil, badRequest("filters[%d]: a sector filter takes only type and in", i)
			}
			cf.sectors = map[string]bool{}
			for _, id := range f.In {
				desc, ok := ds.SectorDescendants(id)
				if !ok {
					return nil, nil, badRequest("filters[%d]: unknown sector id %q", i, id)
				}
				for _, d := range desc {
					cf.sectors[d] = true
				}
			}
			fs = append(fs, cf)
			continue
		case "index":
			if len(f.In) == 0 {
				return nil, nil, badRequest("filters[%d]: an index filter needs a non-empty \"in\" list of index symbols (IBOV…)", i)
			}
			if f.Op != "" || f.Value != nil || f.Min != nil || f.Max != nil || f.ID != "" {
				return nil, nil, badRequest("filters[%d]: an index filter takes only type and in", i)
			}
			cf.members = map[*engine.Asset]bool{}
			for _, sym := range f.In {
				ix, err := findIndex(ds, sym)
				if err != nil {
					return nil, nil, badRequest("filters[%d]: %s", i, err.(*Error).Message)
				}
				for _, as := range ix.Members {
					if as != nil {
						cf.members[as] = true
					}
				}
			}
			fs = append(fs, cf)
			continue
		case "droplet":
			if f.ID == "" {
				return nil, nil, badRequest("filters[%d]: a droplet filter needs an id (a ratio id without the droplet: prefix)", i)
			}
			col, err := a.dropletColumn(ds, e, strings.TrimPrefix(f.ID, dropletPrefix))
			if err != nil {
				return nil, nil, badRequest("filters[%d]: %s", i, err.(*Error).Message)
			}
			cf.col = col
		default:
			col, ok := scalarColumn(s, e, f.Type)
			if !ok {
				return nil, nil, badRequest("filters[%d]: unknown filter type %q (want close_price, volume, employee_count, sector, index or droplet)", i, f.Type)
			}
			if f.ID != "" {
				return nil, nil, badRequest("filters[%d]: id applies to droplet filters only", i)
			}
			cf.col = col
		}
		if f.In != nil {
			return nil, nil, badRequest("filters[%d]: in applies to sector and index filters only", i)
		}
		cf.op = filterOps[f.Op]
		switch f.Op {
		case "between":
			if f.Min == nil || f.Max == nil || f.Value != nil {
				return nil, nil, badRequest("filters[%d]: op between needs min and max (and no value)", i)
			}
			if *f.Min > *f.Max {
				return nil, nil, badRequest("filters[%d]: min %v is greater than max %v", i, *f.Min, *f.Max)
			}
			cf.lo, cf.hi = *f.Min, *f.Max
		case ">=", ">", "<=", "<", "==":
			if f.Value == nil || f.Min != nil || f.Max != nil {
				return nil, nil, badRequest("filters[%d]: op %s needs value (and no min or max)", i, f.Op)
			}
			cf.v = *f.Value
		case "":
			return nil, nil, badRequest("filters[%d]: op is required (>=, >, <=, <, == or between)", i)
		default:
			return nil, nil, badRequest("filters[%d]: unknown op %q (want >=, >, <=, <, == or between)", i, f.Op)
		}
		fs = append(fs, cf)
	}
	sorts := req.Sort
	if len(sorts) == 0 {
		sorts = []screenerSort{{By: "volume", Order: "desc"}}
	}
	for i, so := range sorts {
		cs := cSort{src: so}
		switch so.Order {
		case "desc", "":
			cs.desc = true
			cs.src.Order = "desc"
		case "asc":
		default:
			return nil, nil, badRequest("sort[%d]: order %q: want asc or desc", i, so.Order)
		}
		if id, ok := strings.CutPrefix(so.By, dropletPrefix); ok {
			col, err := a.dropletColumn(ds, e, id)
			if err != nil {
				return nil, nil, badRequest("sort[%d]: %s", i, err.(*Error).Message)
			}
			cs.col = col
		} else if col, ok := scalarColumn(s, e, so.By); ok {
			cs.col = col
		} else {
			return nil, nil, badRequest("sort[%d]: unknown sort field %q (want close_price, volume, employee_count or droplet:<ratio id>)", i, so.By)
		}
		ss = append(ss, cs)
	}
	return fs, ss, nil
}

func (f *cFilter) pass(s *engine.Screener, r int32) bool {
	if f.members != nil {
		return f.members[s.Assets[r]]
	}
	if f.sectors != nil {
		for l := range s.SectorID {
			if id := s.SectorID[l][r]; id != "" && f.sectors[id] {
				return true
			}
		}
		return false
	}
	n := f.col.at(s, r)
	if !n.Valid() {
		return false
	}
	v := float64(n)
	switch f.op {
	case opBetween:
		return v >= f.lo && v <= f.hi
	case opGE:
		return v >= f.v
	case opGT:
		return v > f.v
	case opLE:
		return v <= f.v
	case opLT:
		return v < f.v
	}
	return v == f.v
}

// screenerScratch is what a call keeps for its screener requests: the
// compiled request and what every row repeats of it. Emptied when the
// request ends (it refers to the request's body and the Dataset).
type screenerScratch struct {
	filters []cFilter
	sorts   []cSort
	heads   []byte
}

// screener serves POST /screener.
func (a *API) screener(c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
	if c.s.scr == nil {
		c.s.scr = &screenerScratch{}
	}
	x := c.s.scr
	out, err := a.screenerAnswer(c, x, dst, r)
	clear(x.filters)
	clear(x.sorts)
	x.filters, x.sorts, x.heads = x.filters[:0], x.sorts[:0], x.heads[:0]
	return out, err
}

func (a *API) screenerAnswer(c *call, x *screenerScratch, dst []byte, r *http.Request) ([]byte, error) {
	if q := c.query(r); q.err() != nil {
		return nil, q.err()
	}
	var req screenerRequest
	if err := parseScreenerRequest(c.body, &req); err != nil {
		return nil, err
	}
	limit, offset := defaultScreenerLimit, 0
	if req.Limit != nil {
		limit = *req.Limit
	}
	if req.Offset != nil {
		offset = *req.Offset
	}
	primary := true
	if req.PrimaryOnly != nil {
		primary = *req.PrimaryOnly
	}
	if req.AsOf != "" {
		if err := eodHistory(c, []string{"as_of"}); err != nil {
			return nil, err
		}
	}
	var e *screenEnc
	if req.AsOf == "" {
		e = a.screenView(c)
	} else {
		t, err := checkAsOf(req.AsOf, c.ds)
		if err != nil {
			return nil, badRequest("request body: field \"as_of\": %q: %s", req.AsOf, err)
		}
		e = a.info(c.ds).screenAt(c.ds.Screener().At(t, dropletIndexes(c.ds, &req)))
	}
	fs, ss, err := a.compileScreener(c.ds, e, &req, x.filters[:0], x.sorts[:0])
	x.filters, x.sorts = fs, ss
	if err != nil {
		return nil, err
	}
	s := e.s
	rows := c.s.rows[:0]
	for _, ri := range e.p.ByVolume {
		if primary && !e.p.Primary[ri] {
			continue
		}
		ok := true
		for i := range fs {
			if !fs[i].pass(s, ri) {
				ok = false
				break
			}
		}
		if ok {
			rows = append(rows, ri)
		}
	}
	c.s.rows = rows
	c.out.setTotal([]string{strconv.Itoa(len(rows))}) // every result, for paging with offset
	end := min(offset+max(limit, 0), len(rows))
	if len(ss) != 1 || ss[0].src.By != "volume" || !ss[0].desc { // else ByVolume order already
		rows = c.sortRows(s, e, ss, rows, end)
	}
	rows = rows[min(offset, end):end]

	// What every row repeats of the request, encoded once.
	hb := x.heads[:0]
	for i := range ss {
		start := len(hb)
		hb = appendSortSpec(hb, &ss[i])
		hb = append(hb, `,"value":`...)
		ss[i].head = [2]int32{int32(start), int32(len(hb))}
	}
	for i := range fs {
		start := len(hb)
		hb = appendFilterHead(hb, &fs[i])
		fs[i].head = [2]int32{int32(start), int32(len(hb))}
	}
	x.heads = hb

	dst = append(dst, `{"metadata":{"sort":[`...)
	for i := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendSortSpec(dst, &ss[i])
		dst = append(dst, '}')
	}
	dst = append(dst, `],"limit":`...)
	dst = appendInt(dst, int64(limit))
	if req.Offset != nil { // mirrored when sent (addition)
		dst = append(dst, `,"offset":`...)
		dst = appendInt(dst, int64(offset))
	}
	dst = append(dst, `,"primaryOnly":`...)
	dst = appendBool(dst, primary)
	dst = append(dst, `,"count":`...)
	dst = appendInt(dst, int64(len(rows)))
	dst = append(dst, `},"data":[`...)
	for i, ri := range rows {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendScreenerRow(dst, s, e, hb, ri, offset+i+1, fs, ss)
	}
	return append(dst, "]}"...), nil
}

// sortKey is a row and its sort value, made ready to compare: v ascending
// (negated for a descending sort, +Inf when missing: missing values last),
// then t, the row's ticker rank.
type sortKey struct {
	v   float64
	t   int32
	row int32
}

func cmpSortKey(x, y sortKey) int {
	switch {
	case x.v < y.v:
		return -1
	case x.v > y.v:
		return 1
	}
	return int(x.t - y.t)
}

// sortRows orders rows by ss, then ticker, and returns at least the first
// limit of them in that order (a partial sort when limit is shorter).
func (c *call) sortRows(s *engine.Screener, e *screenEnc, ss []cSort, rows []int32, limit int) []int32 {
	if len(ss) != 1 {
		cmpRows := func(x, y int32) int {
			for i := range ss {
				if c := cmpNum(ss[i].col.at(s, x), ss[i].col.at(s, y), ss[i].desc); c != 0 {
					return c
				}
			}
			return int(e.tickerRank[x] - e.tickerRank[y])
		}
		return topK(rows, limit, cmpRows)
	}
	col, desc := &ss[0].col, ss[0].desc
	keys := c.s.keys[:0]
	for _, ri := range rows {
		n := col.at(s, ri)
		v := math.Inf(1)
		if n.Valid() {
			v = float64(n)
			if desc {
				v = -v
			}
		}
		keys = append(keys, sortKey{v: v, t: e.tickerRank[ri], row: ri})
	}
	c.s.keys = keys
	keys = topK(keys, limit, cmpSortKey)
	rows = rows[:len(keys)]
	for i := range keys {
		rows[i] = keys[i].row
	}
	return rows
}

// topK returns the k first elements of xs in cmp order, sorted, in xs's
// first k places (all of xs sorted when k >= len(xs)): a bounded heap of
// the k best so far, O(n log k), instead of sorting the n.
func topK[T any](xs []T, k int, cmp func(a, b T) int) []T {
	if k >= len(xs) {
		slices.SortFunc(xs, cmp)
		return xs
	}
	if k <= 0 {
		return xs[:0]
	}
	h := xs[:k]
	// h is a heap with its worst element (greatest by cmp) at the root.
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= k {
				return
			}
			if r := l + 1; r < k && cmp(h[r], h[l]) > 0 {
				l = r
			}
			if cmp(h[l], h[i]) <= 0 {
				return
			}
			h[i], h[l] = h[l], h[i]
			i = l
		}
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, x := range xs[k:] {
		if cmp(x, h[0]) < 0 {
			h[0] = x
			down(0)
		}
	}
	slices.SortFunc(h, cmp)
	return h
}

// cmpNum orders valid values (ascending, or descending when desc) before
// missing ones.
func cmpNum(a, b engine.Num, desc bool) int {
	av, bv := a.Valid(), b.Valid()
	switch {
	case av && !bv:
		return -1
	case !av && bv:
		return 1
	case !av:
		return 0
	}
	if desc {
		return cmp.Compare(b, a)
	}
	return cmp.Compare(a, b)
}

// appendSortSpec appends the opening of a sort object, {"by":...,"order":...
// (without the closing brace).
func appendSortSpec(dst []byte, so *cSort) []byte {
	dst = append(dst, `{"by":`...)
	dst = appendString(dst, so.src.By)
	dst = append(dst, `,"order":`...)
	return appendString(dst, so.src.Order)
}

// appendScreenerRow appends one screener result: its head and its
// column values encoded once per Dataset (e), the request's sort and
// filter heads from hb.
func appendScreenerRow(dst []byte, s *engine.Screener, e *screenEnc, hb []byte, r int32, rank int, fs []cFilter, ss []cSort) []byte {
	dst = append(dst, `{"rank":`...)
	dst = appendInt(dst, int64(rank))
	dst = append(dst, ',')
	dst = e.appendHead(dst, r)
	dst = append(dst, `,"sort":[`...)
	for i := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, hb[ss[i].head[0]:ss[i].head[1]]...)
		dst = ss[i].col.appendAt(dst, s, r)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"filters":[`...)
	for i := range fs {
		if i > 0 {
			dst = append(dst, ',')
		}
		f := &fs[i]
		dst = append(dst, hb[f.head[0]:f.head[1]]...)
		switch {
		case f.sectors != nil || f.members != nil: // the head is all of it
		case f.src.Type == "droplet":
			dst = f.col.appendAt(dst, s, r)
			dst = append(dst, `,"resolved_id":`...)
			// The id is a catalog id and a class suffix: neither needs
			// escaping beyond what appendString did to the id.
			dst = appendString(dst, f.col.id)
			if f.col.byCls {
				dst = append(dst[:len(dst)-1], e.suffix[r]...)
				dst = append(dst, '"')
			}
			dst = append(dst, '}')
		default:
			dst = f.col.appendAt(dst, s, r)
			dst = append(dst, '}')
		}
	}
	return append(dst, "]}"...)
}

// appendFilterHead appends what every row repeats of filter f, up to the
// row's own value: scalar filters add applied_value; droplet filters carry
// the row's ratio value in value and add resolved_id (the class-suffixed
// id of per-class ratios). A sector or index filter is all head.
func appendFilterHead(dst []byte, f *cFilter) []byte {
	src := f.src
	dst = append(dst, `{"type":`...)
	dst = appendString(dst, src.Type)
	if f.sectors != nil || f.members != nil {
		dst = append(dst, `,"in":`...)
		dst = appendStrings(dst, src.In)
		return append(dst, '}')
	}
	droplet := src.Type == "droplet"
	if droplet {
		dst = append(dst, `,"id":`...)
		dst = appendString(dst, src.ID)
	}
	dst = append(dst, `,"op":`...)
	dst = appendString(dst, src.Op)
	if src.Min != nil {
		dst = append(dst, `,"min":`...)
		dst = appendNum(dst, engine.Num(*src.Min))
		dst = append(dst, `,"max":`...)
		dst = appendNum(dst, engine.Num(*src.Max))
	}
	if droplet {
		return append(dst, `,"value":`...)
	}
	if src.Value != nil {
		dst = append(dst, `,"value":`...)
		dst = appendNum(dst, engine.Num(*src.Value))
	}
	return append(dst, `,"applied_value":`...)
}
