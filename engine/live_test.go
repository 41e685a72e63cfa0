package engine

import (
	"cmp"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// liveSession makes a session on day sd for tickers: random 1-minute bars
// from 13:00 to 20:00 UTC with gaps, in whole cents, as LiveBars, and the
// same bars as Intraday series with the daily bar they add up to (what a
// snapshot of the day holds).
func liveSession(sd Date, tickers []string, seed uint64) ([]LiveBar, []Intraday, []Series) {
	r := rand.New(rand.NewPCG(seed, 1))
	var bars []LiveBar
	var intra []Intraday
	var daily []Series
	for _, tk := range tickers {
		in := Intraday{Ticker: tk}
		price := 1000 + r.IntN(9000) // cents
		var dv moneySum
		var day Bar
		for m := int64(0); m < 420; m++ {
			if r.IntN(4) == 0 {
				continue // a minute without trades
			}
			o := price
			price = max(100, price+r.IntN(41)-20)
			c := price
			h := max(o, c) + r.IntN(5)
			l := min(o, c) - r.IntN(5)
			q := int64(1 + r.IntN(500))
			v := Num(float64(int64(c)*q) / 100)
			t := int64(sd)*86400 + 13*3600 + m*60
			b := LiveBar{Ticker: tk, Time: t, Open: Num(float64(o) / 100), High: Num(float64(h) / 100), Low: Num(float64(l) / 100),
				Close: Num(float64(c) / 100), Volume: v, Quantity: q, Trades: int64(1 + r.IntN(9))}
			bars = append(bars, b)
			in.Times = append(in.Times, t)
			in.Open, in.High, in.Low, in.Close = append(in.Open, b.Open), append(in.High, b.High), append(in.Low, b.Low), append(in.Close, b.Close)
			in.Volume, in.Quantity = append(in.Volume, v), append(in.Quantity, q)
			if day.Date == 0 {
				day = Bar{Date: sd, Open: b.Open, High: b.High, Low: b.Low}
			}
			day.High, day.Low, day.Close = maxNum(day.High, b.High), minNum(day.Low, b.Low), b.Close
			day.Quantity += Num(q)
			day.Trades += b.Trades
			dv.add(v)
		}
		intra = append(intra, in)
		daily = append(daily, Series{Ticker: tk, Dates: []Date{sd}, Open: []Num{day.Open}, High: []Num{day.High}, Low: []Num{day.Low},
			Close: []Num{day.Close}, Volume: []Num{dv.value()}, Quantity: []int64{int64(day.Quantity)}, Trades: []int64{day.Trades}})
	}
	return bars, intra, daily
}

// withSession returns testUniverse with session sd's bars and daily bars
// added to tickers' history.
func withSession(tb testing.TB, intra []Intraday, daily []Series) *Universe {
	u := testUniverse(tb)
	for _, in := range intra {
		i := slices.IndexFunc(u.Intraday, func(x Intraday) bool { return x.Ticker == in.Ticker })
		if i < 0 {
			u.Intraday = append(u.Intraday, in)
			continue
		}
		x := &u.Intraday[i]
		x.Times, x.Open, x.High, x.Low, x.Close = append(x.Times, in.Times...), append(x.Open, in.Open...), append(x.High, in.High...), append(x.Low, in.Low...), append(x.Close, in.Close...)
		x.Volume, x.Quantity = append(x.Volume, in.Volume...), append(x.Quantity, in.Quantity...)
	}
	for _, s := range daily {
		i := slices.IndexFunc(u.Daily, func(x Series) bool { return x.Ticker == s.Ticker })
		x := &u.Daily[i]
		x.Dates, x.Open, x.High, x.Low, x.Close = append(x.Dates, s.Dates...), append(x.Open, s.Open...), append(x.High, s.High...), append(x.Low, s.Low...), append(x.Close, s.Close...)
		x.Volume, x.Quantity, x.Trades = append(x.Volume, s.Volume...), append(x.Quantity, s.Quantity...), append(x.Trades, s.Trades...)
	}
	return u
}

// The live session applied in batches over a base without it answers
// every quote at every minute, and after the close, as the snapshot that
// holds the session does; so do its 1-minute bars and daily bar.
func TestLiveEqualsFullSnapshot(t *testing.T) {
	sd := d(5)
	tickers := []string{"PETR3", "PETR4", "VALE3"}
	bars, intra, daily := liveSession(sd, tickers, 7)
	full := mustBuild(t, withSession(t, intra, daily))
	var store Store
	store.Publish(mustBuild(t, testUniverse(t)))
	if err := store.StartLive(sd); err != nil {
		t.Fatal(err)
	}
	// Batches of the bars of a few minutes each, in time order; the last
	// one completes the session.
	slices.SortStableFunc(bars, func(x, y LiveBar) int { return cmp.Compare(x.Time, y.Time) })
	for i, seq := 0, uint64(1); i < len(bars); seq++ {
		j := min(i+1+int(seq%7), len(bars))
		b := &LiveBatch{Seq: seq, Session: sd, Bars: bars[i:j], Complete: j == len(bars)}
		if ok, err := store.ApplyLive(b); !ok || err != nil {
			t.Fatalf("batch %d: %v %v", seq, ok, err)
		}
		i = j
	}
	v := store.View()
	for _, tk := range tickers {
		a, _ := v.Base.Asset(tk)
		fa, _ := full.Asset(tk)
		for ts := int64(sd)*86400 + 12*3600; ts <= int64(sd)*86400+22*3600; ts += 30 {
			if got, want := v.QuoteAt(a, ts), fa.QuoteAt(unixTime(ts)); got != want {
				t.Fatalf("%s at %s: live %+v\nsnapshot %+v", tk, unixTime(ts).UTC().Format("15:04:05"), got, want)
			}
		}
		from, to := int64(sd)*86400, int64(sd)*86400+86399
		lo, hi := fa.MinuteRange(from, to)
		if got, want := v.AppendMinutes(nil, a, from, to, true), fa.AppendIntraday(nil, lo, hi, true); !slices.Equal(got, want) {
			t.Errorf("%s: minutes differ", tk)
		}
		got, ok := v.LiveDaily(a, false)
		want := fa.DailyBar(fa.Daily.Len()-1, false)
		if !ok || got != want {
			t.Errorf("%s daily: live %+v (%v)\nsnapshot %+v", tk, got, ok, want)
		}
		if got, want := v.QuoteBefore(a, sd+1), fa.QuoteBefore(sd+1); got != want {
			t.Errorf("%s previous-day view: live %+v\nsnapshot %+v", tk, got, want)
		}
	}
}

// A corrected minute (a cancelled trade) and a removed one change the
// quotes from that minute on, copy the ticker's bars first (a View loaded
// before is unchanged), and move RevAt for the cut-offs that see them.
func TestLiveCorrections(t *testing.T) {
	sd := d(5)
	var store Store
	store.Publish(mustBuild(t, testUniverse(t)))
	store.StartLive(sd)
	m := func(i int) int64 { return int64(sd)*86400 + 13*3600 + int64(i)*60 }
	bar := func(i int, c float64) LiveBar {
		return LiveBar{Ticker: "VALE3", Time: m(i), Open: Num(c), High: Num(c), Low: Num(c), Close: Num(c), Volume: Num(c * 10), Quantity: 10, Trades: 1}
	}
	store.ApplyLive(&LiveBatch{Seq: 1, Session: sd, Bars: []LiveBar{bar(0, 30), bar(1, 31), bar(2, 32)}})
	before := store.View()
	a, _ := before.Base.Asset("VALE3")
	if q := before.QuoteAt(a, m(3)); q.Close != 32 || q.High != 32 || q.Volume != 930 {
		t.Fatalf("before: %+v", q)
	}
	rev3 := before.Live.RevAt(m(3))
	// Minute 1 corrected, minute 2 removed, minute 5 added ahead.
	fix := bar(1, 29)
	gone := LiveBar{Ticker: "VALE3", Time: m(2), Removed: true}
	if ok, err := store.ApplyLive(&LiveBatch{Seq: 2, Session: sd, Bars: []LiveBar{gone, fix, bar(5, 33)}}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	after := store.View()
	if q := after.QuoteAt(a, m(3)); q.Close != 29 || q.High != 30 || q.Low != 29 || q.Volume != 590 || q.Quantity != 20 {
		t.Errorf("after the correction: %+v", q)
	}
	if q := before.QuoteAt(a, m(3)); q.Close != 32 || q.Volume != 930 {
		t.Errorf("a View loaded before the correction changed: %+v", q)
	}
	if after.Live.Corrections != 2 || after.Live.RevAt(m(3)) == rev3 || after.Live.RevAt(m(1)) != 1 {
		t.Errorf("corrections %d, RevAt(m3) %d (was %d), RevAt(m1) %d", after.Live.Corrections, after.Live.RevAt(m(3)), rev3, after.Live.RevAt(m(1)))
	}
	// A bar ahead of a cut-off leaves its revision alone.
	store.ApplyLive(&LiveBatch{Seq: 3, Session: sd, Bars: []LiveBar{bar(9, 35)}})
	if got := store.View().Live.RevAt(m(3)); got != after.Live.RevAt(m(3)) {
		t.Errorf("a bar at minute 9 moved RevAt(minute 3): %d", got)
	}
	if got := store.View().Live.RevAt(m(10)); got != 3 {
		t.Errorf("RevAt(minute 10) %d, want 3", got)
	}
}

// A redelivered batch changes nothing; a batch with a bad bar, or for
// another session, is refused whole.
func TestLiveRefusals(t *testing.T) {
	sd := d(5)
	var store Store
	store.Publish(mustBuild(t, testUniverse(t)))
	if _, err := store.ApplyLive(&LiveBatch{Seq: 1, Session: sd}); !errors.Is(err, ErrLiveBatch) {
		t.Errorf("no session started: %v", err)
	}
	store.StartLive(sd)
	t0 := int64(sd)*86400 + 13*3600
	good := LiveBar{Ticker: "VALE3", Time: t0, Open: 1, High: 2, Low: 1, Close: 2, Volume: 20, Quantity: 10}
	store.ApplyLive(&LiveBatch{Seq: 5, Session: sd, Bars: []LiveBar{good}})
	v := store.View()
	if ok, err := store.ApplyLive(&LiveBatch{Seq: 5, Session: sd, Bars: []LiveBar{good}}); ok || err != nil || store.View() != v {
		t.Errorf("a redelivered batch: %v %v", ok, err)
	}
	for name, b := range map[string]LiveBar{
		"another day":    {Ticker: "VALE3", Time: t0 + 86400, Open: 1, High: 1, Low: 1, Close: 1},
		"not a minute":   {Ticker: "VALE3", Time: t0 + 7, Open: 1, High: 1, Low: 1, Close: 1},
		"zero price":     {Ticker: "VALE3", Time: t0, Open: 0, High: 1, Low: 0, Close: 1},
		"negative price": {Ticker: "VALE3", Time: t0, Open: -1, High: 1, Low: -1, Close: 1},
		"high below low": {Ticker: "VALE3", Time: t0, Open: 1, High: 1, Low: 2, Close: 1},
		"no ticker":      {Ticker: "vale 3", Time: t0, Open: 1, High: 1, Low: 1, Close: 1},
		"NaN":            {Ticker: "VALE3", Time: t0, Open: Null, High: 1, Low: 1, Close: 1},
		"negative qty":   {Ticker: "VALE3", Time: t0, Open: 1, High: 1, Low: 1, Close: 1, Quantity: -1},
	} {
		bad := &LiveBatch{Seq: 9, Session: sd, Bars: []LiveBar{good, b}}
		if err := bad.Check(sd); !errors.Is(err, ErrLiveBatch) {
			t.Errorf("%s: Check = %v", name, err)
		}
		ok, err := store.ApplyLive(bad)
		if ok || !errors.Is(err, ErrLiveBatch) || store.View() != v {
			t.Errorf("%s: applied %v, %v", name, ok, err)
		}
	}
	if ok, err := store.ApplyLive(&LiveBatch{Seq: 9, Session: sd + 1}); ok || !errors.Is(err, ErrLiveBatch) {
		t.Errorf("another session: %v %v", ok, err)
	}
	// Check says what ApplyLive will do, without a Store.
	if err := (&LiveBatch{Seq: 9, Session: sd + 1}).Check(sd); !errors.Is(err, ErrLiveBatch) {
		t.Errorf("Check of another session's batch: %v", err)
	}
	if err := (&LiveBatch{Seq: 9, Session: sd, Bars: []LiveBar{good}}).Check(sd); err != nil {
		t.Errorf("Check of a good batch: %v", err)
	}
}

// Publishing a Dataset binds the session to it: the bars of a ticker the
// new Dataset covers (the roll) go, a ticker the old one did not know and
// the new one does is served, the rest carries over.
func TestLiveRebind(t *testing.T) {
	sd := d(5)
	bars, intra, daily := liveSession(sd, []string{"PETR4", "VALE3"}, 3)
	var store Store
	store.Publish(mustBuild(t, testUniverse(t)))
	store.StartLive(sd)
	ipo := LiveBar{Ticker: "NEWC3", Time: int64(sd)*86400 + 14*3600, Open: 5, High: 5, Low: 5, Close: 5, Volume: 50, Quantity: 10}
	store.ApplyLive(&LiveBatch{Seq: 1, Session: sd, Bars: append(slices.Clone(bars), ipo)})
	if l := store.View().Live; l.Aside != 1 || len(l.held) != 1 {
		t.Fatalf("the unknown ticker: aside %d, held %d", l.Aside, len(l.held))
	}
	// The next Dataset holds PETR4's session (and knows NEWC3).
	u := withSession(t, intra[:1], daily[:1])
	u.Securities = append(u.Securities, Security{Ticker: "NEWC3", CompanyID: valeID, ISIN: "BRNEWCACNOR0", StockType: ClassCS, Currency: "BRL", UnitFactor: Null})
	store.Publish(mustBuild(t, u))
	v := store.View()
	petr, _ := v.Base.Asset("PETR4")
	vale, _ := v.Base.Asset("VALE3")
	newc, _ := v.Base.Asset("NEWC3")
	if v.Live.tail(petr) != nil || v.Live.tail(vale) == nil || v.Live.tail(newc) == nil || len(v.Live.held) != 0 {
		t.Errorf("after the publish: PETR4 %v (want dropped), VALE3 %v, NEWC3 %v, held %d", v.Live.tail(petr) != nil, v.Live.tail(vale) != nil, v.Live.tail(newc) != nil, len(v.Live.held))
	}
	end := int64(sd)*86400 + 86399
	if q, fq := v.QuoteAt(petr, end), petr.QuoteAt(unixTime(end)); q != fq {
		t.Errorf("PETR4 from the new Dataset: %+v, want %+v", q, fq)
	}
}

// Readers never see a half-applied batch: with a writer publishing every
// millisecond, every View a reader loads answers, for every ticker, the
// quote its own bars give (run with -race).
func TestLiveConcurrent(t *testing.T) {
	sd := d(5)
	var store Store
	store.Publish(mustBuild(t, testUniverse(t)))
	store.StartLive(sd)
	tickers := []string{"PETR3", "PETR4", "VALE3", "SPUN3"}
	t0 := int64(sd)*86400 + 13*3600
	var done atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				v := store.View()
				n := int64(v.Live.Seq) // batch k holds minute k-1 of every ticker, close k
				for _, tk := range tickers {
					a, _ := v.Base.Asset(tk)
					q := v.QuoteAt(a, t0+n*60+60)
					if n > 0 && (q.Close != Num(n) || q.Quantity != Num(n) || !q.Intraday) {
						t.Errorf("seq %d %s: %+v", n, tk, q)
						return
					}
				}
			}
		}()
	}
	for k := uint64(1); k <= 200; k++ {
		var b LiveBatch
		b.Seq, b.Session = k, sd
		for _, tk := range tickers {
			c := Num(k)
			b.Bars = append(b.Bars, LiveBar{Ticker: tk, Time: t0 + int64(k-1)*60, Open: c, High: c, Low: c, Close: c, Volume: c, Quantity: 1})
		}
		if _, err := store.ApplyLive(&b); err != nil {
			t.Fatal(err)
		}
		if k%10 == 0 {
			sleepMillis(1)
		}
	}
	done.Store(true)
	wg.Wait()
}

