package live

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

var sd = engine.MakeDate(2026, 11, 19)

func minute(h, m int) int64 { return int64(sd)*86400 + int64(h*3600+m*60) }

func testRecords() []Record {
	return []Record{
		{Seq: 1, At: minute(13, 1) * 1000, Bars: []engine.LiveBar{
			{Ticker: "PETR4", Time: minute(13, 0), Open: 23.48, High: 23.5, Low: 23.4, Close: 23.45, Volume: 117400.5, Quantity: 5000, Trades: 12},
			{Ticker: "VALE3", Time: minute(13, 0), Open: 0.1 + 0.2, High: 0.3, Low: 0.3, Close: 0.3, Volume: 1e-3, Quantity: 1, Trades: 1},
		}},
		{Seq: 2, At: minute(13, 2) * 1000, Bars: []engine.LiveBar{{Ticker: "PETR4", Time: minute(13, 0), Removed: true}},
			Trades: []Trade{{Ticker: "PETR4", Time: minute(13, 0)*1000 + 5, Price: 23.48, Quantity: 100, ID: "a\"b\\c\n<é>", Cancel: true, AfterMarket: true}}},
		{Seq: 5, At: minute(21, 30) * 1000, Complete: true, Bars: []engine.LiveBar{}},
	}
}

// logBytes returns a log of session sd holding recs.
func logBytes(recs []Record) []byte {
	b := []byte(header(sd))
	for i := range recs {
		b = AppendRecord(b, &recs[i])
	}
	return b
}

func readAllRecords(t *testing.T, b []byte) ([]Record, LogInfo, error) {
	t.Helper()
	var got []Record
	info, err := ReadLog(bytes.NewReader(b), func(r *Record) error {
		got = append(got, *r)
		return nil
	})
	return got, info, err
}

// TestLogRoundTrip: records written are read back equal, bit for bit
// (floats with the fewest digits, strings escaped, removed bars, trades).
func TestLogRoundTrip(t *testing.T) {
	recs := testRecords()
	b := logBytes(recs)
	got, info, err := readAllRecords(t, b)
	if err != nil {
		t.Fatal(err)
	}
	if info.Session != sd || info.Records != 3 || info.Last != 5 || info.Cut != 0 || info.Kept != int64(len(b)) {
		t.Errorf("info %+v", info)
	}
	if !reflect.DeepEqual(got, recs) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, recs)
	}
	if !strings.HasPrefix(string(b), "pregao-session-log 1 2026-11-19\n") {
		t.Errorf("header %q", b[:40])
	}
	// A missing value is null, read back as NaN.
	r := Record{Seq: 1, Bars: []engine.LiveBar{{Ticker: "PETR4", Time: minute(13, 0), Open: engine.Null, High: engine.Num(math.Inf(1))}}}
	line := AppendRecord(nil, &r)
	if !bytes.Contains(line, []byte(`"o":null,"h":null`)) {
		t.Errorf("line %s", line)
	}
	back, err := DecodeRecord(line)
	if err != nil || !math.IsNaN(float64(back.Bars[0].Open)) {
		t.Errorf("decoded %+v, %v", back, err)
	}
}

// TestLogTornTail: a log cut at any byte keeps exactly the whole records
// before the cut and counts the rest as cut, never an error (once the
// header is whole).
func TestLogTornTail(t *testing.T) {
	recs := testRecords()
	full := logBytes(recs)
	ends := []int{len(header(sd))}
	for i := range recs {
		ends = append(ends, len(logBytes(recs[:i+1])))
	}
	for n := len(header(sd)); n <= len(full); n++ {
		got, info, err := readAllRecords(t, full[:n])
		if err != nil {
			t.Fatalf("cut at %d: %v", n, err)
		}
		whole := 0
		for whole+1 < len(ends) && ends[whole+1] <= n {
			whole++
		}
		if len(got) != whole || info.Kept != int64(ends[whole]) || info.Cut != int64(n-ends[whole]) {
			t.Fatalf("cut at %d: %d records, kept %d, cut %d; want %d records, kept %d", n, len(got), info.Kept, info.Cut, whole, ends[whole])
		}
		if (info.Cut > 0) != (info.CutReason != nil) {
			t.Fatalf("cut at %d: cut %d, reason %v", n, info.Cut, info.CutReason)
		}
	}
	for n := 0; n < len(header(sd)); n++ {
		if _, _, err := readAllRecords(t, full[:n]); !errors.Is(err, ErrLogHeader) {
			t.Fatalf("header cut at %d: %v, want ErrLogHeader", n, err)
		}
	}
}

