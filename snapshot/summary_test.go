package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// summaryUniverse is a small demo market whose histories end in every
// way a summary must tell apart: a last session without a trade (prices
// and volume missing), a last bar whose previous close is missing, a
// history of one bar, 1-minute bars of a session after the last daily
// bar, 1-minute bars that end before the last daily bar, 1-minute bars
// without a daily history, no history at all, and wide series.
func summaryUniverse(t testing.TB) (*engine.Universe, map[string]string) {
	t.Helper()
	u := demo.GenerateSize(5, demo.Size{Companies: 12, FIIs: 2, ETFs: 2, SponsoredBDRs: 1, HistoryFrom: 2025, IntradayTickers: 5, IntradaySessions: 3})
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = d
	daily := map[string]*engine.Series{}
	for i := range u.Daily {
		daily[u.Daily[i].Ticker] = &u.Daily[i]
	}
	var intra []*engine.Intraday
	for i := range u.Intraday {
		if u.Intraday[i].Len() > 0 && daily[u.Intraday[i].Ticker] != nil && daily[u.Intraday[i].Ticker].Len() > 3 {
			intra = append(intra, &u.Intraday[i])
		}
	}
	if len(intra) < 3 {
		t.Fatalf("%d tickers with 1-minute bars, want 3", len(intra))
	}
	intra = intra[:3]
	cases := map[string]string{}
	used := map[string]bool{}
	for _, r := range u.Renames { // joined histories: left alone
		used[r.From], used[r.To] = true, true
	}
	for _, s := range intra {
		used[s.Ticker] = true
	}
	// Daily series, long enough, not wide, not touched yet; their
	// 1-minute bars dropped.
	next := func() *engine.Series {
		for i := range u.Daily {
			s := &u.Daily[i]
			if !used[s.Ticker] && s.Len() > 10 && s.Bars().Compact() {
				used[s.Ticker] = true
				for k := range u.Intraday {
					if u.Intraday[k].Ticker == s.Ticker {
						u.Intraday[k] = engine.Intraday{Ticker: s.Ticker}
					}
				}
				return s
			}
		}
		t.Fatal("not enough daily series")
		return nil
	}
	own := func(s *engine.Series) { // its own columns, to edit
		s.Dates = slices.Clone(s.Dates)
		s.Open, s.High, s.Low, s.Close = slices.Clone(s.Open), slices.Clone(s.High), slices.Clone(s.Low), slices.Clone(s.Close)
		s.Volume, s.Quantity, s.Trades = slices.Clone(s.Volume), slices.Clone(s.Quantity), slices.Clone(s.Trades)
	}
	cut := func(s *engine.Series, n int) {
		s.Dates, s.Open, s.High, s.Low, s.Close = s.Dates[:n], s.Open[:n], s.High[:n], s.Low[:n], s.Close[:n]
		s.Volume, s.Quantity, s.Trades = s.Volume[:n], s.Quantity[:n], s.Trades[:n]
	}
	s := next()
	own(s)
	n := s.Len()
	s.Open[n-1], s.High[n-1], s.Low[n-1], s.Close[n-1], s.Volume[n-1], s.Quantity[n-1], s.Trades[n-1] = engine.Null, engine.Null, engine.Null, engine.Null, engine.Null, 0, 0
	cases["no trade in the last session"] = s.Ticker
	s = next()
	own(s)
	s.Close[s.Len()-2] = engine.Null
	cases["previous close missing"] = s.Ticker
	s = next()
	own(s)
	cut(s, 1)
	cases["one bar"] = s.Ticker
	// 1-minute bars of a session after the last daily bar.
	s = daily[intra[0].Ticker]
	own(s)
	cut(s, s.Len()-1)
	cases["1-minute session after the daily"] = s.Ticker
	// 1-minute bars ending before the last daily bar: the last session's
	// bars dropped.
	is := intra[1]
	last := is.Times[is.Len()-1] / 86400 * 86400
	k := slices.IndexFunc(is.Times, func(x int64) bool { return x >= last })
	is.Times, is.Open, is.High, is.Low = is.Times[:k], is.Open[:k], is.High[:k], is.Low[:k]
	is.Close, is.Volume, is.Quantity = is.Close[:k], is.Volume[:k], is.Quantity[:k]
	cases["1-minute bars before the daily"] = is.Ticker
	// 1-minute bars and no daily bar.
	s = daily[intra[2].Ticker]
	cut(s, 0)
	cases["1-minute bars only"] = s.Ticker
	s = next()
	cut(s, 0)
	cases["no bar"] = s.Ticker
	wide := slices.IndexFunc(u.Daily, func(s engine.Series) bool { return s.Len() > 1 && !s.Bars().Compact() })
	if wide < 0 {
		t.Fatal("no wide series")
	}
	cases["wide"] = u.Daily[wide].Ticker
	return u, cases
}

