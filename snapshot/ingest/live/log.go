package live

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/atomicfile"
)

// The session log (format version 1) is a text file, one line per record:
//
//	pregao-session-log 1 2026-11-19
//	bfc54021 {"seq":1,"at":1795093205000,"bars":[{"t":"PETR4","m":1795093200,"o":23.48,"h":23.5,"l":23.4,"c":23.45,"v":117400.5,"q":5000,"n":12}]}
//	2fb1d365 {"seq":2,"at":1795093265000,"complete":true,"bars":[{"t":"PETR4","m":1795093200,"x":true}]}
//
// The first line names the format, its version and the session (the day,
// YYYY-MM-DD). Each later line is one applied batch: the CRC-32C
// (Castagnoli) of the JSON text as 8 lower-case hexadecimal digits, a
// space, the JSON object, a line feed. The object's fields:
//
//   - seq: the batch's sequence number, strictly increasing along the file.
//   - at: the feed's clock when the batch was applied, unix milliseconds.
//   - complete: true when the feed has nothing more for the session.
//   - stream: the batch's sequence in the live stream (NATS JetStream,
//     package bus), from 1; only in the copy of the session log a feed
//     that publishes to the stream keeps in --live-dir, never in a stream
//     message. Optional: a log without it (every log written before it
//     existed, a serve without --live) reads as before, the sequence
//     unknown (0).
//   - bars: the 1-minute bars (engine.LiveBar): t ticker, m the minute's
//     start (unix seconds, UTC), o h l c prices in BRL, v the volume in
//     BRL, q the quantity, n the trade count, x true for a minute taken
//     out (every trade cancelled; no value then). Numbers are written
//     with the fewest digits that give the same float64 back; a missing
//     value is null.
//   - trades: the trades a push of trades carried (their bars are in
//     bars): t ticker, ms the time (unix milliseconds, UTC), p the price
//     in BRL, q the quantity, id the trade's id, x true for a
//     cancellation, am true for the after-market. Kept so that a restart
//     rebuilds the aggregation the later trades and cancellations of the
//     session are applied to.
//
// A record is appended with one write and made durable (fsync) before
// the batch is acknowledged. The header is written with the file, which
// appears whole (a temporary file renamed). A crash can only leave a
// torn last record: a last line without its line feed, which the reader
// cuts, counted (LogInfo.Cut). A whole line that is not a valid record
// (a checksum that does not match, JSON that does not decode, a sequence
// number not above the previous one: a damaged disk, a stray write)
// costs that line only: the reader skips it, counted with its place
// (LogInfo.Damaged), and keeps every valid record after it; the
// sequence numbers between the records around it are missing
// (LogInfo.Missing). OpenLog sets the damaged bytes aside in a file
// beside the log (LogInfo.Aside) before it writes the log again without
// them.

// LogMagic starts the header line of a session log.
const LogMagic = "pregao-session-log"

// LogVersion is the version of the session log format written.
const LogVersion = 1

// MaxRecord bounds one record's line (256 MiB): a longer line is treated
// as damage, and Append refuses a batch that would need one.
const MaxRecord = 256 << 20

// Record is one applied batch of the session log.
type Record struct {
	Seq      uint64
	At       int64 // the feed's clock at the apply, unix milliseconds
	Complete bool
	// Stream is the batch's stream sequence (the "stream" field; 0:
	// unknown, and always 0 in a stream message).
	Stream uint64
	Bars   []engine.LiveBar
	// Trades are the trades of a push of trades (nil otherwise).
	Trades []Trade
}

// Trade is one trade (or cancellation) of a push, as the session log
// keeps it.
type Trade = engine.LiveTrade

// LogName returns the name of session d's log in a live folder:
// session-YYYY-MM-DD.log.
func LogName(d engine.Date) string { return "session-" + d.String() + ".log" }

// ParseLogName returns the session of a LogName, and false for other
// names.
func ParseLogName(name string) (engine.Date, bool) {
	if len(name) != len("session-2006-01-02.log") || name[:8] != "session-" || filepath.Ext(name) != ".log" {
		return engine.NoDate, false
	}
	d, err := engine.ParseDate(name[8:18])
	return d, err == nil
}

