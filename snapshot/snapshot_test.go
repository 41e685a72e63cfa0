package snapshot

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/pregao/pregao/engine"
)

var update = flag.Bool("update", false, "rewrite testdata/tiny.snap from the hand-built universe")

const goldenPath = "testdata/tiny.snap"

func TestRoundTripHand(t *testing.T) {
	u := handUniverse()
	b := mustWrite(t, u, WriteOptions{})
	got, h := mustDecode(t, b)
	if d := diff(u, got); d != "" {
		t.Fatalf("round trip differs at %s", d)
	}
	if h.FormatVersion != FormatVersion || !h.AsOf.Equal(u.Meta.AsOf) || h.Source != u.Meta.Description || h.Attribution != u.Meta.Attribution {
		t.Errorf("header = %+v", h)
	}
	if !h.BuildTime.Equal(u.Meta.AsOf) {
		t.Errorf("BuildTime = %v, want Meta.AsOf %v when unset", h.BuildTime, u.Meta.AsOf)
	}
	want := map[string]int{"sectors": 2, "companies": 3, "daily": 3, "daily_rows": 3, "intraday_rows": 3, "report_accounts": 3, "ratios": 2, "documents": 1}
	for k, n := range want {
		if h.Counts[k] != n {
			t.Errorf("Counts[%s] = %d, want %d", k, h.Counts[k], n)
		}
	}
	if len(h.ID) != 16 {
		t.Errorf("ID = %q, want 16 hex digits", h.ID)
	}
}

func TestRoundTripRandom(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		u := randomUniverse(t, seed)
		b := mustWrite(t, u, WriteOptions{Level: 1})
		got, h := mustDecode(t, b)
		if d := diff(u, got); d != "" {
			t.Fatalf("seed %d: round trip differs at %s", seed, d)
		}
		again := mustWrite(t, got, WriteOptions{Level: h.Level, BuildTime: h.BuildTime})
		if !bytes.Equal(b, again) {
			t.Fatalf("seed %d: re-encoding the decoded universe changed the bytes", seed)
		}
	}
}

// Nested slices keep nil versus empty (JSON answers null versus []).
func TestNilEmptyPreserved(t *testing.T) {
	u := handUniverse()
	got, _ := mustDecode(t, mustWrite(t, u, WriteOptions{}))
	if got.Companies[0].Characteristics == nil || len(got.Companies[0].Characteristics) != 1 {
		t.Errorf("Characteristics[0] = %#v", got.Companies[0].Characteristics)
	}
	if c := got.Companies[1].Characteristics; c == nil || len(c) != 0 {
		t.Errorf("empty Characteristics decoded as %#v, want non-nil empty", c)
	}
	if c := got.Companies[2].Characteristics; c != nil {
		t.Errorf("nil Characteristics decoded as %#v", c)
	}
	if s := got.Daily[1]; s.Dates == nil || s.Close == nil || s.Len() != 0 {
		t.Errorf("empty series decoded as %#v", s)
	}
	if s := got.Daily[2]; s.Dates != nil || s.Close != nil {
		t.Errorf("nil series decoded as %#v", s)
	}
	if v := got.Derived.Catalog[1].Variables; v == nil {
		t.Errorf("empty Variables decoded as nil")
	}
	if v := got.Derived.Catalog[1].Frequencies; v != nil {
		t.Errorf("nil Frequencies decoded as %#v", v)
	}
	// Nested slices are capped: appending never overwrites a neighbour.
	a := got.Reports[0].Accounts
	if cap(a) != len(a) {
		t.Errorf("Accounts cap %d, len %d", cap(a), len(a))
	}
	if c := got.Daily[0].Close; cap(c) != len(c) {
		t.Errorf("Close cap %d, len %d", cap(c), len(c))
	}
}

