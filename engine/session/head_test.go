package session

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// TestLogHandover: the handover log is a warning that counts the
// tickers whose 1-minute bars in the snapshot end before their last live
// minute and those the snapshot does not list; without either it is
// information.
func TestLogHandover(t *testing.T) {
	u := demo.GenerateSize(5, demo.Size{Companies: 2, FIIs: 1, IntradayTickers: 1, IntradaySessions: 1, ReportsFrom: 2025, FundReportsFrom: 2025, EventsFrom: 2025})
	ds, err := engine.Build(u)
	if err != nil {
		t.Fatal(err)
	}
	var with *engine.Asset
	for i := range ds.Assets() {
		if a := &ds.Assets()[i]; a.Intraday.Len() > 0 {
			with = a
			break
		}
	}
	if with == nil {
		t.Fatal("no ticker with 1-minute bars in the demo")
	}
	last := with.Intraday.Times[with.Intraday.Len()-1]
	day := engine.DateOf(ds.AsOf())
	for _, c := range []struct {
		name    string
		minutes map[string]int64
		want    []string
	}{
		{"covered", map[string]int64{with.Ticker: last}, []string{"level=INFO", "tickers=1", "tickers_with_fewer_minutes_in_the_snapshot=0", "tickers_not_in_the_snapshot=0"}},
		{"a gap and a stranger", map[string]int64{with.Ticker: last + 60, "ZZZZ3": last}, []string{"level=WARN", "tickers=2", "tickers_with_fewer_minutes_in_the_snapshot=1", "tickers_not_in_the_snapshot=1"}},
	} {
		var b bytes.Buffer
		logHandover(slog.New(slog.NewTextHandler(&b, nil)), ds, day, 42, c.minutes)
		for _, w := range append(c.want, "seq=42", "session="+day.String()) {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: %q lacks %q", c.name, b.String(), w)
			}
		}
	}
}
