package snapshot

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

var sinkU *engine.Universe

// benchSynth is a market of 300 tickers x 2,500 sessions, 50 x 4,200
// intraday bars, 20,000 reports of 25 accounts and 80,000 ratio points.
var benchSynth = sync.OnceValue(func() *engine.Universe { return synthUniverse(300, 2500, 50, 4200, 20000) })

func BenchmarkWrite(b *testing.B) {
	u := benchSynth()
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := Write(&buf, u, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportMetric(float64(buf.Len()), "file-bytes")
}

func BenchmarkDecode(b *testing.B) {
	data := mustWrite(b, benchSynth(), WriteOptions{})
	benchDecode(b, data)
}

var (
	demoScales = flag.String("demoscales", "1", "comma-separated demo scales for BenchmarkDecodeDemo (e.g. 1,10)")
	snapFile   = flag.String("snapshot", "", "snapshot file for BenchmarkReadFile and BenchmarkLoadFile")
)

// BenchmarkDecodeDemo loads the demo universe's snapshot (with derived
// ratios) at the scales of -demoscales; generating it takes a while, so
// run with -benchtime 3x. Scale 10 needs about 16 GiB of memory.
func BenchmarkDecodeDemo(b *testing.B) {
	for _, f := range strings.Split(*demoScales, ",") {
		scale, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			b.Fatalf("-demoscales: %v", err)
		}
		b.Run(fmt.Sprintf("scale=%d", scale), func(b *testing.B) {
			data := demoSnapshot(b, scale)
			benchDecode(b, data)
		})
	}
}

// BenchmarkWriteDemo encodes the demo universe at scale 1.
func BenchmarkWriteDemo(b *testing.B) {
	u := demo.Generate(1, 1)
	d, err := ratios.Derive(u)
	if err != nil {
		b.Fatal(err)
	}
	u.Derived = d
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := Write(&buf, u, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportMetric(float64(buf.Len()), "file-bytes")
}

var demoCache = map[int][]byte{}

func demoSnapshot(tb testing.TB, scale int) []byte {
	tb.Helper()
	if b, ok := demoCache[scale]; ok {
		return b
	}
	u := demo.Generate(1, scale)
	d, err := ratios.Derive(u)
	if err != nil {
		tb.Fatal(err)
	}
	u.Derived = d
	b := mustWrite(tb, u, WriteOptions{})
	demoCache[scale] = b
	u = nil
	runtime.GC()
	return b
}

// BenchmarkReadFile loads the snapshot named by -snapshot (ReadFile:
// read, verify, decompress, decode; with collection paused, as
// LoadOptions.PauseGC does), e.g. one built by "pregao build".
func BenchmarkReadFile(b *testing.B) {
	if *snapFile == "" {
		b.Skip("no -snapshot FILE")
	}
	st, err := os.Stat(*snapFile)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(st.Size())
	cpu0 := cpuTime()
	for b.Loop() {
		sinkU = nil
		u, _, err := readFile(*snapFile, true, false, 0, nil)
		if err != nil {
			b.Fatal(err)
		}
		sinkU = u
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	u := sinkU
	sinkU = nil
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(universeBytes(u)), "universe-bytes")
	b.ReportMetric(float64(m.HeapAlloc), "heap-bytes")
	runtime.KeepAlive(u)
}

// BenchmarkLoadFile loads the snapshot named by -snapshot as pregao
// serve does (Load with PauseGC: read, verify, decode, engine.Build) and
// reports the heap the loaded Dataset keeps (heap-inuse-MiB, after a
// collection), e.g. for the scale-1 demo:
//
//	make demo && go test -run '^$' -bench 'LoadFile' -benchtime 2x -count 6 ./snapshot/ -snapshot $PWD/.cache/demo-s1-x1/demo.snap
func BenchmarkLoadFile(b *testing.B) {
	if *snapFile == "" {
		b.Skip("no -snapshot FILE")
	}
	var m runtime.MemStats
	for b.Loop() {
		ds, _, err := Load(*snapFile, LoadOptions{PauseGC: true})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&m)
		runtime.KeepAlive(ds)
		ds = nil
		runtime.GC()
		b.StartTimer()
	}
	b.ReportMetric(float64(m.HeapInuse)/(1<<20), "heap-inuse-MiB")
}

