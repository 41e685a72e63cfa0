package httpapi

import (
	"hash/maphash"
	"net/http"

	"github.com/julienschmidt/httprouter"
)

// routedSlots is the size of the API's table of paths routed (dispatch):
// a path in use has a slot of its own while fewer than about this many
// are in use at once.
const routedSlots = 1024

// maxRoutedPath bounds the paths dispatch remembers (bytes), so that the
// table holds at most routedSlots × maxRoutedPath bytes of paths; a
// longer one is routed each time.
const maxRoutedPath = 256

// routed is a method and path as the router matched them once, with the
// handle and parameters it found. Never modified: the parameters are
// shared by every request of that method and path, which read them only.
type routed struct {
	method, path string
	h            httprouter.Handle
	ps           httprouter.Params
}

// routedSeed seeds the hash that places a path in API.routed.
var routedSeed = maphash.MakeSeed()

// dispatch serves r through the router, or through the handle the router
// found for the same method and path before (API.routed), which spares
// the tree's walk and the parameters' allocation of every request after
// the first. A request the router has no handle for (404, 405, OPTIONS)
// is the router's each time. A panic is the router's PanicHandler's
// either way.
func (a *API) dispatch(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if len(path) > maxRoutedPath {
		a.router.ServeHTTP(w, r)
		return
	}
	slot := &a.routed[maphash.String(routedSeed, path)%routedSlots]
	e := slot.Load()
	if e == nil || e.path != path || e.method != r.Method {
		h, ps, _ := a.router.Lookup(r.Method, path)
		if h == nil {
			a.router.ServeHTTP(w, r)
			return
		}
		e = &routed{method: r.Method, path: path, h: h, ps: ps}
		slot.Store(e)
	}
	if ph := a.router.PanicHandler; ph != nil {
		defer func() {
			if v := recover(); v != nil {
				ph(w, r, v)
			}
		}()
	}
	e.h(w, r, e.ps)
}
