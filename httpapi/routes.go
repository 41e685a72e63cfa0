package httpapi

import (
	"fmt"
	"net/http"

	"github.com/julienschmidt/httprouter"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Route templates (relative to the prefix), used as the metrics' route label.
const (
	routeHighs         = "/indexes/:symbol/highs"
	routeLows          = "/indexes/:symbol/lows"
	routeQuotes        = "/quotes"
	routeQuote         = "/quotes/:ticker"
	routeVariations    = "/stocks/variations"
	routeCompanies     = "/companies"
	routeCompany       = "/companies/:id"
	routeCash          = "/companies/cash-corporate-actions"
	routeRatios        = "/companies/:id/ratios"
	routeValuation     = "/companies/:id/ratios/valuation"
	routeRawReports    = "/companies/:id/raw-reports"
	routeReports       = "/companies/:id/reports"
	routeShareActions  = "/companies/:id/corporate-actions"
	routeInsider       = "/companies/:id/insider-transactions"
	routeDocuments     = "/companies/:id/documents"
	routeSharesHistory = "/companies/:id/shares-history"
	routeScreener      = "/screener"
	routeFundRatios    = "/traded-funds/:id/ratios"
	routeCatalog       = "/ratios/catalog"
	routeHealthz       = "/healthz"
	routeReadyz        = "/readyz"
	routeMetricsPath   = "/metrics"
	routeUnmatched     = "(unmatched)"
	cashActionsSegment = "cash-corporate-actions"
)

// routes builds the router. It panics only on a route conflict (a setup
// mistake that TestRouter catches).
func (a *API) routes(g prometheus.Gatherer) *httprouter.Router {
	r := httprouter.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.HandleOPTIONS = false
	p := a.cfg.Prefix
	get := func(route string, h handler) { r.GET(p+route, a.wrap(route, routeOpts{}, h)) }
	post := func(route string, h handler) { r.POST(p+route, a.wrap(route, routeOpts{}, h)) }

	get(routeHighs, a.indexHighs)
	get(routeLows, a.indexLows)
	post(routeQuotes, a.quotesBatch)
	get(routeQuote, a.quoteSingle)
	get(routeVariations, a.variations)
	get(routeCompanies, a.companies)

	// httprouter refuses a static segment and a parameter at the same
	// position, so /companies/cash-corporate-actions is dispatched inside
	// the /companies/:id handle; the public paths are unchanged.
	detail := a.wrap(routeCompany, routeOpts{}, a.company)
	cash := a.wrap(routeCash, routeOpts{}, a.cashActions)
	r.GET(p+routeCompany, func(w http.ResponseWriter, req *http.Request, ps httprouter.Params) {
		if ps.ByName("id") == cashActionsSegment {
			cash(w, req, ps)
			return
		}
		detail(w, req, ps)
	})
	get(routeRatios, a.ratiosFundamental)
	get(routeValuation, a.ratiosValuation)
	get(routeRawReports, a.rawReports)
	get(routeReports, a.reports)
	get(routeShareActions, a.shareActions)
	get(routeInsider, a.insider)
	get(routeDocuments, a.documents)
	get(routeSharesHistory, a.sharesHistory)
	post(routeScreener, a.screener)
	get(routeFundRatios, a.fundRatios)
	get(routeCatalog, a.catalog)

	pub := routeOpts{public: true}
	r.GET(routeHealthz, a.wrap(routeHealthz, pub, a.healthz))
	r.GET(routeReadyz, a.wrap(routeReadyz, pub, a.readyz))
	if g != nil {
		mh := promhttp.HandlerFor(g, promhttp.HandlerOpts{})
		rm := a.m.route(routeMetricsPath)
		r.GET(routeMetricsPath, func(w http.ResponseWriter, req *http.Request, _ httprouter.Params) {
			sw := &statusWriter{ResponseWriter: w, status: 200}
			mh.ServeHTTP(sw, req)
			rm.observe(sw.status, 0)
		})
	}

	unmatched := a.m.route(routeUnmatched)
	r.NotFound = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		a.plainError(w, http.StatusNotFound, fmt.Sprintf("no operation at %s %s", req.Method, req.URL.Path))
		unmatched.observe(http.StatusNotFound, 0)
	})
	r.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		a.plainError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on %s (allowed: %s)", req.Method, req.URL.Path, w.Header().Get("Allow")))
		unmatched.observe(http.StatusMethodNotAllowed, 0)
	})
	r.PanicHandler = func(w http.ResponseWriter, req *http.Request, v any) {
		a.m.panics.Inc()
		a.log.Error("panic outside a handler", "method", req.Method, "path", req.URL.Path, "panic", fmt.Sprint(v))
		a.plainError(w, http.StatusInternalServerError, "internal server error")
		unmatched.observe(http.StatusInternalServerError, 0)
	}
	return r
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// healthz answers 200 while the process is alive, with the server's
// version: {"status":"ok","version":"..."}.
func (a *API) healthz(c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
	dst = append(dst, `{"status":"ok","version":`...)
	dst = appendString(dst, a.cfg.Version)
	return append(dst, '}'), nil
}

// readyz answers 200 once a verified snapshot is published, 503 before and
// once the server is draining (SetDraining).
func (a *API) readyz(c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
	if a.draining.Load() {
		return nil, errorf(http.StatusServiceUnavailable, "not ready: shutting down")
	}
	ds := a.store.Current()
	if ds == nil {
		return nil, errorf(http.StatusServiceUnavailable, "not ready: no snapshot loaded yet")
	}
	dst = append(dst, `{"status":"ready","as_of":`...)
	dst = appendTime(dst, datasetAsOf(ds))
	return append(dst, '}'), nil
}
