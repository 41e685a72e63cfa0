package httpapi

import "net/http"

// authorize checks that the key found by authenticate may call rt: market
// data needs a plan, which a key with only the admin scope lacks (403).
func (a *API) authorize(c *call, rt *Route) int {
	if c.key.Plan == "" {
		return c.out.fail(http.StatusForbidden, "forbidden: this key has no plan (a key with only the admin scope may call only the /admin operations); market data needs a key with plan delayed or eod")
	}
	return 0
}