func unixTime(ts int64) time.Time { return time.Unix(ts, 0) }

func sleepMillis(n int) { time.Sleep(time.Duration(n) * time.Millisecond) }

// A batch in the feeds' order (ticker, then minute) is applied in place,
// others through a sorted copy: both give the same session, and neither
// modifies the batch.
func TestLiveBatchOrder(t *testing.T) {
	sd := d(5)
	tickers := []string{"PETR3", "PETR4", "VALE3"}
	bars, _, _ := liveSession(sd, tickers, 11)
	shuffled := slices.Clone(bars)
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	view := func(in []LiveBar) *View {
		t.Helper()
		var store Store
		store.Publish(mustBuild(t, testUniverse(t)))
		if err := store.StartLive(sd); err != nil {
			t.Fatal(err)
		}
		was := slices.Clone(in)
		if ok, err := store.ApplyLive(&LiveBatch{Seq: 1, Session: sd, Bars: in}); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if !slices.Equal(in, was) {
			t.Error("the batch's bars were modified")
		}
		return store.View()
	}
	if !slices.IsSortedFunc(bars, byTickerMinute) || slices.IsSortedFunc(shuffled, byTickerMinute) {
		t.Fatal("the fixtures are not in the orders the test needs")
	}
	sorted, other := view(bars), view(shuffled)
	for _, tk := range tickers {
		a, _ := sorted.Base.Asset(tk)
		b, _ := other.Base.Asset(tk)
		from, to := int64(sd)*86400, int64(sd)*86400+86399
		got, want := other.AppendMinutes(nil, b, from, to, false), sorted.AppendMinutes(nil, a, from, to, false)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s: %d minutes from the shuffled batch, %d from the sorted one, or they differ", tk, len(got), len(want))
		}
		if got, want := other.QuoteAt(b, to), sorted.QuoteAt(a, to); got != want {
			t.Errorf("%s: quote %+v from the shuffled batch, %+v from the sorted one", tk, got, want)
		}
	}
}

