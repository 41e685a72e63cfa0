package bundle

import (
	"strings"
	"testing"
)

// appendFirst appends a copy of the first line of a file.
func appendFirst(s string) string { return s + s[:strings.IndexByte(s, '\n')+1] }

// Every cross-entity check of crossCheck reports its problem, with its
// field and message, and nothing stops the checks of the kinds after it.
func TestCrossCheckErrors(t *testing.T) {
	cases := []struct {
		name string
		file string
		n    int // as for edit
		f    func(string) string
		want string // substring of the error
	}{
		{"duplicate sector", FileSectors, -1, appendFirst, `field "id": duplicate sector id "10"`},
		{"duplicate symbol", FileCompanies, 0, line(`{"company_id":"99","name":"X","kind":"COMPANY","symbol":"ENHZ"}`),
			`companies.jsonl:5: field "symbol": symbol "ENHZ" already used at line 1`},
		{"BDR stock type", FileSecurities, 5, repl(`"company_id":"33444555000172"`, `"company_id":"80217"`),
			`securities.jsonl:5: field "stock_type": CS for a security of BDR issuer 80217 (want BDR)`},
		{"fund stock type", FileSecurities, 5, repl(`"company_id":"33444555000172"`, `"company_id":"11222333000181"`),
			`securities.jsonl:5: field "stock_type": CS for a security of FII 11222333000181 (want FUND_UNIT)`},
		{"renamed twice", FileRenames, 0, line(`{"from":"EHZN3","to":"ENHZ4","date":"2024-01-03"}`),
			`renames.jsonl:2: field "from": EHZN3 renamed twice`},
		{"new name twice", FileRenames, 0, line(`{"from":"ENHZ4","to":"ENHZ3","date":"2024-01-03"}`),
			`renames.jsonl:2: field "to": ENHZ3 is the new name of two tickers`},
		{"rename cycle", FileRenames, 0, line(`{"from":"ENHZ3","to":"EHZN3","date":"2024-01-03"}`),
			`renames.jsonl:1: field "to": rename cycle through EHZN3`},
		{"duplicate index", FileIndexes, -1, appendFirst, `indexes.jsonl:3: field "symbol": duplicate index "IBOV"`},
		{"duplicate shares", FileShares, -1, appendFirst,
			`shares.jsonl:4: field "date": duplicate share count for 12345678000195 on 2023-12-31 (line 1)`},
		{"duplicate cash id", FileCashActions, -1, appendFirst, `field "id": duplicate id "ENHZ-2024-JCP1-CS-v1" (line 1)`},
		{"cash versions differ", FileCashActions, 2, repl(`"ticker":"ENHZ3"`, `"ticker":"ENHZ4"`),
			`cash_actions.jsonl:2: field "event_id": versions of event "ENHZ-2024-JCP1-CS" differ in company_id or ticker`},
		{"cash ticker of another company", FileCashActions, 1, repl(`"ticker":"ENHZ3"`, `"ticker":"MSAZ3"`),
			`cash_actions.jsonl:1: field "ticker": MSAZ3 belongs to company 33444555000172, not 12345678000195`},
		{"share action ticker of another company", FileShareActions, 2, repl(`"ticker":"EHZN3"`, `"ticker":"MSAZ3"`),
			`share_actions.jsonl:2: field "ticker": MSAZ3 belongs to company 33444555000172, not 12345678000195`},
		{"duplicate share action", FileShareActions, -1, appendFirst, `field "type": duplicate share action (same company_id, ticker, isin, issued_isin, type and prior_ex_date as line 1)`},
		{"duplicate fund report", FileFundReports, -1, appendFirst, `field "version": duplicate fund report (line 1)`},
		{"duplicate insider report", FileInsiderReports, -1, appendFirst, `field "version": duplicate insider report (line 1)`},
		{"duplicate document", FileDocuments, -1, appendFirst, `field "id": duplicate document id "IPE-1201877" (line 1)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyDir(t, smallDir)
			edit(t, dir, c.file, c.n, c.f)
			_, err := Read(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n%v\nlacks %q", err, c.want)
			}
		})
	}
}
