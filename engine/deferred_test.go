package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// deferredSplit returns a copy of u without its deferred kinds, and
// those kinds.
func deferredSplit(u *Universe) (core, late *Universe) {
	c := *u
	late = &Universe{CashActions: u.CashActions, FundReports: u.FundReports, InsiderReports: u.InsiderReports, Documents: u.Documents}
	c.CashActions, c.FundReports, c.InsiderReports, c.Documents = nil, nil, nil, nil
	return &c, late
}

// TestFinishDeferredConcurrentReaders builds the fixture with its
// deferred kinds left out, starts readers of every deferred accessor,
// then adds the kinds: each reader gets what the whole build gives
// (under -race: no reader reads a list while it is made).
func TestFinishDeferredConcurrentReaders(t *testing.T) {
	whole := mustBuild(t, testUniverse(t))
	core, late := deferredSplit(testUniverse(t))
	ds, err := BuildWith(core, BuildOptions{Deferred: true})
	if err != nil {
		t.Fatal(err)
	}
	if !ds.Deferred() || whole.Deferred() {
		t.Fatalf("Deferred: %v for the deferred build, %v for the whole", ds.Deferred(), whole.Deferred())
	}
	if len(ds.Issuers()) != len(whole.Issuers()) || ds.LastSession() != whole.LastSession() {
		t.Fatal("the deferred build differs before its kinds are in")
	}
	type counts struct{ cash, insider, docs, fund, events, excash int }
	count := func(d *Dataset) counts {
		var c counts
		for i := range d.Issuers() {
			is := &d.Issuers()[i]
			c.cash += len(is.CashActions())
			c.insider += len(is.Insider())
			c.docs += len(is.Documents())
			c.fund += len(is.FundReports())
		}
		c.events = len(d.CashActions())
		for i := range d.Assets() {
			c.excash += len(d.ExCash(&d.Assets()[i]))
		}
		return c
	}
	want := count(whole)
	if want.cash == 0 || want.insider == 0 || want.docs == 0 || want.events == 0 || want.excash == 0 {
		t.Fatalf("the fixture lacks a deferred kind: %+v", want)
	}
	var wg sync.WaitGroup
	got := make([]counts, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = count(ds)
			if !ds.FirstPublished().Equal(whole.FirstPublished()) {
				t.Errorf("reader %d: first published %v, want %v", i, ds.FirstPublished(), whole.FirstPublished())
			}
		}()
	}
	if err := ds.FinishDeferred(late, nil); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, c := range got {
		if c != want {
			t.Errorf("reader %d: %+v, want %+v", i, c, want)
		}
	}
	if err := ds.WaitDeferred(context.Background()); err != nil || ds.Deferred() || ds.DeferredErr() != nil {
		t.Fatalf("after FinishDeferred: WaitDeferred %v, Deferred %v, DeferredErr %v", err, ds.Deferred(), ds.DeferredErr())
	}
	if err := ds.FinishDeferred(late, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a second FinishDeferred: %v, want ErrInvalid", err)
	}
	if err := whole.FinishDeferred(late, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("FinishDeferred of a whole build: %v, want ErrInvalid", err)
	}
}

// TestFinishDeferredErrors: a load error, or deferred kinds Build would
// refuse (a cash action of an unknown company), fail the Dataset's
// deferred kinds: DeferredErr says why and none of them is served.
func TestFinishDeferredErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(late *Universe) error
		want string
	}{
		{"load error", func(*Universe) error { return errors.New("cash_actions: bad part") }, "bad part"},
		{"unknown company", func(late *Universe) error {
			late.CashActions[0].CompanyID = Intern("NOPE")
			return nil
		}, `unknown company_id "NOPE"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			core, late := deferredSplit(testUniverse(t))
			ds, err := BuildWith(core, BuildOptions{Deferred: true})
			if err != nil {
				t.Fatal(err)
			}
			late.CashActions = append([]CashAction(nil), late.CashActions...)
			loadErr := c.edit(late)
			err = ds.FinishDeferred(late, loadErr)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("FinishDeferred = %v, want %q", err, c.want)
			}
			if derr := ds.WaitDeferred(context.Background()); derr == nil || derr.Error() != err.Error() || ds.DeferredErr() == nil {
				t.Fatalf("WaitDeferred = %v, DeferredErr = %v", derr, ds.DeferredErr())
			}
			for i := range ds.Issuers() {
				is := &ds.Issuers()[i]
				if len(is.CashActions())+len(is.Insider())+len(is.Documents())+len(is.FundReports()) != 0 {
					t.Fatalf("%s keeps a deferred list", is.ID)
				}
			}
			if len(ds.CashActions()) != 0 || len(ds.Universe().Documents) != 0 {
				t.Fatal("the Dataset keeps deferred kinds")
			}
		})
	}
}
