package engine

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestLatestQuotes(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	for _, tc := range []struct {
		ticker                     string
		date                       Date
		close, prev, varn, varnVal Num
	}{
		{"PETR4", d(4), 12.6, 12, 0.05, 0.6},
		{"SPUN3", d(4), 9, 10, -0.1, -1},
		{"HGLG11", d(4), 150, 153, 150.0/153 - 1, -3},
		{"VIIA3", d(4), 6, 6, 0, 0},
	} {
		a, _ := ds.Asset(tc.ticker)
		q := a.Latest
		if q.Date != tc.date || q.Intraday {
			t.Errorf("%s latest date %v intraday %v", tc.ticker, q.Date, q.Intraday)
		}
		checkNum(t, tc.ticker+" close", q.Close, tc.close)
		checkNum(t, tc.ticker+" prev", q.PrevClose, tc.prev)
		checkNum(t, tc.ticker+" variation", q.Variation, tc.varn)
		checkNum(t, tc.ticker+" variation_value", q.VariationValue, tc.varnVal)
	}
	// The previous close is expressed in the session's share base: the
	// split on d1 does not show as a -90% session on d2.
	p, _ := ds.Asset("PETR4")
	q := p.DailyQuote(2)
	checkNum(t, "d2 prev close", q.PrevClose, 11)
	checkNum(t, "d2 variation", q.Variation, 11.5/11.0-1)
	// No previous session: null variation, never 0.
	q = p.DailyQuote(0)
	if q.PrevClose.Valid() || q.Variation.Valid() || q.VariationValue.Valid() {
		t.Errorf("first session variation = %+v", q)
	}
	// Adjusted view of a pre-split quote.
	q = p.DailyQuote(1).Adjusted()
	checkNum(t, "adjusted d1 close", q.Close, 11)
	checkNum(t, "adjusted d1 qty", q.Quantity, 10000)
	// A zero previous close gives null.
	u := testUniverse(t)
	u.Daily[3].Close[0] = 0
	ds2 := mustBuild(t, u)
	s, _ := ds2.Asset("SPUN3")
	if s.Latest.Variation.Valid() {
		t.Error("variation with zero previous close")
	}
}

func TestQuoteAt(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	type want struct {
		date                                 Date
		intraday                             bool
		time                                 int64
		open, high, low, close, vol, qty, pc Num
	}
	for _, tc := range []struct {
		name string
		t    time.Time
		w    want
	}{
		{"first minute incomplete", at(4, 13, 0).Add(59 * time.Second),
			want{d(3), false, int64(d(3)) * 86400, 12, 12, 12, 12, 12000, 1000, 11.5}},
		{"first minute complete", at(4, 13, 1),
			want{d(4), true, at(4, 13, 0).Unix(), 12.1, 12.4, 12.0, 12.3, 1000, 80, 12}},
		{"mid session", at(4, 13, 2).Add(30 * time.Second),
			want{d(4), true, at(4, 13, 1).Unix(), 12.1, 12.5, 12.0, 12.2, 3000, 240, 12}},
		{"after last bar", at(4, 19, 0),
			want{d(4), true, at(4, 13, 2).Unix(), 12.1, 12.5, 11.9, 12.1, 3500, 280, 12}},
		{"session still open", at(4, 19, 59),
			want{d(4), true, at(4, 13, 2).Unix(), 12.1, 12.5, 11.9, 12.1, 3500, 280, 12}},
		{"session closed", at(4, 20, 0),
			want{d(4), false, int64(d(4)) * 86400, 12.6, 12.6, 12.6, 12.6, 12600, 1000, 12}},
		{"far future", at(4, 21, 0).AddDate(100, 0, 0),
			want{d(4), false, int64(d(4)) * 86400, 12.6, 12.6, 12.6, 12.6, 12600, 1000, 12}},
		{"pre-split", at(1, 12, 0),
			want{d(0), false, int64(d(0)) * 86400, 100, 100, 100, 100, 100000, 1000, Null}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := ds.QuoteAt("PETR4", tc.t)
			if err != nil {
				t.Fatal(err)
			}
			w := tc.w
			if q.Date != w.date || q.Intraday != w.intraday || q.Time != w.time {
				t.Fatalf("date %v intraday %v time %d; want %v %v %d", q.Date, q.Intraday, q.Time, w.date, w.intraday, w.time)
			}
			checkNum(t, "open", q.Open, w.open)
			checkNum(t, "high", q.High, w.high)
			checkNum(t, "low", q.Low, w.low)
			checkNum(t, "close", q.Close, w.close)
			checkNum(t, "volume", q.Volume, w.vol)
			checkNum(t, "quantity", q.Quantity, w.qty)
			checkNum(t, "prev close", q.PrevClose, w.pc)
			if w.pc.Valid() {
				checkNum(t, "variation", q.Variation, w.close/w.pc-1)
			}
		})
	}
	p, _ := ds.Asset("PETR4")
	if q := p.QuoteAt(at(0, 10, 0)); q.Valid() || q != NullQuote && q.Close.Valid() {
		t.Errorf("quote before any data = %+v", q)
	}
	if q := p.QuoteAt(time.Time{}); q.Valid() {
		t.Error("zero time has a quote")
	}
	if q := p.QuoteBefore(d(4)); q.Date != d(3) {
		t.Errorf("QuoteBefore(d4) = %v", q.Date)
	}
	if q := p.QuoteBefore(d(0)); q.Valid() {
		t.Error("QuoteBefore(d0) valid")
	}
	if _, err := ds.QuoteAt("NOPE3", at(4, 13, 0)); !errors.Is(err, ErrNotFound) {
		t.Error(err)
	}
}

