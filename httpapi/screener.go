package httpapi

import (
	"cmp"
	"net/http"
	"slices"
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
	PrimaryOnly *bool
	Filters     []screenerFilter
	Sort        []screenerSort
}

// screenerFilter is one filter as sent; its kind is Type: a scalar field
// (close_price, volume, employee_count), "sector" or "droplet".
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

// compiled filter / sort.
type cFilter struct {
	src     *screenerFilter
	col     column
	sectors map[string]bool // sector filters
	lo, hi  float64         // bounds (inclusive unless strict)
	op      string
	v       float64
}

type cSort struct {
	src  screenerSort
	col  column
	desc bool
}

// scalarColumn returns the column of a scalar field or sort key.
func scalarColumn(s *engine.Screener, name string) ([]engine.Num, bool) {
	switch name {
	case "close_price", "current_price":
		return s.Close, true
	case "volume":
		return s.Volume, true
	case "employee_count":
		return s.Employees, true
	}
	return nil, false
}

// dropletColumn resolves a ratio id (fundamental or valuation, with or
// without class suffix).
func (a *API) dropletColumn(ds *engine.Dataset, id string) (column, error) {
	base, class := engine.SplitClassSuffix(strings.ToUpper(strings.TrimSpace(id)))
	k, ok := ds.IndicatorIndex("", base) // FUNDAMENTAL, then VALUATION
	s := ds.Screener()
	if !ok || k >= len(s.Ratios) {
		return column{}, badRequest("unknown ratio id %q (see /ratios/catalog)", id)
	}
	ind := &ds.Catalog()[k]
	if class != "" && !ind.ByClass {
		return column{}, badRequest("ratio %q is company-level: it takes no class suffix", base)
	}
	return column{vals: s.Ratios[k], class: class, byCls: ind.ByClass, id: ind.ID}, nil
}

func (a *API) compileScreener(ds *engine.Dataset, req *screenerRequest) ([]cFilter, []cSort, error) {
	s := ds.Screener()
	fs := make([]cFilter, 0, len(req.Filters))
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
		case "droplet":
			if f.ID == "" {
				return nil, nil, badRequest("filters[%d]: a droplet filter needs an id (a ratio id without the droplet: prefix)", i)
			}
			col, err := a.dropletColumn(ds, strings.TrimPrefix(f.ID, dropletPrefix))
			if err != nil {
				return nil, nil, badRequest("filters[%d]: %s", i, err.(*Error).Message)
			}
			cf.col = col
		default:
			vals, ok := scalarColumn(s, f.Type)
			if !ok {
				return nil, nil, badRequest("filters[%d]: unknown filter type %q (want close_price, volume, employee_count, sector or droplet)", i, f.Type)
			}
			if f.ID != "" {
				return nil, nil, badRequest("filters[%d]: id applies to droplet filters only", i)
			}
			cf.col = column{vals: vals}
		}
		if f.In != nil {
			return nil, nil, badRequest("filters[%d]: in applies to sector filters only", i)
		}
		cf.op = f.Op
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
	ss := make([]cSort, 0, len(sorts))
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
			col, err := a.dropletColumn(ds, id)
			if err != nil {
				return nil, nil, badRequest("sort[%d]: %s", i, err.(*Error).Message)
			}
			cs.col = col
		} else if vals, ok := scalarColumn(s, so.By); ok {
			cs.col = column{vals: vals}
		} else {
			return nil, nil, badRequest("sort[%d]: unknown sort field %q (want close_price, volume, employee_count or droplet:<ratio id>)", i, so.By)
		}
		ss = append(ss, cs)
	}
	return fs, ss, nil
}

func (f *cFilter) pass(s *engine.Screener, r int32) bool {
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
	case "between":
		return v >= f.lo && v <= f.hi
	case ">=":
		return v >= f.v
	case ">":
		return v > f.v
	case "<=":
		return v <= f.v
	case "<":
		return v < f.v
	}
	return v == f.v
}

