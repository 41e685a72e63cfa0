package bundle

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// synth returns a valid Universe of the given size: tickers daily series
// of days rows each, half of them with bars intraday bars, and reports of
// 25 accounts each.
func synth(tickers, days, bars, reports int) *engine.Universe {
	rng := rand.New(rand.NewPCG(1, 2))
	u := &engine.Universe{Meta: engine.Meta{AsOf: time.Date(2024, 3, 28, 21, 0, 0, 0, time.UTC), Description: "synthetic"}}
	ncomp := tickers/2 + 1
	for i := range ncomp {
		u.Companies = append(u.Companies, engine.Company{
			ID: fmt.Sprintf("%014d", 10000000000000+i), Name: fmt.Sprintf("Empresa %d S.A.", i), Kind: engine.KindCompany,
			Employees: int64(rng.IntN(10000)), FreeFloat: engine.Num(rng.Float64()), FoundingDate: engine.NoDate, IPODate: engine.NoDate,
		})
	}
	start := engine.MakeDate(2000, 1, 3)
	for i := range tickers {
		tk := fmt.Sprintf("%c%c%c%c%d", 'A'+i/17576%26, 'A'+i/676%26, 'A'+i/26%26, 'A'+i%26, 3+i%2)
		u.Securities = append(u.Securities, engine.Security{Ticker: tk, CompanyID: u.Companies[i/2].ID, StockType: []string{engine.ClassCS, engine.ClassPS}[i%2],
			Currency: "BRL", UnitFactor: engine.Null, ListedFrom: start, ListedTo: engine.NoDate})
		s := engine.Series{Ticker: tk}
		price := 10 + rng.Float64()*90
		for d := range days {
			o := price
			c := o * (1 + rng.NormFloat64()*0.02)
			h, l := max(o, c)*(1+rng.Float64()*0.01), min(o, c)*(1-rng.Float64()*0.01)
			r := func(x float64) engine.Num { return engine.Num(float64(int64(x*100+0.5)) / 100) }
			s.Dates = append(s.Dates, start+engine.Date(d))
			s.Open = append(s.Open, r(o))
			s.High = append(s.High, r(h))
			s.Low = append(s.Low, r(l))
			s.Close = append(s.Close, r(c))
			q := int64(rng.IntN(1000000))
			s.Volume = append(s.Volume, engine.Num(float64(q)*float64(r(c))))
			s.Quantity = append(s.Quantity, q)
			s.Trades = append(s.Trades, int64(rng.IntN(20000)))
			price = c
		}
		u.Daily = append(u.Daily, s)
		if i%2 == 0 {
			x := engine.Intraday{Ticker: tk}
			t0 := time.Date(2024, 3, 18, 13, 0, 0, 0, time.UTC).Unix()
			for m := range bars {
				p := engine.Num(float64(int64(price*100)) / 100)
				x.Times = append(x.Times, t0+int64(m)*60)
				x.Open = append(x.Open, p)
				x.High = append(x.High, p+0.02)
				x.Low = append(x.Low, p-0.01)
				x.Close = append(x.Close, p+0.01)
				x.Volume = append(x.Volume, p*1000)
				x.Quantity = append(x.Quantity, 1000)
			}
			u.Intraday = append(u.Intraday, x)
		}
	}
	pub := time.Date(2024, 2, 27, 19, 0, 0, 0, time.UTC)
	for i := range reports {
		r := engine.Report{
			CompanyID: u.Companies[i%ncomp].ID, Statement: engine.LabelDRE, Aggregation: engine.LabelConsolidated, Form: engine.LabelITR,
			ReferenceDate: engine.MakeDate(2000+i/ncomp/4, time.Month(3*(i/ncomp%4)+1), 1) + 60, StartDate: engine.MakeDate(2000+i/ncomp/4, 1, 1),
			PublishDate: engine.StampOf(pub), RetrievalDate: engine.StampOf(pub), Version: 1,
			Sources: engine.SourcesOf([]engine.Source{{VisualizationURL: engine.URLOf("https://www.rad.cvm.gov.br/x?n=1"), Name: "CVM ITR"}}),
		}
		r.EndDate = r.ReferenceDate
		for a := range 25 {
			r.Accounts = append(r.Accounts, engine.NewAccount(fmt.Sprintf("3.%02d.%02d", a/5+1, a%5+1), "Receita de Venda de Bens e/ou Serviços", a%3 == 0, engine.Num(rng.IntN(1e9))*1000))
		}
		u.Reports = append(u.Reports, r)
	}
	return u
}

