package snapshot

import (
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

// The header's position in the live stream round-trips, shows in the
// Meta a load gives, and is part of the content ID.
func TestStreamPosition(t *testing.T) {
	pos := engine.StreamPosition{Next: 1 << 40, Name: "PREGAO_LIVE", Session: engine.MakeDate(2026, 11, 19), Batch: 390}
	ids := map[string]string{}
	for _, c := range []struct {
		name string
		pos  engine.StreamPosition
	}{
		{"unknown", engine.StreamPosition{}},
		{"known", pos},
		{"next", engine.StreamPosition{Next: pos.Next + 1, Name: pos.Name, Session: pos.Session, Batch: pos.Batch}},
		{"name", engine.StreamPosition{Next: pos.Next, Name: "OTHER", Session: pos.Session, Batch: pos.Batch}},
		{"session", engine.StreamPosition{Next: pos.Next, Name: pos.Name, Session: pos.Session - 1, Batch: pos.Batch}},
		{"batch", engine.StreamPosition{Next: pos.Next, Name: pos.Name, Session: pos.Session, Batch: pos.Batch + 1}},
		{"old session", engine.StreamPosition{Next: 7, Name: "S", Session: engine.MakeDate(1900, 1, 1), Batch: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := handUniverse()
			u.Meta.Stream = c.pos
			got, h := mustDecode(t, mustWrite(t, u, WriteOptions{}))
			if h.Stream != c.pos || got.Meta.Stream != c.pos {
				t.Fatalf("header %+v, meta %+v, want %+v", h.Stream, got.Meta.Stream, c.pos)
			}
			if prev, ok := ids[h.ID]; ok {
				t.Errorf("ID %s is also %s's: the position is not in the content ID", h.ID, prev)
			}
			ids[h.ID] = c.name
		})
	}
}

// A position that does not say which batch it follows is refused at
// write time.
func TestStreamPositionInvalid(t *testing.T) {
	for _, c := range []struct {
		pos  engine.StreamPosition
		want string
	}{
		{engine.StreamPosition{Name: "PREGAO_LIVE"}, "next is 0"},
		{engine.StreamPosition{Next: 3, Session: engine.MakeDate(2026, 1, 2), Batch: 1}, "stream name"},
		{engine.StreamPosition{Next: 3, Name: strings.Repeat("x", 256), Session: engine.MakeDate(2026, 1, 2), Batch: 1}, "stream name"},
		{engine.StreamPosition{Next: 3, Name: "S", Session: engine.NoDate, Batch: 1}, "required"},
		{engine.StreamPosition{Next: 3, Name: "S", Session: engine.MakeDate(2026, 1, 2)}, "required"},
	} {
		u := handUniverse()
		u.Meta.Stream = c.pos
		_, err := encode(u, WriteOptions{}, false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.pos, err, c.want)
		}
	}
}

// A version 4 file (testdata/tiny-v4.snap, the hand-built universe as
// version 4 wrote it) reads with its position unknown and its content ID
// of then.
func TestReadVersion4(t *testing.T) {
	u, h, err := ReadFile("testdata/tiny-v4.snap")
	if err != nil {
		t.Fatal(err)
	}
	if h.FormatVersion != 4 || h.Stream.Known() || u.Meta.Stream.Known() {
		t.Fatalf("version %d, position %+v / %+v: want 4 and unknown", h.FormatVersion, h.Stream, u.Meta.Stream)
	}
	if h.ID != "d00707acc58ccc32" {
		t.Errorf("ID = %s, want version 4's d00707acc58ccc32", h.ID)
	}
	want := handUniverse()
	want.Meta.Stream = engine.StreamPosition{}
	if d := diff(want, u); d != "" {
		t.Fatalf("version 4 decode differs at %s", d)
	}
}
