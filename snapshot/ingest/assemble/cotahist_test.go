package assemble

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// quoteRec is one COTAHIST quote record to write: what differs from the
// template record (PETR4 on 2021-03-26, read from testdata/real).
type quoteRec struct {
	day    string // YYYYMMDD
	ticker string
	name   string // NOMRES
	spec   string // ESPECI, e.g. "ON      NM"
	isin   string
	close  string // PREULT in cents, 13 digits ("" keeps the template's)
}

// cotahistFile writes a COTAHIST file in the official fixed-width layout
// (header, one record per rec, trailer counting every line) into dir and
// returns its path. Each record is a real one with its day, ticker, short
// name, specification and ISIN replaced.
func cotahistFile(tb testing.TB, dir, name string, recs ...quoteRec) string {
	tb.Helper()
	b, err := datafile.ReadFile(filepath.Join(realDir(tb), cotahistDay))
	if err != nil {
		tb.Fatal(err)
	}
	var tmpl string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "0120210326") && strings.HasPrefix(l[12:], "PETR4 ") {
			tmpl = strings.TrimRight(l, "\r")
		}
	}
	if len(tmpl) != 245 {
		tb.Fatalf("template record of %d characters", len(tmpl))
	}
	put := func(line []byte, from, to int, s string) {
		f := line[from-1 : to]
		for i := range f {
			f[i] = ' '
		}
		copy(f, s)
	}
	pad := func(s string) []byte { return []byte(s + strings.Repeat(" ", 245-len(s))) }
	last := "20220204"
	if len(recs) > 0 {
		last = recs[len(recs)-1].day
	}
	out := []string{string(pad("00COTAHIST." + last[:4] + "BOVESPA " + last))}
	for _, r := range recs {
		l := []byte(tmpl)
		put(l, 3, 10, r.day)
		put(l, 13, 24, r.ticker)
		put(l, 28, 39, r.name)
		put(l, 40, 49, r.spec)
		put(l, 231, 242, r.isin)
		if r.close != "" {
			put(l, 109, 121, r.close)
		}
		out = append(out, string(l))
	}
	trailer := pad("99COTAHIST." + last[:4] + "BOVESPA " + last)
	n := len(recs) + 2
	cnt := []byte(strings.Repeat("0", 11))
	for i := 10; i >= 0; i-- {
		cnt[i] = byte('0' + n%10)
		n /= 10
	}
	copy(trailer[31:42], cnt)
	out = append(out, string(trailer))
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(strings.Join(out, "\r\n")+"\r\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}
