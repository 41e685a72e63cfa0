package official

import (
	"cmp"
	"slices"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/fetch"
)

// filingVersion is one version of one filing of a yearly CVM archive:
// a DFP or ITR filing (company and reference date) or an FII monthly
// report (fund and month).
type filingVersion struct {
	key     string      // the filing
	version int         // VERSAO
	day     engine.Date // the São Paulo day it was published (DT_RECEB, Data_Entrega); NoDate: known from the start
}

// publication is one download of a yearly archive: the versions it holds
// (by index into the filingVersion list) and the day it was downloaded
// (NoDate: the newest, under the official name).
type publication struct {
	day  engine.Date
	hold []bool
}

// publications returns the downloads of a yearly archive that hold every
// version of vs, as the CVM publishes them: each download holds, of each
// filing published by its day, the highest version published by then
// (the archive is republished under one name; an earlier version is
// dropped from it the day its restatement arrives). One download is
// made the day before each restatement's day, holding the version it
// replaces, and the last one (day NoDate, the official name) holds the
// highest version of every filing; downloads that would hold the same
// versions are made once. A version restated the day it was published
// is in no download, as in no download of the CVM's.
func publications(vs []filingVersion) []publication {
	byKey := map[string][]int{}
	for i, v := range vs {
		byKey[v.key] = append(byKey[v.key], i)
	}
	var days []engine.Date
	for _, ix := range byKey {
		slices.SortFunc(ix, func(a, b int) int { return cmp.Compare(vs[a].version, vs[b].version) })
		for _, i := range ix[1:] {
			if vs[i].day.Valid() {
				days = append(days, vs[i].day-1)
			}
		}
	}
	slices.Sort(days)
	days = slices.Compact(days)
	holdAt := func(day engine.Date) []bool {
		hold := make([]bool, len(vs))
		for _, ix := range byKey {
			best := -1
			for _, i := range ix {
				if !day.Valid() || !vs[i].day.Valid() || vs[i].day <= day {
					best = i // ix is by version: the last published by day
				}
			}
			if best >= 0 {
				hold[best] = true
			}
		}
		return hold
	}
	var out []publication
	for _, d := range append(days, engine.NoDate) {
		p := publication{day: d, hold: holdAt(d)}
		if n := len(out); n > 0 && slices.Equal(out[n-1].hold, p.hold) {
			out[n-1] = p // the same versions: made once, the later
			continue
		}
		out = append(out, p)
	}
	if n := len(out); n > 0 && !slices.Contains(out[0].hold, true) {
		out = out[1:] // before any filing: no download
	}
	return out
}

// publicationPath is the path of download p of the yearly archive at rel:
// rel for the newest, else the name pregao fetch keeps an earlier
// download under (fetch.KeptName), stored at 20:00 in São Paulo of its
// day.
func publicationPath(rel string, p publication) string {
	if !p.day.Valid() {
		return rel
	}
	return fetch.KeptName(rel, p.day.Time().Add(23*time.Hour))
}
