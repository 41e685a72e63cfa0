package httpapi

import (
	"fmt"
	"hash/maphash"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/julienschmidt/httprouter"
)

// dispatch answers a path from the handle remembered for it exactly as
// the router does: the same answer the second time, another method on
// the same path its own (405 here), a path placed in another path's slot
// routed by the router, not given the other's handle and parameters, and
// a long path routed but never remembered.
func TestDispatchRemembered(t *testing.T) {
	ts := newTestServer(t, true)
	slotOf := func(path string) *routed {
		return ts.api.routed[maphash.String(routedSeed, path)%routedSlots].Load()
	}
	const a, b = "/v2/companies/ENHZ", "/v2/companies/MSAZ"
	first := ts.do("GET", a, testKeyDelayed, "")
	if first.Code != 200 {
		t.Fatalf("GET %s: %d %s", a, first.Code, first.Body)
	}
	e := slotOf(a)
	if e == nil || e.path != a || e.method != "GET" || e.ps.ByName("id") != "ENHZ" {
		t.Fatalf("slot of %s holds %+v", a, e)
	}
	if again := ts.do("GET", a, testKeyDelayed, ""); again.Code != 200 || again.Body.String() != first.Body.String() {
		t.Errorf("GET %s again: %d, same body %v", a, again.Code, again.Body.String() == first.Body.String())
	}
	if w := ts.do("POST", a, testKeyDelayed, "{}"); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST %s after GET: %d, want 405", a, w.Code)
	}
	if w := ts.do("HEAD", a, testKeyDelayed, ""); w.Code != 200 {
		t.Errorf("HEAD %s: %d", a, w.Code)
	}
	own := ts.do("GET", b, testKeyDelayed, "")
	if own.Code != 200 || own.Body.String() == first.Body.String() {
		t.Fatalf("GET %s: %d, the same body as %s: %v", b, own.Code, a, own.Body.String() == first.Body.String())
	}
	// a's entry placed in b's slot, as if their hashes met.
	ts.api.routed[maphash.String(routedSeed, b)%routedSlots].Store(e)
	if w := ts.do("GET", b, testKeyDelayed, ""); w.Code != 200 || w.Body.String() != own.Body.String() {
		t.Errorf("GET %s with %s in its slot: %d, its own body %v", b, a, w.Code, w.Body.String() == own.Body.String())
	}
	if e := slotOf(b); e == nil || e.path != b || e.ps.ByName("id") != "MSAZ" {
		t.Errorf("slot of %s holds %+v after its request", b, e)
	}
	long := "/v2/companies/" + strings.Repeat("X", maxRoutedPath)
	if w := ts.do("GET", long, testKeyDelayed, ""); w.Code != http.StatusBadRequest { // the route's own refusal
		t.Errorf("GET a long path: %d, want 400", w.Code)
	}
	if e := slotOf(long); e != nil && e.path == long {
		t.Error("a path over maxRoutedPath remembered")
	}
	if w := ts.do("GET", "/v2/no/such/route", testKeyDelayed, ""); w.Code != http.StatusNotFound {
		t.Errorf("GET an unknown route: %d, want 404", w.Code)
	}
}

// A handle that panics is answered by the router's PanicHandler, whether
// the router or the remembered slot found it.
func TestDispatchPanicHandler(t *testing.T) {
	r := httprouter.New()
	r.GET("/boom/:id", func(http.ResponseWriter, *http.Request, httprouter.Params) { panic("boom") })
	handled := 0
	r.PanicHandler = func(w http.ResponseWriter, _ *http.Request, v any) {
		if v == "boom" {
			handled++
		}
		w.WriteHeader(http.StatusInternalServerError)
	}
	a := &API{router: r}
	for i := range 2 {
		w := httptest.NewRecorder()
		a.dispatch(w, httptest.NewRequest("GET", "/boom/1", nil))
		if w.Code != http.StatusInternalServerError || handled != i+1 {
			t.Fatalf("request %d: %d, PanicHandler called %d times", i+1, w.Code, handled)
		}
	}
	if e := a.routed[maphash.String(routedSeed, "/boom/1")%routedSlots].Load(); e == nil {
		t.Error("the path was not remembered")
	}
}