// Special values survive bit for bit.
func TestSpecialValues(t *testing.T) {
	u := handUniverse()
	got, _ := mustDecode(t, mustWrite(t, u, WriteOptions{}))
	if v := got.Daily[0].High[1]; reflect.ValueOf(v).Float() == reflect.ValueOf(v).Float() {
		t.Errorf("NaN payload lost: %v", v)
	}
	if got.Companies[0].IPODate != engine.NoDate || got.Securities[0].ListedTo != engine.NoDate {
		t.Errorf("NoDate lost")
	}
	if !got.Documents[0].RetrievalDate.IsZero() || !got.Reports[0].Sources.All()[0].RetrievedAt.IsZero() {
		t.Errorf("zero time lost")
	}
	if got.Reports[0].PublishDate.Time() != t0 {
		t.Errorf("PublishDate = %#v, want %#v", got.Reports[0].PublishDate, t0)
	}
	if got.Companies[0].Description != "Exploração 日本語 🙂" {
		t.Errorf("unicode lost: %q", got.Companies[0].Description)
	}
	// Sub-second times are kept to the nanosecond.
	u2 := handUniverse()
	u2.Reports[0].PublishDate = engine.StampOf(time.Date(2024, 1, 2, 3, 4, 5, 123456789, time.UTC))
	got2, _ := mustDecode(t, mustWrite(t, u2, WriteOptions{}))
	if !got2.Reports[0].PublishDate.Equal(u2.Reports[0].PublishDate) {
		t.Errorf("nanoseconds lost: %v", got2.Reports[0].PublishDate)
	}
}

func TestDeterminism(t *testing.T) {
	defer func(n int) { partTarget = n }(partTarget)
	partTarget = 2 << 10 // many parts
	u := synthUniverse(20, 300, 3, 200, 100)
	a := mustWrite(t, u, WriteOptions{})
	prev := runtime.GOMAXPROCS(1)
	b := mustWrite(t, u, WriteOptions{})
	runtime.GOMAXPROCS(prev)
	if !bytes.Equal(a, b) {
		t.Fatal("same universe, different bytes")
	}
	got, h := mustDecode(t, a)
	if len(h.Sections) < 10 {
		t.Fatalf("%d sections, want many parts", len(h.Sections))
	}
	if d := diff(u, got); d != "" {
		t.Fatalf("multi-part round trip differs at %s", d)
	}
	// A different build time or level changes the bytes, not the ID.
	c := mustWrite(t, u, WriteOptions{BuildTime: t0.Add(time.Hour), Level: 9})
	_, hc := mustDecode(t, c)
	if bytes.Equal(a, c) || hc.ID != h.ID {
		t.Errorf("build time/level: bytes equal %v, IDs %s %s", bytes.Equal(a, c), h.ID, hc.ID)
	}
	if !hc.BuildTime.Equal(t0.Add(time.Hour)) || hc.Level != 9 {
		t.Errorf("header = %v level %d", hc.BuildTime, hc.Level)
	}
	// Different content, different ID.
	u.Daily[0].Close[0]++
	_, hd := mustDecode(t, mustWrite(t, u, WriteOptions{}))
	if hd.ID == h.ID {
		t.Error("content changed, ID did not")
	}
}

