package fetch

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// B3APIHost serves B3's listed-data services (the index, listed-company
// and fund pages of b3.com.br call them).
const B3APIHost = "https://sistemaswebb3-listados.b3.com.br"

// B3 listed-data services. Each takes one path segment after the service
// path: the base64 (standard alphabet, padded) of a JSON object of
// parameters. The URL shapes, parameters and answers follow these
// recorded requests and clients:
//
//   - GetPortfolioDay: ropensci/rb3 tests/fixtures/GetPortfolioDay.yml (a
//     request {"pageNumber":1,"pageSize":9999,"language":"en-us",
//     "index":"IBOV","segment":2} recorded 2025-04-07, answered with
//     page{pageNumber,pageSize,totalRecords,totalPages}, header{date,...}
//     and results[{segment,cod,asset,type,part,partAcum,theoricalQty}]);
//     rb3 R/downloaders.R stock_indexes_current_portfolio_download
//     (pageSize 9999, segment 2: grouped by sector). Other clients ask
//     {"language":"pt-br","pageNumber":1,"pageSize":120,"index":"IBOV",
//     "segment":"2"} (120, the index pages' page size: SMLL, over 120
//     members, takes two pages), or "segment":"1" (by code) for IFIX,
//     and page through it with pageNumber; the same members either way. Asked in Portuguese, as here, numbers are
//     Brazilian ("3,157") and header.date is dd/mm/yy; in English it is
//     month first ("04/07/25" in the answer recorded on 2025-04-07).
//   - GetListedSupplementCompany {"issuingCompany":"ABEV","language":
//     "pt-br"}: rb3 tests/fixtures/GetListedSupplementCompany.yml (a
//     one-element array with code, codeCVM, tradingName, share counts,
//     cashDividends, stockDividends, subscriptions) and
//     GetListedSupplementCompanyEmpty.yml (an unknown code, "WWWW",
//     answers 200 with an empty body).
//   - GetDetail {"codeCVM":"24910","language":"pt-br"}: rb3
//     tests/fixtures/GetDetailsCompany.yml (one object: issuingCompany,
//     cnpj, codeCVM, otherCodes[{code,isin}]...).
//   - GetListedCashDividends {"tradingName":"AMBEVSA","language":"pt-br",
//     "pageNumber":1,"pageSize":9999}: rb3
//     tests/fixtures/GetListedCashDividends.yml (page{...totalPages},
//     results[{typeStock,dateApproval,valueCash,...}]); the trading name
//     is the supplement's tradingName ("AMBEV S/A") without the
//     characters other than A-Z and 0-9, as in that recording; rb3
//     R/scraper-company.R chains supplement -> codeCVM -> GetDetail and
//     supplement -> tradingName -> GetListedCashDividends. Clients that
//     page through it read page.totalPages (pageSize 100 or 120).
//   - GetListFundDownload {"typeFund":7,"pageNumber":1,"pageSize":20}:
//     the listed-funds export of the funds pages, answered as a JSON
//     string holding the base64 of the ';'-separated CSV (ISO-8859-1);
//     typeFund 7 lists real-estate funds (FII). The page parameters do
//     not limit the export. Seen in Go, C# and Python clients of that
//     URL; typeFund 20 is the ETF list of the sibling GetListedFundsSIG
//     call.
const (
	SvcPortfolioDay  = "indexProxy/indexCall/GetPortfolioDay"
	SvcSupplement    = "listedCompaniesProxy/CompanyCall/GetListedSupplementCompany"
	SvcDetail        = "listedCompaniesProxy/CompanyCall/GetDetail"
	SvcCashDividends = "listedCompaniesProxy/CompanyCall/GetListedCashDividends"
	SvcFundList      = "fundsProxy/fundsCall/GetListFundDownload"
)

// DefaultIndexes are the index portfolios fetched when none is named: the
// broad market (IBOV, IBRA, IBXX, IBXL), size (SMLL, MLCX), dividend
// (IDIV) and real-estate fund (IFIX) indexes, all of which the importer
// names.
var DefaultIndexes = []string{"IBOV", "IBRA", "IBXX", "IBXL", "SMLL", "MLCX", "IDIV", "IFIX"}

// FundLists are the listed-fund exports fetched by the listings source:
// typeFund and the file name it is stored under (fundosListados.csv is
// the name B3's funds page saves the FII export under). The importer
// tells a real-estate fund list from an ETF list by the name ("fundo" or
// "fii"). An empty export is counted unknown, not an error.
var FundLists = []struct {
	TypeFund int
	Name     string
}{
	{7, "fundosListados.csv"}, // FII
	{20, "etfsListados.csv"},  // ETF
}

var reIndex = regexp.MustCompile(`^[A-Z0-9]{2,12}$`)

// ValidIndex reports whether s looks like a B3 index symbol (IBOV, IBXX,
// ICO2): 2 to 12 capital letters and digits.
func ValidIndex(s string) bool { return reIndex.MatchString(s) }

