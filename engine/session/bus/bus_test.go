package bus

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

var sd = engine.CivilDate(2026, 11, 19)

// minute returns the unix seconds of session sd's minute at hh:mm UTC.
func minute(hh, mm int) int64 { return int64(sd)*86400 + int64(hh*3600+mm*60) }

func record(seq uint64, bars ...engine.LiveBar) *live.Record {
	return &live.Record{Seq: seq, At: minute(14, int(seq))*1000 + 5000, Bars: bars}
}

func bar(ticker string, hh, mm int, c engine.Num) engine.LiveBar {
	return engine.LiveBar{Ticker: ticker, Time: minute(hh, mm), Open: c, High: c + 1, Low: c - 1, Close: c, Volume: c * 100, Quantity: 100, Trades: 3}
}

func TestEncodeDecode(t *testing.T) {
	rec := record(7, bar("PETR4", 13, 5, 23.5), engine.LiveBar{Ticker: "VALE3", Time: minute(13, 4), Removed: true})
	rec.Complete = true
	m, err := Encode(sd, rec, true)
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != "pregao.live.2026-11-19" || m.Header.Get(HeaderSeq) != "7" || m.Header.Get(HeaderSession) != "2026-11-19" {
		t.Fatalf("message %s %v", m.Subject, m.Header)
	}
	if id := m.Header.Get(nats.MsgIdHdr); !strings.HasPrefix(id, "2026-11-19/7/") || len(id) != len("2026-11-19/7/")+8 {
		t.Fatalf("dedup id %q", id)
	}
	b, err := DecodeMsg(m.Subject, m.Header, m.Data)
	if err != nil {
		t.Fatal(err)
	}
	if b.Session != sd || !b.Virtual || b.Record.Seq != 7 || !b.Record.Complete || len(b.Record.Bars) != 2 || b.Record.Bars[0] != rec.Bars[0] || !b.Record.Bars[1].Removed {
		t.Fatalf("decoded %+v", b.Record)
	}
	lb := b.LiveBatch()
	if lb.Seq != 7 || lb.Session != sd || !lb.Complete || len(lb.Bars) != 2 {
		t.Fatalf("live batch %+v", lb)
	}
	// Another batch under the same sequence number has another id: a
	// replica that refused the first can take it.
	m2, _ := Encode(sd, record(7, bar("PETR4", 13, 5, 24)), false)
	if m2.Header.Get(nats.MsgIdHdr) == m.Header.Get(nats.MsgIdHdr) {
		t.Fatal("two different batches share a deduplication id")
	}
}

