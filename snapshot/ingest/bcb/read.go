package bcb

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// Input is one file to read: an SGS answer of one series of the mapping
// (Series, its ticker) or, Series empty, a PTAX closing-rates file.
type Input struct {
	Path   string
	Series string
}

var (
	reSGSPath = regexp.MustCompile(`bcdata\.sgs\.([0-9]+)`)
	reClosing = regexp.MustCompile(`^[0-9]{8}\.csv$`)
)

// Classify returns the Input of v: "SERIES=path" or "CODE=path" (SELIC=,
// IPCA=, CDI=, 432=...) names an SGS answer's series; otherwise a path
// holding "bcdata.sgs.CODE" (the layout pregao fetch writes:
// dados/serie/bcdata.sgs.432/dados/2020-2029.json) is an answer of that
// series and a file named YYYYMMDD.csv (compressed or not) a closing-rates
// file. Anything else is an error naming v.
func Classify(v string) (Input, error) {
	if i := strings.IndexByte(v, '='); i > 0 && !strings.ContainsAny(v[:i], `/\.`) {
		s, ok := SGSSeries(v[:i])
		if !ok {
			return Input{}, fmt.Errorf("%s: %q is no series of the mapping (want %s or their SGS codes)", v, v[:i], mappedTickers())
		}
		return Input{Path: v[i+1:], Series: s.Ticker}, nil
	}
	if m := reSGSPath.FindStringSubmatch(filepath.ToSlash(v)); m != nil {
		s, ok := SGSSeries(m[1])
		if !ok {
			return Input{}, fmt.Errorf("%s: SGS series %s is not one Pregão imports (%s)", v, m[1], mappedCodes())
		}
		return Input{Path: v, Series: s.Ticker}, nil
	}
	if reClosing.MatchString(strings.ToLower(datafile.BaseName(v))) {
		return Input{Path: v}, nil
	}
	return Input{}, fmt.Errorf("%s: not a Banco Central file Pregão knows: name an SGS answer SERIES=path (%s), or keep the path pregao fetch writes (.../bcdata.sgs.CODE/...; closing rates .../YYYYMMDD.csv)", v, mappedTickers())
}

func mappedTickers() string {
	var s []string
	for _, m := range Mapping {
		s = append(s, m.Ticker)
	}
	return strings.Join(s, ", ")
}

func mappedCodes() string {
	var s []string
	for _, m := range Mapping {
		s = append(s, strconv.Itoa(m.Code)+" "+m.Ticker)
	}
	return strings.Join(s, ", ")
}

// Options tell Read how to date and filter.
type Options struct {
	// AsOf is the snapshot's day: points published after it (Series.Known)
	// are left out and counted. NoDate: none is.
	AsOf engine.Date
	// Lenient skips and counts malformed records instead of failing.
	Lenient bool
}

// Stats counts what Read read, kept and left out.
type Stats struct {
	SGSFiles, ClosingFiles int
	// Points counts the points kept, by ticker.
	Points map[string]int
	// Empty counts records without a value; Malformed those skipped by a
	// lenient read.
	Empty, Malformed int
	// Later counts points published after the as-of day (dated after it,
	// or not yet released then: Series.Known).
	Later int
	// NotBusinessDay counts the points of weekends and holidays left out
	// of series that keep business days only (SELIC).
	NotBusinessDay int
	// Revised counts dates given again with another value (the later
	// record or input kept); Repeated those given again alike.
	Revised, Repeated int
}

// Result is what Read returns: one MACRO security and one daily series
// per ticker with points, sorted by ticker, and the counts.
type Result struct {
	Securities []engine.Security
	Series     []engine.Series
	Stats      Stats
}

// Read reads inputs in order and builds the macro series (see the package
// doc for the rules). An unreadable or malformed file (lenient: only one
// that holds no series at all) is an error naming it. The Result is the
// caller's.
func Read(inputs []Input, opt Options) (*Result, error) {
	res := &Result{Stats: Stats{Points: map[string]int{}}}
	st := &res.Stats
	vals := map[string]map[engine.Date]float64{}
	series := map[string]Series{}
	put := func(s Series, d engine.Date, v float64) {
		m := vals[s.Ticker]
		if m == nil {
			m = map[engine.Date]float64{}
			vals[s.Ticker], series[s.Ticker] = m, s
		}
		if old, ok := m[d]; ok {
			if old == v {
				st.Repeated++
			} else {
				st.Revised++
			}
		}
		m[d] = v
	}
	for _, in := range inputs {
		rc, err := datafile.Open(in.Path)
		if err != nil {
			return nil, err
		}
		if in.Series != "" {
			s, ok := SGSSeries(in.Series)
			if !ok {
				rc.Close()
				return nil, fmt.Errorf("%s: %q is no series of the mapping (%s)", in.Path, in.Series, mappedTickers())
			}
			f, err := ReadSGS(rc, in.Path, opt.Lenient)
			rc.Close()
			if err != nil {
				return nil, err
			}
			st.SGSFiles++
			st.Empty += f.Empty
			st.Malformed += f.Malformed
			for _, p := range f.Points {
				put(s, p.Date, p.Value)
			}
			continue
		}
		f, err := ReadClosing(rc, in.Path, opt.Lenient)
		rc.Close()
		if err != nil {
			return nil, err
		}
		st.ClosingFiles++
		st.Malformed += f.Malformed
		for _, r := range f.Rates {
			put(PTAXSeries(r.Currency), r.Date, r.Sell)
		}
	}
	tickers := make([]string, 0, len(vals))
	for t := range vals {
		tickers = append(tickers, t)
	}
	sort.Strings(tickers)
	for _, t := range tickers {
		s := series[t]
		dates := make([]engine.Date, 0, len(vals[t]))
		for d := range vals[t] {
			if s.BusinessDays && !BusinessDay(d) {
				st.NotBusinessDay++
				continue
			}
			if opt.AsOf.Valid() && s.Known(d) > opt.AsOf {
				st.Later++
				continue
			}
			dates = append(dates, d)
		}
		if len(dates) == 0 {
			continue
		}
		sort.Slice(dates, func(i, j int) bool { return dates[i] < dates[j] })
		n := len(dates)
		ser := engine.Series{Ticker: t, Dates: dates, Open: make([]engine.Num, n), High: make([]engine.Num, n),
			Low: make([]engine.Num, n), Close: make([]engine.Num, n), Volume: make([]engine.Num, n),
			Quantity: make([]int64, n), Trades: make([]int64, n)}
		for i, d := range dates {
			ser.Open[i], ser.High[i], ser.Low[i], ser.Volume[i] = engine.Null, engine.Null, engine.Null, engine.Null
			ser.Close[i] = engine.Num(vals[t][d])
		}
		res.Series = append(res.Series, ser)
		res.Securities = append(res.Securities, engine.Security{Ticker: t, StockType: engine.ClassMacro, Currency: "BRL",
			UnitFactor: engine.Null, ListedFrom: dates[0], ListedTo: engine.NoDate})
		st.Points[t] = n
	}
	return res, nil
}
