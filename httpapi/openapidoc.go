package httpapi

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// Each operation's description in the OpenAPI document is short: it
// links to the part of docs/api.md that states its rules (defaults,
// errors, decisions, examples), which the document does not repeat.
// routeDocs names that part for each route: a heading of docs/api.md, or
// "heading|prefix", a bullet of that section (the link goes to the
// heading); several parts, one a line, give several links. The headings'
// anchors (as GitHub writes them, see githubAnchor) are copied into
// openapi_descriptions.json (the package cannot read docs/ at run time);
// TestOpenAPIFile fails when the copy is stale, or a heading gone, and
// -update-openapi rewrites it.

//go:embed openapi_descriptions.json
var openAPIDescriptions []byte

// docsRepo is where docs/api.md is read: the repository's file at a
// release tag, or on main (docsRef).
const docsRepo = "https://github.com/pregao/pregao/blob/"

// releaseRE matches a release version (a tag): v0.1.0.
var releaseRE = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)

// docsRef is the revision of docs/api.md the links of a document of
// version name: the release's tag for a release, else main.
func docsRef(version string) string {
	if releaseRE.MatchString(version) {
		return version
	}
	return "main"
}

const (
	docHighs       = "## 1, 2. GET /indexes/{indexSymbol}/highs and /lows"
	docIndexes     = "## GET /indexes and GET /indexes/{indexSymbol} (additions)"
	docQuotes      = "## 3. POST /quotes and GET /quotes/{ticker}"
	docVariations  = "## GET /stocks/variations"
	docCompanies   = "## 4. GET /companies/{companyIdentifier} and GET /companies"
	docRatios      = "## 5, 6. Ratios"
	docRawReports  = "## 7. GET /companies/{companyIdentifier}/raw-reports"
	docReports     = "## GET /companies/{companyIdentifier}/reports (standardized)"
	docCash        = "## 8. GET /companies/cash-corporate-actions"
	docIssuerCash  = "### GET /companies/{companyIdentifier}/cash-corporate-actions and GET /traded-funds/{fundIdentifier}/cash-corporate-actions (additions)"
	docShare       = "## 9. GET /companies/{companyIdentifier}/corporate-actions"
	docCompanyMore = "## /insider-transactions, /documents, /shares-history"
	docScreener    = "## 10. POST /screener"
	docFundRatios  = "## 11. GET /traded-funds/{fundIdentifier}/ratios"
	docSectors     = "## GET /sectors (addition)"
	docFunds       = "## GET /traded-funds and GET /traded-funds/{fundIdentifier} (additions)"
	docCatalog     = "## GET /ratios/catalog"
	docOperations  = "## Operations"
	docPush        = "## POST /admin/live/trades and POST /admin/live/bars (additions: the push feed)"
	docIndexLevels = "### Index levels: GET /quotes/{indexSymbol} (addition)"
	docMacro       = "### Macro series: SELIC, IPCA, CDI and the PTAX rates"
	docTotalReturn = "## Total return: GET /quotes/{ticker}/total-return and POST /quotes/total-return (addition)"
	docStream      = "## GET /stream/quotes: the live session as it happens (addition)"
	docFiles       = "## GET /files and GET /files/{name}: whole histories as files (addition)"

	docAsOf = "## Point in time: as_of (addition)"
	docCSV  = "### CSV (addition)"
)