func TestQuoteAtZeroAlloc(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	p, _ := ds.Asset("PETR4")
	tm := at(4, 13, 2)
	if n := testing.AllocsPerRun(100, func() { sinkQuote = p.QuoteAt(tm) }); n > 0 {
		t.Errorf("QuoteAt allocates %v", n)
	}
	buf := make([]Bar, 0, 16)
	if n := testing.AllocsPerRun(100, func() {
		lo, hi := p.DayRange(d(1), d(3))
		buf = p.AppendDaily(buf[:0], lo, hi, true)
		buf = p.AppendIntraday(buf, 0, 3, true)
		buf = Aggregate(buf, 300)
		sinkInt += p.DayIndex(d(2))
	}); n > 0 {
		t.Errorf("series reads allocate %v", n)
	}
}

func TestSeriesLookups(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	p, _ := ds.Asset("PETR4")
	for _, tc := range []struct {
		day  Date
		want int
	}{{d(-1), -1}, {d(0), 0}, {d(2), 2}, {d(4), 4}, {d(9), 4}} {
		if got := p.DayIndex(tc.day); got != tc.want {
			t.Errorf("DayIndex(%v) = %d, want %d", tc.day, got, tc.want)
		}
	}
	if lo, hi := p.DayRange(d(1), d(3)); lo != 1 || hi != 4 {
		t.Errorf("DayRange = %d,%d", lo, hi)
	}
	if lo, hi := p.DayRange(d(3), d(1)); lo != hi {
		t.Errorf("inverted DayRange = %d,%d", lo, hi)
	}
	if lo, hi := p.MinuteRange(at(4, 13, 1).Unix(), at(4, 13, 5).Unix()); lo != 1 || hi != 3 {
		t.Errorf("MinuteRange = %d,%d", lo, hi)
	}
	bars := p.AppendIntraday(nil, 0, 3, false)
	if len(bars) != 3 || bars[1].Close != 12.2 || bars[1].Date != d(4) || bars[1].Factor != 1 {
		t.Errorf("intraday bars = %+v", bars)
	}
	if got := p.AppendDaily(nil, -5, 99, false); len(got) != 5 {
		t.Errorf("clamped AppendDaily = %d rows", len(got))
	}
	if got := p.AppendDaily(nil, 3, 1, false); len(got) != 0 {
		t.Error("inverted AppendDaily")
	}
}

