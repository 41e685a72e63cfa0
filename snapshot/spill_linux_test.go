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
	probe, err := os.Create(filepath.Join(dir, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	probe.Write(make([]byte, 1<<16))
	if err := unix.Fallocate(int(probe.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, 1<<16); err != nil {
		t.Skipf("no holes on this file system: %v", err)
	}
	probe.Close()
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
