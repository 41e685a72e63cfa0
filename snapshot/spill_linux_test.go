package snapshot

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A build's writer gives a copied piece's disk space back (on a file
// system that punches holes; elsewhere the test is skipped).
func TestFreeSpillPunchesHole(t *testing.T) {
	dir := t.TempDir()
	holesOrSkip(t, dir)
	s, err := newSpill(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := make([]byte, 4<<20)
	for i := range b {
		b[i] = byte(i)
	}
	p, err := s.put(b)
	if err != nil {
		t.Fatal(err)
	}
	s.f.Sync()
	blocks := func() int64 {
		var st syscall.Stat_t
		if err := syscall.Fstat(int(s.f.Fd()), &st); err != nil {
			t.Fatal(err)
		}
		return st.Blocks * 512
	}
	before := blocks()
	freeSpill(s.f, p.off, p.n)
	if after := blocks(); after > before-(3<<20) {
		t.Errorf("the spill file holds %d bytes on disk after its 4 MiB were freed (%d before)", after, before)
	}
}

// Small copied stretches are gathered and freed as merged ranges.
func TestFreeGathersSmallStretches(t *testing.T) {
	dir := t.TempDir()
	holesOrSkip(t, dir)
	s, err := newSpill(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ps []piece
	for i := 0; i < 64; i++ {
		p, err := s.put(make([]byte, 64<<10))
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	s.f.Sync()
	var st syscall.Stat_t
	syscall.Fstat(int(s.f.Fd()), &st)
	before := st.Blocks * 512
	if before < 4<<20 {
		t.Skip("the file system stores the file sparsely already")
	}
	e := &encoded{spill: s, freeCopied: true}
	for i := len(ps) - 1; i >= 0; i-- { // copied out of the spill file's order
		e.free(ps[i].off, ps[i].n)
	}
	if len(e.freed) != 64 {
		t.Fatalf("%d stretches gathered, want 64 (under spillChunk)", len(e.freed))
	}
	e.flushFreed()
	syscall.Fstat(int(s.f.Fd()), &st)
	if after := st.Blocks * 512; after > before-(3<<20) || len(e.freed) != 0 {
		t.Errorf("%d bytes on disk after the 4 MiB were freed (%d before), %d stretches left", after, before, len(e.freed))
	}
}

// holesOrSkip skips the test unless dir's file system punches holes.
func holesOrSkip(t *testing.T, dir string) {
	t.Helper()
	probe, err := os.Create(filepath.Join(dir, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	probe.Write(make([]byte, 1<<16))
	if err := unix.Fallocate(int(probe.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, 1<<16); err != nil {
		t.Skipf("no holes on this file system: %v", err)
	}
	probe.Close()
}
