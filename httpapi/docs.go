package httpapi

import (
	"embed"
	"net/http"
	"path"

	"github.com/julienschmidt/httprouter"
)

// The docs page: the OpenAPI document rendered by Swagger UI (vendored in
// docsui/, see its PROVENANCE.md), served from the binary, offline. The
// page's Content-Security-Policy allows no other host, so nothing it
// loads can reach one; "Try it out" calls this server with the key given
// to "Authorize".

// docsPath is where the API reference page is served (no key needed);
// its files are under docsPath/.
const docsPath = "/docs"

//go:embed docsui/index.html docsui/init.js docsui/swagger-ui-bundle.js docsui/swagger-ui.css docsui/favicon.svg
var docsFiles embed.FS

// docsCSP keeps the page on this server: scripts, styles, images and
// calls from its own origin only (Swagger UI sets inline styles and uses
// data: images).
var docsCSP = http.Header{
	"Content-Security-Policy": {"default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
	"Referrer-Policy":         {"no-referrer"},
}

// docsAssets are the page and its files, by name ("" is the page).
type docsAssets map[string]*staticAsset

func newDocsAssets() docsAssets {
	types := map[string]string{
		"index.html":           "text/html; charset=utf-8",
		"init.js":              "text/javascript; charset=utf-8",
		"swagger-ui-bundle.js": "text/javascript; charset=utf-8",
		"swagger-ui.css":       "text/css; charset=utf-8",
		"favicon.svg":          "image/svg+xml",
	}
	out := docsAssets{}
	for name, ctype := range types {
		b, err := docsFiles.ReadFile(path.Join("docsui", name))
		if err != nil {
			panic(err) // embedded above: cannot fail
		}
		if name == "index.html" {
			name = ""
		}
		out[name] = newStaticAsset(ctype, b, 3600)
	}
	return out
}

// docsFile serves the files of the page (/docs/:file); /docs/ (see the
// router's NotFound) redirects to the page, whose links are relative to
// /docs.
func (a *API) docsFile() httprouter.Handle {
	files := map[string]httprouter.Handle{}
	for name, s := range a.docs {
		if name != "" {
			files[name] = a.serveStatic(s, docsPath+"/:file", docsCSP)
		}
	}
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		name := ps.ByName("file")
		h := files[name]
		if h == nil {
			a.plainError(w, http.StatusNotFound, "no file "+echo(name)+" in the docs page (try "+docsPath+")")
			return
		}
		h(w, r, ps)
	}
}