func TestAggregate(t *testing.T) {
	base := at(4, 13, 0).Unix()
	mk := func(off int64, o, h, l, c, v Num) Bar {
		return Bar{Time: base + off, Date: d(4), Open: o, High: h, Low: l, Close: c, Volume: v, Quantity: v, Trades: 1, Factor: 1}
	}
	bars := []Bar{
		mk(0, 10, 11, 9, 10.5, 1),
		mk(60, Null, 12, 10, Null, Null),
		mk(120, 10.5, 10.6, 8, 9, 2),
		mk(300, 9, 9.5, 8.5, 9.2, 4), // next 5-minute bucket
		mk(86400, 20, 20, 20, 20, 8), // next day
	}
	got := Aggregate(slices.Clone(bars), 300)
	if len(got) != 3 {
		t.Fatalf("%d buckets", len(got))
	}
	b := got[0]
	if b.Time != base || b.Open != 10 || b.High != 12 || b.Low != 8 || b.Close != 9 || b.Volume != 3 || b.Quantity != 3 || b.Trades != 3 {
		t.Errorf("bucket 0 = %+v", b)
	}
	if got[1].Time != base+300 || got[1].Close != 9.2 || got[2].Time != base+86400 {
		t.Errorf("buckets = %+v", got[1:])
	}
	// A bucket width that does not divide the day restarts at midnight.
	day := int64(d(4)) * 86400
	if s := bucketStart(day+86399, 7*60); s != day+86399/(7*60)*(7*60) {
		t.Errorf("bucketStart = %d", s)
	}
	if s := bucketStart(day+3600, 7*86400); s != floorDiv(day+3600, 7*86400)*7*86400 {
		t.Errorf("weekly bucketStart = %d", s)
	}
	if floorDiv(-1, 86400) != -1 || floorDiv(-86400, 86400) != -1 {
		t.Error("floorDiv")
	}
	// Width 0 and empty input are returned unchanged.
	if len(Aggregate(slices.Clone(bars), 0)) != 5 || len(Aggregate(nil, 60)) != 0 {
		t.Error("no-op Aggregate")
	}
	// Null leading open is filled by the next valid one.
	got = Aggregate([]Bar{mk(0, Null, Null, Null, Null, Null), mk(60, 3, 4, 2, 3, 1)}, 300)
	if got[0].Open != 3 || got[0].High != 4 || got[0].Low != 2 || got[0].Volume != 1 {
		t.Errorf("null-led bucket = %+v", got[0])
	}
}

func TestRankings(t *testing.T) {
	u := testUniverse(t)
	// A member without data is left out.
	u.Securities = append(u.Securities, Security{Ticker: "VALE5", CompanyID: valeID, StockType: ClassPSA, UnitFactor: Null})
	u.Indexes[0].Members = append(u.Indexes[0].Members, IndexMember{Ticker: "VALE5"})
	// A member that stopped trading after d1 (+100% then) is stale from d3
	// on: left out of the latest rankings, ranked while current.
	u.Securities = append(u.Securities, Security{Ticker: "GONE3", CompanyID: viaID, StockType: ClassCS, UnitFactor: Null})
	u.Daily = append(u.Daily, mkSeries("GONE3", []int{0, 1}, []float64{10, 20}))
	u.Indexes[0].Members = append(u.Indexes[0].Members, IndexMember{Ticker: "GONE3"})
	ds := mustBuild(t, u)
	ix, _ := ds.Index("IBOV")
	tickers := func(es []RankEntry) []string {
		var s []string
		for _, e := range es {
			s = append(s, e.Asset.Ticker)
		}
		return s
	}
	if es := ix.RankAt(at(1, 23, 0), false, nil); len(es) == 0 || es[0].Asset.Ticker != "GONE3" {
		t.Errorf("RankAt on d1 = %v, want GONE3 first", tickers(es))
	}
	var latest []RankEntry
	for _, m := range ix.Members {
		if m.Latest.Variation.Valid() {
			latest = append(latest, RankEntry{Asset: m, Quote: m.Latest})
		}
	}
	if got := tickers(ix.KeepCurrent(latest)); slices.Contains(got, "GONE3") || len(got) != 5 {
		t.Errorf("KeepCurrent = %v", got)
	}
	if got, want := tickers(ix.Highs), []string{"PETR4", "PETR3", "VALE3", "VIIA3", "SPUN3"}; !slices.Equal(got, want) {
		t.Errorf("highs = %v, want %v", got, want)
	}
	if got, want := tickers(ix.Lows), []string{"SPUN3", "PETR3", "VALE3", "VIIA3", "PETR4"}; !slices.Equal(got, want) {
		t.Errorf("lows = %v, want %v", got, want)
	}
	if ix.UpdatedAt != int64(d(4))*86400 || len(ix.Members) != 7 || ix.Members[3].Ticker != "VIIA3" {
		t.Errorf("updated %d members %d", ix.UpdatedAt, len(ix.Members))
	}
	// As of mid-session only PETR4 has intraday data (+0.83%); the others
	// show d3, where the reverse split and the spin-off leave PETR3 and
	// VALE3 flat and SPUN3 has no previous close.
	es := ix.RankAt(at(4, 13, 3), false, nil)
	if got, want := tickers(es), []string{"PETR4", "PETR3", "VALE3", "VIIA3"}; !slices.Equal(got, want) {
		t.Errorf("RankAt highs = %v", tickers(es))
	}
	for _, e := range es {
		if e.Asset.Ticker == "PETR4" && !e.Quote.Intraday {
			t.Error("PETR4 not intraday")
		}
	}
	lows := ix.RankAt(at(4, 13, 3), true, nil)
	for i := 1; i < len(lows); i++ {
		if lows[i-1].Quote.Variation > lows[i].Quote.Variation {
			t.Errorf("lows not ascending: %v", tickers(lows))
		}
	}
	if UpdatedAt(lows) != at(4, 13, 2).Unix() || UpdatedAt(nil) != 0 {
		t.Error("UpdatedAt")
	}
	buf := make([]RankEntry, 0, 16)
	if n := testing.AllocsPerRun(50, func() { buf = ix.RankAt(at(4, 13, 3), true, buf[:0]) }); n > 0 {
		t.Errorf("RankAt allocates %v", n)
	}
}