// ValidCompany reports whether s is a 4-character issuer code (ABEV,
// B3SA): the first four characters of its tickers.
func ValidCompany(s string) bool {
	if len(s) != 4 {
		return false
	}
	for i := 0; i < 4; i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// serviceURL returns host/service/PARAM, PARAM being the base64 of params
// as JSON (keys sorted: the same parameters always give the same URL),
// path-escaped (a '/' of the base64 alphabet becomes %2F).
func serviceURL(host, service string, params map[string]any) string {
	b, err := json.Marshal(params)
	if err != nil {
		panic(err) // params hold strings and ints only
	}
	return host + "/" + service + "/" + url.PathEscape(base64.StdEncoding.EncodeToString(b))
}

// DecodeParam decodes the last path segment of a service URL (escaped or
// not) into its JSON parameters.
func DecodeParam(seg string) (map[string]any, error) {
	if s, err := url.PathUnescape(seg); err == nil {
		seg = s
	}
	b, err := base64.StdEncoding.DecodeString(seg)
	if err != nil {
		return nil, fmt.Errorf("parameter is not base64: %w", err)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("parameter is not a JSON object: %q", b)
	}
	return m, nil
}

// CleanTradingName turns a trading name ("AMBEV S/A   ") into the
// GetListedCashDividends parameter ("AMBEVSA"): upper case, without
// anything but A-Z and 0-9.
func CleanTradingName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// pageInfo is the "page" object of a paginated answer.
type pageInfo struct {
	PageNumber   int `json:"pageNumber"`
	PageSize     int `json:"pageSize"`
	TotalRecords int `json:"totalRecords"`
	TotalPages   int `json:"totalPages"`
}

// page is one decoded page of a paginated answer: its members kept as
// they came (the header and any other field), its results apart.
type page struct {
	fields  map[string]json.RawMessage
	info    pageInfo
	results []json.RawMessage
}

var errNotJSON = errors.New("answer is not the expected JSON")

// parsePage decodes one page of a paginated answer: a JSON object with
// page{...} and results[...] (results may be null or absent on an empty
// answer).
func parsePage(b []byte) (*page, error) {
	p := &page{}
	if err := json.Unmarshal(b, &p.fields); err != nil || p.fields == nil {
		return nil, fmt.Errorf("%w: want an object with page and results", errNotJSON)
	}
	raw, ok := p.fields["page"]
	if !ok {
		return nil, fmt.Errorf("%w: no page object", errNotJSON)
	}
	if err := json.Unmarshal(raw, &p.info); err != nil {
		return nil, fmt.Errorf("%w: page: %v", errNotJSON, err)
	}
	if r, ok := p.fields["results"]; ok && !bytes.Equal(bytes.TrimSpace(r), []byte("null")) {
		if err := json.Unmarshal(r, &p.results); err != nil {
			return nil, fmt.Errorf("%w: results: %v", errNotJSON, err)
		}
	}
	if p.info.TotalPages < 0 || p.info.TotalRecords < 0 {
		return nil, fmt.Errorf("%w: negative page counts %+v", errNotJSON, p.info)
	}
	return p, nil
}

// mergePages joins the pages of one answer (in order, the first one
// complete) into the answer a single page would have been: the first
// page's fields, every result, and page{pageNumber 1, pageSize and
// totalRecords the number of results, totalPages 1}, so that readers of
// the official answer read it as it is.
func mergePages(pages []*page) ([]byte, error) {
	if len(pages) == 0 {
		return nil, errors.New("no page")
	}
	var all []json.RawMessage
	for _, p := range pages {
		all = append(all, p.results...)
	}
	if t := pages[0].info.TotalRecords; t > 0 && t != len(all) {
		return nil, fmt.Errorf("got %d results, page.totalRecords says %d (did the data change while paging?)", len(all), t)
	}
	out := make(map[string]json.RawMessage, len(pages[0].fields))
	for k, v := range pages[0].fields {
		out[k] = v
	}
	n := len(all)
	info, _ := json.Marshal(pageInfo{PageNumber: 1, PageSize: max(n, 1), TotalRecords: n, TotalPages: 1})
	out["page"] = info
	if all == nil {
		all = []json.RawMessage{}
	}
	res, err := json.Marshal(all)
	if err != nil {
		return nil, err
	}
	out["results"] = res
	return json.Marshal(out)
}

// supplementKeys reads what the next calls of a company need from its
// GetListedSupplementCompany answer: its CVM code and trading name. ok is
// false when B3 does not know the company (an empty body, null, or an
// empty array).
func supplementKeys(b []byte) (codeCVM, tradingName string, ok bool, err error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" || string(b) == "[]" {
		return "", "", false, nil
	}
	var in []struct {
		Code        string `json:"code"`
		CodeCVM     string `json:"codeCVM"`
		TradingName string `json:"tradingName"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return "", "", false, fmt.Errorf("%w: want a one-company array: %v", errNotJSON, err)
	}
	if len(in) != 1 {
		return "", "", false, fmt.Errorf("%w: want one company, got %d", errNotJSON, len(in))
	}
	c := in[0]
	codeCVM = strings.TrimSpace(c.CodeCVM)
	if _, err := strconv.Atoi(codeCVM); codeCVM != "" && err != nil {
		return "", "", false, fmt.Errorf("%w: codeCVM %q is not a number", errNotJSON, c.CodeCVM)
	}
	return codeCVM, strings.TrimSpace(c.TradingName), true, nil
}

// checkDetail accepts a GetDetail answer: one JSON object. ok is false
// when B3 answers nothing (an empty body or null).
func checkDetail(b []byte) (ok bool, err error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return false, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return false, fmt.Errorf("%w: want an object", errNotJSON)
	}
	return true, nil
}

// DecodeFundList returns the CSV text of a GetListFundDownload answer: a
// JSON string holding base64 (as B3 answers), bare base64, or the CSV
// itself. The text must start with a header naming a code column
// ("Código", "Codigo"), as the importer needs. The result may share b's
// memory.
func DecodeFundList(b []byte) ([]byte, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, errors.New("empty fund list")
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("%w: fund list: %v", errNotJSON, err)
		}
		b = []byte(strings.TrimSpace(s))
	}
	if d, err := base64.StdEncoding.DecodeString(string(b)); err == nil {
		b = d
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	if !bytes.Contains(bytes.ToLower(first), []byte("digo")) {
		return nil, fmt.Errorf("fund list: the first line is not a header with a Código column: %q", first[:min(len(first), 120)])
	}
	return b, nil
}
