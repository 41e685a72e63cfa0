package demo

import (
	"math"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/negocios"
)

var (
	sessOnce sync.Once
	sessU    *engine.Universe
	sessS    *Session
)

// smallSession returns the small universe (seed 7) and its last session,
// from GenerateSession; tests must not modify them.
func smallSession(tb testing.TB) (*engine.Universe, *Session) {
	tb.Helper()
	sessOnce.Do(func() { sessU, sessS = GenerateSession(7, smallSize, nil) })
	return sessU, sessS
}

// aggregate applies the rows of s to a fresh Aggregator in batches of
// batch rows and returns it.
func aggregate(tb testing.TB, s *Session, batch int) *negocios.Aggregator {
	tb.Helper()
	a := negocios.NewAggregator(s.Day, negocios.Config{})
	rows := make([]negocios.Trade, 0, min(batch, s.Rows()))
	err := s.Each(func(t *negocios.Trade) error {
		rows = append(rows, *t)
		if len(rows) == batch {
			a.Apply(rows)
			rows = rows[:0]
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	a.Apply(rows)
	return a
}

// checkSession compares the aggregation of s's rows with u's last
// session, bar for bar, bit for bit: the 1-minute bars of that day and the
// daily bar of every ticker that trades on it, and no other ticker.
func checkSession(tb testing.TB, u *engine.Universe, s *Session, a *negocios.Aggregator) {
	tb.Helper()
	if st := a.Stats(); st.Refused() != 0 || st.UnknownCancels != 0 || st.Duplicates != 0 || st.Cancels == 0 || st.Excluded == 0 {
		tb.Errorf("stats %+v: want cancellations and after-market trades, nothing refused", st)
	}
	if got := a.Tickers(); !slices.Equal(got, s.Tickers()) {
		tb.Fatalf("aggregated tickers %v, session's %v", got, s.Tickers())
	}
	daily := map[string]*engine.Series{}
	for i := range u.Daily {
		x := &u.Daily[i]
		if x.Len() > 0 && x.Dates[x.Len()-1] == s.Day && x.Volume[x.Len()-1].Valid() {
			daily[x.Ticker] = x
		}
	}
	if len(daily) != len(s.Tickers()) {
		tb.Errorf("%d tickers have a daily bar on %s, %d trade", len(daily), s.Day, len(s.Tickers()))
	}
	same := func(a, b engine.Num) bool { return math.Float64bits(float64(a)) == math.Float64bits(float64(b)) }
	intraday := map[string]*engine.Intraday{}
	for i := range u.Intraday {
		intraday[u.Intraday[i].Ticker] = &u.Intraday[i]
	}
	cut := int64(s.Day) * 86400
	for _, tk := range s.Tickers() {
		x := daily[tk]
		if x == nil {
			tb.Errorf("%s trades on %s but has no daily bar then", tk, s.Day)
			continue
		}
		d, ok := a.Daily(tk)
		if !ok {
			tb.Errorf("%s: no aggregated daily bar", tk)
			continue
		}
		j := x.Len() - 1
		b := d.Bar()
		if !same(b.Open, x.Open[j]) || !same(b.High, x.High[j]) || !same(b.Low, x.Low[j]) || !same(b.Close, x.Close[j]) ||
			!same(b.Volume, x.Volume[j]) || b.Quantity != engine.Num(x.Quantity[j]) || b.Trades != x.Trades[j] {
			tb.Errorf("%s: aggregated daily %v/%v/%v/%v vol %v qty %v trades %d; demo %v/%v/%v/%v vol %v qty %d trades %d", tk,
				b.Open, b.High, b.Low, b.Close, b.Volume, b.Quantity, b.Trades,
				x.Open[j], x.High[j], x.Low[j], x.Close[j], x.Volume[j], x.Quantity[j], x.Trades[j])
		}
		m := intraday[tk]
		if m == nil {
			tb.Errorf("%s: no 1-minute bars", tk)
			continue
		}
		lo, _ := slices.BinarySearch(m.Times, cut)
		bars := a.Bars(nil, tk)
		if m.Len()-lo != len(bars) {
			tb.Errorf("%s: %d aggregated minutes, the demo has %d", tk, len(bars), m.Len()-lo)
			continue
		}
		for i, mb := range bars {
			k, e := lo+i, mb.Bar()
			if m.Times[k] != e.Time || !same(m.Open[k], e.Open) || !same(m.High[k], e.High) || !same(m.Low[k], e.Low) ||
				!same(m.Close[k], e.Close) || !same(m.Volume[k], e.Volume) || engine.Num(m.Quantity[k]) != e.Quantity {
				tb.Errorf("%s minute %d: aggregated %+v, demo %d %v/%v/%v/%v vol %v qty %d", tk, i, e,
					m.Times[k], m.Open[k], m.High[k], m.Low[k], m.Close[k], m.Volume[k], m.Quantity[k])
				break
			}
		}
	}
}

// TestSessionAggregates: the last session's rows, aggregated by package
// negocios (in batches of any size), are the universe's last session.
func TestSessionAggregates(t *testing.T) {
	u, s := smallSession(t)
	if s.Day != engine.DateOf(u.Meta.AsOf) {
		t.Fatalf("session of %s, as_of %s", s.Day, u.Meta.AsOf)
	}
	for _, batch := range []int{1, 97, 1 << 30} {
		checkSession(t, u, s, aggregate(t, s, batch))
	}
}

// TestSessionSameUniverse: GenerateSession's universe is GenerateSize's.
func TestSessionSameUniverse(t *testing.T) {
	u, _ := smallSession(t)
	if digest(t, u) != digest(t, small(t)) {
		t.Fatal("GenerateSession and GenerateSize give different universes")
	}
}

// TestSessionRows: the rows are in file order, ids unique per ticker and
// in time order, every cancellation after its trade, and the session
// holds the calls, cancellations and after-market trades it promises.
func TestSessionRows(t *testing.T) {
	_, s := smallSession(t)
	type key struct {
		tk string
		id int64
	}
	seen := map[key]negocios.Trade{}
	last := map[string]negocios.Trade{}
	var prev negocios.Trade
	var cancels, after, calls int
	err := s.Each(func(x *negocios.Trade) error {
		if x.Time < prev.Time || x.Time == prev.Time && x.Ticker < prev.Ticker {
			t.Fatalf("row %+v after %+v", *x, prev)
		}
		prev = *x
		k := key{x.Ticker, x.ID}
		if x.Action == negocios.ActionCancel {
			tr, ok := seen[k]
			if !ok || tr.Price != x.Price || tr.Quantity != x.Quantity || x.Time <= tr.Time {
				t.Errorf("cancellation %+v of %+v", *x, tr)
			}
			cancels++
			return nil
		}
		if _, dup := seen[k]; dup {
			t.Errorf("id %d of %s twice", x.ID, x.Ticker)
		}
		if l, ok := last[x.Ticker]; ok && x.ID < l.ID {
			t.Errorf("%s: id %d at %d after id %d at %d", x.Ticker, x.ID, x.Time, l.ID, l.Time)
		}
		if l, ok := last[x.Ticker]; ok && l.Time == x.Time && x.LocalTime() < msContinuous {
			calls++
		}
		seen[k], last[x.Ticker] = *x, *x
		if x.Session == negocios.SessionAfterMarket {
			after++
			if ms := x.LocalTime(); ms < msAfterOpen || ms >= msAfterClose {
				t.Errorf("after-market trade at %d", ms)
			}
		} else if ms := x.LocalTime(); ms < msOpenCall || ms >= msCloseCall+1000 {
			t.Errorf("regular trade at %d", ms)
		}
		if x.Price <= 0 || x.Quantity <= 0 || x.Buyer == 0 || x.Seller == 0 {
			t.Errorf("row %+v", *x)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cancels == 0 || after == 0 || calls == 0 || s.Rows() != len(seen)+cancels {
		t.Errorf("%d rows: %d trades, %d cancellations, %d after-market, %d opening call trades", s.Rows(), len(seen), cancels, after, calls)
	}
}

// TestHoldBack: the held-back universe plus the aggregated session is the
// full universe; nothing else differs.
func TestHoldBack(t *testing.T) {
	u, s := smallSession(t)
	base := HoldBack(u, s)
	if got, want := base.Meta.AsOf, localTime(s.prev, 18, 30); !got.Equal(want) || s.prev >= s.Day {
		t.Errorf("as_of %s, want %s", got, want)
	}
	if !reflect.DeepEqual(base.Securities, u.Securities) || !reflect.DeepEqual(base.Indexes, u.Indexes) ||
		!reflect.DeepEqual(base.Reports, u.Reports) || !reflect.DeepEqual(base.ShareActions, u.ShareActions) {
		t.Error("held back more than quotes")
	}
	a := aggregate(t, s, 1000)
	traded := map[string]bool{}
	for _, tk := range s.Tickers() {
		traded[tk] = true
	}
	if len(base.Daily) != len(u.Daily) || len(base.Intraday) > len(u.Intraday) {
		t.Fatalf("%d daily series of %d, %d intraday of %d", len(base.Daily), len(u.Daily), len(base.Intraday), len(u.Intraday))
	}
	for i, x := range base.Daily {
		full := u.Daily[i]
		n := x.Len()
		if !traded[x.Ticker] {
			if !reflect.DeepEqual(x, full) {
				t.Errorf("%s changed", x.Ticker)
			}
			continue
		}
		d, _ := a.Daily(x.Ticker)
		b := d.Bar()
		if full.Len() != n+1 || full.Dates[n] != s.Day || (n > 0 && x.Dates[n-1] >= s.Day) ||
			full.Close[n] != b.Close || full.Volume[n] != b.Volume || full.Trades[n] != b.Trades {
			t.Errorf("%s: %d rows held back of %d", x.Ticker, n, full.Len())
		}
	}
	minutes := 0
	for _, x := range base.Intraday {
		minutes += x.Len()
		if x.Len() == 0 || x.Times[x.Len()-1] >= int64(s.Day)*86400 {
			t.Errorf("%s: held-back intraday reaches %d", x.Ticker, x.Times[x.Len()-1])
		}
	}
	for _, tk := range s.Tickers() {
		minutes += len(a.Bars(nil, tk))
	}
	full := 0
	for _, x := range u.Intraday {
		full += x.Len()
	}
	if minutes != full {
		t.Errorf("held back %d minutes + aggregated = %d, full %d", minutes, minutes, full)
	}
	// Through the file B3's layout carries.
	dir := t.TempDir()
	path, rows, err := negocios.WriteDay(dir, s.Day, s.Each)
	if err != nil || rows != int64(s.Rows()) {
		t.Fatalf("%d rows, %v", rows, err)
	}
	f, err := negocios.Open(path, negocios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fa := negocios.NewAggregator(s.Day, negocios.Config{})
	var batch []negocios.Trade
	for f.Next() {
		batch = append(batch, *f.Trade())
	}
	if err := f.Err(); err != nil {
		t.Fatal(err)
	}
	fa.Apply(batch)
	checkSession(t, u, s, fa)
}

// TestLastSessionFewShares: a bar whose quantity cannot trade each of its
// prices is narrowed (high and low to the open and close, then all to
// the close), round lots give way to single shares before that, a trade
// holds at least one share, and the trades still aggregate to the bar.
func TestLastSessionFewShares(t *testing.T) {
	g := newGen(1, smallSize)
	g.keepRows = true
	day := g.cal[len(g.cal)-1]
	for _, c := range []struct {
		q                  int64
		kind               string
		op, hi, lo, cl     engine.Num
		wop, whi, wlo, wcl engine.Num
		trades             int64
	}{
		{1, engine.KindFII, 10, 12, 9, 11, 11, 11, 11, 11, 1},
		{2, engine.KindFII, 10, 12, 9, 11, 10, 11, 10, 11, 2},
		{3, engine.KindFII, 10, 12, 9, 11, 10, 11, 10, 11, 3},
		{4, engine.KindFII, 10, 12, 9, 11, 10, 12, 9, 11, 4},
		{200, engine.KindCompany, 10, 12, 9, 11, 10, 12, 9, 11, 200}, // two lots cannot print four prices: single shares
		{400, engine.KindCompany, 10, 12, 9, 11, 10, 12, 9, 11, 4},
		{5, engine.KindFII, 10, 10, 10, 10, 10, 10, 10, 10, 5},
	} {
		e := &entity{idx: 0, c: engine.Company{Kind: c.kind}, classes: []*class{{ticker: "TEST11"}}}
		o := &output{last: make([]lastSession, 1)}
		s := &engine.Series{Ticker: "TEST11", Dates: []engine.Date{day}, Open: []engine.Num{c.op}, High: []engine.Num{c.hi},
			Low: []engine.Num{c.lo}, Close: []engine.Num{c.cl}, Volume: []engine.Num{0}, Quantity: []int64{c.q}, Trades: []int64{1000}}
		g.lastSession(e, o, 0, s, 0)
		if s.Open[0] != c.wop || s.High[0] != c.whi || s.Low[0] != c.wlo || s.Close[0] != c.wcl || s.Trades[0] != c.trades {
			t.Errorf("q %d: bar %v/%v/%v/%v with %d trades, want %v/%v/%v/%v with %d", c.q, s.Open[0], s.High[0], s.Low[0], s.Close[0],
				s.Trades[0], c.wop, c.whi, c.wlo, c.wcl, c.trades)
		}
		sess := &Session{Day: day, tickers: []string{"TEST11"}, rows: o.last[0].rows}
		a := aggregate(t, sess, 100)
		d, _ := a.Daily("TEST11")
		if b := d.Bar(); b.Open != s.Open[0] || b.High != s.High[0] || b.Low != s.Low[0] || b.Close != s.Close[0] ||
			b.Volume != s.Volume[0] || b.Quantity != engine.Num(s.Quantity[0]) || b.Trades != s.Trades[0] {
			t.Errorf("q %d: aggregated %+v, bar %v/%v/%v/%v vol %v", c.q, b, s.Open[0], s.High[0], s.Low[0], s.Close[0], s.Volume[0])
		}
	}
}

// TestCompressTrades keeps small counts and bounds large ones.
func TestCompressTrades(t *testing.T) {
	for _, c := range [][2]int64{{1, 1}, {50, 50}, {51, 50}, {200, 100}, {5000, 500}, {1600000, 2000}} {
		if got := compressTrades(c[0]); got != c[1] {
			t.Errorf("compressTrades(%d) = %d, want %d", c[0], got, c[1])
		}
	}
}
