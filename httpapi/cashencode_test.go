package httpapi

import "testing"

// BenchmarkCashActionEncode encodes every cash action of the total-return
// demo (appendCashAction), as the cash routes write their rows.
func BenchmarkCashActionEncode(b *testing.B) {
	_, ds := trDemoServer(b)
	evs := ds.CashActions()
	var dst []byte
	for b.Loop() {
		dst = dst[:0]
		for i := range evs {
			dst = appendCashAction(dst, &evs[i])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(evs)), "ns/row")
}
