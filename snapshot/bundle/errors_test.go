package bundle

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// edit rewrites line n (1-based) of file in dir with f; n == 0 appends
// f("") as a new line; n < 0 replaces the whole file with f(content).
func edit(tb testing.TB, dir, file string, n int, f func(string) string) {
	tb.Helper()
	path := filepath.Join(dir, file)
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if n < 0 {
		os.WriteFile(path, []byte(f(string(b))), 0o644)
		return
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if n == 0 {
		lines = append(lines, f(""))
	} else {
		lines[n-1] = f(lines[n-1])
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func repl(old, new string) func(string) string {
	return func(s string) string {
		if !strings.Contains(s, old) {
			panic("edit: " + old + " not in " + s)
		}
		return strings.Replace(s, old, new, 1)
	}
}

func line(s string) func(string) string { return func(string) string { return s } }

func TestErrors(t *testing.T) {
	cases := []struct {
		name string
		file string
		n    int
		f    func(string) string
		want []string // substrings of the error
	}{
		{"enum kind", FileCompanies, 2, repl(`"kind":"COMPANY"`, `"kind":"XYZ"`),
			[]string{`companies.jsonl:2: field "kind": unknown value "XYZ" (want COMPANY, BDR, FII, ETF)`}},
		{"unknown field", FileCompanies, 1, repl(`"cvm_code"`, `"cvm_kode"`),
			[]string{`companies.jsonl:1: field "cvm_kode": unknown field`}},
		{"nested unknown field", FileReports, 3, repl(`"value":31450200000`, `"valor":31450200000`),
			[]string{`reports.jsonl:3: field "accounts[0].valor": unknown field`}},
		{"wrong type", FileCompanies, 1, repl(`"employee_count":8420`, `"employee_count":"many"`),
			[]string{`companies.jsonl:1: field "employee_count": want an integer, got "many"`}},
		{"bad date", FileCompanies, 1, repl(`"founding_date":"1962-05-14"`, `"founding_date":"1962-13-14"`),
			[]string{`companies.jsonl:1: field "founding_date": bad date "1962-13-14"`}},
		{"bad timestamp", FileReports, 1, repl(`"publish_date":"2024-02-27T19:42:10Z"`, `"publish_date":"2024-02-27"`),
			[]string{`reports.jsonl:1: field "publish_date": bad timestamp "2024-02-27"`}},
		{"bad nested number", FileReports, 1, repl(`"value":58210400000`, `"value":"58210400000"`),
			[]string{`reports.jsonl:1: field "accounts[0].value": bad number`}},
		{"malformed", FileSecurities, 2, func(s string) string { return s[:len(s)-5] },
			[]string{`securities.jsonl:2: malformed JSON`}},
		{"trailing data", FileSecurities, 2, func(s string) string { return s + ` {"x":1}` },
			[]string{`securities.jsonl:2: malformed JSON`}},
		{"not an object", FileSecurities, 0, line(`["PETR4"]`),
			[]string{`securities.jsonl:9: want one JSON object per line`}},
		{"bad ticker", FileSecurities, 1, repl(`"ticker":"ENHZ3"`, `"ticker":"enhz3"`),
			[]string{`securities.jsonl:1: field "ticker": bad value "enhz3"`}},
		{"unknown company", FileSecurities, 5, repl(`"company_id":"33444555000172"`, `"company_id":"99999999000199"`),
			[]string{`securities.jsonl:5: field "company_id": unknown company "99999999000199"`}},
		{"duplicate ticker", FileSecurities, 0, line(`{"ticker":"ENHZ4","company_id":"12345678000195","stock_type":"PS"}`),
			[]string{`securities.jsonl:9: field "ticker": duplicate ticker "ENHZ4"`}},
		{"stock type of kind", FileSecurities, 7, repl(`"stock_type":"FUND_UNIT"`, `"stock_type":"CS"`),
			[]string{`securities.jsonl:7: field "stock_type": CS for a security of FII`}},
		{"macro with company", FileSecurities, 8, repl(`"company_id":""`, `"company_id":"80217"`),
			[]string{`securities.jsonl:8: field "company_id": want empty for a MACRO series`}},
		{"sub industry level", FileCompanies, 1, repl(`"sub_industry_id":"10101010"`, `"sub_industry_id":"1010"`),
			[]string{`companies.jsonl:1: field "sub_industry_id": sector "1010" is at level 2`}},
		{"sub industry unknown", FileCompanies, 1, repl(`"sub_industry_id":"10101010"`, `"sub_industry_id":"77"`),
			[]string{`companies.jsonl:1: field "sub_industry_id": unknown sector "77"`}},
		{"sector parent", FileSectors, 2, repl(`"parent_id":"10"`, `"parent_id":"99"`),
			[]string{`sectors.jsonl:2: field "parent_id": unknown sector "99"`}},
		{"sector parent level", FileSectors, 3, repl(`"parent_id":"1010"`, `"parent_id":"10"`),
			[]string{`sectors.jsonl:3: field "parent_id": sector "10" is at level 1, want level 2`}},
		{"free float", FileCompanies, 1, repl(`"free_float":0.47`, `"free_float":47`),
			[]string{`companies.jsonl:1: field "free_float": want a fraction in [0, 1]`}},
		{"duplicate company", FileCompanies, 0, line(`{"company_id":"80217","name":"X","kind":"BDR"}`),
			[]string{`companies.jsonl:5: field "company_id": duplicate company_id "80217"`}},
		{"rename unknown", FileRenames, 1, repl(`"from":"EHZN3"`, `"from":"XXXX3"`),
			[]string{`renames.jsonl:1: field "from": unknown ticker "XXXX3"`}},
		{"daily header", FileDaily, 1, line("ticker,date,open,high,low,close,volume,quantity"),
			[]string{`daily.csv:1: bad header`}},
		{"daily columns", FileDaily, 3, line("EHZN3,2023-12-27,41.6,42.15"),
			[]string{`daily.csv:3: want 9 columns`}},
		{"daily date", FileDaily, 3, repl("2023-12-27", "27/12/2023"),
			[]string{`daily.csv:3: field "date": bad date "27/12/2023"`}},
		{"daily order", FileDaily, 3, repl("2023-12-27", "2023-12-26"),
			[]string{`daily.csv:3: field "date": 2023-12-26 not after the previous row of EHZN3`}},
		{"daily contiguous", FileDaily, 0, line("EHZN3,2023-12-29,1,1,1,1,1,1,1"),
			[]string{`daily.csv:32: field "ticker": rows of EHZN3 are not contiguous (its first run starts at line 2)`}},
		{"daily high low", FileDaily, 2, repl("41.2,41.9,40.85", "41.2,40.1,40.85"),
			[]string{`daily.csv:2: field "high": high 40.1 below low 40.85`}},
		{"daily negative volume", FileDaily, 2, repl("38211450.3", "-1"),
			[]string{`daily.csv:2: field "volume": want >= 0`}},
		{"daily negative price", FileDaily, 2, repl("41.2,41.9,40.85", "-41.2,41.9,40.85"),
			[]string{`daily.csv:2: field "open": negative price for EHZN3`}},
		{"daily bad number", FileDaily, 2, repl("41.6,38211450.3", "41,6,38211450.3"),
			[]string{`daily.csv:2: want 9 columns`}},
		{"daily bad quantity", FileDaily, 2, repl(",921300,", ",9.5,"),
			[]string{`daily.csv:2: field "quantity": bad quantity "9.5"`}},
		{"daily unknown ticker", FileDaily, 0, line("ZZZZ3,2024-01-01,1,1,1,1,1,1,1"),
			[]string{`daily.csv:32: field "ticker": unknown ticker "ZZZZ3"`}},
		{"daily quoted", FileDaily, 2, repl("EHZN3,", `"EHZN3",`),
			[]string{`daily.csv:2: quoted CSV fields are not supported`}},
		{"intraday time", FileIntraday, 2, repl("2024-03-28T13:00:00Z", "2024-03-28 13:00"),
			[]string{`intraday.csv:2: field "time": bad timestamp`}},
		{"index weight", FileIndexes, 1, repl(`"weight":0.0112`, `"weight":1.5`),
			[]string{`indexes.jsonl:1: field "members[0].weight": want a fraction in [0, 1]`}},
		{"index reductor", FileIndexes, 1, repl(`"reductor":18296803.37677573`, `"reductor":0`),
			[]string{`indexes.jsonl:1: field "reductor": want > 0 or null, got 0`}},
		{"index member", FileIndexes, 2, repl(`{"ticker":"GSUL11","weight":0.0154,"theoretical_qty":null}`, `{"ticker":"GSUL11","weight":0.0154,"theoretical_qty":null},{"ticker":"GSUL11","weight":null,"theoretical_qty":null}`),
			[]string{`indexes.jsonl:2: field "members[1].ticker": duplicate member "GSUL11"`}},
		{"report balance start", FileReports, 1, repl(`"start_date":null`, `"start_date":"2023-01-01"`),
			[]string{`reports.jsonl:1: field "start_date": want null for balance sheet BPA`}},
		{"report period start", FileReports, 3, repl(`"start_date":"2023-01-01"`, `"start_date":null`),
			[]string{`reports.jsonl:3: field "start_date": required`}},
		{"report statement", FileReports, 1, repl(`"statement":"BPA"`, `"statement":"DMPL"`),
			[]string{`reports.jsonl:1: field "statement": unknown value "DMPL" (want BPA, BPP, DRE, DRA, DVA, DFC_MI, DFC_MD)`}},
		{"report version", FileReports, 1, repl(`"version":1`, `"version":0`),
			[]string{`reports.jsonl:1: field "version": want an integer >= 1, got 0`}},
		{"report duplicate", FileReports, 4, repl(`"version":2`, `"version":1`),
			[]string{`reports.jsonl:4: field "version": duplicate report`}},
		{"report account code", FileReports, 1, repl(`"code":"1.01"`, `"code":"1,01"`),
			[]string{`reports.jsonl:1: field "accounts[1].code": bad account code "1,01"`}},
		{"report account duplicate", FileReports, 1, repl(`"code":"1.01.02"`, `"code":"1.01.01"`),
			[]string{`reports.jsonl:1: field "accounts[3].code": duplicate account "1.01.01"`}},
		{"shares missing", FileShares, 1, repl(`"common_shares":602113000,`, ``),
			[]string{`shares.jsonl:1: field "common_shares": required`}},
		{"cash stock type", FileCashActions, 1, repl(`"stock_type":"CS"`, `"stock_type":"ON"`),
			[]string{`cash_actions.jsonl:1: field "stock_type": unknown value "ON"`}},
		{"cash version duplicate", FileCashActions, 2, repl(`"version":2`, `"version":1`),
			[]string{`cash_actions.jsonl:2: field "version": event "ENHZ-2024-JCP1-CS" has version 1 twice (line 1)`}},
		{"cash ticker of other company", FileCashActions, 1, repl(`"ticker":"ENHZ3"`, `"ticker":"MSAZ3"`),
			[]string{`cash_actions.jsonl:1: field "ticker": MSAZ3 belongs to company 33444555000172`}},
		{"cash installment negative", FileCashActions, 1, repl(`"declared_value":0.41`, `"declared_value":-0.41`),
			[]string{`cash_actions.jsonl:1: field "installments[0].declared_value": want >= 0`}},
		{"cash name", FileCashActions, 1, repl(`"name":"INTEREST_ON_EQUITY"`, `"name":"JCP"`),
			[]string{`cash_actions.jsonl:1: field "name": unknown value "JCP"`}},
		{"split factor", FileShareActions, 1, repl(`"factor":2`, `"factor":0.5`),
			[]string{`share_actions.jsonl:1: field "factor": want > 1 for type STOCK_SPLIT`}},
		{"spin-off without legs", FileShareActions, 3, func(s string) string {
			return s[:strings.Index(s, `"legs":[`)] + `"legs":[],"remarks":""}`
		}, []string{`share_actions.jsonl:3: field "legs": required for type SPIN_OFF_CAPITAL_REDUCTION`}},
		{"leg type", FileShareActions, 3, repl(`"leg_type":"RECEIVED_ASSET"`, `"leg_type":"RECEIVED"`),
			[]string{`share_actions.jsonl:3: field "legs[1].leg_type": unknown value "RECEIVED"`}},
		{"share action type", FileShareActions, 2, repl(`"type":"STOCK_BONUS"`, `"type":"BONUS"`),
			[]string{`share_actions.jsonl:2: field "type": unknown value "BONUS"`}},
		{"fund month", FileFundReports, 1, repl(`"reference_date":"2024-02-01"`, `"reference_date":"2024-02-29"`),
			[]string{`fund_reports.jsonl:1: field "reference_date": want the first day of the month`}},
		{"fund kind", FileFundReports, 1, repl(`"fund_id":"11222333000181"`, `"fund_id":"12345678000195"`),
			[]string{`fund_reports.jsonl:1: field "fund_id": company 12345678000195 is of kind COMPANY, want FII or ETF`}},
		{"fund negative shares", FileFundReports, 1, repl(`"shares_outstanding":13750000`, `"shares_outstanding":-13750000`),
			[]string{`fund_reports.jsonl:1: field "shares_outstanding"`}},
		{"fund negative investors", FileFundReports, 1, repl(`"investors":58213`, `"investors":-1`),
			[]string{`fund_reports.jsonl:1: field "investors"`}},
		{"insider quantity", FileInsiderReports, 1, repl(`"quantity":12000,`, ``),
			[]string{`insider_reports.jsonl:1: field "movements[0].quantity": required`}},
		{"insider aggregation", FileInsiderReports, 1, repl(`"aggregation":"CONSOLIDATED"`, `"aggregation":"TOTAL"`),
			[]string{`insider_reports.jsonl:1: field "aggregation": unknown value "TOTAL"`}},
		{"document company", FileDocuments, 1, repl(`"company_id":"12345678000195"`, `"company_id":"1"`),
			[]string{`documents.jsonl:1: field "company_id": unknown company "1"`}},
		{"timestamp range", FileMeta, -1, line(`{"as_of":"0000-01-01T00:00:00+01:00"}`),
			[]string{`meta.json:1: field "as_of": timestamp -0001-12-31T23:00:00Z is outside years 0000-9999`}},
		{"intraday time range", FileIntraday, 2, repl("2024-03-28T13:00:00Z", "0000-01-01T00:00:00+01:00"),
			[]string{`intraday.csv:2: field "time": bad timestamp`}},
		{"meta as_of", FileMeta, -1, line(`{"description":"x"}`),
			[]string{`meta.json:1: field "as_of": required`}},
		{"meta stream next", FileMeta, -1, line(`{"as_of":"2024-03-28T21:00:00Z","stream":{"name":"PREGAO_LIVE","session":"2024-03-28","batch":3}}`),
			[]string{`meta.json:1: field "stream.next": required (from 1)`}},
		{"meta stream session", FileMeta, -1, line(`{"as_of":"2024-03-28T21:00:00Z","stream":{"next":9,"name":"PREGAO_LIVE","batch":3}}`),
			[]string{`meta.json:1: field "stream.session": required`}},
		{"meta stream batch", FileMeta, -1, line(`{"as_of":"2024-03-28T21:00:00Z","stream":{"next":9,"name":"PREGAO_LIVE","session":"2024-03-28"}}`),
			[]string{`meta.json:1: field "stream.batch": required`}},
		{"two problems", FileCompanies, 1, func(s string) string {
			return repl(`"status":"ACTIVE"`, `"status":"GONE"`)(repl(`"kind":"COMPANY"`, `"kind":"X"`)(s))
		},
			[]string{`field "kind": unknown value "X"`, `field "status": unknown value "GONE"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyDir(t, smallDir)
			edit(t, dir, c.file, c.n, c.f)
			u, err := Read(dir)
			if err == nil {
				t.Fatal("no error")
			}
			if u != nil {
				t.Error("partial Universe returned")
			}
			var el *ErrorList
			if !errors.As(err, &el) {
				t.Fatalf("not an ErrorList: %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\nlacks %q", err, w)
				}
			}
		})
	}
}

// An index's reductor is read with its digits; absent or null, it is
// Null (not 0).
func TestIndexReductor(t *testing.T) {
	dir := copyDir(t, smallDir)
	edit(t, dir, FileIndexes, 2, func(s string) string {
		return strings.Replace(s, `"as_of":"2024-03-28",`, `"as_of":"2024-03-28","reductor":null,`, 1)
	})
	u, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r := u.Indexes[0].Reductor; r != 18296803.37677573 {
		t.Errorf("IBOV reductor %v", float64(r))
	}
	if r := u.Indexes[1].Reductor; r.Valid() {
		t.Errorf("IFIX null reductor read as %v", float64(r))
	}
	edit(t, dir, FileIndexes, 2, func(s string) string { return strings.Replace(s, `"reductor":null,`, "", 1) })
	if u, err = Read(dir); err != nil || u.Indexes[1].Reductor.Valid() {
		t.Errorf("IFIX without reductor: %v %v", err, u.Indexes[1].Reductor)
	}
}

// An index member that is not a security of the bundle (no quote yet) is
// read, not refused.
func TestIndexMemberWithoutSecurity(t *testing.T) {
	dir := copyDir(t, smallDir)
	edit(t, dir, FileIndexes, 2, func(s string) string {
		return strings.Replace(s, `"ticker":"GSUL11"`, `"ticker":"NEWL11"`, 1)
	})
	u, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m := u.Indexes[1].Members; len(m) != 1 || m[0].Ticker != "NEWL11" {
		t.Errorf("members %+v", m)
	}
}

func TestFileErrors(t *testing.T) {
	cases := []struct {
		name  string
		setup func(dir string)
		want  string
	}{
		{"unknown file", func(dir string) { os.WriteFile(filepath.Join(dir, "company.jsonl"), nil, 0o644) },
			"company.jsonl: unknown file"},
		{"directory", func(dir string) { os.Mkdir(filepath.Join(dir, "extra"), 0o755) },
			"extra: unexpected directory"},
		{"missing required", func(dir string) { os.Remove(filepath.Join(dir, FileSecurities)) },
			"securities.jsonl: required file missing"},
		{"duplicate", func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, FileRenames))
			os.WriteFile(filepath.Join(dir, FileRenames+".gz"), b, 0o644)
		}, "renames.jsonl.gz: duplicate of renames.jsonl"},
		{"zst suffix plain content", func(dir string) {
			os.Rename(filepath.Join(dir, FileRenames), filepath.Join(dir, FileRenames+".zst"))
		}, "renames.jsonl.zst: suffix .zst but content is not zstd"},
		{"gz suffix plain content", func(dir string) {
			os.Rename(filepath.Join(dir, FileDaily), filepath.Join(dir, FileDaily+".gz"))
		}, "daily.csv.gz: suffix .gz but content is not gzip"},
		{"compressed without suffix", func(dir string) {
			os.WriteFile(filepath.Join(dir, FileRenames), []byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0}, 0o644)
		}, "renames.jsonl: content is zstd-compressed: name the file with a .zst suffix"},
		{"corrupt zstd", func(dir string) {
			os.Remove(filepath.Join(dir, FileRenames))
			os.WriteFile(filepath.Join(dir, FileRenames+".zst"), []byte{0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3, 4, 5}, 0o644)
		}, "renames.jsonl.zst"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyDir(t, smallDir)
			c.setup(dir)
			u, err := Read(dir)
			if err == nil || u != nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestIgnoredFiles(t *testing.T) {
	dir := copyDir(t, smallDir)
	for _, n := range []string{".DS_Store", "README.md", "PROVENANCE.tsv", "LICENSE"} {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644)
	}
	mustRead(t, dir)
}

// TestFundNegativeMoney checks that a fund report's money and rates keep
// their sign (CVM files carry negative yields, returns, net assets and
// total assets), while counts stay non-negative (see TestErrors).
func TestFundNegativeMoney(t *testing.T) {
	dir := copyDir(t, smallDir)
	edit(t, dir, FileFundReports, 1, func(s string) string {
		for _, r := range [][2]string{
			{`"net_assets":1421330250.55`, `"net_assets":-10653973.85`},
			{`"nav_per_share":103.3695`, `"nav_per_share":-10653.97385`},
			{`"dividend_yield":0.0083`, `"dividend_yield":-0.001426`},
			{`"monthly_return":0.0112`, `"monthly_return":-0.999988`},
			{`"total_assets":1502117300.1`, `"total_assets":-10613973.85`},
		} {
			s = repl(r[0], r[1])(s)
		}
		return s
	})
	u := mustRead(t, dir)
	for _, f := range u.FundReports {
		if f.FundID != "11222333000181" || f.ReferenceDate.String() != "2024-02-01" {
			continue
		}
		if f.NetAssets != -10653973.85 || f.NAVPerShare != -10653.97385 || f.DividendYield != -0.001426 ||
			f.MonthlyReturn != -0.999988 || f.TotalAssets != -10613973.85 {
			t.Errorf("negative values not kept: %+v", f)
		}
		return
	}
	t.Fatal("fund report not found")
}