// TestLogCorruptRecord: a whole line whose checksum no longer matches (a
// changed byte), out of sequence or not JSON costs that line only: it is
// skipped and placed (Damaged), the records after it kept, and the
// sequence numbers it stands between are missing; a last line without
// its line feed is a torn tail, cut.
func TestLogCorruptRecord(t *testing.T) {
	recs := testRecords()
	full := logBytes(recs)
	second := len(logBytes(recs[:1]))
	third := len(logBytes(recs[:2]))
	for _, tc := range []struct {
		name    string
		edit    func([]byte) []byte
		seqs    []uint64 // the records kept
		damaged int      // the damaged line's length (0: none)
		missing []SeqRange
		torn    bool
	}{
		{"flipped byte", func(b []byte) []byte { b[second+20] ^= 1; return b }, []uint64{1, 5}, third - second, []SeqRange{{2, 4}}, false},
		{"bad checksum digit", func(b []byte) []byte { b[second] = 'G'; return b }, []uint64{1, 5}, third - second, []SeqRange{{2, 4}}, false},
		{"upper-case checksum", func(b []byte) []byte { copy(b[second:], bytes.ToUpper(b[second:second+8])); return b }, []uint64{1, 5}, third - second, []SeqRange{{2, 4}}, false},
		{"zeroed", func(b []byte) []byte { clear(b[second+3 : third-5]); return b }, []uint64{1, 5}, third - second, []SeqRange{{2, 4}}, false},
		{"seq repeated", func(b []byte) []byte {
			r := recs[1]
			r.Seq = 1
			return append(append(b[:second:second], AppendRecord(nil, &r)...), b[third:]...)
		}, []uint64{1, 5}, len(AppendRecord(nil, &Record{Seq: 1, At: recs[1].At, Bars: recs[1].Bars, Trades: recs[1].Trades})), []SeqRange{{2, 4}}, false},
		{"not json", func(b []byte) []byte {
			line := []byte("00000000 {\"seq\":2,\"bars\":[]")
			return append(append(b[:second:second], line...), '\n')
		}, []uint64{1}, len("00000000 {\"seq\":2,\"bars\":[]\n"), nil, false},
		{"unknown field, torn", func(b []byte) []byte {
			js := []byte(`{"seq":2,"at":0,"bars":[],"extra":1}`)
			line := AppendRecord(nil, &Record{Seq: 2, Bars: []engine.LiveBar{}})
			copy(line[9:], js)
			return append(b[:second:second], line[:9+len(js)]...)
		}, []uint64{1}, 0, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.edit(bytes.Clone(full))
			got, info, err := readAllRecords(t, b)
			if err != nil {
				t.Fatal(err)
			}
			var seqs []uint64
			for _, r := range got {
				seqs = append(seqs, r.Seq)
			}
			if !reflect.DeepEqual(seqs, tc.seqs) || !reflect.DeepEqual(info.Missing, tc.missing) || info.Records != len(got) {
				t.Errorf("records %v, missing %v; want %v, %v", seqs, info.Missing, tc.seqs, tc.missing)
			}
			switch {
			case tc.damaged > 0 && (len(info.Damaged) != 1 || info.Damaged[0].Offset != int64(second) || info.Damaged[0].Length != int64(tc.damaged) || info.Damaged[0].Reason == nil):
				t.Errorf("damaged %+v, want one line of %d bytes at %d", info.Damaged, tc.damaged, second)
			case tc.damaged == 0 && len(info.Damaged) > 0:
				t.Errorf("damaged %+v, want none", info.Damaged)
			case tc.torn != (info.Cut > 0) || tc.torn != (info.CutReason != nil):
				t.Errorf("cut %d (%v), torn %v", info.Cut, info.CutReason, tc.torn)
			case info.Kept+info.DamagedBytes()+info.Cut != int64(len(b)):
				t.Errorf("kept %d + damaged %d + cut %d of %d bytes", info.Kept, info.DamagedBytes(), info.Cut, len(b))
			}
		})
	}
}

