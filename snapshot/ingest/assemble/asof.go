package assemble

import (
	"context"
	"errors"
	"time"

	"github.com/pregao/pregao/engine"
)

// asOfTime is the as-of instant of day d: the end of that session, 18:00
// in São Paulo (UTC-3), 21:00 UTC.
func asOfTime(d engine.Date) time.Time { return d.Time().Add(21 * time.Hour) }

// readDates fixes as-of (provisionally: see settleAsOf) and the retrieval
// time.
func (a *assembler) readDates(context.Context, Progress) error {
	for _, s := range a.quotes.Securities {
		if !a.lastSession.Valid() || s.Last > a.lastSession {
			a.lastSession = s.Last
		}
	}
	if a.cfg.AsOf.Valid() {
		a.asOf = a.cfg.AsOf
	} else {
		for _, s := range a.quotes.Securities {
			if !a.asOf.Valid() || s.Last > a.asOf {
				a.asOf = s.Last
			}
		}
		if !a.asOf.Valid() {
			return errors.New("import: --as-of is required when no COTAHIST quotes are given")
		}
	}
	a.u.Meta.AsOf = asOfTime(a.asOf)
	a.opt.Retrieved = a.u.Meta.AsOf
	if !a.cfg.Retrieved.IsZero() {
		a.opt.Retrieved = a.cfg.Retrieved.UTC()
	}
	return nil
}

// settleAsOf moves the as-of day, unless Config.AsOf is given, to the
// latest day the imported data speaks of: the last COTAHIST session, a
// report's reference date or the last day of a fund report's month (a
// snapshot of 2023 reports is not "as of" an earlier quote day). Unless
// Config.Retrieved is given, the retrieval stamps of what was read so far
// move with it.
func (a *assembler) settleAsOf(context.Context, Progress) error {
	if a.cfg.AsOf.Valid() {
		return nil
	}
	d := a.asOf
	for i := range a.u.Reports {
		if r := a.u.Reports[i].ReferenceDate; r.Valid() && r > d {
			d = r
		}
	}
	for i := range a.u.FundReports {
		if r := a.u.FundReports[i].ReferenceDate; r.Valid() {
			if end := engine.DateOf(r.Time().AddDate(0, 1, -1)); end > d {
				d = end
			}
		}
	}
	if d == a.asOf {
		return nil
	}
	old := a.u.Meta.AsOf
	a.asOf = d
	a.u.Meta.AsOf = asOfTime(d)
	a.rep.notef("as of %s, the latest reference date of the reports (last COTAHIST session %s)", d, a.lastSession)
	if !a.cfg.Retrieved.IsZero() {
		return nil
	}
	a.opt.Retrieved = a.u.Meta.AsOf
	restamp := func(t *time.Time) {
		if t.Equal(old) {
			*t = a.u.Meta.AsOf
		}
	}
	for i := range a.u.Reports {
		r := &a.u.Reports[i]
		restamp(&r.RetrievalDate)
		for k := range r.Sources {
			restamp(&r.Sources[k].RetrievedAt)
		}
	}
	for i := range a.u.FundReports {
		r := &a.u.FundReports[i]
		restamp(&r.RetrievalDate)
		for k := range r.Sources {
			restamp(&r.Sources[k].RetrievedAt)
		}
	}
	return nil
}
