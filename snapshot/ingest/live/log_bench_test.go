package live

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pregao/pregao/engine"
)

// BenchmarkLogAppend appends a batch of n bars (one minute of n tickers)
// to a session log and makes it durable (write and fsync), as the server
// does for each batch. The log is in PREGAO_BENCH_DIR when set (put it on
// the disk --live-dir will be on), else the system's temporary folder.
//
//	go test -run '^$' -bench LogAppend -benchtime 200x ./snapshot/ingest/live
func BenchmarkLogAppend(b *testing.B) {
	for _, n := range []int{50, 2000} {
		b.Run(fmt.Sprintf("bars=%d", n), func(b *testing.B) {
			dir := os.Getenv("PREGAO_BENCH_DIR")
			if dir == "" {
				dir = b.TempDir()
			} else {
				d, err := os.MkdirTemp(dir, "logbench-")
				if err != nil {
					b.Fatal(err)
				}
				defer os.RemoveAll(d)
				dir = d
			}
			l, _, err := OpenLog(filepath.Join(dir, LogName(sd)), sd, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			bars := make([]engine.LiveBar, n)
			for i := range bars {
				p := engine.Num(10 + float64(i%997)/100)
				bars[i] = engine.LiveBar{Ticker: fmt.Sprintf("T%04d3", i), Time: minute(13, 0), Open: p, High: p + 0.05, Low: p - 0.03,
					Close: p + 0.01, Volume: p * 12300, Quantity: 12300, Trades: 17}
			}
			rec := Record{Bars: bars}
			size := int64(len(AppendRecord(nil, &rec)))
			b.SetBytes(size)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rec.Seq = uint64(i + 1)
				if err := l.Append(&rec); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(size), "bytes/record")
		})
	}
}

// BenchmarkAppendRecord encodes a 2,000-bar record (no I/O): the
// session log's CPU cost per batch.
func BenchmarkAppendRecord(b *testing.B) {
	bars := make([]engine.LiveBar, 2000)
	for i := range bars {
		p := engine.Num(10 + float64(i%997)/100)
		bars[i] = engine.LiveBar{Ticker: fmt.Sprintf("T%04d3", i), Time: minute(13, 0), Open: p, High: p + 0.05, Low: p - 0.03,
			Close: p + 0.01, Volume: p * 12300, Quantity: 12300, Trades: 17}
	}
	rec := Record{Seq: 1, Bars: bars}
	buf := AppendRecord(nil, &rec)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = AppendRecord(buf[:0], &rec)
	}
}
