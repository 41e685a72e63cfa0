package ratios

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/pregao/pregao/engine"
)

// forever is later than any publication: "as of now".
var forever = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// period is one filing period of a company (an ITR quarter or a DFP year)
// with its publication states.
type period struct {
	ref    engine.Date
	mi     int32 // year*12 + month-1 of ref
	annual bool
	states []state // by t ascending, t distinct
}

// state is a period's data as it stood after the publications at t.
type state struct {
	t, ret time.Time // newest publish date; retrieval of the reports published at t
	v      vals
}

// at returns the last state published at or before T, or nil.
func (p *period) at(T time.Time) *state {
	i, _ := slices.BinarySearchFunc(p.states, T, func(s state, T time.Time) int {
		if s.t.After(T) {
			return 1
		}
		return -1
	})
	if i == 0 {
		return nil
	}
	return &p.states[i-1]
}

// usage records the inputs a computation used: the newest publication and,
// when collecting, the periods touched.
type usage struct {
	pub, ret time.Time
	any      bool
	collect  bool
	periods  []*period
}

func (u *usage) reset(collect bool) {
	u.pub, u.ret, u.any, u.collect = time.Time{}, time.Time{}, false, collect
	u.periods = u.periods[:0]
}

func (u *usage) add(p *period, s *state) {
	if u.collect && !slices.Contains(u.periods, p) {
		u.periods = append(u.periods, p)
	}
	if s == nil {
		return
	}
	if !u.any || s.t.After(u.pub) || (s.t.Equal(u.pub) && s.ret.After(u.ret)) {
		u.pub, u.ret, u.any = s.t, s.ret, true
	}
}

// merge folds o into u (publication only).
func (u *usage) merge(o *usage) {
	if o.any && (!u.any || o.pub.After(u.pub) || (o.pub.Equal(u.pub) && o.ret.After(u.ret))) {
		u.pub, u.ret, u.any = o.pub, o.ret, true
	}
}

// timeline is the filing history of one company.
type timeline struct {
	itr, dfp map[int32]*period
	mis      []int32 // every period month, ascending
	fyEnd    int32   // fiscal year end month, 0..11
}

func monthIndex(d engine.Date) int32 {
	y, m, _ := d.Time().Date()
	return int32(y)*12 + int32(m) - 1
}

// Period lengths a flow statement's start and end dates can span
// (engine.Report.Span).
const (
	spanNone    = engine.SpanNone
	spanQuarter = engine.SpanQuarter
	spanYear    = engine.SpanYear
	spanOther   = engine.SpanOther
)

// span returns the months r's flows cover (engine.Report.Span).
func span(r *engine.Report) int { return r.Span() }

// buildTimeline groups a company's reports into periods and publication
// states. Only the CONSOLIDATED reports are used when there is any. The
// period comes from the flow statements' start and end dates, not from
// the form: an ITR's flows are its three-month quarter (its year-to-date
// statements are left out); a DFP covering twelve months is a fiscal year,
// one covering three months (a company changing its fiscal year files
// one) is that quarter, and one of any other length is left out with its
// balance sheets: a period that is not a year is never annual, and TTM
// only adds periods that make twelve months.
func buildTimeline(reports []*engine.Report) (*timeline, error) {
	consolidated := false
	for _, r := range reports {
		if r.Aggregation.String() == engine.AggConsolidated {
			consolidated = true
			break
		}
	}
	// The period of each DFP month, from its flow statements.
	dfpSpan := map[int32]int{}
	for _, r := range reports {
		if consolidated != (r.Aggregation.String() == engine.AggConsolidated) || r.Form.String() != "DFP" || !r.ReferenceDate.Valid() {
			continue
		}
		mi := monthIndex(r.ReferenceDate)
		switch sp := span(r); {
		case sp == spanNone:
		case dfpSpan[mi] == spanNone || dfpSpan[mi] == sp:
			dfpSpan[mi] = sp
		default:
			dfpSpan[mi] = spanOther // flows of two lengths: neither
		}
	}
	tl := &timeline{itr: map[int32]*period{}, dfp: map[int32]*period{}, fyEnd: 11}
	byPeriod := map[*period][]*engine.Report{}
	for _, r := range reports {
		if consolidated != (r.Aggregation.String() == engine.AggConsolidated) {
			continue
		}
		ref := r.ReferenceDate
		if !ref.Valid() {
			ref = r.EndDate
		}
		if !ref.Valid() {
			return nil, fmt.Errorf("report of company %q (%s %s): no reference date", r.CompanyID, r.Form, r.Statement)
		}
		var m map[int32]*period
		annual := false
		switch r.Form {
		case engine.LabelDFP:
			switch dfpSpan[monthIndex(ref)] {
			case spanNone, spanYear:
				m, annual = tl.dfp, true
			case spanQuarter:
				m = tl.itr
			default:
				continue
			}
		case engine.LabelITR:
			if sp := span(r); sp != spanNone && sp != spanQuarter {
				continue // the year to date: the quarter is its own statement
			}
			m = tl.itr
		default:
			return nil, fmt.Errorf("report of company %q (%s, %s): form %q is neither DFP nor ITR", r.CompanyID, r.Statement, ref, r.Form)
		}
		if extractors[r.Statement.String()] == nil {
			continue
		}
		mi := monthIndex(ref)
		p := m[mi]
		if p == nil {
			p = &period{ref: ref, mi: mi, annual: annual}
			m[mi] = p
		}
		if ref > p.ref {
			p.ref = ref
		}
		byPeriod[p] = append(byPeriod[p], r)
	}
	latestDFP := int32(-1)
	for mi := range tl.dfp {
		latestDFP = max(latestDFP, mi)
	}
	if latestDFP >= 0 {
		tl.fyEnd = latestDFP % 12
	}
	for _, m := range []map[int32]*period{tl.itr, tl.dfp} {
		for mi, p := range m {
			p.build(byPeriod[p])
			tl.mis = append(tl.mis, mi)
		}
	}
	slices.Sort(tl.mis)
	tl.mis = slices.Compact(tl.mis)
	return tl, nil
}

