package snapshot

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/bundle"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// BenchmarkScalePipeline measures the whole pipeline at the demo scale of
// the environment variable PREGAO_SCALE (skipped when unset): generate
// and write the bundle (demo.Generate + bundle.Write), build the snapshot
// (BuildFromBundle), load it (Load with PauseGC: read, verify,
// engine.Build, what pregao serve does) and the memory the
// loaded dataset keeps. It runs once whatever -benchtime says; reproduce
// with
//
//	PREGAO_SCALE=1 go test -run '^$' -bench ScalePipeline -benchtime 1x ./snapshot/
//
// Metrics: generate-s, build-s, load-s (wall seconds), build-peak-rss-MiB
// (the process's resident high-water mark during the build, Linux only),
// file-MiB, heap-inuse-MiB and rss-MiB after the load and a collection,
// scan-MiB (the heap the collector scans for pointers: what a cycle's
// mark phase walks) and gc-ms (one forced collection of the loaded
// Dataset, wall milliseconds),
// raw-MiB (the raw bytes of every column: 8 per number or integer, 4 per
// date, 8 per timestamp, 1 per bool, the bytes of each string; daily rows
// at their wide 60 bytes), daily-MiB (what the daily histories take held
// compactly) and
// heap-per-raw (heap-inuse over raw, target <= 2). Scale 10 holds about
// 11 GiB once loaded: it needs a memory limit, so that the collector does
// not let the heap grow to twice that (the pregao commands set one
// themselves), e.g.
//
//	PREGAO_SCALE=10 GOMEMLIMIT=12GiB go test -run '^$' -bench ScalePipeline -benchtime 1x -timeout 30m ./snapshot/
func BenchmarkScalePipeline(b *testing.B) {
	env := os.Getenv("PREGAO_SCALE")
	if env == "" {
		b.Skip("set PREGAO_SCALE (e.g. 1 or 10) to run")
	}
	scale, err := strconv.Atoi(env)
	if err != nil || scale < 1 {
		b.Fatalf("PREGAO_SCALE=%q: want an integer >= 1", env)
	}
	if scale >= 5 && os.Getenv("GOMEMLIMIT") == "" {
		b.Fatalf("PREGAO_SCALE=%d: set GOMEMLIMIT too (e.g. GOMEMLIMIT=12GiB), or the heap grows to twice the live data", scale)
	}
	dir := b.TempDir()
	bdir, snap := filepath.Join(dir, "bundle"), filepath.Join(dir, "demo.snap")
	for b.Loop() {
		t0 := time.Now()
		u := demo.Generate(1, scale)
		if err := bundle.Write(bdir, u, bundle.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		u = nil
		genS := time.Since(t0).Seconds()
		debug.FreeOSMemory()
		resetPeakRSS()

		t0 = time.Now()
		if _, err := BuildFromBundle(bdir, snap, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		buildS := time.Since(t0).Seconds()
		peak := procStatusKiB("VmHWM")
		debug.FreeOSMemory()

		t0 = time.Now()
		ds, _, err := Load(snap, LoadOptions{PauseGC: true})
		if err != nil {
			b.Fatal(err)
		}
		loadS := time.Since(t0).Seconds()
		// The Dataset's Universe leaves the daily series out (the assets
		// hold them compactly): count their raw wide size, and what the
		// compact form takes.
		raw := rawColumnBytes(ds.Universe())
		var dailyBytes int64
		seen := map[*engine.DailyBars]bool{}
		for _, a := range ds.Assets() {
			if !seen[a.Daily] {
				seen[a.Daily] = true
				raw += int64(a.Daily.Len()) * (4 + 5*8 + 2*8)
				dailyBytes += int64(a.Daily.Bytes())
			}
		}
		debug.FreeOSMemory()
		t0 = time.Now()
		runtime.GC()
		gcS := time.Since(t0).Seconds()
		scan := []metrics.Sample{{Name: "/gc/scan/heap:bytes"}}
		metrics.Read(scan)
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		rss := procStatusKiB("VmRSS")
		runtime.KeepAlive(ds)

		st, err := os.Stat(snap)
		if err != nil {
			b.Fatal(err)
		}
		const mib = 1 << 20
		b.ReportMetric(genS, "generate-s")
		b.ReportMetric(buildS, "build-s")
		b.ReportMetric(loadS, "load-s")
		if peak > 0 {
			b.ReportMetric(float64(peak)/1024, "build-peak-rss-MiB")
		}
		b.ReportMetric(float64(st.Size())/mib, "file-MiB")
		b.ReportMetric(float64(m.HeapInuse)/mib, "heap-inuse-MiB")
		b.ReportMetric(float64(scan[0].Value.Uint64())/mib, "scan-MiB")
		b.ReportMetric(gcS*1000, "gc-ms")
		if rss > 0 {
			b.ReportMetric(float64(rss)/1024, "rss-MiB")
		}
		b.ReportMetric(float64(raw)/mib, "raw-MiB")
		b.ReportMetric(float64(dailyBytes)/mib, "daily-MiB")
		b.ReportMetric(float64(m.HeapInuse)/float64(raw), "heap-per-raw")
	}
}

// rawColumnBytes sums the raw size of every value of u: 8 bytes per
// number or 64-bit integer, 4 per Date, 2 per uint16, 1 per bool, 8 per
// timestamp and the bytes of each string (every occurrence: the raw data,
// not its in-memory sharing; an engine.Line or engine.Sym counts as the
// strings it stands for). Slice headers and struct padding are not
// counted.
func rawColumnBytes(u *engine.Universe) int64 {
	timeType := reflect.TypeFor[time.Time]()
	var walk func(v reflect.Value) int64
	walk = func(v reflect.Value) int64 {
		switch v.Type() {
		case timeType:
			return 8
		case lineType: // the account line it stands for
			l := engine.Line(v.Uint())
			return int64(len(l.Code()) + len(l.Name()) + 1)
		case symType:
			return int64(len(engine.Sym(v.Uint()).String()))
		}
		switch v.Kind() {
		case reflect.String:
			return int64(v.Len())
		case reflect.Bool, reflect.Uint8, reflect.Int8:
			return 1
		case reflect.Uint16, reflect.Int16:
			return 2
		case reflect.Int32, reflect.Uint32, reflect.Float32:
			return 4
		case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64, reflect.Float64:
			return 8
		case reflect.Slice:
			switch e := v.Type().Elem(); e.Kind() {
			case reflect.Float64, reflect.Int64, reflect.Int32, reflect.Uint16, reflect.Uint8:
				return int64(v.Len()) * int64(e.Size())
			}
			var n int64
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

// procStatusKiB returns a kB field of /proc/self/status (VmRSS, VmHWM),
// or 0 where there is none.
func procStatusKiB(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

// resetPeakRSS resets the process's resident high-water mark (VmHWM), so
// that the next reading covers only what follows (Linux; a no-op where
// it is not supported).
func resetPeakRSS() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}
