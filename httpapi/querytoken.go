package httpapi

import (
	"net/http"
	"net/url"
	"strings"
)

// queryTokenParam is the query parameter of Config.QueryToken.
const queryTokenParam = "token"

// takeQueryToken returns the value of r's token= query parameter and
// removes every token parameter from r's query (so that the declarations,
// the answer's key, the ETag and the logs never see it); false when r
// has none.
func takeQueryToken(r *http.Request) (string, bool) {
	raw := r.URL.RawQuery
	if !strings.Contains(raw, queryTokenParam+"=") {
		return "", false
	}
	var tok string
	found := false
	kept := make([]string, 0, strings.Count(raw, "&")+1)
	for _, kv := range strings.Split(raw, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if name, err := url.QueryUnescape(k); err == nil && name == queryTokenParam {
			if !found {
				tok, _ = url.QueryUnescape(v)
				found = true
			}
			continue
		}
		kept = append(kept, kv)
	}
	r.URL.RawQuery = strings.Join(kept, "&")
	r.RequestURI = r.URL.RequestURI()
	return strings.TrimSpace(tok), found
}

// queryTokenHint ends the 401 of a request without an Authorization
// header that sent token= to a server that does not take it.
func queryTokenHint(on bool, r *http.Request) string {
	if on || !strings.Contains(r.URL.RawQuery, queryTokenParam+"=") {
		return ""
	}
	return " (this server does not take the key in the query: pregao serve --query-token turns that on)"
}
