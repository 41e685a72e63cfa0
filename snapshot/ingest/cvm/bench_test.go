package cvm

import (
	"bytes"
	"io"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// repeated is a real file's header followed by its rows repeated n
// times, field 3 (VERSAO) set to the copy number so that every copy is a
// distinct filing. It is generated while read (one copy in memory), so
// that a benchmark measures the reader's memory, not the input's.
type repeated struct {
	header []byte
	rows   [][2][]byte // each row as "CNPJ;DT_REFER;" and ";fields 4..."
	n      int         // copies
	size   int64       // total bytes
	nrows  int         // total rows

	copy  int    // next copy to generate
	buf   []byte // pending bytes
	store []byte // backing array of buf
}

func newRepeated(tb testing.TB, rel string, n int) *repeated {
	raw := readReal(tb, rel)
	lines := bytes.SplitAfter(raw, []byte("\n"))
	r := &repeated{header: lines[0], n: n}
	for _, l := range lines[1:] {
		if len(bytes.TrimSpace(l)) > 0 {
			f := bytes.SplitN(l, []byte(";"), 4)
			pre := len(f[0]) + 1 + len(f[1]) + 1
			r.rows = append(r.rows, [2][]byte{l[:pre], l[pre+len(f[2]):]})
		}
	}
	r.size = int64(len(r.header))
	for c := 1; c <= n; c++ {
		r.size += int64(len(r.genCopy(nil, c)))
	}
	r.nrows = n * len(r.rows)
	r.reset()
	return r
}

func (r *repeated) genCopy(dst []byte, c int) []byte {
	var vb [20]byte
	ver := strconv.AppendInt(vb[:0], int64(c), 10)
	for _, l := range r.rows {
		dst = append(dst, l[0]...)
		dst = append(dst, ver...)
		dst = append(dst, l[1]...)
	}
	return dst
}

func (r *repeated) reset() {
	r.copy = 1
	r.store = append(r.store[:0], r.header...)
	r.buf = r.store
}

func (r *repeated) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.copy > r.n {
			return 0, io.EOF
		}
		r.store = r.genCopy(r.store[:0], r.copy)
		r.buf = r.store
		r.copy++
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// peakHeap samples the live heap while fn runs and returns its maximum.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	var mu sync.Mutex
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			mu.Lock()
			if v := s[0].Value.Uint64(); v > peak {
				peak = v
			}
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(done)
	wg.Wait()
	return peak
}

var sinkReports []engine.Report

// BenchmarkDFP imports a DRE table of 337,600 rows built from the real
// 2022 file (400 copies as distinct versions). The reports it returns
// (every ÚLTIMO row as an account) are most of its peak heap; the input
// is streamed.
func BenchmarkDFP(b *testing.B) {
	in := newRepeated(b, "cvm-dfp/dfp_cia_aberta_DRE_con_2022.csv.zst", 400)
	rows := in.nrows
	b.SetBytes(in.size)
	b.ReportAllocs()
	b.ResetTimer()
	var peak uint64
	for i := 0; i < b.N; i++ {
		in.reset()
		p := peakHeap(func() {
			rs, err := ReadStatements(in, "dfp_cia_aberta_DRE_con_2022.csv", Options{})
			if err != nil {
				b.Fatal(err)
			}
			sinkReports = rs
		})
		sinkReports = nil
		peak = max(peak, p)
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(in.size)/(1<<20), "input-MB")
}

// BenchmarkReader reads the same input with the bare Reader (every field
// touched): constant memory whatever the input size.
func BenchmarkReader(b *testing.B) {
	in := newRepeated(b, "cvm-dfp/dfp_cia_aberta_DRE_con_2022.csv.zst", 400)
	rows := in.nrows
	b.SetBytes(in.size)
	b.ReportAllocs()
	b.ResetTimer()
	var peak uint64
	for i := 0; i < b.N; i++ {
		in.reset()
		p := peakHeap(func() {
			rd := NewReader(in, "bench.csv")
			if err := rd.ReadHeader(); err != nil {
				b.Fatal(err)
			}
			n := 0
			for {
				err := rd.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				for j := 0; j < rd.NumFields(); j++ {
					n += len(rd.Field(j))
				}
			}
		})
		peak = max(peak, p)
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

func BenchmarkCad(b *testing.B) {
	in := readReal(b, cadFile)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, err := ReadCad(bytes.NewReader(in), "cad_cia_aberta.csv", Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2604*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkParseNum(b *testing.B) {
	in := []byte("1977997.0000000000")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ParseNum(in); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParseAllocs(t *testing.T) {
	num, date := []byte("-693741.0000000000"), []byte("2022-03-31")
	if n := testing.AllocsPerRun(100, func() {
		ParseNum(num)
		ParseDate(date)
	}); n > 0 {
		t.Errorf("%v allocs per number+date", n)
	}
}
