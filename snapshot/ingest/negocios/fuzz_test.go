package negocios

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// FuzzScanner reads arbitrary bytes as a trade file (text or zip) in both
// modes: no panic, the Aggregator counts every row once, and every row
// read is written back in the 2026 layout and read again unchanged.
func FuzzScanner(f *testing.F) {
	for _, rel := range []string{
		"b3-negocios/renserrano__dados-intraday-python/teste-intraday.txt",
		"b3-negocios/matheus-alvs01dev__b3-challenge/mock-csv.txt",
	} {
		p, err := datafile.RealPath(rel)
		if err != nil {
			f.Fatal(err)
		}
		b, err := datafile.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	local, _ := filepath.Glob("testdata/*.txt")
	poll, _ := filepath.Glob("testdata/poll/*")
	local = append(local, poll...)
	for _, p := range local {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(zipOf(f, map[string]string{"a.txt": hdr + "2021-02-19;ABCD3;0;11,000;10;102946807;10;1;2021-02-19\n"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, lenient := range []bool{false, true} {
			file, err := OpenBytes(b, "fuzz.txt", Options{Lenient: lenient})
			if err != nil {
				continue
			}
			var rows []Trade
			for file.Next() {
				rows = append(rows, *file.Trade())
			}
			if len(rows) > 0 {
				a := NewAggregator(rows[0].TradeDate, Config{AfterMarket: lenient})
				a.Apply(rows)
				st := a.Stats()
				if n := st.Trades + st.Cancels + st.UnknownCancels + st.Duplicates + st.Refused(); n != int64(len(rows)) {
					t.Fatalf("%d rows counted of %d: %+v", n, len(rows), st)
				}
			}
			var buf bytes.Buffer
			w, err := NewWriter(&buf)
			if err != nil {
				t.Fatal(err)
			}
			for i := range rows {
				if err := w.Write(&rows[i]); err != nil {
					t.Fatalf("row %+v read but not written: %v", rows[i], err)
				}
			}
			w.Flush()
			back, err := OpenBytes(buf.Bytes(), "back.txt", Options{})
			if err != nil {
				t.Fatal(err)
			}
			i := 0
			for ; back.Next(); i++ {
				if i >= len(rows) || *back.Trade() != rows[i] {
					t.Fatalf("row %d: read back %+v, want %d rows %+v", i, *back.Trade(), len(rows), rows)
				}
			}
			if err := back.Err(); err != nil || i != len(rows) {
				t.Fatalf("written rows do not read back: %d of %d, %v", i, len(rows), err)
			}
		}
	})
}
