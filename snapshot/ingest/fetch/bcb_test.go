package fetch

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// SGS windows: decade blocks over the range, cut at today, each within
// the SGS's 10 years.
func TestSGSWindows(t *testing.T) {
	today := day(2026, 11, 25)
	for _, tc := range []struct {
		from, to string
		want     []string
	}{
		{"1995-06-01", "2026-11-20", []string{"1990-01-01..1999-12-31", "2000-01-01..2009-12-31", "2010-01-01..2019-12-31", "2020-01-01..2026-11-25"}},
		{"2021-03-01", "2022-02-04", []string{"2020-01-01..2026-11-25"}},
		{"2019-12-31", "2020-01-01", []string{"2010-01-01..2019-12-31", "2020-01-01..2026-11-25"}},
		{"2030-01-01", "2031-01-01", nil},
	} {
		from, _ := time.Parse(time.DateOnly, tc.from)
		to, _ := time.Parse(time.DateOnly, tc.to)
		var got []string
		for _, w := range SGSWindows(day(from.Year(), int(from.Month()), from.Day()), day(to.Year(), int(to.Month()), to.Day()), today) {
			got = append(got, w.Start.String()+".."+w.End.String())
			if w.End.Time().After(w.Start.Time().AddDate(SGSMaxYears, 0, -1)) {
				t.Errorf("window %s..%s longer than %d years", w.Start, w.End, SGSMaxYears)
			}
			if w.Start.Time().Year() != w.Block || w.Block%10 != 0 {
				t.Errorf("window %+v: block", w)
			}
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s..%s: %v, want %v", tc.from, tc.to, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s..%s: %v, want %v", tc.from, tc.to, got, tc.want)
				break
			}
		}
	}
	if p := SGSPath(432, 2020); p != "dados/serie/bcdata.sgs.432/dados/2020-2029.json" {
		t.Error(p)
	}
	w := SGSWindow{Block: 2020, Start: day(2020, 1, 1), End: day(2026, 11, 25)}
	if u := SGSURL(4389, w); u != "https://api.bcb.gov.br/dados/serie/bcdata.sgs.4389/dados?formato=json&dataInicial=01/01/2020&dataFinal=25/11/2026" {
		t.Error(u)
	}
}

// The PTAX closing-rates files: one per weekday of the range, a holiday's
// 404 counted absent; complete files are never asked again; a download
// cut short is resumed with a Range request.
func TestFetchClosingFiles(t *testing.T) {
	s, ts := newServer(t)
	p := "/Download/fechamento/20260731.csv"
	s.files[p] = sample(t, "bcb-ptax/Wigny__ptax/20260731.csv")
	s.abort[p] = 4000
	items, err := Plan([]string{"bcb"}, day(2026, 7, 30), day(2026, 8, 3), false)
	if err != nil || len(items) != 3 || items[1].URL != "https://www4.bcb.gov.br/Download/fechamento/20260731.csv" || !items[1].Optional || !items[1].Immutable {
		t.Fatalf("plan %+v %v", items, err)
	}
	dir := t.TempDir()
	res, err := client(ts).FetchAll(context.Background(), dir, items)
	if err != nil || res.Downloaded != 1 || res.Missing != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	if n, ranges := s.count(p); n != 2 || ranges[1] != "bytes=4000-" {
		t.Errorf("%d requests, ranges %q: want the cut download resumed", n, ranges)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "Download/fechamento/20260731.csv"))
	if !bytes.Equal(got, s.files[p]) {
		t.Error("stored file differs from the served one")
	}
	res, err = client(ts).FetchAll(context.Background(), dir, items)
	if err != nil || res.Downloaded != 0 || res.Skipped != 1 {
		t.Fatalf("second run %+v %v", res, err)
	}
	if n, _ := s.count(p); n != 2 {
		t.Errorf("complete file asked again (%d requests)", n)
	}
}
