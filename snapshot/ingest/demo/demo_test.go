package demo

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"github.com/pregao/pregao/engine/ratios"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

var update = flag.Bool("update", false, "rewrite testdata/small.sha256")

// smallSize keeps unit tests fast while exercising every kind of entity
// and event.
var smallSize = Size{Companies: 24, SponsoredBDRs: 3, UnsponsoredBDRs: 3, FIIs: 12, ETFs: 4,
	IntradayTickers: 5, IntradaySessions: 2, ReportsFrom: 2023, FundReportsFrom: 2024, EventsFrom: 2025, HistoryFrom: 2015}

var (
	smallOnce sync.Once
	smallU    *engine.Universe
)

// small returns the shared small universe (seed 7); tests must not modify it.
func small(tb testing.TB) *engine.Universe {
	tb.Helper()
	smallOnce.Do(func() { smallU = GenerateSize(7, smallSize) })
	return smallU
}

// digest returns the SHA-256 of u's JSON encoding (Num NaN encodes as null).
func digest(tb testing.TB, u *engine.Universe) string {
	tb.Helper()
	h := sha256.New()
	if err := json.NewEncoder(h).Encode(u); err != nil {
		tb.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestDeterminism(t *testing.T) {
	a := digest(t, small(t))
	b := digest(t, GenerateSize(7, smallSize))
	if a != b {
		t.Fatalf("two runs differ: %s vs %s", a, b)
	}
	other := Size{Companies: 3, FIIs: 1, HistoryFrom: 2024}
	if digest(t, GenerateSize(7, other)) == digest(t, GenerateSize(8, other)) {
		t.Fatal("seeds 7 and 8 gave the same universe")
	}
	golden := filepath.Join("testdata", "small.sha256")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(a+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./snapshot/demo -run TestDeterminism -update)", err)
	}
	if strings.TrimSpace(string(want)) != a {
		t.Fatalf("small universe digest %s, golden %s: the generator's output changed (refresh with -update if intended)", a, want)
	}
}

func TestCalendar(t *testing.T) {
	d := func(s string) engine.Date {
		v, err := engine.ParseDate(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	closed := []string{"2024-02-12", "2024-02-13", "2024-03-29", "2024-05-30", "2024-12-25", "2024-12-24", "2024-12-31",
		"2024-01-01", "2024-04-21", "2024-11-20", "2026-11-20", "2025-03-03", "2025-03-04", "2025-04-18", "2025-06-19",
		"2024-02-10", "2024-02-11"}
	for _, s := range closed {
		if IsBusinessDay(d(s)) {
			t.Errorf("%s: want closed", s)
		}
	}
	open := []string{"2024-02-14", "2024-03-28", "2024-05-29", "2024-05-31", "2024-12-23", "2024-12-26", "2023-11-20", "2026-11-19"}
	for _, s := range open {
		if !IsBusinessDay(d(s)) {
			t.Errorf("%s: want a session", s)
		}
	}
	for y, want := range map[int]string{2024: "2024-03-31", 2025: "2025-04-20", 2000: "2000-04-23", 2019: "2019-04-21"} {
		if got := Easter(y).String(); got != want {
			t.Errorf("Easter(%d) = %s, want %s", y, got, want)
		}
	}
	days := BusinessDays(d("2024-01-01"), d("2024-12-31"))
	if len(days) != 251 {
		t.Errorf("2024 sessions = %d, want 251", len(days))
	}
	u := small(t)
	if got := engine.DateOf(u.Meta.AsOf).String(); got != "2026-11-19" {
		t.Errorf("as_of day %s, want 2026-11-19 (2026-11-20 is a holiday)", got)
	}
	for _, s := range u.Daily {
		if s.Ticker == "IPCA" {
			continue
		}
		for _, x := range s.Dates {
			if !IsBusinessDay(x) {
				t.Fatalf("%s has a bar on %s, not a session", s.Ticker, x)
			}
		}
	}
}

func TestCheckDigits(t *testing.T) {
	for _, s := range []string{"02635522000195", "08773135000100", "11396633000187"} { // real CNPJs from CVM files
		if !ValidCNPJ(s) {
			t.Errorf("ValidCNPJ(%s) = false", s)
		}
	}
	if ValidCNPJ("02635522000196") {
		t.Error("bad check digit accepted")
	}
	for _, s := range []string{"BRPETRACNPR6", "BRFVPQCTF015"} {
		if !ValidISIN(s) {
			t.Errorf("ValidISIN(%s) = false", s)
		}
	}
	if ValidISIN("BRPETRACNPR5") {
		t.Error("bad ISIN accepted")
	}
	u := small(t)
	for _, c := range u.Companies {
		if len(c.ID) == 14 && !ValidCNPJ(c.ID) {
			t.Errorf("company %s: invalid CNPJ", c.ID)
		}
		if c.Kind != engine.KindBDR && len(c.ID) != 14 {
			t.Errorf("company %s (%s): want a CNPJ", c.ID, c.Kind)
		}
		if realRoots[c.Symbol] {
			t.Errorf("company %s uses the real root %s", c.Name, c.Symbol)
		}
	}
	for _, s := range u.Securities {
		if s.ISIN != "" && !ValidISIN(s.ISIN) {
			t.Errorf("%s: invalid ISIN %s", s.Ticker, s.ISIN)
		}
	}
}

func seriesOf(u *engine.Universe) map[string]*engine.Series {
	m := map[string]*engine.Series{}
	for i := range u.Daily {
		m[u.Daily[i].Ticker] = &u.Daily[i]
	}
	return m
}

// at returns the row of date d in s, or -1.
func at(s *engine.Series, d engine.Date) int {
	for i, x := range s.Dates {
		if x == d {
			return i
		}
	}
	return -1
}

func TestPricesFollowCorporateActions(t *testing.T) {
	u := small(t)
	ser := seriesOf(u)
	seen := map[string]int{}
	for _, a := range u.ShareActions {
		seen[a.Type]++
		s := ser[a.Ticker]
		if s == nil {
			t.Fatalf("%s: no series for %s", a.Type, a.Ticker)
		}
		i := at(s, a.PriorExDate)
		if i < 0 {
			t.Fatalf("%s %s: prior_ex_date %s is not a session of the ticker", a.Type, a.Ticker, a.PriorExDate)
		}
		if i+1 >= s.Len() {
			continue // delisting events
		}
		f := float64(a.Factor)
		if a.Type == engine.ActSubscription {
			f = 1 // new shares are paid for: the price does not move
		}
		if len(a.Legs) > 0 {
			f = float64(a.Legs[0].Factor)
			if len(a.Legs) > 1 {
				// Value handed over in received shares.
				rs := ser[a.Legs[1].Ticker]
				j := at(rs, s.Dates[i+1])
				if j < 0 {
					t.Fatalf("%s: received %s has no bar on the ex-date", a.Type, a.Legs[1].Ticker)
				}
				got := float64(s.Close[i]) - float64(s.Open[i+1])*f
				want := float64(a.Legs[1].Factor) * float64(rs.Open[j])
				if math.Abs(got-want) > 0.2*want+0.05 {
					t.Errorf("%s %s on %s: price drop %.2f, received value %.2f", a.Type, a.Ticker, s.Dates[i+1], got, want)
				}
				continue
			}
		}
		// Adjusted for the factor, the open after the ex-date continues the close.
		ratio := float64(s.Open[i+1]) * f / float64(s.Close[i])
		if math.Abs(math.Log(ratio)) > 0.12 {
			t.Errorf("%s %s factor %g on %s: close %v then open %v (adjusted ratio %.3f)", a.Type, a.Ticker, f, s.Dates[i+1], s.Close[i], s.Open[i+1], ratio)
		}
	}
	for _, typ := range []string{engine.ActStockSplit, engine.ActReverseSplit, engine.ActStockBonus, engine.ActSpinOff, engine.ActMerger, engine.ActTotalRedemption} {
		if seen[typ] == 0 {
			t.Errorf("no %s in the small universe", typ)
		}
	}
	// Cash: the open after the ex-date drops by about the amount.
	n := 0
	for _, c := range u.CashActions {
		s := ser[c.Ticker.String()]
		i := at(s, c.PriorExDate)
		if i < 0 || i+1 >= s.Len() {
			t.Fatalf("cash %s: prior_ex_date %s not a session of %s", c.ID, c.PriorExDate, c.Ticker)
		}
		ref := float64(s.Close[i]) - float64(c.DeclaredValue)
		if r := float64(s.Open[i+1]) / ref; math.Abs(math.Log(r)) > 0.12 {
			t.Errorf("cash %s %s: close %v, amount %v, next open %v", c.ID, c.Ticker, s.Close[i], c.DeclaredValue, s.Open[i+1])
		}
		if c.Name.String() == "INTEREST_ON_EQUITY" {
			if want := round(float64(c.DeclaredValue+c.MonetaryCorrection)*float64(engine.InterestWithholdingAt(c.PriorExDate).Net), 8); math.Abs(float64(c.NetValue)-want) > 1e-8 {
				t.Errorf("JCP %s: net %v, want %v", c.ID, c.NetValue, want)
			}
		}
		n++
	}
	if n == 0 {
		t.Fatal("no cash actions")
	}
}

func TestShareCountsFollowSplits(t *testing.T) {
	u := small(t)
	byCo := map[string][]engine.SharesPoint{}
	for _, s := range u.Shares {
		byCo[s.CompanyID] = append(byCo[s.CompanyID], s)
	}
	events := map[string]int{} // company and ex-date -> share events that day
	for _, a := range u.ShareActions {
		events[a.CompanyID+(a.PriorExDate+1).String()]++
	}
	checked := 0
	for _, a := range u.ShareActions {
		if a.Type != engine.ActStockSplit && a.Type != engine.ActReverseSplit && a.Type != engine.ActStockBonus {
			continue
		}
		if !strings.HasSuffix(a.Ticker, "3") || events[a.CompanyID+(a.PriorExDate+1).String()] != 1 {
			continue
		}
		pts := byCo[a.CompanyID]
		var before, after *engine.SharesPoint
		for i := range pts {
			if pts[i].Date <= a.PriorExDate {
				before = &pts[i]
			}
			if pts[i].Date > a.PriorExDate && after == nil {
				after = &pts[i]
			}
		}
		if before == nil || after == nil || after.Date != a.PriorExDate+1 && !IsBusinessDay(a.PriorExDate+1) && after.Date > a.PriorExDate+5 {
			t.Fatalf("%s: share points missing around %s", a.Ticker, a.PriorExDate)
		}
		got := float64(after.Common+after.Preferred) / float64(before.Common+before.Preferred)
		if math.Abs(got/float64(a.Factor)-1) > 1e-6 {
			t.Errorf("%s %s %v on %s: shares %d -> %d (x%.6f)", a.Ticker, a.Type, a.Factor, a.PriorExDate, before.Common+before.Preferred, after.Common+after.Preferred, got)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no split checked")
	}
}

func TestRenames(t *testing.T) {
	u := small(t)
	ser := seriesOf(u)
	if len(u.Renames) == 0 {
		t.Fatal("no renames")
	}
	for _, r := range u.Renames {
		a, b := ser[r.From], ser[r.To]
		if a == nil || b == nil {
			t.Fatalf("rename %s -> %s: missing series", r.From, r.To)
		}
		if last := a.Dates[a.Len()-1]; last >= r.Date {
			t.Errorf("%s trades on %s, after its rename on %s", r.From, last, r.Date)
		}
		if b.Dates[0] != r.Date {
			t.Errorf("%s starts on %s, want the rename date %s", r.To, b.Dates[0], r.Date)
		}
	}
}

// accountMap indexes a report's accounts by code.
func accountMap(r *engine.Report) map[string]engine.Num {
	m := make(map[string]engine.Num, len(r.Accounts))
	for _, a := range r.Accounts {
		m[a.Code()] = a.Value
	}
	return m
}

func nzNum(v engine.Num) float64 {
	if !v.Valid() {
		return 0
	}
	return float64(v)
}

func TestReportIdentities(t *testing.T) {
	u := small(t)
	type key struct {
		co, agg string
		ref     engine.Date
		ver     int
	}
	cash := map[key]engine.Num{}
	for i := range u.Reports {
		r := &u.Reports[i]
		if r.Statement.String() == "BPA" {
			cash[key{r.CompanyID, r.Aggregation.String(), r.ReferenceDate, r.Version}] = accountMap(r)["1.01.01"]
		}
	}
	eq := func(r *engine.Report, what string, a, b float64) {
		t.Helper()
		if math.Abs(a-b) > 0.5 {
			t.Errorf("%s %s %s %s v%d: %s: %v != %v", r.CompanyID, r.Form, r.Statement, r.ReferenceDate, r.Version, what, a, b)
		}
	}
	var total, bpp int
	for i := range u.Reports {
		r := &u.Reports[i]
		m := accountMap(r)
		// Parents equal the sum of their children, except EPS headers and
		// the cash variation line (final minus initial balance).
		for _, a := range r.Accounts {
			if strings.HasPrefix(a.Code(), "3.99") || a.Code() == "6.05" || !a.Value.Valid() {
				continue
			}
			var sum float64
			kids := 0
			for _, c := range r.Accounts {
				if strings.HasPrefix(c.Code(), a.Code()+".") && strings.Count(c.Code(), ".") == strings.Count(a.Code(), ".")+1 {
					sum += nzNum(c.Value)
					kids++
				}
			}
			if kids > 0 && (a.Code() != "1" && a.Code() != "2" || true) {
				eq(r, "account "+a.Code()+" vs children", float64(a.Value), sum)
			}
		}
		switch r.Statement {
		case engine.LabelBPA, engine.LabelBPP:
			if r.StartDate.Valid() {
				t.Errorf("%s: balance sheet with start_date", r.Statement)
			}
		case engine.LabelDRE, engine.LabelDRA:
			want := engine.MakeDate(r.ReferenceDate.Time().Year(), 1, 1)
			if r.Form.String() == "ITR" {
				y, mo, _ := r.ReferenceDate.Time().Date()
				want = engine.MakeDate(y, mo-2, 1)
			}
			if r.StartDate != want {
				t.Errorf("%s %s %s: start %s, want %s", r.Form, r.Statement, r.ReferenceDate, r.StartDate, want)
			}
		}
		switch r.Statement {
		case engine.LabelBPP:
			bpp++
			// Assets equal liabilities plus equity.
			for j := range u.Reports {
				o := &u.Reports[j]
				if o.Statement.String() == "BPA" && o.CompanyID == r.CompanyID && o.ReferenceDate == r.ReferenceDate && o.Aggregation == r.Aggregation && o.Version == r.Version {
					eq(r, "assets = liabilities + equity", float64(accountMap(o)["1"]), float64(m["2"]))
				}
			}
		case engine.LabelDRE:
			eq(r, "3.03", nzNum(m["3.03"]), nzNum(m["3.01"])+nzNum(m["3.02"]))
			eq(r, "3.05", nzNum(m["3.05"]), nzNum(m["3.03"])+nzNum(m["3.04"]))
			eq(r, "3.07", nzNum(m["3.07"]), nzNum(m["3.05"])+nzNum(m["3.06"]))
			if isBankDRE(r) {
				// Financial institutions: 3.05 pre-tax, 3.06 taxes, 3.07
				// continuing, 3.09 the period's result; no 3.10/3.11.
				eq(r, "3.09", nzNum(m["3.09"]), nzNum(m["3.07"])+nzNum(m["3.08"]))
				if _, ok := m["3.11"]; ok {
					t.Errorf("%s %s: bank DRE with 3.11", r.CompanyID, r.ReferenceDate)
				}
				break
			}
			eq(r, "3.09", nzNum(m["3.09"]), nzNum(m["3.07"])+nzNum(m["3.08"]))
			eq(r, "3.11", nzNum(m["3.11"]), nzNum(m["3.09"]))
		case engine.LabelDVA:
			eq(r, "7.07 = 7.08", nzNum(m["7.07"]), nzNum(m["7.08"]))
			eq(r, "7.05", nzNum(m["7.05"]), nzNum(m["7.03"])+nzNum(m["7.04"]))
			eq(r, "7.07", nzNum(m["7.07"]), nzNum(m["7.05"])+nzNum(m["7.06"]))
		case engine.LabelDFCMI, engine.LabelDFCMD:
			eq(r, "6.05 = sum", nzNum(m["6.05"]), nzNum(m["6.01"])+nzNum(m["6.02"])+nzNum(m["6.03"])+nzNum(m["6.04"]))
			eq(r, "6.05 = final - initial", nzNum(m["6.05"]), nzNum(m["6.05.02"])-nzNum(m["6.05.01"]))
			eq(r, "final cash = BPA 1.01.01", nzNum(m["6.05.02"]), nzNum(cash[key{r.CompanyID, r.Aggregation.String(), r.ReferenceDate, r.Version}]))
		}
		total++
	}
	if total == 0 || bpp == 0 {
		t.Fatal("no reports")
	}
}

// TestIntradayMatchesDaily: every listed ticker has 1-minute bars of the
// last session, the IntradayTickers most liquid ones of the
// IntradaySessions last sessions; each session's bars add up to its daily
// bar (open, high, low, close, quantity; volume exactly on the last
// session, within a cent a bar before) and lie within 10:00-17:00 local
// time (the earlier sessions' every minute of it).
func TestIntradayMatchesDaily(t *testing.T) {
	u := small(t)
	ser := seriesOf(u)
	last := engine.DateOf(u.Meta.AsOf)
	listed := 0
	for _, s := range u.Securities {
		if s.StockType != engine.ClassMacro && s.ListedTo == engine.NoDate {
			listed++
		}
	}
	if len(u.Intraday) != listed {
		t.Fatalf("%d intraday series, want one per listed ticker (%d)", len(u.Intraday), listed)
	}
	for n, x := range u.Intraday {
		s := ser[x.Ticker]
		var days []engine.Date
		for a := 0; a < x.Len(); {
			d := engine.DateOf(time.Unix(x.Times[a], 0))
			b := a
			for b < x.Len() && engine.DateOf(time.Unix(x.Times[b], 0)) == d {
				b++
			}
			days = append(days, d)
			i := at(s, d)
			if i < 0 {
				t.Fatalf("%s: intraday day %s has no daily bar", x.Ticker, d)
			}
			first, end := time.Unix(x.Times[a], 0).UTC(), time.Unix(x.Times[b-1], 0).UTC()
			if first.Hour() < 13 || end.Hour() >= 20 || d != last && (first.Hour() != 13 || first.Minute() != 0 || b-a != minutesPerSession) {
				t.Errorf("%s %s: %d bars from %s to %s", x.Ticker, d, b-a, first, end)
			}
			hi, lo := math.Inf(-1), math.Inf(1)
			var vol float64
			var cents, qty int64
			for k := a; k < b; k++ {
				hi, lo = math.Max(hi, float64(x.High[k])), math.Min(lo, float64(x.Low[k]))
				vol += float64(x.Volume[k])
				c, ok := engine.Cents(x.Volume[k])
				if !ok {
					t.Fatalf("%s bar %d: volume %v not whole cents", x.Ticker, k, x.Volume[k])
				}
				cents += c
				qty += x.Quantity[k]
				if x.High[k] < max(x.Open[k], x.Close[k]) || x.Low[k] > min(x.Open[k], x.Close[k]) {
					t.Fatalf("%s bar %d: inconsistent OHLC", x.Ticker, k)
				}
			}
			if x.Open[a] != s.Open[i] || x.Close[b-1] != s.Close[i] || hi != float64(s.High[i]) || lo != float64(s.Low[i]) {
				t.Errorf("%s %s: intraday O/H/L/C %v/%v/%v/%v, daily %v/%v/%v/%v", x.Ticker, d, x.Open[a], hi, lo, x.Close[b-1], s.Open[i], s.High[i], s.Low[i], s.Close[i])
			}
			if qty != s.Quantity[i] || math.Abs(vol-float64(s.Volume[i])) > 0.05 || d == last && engine.Num(float64(cents)/100) != s.Volume[i] {
				t.Errorf("%s %s: intraday volume %v qty %d, daily %v %d", x.Ticker, d, vol, qty, s.Volume[i], s.Quantity[i])
			}
			a = b
		}
		want := 1
		if n < smallSize.IntradayTickers {
			want = smallSize.IntradaySessions
		}
		if len(days) != want || days[len(days)-1] != last {
			t.Errorf("%s: intraday sessions %v, want the last %d", x.Ticker, days, want)
		}
	}
}

func TestUniverseShape(t *testing.T) {
	u := small(t)
	// Taxonomy: four levels with parents before children.
	level := map[string]int{}
	count := [5]int{}
	for _, s := range u.Sectors {
		if s.Level > 1 && level[s.ParentID] != s.Level-1 {
			t.Errorf("sector %s: parent %s not at level %d", s.ID, s.ParentID, s.Level-1)
		}
		level[s.ID] = s.Level
		count[s.Level]++
	}
	if count[1] < 10 || count[2] < 25 || count[3] < 45 || count[4] < 95 {
		t.Errorf("taxonomy sizes %v", count)
	}
	kinds := map[string]int{}
	for _, c := range u.Companies {
		kinds[c.Kind]++
		if level[c.SubIndustryID] != 4 {
			t.Errorf("company %s: sub-industry %q", c.ID, c.SubIndustryID)
		}
	}
	if kinds[engine.KindCompany] < smallSize.Companies || kinds[engine.KindFII] != smallSize.FIIs || kinds[engine.KindETF] != smallSize.ETFs ||
		kinds[engine.KindBDR] != smallSize.SponsoredBDRs+smallSize.UnsponsoredBDRs {
		t.Errorf("kinds %v", kinds)
	}
	ser := seriesOf(u)
	ranks := map[int]bool{}
	for _, s := range u.Securities {
		if ser[s.Ticker] == nil {
			t.Errorf("security %s has no series", s.Ticker)
		}
		if s.LiquidityRank > 0 {
			if ranks[s.LiquidityRank] {
				t.Errorf("rank %d used twice", s.LiquidityRank)
			}
			ranks[s.LiquidityRank] = true
		}
		if (s.StockType == engine.ClassMacro) != (s.CompanyID == "") {
			t.Errorf("%s: macro iff no company", s.Ticker)
		}
	}
	for i := 1; i <= len(ranks); i++ {
		if !ranks[i] {
			t.Fatalf("liquidity ranks are not 1..%d (missing %d)", len(ranks), i)
		}
	}
	for _, m := range []string{"SELIC", "IPCA", "USD"} {
		if ser[m] == nil {
			t.Errorf("macro series %s missing", m)
		}
	}
	syms := map[string]bool{}
	for _, x := range u.Indexes {
		syms[x.Symbol] = true
		var w float64
		for _, m := range x.Members {
			w += float64(m.Weight)
			if ser[m.Ticker] == nil {
				t.Errorf("index %s: member %s has no series", x.Symbol, m.Ticker)
			}
		}
		if math.Abs(w-1) > 1e-9 {
			t.Errorf("index %s weights sum to %v", x.Symbol, w)
		}
	}
	for _, s := range []string{"IBOV", "SMLL", "IFIX", "BDRX"} {
		if !syms[s] {
			t.Errorf("index %s missing", s)
		}
	}
	// Unsponsored BDRs: events and cash only.
	unsp := map[string]bool{}
	for _, c := range u.Companies {
		if c.Kind == engine.KindBDR && !c.BDRSponsored {
			unsp[c.ID] = true
		}
	}
	for _, r := range u.Reports {
		if unsp[r.CompanyID] {
			t.Fatalf("unsponsored BDR %s has reports", r.CompanyID)
		}
	}
	for _, s := range u.Shares {
		if unsp[s.CompanyID] {
			t.Fatalf("unsponsored BDR %s has share counts", s.CompanyID)
		}
	}
	if !strings.Contains(u.Meta.Description, "fictional") {
		t.Error("meta must say the data is fictional")
	}
	vers := map[int]int{}
	for _, r := range u.Reports {
		vers[r.Version]++
	}
	if vers[2] == 0 {
		t.Error("no re-filed report")
	}
	if len(u.FundReports) == 0 || len(u.InsiderReports) == 0 || len(u.Documents) == 0 {
		t.Error("fund reports, insider reports or documents missing")
	}
}

func TestDailyBars(t *testing.T) {
	u := small(t)
	macro := map[string]bool{"SELIC": true, "IPCA": true, "USD": true}
	for _, s := range u.Daily {
		for i := 0; i < s.Len(); i++ {
			if i > 0 && s.Dates[i] <= s.Dates[i-1] {
				t.Fatalf("%s: dates not ascending at %s", s.Ticker, s.Dates[i])
			}
			o, h, l, c := s.Open[i], s.High[i], s.Low[i], s.Close[i]
			if s.Ticker == "IPCA" { // a change in percent: negative in some months
				if !(o == c && h == c && l == c && c > -5 && c < 5) {
					t.Fatalf("IPCA %s: %v %v %v %v, want one change within ±5 %%", s.Dates[i], o, h, l, c)
				}
			} else if !(l > 0 && l <= min(o, c) && h >= max(o, c)) {
				t.Fatalf("%s %s: bad OHLC %v %v %v %v", s.Ticker, s.Dates[i], o, h, l, c)
			}
			if macro[s.Ticker] {
				if s.Volume[i].Valid() {
					t.Fatalf("%s: macro volume must be null", s.Ticker)
				}
				continue
			}
			if !(s.Volume[i] > 0 && s.Quantity[i] > 0 && s.Trades[i] > 0) || s.Trades[i] > s.Quantity[i] {
				t.Fatalf("%s %s: volume %v quantity %d trades %d", s.Ticker, s.Dates[i], s.Volume[i], s.Quantity[i], s.Trades[i])
			}
			if math.Round(float64(c)*100) != float64(c)*100 && math.Abs(math.Round(float64(c)*100)-float64(c)*100) > 1e-6 {
				t.Fatalf("%s %s: close %v is not in cents", s.Ticker, s.Dates[i], c)
			}
		}
	}
}

// isBankDRE reports whether r is an income statement in CVM's model of
// financial institutions (3.01 "Receitas da Intermediação Financeira").
func isBankDRE(r *engine.Report) bool {
	return r.Statement.String() == "DRE" && len(r.Accounts) > 0 && r.Accounts[0].Code() == "3.01" &&
		r.Accounts[0].Name() == "Receitas da Intermediação Financeira"
}

// TestBankRatios checks that the banks' income statements, in CVM's model
// of financial institutions, are read by the ratio engine with that
// model's codes: net income from 3.09, no EBIT.
func TestBankRatios(t *testing.T) {
	u := small(t)
	der, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	ind := map[string]uint16{}
	for i, c := range der.Catalog {
		if c.Kind == engine.IndFundamental {
			ind[c.ID] = uint16(i)
		}
	}
	type key struct {
		id  string
		ref engine.Date
	}
	// The latest version of each bank's consolidated annual DRE.
	want := map[key]float64{}
	ver := map[key]int{}
	for i := range u.Reports {
		r := &u.Reports[i]
		if !isBankDRE(r) || r.Form.String() != "DFP" || r.Aggregation.String() != engine.AggConsolidated {
			continue
		}
		k := key{r.CompanyID, r.ReferenceDate}
		if r.Version < ver[k] {
			continue
		}
		m := accountMap(r)
		if _, ok := m["3.05"]; !ok || r.Accounts[0].Value == 0 {
			t.Fatalf("bank DRE without 3.05: %+v", r.Accounts)
		}
		ver[k] = r.Version
		want[k] = float64(m["3.09"]) / float64(m["3.01"])
	}
	if len(want) == 0 {
		t.Fatal("no bank DFP in the universe")
	}
	got := map[key][]engine.Num{}
	for _, p := range der.Ratios {
		k := key{p.CompanyID.String(), p.ReferenceDate}
		if _, ok := want[k]; !ok || p.Frequency != engine.FrequencyAnnual || p.Class != engine.ShareClassNone {
			continue
		}
		switch p.Indicator {
		case ind["NET_MARGIN"]:
			got[k] = append(got[k], p.Value)
		case ind["EBIT_MARGIN"]:
			if p.Value.Valid() {
				t.Errorf("%s %s: EBIT_MARGIN %v for a bank", k.id, k.ref, p.Value)
			}
		}
	}
	for k, w := range want {
		found := false
		for _, v := range got[k] {
			if math.Abs(float64(v)-w) < 1e-9 {
				found = true
			}
		}
		if !found {
			t.Errorf("%s %s: NET_MARGIN %v, want 3.09/3.01 = %v", k.id, k.ref, got[k], w)
		}
	}
}

// TestLateCashCorrections: a share of the corrected cash events are
// published after their prior_ex_date (10 to 90 days), before the
// snapshot's as_of; most keep the declared value (a rectified payment
// date or monetary correction), some change it. The others are
// published before the prior_ex_date (companies) as before.
func TestLateCashCorrections(t *testing.T) {
	u := small(t)
	first := map[string]*engine.CashAction{}
	for i := range u.CashActions {
		if a := &u.CashActions[i]; a.Version == 1 {
			first[a.EventID] = a
		}
	}
	kinds := map[string]int{}
	for i := range u.CashActions {
		a := &u.CashActions[i]
		if a.Version != 2 {
			continue
		}
		v1 := first[a.EventID]
		if v1 == nil || a.PublishDate.After(engine.StampOf(u.Meta.AsOf)) || a.PublishDate.Before(v1.PublishDate) {
			t.Fatalf("%s: version 2 published %v, version 1 %v, as_of %v", a.ID, a.PublishDate, v1, u.Meta.AsOf)
		}
		days := engine.DateOf(a.PublishDate.Time()) - a.PriorExDate
		switch {
		case days < 10:
			kinds["early"]++
			continue
		case days > 90:
			t.Errorf("%s: published %d days after its prior_ex_date", a.ID, days)
		}
		switch {
		case a.DeclaredValue != v1.DeclaredValue:
			kinds["late value"]++
		case a.MonetaryCorrection != v1.MonetaryCorrection:
			kinds["late monetary correction"]++
		default:
			kinds["late payment date"]++
		}
	}
	t.Logf("corrections by kind: %v", kinds)
	for _, k := range []string{"early", "late value", "late monetary correction", "late payment date"} {
		if kinds[k] == 0 {
			t.Errorf("no %s correction: %v", k, kinds)
		}
	}
	if late := kinds["late value"] + kinds["late monetary correction"] + kinds["late payment date"]; kinds["late value"]*2 > late {
		t.Errorf("%d of %d late corrections change the declared value, want a minority", kinds["late value"], late)
	}
}