func TestDecodeRefuses(t *testing.T) {
	good, _ := Encode(sd, record(3, bar("PETR4", 13, 5, 23.5)), false)
	hdr := func(over map[string]string) func(string) string {
		return func(k string) string {
			if v, ok := over[k]; ok {
				return v
			}
			return good.Header.Get(k)
		}
	}
	other, _ := Encode(sd, record(4, bar("PETR4", 13, 5, 23.5)), false)
	corrupt := append([]byte(nil), good.Data...)
	corrupt[20] ^= 1
	for _, tc := range []struct {
		name    string
		subject string
		over    map[string]string
		data    []byte
	}{
		{"another session's subject", "pregao.live.2026-11-20", nil, good.Data},
		{"no session header", good.Subject, map[string]string{HeaderSession: ""}, good.Data},
		{"session header not a date", good.Subject, map[string]string{HeaderSession: "2026-13-01"}, good.Data},
		{"no sequence header", good.Subject, map[string]string{HeaderSeq: ""}, good.Data},
		{"sequence header 0", good.Subject, map[string]string{HeaderSeq: "0"}, good.Data},
		{"sequence header with a sign", good.Subject, map[string]string{HeaderSeq: "+3"}, good.Data},
		{"sequence header with a leading zero", good.Subject, map[string]string{HeaderSeq: "03"}, good.Data},
		{"sequence header not the record's", good.Subject, map[string]string{HeaderSeq: "4"}, good.Data},
		{"body of another batch", good.Subject, nil, other.Data},
		{"corrupt body", good.Subject, nil, corrupt},
		{"empty body", good.Subject, nil, nil},
		{"not a record", good.Subject, nil, []byte("hello")},
		{"too big", good.Subject, nil, make([]byte, MaxMessage+1)},
		{"unknown clock", good.Subject, map[string]string{HeaderClock: "wall"}, good.Data},
		{"dedup id of another batch", good.Subject, map[string]string{nats.MsgIdHdr: other.Header.Get(nats.MsgIdHdr)}, good.Data},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Decode(tc.subject, hdr(tc.over), tc.data)
			if err == nil || !errors.Is(err, ErrMessage) || b != nil {
				t.Fatalf("Decode = %v, %v; want ErrMessage", b, err)
			}
		})
	}
	if _, err := Decode(good.Subject, hdr(map[string]string{nats.MsgIdHdr: ""}), good.Data); err != nil {
		t.Fatalf("a message without a dedup id: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	good, _ := Encode(sd, record(3, bar("PETR4", 13, 5, 23.5)), false)
	f.Add(good.Subject, "2026-11-19", "3", good.Header.Get(nats.MsgIdHdr), good.Data)
	f.Add(good.Subject, "2026-11-19", "3", "", good.Data[:len(good.Data)-4])
	f.Add("pregao.live.x", "x", "-1", "", []byte("00000000 {}\n"))
	f.Fuzz(func(t *testing.T, subject, session, seq, id string, data []byte) {
		h := map[string]string{HeaderSession: session, HeaderSeq: seq, nats.MsgIdHdr: id}
		if len(data) > 0 && data[len(data)-1] == '\n' {
			h[HeaderClock] = "virtual"
		}
		b, err := Decode(subject, func(k string) string { return h[k] }, data)
		if err != nil {
			if b != nil || !errors.Is(err, ErrMessage) {
				t.Fatalf("Decode = %v, %v", b, err)
			}
			return
		}
		// What decodes encodes back to the same message.
		m, err := Encode(b.Session, b.Record, b.Virtual)
		if err != nil {
			t.Fatal(err)
		}
		if m.Subject != subject || b.Record.Seq == 0 {
			t.Fatalf("subject %q from %q", m.Subject, subject)
		}
		if _, err := DecodeMsg(m.Subject, m.Header, m.Data); err != nil {
			t.Fatalf("re-encoded message refused: %v", err)
		}
	})
}

// openEmbedded opens a bus on an embedded server in a temporary folder.
func openEmbedded(t *testing.T, dir string) *Bus {
	t.Helper()
	b, err := Open(Config{URL: Embedded, Dir: dir, Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEmbeddedPublishDedupConsume(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	b := openEmbedded(t, dir)
	if b.Server() == nil || b.Server().Addr() != nil {
		t.Fatalf("the embedded server listens (%v) though no address was asked", b.Server().Addr())
	}
	next := sd + 1
	recs := []struct {
		sd  engine.Date
		rec *live.Record
	}{
		{sd, record(1, bar("PETR4", 13, 1, 10))},
		{sd, record(2, bar("PETR4", 13, 2, 11))},
		{sd, record(3, bar("VALE3", 13, 2, 50))},
		{next, record(1, bar("PETR4", 13, 1, 12))},
	}
	for i, r := range recs {
		seq, dup, err := b.Publish(ctx, r.sd, r.rec, false)
		if err != nil || dup || seq != uint64(i+1) {
			t.Fatalf("publish %d: seq %d dup %v err %v", i, seq, dup, err)
		}
	}
	// Every batch published again: dropped by the stream.
	for i, r := range recs {
		seq, dup, err := b.Publish(ctx, r.sd, r.rec, false)
		if err != nil || !dup || seq != uint64(i+1) {
			t.Fatalf("publish again %d: seq %d dup %v err %v", i, seq, dup, err)
		}
	}
	head, _, err := b.Head(ctx)
	if err != nil || head != 4 {
		t.Fatalf("head %d, %v; want 4", head, err)
	}
	// ReadSession: the session's batches only.
	var seqs []uint64
	if bad, err := b.ReadSession(ctx, sd, func(r *live.Record) error { seqs = append(seqs, r.Seq); return nil }); err != nil || bad != 0 {
		t.Fatalf("ReadSession: %v, %d bad", err, bad)
	}
	if len(seqs) != 3 || seqs[0] != 1 || seqs[2] != 3 {
		t.Fatalf("session batches %v", seqs)
	}
	if _, err := b.ReadSession(ctx, sd+5, func(*live.Record) error { t.Fatal("a batch of an empty session"); return nil }); err != nil {
		t.Fatal(err)
	}
	// A message that does not decode, published beside the feed.
	if _, err := b.js.Publish(ctx, Subject(sd), []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	// Consume from stream sequence 2, in order; the bad message is handed
	// over with its error.
	got := make(chan *Delivery, 16)
	cctx, ccancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- b.Consume(cctx, 2, func(d *Delivery) { got <- d }, nil) }()
	for want := uint64(2); want <= 5; want++ {
		select {
		case d := <-got:
			if d.StreamSeq != want || d.Gap != 0 || d.Delivered != 1 {
				t.Fatalf("delivery %+v, want stream seq %d", d, want)
			}
			if want == 5 {
				if d.Err == nil || d.Batch != nil || d.Pending != 0 {
					t.Fatalf("the bad message: %+v", d)
				}
			} else if d.Err != nil || d.Batch.Record.Seq != recs[want-1].rec.Seq || d.Batch.Session != recs[want-1].sd {
				t.Fatalf("delivery %d: %+v %v", want, d.Batch, d.Err)
			}
		case <-ctx.Done():
			t.Fatalf("no delivery %d", want)
		}
	}
	ccancel()
	<-done
	b.Close()

	// The store outlives the process: a new server holds the same stream.
	b = openEmbedded(t, dir)
	defer b.Close()
	if head, _, err := b.Head(ctx); err != nil || head != 5 {
		t.Fatalf("head after a restart %d, %v; want 5", head, err)
	}
	if seq, dup, err := b.Publish(ctx, recs[0].sd, recs[0].rec, false); err != nil || !dup || seq != 1 {
		t.Fatalf("publish again after a restart: %d %v %v", seq, dup, err)
	}
}

func TestConsumeReportsAGap(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := openEmbedded(t, t.TempDir())
	defer b.Close()
	for i := uint64(1); i <= 4; i++ {
		if _, _, err := b.Publish(ctx, sd, record(i, bar("PETR4", 13, int(i), 10)), false); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := b.EnsureStream(ctx)
	if err := s.DeleteMsg(ctx, 3); err != nil {
		t.Fatal(err)
	}
	got := make(chan *Delivery, 8)
	cctx, ccancel := context.WithCancel(ctx)
	defer ccancel()
	go b.Consume(cctx, 2, func(d *Delivery) { got <- d }, nil)
	for _, want := range []struct{ seq, gap uint64 }{{2, 0}, {4, 1}} {
		d := <-got
		if d.StreamSeq != want.seq || d.Gap != want.gap {
			t.Fatalf("delivery %d gap %d, want %d gap %d", d.StreamSeq, d.Gap, want.seq, want.gap)
		}
	}
}

// A client of a server that goes away says so (Connected false,
// DownSince set) and says it again once the server is back.
func TestDownSince(t *testing.T) {
	dir := t.TempDir()
	ln := freeListen(t)
	srv, err := Open(Config{URL: Embedded, Dir: dir, Listen: ln})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Open(Config{URL: "nats://" + ln, Name: "client"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitFor(t, func() bool { return c.Connected() })
	if !c.DownSince().IsZero() {
		t.Fatal("DownSince set while connected")
	}
	srv.Close()
	waitFor(t, func() bool { return !c.Connected() && !c.DownSince().IsZero() })
	srv, err = Open(Config{URL: Embedded, Dir: dir, Listen: ln})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	waitFor(t, func() bool { return c.Connected() && c.DownSince().IsZero() })
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("condition not reached in 20 s")
		}
	}
}

func freeListen(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Message gets one message by stream sequence; Bounds gives the stream's
// first and last; the read paths give each record its stream sequence,
// and a record's own Stream never goes into a message.
func TestMessageBoundsStreamSequences(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := openEmbedded(t, t.TempDir())
	defer b.Close()
	if _, err := b.Message(ctx, 1); !errors.Is(err, ErrGone) {
		t.Fatalf("Message without a stream: %v, want ErrGone", err)
	}
	if first, last, err := b.Bounds(ctx); err != nil || first != 0 || last != 0 {
		t.Fatalf("Bounds without a stream: %d %d %v", first, last, err)
	}
	for i := uint64(1); i <= 4; i++ {
		rec := record(i, bar("PETR4", 13, int(i), 10))
		rec.Stream = 99 // a copy's field: not part of the message
		if seq, _, err := b.Publish(ctx, sd, rec, false); err != nil || seq != i {
			t.Fatalf("publish %d: %d %v", i, seq, err)
		}
	}
	plain, _ := Encode(sd, record(2, bar("PETR4", 13, 2, 10)), false)
	bt, err := b.Message(ctx, 2)
	if err != nil || bt.Session != sd || bt.Record.Seq != 2 || bt.Record.Stream != 2 {
		t.Fatalf("Message(2) = %+v, %v", bt, err)
	}
	if got, _ := Encode(sd, bt.Record, false); string(got.Data) != string(plain.Data) || got.Header.Get(nats.MsgIdHdr) != plain.Header.Get(nats.MsgIdHdr) {
		t.Fatalf("a record's stream sequence went into its message:\n%s\n%s", got.Data, plain.Data)
	}
	if _, err := b.Message(ctx, 5); !errors.Is(err, ErrGone) {
		t.Fatalf("Message(5) past the head: %v, want ErrGone", err)
	}
	s, _ := b.EnsureStream(ctx)
	if err := s.DeleteMsg(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Message(ctx, 1); !errors.Is(err, ErrGone) {
		t.Fatalf("Message(1) deleted: %v, want ErrGone", err)
	}
	if first, last, err := b.Bounds(ctx); err != nil || first != 2 || last != 4 {
		t.Fatalf("Bounds = %d %d %v, want 2 4", first, last, err)
	}
	var streams []uint64
	if _, err := b.ReadSession(ctx, sd, func(r *live.Record) error { streams = append(streams, r.Stream); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(streams) != 3 || streams[0] != 2 || streams[2] != 4 {
		t.Fatalf("ReadSession stream sequences %v, want [2 3 4]", streams)
	}
	if seq, last, err := b.LastOfSession(ctx, sd); err != nil || seq != 4 || last.Record.Stream != 4 {
		t.Fatalf("LastOfSession = %d %+v %v", seq, last, err)
	}
	got := make(chan *Delivery, 8)
	cctx, ccancel := context.WithCancel(ctx)
	defer ccancel()
	go b.Consume(cctx, 3, func(d *Delivery) { got <- d }, nil)
	if d := <-got; d.StreamSeq != 3 || d.Batch.Record.Stream != 3 {
		t.Fatalf("delivery %d with record stream %d", d.StreamSeq, d.Batch.Record.Stream)
	}
}

// A consumer that stops delivering while the stream holds messages past
// the last it delivered (here: paused on the server, which still sends
// it heartbeats, so that the client library sees nothing wrong) is made
// again from the next sequence, and the stall is reported.
func TestConsumeRemakesAStalledConsumer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := openEmbedded(t, t.TempDir())
	defer b.Close()
	old := stallAfter
	stallAfter = 300 * time.Millisecond
	t.Cleanup(func() { stallAfter = old })
	for i := uint64(1); i <= 2; i++ {
		if _, _, err := b.Publish(ctx, sd, record(i, bar("PETR4", 13, int(i), 10)), false); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan *Delivery, 8)
	errs := make(chan error, 8)
	cctx, ccancel := context.WithCancel(ctx)
	defer ccancel()
	go b.Consume(cctx, 1, func(d *Delivery) { got <- d }, func(err error) { errs <- err })
	next := func(want uint64) {
		t.Helper()
		select {
		case d := <-got:
			if d.StreamSeq != want {
				t.Fatalf("delivery %d, want %d", d.StreamSeq, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no delivery %d", want)
		}
	}
	next(1)
	next(2)
	s, err := b.EnsureStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := s.ConsumerNames(ctx)
	paused := 0
	for n := range names.Name() {
		if _, err := b.js.PauseConsumer(ctx, StreamName, n, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		paused++
	}
	if paused == 0 {
		t.Fatal("no consumer to pause")
	}
	for i := uint64(3); i <= 4; i++ {
		if _, _, err := b.Publish(ctx, sd, record(i, bar("PETR4", 13, int(i), 10)), false); err != nil {
			t.Fatal(err)
		}
	}
	next(3)
	next(4)
	select {
	case err := <-errs:
		if !strings.Contains(err.Error(), "delivered nothing") {
			t.Errorf("reported %v, want the stall", err)
		}
	default:
		t.Error("the stall was not reported")
	}
}