// screener serves POST /screener.
func (a *API) screener(c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
	if q := c.query(r); q.err() != nil {
		return nil, q.err()
	}
	var req screenerRequest
	if err := parseScreenerRequest(c.body, &req); err != nil {
		return nil, err
	}
	limit := defaultScreenerLimit
	if req.Limit != nil {
		limit = *req.Limit
	}
	primary := true
	if req.PrimaryOnly != nil {
		primary = *req.PrimaryOnly
	}
	fs, ss, err := a.compileScreener(c.ds, &req)
	if err != nil {
		return nil, err
	}
	s := c.ds.Screener()
	rows := c.rows[:0]
	for _, ri := range s.ByVolume {
		if primary && !s.Primary[ri] {
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
	switch {
	case len(ss) == 1 && ss[0].src.By == "volume" && ss[0].desc:
		// ByVolume order already.
	case len(ss) == 1:
		// One key: sort (value, row) pairs; rows are unique tickers, so
		// ties by ticker make the order total.
		keys := c.keys[:0]
		for _, ri := range rows {
			keys = append(keys, sortKey{v: ss[0].col.at(s, ri), row: ri})
		}
		desc := ss[0].desc
		slices.SortFunc(keys, func(x, y sortKey) int {
			if c := cmpNum(x.v, y.v, desc); c != 0 {
				return c
			}
			return strings.Compare(s.Assets[x.row].Ticker, s.Assets[y.row].Ticker)
		})
		for i := range keys {
			rows[i] = keys[i].row
		}
		c.keys = keys
	default:
		slices.SortFunc(rows, func(x, y int32) int {
			for i := range ss {
				if c := cmpNum(ss[i].col.at(s, x), ss[i].col.at(s, y), ss[i].desc); c != 0 {
					return c
				}
			}
			return strings.Compare(s.Assets[x].Ticker, s.Assets[y].Ticker)
		})
	}
	c.rows = rows
	rows = rows[:min(limit, len(rows))]

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
	dst = append(dst, `,"primaryOnly":`...)
	dst = appendBool(dst, primary)
	dst = append(dst, `,"count":`...)
	dst = appendInt(dst, int64(len(rows)))
	dst = append(dst, `},"data":[`...)
	for i, ri := range rows {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendScreenerRow(dst, s, ri, i+1, fs, ss)
	}
	return append(dst, "]}"...), nil
}

// sortKey is a row and its sort value.
type sortKey struct {
	v   engine.Num
	row int32
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

// appendScreenerRow appends one screener result.
func appendScreenerRow(dst []byte, s *engine.Screener, r int32, rank int, fs []cFilter, ss []cSort) []byte {
	as, is := s.Assets[r], s.Issuers[r]
	dst = append(dst, `{"rank":`...)
	dst = appendInt(dst, int64(rank))
	dst = append(dst, `,"ticker":`...)
	dst = appendString(dst, as.Ticker)
	dst = append(dst, `,"trading_name":`...)
	dst = appendString(dst, is.TradingName)
	dst = append(dst, `,"current_price":`...)
	dst = appendNum(dst, s.Close[r])
	dst = append(dst, `,"sector_id":`...)
	if sec := is.Sector[0]; sec != nil {
		dst = appendString(dst, sec.ID)
		dst = append(dst, `,"sector_name":`...)
		dst = appendString(dst, sec.Name)
	} else {
		dst = append(dst, `null,"sector_name":null`...)
	}
	dst = append(dst, `,"sort":[`...)
	for i := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendSortSpec(dst, &ss[i])
		dst = append(dst, `,"value":`...)
		dst = appendNum(dst, ss[i].col.at(s, r))
		dst = append(dst, '}')
	}
	dst = append(dst, `],"filters":[`...)
	for i := range fs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendAppliedFilter(dst, s, r, &fs[i])
	}
	return append(dst, "]}"...)
}

// appendAppliedFilter repeats a filter for one row: scalar filters add
// applied_value; droplet filters carry the row's ratio value in value and
// add resolved_id (the class-suffixed id of per-class ratios).
func appendAppliedFilter(dst []byte, s *engine.Screener, r int32, f *cFilter) []byte {
	src := f.src
	dst = append(dst, `{"type":`...)
	dst = appendString(dst, src.Type)
	if f.sectors != nil {
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
	v := f.col.at(s, r)
	if droplet {
		dst = append(dst, `,"value":`...)
		dst = appendNum(dst, v)
		dst = append(dst, `,"resolved_id":`...)
		id := f.col.id
		if f.col.byCls {
			id += engine.ClassSuffix(s.Assets[r].StockType)
		}
		dst = appendString(dst, id)
		return append(dst, '}')
	}
	if src.Value != nil {
		dst = append(dst, `,"value":`...)
		dst = appendNum(dst, engine.Num(*src.Value))
	}
	dst = append(dst, `,"applied_value":`...)
	dst = appendNum(dst, v)
	return append(dst, '}')
}
