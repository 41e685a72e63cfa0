package httpapi

import (
	"testing"
)

// goldenCases are one request per endpoint and option against the small
// bundle; their answers are in testdata/<name>.golden.json.
var goldenCases = []struct {
	name, method, path, key, body string
}{
	{"highs", "GET", "/v2/indexes/IBOV/highs", testKeyDelayed, ""},
	{"lows", "GET", "/v2/indexes/IBOV/lows?limit=2", testKeyDelayed, ""},
	{"highs_lowercase_eod", "GET", "/v2/indexes/ibov/highs", testKeyEOD, ""},
	{"quotes_current", "POST", "/v2/quotes", testKeyDelayed, `{"tickers":["ENHZ3","ENHZ4","MSAZ3","SELIC","XXXX3","ENHZ3","EHZN3"],"type":"current"}`},
	{"quotes_current_adjusted", "POST", "/v2/quotes", testKeyDelayed, `{"tickers":["MSAZ3"],"type":"current","adjusted":true}`},
	{"quotes_historical_default", "POST", "/v2/quotes", testKeyDelayed, `{"tickers":["ENHZ3","MSAZ3"]}`},
	{"quotes_historical_adjusted", "POST", "/v2/quotes", testKeyDelayed, `{"tickers":["MSAZ3"],"start_date":"2024-03-01","end_date":"2024-03-28","adjusted":true}`},
	{"quotes_historical_weekly", "POST", "/v2/quotes", testKeyDelayed, `{"tickers":["ENHZ3"],"interval":604800,"start_date":"2023-12-01"}`},
	{"quotes_intraday", "POST", "/v2/quotes", testKeyDelayed, `{"tickers":["ENHZ3","ENHZ4"],"interval":120,"start_date":"2024-03-28","end_date":"2024-03-28"}`},
	{"quotes_chart", "POST", "/v2/quotes", testKeyDelayed, `{"tickers":["ENHZ3"],"type":"chart","interval":999999,"start_date":"2000-01-01"}`},
	{"quotes_eod", "POST", "/v2/quotes", testKeyEOD, `{"tickers":["ENHZ3","MSAZ3","NOPE3"],"adjusted":true}`},
	{"quote_single", "GET", "/v2/quotes/ENHZ4?type=current", testKeyDelayed, ""},
	{"quote_single_historical", "GET", "/v2/quotes/ENHZ3?start_date=2024-03-26&end_date=2024-03-27", testKeyDelayed, ""},
	{"total_return", "GET", "/v2/quotes/ENHZ3/total-return?start_date=2023-01-01", testKeyDelayed, ""},
	{"total_return_net", "GET", "/v2/quotes/enhz3/total-return?start_date=2023-01-01&method=net", testKeyDelayed, ""},
	{"total_return_split", "GET", "/v2/quotes/MSAZ3/total-return?start_date=2024-03-01&end_date=2024-03-28", testKeyDelayed, ""},
	{"total_return_batch", "POST", "/v2/quotes/total-return", testKeyDelayed, `{"tickers":["ENHZ3","ENHZ4","GSUL11","XXXX3","ENHZ3","EHZN3","SELIC"],"start_date":"2023-01-01","method":"net"}`},
	{"total_return_eod", "POST", "/v2/quotes/total-return", testKeyEOD, `{"tickers":["ENHZ4","MSAZ3","NOPE3"],"method":"net"}`},
	{"variations", "GET", "/v2/stocks/variations?limit=3", testKeyDelayed, ""},
	{"variations_eod", "GET", "/v2/stocks/variations", testKeyEOD, ""},
	{"companies", "GET", "/v2/companies", testKeyDelayed, ""},
	{"indexes", "GET", "/v2/indexes", testKeyDelayed, ""},
	{"index_portfolio", "GET", "/v2/indexes/IBOV", testKeyDelayed, ""},
	{"companies_bdr", "GET", "/v2/companies?bdr=true&show_sector=true&show_market_cap=true", testKeyDelayed, ""},
	{"company_symbol", "GET", "/v2/companies/ENHZ", testKeyDelayed, ""},
	{"company_ticker_all", "GET", "/v2/companies/ENHZ4?show_market_cap=true&show_logo=true&show_company_details=true&show_sector=true", testKeyDelayed, ""},
	{"company_bdr_ticker", "GET", "/v2/companies/ORBT34", testKeyDelayed, ""},
	{"company_renamed_ticker", "GET", "/v2/companies/EHZN3", testKeyDelayed, ""},
	{"company_cvm_code", "GET", "/v2/companies/25011", testKeyDelayed, ""},
	{"ratios_symbol", "GET", "/v2/companies/ENHZ/ratios?frequency=ANNUAL&show_calculation=true", testKeyDelayed, ""},
	{"ratios_ticker_ids", "GET", "/v2/companies/ENHZ3/ratios?ids=EBITDA_MARGIN,NET_MARGIN", testKeyDelayed, ""},
	{"ratios_latest", "GET", "/v2/companies/12345678000195/ratios?latest_by_reference_date=true&frequency=TTM", testKeyDelayed, ""},
	{"ratios_publish_filter", "GET", "/v2/companies/ENHZ/ratios?publish_date=2024-03-01T00:00:00Z", testKeyDelayed, ""},
	{"valuation_symbol", "GET", "/v2/companies/ENHZ/ratios/valuation?frequency=TTM", testKeyDelayed, ""},
	{"valuation_ticker", "GET", "/v2/companies/ENHZ11/ratios/valuation?frequency=TTM", testKeyDelayed, ""},
	{"valuation_suffixed_id", "GET", "/v2/companies/ENHZ/ratios/valuation?ids=PRICE_TO_EARNINGS_PS,MARKET_CAP", testKeyDelayed, ""},
	{"raw_reports_tree", "GET", "/v2/companies/ENHZ/raw-reports?report_type=BPA", testKeyDelayed, ""},
	{"raw_reports_flat", "GET", "/v2/companies/ENHZ3/raw-reports?report_type=DRE&flat=true&latest_by_reference_date=true", testKeyDelayed, ""},
	{"raw_reports_year", "GET", "/v2/companies/ENHZ/raw-reports?year=2023&quarter=4&aggregation=CONSOLIDATED&flat=true", testKeyDelayed, ""},
	{"reports_standardized", "GET", "/v2/companies/ENHZ/reports?section=INCOME_STATEMENT", testKeyDelayed, ""},
	{"reports_balance_annual", "GET", "/v2/companies/ENHZ/reports?section=BALANCE_SHEET&frequency=ANNUAL", testKeyDelayed, ""},
	{"cash_actions", "GET", "/v2/companies/cash-corporate-actions", testKeyDelayed, ""},
	{"cash_actions_all_versions", "GET", "/v2/companies/cash-corporate-actions?current=false&bdr=true", testKeyDelayed, ""},
	{"cash_actions_window", "GET", "/v2/companies/cash-corporate-actions?start_date=2024-05-01&end_date=2024-05-31T23:59:59Z&stock_type=CS", testKeyDelayed, ""},
	{"share_actions_symbol", "GET", "/v2/companies/ENHZ/corporate-actions", testKeyDelayed, ""},
	{"share_actions_ticker", "GET", "/v2/companies/MSAZ3/corporate-actions?start_date=2024-01-01", testKeyDelayed, ""},
	{"share_actions_unit", "GET", "/v2/companies/GSUL/corporate-actions?stock_type=UNIT", testKeyDelayed, ""},
	{"insider", "GET", "/v2/companies/ENHZ/insider-transactions", testKeyDelayed, ""},
	{"documents", "GET", "/v2/companies/ENHZ/documents", testKeyDelayed, ""},
	{"shares_history", "GET", "/v2/companies/ENHZ/shares-history", testKeyDelayed, ""},
	{"screener_default", "POST", "/v2/screener", testKeyDelayed, `{}`},
	{"screener_all_rows", "POST", "/v2/screener", testKeyDelayed, `{"primaryOnly":false,"limit":500,"sort":[{"by":"close_price","order":"asc"}]}`},
	{"screener_filters", "POST", "/v2/screener", testKeyDelayed, `{"primaryOnly":false,"filters":[{"type":"close_price","op":"between","min":10,"max":45},{"type":"volume","op":">","value":1000},{"type":"sector","in":["10"]}],"sort":[{"by":"volume","order":"asc"}]}`},
	{"screener_droplet", "POST", "/v2/screener", testKeyDelayed, `{"primaryOnly":false,"filters":[{"type":"droplet","id":"PRICE_TO_EARNINGS","op":">","value":0}],"sort":[{"by":"droplet:PRICE_TO_EARNINGS","order":"desc"}]}`},
	{"fund_ratios", "GET", "/v2/traded-funds/GSUL11/ratios", testKeyDelayed, ""},
	{"fund_ratios_id", "GET", "/v2/traded-funds/gsul11/ratios?id=p_nav&limit=1", testKeyDelayed, ""},
	{"fund_ratios_cnpj", "GET", "/v2/traded-funds/11222333000181/ratios?ids=DIVIDEND_YIELD,NAV_PER_SHARE&frequency=MONTHLY&latest_by_reference_date=true", testKeyDelayed, ""},
	{"catalog", "GET", "/v2/ratios/catalog", testKeyDelayed, ""},
}

func TestGolden(t *testing.T) {
	ts := newTestServer(t, true)
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			w := ts.do(tc.method, tc.path, tc.key, tc.body)
			if w.Code != 200 {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			golden(t, tc.name, w.Body.Bytes())
		})
	}
}

func init() {
	goldenCases = append(goldenCases, []struct{ name, method, path, key, body string }{
		{"share_actions_unit_on_company", "GET", "/v2/companies/ENHZ/corporate-actions?stock_type=FUND_UNIT", testKeyDelayed, ""},
		{"share_actions_fund_unit", "GET", "/v2/companies/GSUL11/corporate-actions?stock_type=FUND_UNIT", testKeyDelayed, ""},
	}...)
}