func TestScreener(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	s := ds.Screener()
	var rows []string
	for _, a := range s.Assets {
		rows = append(rows, a.Ticker)
	}
	if want := []string{"PETR3", "PETR4", "SPUN3", "VALE3", "VIIA3"}; !slices.Equal(rows, want) {
		t.Fatalf("rows = %v", rows)
	}
	if s.Len() != 5 {
		t.Fatal(s.Len())
	}
	if want := []bool{false, true, true, true, true}; !slices.Equal(s.Primary, want) {
		t.Errorf("primary = %v", s.Primary)
	}
	var order []string
	for _, r := range s.ByVolume {
		order = append(order, s.Assets[r].Ticker)
	}
	if want := []string{"VALE3", "PETR4", "PETR3", "SPUN3", "VIIA3"}; !slices.Equal(order, want) {
		t.Errorf("by volume = %v", order)
	}
	checkNum(t, "PETR4 close", s.Close[1], 12.6)
	checkNum(t, "PETR4 volume", s.Volume[1], 12600)
	checkNum(t, "PETR employees", s.Employees[1], 1000)
	checkNum(t, "VALE employees", s.Employees[3], Null)
	if s.LiquidityRank[1] != 1 || s.LiquidityRank[0] != 2 || s.Issuers[1].ID != petroID {
		t.Error("liquidity rank / issuer")
	}
	if s.SectorID[0][1] != "S1" || s.SectorID[3][1] != "S1.1.1.1" || s.SectorID[0][4] != "" {
		t.Errorf("sector ids = %v", s.SectorID)
	}
	ebitda, _ := ds.IndicatorIndex("", "EBITDA_MARGIN")
	dy, _ := ds.IndicatorIndex("", "DIVIDEND_YIELD")
	roe, _ := ds.IndicatorIndex("", "ROE")
	// TTM preferred over a later ANNUAL; the newest reference date wins
	// over a restatement of an older one filed after it (2023-06-30 re-filed
	// at at(1, 0, 0), after 2023-09-30's at(0, 0, 0)).
	checkNum(t, "PETR3 EBITDA_MARGIN", s.Ratios[ebitda][0], 0.30)
	checkNum(t, "PETR4 EBITDA_MARGIN", s.Ratios[ebitda][1], 0.30)
	if !s.RatioPublished[ebitda][1].Equal(at(0, 0, 0)) {
		t.Errorf("published = %v", s.RatioPublished[ebitda][1])
	}
	checkNum(t, "VALE3 EBITDA_MARGIN (null point)", s.Ratios[ebitda][3], Null)
	checkNum(t, "SPUN3 EBITDA_MARGIN", s.Ratios[ebitda][2], Null)
	// Class-specific indicators use the row's class.
	checkNum(t, "PETR3 DY", s.Ratios[dy][0], 0.07)
	checkNum(t, "PETR4 DY", s.Ratios[dy][1], 0.08)
	// Same publish date: the later reference date wins.
	checkNum(t, "PETR ROE", s.Ratios[roe][1], 0.2)
	if ScreenerClass(ClassFundUnit) || !ScreenerClass(ClassBDR) {
		t.Error("ScreenerClass")
	}
}