// tableRouter returns a router set as the API's (routes) with every
// route of routeTable under /v2, HEAD beside each GET, the handle of each
// made by handle from its method and path ("GET /companies/:id"). The
// cash routes, which the API dispatches inside /companies/:id, and the
// root routes are left out.
func tableRouter(handle func(pattern string) httprouter.Handle) *httprouter.Router {
	r := httprouter.New()
	r.RedirectTrailingSlash, r.RedirectFixedPath = false, false
	r.HandleMethodNotAllowed, r.HandleOPTIONS = true, true
	for _, rt := range routeTable {
		if rt.Root || rt.Path == routeCash || rt.Path == routeCash+".csv" {
			continue
		}
		h := handle(rt.Method + " " + rt.Path)
		r.Handle(rt.Method, "/v2"+rt.Path, h)
		if rt.Method == http.MethodGet {
			r.Handle(http.MethodHead, "/v2"+rt.Path, h)
		}
	}
	return r
}

// BenchmarkDispatch routes the small answer's path (w4) to a handle that
// does nothing: through the router each time (router), and remembered
// (dispatch).
func BenchmarkDispatch(b *testing.B) {
	n := 0
	r := tableRouter(func(string) httprouter.Handle {
		return func(http.ResponseWriter, *http.Request, httprouter.Params) { n++ }
	})
	r.PanicHandler = func(http.ResponseWriter, *http.Request, any) {}
	a := &API{router: r}
	req := httptest.NewRequest("GET", "/v2/indexes/IBOV/highs?limit=10", nil)
	w := httptest.NewRecorder()
	b.Run("router", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r.ServeHTTP(w, req)
		}
	})
	b.Run("dispatch", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			a.dispatch(w, req)
		}
	})
	if n == 0 {
		b.Fatal("the handle never ran")
	}
}

// FuzzDispatch: dispatch finds the handle and parameters the router
// finds, for any method and path, asked in any order (a path remembered,
// another in its slot, the same path by another method).
func FuzzDispatch(f *testing.F) {
	methods := []string{"GET", "POST", "HEAD", "PUT", "OPTIONS"}
	for _, s := range []struct {
		m1, m2       uint8
		path1, path2 string
	}{
		{0, 0, "/v2/indexes/IBOV/highs", "/v2/indexes/IBOV/highs"},
		{0, 1, "/v2/companies/ENHZ", "/v2/companies/ENHZ"},
		{0, 0, "/v2/companies/ENHZ", "/v2/companies/MSAZ"},
		{1, 1, "/v2/quotes", "/v2/quotes/"},
		{4, 0, "/v2/companies", "/v2/companies/cash-corporate-actions"},
		{0, 2, "/v2/quotes/ENHZ3/total-return", "/v2/quotes/ENHZ3"},
	} {
		f.Add(s.m1, s.m2, s.path1, s.path2)
	}
	type found struct {
		pattern string
		ps      string
		status  int
	}
	newRouter := func(got *found) *httprouter.Router {
		return tableRouter(func(pattern string) httprouter.Handle {
			return func(_ http.ResponseWriter, _ *http.Request, ps httprouter.Params) {
				got.pattern, got.ps = pattern, fmt.Sprint(ps)
			}
		})
	}
	var viaDispatch, viaRouter found
	a := &API{router: newRouter(&viaDispatch)}
	plain := newRouter(&viaRouter)
	f.Fuzz(func(t *testing.T, m1, m2 uint8, path1, path2 string) {
		for _, q := range []struct {
			m    uint8
			path string
		}{{m1, path1}, {m2, path2}, {m1, path1}} {
			if !strings.HasPrefix(q.path, "/") {
				q.path = "/" + q.path
			}
			method := methods[int(q.m)%len(methods)]
			req := httptest.NewRequest(method, "/", nil)
			req.URL.Path = q.path
			viaDispatch, viaRouter = found{}, found{}
			wd, wr := httptest.NewRecorder(), httptest.NewRecorder()
			a.dispatch(wd, req)
			plain.ServeHTTP(wr, req)
			viaDispatch.status, viaRouter.status = wd.Code, wr.Code
			if viaDispatch != viaRouter {
				t.Fatalf("%s %q: dispatch found %+v, the router %+v", method, q.path, viaDispatch, viaRouter)
			}
		}
	})
}