// The committed fixture is the encoding of handUniverse: a change of the
// format shows up here (refresh with -update and bump FormatVersion if
// old files no longer read).
func TestGolden(t *testing.T) {
	b := mustWrite(t, handUniverse(), WriteOptions{})
	if *update {
		if err := os.WriteFile(goldenPath, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("encoding of the hand-built universe differs from %s (run with -update if intended)", goldenPath)
	}
	u, h, err := ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(handUniverse(), u); d != "" {
		t.Fatalf("golden decode differs at %s", d)
	}
	rh, err := ReadHeader(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(h, rh); d != "" {
		t.Errorf("ReadHeader differs from Decode's header at %s", d)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.snap")
	u := handUniverse()
	if err := WriteFile(path, u, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil {
		t.Error(err)
	} else if st.Mode().Perm() != 0o644 {
		t.Errorf("snapshot mode = %v, want 0644", st.Mode())
	}
	before, _ := os.ReadFile(path)
	bad := handUniverse()
	bad.Derived.Ratios[0].Indicator = 9
	err := WriteFile(path, bad, WriteOptions{})
	if err == nil || !strings.Contains(err.Error(), "indicator 9 beyond the catalog") {
		t.Fatalf("err = %v", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("failed write changed the existing file")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only the snapshot", len(ents))
	}
	if err := WriteFile(filepath.Join(dir, "missing", "x.snap"), u, WriteOptions{}); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}

func TestWriteErrors(t *testing.T) {
	f := func(name string, mut func(u *engine.Universe, o *WriteOptions), want string) {
		t.Helper()
		u, o := handUniverse(), WriteOptions{}
		mut(u, &o)
		err := Write(&bytes.Buffer{}, u, o)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want it to mention %q", name, err, want)
		}
	}
	f("level", func(u *engine.Universe, o *WriteOptions) { o.Level = 23 }, "level 23")
	f("negative level", func(u *engine.Universe, o *WriteOptions) { o.Level = -1 }, "level -1")
	f("daily columns", func(u *engine.Universe, o *WriteOptions) { u.Daily[0].Trades = nil }, `daily series 0 ("PETR4")`)
	f("intraday columns", func(u *engine.Universe, o *WriteOptions) { u.Intraday[0].Open = u.Intraday[0].Open[:1] }, `intraday series 0`)
	f("fund indicator", func(u *engine.Universe, o *WriteOptions) { u.Derived.FundRatios[0].Indicator = 7 }, "indicator 7 beyond")
	f("time range", func(u *engine.Universe, o *WriteOptions) {
		u.Reports[0].PublishDate = engine.StampOf(time.Unix(1<<62, 0))
	}, "out of the encodable range")
}

// rebuild writes a file from a header and parts, recomputing every
// checksum, so tests can corrupt what lies behind them.
func rebuild(tb testing.TB, h Header, parts [][]byte) []byte {
	tb.Helper()
	h.Sections = append([]Section(nil), h.Sections...)
	off := h.DataOffset
	for i := range h.Sections {
		h.Sections[i].Offset = off
		off += h.Sections[i].Compressed
	}
	return rebuildAs(tb, h, parts)
}

// rebuildAs is rebuild keeping the section offsets of h.
func rebuildAs(tb testing.TB, h Header, parts [][]byte) []byte {
	tb.Helper()
	body, err := encodeHeader(&h)
	if err != nil {
		tb.Fatal(err)
	}
	out := assembleHeader(FormatVersion, body)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func splitFile(tb testing.TB, b []byte) (Header, [][]byte) {
	tb.Helper()
	h, err := parseHeader(b, int64(len(b)))
	if err != nil {
		tb.Fatal(err)
	}
	parts := make([][]byte, len(h.Sections))
	for i, s := range h.Sections {
		parts[i] = append([]byte(nil), b[s.Offset:s.Offset+s.Compressed]...)
	}
	return h, parts
}

func sectionIndex(tb testing.TB, h Header, name string) int {
	for i, s := range h.Sections {
		if s.Name == name {
			return i
		}
	}
	tb.Fatalf("no section %q", name)
	return -1
}

// withRaw replaces the first section of kind name by raw (compressed and
// checksummed properly), so the decoder itself must catch the problem.
func withRaw(tb testing.TB, b []byte, name string, raw []byte) []byte {
	tb.Helper()
	h, parts := splitFile(tb, b)
	i := sectionIndex(tb, h, name)
	zw, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(false))
	comp := zw.EncodeAll(raw, nil)
	parts[i] = comp
	s := &h.Sections[i]
	s.Compressed, s.Raw = int64(len(comp)), int64(len(raw))
	s.Checksum, s.RawChecksum = xxhash.Sum64(comp), xxhash.Sum64(raw)
	return rebuild(tb, h, parts)
}

// pad appends zeros to b up to n bytes, so the section is long enough
// for its item count and the decoder reaches the bad bytes.
func pad(b []byte, n int) []byte {
	for len(b) < n {
		b = append(b, 0)
	}
	return b
}

// rawOf returns the raw section of every item of kind name in u.
func rawOf(u *engine.Universe, name string) []byte {
	k := &kinds[kindIndex(name)]
	e := newPenc(len(k.nests))
	k.enc(e, u, 0, k.count(u))
	return e.finish()
}

func TestCorruption(t *testing.T) {
	good := mustWrite(t, handUniverse(), WriteOptions{})
	h0, _ := splitFile(t, good)
	daily := h0.Sections[sectionIndex(t, h0, "daily")]
	cases := []struct {
		name string
		mut  func() []byte
		is   error
		want string
	}{
		{"empty file", func() []byte { return nil }, ErrTruncated, "shorter than the magic"},
		{"wrong magic", func() []byte { b := bytes.Clone(good); b[0] = 'X'; return b }, ErrFormat, "bad magic"},
		{"not a snapshot", func() []byte { return []byte("{\"json\": true}\n") }, ErrFormat, "bad magic"},
		{"newer version", func() []byte { b := bytes.Clone(good); b[8] = byte(maxReadVersion + 1); return b }, ErrVersion, fmt.Sprintf("newer than the supported %d", maxReadVersion)},
		{"older version", func() []byte { b := bytes.Clone(good); b[8] = 1; return b }, ErrVersion, "older than the oldest supported 4: rebuild"},
		{"version zero", func() []byte { b := bytes.Clone(good); b[8] = 0; return b }, ErrVersion, "version 0"},
		{"huge header length", func() []byte { b := bytes.Clone(good); b[13] = 0xff; return b }, ErrFormat, "header length"},
		{"truncated prefix", func() []byte { return good[:11] }, ErrTruncated, "header prefix"},
		{"truncated header", func() []byte { return good[:40] }, ErrTruncated, "header needs"},
		{"truncated sections", func() []byte { return good[:len(good)-5] }, ErrTruncated, "sections end at byte"},
		{"header checksum", func() []byte {
			b := bytes.Clone(good)
			i := bytes.Index(b, []byte("hand-built"))
			b[i] = 'H'
			return b
		}, ErrChecksum, "header checksum"},
		{"section checksum", func() []byte {
			b := bytes.Clone(good)
			b[daily.Offset+daily.Compressed/2] ^= 0x55
			return b
		}, ErrChecksum, "section 4 (daily): checksum"},
		{"bad zstd", func() []byte {
			h, parts := splitFile(t, good)
			i := sectionIndex(t, h, "daily")
			parts[i] = []byte("this is not zstd at all")
			h.Sections[i].Compressed = int64(len(parts[i]))
			h.Sections[i].Checksum = xxhash.Sum64(parts[i])
			return rebuild(t, h, parts)
		}, ErrFormat, "(daily): bad zstd"},
		{"zstd size lie", func() []byte {
			h, parts := splitFile(t, good)
			i := sectionIndex(t, h, "daily")
			h.Sections[i].Raw++
			return rebuild(t, h, parts)
		}, ErrFormat, "raw bytes, table says"},
		{"raw checksum", func() []byte {
			h, parts := splitFile(t, good)
			i := sectionIndex(t, h, "daily")
			h.Sections[i].RawChecksum++
			return rebuild(t, h, parts)
		}, ErrChecksum, "(daily): raw checksum"},
		{"string index", func() []byte {
			return withRaw(t, good, "renames", []byte{0 /*no strings*/, 5, 0, 0})
		}, ErrFormat, "string index 5 beyond table of 0"},
		{"invalid number tag", func() []byte {
			// one string, then ticker..currency, then a Num with tag 7
			return withRaw(t, good, "securities", []byte{1, 1, 'A', 0, 0, 0, 0, 0, 7, 0, 0, 0,
				1, 1, 'A', 0, 0, 0, 0, 0, 0, 0, 0, 0})
		}, ErrFormat, "invalid number tag 7"},
		{"invalid boolean", func() []byte {
			u := handUniverse()
			raw := rawOf(u, "catalog")
			raw[len(raw)-1] = 2 // ByClass of the last indicator
			return withRaw(t, good, "catalog", raw)
		}, ErrFormat, "invalid boolean 2"},
		{"hostile nested total", func() []byte {
			// no strings, then 2^40 characteristics
			return withRaw(t, good, "companies", pad([]byte{0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20}, 100))
		}, ErrFormat, "length 1099511627776 beyond the remaining"},
		{"hostile daily rows", func() []byte {
			return withRaw(t, good, "daily", pad([]byte{0, 0xff, 0xff, 0xff, 0xff, 0x0f}, 100))
		}, ErrFormat, "beyond the remaining"},
		{"non-minimal varint", func() []byte {
			return withRaw(t, good, "renames", []byte{0x80, 0x00, 0, 0})
		}, ErrFormat, "non-minimal varint"},
		{"trailing section bytes", func() []byte {
			return withRaw(t, good, "renames", append(rawOf(handUniverse(), "renames"), 0))
		}, ErrFormat, "(renames): byte 18: 1 trailing bytes"},
		{"short section", func() []byte {
			raw := rawOf(handUniverse(), "reports")
			return withRaw(t, good, "reports", raw[:len(raw)-3])
		}, ErrFormat, "(reports): byte"},
		{"indicator beyond catalog", func() []byte {
			u := handUniverse()
			u.Derived.Ratios[1].Indicator = 99
			return withRaw(t, good, "ratios", rawOf(u, "ratios"))
		}, ErrFormat, "indicator 99 beyond the catalog of 2"},
		{"row count lie", func() []byte {
			h, parts := splitFile(t, good)
			h.Counts[countDailyRows]++
			return rebuild(t, h, parts)
		}, ErrFormat, "daily_rows = 4, sections hold 3"},
		{"ratio vars fewer than the header says", func() []byte {
			h, parts := splitFile(t, good)
			h.Counts[countRatioVars]++
			return rebuild(t, h, parts)
		}, ErrFormat, "ratio_vars = 3, sections hold 2"},
		{"ratio vars more than the header says", func() []byte {
			h, parts := splitFile(t, good)
			h.Counts[countRatioVars]--
			return rebuild(t, h, parts)
		}, ErrFormat, "vars: 2 reserved, beyond the header's ratio_vars 1"},
		{"ratio vars beyond raw", func() []byte {
			h, parts := splitFile(t, good)
			h.Counts[countRatioVars] = 1 << 39
			return rebuild(t, h, parts)
		}, ErrFormat, "more than the ratios sections'"},
		{"ratio vars beyond a point's count", func() []byte {
			u := handUniverse()
			u.Derived.Ratios[0].NVars = 3 // claims 3 of the 2 stored: Vars is nil, the part then holds 0
			return withRaw(t, good, "ratios", rawOf(u, "ratios"))
		}, ErrFormat, "ratio_vars = 2, sections hold 0"},
		{"entity count lie", func() []byte {
			h, parts := splitFile(t, good)
			h.Counts["sectors"] = 5
			return rebuild(t, h, parts)
		}, ErrFormat, "count sectors = 5 but sections hold 2"},
		{"offset lie", func() []byte {
			h, parts := splitFile(t, good)
			h.Sections[2].Offset++
			return rebuildAs(t, h, parts)
		}, ErrFormat, "section 2 (securities): offset"},
		{"unknown section", func() []byte {
			h, parts := splitFile(t, good)
			h.Sections[0].Name = "bogus"
			return rebuild(t, h, parts)
		}, ErrFormat, `unknown kind "bogus"`},
		{"sections out of order", func() []byte {
			h, parts := splitFile(t, good)
			h.Sections[0], h.Sections[1] = h.Sections[1], h.Sections[0]
			parts[0], parts[1] = parts[1], parts[0]
			return rebuild(t, h, parts)
		}, ErrFormat, "out of order"},
		{"items beyond raw", func() []byte {
			h, parts := splitFile(t, good)
			h.Sections[0].Items = 1 << 30
			h.Counts["sectors"] = 1 << 30
			return rebuild(t, h, parts)
		}, ErrFormat, "items out of range"},
		{"decompression bomb", func() []byte {
			h, parts := splitFile(t, good)
			zw, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(false))
			for i := range parts {
				raw := make([]byte, 20<<20) // compresses about 20000x
				parts[i] = zw.EncodeAll(raw, nil)
				s := &h.Sections[i]
				s.Compressed, s.Raw = int64(len(parts[i])), int64(len(raw))
				s.Checksum, s.RawChecksum = xxhash.Sum64(parts[i]), xxhash.Sum64(raw)
			}
			return rebuild(t, h, parts)
		}, ErrFormat, "raw bytes from a"},
		{"trailing garbage", func() []byte { return append(bytes.Clone(good), "junk"...) }, ErrFormat, "trailing garbage: 4 bytes"},
	}
	dir := t.TempDir()
	defer func(r int64) { pipelineRatio = r }(pipelineRatio)
	for _, c := range cases {
		for _, ratio := range []int64{0, 1 << 40} {
			// 0: every section is decompressed before any decodes;
			// 1<<40: each decodes as soon as it decompresses.
			pipelineRatio = ratio
			t.Run(fmt.Sprintf("%s/ratio=%d", c.name, ratio), func(t *testing.T) {
				b := c.mut()
				// ReadFile reads sections from the file rather than from
				// memory: it must refuse every case the same way.
				path := filepath.Join(dir, "corrupt.snap")
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
				for _, load := range []struct {
					name string
					fn   func() (*engine.Universe, Header, error)
				}{
					{"Decode", func() (*engine.Universe, Header, error) { return Decode(b) }},
					{"ReadFile", func() (*engine.Universe, Header, error) { return ReadFile(path) }},
				} {
					u, _, err := load.fn()
					if err == nil {
						t.Fatalf("%s: decoded a corrupt file: %d companies", load.name, len(u.Companies))
					}
					if !errors.Is(err, c.is) {
						t.Errorf("%s: err = %v, want errors.Is %v", load.name, err, c.is)
					}
					if !strings.Contains(err.Error(), c.want) {
						t.Errorf("%s: err = %q, want it to mention %q", load.name, err, c.want)
					}
				}
			})
		}
	}
}

// ReadHeader refuses what it can see without reading the sections.
func TestReadHeaderErrors(t *testing.T) {
	good := mustWrite(t, handUniverse(), WriteOptions{})
	dir := t.TempDir()
	f := func(name string, b []byte, want string) {
		t.Helper()
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		_, err := ReadHeader(p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", name, err, want)
		}
	}
	f("short", good[:5], "shorter than the magic")
	f("magic", append([]byte("NOTASNAP"), good[8:]...), "bad magic")
	f("truncated", good[:len(good)-1], "sections end at byte")
	f("header", good[:30], "header needs")
	f("trailing", append(bytes.Clone(good), 0), "trailing garbage")
	if _, err := ReadHeader(filepath.Join(dir, "absent")); err == nil {
		t.Error("missing file: no error")
	}
	if _, _, err := ReadFile(filepath.Join(dir, "absent")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestEmptyUniverse(t *testing.T) {
	u := &engine.Universe{}
	got, h := mustDecode(t, mustWrite(t, u, WriteOptions{}))
	if d := diff(u, got); d != "" {
		t.Fatal(d)
	}
	if len(h.Sections) != 0 || !h.BuildTime.IsZero() {
		t.Errorf("header = %+v", h)
	}
}
