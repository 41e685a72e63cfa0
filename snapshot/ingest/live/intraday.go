package live

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/pregao/pregao/engine"
)

// SessionBars is what a session log holds at its end: per ticker, the
// last bar of each minute (minutes taken out left out), ascending.
type SessionBars struct {
	Session engine.Date
	Tickers map[string][]engine.LiveBar
	Info    LogInfo
}

// ReadSessionBars reads the session log at path and folds its records,
// last writer wins per ticker and minute. A torn tail (Info.Cut) and
// damaged records (Info.Damaged, Info.Missing) are left out, the file is
// not changed.
func ReadSessionBars(path string) (*SessionBars, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	last := map[string]map[int64]engine.LiveBar{}
	info, err := ReadLog(f, func(r *Record) error {
		for _, b := range r.Bars {
			m := last[b.Ticker]
			if m == nil {
				m = map[int64]engine.LiveBar{}
				last[b.Ticker] = m
			}
			if b.Removed {
				delete(m, b.Time)
			} else {
				m[b.Time] = b
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := &SessionBars{Session: info.Session, Tickers: make(map[string][]engine.LiveBar, len(last)), Info: info}
	for t, m := range last {
		if len(m) == 0 {
			continue
		}
		bars := make([]engine.LiveBar, 0, len(m))
		for _, b := range m {
			bars = append(bars, b)
		}
		slices.SortFunc(bars, func(a, b engine.LiveBar) int { return cmp.Compare(a.Time, b.Time) })
		s.Tickers[t] = bars
	}
	return s, nil
}

// LogFiles returns the session logs that paths name: each a session
// log, or a folder whose session-YYYY-MM-DD.log files are taken (not
// below it), in order of session.
func LogFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, p)
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if _, ok := ParseLogName(e.Name()); ok && e.Type().IsRegular() {
				out = append(out, filepath.Join(p, e.Name()))
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return filepath.Base(out[i]) < filepath.Base(out[j]) })
	return out, nil
}

// IntradayReport says what AddIntraday took from session logs.
type IntradayReport struct {
	Sessions []engine.Date // sessions taken
	Later    []engine.Date // sessions after the as-of day, left out
	Bars     int           // 1-minute bars taken
	Tickers  int           // tickers with bars taken (of all sessions, counted once per session)
	// Unknown counts the bars of tickers the universe has no security
	// of, left out (an instrument the snapshot does not list).
	Unknown int
	// Cut counts the bytes of torn tails left out; Damaged the damaged
	// records (lines that are not valid records, LogInfo.Damaged) left
	// out, and DamagedBytes their bytes.
	Cut                   int64
	Damaged, DamagedBytes int64
	// Logs holds, per session taken, what its log's read said (the last
	// record's Seq, stream sequence and completeness: the snapshot's
	// position in the live stream).
	Logs map[engine.Date]LogInfo
}

// AddIntraday takes the 1-minute bars of the session logs at paths (see
// LogFiles) into u.Intraday: the bars of each session up to asOf replace
// whatever u holds for that day, ticker by ticker, for the tickers u has
// a security of. Sessions after asOf are left out (a session under way
// when the snapshot is built). When two logs are of the same session,
// the later path wins.
func AddIntraday(u *engine.Universe, paths []string, asOf engine.Date) (IntradayReport, error) {
	var rep IntradayReport
	files, err := LogFiles(paths)
	if err != nil {
		return rep, err
	}
	known := make(map[string]bool, len(u.Securities))
	for i := range u.Securities {
		known[u.Securities[i].Ticker] = true
	}
	sessions := map[engine.Date]*SessionBars{}
	for _, f := range files {
		s, err := ReadSessionBars(f)
		if err != nil {
			return rep, err
		}
		rep.Cut += s.Info.Cut
		rep.Damaged += int64(len(s.Info.Damaged))
		rep.DamagedBytes += s.Info.DamagedBytes()
		if asOf.Valid() && s.Session > asOf {
			rep.Later = append(rep.Later, s.Session)
			continue
		}
		sessions[s.Session] = s
	}
	if len(sessions) == 0 {
		return rep, nil
	}
	days := make([]engine.Date, 0, len(sessions))
	rep.Logs = make(map[engine.Date]LogInfo, len(sessions))
	for d, s := range sessions {
		days = append(days, d)
		rep.Logs[d] = s.Info
	}
	slices.Sort(days)
	rep.Sessions = days
	byTicker := make(map[string]int, len(u.Intraday))
	for i := range u.Intraday {
		byTicker[u.Intraday[i].Ticker] = i
	}
	// add holds, per ticker, the bars the logs give, by session.
	add := map[string]map[engine.Date][]engine.LiveBar{}
	for _, d := range days {
		for t, bars := range sessions[d].Tickers {
			if !known[t] {
				rep.Unknown += len(bars)
				continue
			}
			if add[t] == nil {
				add[t] = map[engine.Date][]engine.LiveBar{}
			}
			add[t][d] = bars
			rep.Bars += len(bars)
			rep.Tickers++
		}
	}
	tickers := make([]string, 0, len(add))
	for t := range add {
		tickers = append(tickers, t)
	}
	slices.Sort(tickers)
	for _, t := range tickers {
		var old engine.Intraday
		i, had := byTicker[t]
		if had {
			old = u.Intraday[i]
		}
		s := mergeIntraday(t, &old, add[t])
		if had {
			u.Intraday[i] = s
		} else {
			u.Intraday = append(u.Intraday, s)
		}
	}
	slices.SortFunc(u.Intraday, func(a, b engine.Intraday) int { return cmp.Compare(a.Ticker, b.Ticker) })
	return rep, nil
}

// mergeIntraday returns old's bars with those of the sessions in add
// replacing old's of the same days, ascending.
func mergeIntraday(ticker string, old *engine.Intraday, add map[engine.Date][]engine.LiveBar) engine.Intraday {
	old = old.Expanded() // a loaded series may hold only its compact form
	out := engine.Intraday{Ticker: ticker}
	push := func(tm int64, o, h, l, c, v engine.Num, q int64) {
		out.Times = append(out.Times, tm)
		out.Open, out.High, out.Low, out.Close = append(out.Open, o), append(out.High, h), append(out.Low, l), append(out.Close, c)
		out.Volume, out.Quantity = append(out.Volume, v), append(out.Quantity, q)
	}
	for i, tm := range old.Times {
		if _, replaced := add[engine.Date(floorTo(tm, 86400)/86400)]; replaced {
			continue
		}
		push(tm, old.Open[i], old.High[i], old.Low[i], old.Close[i], old.Volume[i], old.Quantity[i])
	}
	for _, bars := range add {
		for _, b := range bars {
			push(b.Time, b.Open, b.High, b.Low, b.Close, b.Volume, b.Quantity)
		}
	}
	idx := make([]int, len(out.Times))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(out.Times[a], out.Times[b]) })
	sorted := engine.Intraday{Ticker: ticker}
	for _, i := range idx {
		sorted.Times = append(sorted.Times, out.Times[i])
		sorted.Open, sorted.High, sorted.Low, sorted.Close = append(sorted.Open, out.Open[i]), append(sorted.High, out.High[i]), append(sorted.Low, out.Low[i]), append(sorted.Close, out.Close[i])
		sorted.Volume, sorted.Quantity = append(sorted.Volume, out.Volume[i]), append(sorted.Quantity, out.Quantity[i])
	}
	return sorted
}