// routeDocs maps "METHOD path" (the route table's) to its parts of
// docs/api.md (see above).
var routeDocs = map[string]string{
	"GET " + routeIndexes: docIndexes,
	"GET " + routeIndex:   docIndexes,
	"GET " + routeHighs:   docHighs,
	"GET " + routeLows:    docHighs,
	"POST " + routeQuotes: docQuotes + "\n" + docMacro,
	"GET " + routeQuote:   docQuotes + "\n" + docMacro + "\n" + docIndexLevels,

	"GET " + routeQuoteCurrent:      docQuotes + "\n" + docMacro + "\n" + docIndexLevels,
	"GET " + routeQuoteHistorical:   docQuotes + "\n" + docMacro + "\n" + docIndexLevels,
	"GET " + routeQuoteChart:        docQuotes,
	"POST " + routeQuotesCurrent:    docQuotes + "\n" + docMacro,
	"POST " + routeQuotesHistorical: docQuotes + "\n" + docMacro,
	"POST " + routeQuotesChart:      docQuotes,

	"GET " + routeVariations:    docVariations,
	"GET " + routeCompanies:     docCompanies,
	"GET " + routeCompany:       docCompanies + "\n" + docAsOf,
	"GET " + routeCash:          docCash + "\n" + docAsOf,
	"GET " + routeCompanyCash:   docIssuerCash + "\n" + docAsOf,
	"GET " + routeFundCash:      docIssuerCash + "\n" + docAsOf,
	"GET " + routeRatios:        docRatios + "\n" + docAsOf,
	"GET " + routeValuation:     docRatios + "\n" + docAsOf,
	"GET " + routeRawReports:    docRawReports + "\n" + docAsOf,
	"GET " + routeReports:       docReports + "\n" + docAsOf,
	"GET " + routeShareActions:  docShare + "\n" + docAsOf,
	"GET " + routeInsider:       docCompanyMore + "|- `insider-transactions`",
	"GET " + routeDocuments:     docCompanyMore + "|- `documents`",
	"GET " + routeSharesHistory: docCompanyMore + "|- `shares-history`",
	"POST " + routeScreener:     docScreener + "\n" + docAsOf,
	"GET " + routeFundRatios:    docFundRatios + "\n" + docAsOf,
	"GET " + routeSectors:       docSectors,
	"GET " + routeFunds:         docFunds,
	"GET " + routeFund:          docFunds,
	"GET " + routeCatalog:       docCatalog,
	"GET " + routeStreamQuotes:  docStream,
	"GET " + routeFiles:         docFiles,
	"GET " + routeFile:          docFiles,
	"POST " + routeLiveTrades:   docPush,
	"POST " + routeLiveBars:     docPush,
	"GET " + routeHealthz:       docOperations + "|- `/healthz`",
	"GET " + routeReadyz:        docOperations + "|- `/readyz`",
	"GET " + routeMetricsPath:   docOperations + "|- `/metrics`",
	"GET " + OpenAPIPath:        docOperations + "|- `/openapi.json` and `/docs`",
	"GET " + docsPath:           docOperations + "|- `/openapi.json` and `/docs`",
	"GET " + routeDocsFile:      docOperations + "|- `/openapi.json` and `/docs`",

	"GET " + routeTotalReturn:       docTotalReturn,
	"POST " + routeTotalReturnBatch: docTotalReturn,
}

// routeDescriptions returns each route's description by "METHOD path":
// links to its parts of docs/api.md at the revision docsRef gives for
// version, from openapi_descriptions.json.
func routeDescriptions(version string) (map[string]string, error) {
	var anchors map[string]string
	if err := json.Unmarshal(openAPIDescriptions, &anchors); err != nil {
		return nil, fmt.Errorf("openapi: openapi_descriptions.json: %w", err)
	}
	base := docsRepo + docsRef(version) + "/docs/api.md"
	out := map[string]string{}
	for i := range routeTable {
		rt := &routeTable[i]
		key := rt.Method + " " + rt.Path
		doc, ok := routeDocs[key]
		if rt.Media == mediaCSV { // a CSV form's route: its route's parts, then CSV's
			doc, ok = routeDocs[rt.Method+" "+strings.TrimSuffix(rt.Path, ".csv")]
			doc += "\n" + docCSV
		}
		if !ok {
			return nil, fmt.Errorf("openapi: %s: no part of docs/api.md in routeDocs", key)
		}
		var links []string
		for _, part := range strings.Split(doc, "\n") {
			heading, _, _ := strings.Cut(part, "|")
			anchor, ok := anchors[heading]
			if !ok {
				return nil, fmt.Errorf("openapi: %s: %q is not in openapi_descriptions.json (go test ./httpapi -run TestOpenAPIFile -update-openapi)", key, heading)
			}
			links = append(links, fmt.Sprintf("[%s](%s#%s)", strings.TrimLeft(heading, "# "), base, anchor))
		}
		out[key] = "Rules, defaults and examples: docs/api.md, " + strings.Join(links, "; ") + "."
	}
	return out, nil
}

// githubAnchor is the anchor GitHub gives a Markdown heading (its text
// without the #s): lower case, every character but letters, digits,
// marks, "_", "-" and spaces left out, spaces as "-". A heading whose
// anchor an earlier one has gets "-1", "-2"… (seen counts them).
func githubAnchor(heading string, seen map[string]int) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	a := b.String()
	n := seen[a]
	seen[a] = n + 1
	if n > 0 {
		a = fmt.Sprintf("%s-%d", a, n)
	}
	return a
}

// OpenAPIExample is one operation's response example: the scale-1 demo's
// answer to a request, arrays cut to two items (openapi_examples.json,
// written by cmd/pregao's TestDocsExamplesOpenAPI).
type OpenAPIExample struct {
	Summary string `json:"summary"`        // the request: "GET /v2/…" or "POST /v2/… {body}"
	Body    string `json:"body,omitempty"` // a POST's body
	Value   any    `json:"value"`          // the answer
}

//go:embed openapi_examples.json
var openAPIExamples []byte

// routeExamples returns the response examples by "METHOD path".
func routeExamples() (map[string]OpenAPIExample, error) {
	var out map[string]OpenAPIExample
	if err := json.Unmarshal(openAPIExamples, &out); err != nil {
		return nil, fmt.Errorf("openapi: openapi_examples.json: %w", err)
	}
	return out, nil
}
