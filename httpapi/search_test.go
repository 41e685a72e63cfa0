package httpapi

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// searchLinear is the search as it was first written: every issuer's
// folded names (foldedNames) and symbol compared with the text (the
// ticker matches and the ranking of what matched are shared: matchTickers,
// ranked). The indexed search must find the same ranks.
func searchLinear(ds *engine.Dataset, names [][2]string, text string, keep func(*engine.Issuer) bool) []*engine.Issuer {
	q := fold(text)
	iss := ds.Issuers()
	rank := make(map[*engine.Issuer]int)
	better := func(is *engine.Issuer, r int) {
		if old, ok := rank[is]; !ok || r < old {
			rank[is] = r
		}
	}
	matchTickers(ds, q, rank, better)
	for i := range iss {
		is := &iss[i]
		if is.Symbol != "" && strings.EqualFold(is.Symbol, q) {
			better(is, matchSymbol)
		}
		if r := min(nameMatch(names[i][0], q), nameMatch(names[i][1], q)); r < noMatch {
			better(is, r)
		}
	}
	return ranked(rank, keep)
}

// nameMatch ranks how the folded text q matches the folded name n.
func nameMatch(n, q string) int {
	if n == "" {
		return noMatch
	}
	i := strings.Index(n, q)
	switch {
	case i < 0:
		return noMatch
	case i == 0:
		return matchNameStart
	}
	for ; i >= 0; i = nextIndex(n, q, i) {
		if n[i-1] == ' ' {
			return matchWordStart
		}
	}
	return matchContains
}

// nextIndex returns the index of q in n after the one at i, or -1.
func nextIndex(n, q string, i int) int {
	j := strings.Index(n[i+1:], q)
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// The indexed search answers what comparing every issuer answers: for
// every prefix, word and substring of the names, tickers and symbols, in
// any case and with accents, texts that match nothing or everything, and
// under filters that keep few issuers.
func TestSearchIndexMatchesLinear(t *testing.T) {
	// Enough issuers that a class finds more than maxSearchResults.
	ds, err := engine.Build(demo.GenerateSize(5, demo.Size{Companies: 400, SponsoredBDRs: 20, UnsponsoredBDRs: 20, FIIs: 20, ETFs: 5, ReportsFrom: 2026, FundReportsFrom: 2026, EventsFrom: 2026, HistoryFrom: 2026}))
	if err != nil {
		t.Fatal(err)
	}
	in, names := newDSInfo(ds), foldedNames(ds)
	iss := ds.Issuers()
	texts := []string{"", " ", "  a ", "A", "e", "S.A", "SA", "s/a", "energia", "ENERGÍA", "ção", "ÇÃO", "de ", " de", "zzzz", "\x00", "a\x00b", "K", "\u212a", "ſ", "\xff", strings.Repeat("x", 100)}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range iss {
		is := &iss[i]
		for _, n := range []string{is.TradingName, is.Name, is.Symbol} {
			if n == "" {
				continue
			}
			r := []rune(n)
			for k := 1; k <= min(len(r), 4); k++ {
				texts = append(texts, string(r[:k]))
			}
			for range 3 {
				a := rng.IntN(len(r))
				b := a + 1 + rng.IntN(len(r)-a)
				texts = append(texts, string(r[a:b]), strings.ToLower(string(r[a:b])))
			}
			texts = append(texts, n, strings.ToLower(n), n[:len(n)-1]+"\x00")
		}
		for _, a := range is.Assets {
			texts = append(texts, a.Ticker, strings.ToLower(a.Ticker[:min(4, len(a.Ticker))]))
		}
	}
	// A sample of them keeps the test quick (under -race too).
	rng.Shuffle(len(texts)-22, func(i, j int) { texts[22+i], texts[22+j] = texts[22+j], texts[22+i] })
	texts = texts[:min(len(texts), 22+600)]
	keeps := map[string]func(*engine.Issuer) bool{
		"all":        func(*engine.Issuer) bool { return true },
		"companies":  companyFilter(false, 0),
		"with-bdrs":  companyFilter(true, statusAll),
		"one-in-ten": func(is *engine.Issuer) bool { return len(is.ID)%10 == 3 },
		"none":       func(*engine.Issuer) bool { return false },
	}
	nonEmpty := 0
	for _, text := range texts {
		for name, keep := range keeps {
			want := searchLinear(ds, names, text, keep)
			got := searchCompanies(ds, in, text, keep)
			if !slices.Equal(got, want) {
				t.Fatalf("search %q (%s): %d issuers %v, want %d %v", text, name, len(got), ids(got), len(want), ids(want))
			}
			if len(want) > 0 {
				nonEmpty++
			}
		}
	}
	if nonEmpty < len(texts) {
		t.Errorf("only %d of %d searches found anything: the texts do not exercise the index", nonEmpty, len(texts)*len(keeps))
	}
}

func ids(iss []*engine.Issuer) []string {
	out := make([]string, len(iss))
	for i, is := range iss {
		out[i] = is.ID
	}
	return out
}

func TestFoldCase(t *testing.T) {
	for _, c := range [][2]string{{"abc", "ABC"}, {"k", "\u212a"}, {"s", "ſ"}, {"Straße", "STRASSE"}, {"\xff", "\xfe"}, {"é", "É"}, {"a", "b"}, {"", ""}, {"ab", "a"}} {
		if got, want := foldCase(c[0]) == foldCase(c[1]), strings.EqualFold(c[0], c[1]); got != want {
			t.Errorf("foldCase(%q) == foldCase(%q): %v, EqualFold says %v", c[0], c[1], got, want)
		}
	}
}

// FuzzSearch: any text gives the indexed search the linear one's answer.
func FuzzSearch(f *testing.F) {
	for _, s := range []string{"", "a", "ENERG", "de s", "\x00", "ção", "\u212a", "zz"} {
		f.Add(s)
	}
	ds := mustScreenDS(f)
	in, names := newDSInfo(ds), foldedNames(ds)
	keep := companyFilter(true, statusAll)
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > maxSearchText {
			return
		}
		if got, want := searchCompanies(ds, in, text, keep), searchLinear(ds, names, text, keep); !slices.Equal(got, want) {
			t.Fatalf("search %q: %v, want %v", text, ids(got), ids(want))
		}
	})
}

// foldedNames returns the folded [trading name, name] of every issuer.
func foldedNames(ds *engine.Dataset) [][2]string {
	iss := ds.Issuers()
	out := make([][2]string, len(iss))
	for i := range iss {
		out[i] = [2]string{fold(iss[i].TradingName), fold(iss[i].Name)}
	}
	return out
}
