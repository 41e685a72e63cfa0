package bus_test

import (
	"fmt"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/session/bus"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// A batch of the live session as the stream carries it: Encode makes
// the message a feed publishes (its subject names the session, its
// headers the session and the batch's sequence number, its body the
// batch's session-log record), and DecodeMsg is what every replica
// applies, refusing a message whose parts disagree.
func ExampleEncode() {
	day := engine.CivilDate(2026, 11, 19)
	minute := day.Time().Add(13*3600e9 + 5*60e9).Unix() // 10:05 in São Paulo
	rec := &live.Record{Seq: 7, At: (minute + 61) * 1000, Bars: []engine.LiveBar{
		{Ticker: "PETR4", Time: minute, Open: 38.5, High: 38.62, Low: 38.47, Close: 38.6, Volume: 1_543_210.5, Quantity: 40_000, Trades: 312},
	}}
	msg, err := bus.Encode(day, rec, false)
	if err != nil {
		panic(err)
	}
	fmt.Println(msg.Subject, msg.Header.Get(bus.HeaderSession), msg.Header.Get(bus.HeaderSeq))

	b, err := bus.DecodeMsg(msg.Subject, msg.Header, msg.Data)
	if err != nil {
		panic(err)
	}
	bar := b.LiveBatch().Bars[0]
	fmt.Println(b.Session, b.Record.Seq, bar.Ticker, bar.Close, bar.Quantity)

	// A message moved to another session's subject is refused.
	_, err = bus.DecodeMsg(bus.Subject(day+1), msg.Header, msg.Data)
	fmt.Println(err)
	// Output:
	// pregao.live.2026-11-19 2026-11-19 7
	// 2026-11-19 7 PETR4 38.6 40000
	// not a live batch message: subject "pregao.live.2026-11-20", the session header says 2026-11-19
}
