package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/pregao/pregao/engine"
)

// Series summaries (format 6): each non-empty series of the daily and
// intraday column indexes carries what engine.Build reads of it at open
// (engine.DailySummary, engine.IntradaySummary), so that a load reads
// no page of the column area before a request does. The writer computes
// them from the bars it writes; a block's check (blockChecks) computes
// them again from the block's bytes and compares, so a summary that
// does not match its bars makes its block bad, as a checksum mismatch
// does.
//
// As stored (fixed width, little-endian, after the series' block number
// in the index):
//   - daily, 136 bytes: the first date (int32 days); the last bar and
//     the one before it, each as its date (int32; NoDate and zeros for
//     the second of a series of one bar), open, high, low, close and
//     volume (float64 bits, as the engine's accessors give them: NaN for
//     missing), quantity and trades (int64); the date (int32; NoDate for
//     fewer than three bars) and close (float64 bits) of the bar before
//     those two;
//   - intraday, 64 bytes: first and last bar time (int64 unix seconds),
//     then the last session's open, high, low, close, volume and
//     quantity (float64 bits).

const (
	dailyTailBytes    = 136
	intradayTailBytes = 64
)

// tailWriters are the summaries the writer stores: dailyTail and
// intradayTail (a test has them make wrong ones).
type tailWriters struct {
	daily    func(*engine.DailyBars) string
	intraday func(*engine.Intraday) string
}

var writeTails = tailWriters{daily: dailyTail, intraday: intradayTail}

// errSummary is wrapped by the error of a block whose checksum matches
// but one of whose series' summaries is not its bars'.
var errSummary = errors.New("block summary mismatch")

// tailBytes returns the bytes of a series summary of kind ("daily" or
// "intraday") in its index.
func tailBytes(kind string) int {
	if kind == "intraday" {
		return intradayTailBytes
	}
	return dailyTailBytes
}

func numBits(v engine.Num) uint64 { return math.Float64bits(float64(v)) }
func bitsNum(u uint64) engine.Num { return engine.Num(math.Float64frombits(u)) }
func appendNum(dst []byte, v engine.Num) []byte {
	return binary.LittleEndian.AppendUint64(dst, numBits(v))
}

// dailyTail returns the stored summary of a daily series (its rows
// through DailyBars), "" for one of no rows.
func dailyTail(b *engine.DailyBars) string {
	sm, ok := engine.SummarizeDaily(b)
	if !ok {
		return ""
	}
	le := binary.LittleEndian
	t := make([]byte, 0, dailyTailBytes)
	t = le.AppendUint32(t, uint32(sm.First))
	for _, r := range [...]*engine.SummaryBar{&sm.Last, &sm.Prev} {
		t = le.AppendUint32(t, uint32(r.Date))
		for _, v := range [...]engine.Num{r.Open, r.High, r.Low, r.Close, r.Volume} {
			t = appendNum(t, v)
		}
		t = le.AppendUint64(t, uint64(r.Quantity))
		t = le.AppendUint64(t, uint64(r.Trades))
	}
	t = le.AppendUint32(t, uint32(sm.Before))
	t = appendNum(t, sm.BeforeClose)
	return string(t)
}

// readDailyTail returns the summary stored as t (dailyTailBytes).
func readDailyTail(t string) engine.DailySummary {
	b := []byte(t)
	le := binary.LittleEndian
	date := func() engine.Date {
		d := engine.Date(int32(le.Uint32(b)))
		b = b[4:]
		return d
	}
	num := func() engine.Num {
		v := bitsNum(le.Uint64(b))
		b = b[8:]
		return v
	}
	i64 := func() int64 {
		v := int64(le.Uint64(b))
		b = b[8:]
		return v
	}
	row := func() engine.SummaryBar {
		r := engine.SummaryBar{Date: date()}
		r.Open, r.High, r.Low, r.Close, r.Volume = num(), num(), num(), num(), num()
		r.Quantity, r.Trades = i64(), i64()
		return r
	}
	sm := engine.DailySummary{First: date()}
	sm.Last = row()
	sm.Prev = row()
	sm.Before = date()
	sm.BeforeClose = num()
	return sm
}

// intradayTail returns the stored summary of an intraday series, "" for
// one of no bars.
func intradayTail(s *engine.Intraday) string {
	sm, ok := engine.SummarizeIntraday(s)
	if !ok {
		return ""
	}
	le := binary.LittleEndian
	t := make([]byte, 0, intradayTailBytes)
	t = le.AppendUint64(t, uint64(sm.First))
	t = le.AppendUint64(t, uint64(sm.Last))
	for _, v := range [...]engine.Num{sm.Open, sm.High, sm.Low, sm.Close, sm.Volume, sm.Quantity} {
		t = appendNum(t, v)
	}
	return string(t)
}

// readIntradayTail returns the summary stored as t (intradayTailBytes).
func readIntradayTail(t string) engine.IntradaySummary {
	b := []byte(t)
	le := binary.LittleEndian
	return engine.IntradaySummary{
		First: int64(le.Uint64(b)), Last: int64(le.Uint64(b[8:])),
		Open: bitsNum(le.Uint64(b[16:])), High: bitsNum(le.Uint64(b[24:])), Low: bitsNum(le.Uint64(b[32:])),
		Close: bitsNum(le.Uint64(b[40:])), Volume: bitsNum(le.Uint64(b[48:])), Quantity: bitsNum(le.Uint64(b[56:])),
	}
}

// dailyTailOf checks that daily series c of sec has the summary its
// bars give.
func dailyTailOf(sec []byte, c dailyCol) error {
	s := dailySeriesAt(sec, c)
	engine.KeepWide(&s)
	if dailyTail(s.Bars()) != c.Tail {
		return fmt.Errorf("%w: daily series %s: its summary is not its bars'", errSummary, c.Ticker)
	}
	return nil
}

// intradayTailOf checks that intraday series c of sec has the summary
// its bars give.
func intradayTailOf(sec []byte, c dailyCol) error {
	s := intradaySeriesAt(sec, c)
	if intradayTail(&s) != c.Tail {
		return fmt.Errorf("%w: intraday series %s: its summary is not its bars'", errSummary, c.Ticker)
	}
	return nil
}
