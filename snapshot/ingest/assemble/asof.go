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

// settleAsOf states in the import summary which as-of rule was used: the
// given --as-of, else the last COTAHIST session (the day the quotes end:
// a snapshot's "now" is never after its last quote, so the default quote
// windows are not empty), and how much of the reports is dated after it.
func (a *assembler) settleAsOf(context.Context, Progress) error {
	later := 0
	for i := range a.u.Reports {
		if !a.u.Reports[i].KnownOn(a.asOf) {
			later++
		}
	}
	rule := "the last COTAHIST session"
	if a.cfg.AsOf.Valid() {
		rule = "given by --as-of"
	}
	if later > 0 {
		a.rep.notef("as of %s, %s; %d reports have a reference date after it or after their retrieval: kept as filed, never served as current (no ratio point; give --as-of to date the snapshot later)", a.asOf, rule, later)
	} else {
		a.rep.notef("as of %s, %s", a.asOf, rule)
	}
	return nil
}
