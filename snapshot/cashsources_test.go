package snapshot

import (
	"testing"

	"github.com/pregao/pregao/engine"
)

// TestCashSourcesShared checks that a load gives a cash action the
// source of the action before it when the two read the same (one
// pointer), a source that differs its own, and an action written
// without a source the zero Source, in formats 5 and 6.
func TestCashSourcesShared(t *testing.T) {
	for _, version := range []uint16{5, 6} {
		u := handUniverse()
		first := u.CashActions[0]
		same := first
		same.ID, same.Version = "ca-1-v3", 3
		src := *first.Source // equal, not the same pointer
		same.Source = &src
		other := first
		other.ID, other.Version = "ca-1-v1", 1
		changed := *first.Source
		changed.Name += " (retificação)"
		other.Source = &changed
		none := first
		none.ID, none.EventID, none.Source = "ca-2-v1", "ca-2", nil
		u.CashActions = []engine.CashAction{same, first, other, none}
		got, _ := mustDecode(t, mustWrite(t, u, WriteOptions{Version: version}))
		byID := map[string]*engine.CashAction{}
		for i := range got.CashActions {
			byID[got.CashActions[i].ID] = &got.CashActions[i]
		}
		a, b, c, d := byID["ca-1-v3"], byID["ca-1-v2"], byID["ca-1-v1"], byID["ca-2-v1"]
		if a == nil || b == nil || c == nil || d == nil {
			t.Fatalf("format %d: cash actions %v", version, byID)
		}
		if a.Source != b.Source || *a.Source != *first.Source {
			t.Errorf("format %d: equal sources of adjacent actions not shared: %p %p", version, a.Source, b.Source)
		}
		if c.Source == b.Source || c.Source.Name != changed.Name {
			t.Errorf("format %d: a different source shared or lost: %+v", version, c.Source)
		}
		if d.Source == nil || *d.Source != (engine.Source{}) {
			t.Errorf("format %d: an action without a source read back as %+v", version, d.Source)
		}
	}
}