// sameBits reports the first field where the quotes differ, bit for
// bit, or "".
func sameBits(x, y any) string {
	a, b := reflect.ValueOf(x), reflect.ValueOf(y)
	for i := range a.NumField() {
		f, g := a.Field(i), b.Field(i)
		if f.Kind() == reflect.Float64 {
			if math.Float64bits(f.Float()) != math.Float64bits(g.Float()) {
				return fmt.Sprintf("%s %v, want %v", a.Type().Field(i).Name, f.Float(), g.Float())
			}
		} else if f.CanInterface() && f.Interface() != g.Interface() {
			return fmt.Sprintf("%s %v, want %v", a.Type().Field(i).Name, f.Interface(), g.Interface())
		}
	}
	return ""
}

// A format 6 load makes every asset's latest quote, the last session,
// the rankings and the quote of the sessions before the last two (the
// end-of-day views) from the series' summaries: the same, bit for bit,
// as format 5's from the bars, whether the blocks are verified first or
// not, for histories that end in each way summaryUniverse makes.
func TestSummariesMakeTheLatestQuotes(t *testing.T) {
	u, cases := summaryUniverse(t)
	dir := t.TempDir()
	p5, p6 := filepath.Join(dir, "v5.snap"), filepath.Join(dir, "v6.snap")
	if err := WriteFile(p5, u, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p6, u, WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	ds5, _, err := Load(p5, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []LoadOptions{{}, {LazyVerify: true, VerifyRate: -1}} {
		ds6, _, err := Load(p6, opt)
		if err != nil {
			t.Fatal(err)
		}
		if ds6.LastSession() != ds5.LastSession() {
			t.Errorf("last session %s, format 5 %s", ds6.LastSession(), ds5.LastSession())
		}
		for i := range ds5.Assets() {
			a, b := &ds5.Assets()[i], &ds6.Assets()[i]
			if d := sameBits(b.Latest, a.Latest); d != "" {
				t.Errorf("lazy %v: %s: latest %s", opt.LazyVerify, a.Ticker, d)
			}
			if want := b.QuoteAt(time.Unix(1<<40, 0)); sameBits(b.Latest, want) != "" {
				t.Errorf("%s: latest %+v, quote at the end %+v", a.Ticker, b.Latest, want)
			}
			// The quote before each of the dates near the ends (the
			// end-of-day views), from the summary or the bars.
			var ds []engine.Date
			if n := a.Daily.Len(); n > 0 {
				for _, k := range []int{0, 1, 2, n - 3, n - 2, n - 1} {
					if k >= 0 && k < n {
						ds = append(ds, a.Daily.Dates[k], a.Daily.Dates[k]+1)
					}
				}
				ds = append(ds, a.Daily.Dates[0]-1)
			}
			for _, d := range append(ds, engine.DateOf(ds5.AsOf())) {
				if diff := sameBits(b.QuoteBefore(d), a.QuoteBefore(d)); diff != "" {
					t.Errorf("lazy %v: %s: quote before %s: %s", opt.LazyVerify, a.Ticker, d, diff)
				}
			}
		}
		for i, x := range ds5.Indexes() {
			y := ds6.Indexes()[i]
			if len(x.Highs) != len(y.Highs) || len(x.Lows) != len(y.Lows) || x.UpdatedAt != y.UpdatedAt {
				t.Fatalf("index %s: %d highs, %d lows, updated %v; format 5 %d, %d, %v", x.Symbol, len(y.Highs), len(y.Lows), y.UpdatedAt, len(x.Highs), len(x.Lows), x.UpdatedAt)
			}
			for k := range x.Highs {
				if x.Highs[k].Asset.Ticker != y.Highs[k].Asset.Ticker || sameBits(y.Highs[k].Quote, x.Highs[k].Quote) != "" ||
					x.Lows[k].Asset.Ticker != y.Lows[k].Asset.Ticker {
					t.Fatalf("index %s: ranking %d differs", x.Symbol, k)
				}
			}
		}
	}
	// Each case is there, and its latest quote is what it is meant to be.
	for name, tk := range cases {
		a, ok := ds5.Asset(tk)
		if !ok {
			t.Fatalf("%s: %s not an asset", name, tk)
		}
		q := a.Latest
		switch name {
		case "no trade in the last session":
			if q.Close.Valid() || q.Volume.Valid() {
				t.Errorf("%s: %+v", name, q)
			}
		case "previous close missing", "one bar":
			if q.PrevClose.Valid() || !q.Close.Valid() {
				t.Errorf("%s: %+v", name, q)
			}
		case "1-minute session after the daily", "1-minute bars only":
			if !q.Intraday {
				t.Errorf("%s: latest not from the 1-minute bars: %+v", name, q)
			}
		case "1-minute bars before the daily":
			if q.Intraday || a.Intraday.Len() == 0 {
				t.Errorf("%s: %+v", name, q)
			}
		case "no bar":
			if q.Valid() {
				t.Errorf("%s: %+v", name, q)
			}
		}
	}
}

// Opening a format 6 file lazily reads no page of its bars: the load is
// made with the daily and intraday columns unreadable (mprotect) during
// the index build and the end-of-day quotes a server prepares, whose
// first read of them would fault (a panic, with SetPanicOnFault, that
// Build reports as an error). The pages of renamed
// tickers' series are left readable (their histories are joined at
// open), and those of a spin-off's tickers (the adjustment factors read
// the prices around its ex date).
func TestLoadReadsNoColumnPage(t *testing.T) {
	u, _ := summaryUniverse(t)
	path := filepath.Join(t.TempDir(), "v6.snap")
	if err := WriteFile(path, u, WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	// Where each kind's series lie in the column area.
	dcols, dix := appendDailyColumns(nil, u.Daily)
	icols, iix := appendIntradayColumns(nil, u.Intraday)
	renamed := map[string]bool{} // and priced by a spin-off
	for _, r := range u.Renames {
		renamed[r.From], renamed[r.To] = true, true
	}
	for _, sa := range u.ShareActions {
		for _, l := range sa.Legs {
			if l.LegType == engine.LegReceived {
				renamed[sa.Ticker] = true
				for _, m := range sa.Legs {
					renamed[m.Ticker] = true
				}
			}
		}
	}
	var keep [][2]int64 // from the area's start
	for _, c := range dix.Series {
		if renamed[c.Ticker] {
			keep = append(keep, [2]int64{c.Off, c.Off + dailyColBytes(c.Rows, c.Wide)})
		}
	}
	for _, c := range iix.Series {
		if renamed[c.Ticker] {
			base := int64(len(dcols))
			keep = append(keep, [2]int64{base + c.Off, base + c.Off + intradayColBytes(c.Rows, c.Wide)})
		}
	}
	bars := int64(len(dcols) + len(icols))

	lazy := newColBlocks()
	uu, h, mf, err := openAndRead(path, false, true, true, 1, nil, lazy, nil)
	if err != nil {
		t.Fatal(err)
	}
	lazy.closeFile()
	defer mf.Close()
	if !mf.Mapped() {
		t.Skip("the file is not mapped here")
	}
	page := int64(os.Getpagesize())
	var locked [][]byte
	lock := func(lo, hi int64) { // area offsets; whole pages within
		lo = (h.ColumnsOffset + lo + page - 1) / page * page
		hi = (h.ColumnsOffset + hi) / page * page
		if hi > lo {
			b := mf.Bytes()[lo:hi]
			if err := unix.Mprotect(b, unix.PROT_NONE); err != nil {
				t.Skipf("mprotect: %v", err)
			}
			locked = append(locked, b)
		}
	}
	from := int64(0)
	for _, k := range keep {
		lock(from, k[0]-page)
		from = k[1] + page
	}
	lock(from, bars)
	n := int64(0)
	for _, b := range locked {
		n += int64(len(b))
	}
	if n < bars/2 {
		t.Fatalf("%d of %d bytes of bars made unreadable: too few to tell", n, bars)
	}
	// The ratio points and their variables, whole.
	var ratioBytes int64
	for _, c := range lazy.kinds {
		if c.kind == "ratios" {
			lo := c.at - h.ColumnsOffset
			ratioBytes = int64(len(c.sec))
			lock(lo, lo+ratioBytes)
		}
	}
	if m := int64(len(locked[len(locked)-1])); ratioBytes == 0 || m < ratioBytes/2 {
		t.Fatalf("%d of %d bytes of ratio points made unreadable: too few to tell", m, ratioBytes)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	ds, err := engine.BuildWith(uu, engine.BuildOptions{Serial: true, OrderChecked: true, RatiosChecked: true})
	if err == nil {
		// What a server prepares before it is ready: the end-of-day
		// view (the session before the as-of day) of every asset,
		func() {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("the end-of-day view: %v", r)
				}
			}()
			asOf := engine.DateOf(ds.AsOf())
			for i := range ds.Assets() {
				ds.Assets()[i].QuoteBefore(asOf)
			}
			// and the rankings of its quote views (IndexData.KeepCurrent).
			for i := range ds.Indexes() {
				ix := &ds.Indexes()[i]
				var es []engine.RankEntry
				for _, m := range ix.Members {
					if m != nil && m.Latest.Variation.Valid() {
						es = append(es, engine.RankEntry{Asset: m, Quote: m.Latest})
					}
				}
				ix.KeepCurrent(es)
			}
		}()
	}
	for _, b := range locked {
		if perr := unix.Mprotect(b, unix.PROT_READ); perr != nil {
			t.Fatal(perr)
		}
	}
	if err != nil {
		t.Fatalf("the index build read the bars: %v", err)
	}
	if ds.LastSession() == engine.NoDate {
		t.Fatal("no last session")
	}
}

// A summary that is not its series' bars (under a good checksum: no
// writer makes one) makes its block bad, and no other block, with the
// handling of a checksum mismatch (ErrChecksum): on first use in a lazy
// load, refused at open when every block is verified.
func TestSummaryMismatchIsABadBlock(t *testing.T) {
	// In the blocks of a section.
	ss := columnSeries()
	is := synthUniverse(30, 1, 30, 400, 0).Intraday
	for _, kind := range []string{"daily", "intraday"} {
		for _, at := range []int{10, 25} {
			var sec []byte
			var ix dailyIndex
			if kind == "daily" {
				sec, ix = appendDailyColumns(nil, ss)
			} else {
				sec, ix = appendIntradayColumns(nil, is)
			}
			b := []byte(ix.Series[at].Tail)
			b[len(b)-1] ^= 0x40
			ix.Series[at].Tail = string(b)
			c := kindChecks(kind, sec, ix, false)
			for i := range ix.Blocks {
				err := c.verify(i)
				if (i == ix.Series[at].Block) != (err != nil) {
					t.Errorf("%s series %d: block %d verifies %v", kind, at, i, err)
				}
				if err != nil && (!errors.Is(err, errSummary) || !strings.Contains(err.Error(), ix.Series[at].Ticker)) {
					t.Errorf("%s: %v, want errSummary naming %s", kind, err, ix.Series[at].Ticker)
				}
			}
		}
	}

	// In a file.
	for _, kind := range []string{"daily", "intraday"} {
		t.Run(kind, func(t *testing.T) {
			smallBlocks(t) // tk's block holds no bars read at open
			u, cases := summaryUniverse(t)
			tk := cases["1-minute session after the daily"]
			defer func(w tailWriters) { writeTails = w }(writeTails)
			off := func(t string, at int) string { // one cent more
				b := []byte(t)
				putNum(b[at:], numOf(b[at:])+0.01)
				return string(b)
			}
			if kind == "daily" {
				writeTails.daily = func(s *engine.DailyBars) string {
					if s.Ticker == tk {
						return off(dailyTail(s), 4+4+24) // the last close
					}
					return dailyTail(s)
				}
			} else {
				writeTails.intraday = func(s *engine.Intraday) string {
					if s.Ticker == tk {
						return off(intradayTail(s), 40)
					}
					return intradayTail(s)
				}
			}
			path := filepath.Join(t.TempDir(), "bad.snap")
			if err := WriteFile(path, u, WriteOptions{Version: 6}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := Load(path, LoadOptions{}); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "summary") {
				t.Fatalf("Load verifying every block: %v, want ErrChecksum naming the summary", err)
			}
			ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
			if err != nil {
				t.Fatalf("lazy load: %v", err)
			}
			a, ok := ds.Asset(tk)
			if !ok {
				t.Fatalf("%s: no asset", tk)
			}
			if ds.BlockErr() != nil {
				t.Fatal("failed before any use")
			}
			err = ds.CheckAsset(a)
			if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "block summary mismatch") || !strings.Contains(err.Error(), tk) {
				t.Fatalf("CheckAsset(%s): %v, want the block's summary mismatch", tk, err)
			}
			if ds.BlockErr() == nil || ds.CheckAll() == nil {
				t.Fatal("the Dataset is not failed")
			}
		})
	}
}

func numOf(b []byte) float64     { return math.Float64frombits(binary.LittleEndian.Uint64(b)) }
func putNum(b []byte, v float64) { binary.LittleEndian.PutUint64(b, math.Float64bits(v)) }

// presentPages returns how many of the pages of b are in the process's
// page tables (/proc/self/pagemap's present bit), or -1 when it cannot
// tell.
func presentPages(b []byte) int {
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return -1
	}
	defer f.Close()
	page := uintptr(os.Getpagesize())
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b))) / page
	hi := (uintptr(unsafe.Pointer(unsafe.SliceData(b))) + uintptr(len(b)) + page - 1) / page
	buf := make([]byte, 8*(hi-lo))
	if _, err := f.ReadAt(buf, int64(lo*8)); err != nil {
		return -1
	}
	n := 0
	for i := 0; i < len(buf); i += 8 {
		if binary.LittleEndian.Uint64(buf[i:])&(1<<63) != 0 {
			n++
		}
	}
	return n
}