// A tail's rows, in chunks from any first offset, read back as appended,
// and a header taken before later appends (a published one) still reads
// its own bars.
func TestLiveTailChunks(t *testing.T) {
	bar := func(i int) LiveBar {
		p := Num(10 + float64(i%100)/100)
		return LiveBar{Time: int64(i) * 60, Open: p, High: p + 0.02, Low: p - 0.01, Close: p + 0.01, Volume: p * 100, Quantity: 100, Trades: int64(i%5 + 1)}
	}
	const n = 5*tailChunk + 7
	for spread := range 2 * tailChunk {
		var tl liveTail
		var kept []liveTail
		for i := range n {
			r := bar(i)
			tl = tl.appendRow(r.Time, &r, spread)
			kept = append(kept, tl)
		}
		for k, h := range kept {
			if h.Len() != k+1 {
				t.Fatalf("spread %d: header %d has %d bars", spread, k, h.Len())
			}
			for i := range h.Len() {
				r := bar(i)
				if w := h.row(i); h.times[i] != r.Time || w.open != r.Open || w.close != r.Close || w.trades != r.Trades || w.aQty != int64(i+1)*100 {
					t.Fatalf("spread %d: header %d, bar %d: %d %+v", spread, k, i, h.times[i], *w)
				}
			}
		}
	}
}