// BenchmarkLoadFileLazy loads the format 6 snapshot named by -snapshot
// as pregao serve's first load does (Load with PauseGC and LazyVerify,
// no background pass): its blocks are left to their first use, but those
// of the bars the index build reads (engine.Dataset.OpenReads), verified
// before Load returns. It reports the load's CPU time and the blocks
// verified by then (open-blocks, open-KiB), e.g. for the scale-1 demo:
//
//	go test -run '^$' -bench 'LoadFileLazy' -benchtime 4x -count 6 ./snapshot/ -snapshot $PWD/.cache/demo-s1-x1/demo.snap
func BenchmarkLoadFileLazy(b *testing.B) {
	if *snapFile == "" {
		b.Skip("no -snapshot FILE")
	}
	var blocks, bytes int64
	var cpu int64
	for b.Loop() {
		cpu0 := cpuTime()
		ds, _, err := Load(*snapFile, LoadOptions{PauseGC: true, LazyVerify: true, VerifyRate: -1})
		if err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - cpu0
		b.StopTimer()
		blocks, bytes = 0, 0
		if x, ok := ds.Blocks().(*colBlocks); ok {
			for _, c := range x.kinds {
				for i := range c.blocks {
					if c.state[i].Load() != blockUnknown {
						blocks++
						bytes += c.blocks[i].N
					}
				}
			}
		}
		ds = nil
		runtime.GC()
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(blocks), "open-blocks")
	b.ReportMetric(float64(bytes)/1024, "open-KiB")
}

// benchDecode decodes data b.N times (Decode, with collection paused for
// a large snapshot, as LoadOptions.PauseGC does) and reports the file
// size, the Universe's own bytes (columns, structs, strings) and the heap
// it keeps alive once decoded ("retained-bytes", target <= 2x
// universe-bytes).
func benchDecode(b *testing.B, data []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	cpu0 := cpuTime()
	for b.Loop() {
		sinkU = nil
		u, _, err := decode(data, true)
		if err != nil {
			b.Fatal(err)
		}
		sinkU = u
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	sinkU = nil
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	u, _, err := Decode(data)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	own := universeBytes(u)
	runtime.KeepAlive(u)
	b.ReportMetric(float64(len(data)), "file-bytes")
	b.ReportMetric(float64(own), "universe-bytes")
	b.ReportMetric(float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)), "retained-bytes")
}

// cpuTime returns the process's user+system CPU time (ns): with other
// work on the machine, it measures the decoder better than wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// universeBytes sums the memory a Universe needs: slice backing arrays
// and string bytes (each distinct string once).
func universeBytes(u *engine.Universe) int64 {
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value) int64
	walk = func(v reflect.Value) int64 {
		switch v.Kind() {
		case reflect.String:
			s := v.String()
			if len(s) == 0 {
				return 0
			}
			p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
			if seen[p] {
				return 0
			}
			seen[p] = true
			return int64(len(s))
		case reflect.Slice:
			n := int64(v.Cap()) * int64(v.Type().Elem().Size())
			switch v.Type().Elem().Kind() {
			case reflect.Float64, reflect.Int64, reflect.Int32:
				return n
			}
			for i := 0; i < v.Len(); i++ {
				n += walk(v.Index(i))
			}
			return n
		case reflect.Struct:
			var n int64
			for i := 0; i < v.NumField(); i++ {
				n += walk(v.Field(i))
			}
			return n
		}
		return 0
	}
	return walk(reflect.ValueOf(u).Elem())
}
