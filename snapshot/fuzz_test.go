package snapshot

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/pregao/pregao/engine"
)

// FuzzDecode feeds arbitrary files to Decode: it must never panic, and a
// file it accepts must re-encode to the same bytes.
func FuzzDecode(f *testing.F) {
	seed, err := os.ReadFile(goldenPath)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add(mustWrite(f, &engine.Universe{}, WriteOptions{}))
	v4, err := os.ReadFile("testdata/tiny-v4.snap")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(v4)
	f.Add(mustWrite(f, synthUniverse(3, 40, 1, 5, 2), WriteOptions{Version: columnsVersion}))
	f.Fuzz(func(t *testing.T, b []byte) {
		u, h, err := Decode(b)
		if err != nil {
			return
		}
		if h.FormatVersion == columnsVersion {
			// Format 6 re-encodes to the same universe (a wide series of
			// values that fit cents comes back compact).
			u2, _ := mustDecode(t, mustWrite(t, u, WriteOptions{Level: h.Level, BuildTime: h.BuildTime, Version: columnsVersion}))
			if d := sameDaily(u.Daily, u2.Daily); d != "" {
				t.Fatalf("format 6 file re-encoded: daily %s", d)
			}
			a, b := *u, *u2
			a.Daily, b.Daily = nil, nil
			if d := diff(&a, &b); d != "" {
				t.Fatalf("format 6 file re-encoded differs at %s", d)
			}
			return
		}
		again := mustWrite(t, u, WriteOptions{Level: h.Level, BuildTime: h.BuildTime})
		if h.FormatVersion < FormatVersion {
			// An older version re-encodes as this one: the same universe.
			u2, _ := mustDecode(t, again)
			if d := diff(u, u2); d != "" {
				t.Fatalf("version %d file re-encoded differs at %s", h.FormatVersion, d)
			}
			return
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("accepted file re-encodes to different bytes (%d vs %d)", len(again), len(b))
		}
	})
}

// FuzzHeader feeds arbitrary header bodies, behind a valid prefix and
// checksum, to the header parser (the stream position among them): it
// must never panic, and a body it accepts must encode back to itself.
func FuzzHeader(f *testing.F) {
	u := handUniverse()
	var h Header
	for _, u := range []*engine.Universe{u, {Meta: u.Meta}} {
		enc, err := encode(u, WriteOptions{}, false)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(enc.header[prefixLen : len(enc.header)-8])
		h = enc.h
	}
	h.Stream = engine.StreamPosition{}
	body, err := encodeHeader(&h)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(body)
	f.Fuzz(func(t *testing.T, body []byte) {
		b := assembleHeader(FormatVersion, body)
		h, err := parseHeader(b, int64(len(b)))
		if err != nil {
			return
		}
		h.DataOffset = 0
		for i := range h.Sections {
			h.Sections[i].Offset -= int64(len(b))
		}
		again, err := encodeHeader(&h)
		if err != nil {
			t.Fatalf("accepted header does not encode: %v", err)
		}
		if !bytes.Equal(again, body) {
			t.Fatalf("accepted header re-encodes to different bytes")
		}
	})
}

// FuzzSection feeds arbitrary raw section bytes to a kind's decoder,
// behind the checksums: byte 0 picks the kind, byte 1 the item count. It
// must never panic; what decodes must re-encode stably.
func FuzzSection(f *testing.F) {
	u := handUniverse()
	for ki, k := range kinds {
		n := k.count(u)
		if n == 0 || n > 255 {
			continue
		}
		f.Add(append([]byte{byte(ki), byte(n)}, rawOf(u, k.name)...))
	}
	r := synthUniverse(2, 5, 1, 5, 2)
	for _, name := range []string{"daily", "intraday", "reports", "ratios"} {
		k := &kinds[kindIndex(name)]
		f.Add(append([]byte{byte(kindIndex(name)), byte(k.count(r))}, rawOf(r, name)...))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 2 {
			return
		}
		ki := int(b[0]) % len(kinds)
		n := int(b[1])%16 + 1
		k := &kinds[ki]
		u := &engine.Universe{}
		k.alloc(u, n)
		if _, err := decodePart(b[2:], ki, u, 0, n, nil); err != nil {
			return
		}
		switch k.name {
		case "daily":
			sameCompact(t, b[2:], ki, u, n)
		case "intraday":
			sameCompactIntraday(t, b[2:], ki, u, n)
		}
		e := newPenc(len(k.nests))
		k.enc(e, u, 0, n)
		if e.err != nil {
			t.Fatalf("decoded %s do not encode: %v", k.name, e.err)
		}
		raw := e.finish()
		u2 := &engine.Universe{}
		k.alloc(u2, n)
		if _, err := decodePart(raw, ki, u2, 0, n, nil); err != nil {
			t.Fatalf("re-encoded %s do not decode: %v", k.name, err)
		}
		if d := diff(u, u2); d != "" {
			t.Fatalf("%s: re-encoding changed %s", k.name, d)
		}
		e2 := newPenc(len(k.nests))
		k.enc(e2, u2, 0, n)
		if !bytes.Equal(e2.finish(), raw) {
			t.Fatalf("%s: encoding is not stable", k.name)
		}
	})
}

