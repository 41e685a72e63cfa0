package snapshot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A load given a Progress counts every compressed byte in "verify", every
// raw byte in "decode", and ends in "done"; a nil Progress is harmless.
func TestLoadProgress(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s.snap")
	if _, err := BuildFromBundle(smallBundle(t), out, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	h, err := ReadHeader(out)
	if err != nil {
		t.Fatal(err)
	}
	var comp, raw int64
	for _, s := range h.Sections {
		comp += s.Compressed
		raw += s.Raw
	}
	if comp == 0 || raw == 0 {
		t.Fatalf("sections: %d compressed, %d raw bytes", comp, raw)
	}
	var p Progress
	if st := p.State(); st.Phase != "waiting" || st.Elapsed != 0 {
		t.Errorf("zero Progress: %+v, want waiting", st)
	}
	// readFile stops before the indexes: its last phase is whole.
	if _, _, err := readFile(out, false, false, 1, &p); err != nil {
		t.Fatal(err)
	}
	if st := p.State(); st.Phase != "decode" || st.Unit != "bytes" || st.Done != raw || st.Total != raw || st.Elapsed <= 0 {
		t.Errorf("after the sections: %+v, want decode %d of %d", st, raw, raw)
	}
	// A file whose bytes fail their checksum stops in "verify", short of
	// its total.
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0xff
	bad := filepath.Join(t.TempDir(), "bad.snap")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var v Progress
	if _, _, err := readFile(bad, false, false, 1, &v); err == nil {
		t.Fatal("corrupt file read")
	}
	if st := v.State(); st.Phase != "verify" || st.Total != comp || st.Done >= comp {
		t.Errorf("corrupt file: %+v, want verify short of %d", st, comp)
	}
	var q Progress
	if _, _, err := Load(out, LoadOptions{Progress: &q}); err != nil {
		t.Fatal(err)
	}
	if st := q.State(); st.Phase != "done" {
		t.Errorf("after Load: %+v, want done", st)
	}
	var nilp *Progress
	nilp.Begin("x", "bytes", 1)
	nilp.Add(1)
	if st := nilp.State(); st.Phase != "waiting" {
		t.Errorf("nil Progress: %+v", st)
	}
	if _, _, err := Load(out, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
}

// BuildFromBundle moves its Progress through every phase in order, each
// counted phase ending whole (its units all added).
func TestBuildProgress(t *testing.T) {
	var p Progress
	type phase struct {
		name, unit string
		total      int64
	}
	var seen []phase
	var last *phase
	check := func() {
		if last != nil && last.total > 0 {
			if st := p.State(); st.Done != last.total {
				t.Errorf("phase %s ended at %d of %d %s", last.name, st.Done, last.total, last.unit)
			}
		}
	}
	p.onBegin = func(name, unit string, total int64) {
		check()
		seen = append(seen, phase{name, unit, total})
		last = &seen[len(seen)-1]
	}
	out := filepath.Join(t.TempDir(), "s.snap")
	if _, err := BuildFromBundle(smallBundle(t), out, WriteOptions{Progress: &p}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range seen {
		names = append(names, s.name+"/"+s.unit)
	}
	want := "read bundle/bytes encode/sections derive ratios/companies encode ratios/sections write/ verify/bytes decode/bytes index/ done/"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("phases:\n%s\nwant\n%s", got, want)
	}
	for _, s := range seen[:5] {
		if s.unit != "" && s.total <= 0 {
			t.Errorf("phase %s: total %d", s.name, s.total)
		}
	}
}