var (
	sinkQuote    Quote
	sinkInt      int
	sinkResolved Resolved
)

func TestLastSession(t *testing.T) {
	if got := mustBuild(t, testUniverse(t)).LastSession(); got != d(4) {
		t.Errorf("LastSession = %v, want %v", got, d(4))
	}
	// A later session of any non-macro asset moves it.
	u := testUniverse(t)
	for i := range u.Daily {
		if u.Daily[i].Ticker == "HGLG11" {
			u.Daily[i] = mkSeries("HGLG11", []int{0, 1, 2, 4, 6}, []float64{150, 151, 152, 153, 150})
		}
	}
	if got := mustBuild(t, u).LastSession(); got != d(6) {
		t.Errorf("LastSession = %v, want %v", got, d(6))
	}
}

func TestSharesTotal(t *testing.T) {
	if got := (SharesPoint{Common: 3, Preferred: 4, Treasury: 1}).Total(); got != 7 {
		t.Errorf("Total = %d", got)
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"PETR4", "petr", "33.000.167/0001-01", "VVAR3", "", " ", "9512", "\xff\xfe", "HGLG11"} {
		f.Add(s)
	}
	ds := mustBuild(f, testUniverse(f))
	f.Fuzz(func(t *testing.T, id string) {
		r, err := ds.Resolve(id)
		if err != nil {
			if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrInvalid) {
				t.Fatalf("Resolve(%q) error %v is neither not-found nor invalid", id, err)
			}
			return
		}
		switch r.Kind {
		case ByTicker:
			if r.Asset == nil || r.Security != r.Asset.Security || r.Class != r.Security.StockType {
				t.Fatalf("Resolve(%q) = %+v", id, r)
			}
		case BySymbol, ByCompanyID:
			if r.Issuer == nil || r.Company != r.Issuer.Company || r.Asset != nil {
				t.Fatalf("Resolve(%q) = %+v", id, r)
			}
		default:
			t.Fatalf("Resolve(%q) kind %v", id, r.Kind)
		}
	})
}

func TestQuoteShortcutsMatch(t *testing.T) {
	u := testUniverse(t)
	// SPUN3 gets intraday bars on a session after its last daily bar.
	u.Intraday = append(u.Intraday, Intraday{Ticker: "SPUN3",
		Times: []int64{at(5, 13, 0).Unix(), at(5, 13, 1).Unix()}, Open: []Num{9, 9.5}, High: []Num{9, 9.5},
		Low: []Num{9, 9.5}, Close: []Num{9, 9.5}, Volume: []Num{1, 1}, Quantity: []int64{1, 1}})
	ds := mustBuild(t, u)
	ix, _ := ds.Index("IBOV")
	for tm := at(0, 0, 0); tm.Before(at(7, 0, 0)); tm = tm.Add(7 * time.Minute) {
		for i := range ds.Assets() {
			a := &ds.Assets()[i]
			if got, want := a.QuoteAt(tm), a.quoteAt(tm.Unix()); !quoteEq(got, want) {
				t.Fatalf("%s at %v: QuoteAt %+v != %+v", a.Ticker, tm, got, want)
			}
		}
		for _, lows := range []bool{false, true} {
			got := ix.RankAt(tm, lows, nil)
			var want []RankEntry
			for _, m := range ix.Members {
				if q := m.quoteAt(tm.Unix()); q.Variation.Valid() {
					want = append(want, RankEntry{Asset: m, Quote: q})
				}
			}
			if lows {
				slices.SortFunc(want, cmpLow)
			} else {
				slices.SortFunc(want, cmpHigh)
			}
			if !slices.EqualFunc(got, want, func(x, y RankEntry) bool { return x.Asset == y.Asset && quoteEq(x.Quote, y.Quote) }) {
				t.Fatalf("RankAt(%v, %v) differs", tm, lows)
			}
		}
	}
	s, _ := ds.Asset("SPUN3")
	if !s.Latest.Intraday || s.Latest.Close != 9.5 || s.Latest.Date != d(5) || s.Latest.PrevClose != 9 {
		t.Errorf("SPUN3 latest = %+v", s.Latest)
	}
}