// sameCompact checks that a daily part that decodes wide also decodes as
// a load decodes it (compact), to the same rows bit for bit.
func sameCompact(t *testing.T, raw []byte, ki int, wide *engine.Universe, n int) {
	t.Helper()
	uc := &engine.Universe{}
	kinds[ki].alloc(uc, n)
	if _, err := decodePart(raw, ki, uc, 0, n, &loadState{compactDaily: true}); err != nil {
		t.Fatalf("daily part decodes wide but not compact: %v", err)
	}
	bits := func(x engine.Num) uint64 { return math.Float64bits(float64(x)) }
	for i := 0; i < n; i++ {
		a, b := engine.NewDailyBars(&wide.Daily[i]), engine.NewDailyBars(&uc.Daily[i])
		if a.Ticker != b.Ticker || a.Len() != b.Len() {
			t.Fatalf("series %d: %s/%d vs %s/%d", i, a.Ticker, a.Len(), b.Ticker, b.Len())
		}
		for r := 0; r < a.Len(); r++ {
			if a.Dates[r] != b.Dates[r] || bits(a.Open(r)) != bits(b.Open(r)) || bits(a.High(r)) != bits(b.High(r)) ||
				bits(a.Low(r)) != bits(b.Low(r)) || bits(a.Close(r)) != bits(b.Close(r)) || bits(a.Volume(r)) != bits(b.Volume(r)) ||
				a.Quantity(r) != b.Quantity(r) || a.Trades(r) != b.Trades(r) {
				t.Fatalf("series %s row %d differs between the wide and the compact decode", a.Ticker, r)
			}
		}
	}
}

// sameCompactIntraday is sameCompact for an intraday part.
func sameCompactIntraday(t *testing.T, raw []byte, ki int, wide *engine.Universe, n int) {
	t.Helper()
	uc := &engine.Universe{}
	kinds[ki].alloc(uc, n)
	if _, err := decodePart(raw, ki, uc, 0, n, &loadState{compactDaily: true}); err != nil {
		t.Fatalf("intraday part decodes wide but not compact: %v", err)
	}
	for i := 0; i < n; i++ {
		if d := sameMinutes(wide.Intraday[i].Bars(), uc.Intraday[i].Bars()); d != "" {
			t.Fatalf("series %d differs between the wide and the compact decode: %s", i, d)
		}
	}
}

// FuzzAccountIndex reads an index of the account columns from the
// fuzzer's bytes: refused or read, never a panic; what is read writes
// back to the same bytes.
func FuzzAccountIndex(f *testing.F) {
	u := synthUniverse(3, 10, 0, 4, 2)
	_, ix, err := writeAccountColumns(u.Reports, func([]byte) error { return nil })
	if err != nil {
		f.Fatal(err)
	}
	f.Add(appendAccountIndex(nil, ix))
	f.Add([]byte{1, 1, 1, 49, 0, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := readAccountIndex(b)
		if err != nil {
			return
		}
		if got := appendAccountIndex(nil, x); string(got) != string(b) {
			t.Fatalf("read %x, wrote back %x", b, got)
		}
		_ = checkBlocks(x.Blocks, accountBytes*x.Accounts)
	})
}

// FuzzLoadLazy feeds arbitrary files to Load as pregao serve loads a
// format 6 file (mapped, blocks verified on use): it must never panic; a
// file it accepts whose blocks all verify (CheckAll) reads whole (every
// bar, report account and ratio point), and is what a load verifying
// everything at open (pregao verify) accepts, and the reverse.
func FuzzLoadLazy(f *testing.F) {
	small := mustWrite(f, synthUniverse(3, 40, 1, 5, 2), WriteOptions{Version: columnsVersion})
	f.Add(small)
	h, err := parseHeader(small, int64(len(small)))
	if err != nil {
		f.Fatal(err)
	}
	bad := bytes.Clone(small)
	bad[h.ColumnsOffset+h.Columns/2] ^= 1 // a byte of a block
	f.Add(bad)
	f.Add(small[:len(small)-1])
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "f.snap")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, eager := Load(path, LoadOptions{Workers: 1})
		ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1, Workers: 1})
		if err == nil {
			err = ds.CheckAll()
			if err != nil && ds.BlockErr() == nil {
				t.Fatalf("CheckAll: %v, but BlockErr nil", err)
			}
		}
		if (err == nil) != (eager == nil) {
			t.Fatalf("lazily, every block verified: %v; verifying everything at open: %v", err, eager)
		}
		if err != nil {
			return
		}
		for i := range ds.Assets() {
			a := &ds.Assets()[i]
			for r := range a.Daily.Len() {
				a.DailyBar(r, true)
			}
			for r := range a.Intraday.Len() {
				a.Intraday.Close(r)
			}
		}
		for i := range ds.Issuers() {
			is := &ds.Issuers()[i]
			for _, r := range is.Reports() {
				acc := r.AccountList()
				for j := range acc.Len() {
					acc.At(j)
				}
			}
			for _, s := range is.Ratios() {
				for k := range s.Points {
					ds.RatioVars(&s.Points[k])
				}
			}
			is.FundRatios()
		}
	})
}