// The background pass hashes the blocks from the file (pread into a
// buffer), not through the mapping: it leaves the column area's pages
// out of the process (those the load mapped stay as they were), and
// still verifies every block.
func TestBackgroundPassReadsTheFile(t *testing.T) {
	u, _ := summaryUniverse(t)
	path := filepath.Join(t.TempDir(), "v6.snap")
	if err := WriteFile(path, u, WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	x := ds.Blocks().(*colBlocks)
	present := func() int {
		n := 0
		for _, c := range x.kinds {
			p := presentPages(c.sec)
			if p < 0 {
				t.Skip("no /proc/self/pagemap here")
			}
			n += p
		}
		return n
	}
	before := present()
	if x.file, err = os.Open(path); err != nil {
		t.Fatal(err)
	}
	done := make(chan engine.BlockStatus, 1)
	x.background(ds, 1<<40, func(s engine.BlockStatus) { done <- s })
	select {
	case st := <-done:
		if !st.Complete() || st.Bad != 0 {
			t.Fatalf("pass: %+v", st)
		}
	case <-time.After(time.Minute):
		t.Fatal("the pass did not end")
	}
	if got, want := x.fromFile.Load(), x.blocks; got != want {
		t.Errorf("%d blocks read from the file, want all %d", got, want)
	}
	if after := present(); after > before {
		t.Errorf("the pass mapped %d pages of the column area (%d before, %d after)", after-before, before, after)
	}
	runtime.KeepAlive(ds)
}

// A lazy load (serve's, before the background pass) maps no page of the
// ratio points and variables: it reads none of them (the points' checks
// are the blocks', the catalog check of the points included). Counted
// from the process's page table (/proc/self/pagemap); a few pages at
// the area's edges may come in with their neighbours' reads.
func TestLoadMapsNoRatioPage(t *testing.T) {
	u := ratioDemo(t)
	path := filepath.Join(t.TempDir(), "v6.snap")
	if err := WriteFile(path, u, WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skipf("no page map: %v", err)
	}
	defer pm.Close()
	x := ds.Blocks().(*colBlocks)
	var sec []byte
	for _, c := range x.kinds {
		if c.kind == "ratios" {
			sec = c.sec
		}
	}
	page := uintptr(os.Getpagesize())
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(sec)))
	first, last := lo/page, (lo+uintptr(len(sec))-1)/page
	entries := make([]byte, 8*(last-first+1))
	if _, err := pm.ReadAt(entries, int64(first*8)); err != nil {
		t.Skipf("page map: %v", err)
	}
	present := 0
	for i := 0; i < len(entries); i += 8 {
		if binary.LittleEndian.Uint64(entries[i:])>>63 == 1 {
			present++
		}
	}
	if n := len(entries) / 8; n < 64 || present > 32 {
		t.Fatalf("%d of the ratio area's %d pages mapped after the load, want none but the edges", present, n)
	}
	runtime.KeepAlive(ds)
}