// Tails appended in step (every ticker a bar each minute, as a market
// trades) do not all grow in the same batch: a few of them do in each.
func TestLiveTailsGrowApart(t *testing.T) {
	const tickers, minutes = 2000, 420
	tails := make([]liveTail, tickers)
	most := 0
	for m := range minutes {
		grew := 0
		for i := range tails {
			r := LiveBar{Time: int64(m) * 60, Open: 10, High: 10, Low: 10, Close: 10, Volume: 1000, Quantity: 100, Trades: 1}
			old := tails[i]
			tails[i] = old.appendRow(r.Time, &r, i)
			if m > 0 && (cap(tails[i].times) != cap(old.times) || len(tails[i].chunks) != len(old.chunks)) {
				grew++
			}
		}
		most = max(most, grew)
	}
	if most > tickers/10 {
		t.Errorf("%d of %d tails grew in one minute", most, tickers)
	}
	t.Logf("at most %d of %d tails grew in one minute", most, tickers)
}

// A chunk of rows fills its 4 KiB size class.
func TestLiveTailChunkSize(t *testing.T) {
	if n := unsafe.Sizeof([tailChunk]liveRow{}); n > 4096 || n+unsafe.Sizeof(liveRow{}) <= 4096 {
		t.Errorf("a chunk is %d bytes, want the most rows in 4096", n)
	}
}
