package negocios

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestWriterRoundTrip writes rows in the 2026 layout and reads them back.
func TestWriterRoundTrip(t *testing.T) {
	d := day(2026, 11, 19)
	rows := []Trade{
		{RefDate: d, TradeDate: d, Ticker: "PLAE3", Session: 1, Price: 23480, Quantity: 100, Time: at(d, 10, 0, 0, 123), ID: 10, Buyer: 3, Seller: 8},
		{RefDate: d, TradeDate: d, Ticker: "PLAE3", Action: ActionCancel, Session: 1, Price: 23480, Quantity: 100, Time: at(d, 0, 0, 0, 0), ID: 10},
		{RefDate: d, TradeDate: d + 1, Ticker: "LITA11", Session: 6, Price: 1, Quantity: 1, Time: at(d+1, 23, 59, 59, 999), ID: 1 << 40, Seller: 1<<31 - 1},
		{RefDate: d, TradeDate: d, Ticker: "DI1F27", Session: 1, Price: -35, Quantity: 10, Time: at(d, 9, 15, 0, 1), ID: 10},
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if err := w.Write(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	wantFirst := "\ufeff" + Header2026 + "\n2026-11-19;PLAE3;0;23,480;100;100000123;10;1;2026-11-19;3;8\n"
	if !strings.HasPrefix(text, wantFirst) {
		t.Errorf("text starts %q\nwant %q", text[:min(len(text), len(wantFirst))], wantFirst)
	}
	if !strings.Contains(text, "\n2026-11-19;DI1F27;0;-0,035;10;091500001;10;1;2026-11-19;;\n") {
		t.Errorf("text %q", text)
	}
	f, err := OpenBytes(buf.Bytes(), "w.txt", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, f); !reflect.DeepEqual(got, rows) {
		t.Errorf("read back %+v\nwant %+v", got, rows)
	}
	bad := rows[0]
	bad.Time = at(d+1, 0, 0, 0, 0)
	if err := w.Write(&bad); err == nil {
		t.Error("a time outside the trade date was written")
	}
}

// TestWriteDay writes the 2026 archive under its names.
func TestWriteDay(t *testing.T) {
	d := day(2026, 11, 19)
	if ZipName(d) != "20261119_NEGOCIOSAVISTA.zip" || TextName(d) != "19-11-2026_NEGOCIOSAVISTA_RV.txt" {
		t.Fatalf("names %s %s", ZipName(d), TextName(d))
	}
	dir := filepath.Join(t.TempDir(), "session")
	rows := []Trade{{RefDate: d, TradeDate: d, Ticker: "PLAE3", Session: 1, Price: 23480, Quantity: 100, Time: at(d, 10, 0, 0, 123), ID: 10}}
	each := func(yield func(*Trade) error) error {
		for i := range rows {
			if err := yield(&rows[i]); err != nil {
				return err
			}
		}
		return nil
	}
	p, n, err := WriteDay(dir, d, each)
	if err != nil || n != 1 || filepath.Base(p) != ZipName(d) {
		t.Fatalf("%s %d %v", p, n, err)
	}
	zr, err := zip.OpenReader(p)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if len(zr.File) != 1 || zr.File[0].Name != TextName(d) {
		t.Fatalf("archive holds %v", zr.File)
	}
	if got := readAll(t, openFile(t, p, Options{})); !reflect.DeepEqual(got, rows) {
		t.Errorf("read back %+v", got)
	}
	// Reproducible: the same rows give the same bytes.
	b1, _ := os.ReadFile(p)
	WriteDay(dir, d, each)
	b2, _ := os.ReadFile(p)
	if !bytes.Equal(b1, b2) {
		t.Error("two writes differ")
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v", st.Mode(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("dir holds %v", ents)
	}
}
