package snapshot

import (
	"fmt"
	"slices"

	"github.com/pregao/pregao/engine"
)

// cashOrder returns the order in which a file of format 6 stores acts:
// that of engine.CompareCashRows, the order engine.Build keeps them in,
// reached by the sort Build makes from acts' order (so that rows alike in
// it come as Build would put them), as the positions in acts of the rows
// in file order; nil when acts are in that order already. Build then
// checks the order instead of sorting. It refuses acts whose stored
// order would change which version of an event is current: two versions
// of one event ranking alike (engine.CompareCashVersions, of which the
// later row is current) that the order swaps.
func cashOrder(acts []engine.CashAction) ([]int32, error) {
	sorted := true
	for i := 1; i < len(acts) && sorted; i++ {
		sorted = engine.CompareCashRows(&acts[i-1], &acts[i]) <= 0
	}
	if sorted {
		return nil, nil
	}
	order := make([]int32, len(acts))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int { return engine.CompareCashRows(&acts[x], &acts[y]) })
	// Rows ranking alike share their event, version, publication and id:
	// their positions must keep their order.
	type alike struct {
		event, id string
		version   int
		publish   engine.Stamp
	}
	key := func(a *engine.CashAction) alike {
		k := alike{event: a.EventID, id: a.ID, version: a.Version, publish: a.PublishDate}
		if k.event == "" {
			k.event = "\x00" + a.ID // the row's own event
		}
		return k
	}
	last := make(map[alike]int32, len(acts)) // the file position of the last row seen of each key
	pos := make([]int32, len(acts))
	for p, i := range order {
		pos[i] = int32(p)
	}
	for i := range acts {
		k := key(&acts[i])
		if p, ok := last[k]; ok && p > pos[i] {
			return nil, fmt.Errorf("cash actions %d and %d (id %q, event %q, version %d): two versions ranking alike that the engine's order (engine.CompareCashRows) swaps; format 6 stores cash actions in that order", order[p], i, acts[i].ID, acts[i].EventID, acts[i].Version)
		}
		last[k] = pos[i]
	}
	return order, nil
}

// checkCashOrder refuses cash actions (of a file of format 6) that are
// not in engine.CompareCashRows order.
func checkCashOrder(acts []engine.CashAction) error {
	for i := 1; i < len(acts); i++ {
		if engine.CompareCashRows(&acts[i-1], &acts[i]) > 0 {
			return fmt.Errorf("cash action %d (id %q): out of order (prior_ex_date descending, company_id, ticker, event_id, version descending, id)", i, acts[i].ID)
		}
	}
	return nil
}
