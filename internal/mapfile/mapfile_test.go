package mapfile

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Open and Read give the file's bytes, 8-aligned; Open maps them on a
// system that can; Close releases them once.
func TestOpenAndRead(t *testing.T) {
	want := make([]byte, 3*4096+5)
	for i := range want {
		want[i] = byte(i * 7)
	}
	p := writeFile(t, "f", want)
	files0, bytes0 := Held()
	for _, c := range []struct {
		name   string
		open   func(string) (*File, error)
		mapped bool
	}{
		{"Open", Open, runtime.GOOS != "windows" && runtime.GOOS != "plan9" && runtime.GOOS != "js" && runtime.GOOS != "wasip1"},
		{"Read", Read, false},
	} {
		f, err := c.open(p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !bytes.Equal(f.Bytes(), want) || f.Len() != len(want) {
			t.Errorf("%s: the bytes differ from the file's", c.name)
		}
		if f.Mapped() != c.mapped {
			t.Errorf("%s: Mapped %v, want %v", c.name, f.Mapped(), c.mapped)
		}
		if a := uintptr(unsafe.Pointer(&f.Bytes()[0])); a%8 != 0 {
			t.Errorf("%s: bytes at %#x, not 8-aligned", c.name, a)
		}
		if n, b := Held(); n != files0+1 || b != bytes0+int64(len(want)) {
			t.Errorf("%s: Held %d files %d bytes, want %d and %d", c.name, n, b, files0+1, bytes0+int64(len(want)))
		}
		if err := f.Close(); err != nil {
			t.Errorf("%s: Close: %v", c.name, err)
		}
		if err := f.Close(); err != nil {
			t.Errorf("%s: second Close: %v", c.name, err)
		}
		if n, b := Held(); n != files0 || b != bytes0 {
			t.Errorf("%s: after Close, Held %d files %d bytes, want %d and %d", c.name, n, b, files0, bytes0)
		}
		if f.Bytes() != nil {
			t.Errorf("%s: bytes still given after Close", c.name)
		}
	}
}

func TestOpenEmptyAndMissing(t *testing.T) {
	f, err := Open(writeFile(t, "empty", nil))
	if err != nil || f.Len() != 0 {
		t.Fatalf("empty file: %v, %d bytes", err, f.Len())
	}
	f.Close()
	if _, err := Open(filepath.Join(t.TempDir(), "absent")); !os.IsNotExist(err) {
		t.Errorf("absent file: %v, want not exist", err)
	}
	if _, err := Open(t.TempDir()); err == nil {
		t.Error("a folder was opened")
	}
}

// owner stands for a Dataset: it holds the bytes it reads.
type owner struct {
	f    *File
	b    []byte
	fill byte
}

// A File released with its owner stays mapped while a reader holds the
// owner, and is released once nothing can reach it: reloaded 300 times,
// each once the readers have read again, under readers that check a
// byte of every page they read and run the collector (a read of
// released bytes faults, one of a later mapping at the same address is
// a wrong fill: closing the replaced owner's file at the swap fails
// here), and every mapping is released in the end (run with -race).
func TestReleaseWithUnderReaders(t *testing.T) {
	const size = 64 << 10
	var paths []string
	for i := range 8 {
		paths = append(paths, writeFile(t, "f"+string(rune('a'+i)), bytes.Repeat([]byte{byte(i + 1)}, size)))
	}
	files0, _ := Held()
	var cur atomic.Pointer[owner]
	load := func(i int) {
		f, err := Open(paths[i%len(paths)])
		if err != nil {
			t.Fatal(err)
		}
		o := &owner{f: f, b: f.Bytes(), fill: byte(i%len(paths) + 1)}
		ReleaseWith(f, o)
		cur.Store(o)
	}
	load(0)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var reads atomic.Int64
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; !stop.Load(); k++ {
				o := cur.Load()
				for i := (k * 4099 * (r + 1)) % 4096; i < len(o.b); i += 4096 {
					if o.b[i] != o.fill {
						t.Errorf("read %d of a file filled with %d", o.b[i], o.fill)
						return
					}
				}
				if k%64 == 0 {
					runtime.GC() // the collector runs releases while readers read
				}
				reads.Add(1)
			}
		}()
	}
	for i := 1; i <= 300; i++ {
		load(i)
		// The next reload once a reader has read: readers read meanwhile.
		for n := reads.Load(); reads.Load() == n; {
			runtime.Gosched()
		}
	}
	stop.Store(true)
	wg.Wait()
	cur.Store(nil)
	for range 100 {
		runtime.GC()
		if n, _ := Held(); n == files0 {
			return
		}
		runtime.Gosched()
	}
	n, _ := Held()
	t.Errorf("%d files still held after the owners became unreachable, want %d", n, files0)
}