func TestBuckets(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	p, _ := ds.Asset("PETR4")
	dst := []Bar{{Time: 1}}
	dst = p.AppendIntradayBuckets(dst, 0, 3, 120, false)
	if len(dst) != 3 || dst[0].Time != 1 || dst[1].Time != at(4, 13, 0).Unix() || dst[1].Volume != 3000 || dst[2].Volume != 500 {
		t.Errorf("intraday buckets = %+v", dst)
	}
	w := p.AppendDailyBuckets(nil, 0, 5, 2*86400, true)
	// Epoch-aligned two-day buckets over d0..d4 (2024-01-02 is an even day
	// number: 19724).
	if len(w) != 3 || w[0].Close != 11 || w[0].High != 11 || w[0].Low != 10 || w[2].Close != 12.6 {
		t.Errorf("daily buckets = %+v", w)
	}
}

// quoteEq compares quotes field by field, NaN equal to NaN.
func quoteEq(x, y Quote) bool {
	return x.Time == y.Time && x.Date == y.Date && x.Intraday == y.Intraday &&
		near(x.Open, y.Open) && near(x.High, y.High) && near(x.Low, y.Low) && near(x.Close, y.Close) &&
		near(x.Volume, y.Volume) && near(x.Quantity, y.Quantity) && near(x.PrevClose, y.PrevClose) &&
		near(x.Variation, y.Variation) && near(x.VariationValue, y.VariationValue) && near(x.Factor, y.Factor)
}

// A delisted ticker (listed_to before the last session) and the tickers
// of a company whose registration is cancelled are not screener rows:
// the screener is of the last session.
func TestScreenerLeavesDelisted(t *testing.T) {
	u := testUniverse(t)
	for i := range u.Securities {
		if u.Securities[i].Ticker == "SPUN3" {
			u.Securities[i].ListedFrom, u.Securities[i].ListedTo = mustDate(t, "1999-01-04"), mustDate(t, "2000-01-03")
		}
	}
	for i := range u.Companies {
		if u.Companies[i].ID == viaID {
			u.Companies[i].Status = "CANCELLED"
		}
	}
	ds := mustBuild(t, u)
	var rows []string
	for _, a := range ds.Screener().Assets {
		rows = append(rows, a.Ticker)
	}
	if want := []string{"PETR3", "PETR4", "VALE3"}; !slices.Equal(rows, want) {
		t.Errorf("rows = %v, want %v", rows, want)
	}
}

// A portfolio member the snapshot has no security for (no quote yet) is
// kept, with a nil asset, and left out of the rankings.
func TestIndexMemberWithoutSecurity(t *testing.T) {
	u := testUniverse(t)
	u.Indexes[0].Members = append(u.Indexes[0].Members, IndexMember{Ticker: "NEWL3", Weight: 0.01, TheoreticalQty: 1000})
	ds := mustBuild(t, u)
	ix, ok := ds.Index(u.Indexes[0].Symbol)
	if !ok {
		t.Fatal("index not found")
	}
	n := len(ix.Members)
	if n != len(ix.Index.Members) || ix.Members[n-1] != nil || ix.Index.Members[n-1].Ticker != "NEWL3" {
		t.Fatalf("members %d, last %v", n, ix.Members[n-1])
	}
	for _, e := range ix.Highs {
		if e.Asset == nil {
			t.Error("a ranking entry without an asset")
		}
	}
	if len(ix.Highs) == 0 {
		t.Error("the quoted members are no longer ranked")
	}
}
