package fii

import (
	"bytes"
	"testing"

	"github.com/pregao/pregao/snapshot/ingest/cvm"
)

// TestProgressReal reads a real year of monthly reports with a Progress
// hook: each table is reported under its name, with rows rising by
// ProgressEvery and its totals at the end.
func TestProgressReal(t *testing.T) {
	files := realYear(t, "2021")
	size := map[string]int64{}
	lines := map[string]int64{}
	for _, t3 := range []string{TableGeneral, TableComplement, TableAssetsLiabs} {
		name := "inf_mensal_fii_" + t3 + "_2021.csv"
		b := readReal(t, name)
		size[name] = int64(len(b))
		lines[name] = int64(bytes.Count(b, []byte("\n")) - 1) // header excluded
	}
	type call struct{ rows, bytes int64 }
	calls := map[string][]call{}
	var st cvm.Stats
	const every = 300
	opt := cvm.Options{Retrieved: retrieved, Stats: &st, ProgressEvery: every,
		Progress: func(file string, rows, bytes int64) { calls[file] = append(calls[file], call{rows, bytes}) }}
	if _, err := ReadMonthlyFiles(files, opt); err != nil {
		t.Fatal(err)
	}
	var total int64
	for name, n := range lines {
		cs := calls[name]
		if int64(len(cs)) != 2+n/every {
			t.Fatalf("%s: %d calls for %d rows", name, len(cs), n)
		}
		for i, c := range cs[:len(cs)-1] {
			if c.rows != int64(i)*every || i > 0 && c.bytes <= cs[i-1].bytes {
				t.Errorf("%s call %d: %+v after %+v", name, i, c, cs[max(i-1, 0)])
			}
		}
		if last := cs[len(cs)-1]; last.rows != n || last.bytes != size[name] {
			t.Errorf("%s: final %+v, want %d rows, %d bytes", name, last, n, size[name])
		}
		total += n
	}
	if len(calls) != 3 || int64(st.Rows) != total {
		t.Errorf("%d files reported, Stats.Rows %d, progress rows %d", len(calls), st.Rows, total)
	}
}