// LogInfo describes a session log read.
type LogInfo struct {
	Session engine.Date
	Records int    // records kept
	Last    uint64 // the last record's Seq (0: none)
	// LastStream is the last record's stream sequence (Record.Stream; 0:
	// none, or unknown) and LastComplete whether it is complete.
	LastStream   uint64
	LastComplete bool
	// Kept is the length in bytes of the header and the records kept;
	// Cut the bytes of a torn last line, cut away, and CutReason why
	// (nil when nothing was cut).
	Kept, Cut int64
	CutReason error
	// Damaged are the whole lines that are not valid records, skipped, in
	// file order; Missing the ranges of sequence numbers between two
	// records kept that damaged lines stand between (the batches the
	// damage took). Aside is the file OpenLog set the damaged bytes aside
	// in ("": none).
	Damaged []Damage
	Missing []SeqRange
	Aside   string
}

// Damage is a whole line of a session log that is not a valid record.
type Damage struct {
	Offset, Length int64 // bytes from the file's start; the line feed included
	Reason         error
}

// SeqRange is the sequence numbers First to Last.
type SeqRange struct{ First, Last uint64 }

// DamagedBytes returns the bytes of the damaged lines.
func (i *LogInfo) DamagedBytes() int64 {
	var n int64
	for _, d := range i.Damaged {
		n += d.Length
	}
	return n
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header returns the header line of session sd.
func header(sd engine.Date) string {
	return fmt.Sprintf("%s %d %s\n", LogMagic, LogVersion, sd)
}

// ErrLogHeader is wrapped by the error of a file that does not start with
// a session log's header.
var ErrLogHeader = errors.New("not a session log")

// parseHeader parses a header line (without its line feed).
func parseHeader(line []byte) (engine.Date, error) {
	f := strings.Fields(string(line))
	if len(f) != 3 || f[0] != LogMagic {
		return engine.NoDate, fmt.Errorf("%w: header %.60q", ErrLogHeader, line)
	}
	if f[1] != strconv.Itoa(LogVersion) {
		return engine.NoDate, fmt.Errorf("%w: version %q, this program reads version %d", ErrLogHeader, f[1], LogVersion)
	}
	d, err := engine.ParseDate(f[2])
	if err != nil {
		return engine.NoDate, fmt.Errorf("%w: session %q", ErrLogHeader, f[2])
	}
	return d, nil
}

// AppendRecord appends r's line (checksum, JSON, line feed) to dst.
func AppendRecord(dst []byte, r *Record) []byte {
	start := len(dst)
	dst = append(dst, "00000000 "...)
	js := len(dst)
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendUint(dst, r.Seq, 10)
	dst = append(dst, `,"at":`...)
	dst = strconv.AppendInt(dst, r.At, 10)
	if r.Complete {
		dst = append(dst, `,"complete":true`...)
	}
	if r.Stream > 0 {
		dst = append(dst, `,"stream":`...)
		dst = strconv.AppendUint(dst, r.Stream, 10)
	}
	dst = append(dst, `,"bars":[`...)
	for i := range r.Bars {
		b := &r.Bars[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"t":`...)
		dst = appendString(dst, b.Ticker)
		dst = append(dst, `,"m":`...)
		dst = strconv.AppendInt(dst, b.Time, 10)
		if b.Removed {
			dst = append(dst, `,"x":true}`...)
			continue
		}
		for _, f := range [...]struct {
			k string
			v engine.Num
		}{{`,"o":`, b.Open}, {`,"h":`, b.High}, {`,"l":`, b.Low}, {`,"c":`, b.Close}, {`,"v":`, b.Volume}} {
			dst = append(dst, f.k...)
			dst = appendNum(dst, f.v)
		}
		dst = append(dst, `,"q":`...)
		dst = strconv.AppendInt(dst, b.Quantity, 10)
		dst = append(dst, `,"n":`...)
		dst = strconv.AppendInt(dst, b.Trades, 10)
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if r.Trades != nil {
		dst = append(dst, `,"trades":[`...)
		for i := range r.Trades {
			t := &r.Trades[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"t":`...)
			dst = appendString(dst, t.Ticker)
			dst = append(dst, `,"ms":`...)
			dst = strconv.AppendInt(dst, t.Time, 10)
			dst = append(dst, `,"p":`...)
			dst = appendNum(dst, t.Price)
			dst = append(dst, `,"q":`...)
			dst = strconv.AppendInt(dst, t.Quantity, 10)
			dst = append(dst, `,"id":`...)
			dst = appendString(dst, t.ID)
			if t.Cancel {
				dst = append(dst, `,"x":true`...)
			}
			if t.AfterMarket {
				dst = append(dst, `,"am":true`...)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = append(dst, '}')
	var sum [4]byte
	c := crc32.Checksum(dst[js:], castagnoli)
	sum[0], sum[1], sum[2], sum[3] = byte(c>>24), byte(c>>16), byte(c>>8), byte(c)
	hex.Encode(dst[start:start+8], sum[:])
	return append(dst, '\n')
}

// appendNum appends n as a JSON number (the shortest decimal that reads
// back as the same float64), or null when it is not finite.
func appendNum(dst []byte, n engine.Num) []byte {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// appendString appends s as a JSON string: plain when it is printable
// ASCII without quotes or backslashes (every ticker), else as
// encoding/json writes it (invalid UTF-8 becomes U+FFFD).
func appendString(dst []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			plain = false
			break
		}
	}
	if plain {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	b, _ := json.Marshal(s) // a string always encodes
	return append(dst, b...)
}

type barJSON struct {
	T string     `json:"t"`
	M int64      `json:"m"`
	O engine.Num `json:"o"`
	H engine.Num `json:"h"`
	L engine.Num `json:"l"`
	C engine.Num `json:"c"`
	V engine.Num `json:"v"`
	Q int64      `json:"q"`
	N int64      `json:"n"`
	X bool       `json:"x"`
}

type tradeJSON struct {
	T  string     `json:"t"`
	Ms int64      `json:"ms"`
	P  engine.Num `json:"p"`
	Q  int64      `json:"q"`
	ID string     `json:"id"`
	X  bool       `json:"x"`
	Am bool       `json:"am"`
}

type recordJSON struct {
	Seq      *uint64     `json:"seq"`
	At       int64       `json:"at"`
	Complete bool        `json:"complete"`
	Stream   uint64      `json:"stream"`
	Bars     *[]barJSON  `json:"bars"`
	Trades   []tradeJSON `json:"trades"`
}

// DecodeRecord decodes one record line (with or without its line feed).
func DecodeRecord(line []byte) (*Record, error) {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	if len(line) < 10 || line[8] != ' ' {
		return nil, errors.New("not a record line")
	}
	var sum [4]byte
	if _, err := hex.Decode(sum[:], line[:8]); err != nil || !isLowerHex(line[:8]) {
		return nil, errors.New("bad checksum field")
	}
	js := line[9:]
	want := uint32(sum[0])<<24 | uint32(sum[1])<<16 | uint32(sum[2])<<8 | uint32(sum[3])
	if got := crc32.Checksum(js, castagnoli); got != want {
		return nil, fmt.Errorf("checksum %08x, the record's is %08x", got, want)
	}
	var rj recordJSON
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rj); err != nil {
		return nil, fmt.Errorf("record: %v", err)
	}
	if dec.More() {
		return nil, errors.New("record: text after the object")
	}
	if rj.Seq == nil || *rj.Seq == 0 || rj.Bars == nil {
		return nil, errors.New("record: seq (from 1) and bars are required")
	}
	r := &Record{Seq: *rj.Seq, At: rj.At, Complete: rj.Complete, Stream: rj.Stream, Bars: make([]engine.LiveBar, len(*rj.Bars))}
	for i, b := range *rj.Bars {
		r.Bars[i] = engine.LiveBar{Ticker: b.T, Time: b.M, Open: b.O, High: b.H, Low: b.L, Close: b.C, Volume: b.V,
			Quantity: b.Q, Trades: b.N, Removed: b.X}
	}
	if rj.Trades != nil {
		r.Trades = make([]Trade, len(rj.Trades))
		for i, t := range rj.Trades {
			r.Trades[i] = Trade{Ticker: t.T, Time: t.Ms, Price: t.P, Quantity: t.Q, ID: t.ID, Cancel: t.X, AfterMarket: t.Am}
		}
	}
	return r, nil
}

func isLowerHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// ReadLog reads a session log from r, calling fn with each valid record
// in order (fn's error stops the read and is returned). A whole line that
// is not a valid record above the previous one is skipped
// (LogInfo.Damaged, LogInfo.Missing); a torn last line ends the read
// (LogInfo.Cut). The file is not changed. A missing or unreadable header
// is an error wrapping ErrLogHeader.
func ReadLog(r io.Reader, fn func(*Record) error) (LogInfo, error) {
	return readLog(r, engine.NoDate, fn)
}

// ErrOtherSession is wrapped by the error of a log of another session
// than the one asked (OpenLog).
var ErrOtherSession = errors.New("the log of another session")

// readLog is ReadLog; when want is a valid date, a log of another
// session is an error before any record is read.
func readLog(r io.Reader, want engine.Date, fn func(*Record) error) (LogInfo, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var info LogInfo
	line, err := readLine(br, 256)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, errLong) || errors.Is(err, errTorn) {
			return info, fmt.Errorf("%w: no header line", ErrLogHeader)
		}
		return info, err
	}
	if info.Session, err = parseHeader(line[:len(line)-1]); err != nil {
		return info, err
	}
	if want.Valid() && info.Session != want {
		return info, fmt.Errorf("%w: %s, not %s", ErrOtherSession, info.Session, want)
	}
	info.Kept = int64(len(line))
	off := info.Kept // the next line's offset
	damaged := false // damaged lines since the last record kept
	for {
		line, err := readLine(br, MaxRecord)
		if errors.Is(err, io.EOF) {
			return info, nil
		}
		if errors.Is(err, errLong) {
			// A line longer than a record may be: damage up to its line
			// feed, or a torn tail when there is none.
			n := int64(len(line))
			rest, rerr := br.ReadSlice('\n')
			for errors.Is(rerr, bufio.ErrBufferFull) {
				n += int64(len(rest))
				rest, rerr = br.ReadSlice('\n')
			}
			n += int64(len(rest))
			switch {
			case rerr == nil:
				info.Damaged = append(info.Damaged, Damage{Offset: off, Length: n, Reason: fmt.Errorf("byte %d: %w", off, errLong)})
				off += n
				damaged = true
				continue
			case errors.Is(rerr, io.EOF):
				info.Cut = n
				info.CutReason = fmt.Errorf("record %d (byte %d): %w", info.Records+1, off, errLong)
				return info, nil
			default:
				return info, rerr
			}
		}
		if errors.Is(err, errTorn) {
			rest, rerr := io.Copy(io.Discard, br)
			if rerr != nil {
				return info, rerr
			}
			info.Cut = int64(len(line)) + rest
			info.CutReason = fmt.Errorf("record %d (byte %d): %w", info.Records+1, off, err)
			return info, nil
		}
		if err != nil {
			return info, err
		}
		rec, err := DecodeRecord(line)
		if err == nil && rec.Seq <= info.Last {
			err = fmt.Errorf("seq %d not above %d", rec.Seq, info.Last)
		}
		if err != nil {
			info.Damaged = append(info.Damaged, Damage{Offset: off, Length: int64(len(line)), Reason: fmt.Errorf("byte %d: %w", off, err)})
			off += int64(len(line))
			damaged = true
			continue
		}
		if damaged && rec.Seq > info.Last+1 {
			info.Missing = append(info.Missing, SeqRange{info.Last + 1, rec.Seq - 1})
		}
		damaged = false
		if fn != nil {
			if err := fn(rec); err != nil {
				return info, err
			}
		}
		info.Records++
		info.Last = rec.Seq
		info.LastStream, info.LastComplete = rec.Stream, rec.Complete
		info.Kept += int64(len(line))
		off += int64(len(line))
	}
}

