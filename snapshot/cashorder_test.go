package snapshot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// inCashOrder returns a shallow copy of u whose cash actions are in the
// order format 6 stores them (cashOrder).
func inCashOrder(t *testing.T, u *engine.Universe) *engine.Universe {
	t.Helper()
	order, err := cashOrder(u.CashActions)
	if err != nil {
		t.Fatal(err)
	}
	c := *u
	if order != nil {
		c.CashActions = make([]engine.CashAction, len(order))
		for p, i := range order {
			c.CashActions[p] = u.CashActions[i]
		}
	}
	return &c
}

func TestCashOrder(t *testing.T) {
	t0 := time.Date(2025, 1, 2, 13, 0, 0, 0, time.UTC)
	row := func(id, event string, version int, exDay int, company string) engine.CashAction {
		return engine.CashAction{ID: id, EventID: event, Version: version, PriorExDate: engine.Date(20000 + exDay), CompanyID: engine.Intern(company), PublishDate: engine.StampOf(t0)}
	}
	for _, c := range []struct {
		name    string
		acts    []engine.CashAction
		want    []int32 // nil: in order already
		wantErr string
	}{
		{"empty", nil, nil, ""},
		{"sorted", []engine.CashAction{row("b", "E2", 1, 9, "X"), row("a", "E1", 1, 3, "X")}, nil, ""},
		{"ex date descending", []engine.CashAction{row("a", "E1", 1, 3, "X"), row("b", "E2", 1, 9, "X")}, []int32{1, 0}, ""},
		{"company, then event", []engine.CashAction{row("a", "E2", 1, 3, "Y"), row("b", "E2", 1, 3, "X"), row("c", "E1", 1, 3, "X")}, []int32{2, 1, 0}, ""},
		{"version descending", []engine.CashAction{row("a", "E1", 1, 3, "X"), row("b", "E1", 2, 3, "X")}, []int32{1, 0}, ""},
		// Two versions alike (event, version, id, publication) keep their
		// order: moved apart by their ex dates, they would swap.
		{"alike, kept", []engine.CashAction{row("a", "E1", 1, 9, "X"), row("z", "E9", 1, 5, "X"), row("a", "E1", 1, 3, "X")}, []int32{0, 1, 2}, ""},
		{"alike, swapped", []engine.CashAction{row("a", "E1", 1, 3, "X"), row("z", "E9", 1, 5, "X"), row("a", "E1", 1, 9, "X")}, nil, "ranking alike"},
		{"alike without event id", []engine.CashAction{row("a", "", 1, 3, "X"), row("a", "\x00a", 1, 9, "X")}, nil, "ranking alike"},
		{"different publications", []engine.CashAction{row("a", "E1", 1, 3, "X"), func() engine.CashAction {
			r := row("a", "E1", 1, 9, "X")
			r.PublishDate = engine.StampOf(t0.Add(time.Hour))
			return r
		}()}, []int32{1, 0}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := cashOrder(c.acts)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) && !(got == nil && isIdentity(c.want)) {
				t.Fatalf("order %v, want %v", got, c.want)
			}
		})
	}
}

func isIdentity(o []int32) bool {
	for i, x := range o {
		if int(x) != i {
			return false
		}
	}
	return true
}

