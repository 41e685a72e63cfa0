package httpapi

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/pregao/pregao/engine"
)

// sectors serves GET /sectors (addition): the snapshot's sector taxonomy,
// every node by id (sector, industry group, industry, sub-industry: levels
// 1 to 4) with its parent and the number of companies, BDR issuers and
// listed funds classified under it; level keeps one level. The answer is
// encoded once per Dataset and level.
func (a *API) sectors(c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
	q := c.query(r)
	level := q.integer("level")
	w := readWindow(&q)
	if err := q.err(); err != nil {
		return nil, err
	}
	in := a.info(c.ds)
	return cachedWindow(c, dst, &in.sectorsBody[level], w, func(dst []byte) ([]byte, int) {
		counts := map[*engine.Sector]int{}
		iss := c.ds.Issuers()
		for i := range iss {
			for _, s := range iss[i].Sector {
				if s != nil {
					counts[s]++
				}
			}
		}
		dst = append(dst, '[')
		n := 0
		for _, s := range c.ds.Sectors() {
			if level != 0 && s.Level != level {
				continue
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = append(dst, `{"id":`...)
			dst = appendString(dst, s.ID)
			dst = append(dst, `,"name":`...)
			dst = appendString(dst, s.Name)
			dst = append(dst, `,"level":`...)
			dst = appendInt(dst, int64(s.Level))
			dst = append(dst, `,"parent_id":`...)
			dst = appendStringOrNull(dst, s.ParentID)
			dst = append(dst, `,"company_count":`...)
			dst = appendInt(dst, int64(counts[s]))
			dst = append(dst, '}')
		}
		return append(dst, ']'), n
	}), nil
}
