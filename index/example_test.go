package index_test

import (
	"fmt"

	"github.com/pregao/pregao/index"
)

// A Map is built once, from pairs in any order (Builder) or presorted
// keys (NewMap), and then only read: point lookups, prefixes and ranges.
func ExampleMap() {
	var b index.Builder[int32] // ticker -> row
	for i, ticker := range []string{"VALE3", "PETR4", "PETR3", "ITUB4", "PETZ3"} {
		b.Add(ticker, int32(i))
	}
	m, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	row, ok := m.Get("PETR4")
	fmt.Println("PETR4:", row, ok)
	_, ok = m.Get("ABEV3")
	fmt.Println("ABEV3:", ok)
	m.Prefix("PETR", func(ticker string, row int32) bool {
		fmt.Println("prefix PETR:", ticker, row)
		return true
	})
	m.Range("ITUB4", "PETR4", func(ticker string, _ int32) bool {
		fmt.Println("[ITUB4, PETR4):", ticker)
		return true
	})
	first, _, _ := m.Min()
	last, _, _ := m.Max()
	fmt.Println(m.Len(), "tickers,", first, "to", last)

	_, err = index.NewMap([]string{"PETR4", "PETR3"}, []int32{0, 1})
	fmt.Println(err)
	// Output:
	// PETR4: 1 true
	// ABEV3: false
	// prefix PETR: PETR3 2
	// prefix PETR: PETR4 1
	// [ITUB4, PETR4): ITUB4
	// [ITUB4, PETR4): PETR3
	// 5 tickers, ITUB4 to VALE3
	// index: key "PETR3" after "PETR4": keys not sorted
}

// Span finds the rows of a sorted column (here day numbers, days since
// 1970-01-01) within a closed interval; LastLE the last row at or before
// a day, as a quote "as of" that day needs.
func ExampleSpan() {
	days := []int32{19724, 19725, 19726, 19727, 19730} // 2024-01-02 (Tue) to 01-08 (Mon)
	lo, hi := index.Span(days, 19727, 19730)           // Friday to Monday
	fmt.Println("rows", lo, "to", hi, days[lo:hi])
	lo, hi = index.Span(days, 19728, 19729) // the weekend
	fmt.Println("weekend:", hi-lo, "rows")
	fmt.Println("as of Sunday: row", index.LastLE(days, 19729))
	fmt.Println("before the first: row", index.LastLE(days, 19000))
	// Output:
	// rows 3 to 5 [19727 19730]
	// weekend: 0 rows
	// as of Sunday: row 3
	// before the first: row -1
}