var sinkU *engine.Universe

// BenchmarkReadDaily measures parsing of an uncompressed daily.csv
// (1000 tickers x 4000 sessions = 4M rows).
func BenchmarkReadDaily(b *testing.B) {
	u := synth(1000, 4000, 0, 0)
	var buf bytes.Buffer
	w := NewDailyWriter(&buf)
	for i := range u.Daily {
		if err := w.WriteSeries(&u.Daily[i]); err != nil {
			b.Fatal(err)
		}
	}
	w.Flush()
	data := buf.Bytes()
	rows := 1000 * 4000
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	c0 := cpuTime()
	for b.Loop() {
		c := &collector{}
		cs, err := parseColumns(bytes.NewReader(data), FileDaily, false, c)
		if err != nil || c.count() > 0 {
			b.Fatal(err, c.err(fileOrder))
		}
		if cs.rows() != rows {
			b.Fatalf("rows %d", cs.rows())
		}
		_ = cs.daily(false)
	}
	reportCPU(b, c0, rows)
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkReadReports measures decoding and checking of reports.jsonl
// (20k reports of 25 accounts, uncompressed, in memory).
func BenchmarkReadReports(b *testing.B) {
	u := synth(2, 2, 0, 20000)
	var buf bytes.Buffer
	if err := jsonlJob(u.Reports, noMeter{})(&buf); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	c0 := cpuTime()
	for b.Loop() {
		c := &collector{}
		rs, err := readJSONL(bytes.NewReader(data), FileReports, c, defReport, convReport)
		if err != nil || c.count() > 0 || len(rs) != 20000 {
			b.Fatal(err, c.err(fileOrder))
		}
	}
	reportCPU(b, c0, 20000)
	b.ReportMetric(float64(20000)*float64(b.N)/b.Elapsed().Seconds(), "reports/s")
}

// BenchmarkRead measures Read of a whole zstd bundle near the demo's
// scale 1: 3.6M daily rows, 1.03M intraday bars, 200k reports.
func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	u := synth(900, 4000, 2300, 200000)
	if err := Write(dir, u, WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	var size int64
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		fi, _ := os.Stat(filepath.Join(dir, e.Name()))
		size += fi.Size()
	}
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	c0 := cpuTime()
	for b.Loop() {
		sinkU = mustRead(b, dir)
	}
	reportCPU(b, c0, 900*4000)
	b.ReportMetric(float64(900*4000)*float64(b.N)/b.Elapsed().Seconds(), "daily_rows/s")
}

// BenchmarkWrite measures Write (zstd) of 4M daily rows and 20k reports.
func BenchmarkWrite(b *testing.B) {
	u := synth(1000, 4000, 0, 20000)
	dir := b.TempDir()
	b.ReportAllocs()
	c0 := cpuTime()
	for b.Loop() {
		if err := Write(dir, u, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, c0, 1000*4000)
	b.ReportMetric(float64(1000*4000)*float64(b.N)/b.Elapsed().Seconds(), "daily_rows/s")
}

// reportCPU reports the process CPU time per op and per item since c0: on
// a shared machine it varies less than the wall time.
func reportCPU(b *testing.B, c0 time.Duration, items int) {
	cpu := cpuTime() - c0
	if cpu <= 0 {
		return
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(items), "cpu-ns/item")
}
