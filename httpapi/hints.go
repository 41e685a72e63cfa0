package httpapi

import (
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"
)

// prefixHint returns, for a path no route matches, the path of the API
// operation the client most likely meant, as the end of the 404's
// message: the path under the API prefix (/companies/PETR4 for
// /v2/companies/PETR4), or with another version segment replaced by the
// prefix (/v1/companies/PETR4); "" when neither is an operation.
func prefixHint(rt *httprouter.Router, prefix, method, path string) string {
	if prefix == "" || prefix == "/" {
		return ""
	}
	if method == http.MethodHead || method == http.MethodOptions {
		method = http.MethodGet
	}
	var candidates []string
	if !strings.HasPrefix(path, prefix+"/") {
		candidates = append(candidates, prefix+path)
	}
	if rest := strings.TrimPrefix(path, "/"); strings.Contains(rest, "/") {
		first, tail, _ := strings.Cut(rest, "/")
		if "/"+first != prefix && len(first) <= 4 && strings.HasPrefix(first, "v") {
			candidates = append(candidates, prefix+"/"+tail)
		}
	}
	for _, c := range candidates {
		if h, _, _ := rt.Lookup(method, c); h != nil {
			return "; the API's paths start with " + prefix + ": " + method + " " + c
		}
	}
	return ""
}