// A format 6 file stores cash actions in the engine's order: Write puts
// them there, and a file whose cash actions are out of it is refused.
func TestFormat6CashOrder(t *testing.T) {
	u := format6Universe()
	base := handUniverse().CashActions[0]
	u.CashActions = nil
	for i := range 40 { // several parts' worth is not needed: one part, out of order
		a := base
		a.ID = fmt.Sprintf("ca-%d-v%d", i/2, 2-i%2)
		a.EventID = fmt.Sprintf("ca-%d", i/2)
		a.Version = 2 - i%2
		a.PriorExDate = base.PriorExDate + engine.Date(i%7)
		a.CompanyID = engine.Intern(fmt.Sprint(i % 3))
		u.CashActions = append(u.CashActions, a)
	}
	if order, _ := cashOrder(u.CashActions); order == nil {
		t.Fatal("the test's cash actions are in the engine's order already")
	}
	got, _ := mustDecode(t, mustWrite(t, u, WriteOptions{Version: 6}))
	if !slices.IsSortedFunc(got.CashActions, func(x, y engine.CashAction) int { return engine.CompareCashRows(&x, &y) }) {
		t.Fatal("format 6 cash actions read back out of the engine's order")
	}
	if d := diff(inCashOrder(t, u).CashActions, got.CashActions); d != "" {
		t.Fatalf("cash actions differ at %s", d)
	}
	// Format 5 keeps the universe's order.
	got5, _ := mustDecode(t, mustWrite(t, u, WriteOptions{}))
	if d := diff(u.CashActions, got5.CashActions); d != "" {
		t.Fatalf("format 5: cash actions differ at %s", d)
	}

	// A file out of order: written with an order that swaps two rows.
	sorted := inCashOrder(t, u)
	bad := func() []byte {
		defer func(f func([]engine.CashAction) ([]int32, error)) { cashOrderOf = f }(cashOrderOf)
		cashOrderOf = func(acts []engine.CashAction) ([]int32, error) {
			o := []int32{1, 0}
			for i := 2; i < len(acts); i++ {
				o = append(o, int32(i))
			}
			return o, nil
		}
		return mustWrite(t, sorted, WriteOptions{Version: 6})
	}()
	if _, _, err := Decode(bad); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "cash action 1") {
		t.Fatalf("a file with cash actions out of order: %v, want ErrFormat naming cash action 1", err)
	}
	// The order is checked beside the load's other checks, or in the
	// load's goroutine with one worker.
	p := filepath.Join(t.TempDir(), "bad.snap")
	if err := os.WriteFile(p, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{0, 1, 2} {
		if _, _, err := Load(p, LoadOptions{Workers: w, LazyVerify: true, VerifyRate: -1}); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "cash action 1") {
			t.Fatalf("%d workers: a file with cash actions out of order: %v, want ErrFormat naming cash action 1", w, err)
		}
	}
}

// A format 6 load has checked its cash actions' order, and its Build
// neither checks nor sorts them again (engine.BuildOptions.CashSorted); a
// format 5 file keeps the universe's order, which Build still sorts: both
// loads give the rows in the engine's order.
func TestLoadCashOrder(t *testing.T) {
	u := ratioDemo(t)
	byRows := func(x, y engine.CashAction) int { return engine.CompareCashRows(&x, &y) }
	if len(u.CashActions) < 2 || slices.IsSortedFunc(u.CashActions, byRows) {
		t.Fatalf("%d cash actions, in the engine's order already: the test proves nothing", len(u.CashActions))
	}
	ids := func(ds *engine.Dataset) []string {
		var out []string
		for _, e := range ds.CashActions() {
			out = append(out, e.ID+"/"+e.EventID+"/"+fmt.Sprint(e.Version, e.Current))
		}
		return out
	}
	dir := t.TempDir()
	var want []string
	for _, opt := range []WriteOptions{{}, {Version: 6}} {
		p := filepath.Join(dir, fmt.Sprintf("v%d.snap", opt.Version))
		if err := WriteFile(p, u, opt); err != nil {
			t.Fatal(err)
		}
		ds, _, err := Load(p, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.IsSortedFunc(ds.CashActions(), func(x, y engine.CashEvent) int { return engine.CompareCashRows(x.CashAction, y.CashAction) }) {
			t.Fatalf("format %d: cash actions out of the engine's order", opt.Version)
		}
		if got := ids(ds); want == nil {
			want = got
		} else if !slices.Equal(got, want) {
			t.Fatalf("format %d: cash actions differ from format 5's", opt.Version)
		}
	}
}