// TestOpenLogDamaged: OpenLog keeps every valid record of a log damaged
// in the middle (a flipped byte, 4 KiB zeroed across records), sets the
// damaged bytes aside in a file beside it, byte for byte, writes the log
// again without them, and reports the missing sequence numbers; the log
// reopens clean and takes appends.
func TestOpenLogDamaged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, LogName(sd))
	var recs []Record
	for i := 1; i <= 40; i++ {
		recs = append(recs, Record{Seq: uint64(i), At: minute(13, i) * 1000, Bars: []engine.LiveBar{
			{Ticker: "PETR4", Time: minute(13, i), Open: 23.48, High: 23.5, Low: 23.4, Close: 23.45, Volume: 117400.5, Quantity: 5000, Trades: 12},
			{Ticker: "VALE3", Time: minute(13, i), Open: 61.2, High: 61.3, Low: 61.1, Close: 61.25, Volume: 61250, Quantity: 1000, Trades: 4}}})
	}
	full := logBytes(recs)
	ends := []int{len(header(sd))}
	for i := range recs {
		ends = append(ends, len(logBytes(recs[:i+1])))
	}
	b := bytes.Clone(full)
	b[ends[4]+30] ^= 0x20 // record 5
	zeroFrom := ends[20] + 7
	clear(b[zeroFrom : zeroFrom+4096]) // from within record 21 on
	lastHit := 20
	for ends[lastHit+1] <= zeroFrom+4096 {
		lastHit++
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var got []uint64
	l, info, err := OpenLog(path, sd, func(r *Record) error { got = append(got, r.Seq); return nil })
	if err != nil {
		t.Fatal(err)
	}
	var want []uint64
	for i := 1; i <= 40; i++ {
		if i != 5 && (i < 21 || i > lastHit+1) {
			want = append(want, uint64(i))
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("records %v\nwant %v", got, want)
	}
	if wantMissing := []SeqRange{{5, 5}, {21, uint64(lastHit + 1)}}; !reflect.DeepEqual(info.Missing, wantMissing) || len(info.Damaged) != 2 {
		t.Errorf("missing %v, damaged %+v; want %v", info.Missing, info.Damaged, wantMissing)
	}
	aside, err := os.ReadFile(info.Aside)
	if wantAside := append(bytes.Clone(b[ends[4]:ends[5]]), b[ends[20]:ends[lastHit+1]]...); err != nil || !bytes.Equal(aside, wantAside) || filepath.Dir(info.Aside) != dir {
		t.Errorf("set aside %d bytes in %q (%v), want %d", len(aside), info.Aside, err, len(wantAside))
	}
	if fi, _ := os.Stat(path); fi.Size() != info.Kept || l.Size() != info.Kept || l.Last() != 40 {
		t.Errorf("the log is %d bytes (kept %d, size %d), last %d", fi.Size(), info.Kept, l.Size(), l.Last())
	}
	if err := l.Append(&Record{Seq: 41, Bars: []engine.LiveBar{}}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	got = nil
	_, info, err = OpenLog(path, sd, func(r *Record) error { got = append(got, r.Seq); return nil })
	if err != nil || len(info.Damaged) != 0 || info.Cut != 0 || info.Aside != "" || len(got) != len(want)+1 || info.Last != 41 {
		t.Errorf("reopened: %+v, %d records, %v", info, len(got), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d entries in the folder, want the log and the file set aside", len(ents))
	}
}

// TestOpenLog: a new log is created with its header; appends are read
// back by the next open; a torn tail is cut from the file; another
// session's log, or a file that is not a log, is refused and left alone.
func TestOpenLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, LogName(sd))
	l, info, err := OpenLog(path, sd, nil)
	if err != nil {
		t.Fatal(err)
	}
	if info.Records != 0 || l.Last() != 0 {
		t.Errorf("new log: %+v", info)
	}
	recs := testRecords()
	for i := range recs {
		if err := l.Append(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Append(&Record{Seq: 5, Bars: []engine.LiveBar{}}); err == nil {
		t.Error("append of a seq not above the last: no error")
	}
	l.Close()
	// A torn record after them.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(AppendRecord(nil, &Record{Seq: 9, Bars: []engine.LiveBar{}})[:20])
	f.Close()
	var got []Record
	l, info, err = OpenLog(path, sd, func(r *Record) error { got = append(got, *r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, recs) || info.Cut != 20 || l.Last() != 5 {
		t.Fatalf("reopened: %d records, info %+v", len(got), info)
	}
	if fi, _ := os.Stat(path); fi.Size() != info.Kept {
		t.Errorf("file %d bytes after the cut, want %d", fi.Size(), info.Kept)
	}
	// Undo takes the last append back.
	if err := l.Append(&Record{Seq: 6, Bars: []engine.LiveBar{}}); err != nil {
		t.Fatal(err)
	}
	if err := l.Undo(); err != nil || l.Last() != 5 || l.Size() != info.Kept {
		t.Fatalf("undo: %v, last %d, size %d", err, l.Last(), l.Size())
	}
	if err := l.Undo(); err == nil {
		t.Error("a second undo: no error")
	}
	if err := l.Append(&Record{Seq: 6, Bars: []engine.LiveBar{}}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	_, info, err = OpenLog(path, sd, nil)
	if err != nil || info.Records != 4 || info.Last != 6 || info.Cut != 0 {
		t.Fatalf("after undo and append: %+v, %v", info, err)
	}
	called := false
	if _, _, err := OpenLog(path, sd+1, func(*Record) error { called = true; return nil }); err == nil || !strings.Contains(err.Error(), "2026-11-19, not 2026-11-20") || called {
		t.Errorf("another session's log: %v (records read: %v)", err, called)
	}
	other := filepath.Join(dir, "other.log")
	os.WriteFile(other, []byte("hello\n"), 0o644)
	if _, _, err := OpenLog(other, sd, nil); !errors.Is(err, ErrLogHeader) {
		t.Errorf("not a log: %v", err)
	}
	if b, _ := os.ReadFile(other); string(b) != "hello\n" {
		t.Error("a file that is not a log was changed")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d entries in the folder, want 2 (no temporary file left)", len(ents))
	}
}

// FuzzReadLog: any bytes read as a log never panic; the bytes kept,
// damaged and cut add up to the input, and every record kept, written again, decodes
// to a record that writes the same line.
func FuzzReadLog(f *testing.F) {
	full := logBytes(testRecords())
	f.Add(full)
	f.Add(full[:len(full)-3])
	f.Add([]byte(header(sd)))
	f.Add([]byte(header(sd) + "00000000 {}\n"))
	f.Add([]byte("pregao-session-log 2 2026-11-19\n"))
	f.Add(logBytes(streamRecords()))
	f.Fuzz(func(t *testing.T, b []byte) {
		var recs []Record
		info, err := ReadLog(bytes.NewReader(b), func(r *Record) error { recs = append(recs, *r); return nil })
		if err != nil {
			return
		}
		if info.Kept+info.DamagedBytes()+info.Cut != int64(len(b)) || info.Records != len(recs) {
			t.Fatalf("kept %d + damaged %d + cut %d of %d bytes; %d records of %d", info.Kept, info.DamagedBytes(), info.Cut, len(b), len(recs), info.Records)
		}
		for i := range recs {
			line := AppendRecord(nil, &recs[i])
			back, err := DecodeRecord(line)
			if err != nil {
				t.Fatalf("record %d written again does not decode: %v", i, err)
			}
			if !bytes.Equal(AppendRecord(nil, back), line) {
				t.Fatalf("record %d: not stable", i)
			}
		}
	})
}

// TestLogDocExample: the example of docs/operations.md ("The session
// log") is a valid log: its checksums are right.
func TestLogDocExample(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "```\npregao-session-log 1 ")
	if !ok {
		t.Fatal("no example log in docs/operations.md")
	}
	block, _, _ = strings.Cut(block, "```")
	got, info, err := readAllRecords(t, []byte("pregao-session-log 1 "+block))
	if err != nil || len(got) != 2 || info.Cut != 0 || !got[1].Complete || !got[1].Bars[0].Removed {
		t.Errorf("%d records, %+v, %v", len(got), info, err)
	}
}

// streamRecords are testRecords as a stream feed's copy keeps them: each
// with its stream sequence.
func streamRecords() []Record {
	recs := testRecords()
	for i := range recs {
		recs[i].Stream = uint64(100 + 7*i)
	}
	return recs
}

// The copy of a stream feed's log carries each batch's stream sequence
// (the "stream" field, inside the checksum); a log without it reads as
// before, the sequence 0.
func TestLogStreamSequence(t *testing.T) {
	b := logBytes(streamRecords())
	if !bytes.Contains(b, []byte(`"complete":true,"stream":114,"bars":[]`)) {
		t.Fatalf("the last record lacks its stream sequence:\n%s", b)
	}
	got, info, err := readAllRecords(t, b)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range got {
		if want := uint64(100 + 7*i); r.Stream != want {
			t.Errorf("record %d: stream %d, want %d", i, r.Stream, want)
		}
	}
	if info.LastStream != 114 || !info.LastComplete || info.Last != 5 {
		t.Errorf("info = %+v, want last 5 at stream 114, complete", info)
	}
	// An old log: no stream field, every sequence unknown.
	old := logBytes(testRecords())
	if bytes.Contains(old, []byte(`"stream"`)) {
		t.Fatalf("a record without a stream sequence writes one:\n%s", old)
	}
	got, info, err = readAllRecords(t, old)
	if err != nil || len(got) != 3 || info.Cut != 0 {
		t.Fatalf("old log: %d records, %+v, %v", len(got), info, err)
	}
	for _, r := range got {
		if r.Stream != 0 {
			t.Errorf("old log record %d: stream %d, want 0", r.Seq, r.Stream)
		}
	}
	if info.LastStream != 0 || !info.LastComplete {
		t.Errorf("old log info = %+v", info)
	}
	// A hand-written line with the field: read, the checksum covering it.
	js := `{"seq":1,"at":0,"stream":9,"bars":[]}`
	line := fmt.Sprintf("%08x %s\n", crc32.Checksum([]byte(js), castagnoli), js)
	r, err := DecodeRecord([]byte(line))
	if err != nil || r.Stream != 9 {
		t.Fatalf("DecodeRecord(%q) = %+v, %v", line, r, err)
	}
	if _, err := DecodeRecord([]byte(strings.Replace(line, `"stream":9`, `"stream":8`, 1))); err == nil {
		t.Error("a changed stream sequence passes the checksum")
	}
}