var (
	errTorn = errors.New("torn record: no line feed at the end of the file")
	errLong = errors.New("line longer than a record may be")
)

// readLine returns the next line with its line feed; at the end of the
// input a last line without one (errTorn, the text returned), or io.EOF
// when nothing is left; errLong (with what was read) for a line of more
// than max bytes.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(line) > max {
				return line, errLong
			}
		case errors.Is(err, io.EOF):
			if len(line) == 0 {
				return nil, io.EOF
			}
			return line, errTorn
		default:
			return line, err
		}
	}
}

// Log is a session log open for appending. It is not safe for concurrent
// use.
type Log struct {
	f       *os.File
	path    string
	session engine.Date
	size    int64
	last    uint64
	buf     []byte
	// undo is the size and last Seq before the last Append (undoOK: it
	// can be undone).
	undoSize int64
	undoLast uint64
	undoOK   bool
}

// OpenLog opens the session log of session sd at path, creating it (with
// its header, atomically) when absent, and calls fn with each record it
// holds. A torn last line is cut from the file (truncated, made durable);
// damaged lines are set aside, whole, in a file beside the log
// (PATH.damaged-TIME, LogInfo.Aside), made durable before the log is
// written again without them (a temporary file renamed): every valid
// record stays. Both are described in the LogInfo. A file that is not a
// session log (ErrLogHeader) or is another session's is an error before
// fn is called, and left as it is.
func OpenLog(path string, sd engine.Date, fn func(*Record) error) (*Log, LogInfo, error) {
	info := LogInfo{Session: sd}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		if err := createLog(path, sd); err != nil {
			return nil, info, err
		}
		f, err = os.OpenFile(path, os.O_RDWR, 0)
	}
	if err != nil {
		return nil, info, err
	}
	info, err = readLog(f, sd, fn)
	switch {
	case err != nil:
	case len(info.Damaged) > 0:
		f, err = rewriteLog(f, path, &info)
	case info.Cut > 0:
		if err = f.Truncate(info.Kept); err == nil {
			err = f.Sync()
		}
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		return nil, info, fmt.Errorf("session log %s: %w", path, err)
	}
	return &Log{f: f, path: path, session: sd, size: info.Kept, last: info.Last}, info, nil
}

