package demo

import "testing"

var sinkCounts Counts

func benchGenerate(b *testing.B, scale int) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		sinkCounts = Count(Generate(1, scale))
	}
	b.ReportMetric(float64(sinkCounts.DailyRows), "daily_rows")
	b.ReportMetric(float64(sinkCounts.IntradayRows), "intraday_rows")
	b.ReportMetric(float64(sinkCounts.Accounts), "accounts")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/universe")
}

// BenchmarkGenerateScale1 measures generation of the scale-1 universe and
// reports its size in rows.
func BenchmarkGenerateScale1(b *testing.B) { benchGenerate(b, 1) }

// BenchmarkGenerateScale10 measures the ten-times universe (several GiB of
// memory; run it alone).
func BenchmarkGenerateScale10(b *testing.B) { benchGenerate(b, 10) }
