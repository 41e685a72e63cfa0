package session

import (
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/session/bus"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// TestPositionFromLogs: the position is the stream sequence after the
// last batch of the last session, only when that session's log is a
// stream feed's complete copy; otherwise none, and why.
func TestPositionFromLogs(t *testing.T) {
	d1, d2 := engine.CivilDate(2026, 11, 18), engine.CivilDate(2026, 11, 19)
	u := &engine.Universe{
		Securities: []engine.Security{{Ticker: "PETR4"}, {Ticker: "SELIC", StockType: engine.ClassMacro}},
		Daily:      []engine.Series{{Ticker: "PETR4", Dates: []engine.Date{d1, d2}}, {Ticker: "SELIC", Dates: []engine.Date{d2 + 5}}},
	}
	complete := live.LogInfo{Records: 300, Last: 300, LastStream: 1234, LastComplete: true}
	for _, c := range []struct {
		name string
		rep  live.IntradayReport
		want engine.StreamPosition
		why  string
	}{
		{"no log", live.IntradayReport{}, engine.StreamPosition{}, "no session log up to the as-of day"},
		{"complete copy", live.IntradayReport{Sessions: []engine.Date{d1, d2}, Logs: map[engine.Date]live.LogInfo{d2: complete}},
			engine.StreamPosition{Next: 1235, Name: bus.StreamName, Session: d2, Batch: 300}, ""},
		{"the last session has no log", live.IntradayReport{Sessions: []engine.Date{d1}, Logs: map[engine.Date]live.LogInfo{d1: complete}},
			engine.StreamPosition{}, "no session log of the last session 2026-11-19"},
		{"empty", live.IntradayReport{Sessions: []engine.Date{d2}, Logs: map[engine.Date]live.LogInfo{d2: {}}}, engine.StreamPosition{}, "holds no batch"},
		{"a serve's own log", live.IntradayReport{Sessions: []engine.Date{d2}, Logs: map[engine.Date]live.LogInfo{d2: {Records: 3, Last: 3, LastComplete: true}}},
			engine.StreamPosition{}, "carries no stream sequences"},
		{"damaged", live.IntradayReport{Sessions: []engine.Date{d2}, Logs: map[engine.Date]live.LogInfo{d2: {Records: 3, Last: 300, LastStream: 9, LastComplete: true, Missing: []live.SeqRange{{First: 7, Last: 9}}}}},
			engine.StreamPosition{}, "lacks damaged batches (7 to 9)"},
		{"incomplete", live.IntradayReport{Sessions: []engine.Date{d2}, Logs: map[engine.Date]live.LogInfo{d2: {Records: 3, Last: 3, LastStream: 9}}},
			engine.StreamPosition{}, "is not complete (batch 3 is its last)"},
	} {
		got, why := PositionFromLogs(u, &c.rep)
		if got != c.want || c.why == "" && why != "" || !strings.Contains(why, c.why) {
			t.Errorf("%s: %+v %q, want %+v %q", c.name, got, why, c.want, c.why)
		}
	}
	// The macro series' later dates are no session.
	if got := lastSessionOf(u); got != d2 {
		t.Errorf("last session %s, want %s", got, d2)
	}
}
