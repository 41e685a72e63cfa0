package snapshot

import (
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"
)

// A load with one worker (a reload beside requests) starts no goroutine:
// it decodes and indexes on the caller's thread, whose priority the
// caller may have lowered.
func TestLoadOneWorkerStaysOnItsGoroutine(t *testing.T) {
	snap := filepath.Join(t.TempDir(), "small.snap")
	if _, err := BuildFromBundle("bundle/testdata/small", snap, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	created := func() uint64 {
		s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	runtime.GC() // the collector's workers exist before counting
	n0 := created()
	if _, _, err := Load(snap, LoadOptions{Workers: 1}); err != nil {
		t.Fatal(err)
	}
	if n := created() - n0; n != 0 {
		t.Errorf("a one-worker load started %d goroutines", n)
	}
	n0 = created()
	if _, _, err := Load(snap, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	if runtime.GOMAXPROCS(0) > 1 && created() == n0 {
		t.Error("a default load started no goroutine: the count above proves nothing")
	}
}