// build computes the publication states of p from its reports.
func (p *period) build(rs []*engine.Report) {
	slices.SortFunc(rs, func(a, b *engine.Report) int {
		return cmp.Or(a.PublishDate.Compare(b.PublishDate), cmp.Compare(a.Version, b.Version),
			a.Statement.Compare(b.Statement), a.RetrievalDate.Compare(b.RetrievalDate))
	})
	raw := nanVals
	for i := 0; i < len(rs); {
		j := i
		var ret time.Time
		for ; j < len(rs) && rs[j].PublishDate.Equal(rs[i].PublishDate); j++ {
			extractors[rs[j].Statement.String()].apply(rs[j], &raw)
			if rs[j].RetrievalDate.After(engine.StampOf(ret)) {
				ret = rs[j].RetrievalDate.Time()
			}
		}
		v := raw
		if v[itDA] != v[itDA] { // NaN: no DVA line, use the DFC add-backs
			v[itDA] = v[itDAFallback]
		}
		p.states = append(p.states, state{t: rs[i].PublishDate.Time(), ret: ret, v: v})
		i = j
	}
}

// state of p as of T, recorded in u.
func (tl *timeline) at(p *period, T time.Time, u *usage) *state {
	s := p.at(T)
	u.add(p, s)
	return s
}

// quarter returns the flows of the three-month quarter ending in month mi.
func (tl *timeline) quarter(mi int32, T time.Time, u *usage) vals {
	if p := tl.itr[mi]; p != nil {
		if s := tl.at(p, T, u); s != nil {
			return s.v
		}
		return nanVals
	}
	p := tl.dfp[mi]
	if p == nil {
		return nanVals
	}
	s := tl.at(p, T, u)
	if s == nil {
		return nanVals
	}
	out := s.v
	for k := int32(1); k <= 3; k++ {
		q := tl.itr[mi-3*k]
		if q == nil {
			return nanVals
		}
		qs := tl.at(q, T, u)
		if qs == nil {
			return nanVals
		}
		for i := 0; i < nFlows; i++ {
			out[i] -= qs.v[i]
		}
	}
	return out
}

func (tl *timeline) annualFlows(mi int32, T time.Time, u *usage) (vals, bool) {
	p := tl.dfp[mi]
	if p == nil {
		return nanVals, false
	}
	if s := tl.at(p, T, u); s != nil {
		return s.v, true
	}
	return nanVals, true
}

func (tl *timeline) sumQuarters(from, to int32, T time.Time, u *usage) vals {
	var out vals
	for q := from; q <= to; q += 3 {
		v := tl.quarter(q, T, u)
		for i := 0; i < nFlows; i++ {
			out[i] += v[i]
		}
	}
	return out
}

// flows returns the flows of frequency f for the period ending in month mi
// (only the first nFlows items are meaningful).
func (tl *timeline) flows(mi int32, f string, T time.Time, u *usage) vals {
	switch f {
	case engine.FreqQuarterly:
		return tl.quarter(mi, T, u)
	case engine.FreqAnnual:
		v, _ := tl.annualFlows(mi, T, u)
		return v
	case engine.FreqTTM:
		if v, ok := tl.annualFlows(mi, T, u); ok {
			return v
		}
		return tl.sumQuarters(mi-9, mi, T, u)
	case engine.FreqYTD:
		if v, ok := tl.annualFlows(mi, T, u); ok {
			return v
		}
		fe := mi + ((tl.fyEnd-mi%12)%12+12)%12
		if (fe-mi)%3 != 0 {
			return nanVals
		}
		return tl.sumQuarters(fe-9, mi, T, u)
	}
	return nanVals
}

// primary is the period that defines the point at (mi, f): its balance
// sheet and reference date.
func (tl *timeline) primary(mi int32, f string) *period {
	if f == engine.FreqAnnual {
		return tl.dfp[mi]
	}
	if p := tl.itr[mi]; p != nil {
		return p
	}
	return tl.dfp[mi]
}

// current returns flows of f and balances at mi as of T.
func (tl *timeline) current(mi int32, f string, T time.Time, u *usage) vals {
	v := tl.flows(mi, f, T, u)
	for i := nFlows; i < nItems; i++ {
		v[i] = nanVals[i]
	}
	if p := tl.primary(mi, f); p != nil {
		if s := tl.at(p, T, u); s != nil {
			copy(v[nFlows:], s.v[nFlows:])
		}
	}
	return v
}

// times appends to dst the distinct publication times of ps at or after
// from, ascending.
func times(dst []time.Time, ps []*period, from time.Time) []time.Time {
	dst = dst[:0]
	for _, p := range ps {
		for _, s := range p.states {
			if !s.t.Before(from) {
				dst = append(dst, s.t)
			}
		}
	}
	slices.SortFunc(dst, time.Time.Compare)
	return slices.CompactFunc(dst, time.Time.Equal)
}