// rewriteLog sets the damaged lines of the log f at path aside (its file
// name in info.Aside) and replaces the log with its header and valid
// records (no torn tail either); it returns the new file, open for
// appending (f is closed). On error the log is as it was.
func rewriteLog(f *os.File, path string, info *LogInfo) (*os.File, error) {
	aside := fmt.Sprintf("%s.damaged-%s", path, time.Now().UTC().Format("20060102T150405.000000000"))
	err := atomicfile.WriteFile(aside, 0o600, func(w io.Writer) error {
		for _, d := range info.Damaged {
			if _, err := io.Copy(w, io.NewSectionReader(f, d.Offset, d.Length)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return f, fmt.Errorf("setting damaged records aside: %w", err)
	}
	info.Aside = aside
	st, err := f.Stat()
	if err != nil {
		return f, err
	}
	end := st.Size() - info.Cut
	err = atomicfile.WriteFile(path, 0o600, func(w io.Writer) error {
		at := int64(0)
		for _, d := range append(info.Damaged, Damage{Offset: end}) {
			if _, err := io.Copy(w, io.NewSectionReader(f, at, d.Offset-at)); err != nil {
				return err
			}
			at = d.Offset + d.Length
		}
		return nil
	})
	if err != nil {
		return f, fmt.Errorf("writing the log without its damaged records: %w", err)
	}
	f.Close()
	return os.OpenFile(path, os.O_RDWR, 0)
}

// createLog writes a log holding only the header of sd at path,
// atomically (atomicfile.WriteFile: synced, renamed, the folder synced).
func createLog(path string, sd engine.Date) error {
	return atomicfile.WriteFile(path, 0o600, func(w io.Writer) error {
		_, err := io.WriteString(w, header(sd))
		return err
	})
}

// Path returns the log's file.
func (l *Log) Path() string { return l.path }

// Session returns the log's session.
func (l *Log) Session() engine.Date { return l.session }

// Last returns the Seq of the last record (0: none).
func (l *Log) Last() uint64 { return l.last }

// Size returns the log's length in bytes.
func (l *Log) Size() int64 { return l.size }

// Append appends r and makes it durable (fsync) before it returns. r.Seq
// must be above the last record's. On error the file is cut back to what
// it held (the record is not in the log).
func (l *Log) Append(r *Record) error {
	if l.f == nil {
		return errors.New("session log closed")
	}
	if r.Seq <= l.last {
		return fmt.Errorf("session log: seq %d not above %d", r.Seq, l.last)
	}
	l.buf = AppendRecord(l.buf[:0], r)
	if len(l.buf) > MaxRecord {
		return fmt.Errorf("session log: batch %d needs a record of %d bytes, more than %d", r.Seq, len(l.buf), MaxRecord)
	}
	if cap(l.buf) > 4<<20 {
		defer func() { l.buf = nil }() // a rare huge batch: do not keep its buffer
	}
	_, err := l.f.WriteAt(l.buf, l.size)
	if err == nil {
		err = l.f.Sync()
	}
	if err != nil {
		l.f.Truncate(l.size) // best effort; a torn tail is cut by the next open anyway
		return fmt.Errorf("session log %s: %w", l.path, err)
	}
	l.undoSize, l.undoLast, l.undoOK = l.size, l.last, true
	l.size += int64(len(l.buf))
	l.last = r.Seq
	return nil
}

// Undo removes the record of the last Append (a batch the engine refused
// after it was logged) and makes that durable. Only that one record can
// be undone.
func (l *Log) Undo() error {
	if l.f == nil || !l.undoOK {
		return errors.New("session log: nothing to undo")
	}
	if err := l.f.Truncate(l.undoSize); err != nil {
		return fmt.Errorf("session log %s: %w", l.path, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("session log %s: %w", l.path, err)
	}
	l.size, l.last, l.undoOK = l.undoSize, l.undoLast, false
	return nil
}

// Close closes the file.
func (l *Log) Close() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
