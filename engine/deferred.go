package engine

import (
	"context"
	"fmt"
	"sync/atomic"
)

// A Dataset built with BuildOptions.Deferred is usable before four kinds
// of its Universe are in: cash actions, fund reports, insider reports
// and documents (the deferred kinds). The fund ratio points' source
// lists are shared with the fund reports' as they come (the loader's
// work), so they wait for them too. Quotes, charts, rankings, the screener at the
// current time, companies, indexes, company ratios and reports read none
// of them; a server publishes such a Dataset at once and its loader adds
// the deferred kinds afterwards with FinishDeferred. Until then every
// accessor of the deferred kinds (Issuer.CashActions, Insider,
// Documents, FundReports, Dataset.CashActions, FundSources, Universe,
// FirstPublished, the total return, the cash at an earlier time) waits
// for them; a caller that must not wait unbounded, a request, calls
// WaitDeferred with its context first. If they cannot be added (the
// loader's error) the accessors give none and DeferredErr says why: the
// Dataset must not answer what reads them (a server marks the snapshot
// failed, as for a damaged block).

// deferredState is the progress of a Dataset's deferred kinds. Its
// fields are written before done is closed and read after.
type deferredState struct {
	done   chan struct{} // closed once FinishDeferred has run
	closed atomic.Bool   // done is closed: one atomic load for readers
	err    error         // why the kinds are not in (nil: they are)
	opt    BuildOptions  // Build's options, for the deferred steps
	fin    atomic.Bool   // FinishDeferred was called
}

// wait returns once the deferred kinds are in (or failed); at once for a
// Dataset built without them deferred (s nil).
func (s *deferredState) wait() {
	if s == nil || s.closed.Load() {
		return
	}
	<-s.done
}

// Deferred reports whether d was built with its deferred kinds still to
// come (BuildOptions.Deferred) and they are not in yet.
func (d *Dataset) Deferred() bool {
	s := d.deferred
	return s != nil && !s.closed.Load()
}

// WaitDeferred waits until d's deferred kinds are in and returns nil, or
// returns the error that kept them out (DeferredErr) or ctx's. For a
// Dataset built without deferral, or once they are in, it costs one
// atomic load.
func (d *Dataset) WaitDeferred(ctx context.Context) error {
	s := d.deferred
	if s == nil {
		return nil
	}
	if !s.closed.Load() {
		select {
		case <-s.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.err
}

// DeferredErr returns why d's deferred kinds could not be added, nil
// while they are awaited or once they are in.
func (d *Dataset) DeferredErr() error {
	s := d.deferred
	if s == nil || !s.closed.Load() {
		return nil
	}
	return s.err
}

// FinishDeferred adds the deferred kinds to d, which Build left out
// (BuildOptions.Deferred): late's CashActions, FundReports,
// InsiderReports and Documents (its other fields are ignored), checked
// and indexed as Build does, or,
// with loadErr set, records that they could not be read. Either way the
// accessors that wait for them are released; the error (loadErr, or
// what Build would have returned for them) is DeferredErr's and is
// returned. It is called once; a second call, or one on a Dataset built
// without deferral, is an error that changes nothing.
func (d *Dataset) FinishDeferred(late *Universe, loadErr error) (err error) {
	s := d.deferred
	if s == nil || !s.fin.CompareAndSwap(false, true) {
		return fmt.Errorf("build: no deferred kinds to add: %w", ErrInvalid)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("build: BUG: %v: %w", r, ErrInvalid)
		}
		if err != nil {
			// Nothing of the deferred kinds is served from a Dataset
			// that failed them: every list is emptied.
			d.dropDeferred()
		}
		s.err = err
		s.closed.Store(true)
		close(s.done)
	}()
	if loadErr != nil {
		return loadErr
	}
	if late == nil {
		return fmt.Errorf("build: nil deferred universe: %w", ErrInvalid)
	}
	u := d.u
	u.CashActions = late.CashActions
	u.FundReports = late.FundReports
	u.InsiderReports = late.InsiderReports
	u.Documents = late.Documents
	b := &builder{u: u, d: d, lastIssuer: -1, serial: s.opt.Serial, cashSorted: s.opt.CashSorted}
	if err := b.buildDeferredLists(); err != nil {
		return err
	}
	return b.buildCash()
}

// dropDeferred empties every list of the deferred kinds (a failed
// FinishDeferred: none is served half made).
func (d *Dataset) dropDeferred() {
	u := d.u
	u.CashActions, u.FundReports, u.InsiderReports, u.Documents = nil, nil, nil, nil
	d.cash, d.cashByPay, d.exCash, d.exCashAt, d.trMarks = nil, nil, nil, nil, nil
	for i := range d.issuers {
		is := &d.issuers[i]
		is.cashActions, is.fundReports, is.insider, is.documents = nil, nil, nil, nil
	}
}

// CashActions returns the company's cash actions sorted by prior_ex_date
// descending (then ticker, event, version descending); every version is
// kept. Shared: read only. It waits for the deferred kinds (see
// Dataset.WaitDeferred).
func (is *Issuer) CashActions() []*CashEvent {
	is.deferred.wait()
	return is.cashActions
}

// Insider returns the company's insider reports sorted by
// reference_date, aggregation, version. Shared: read only. It waits for
// the deferred kinds.
func (is *Issuer) Insider() []*InsiderReport {
	is.deferred.wait()
	return is.insider
}

// Documents returns the company's documents sorted by publish_date
// descending, then id. Shared: read only. It waits for the deferred
// kinds.
func (is *Issuer) Documents() []*Document {
	is.deferred.wait()
	return is.documents
}

// FundReports returns a fund's monthly reports sorted by reference_date
// then version (none for a company). Shared: read only. It waits for
// the deferred kinds.
func (is *Issuer) FundReports() []*FundReport {
	is.deferred.wait()
	return is.fundReports
}
