package snapshot

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// diff returns the path of the first difference between a and b, or "".
// Floats compare bit for bit (so NaN equals the same NaN), times by
// instant, and nil slices equal empty ones.
func diff(a, b any) string {
	if ua, ok := a.(*engine.Universe); ok {
		if ub, ok := b.(*engine.Universe); ok {
			a, b = packedVars(ua), packedVars(ub)
		}
	}
	return diffValue(reflect.ValueOf(a), reflect.ValueOf(b), "")
}

// packedVars returns a shallow copy of u whose ratio variables are laid
// out in point order (VarsAt renumbered): two universes holding the same
// variables then compare equal however their arrays are laid out (a
// load lays them out in the order its parallel parts finish).
func packedVars(u *engine.Universe) *engine.Universe {
	if u == nil {
		return nil
	}
	c := *u
	c.Derived.Ratios = slices.Clone(u.Derived.Ratios)
	c.Derived.RatioVars = nil
	for i := range c.Derived.Ratios {
		c.Derived.AddVars(&c.Derived.Ratios[i], u.Derived.Vars(&u.Derived.Ratios[i]))
	}
	// Fund points in the order format 6 stores them (sortedFundPoints),
	// naming their fund by Sym (a load's points name it by FundSyms).
	c.Derived.FundRatios, c.Derived.FundSources, c.Derived.FundSyms, c.Derived.FundRuns = nil, nil, nil, nil
	for _, p := range sortedFundPoints(&u.Derived) {
		src := u.Derived.FundSourcesOf(&p)
		p.FundID = u.Derived.FundSymOf(p.FundID)
		addFundPoint(&c.Derived, p, src)
	}
	return &c
}

// addFundPoint appends p to d.FundRatios with src as its sources (a list
// of its own).
func addFundPoint(d *engine.Derived, p engine.FundRatioPoint, src []engine.Source) {
	d.AddFundSources(&p, src)
	d.FundRatios = append(d.FundRatios, p)
}

// fundPoint is a fund ratio point with its sources, as tests compare
// them (the numbering of Derived.FundSources aside).
type fundPoint struct {
	P       engine.FundRatioPoint
	Sources []engine.Source
}

// fundPoints returns the fund points of u with their sources, Sources
// numbers zeroed.
func fundPoints(u *engine.Universe) []fundPoint {
	u = packedVars(u)
	out := make([]fundPoint, len(u.Derived.FundRatios))
	for i := range out {
		p := u.Derived.FundRatios[i]
		out[i] = fundPoint{Sources: u.Derived.FundSourcesOf(&p)}
		p.Sources = 0
		out[i].P = p
	}
	return out
}

var timeType = reflect.TypeFor[time.Time]()

var sourceListType = reflect.TypeFor[engine.SourceList]()

var (
	installmentListType = reflect.TypeFor[engine.InstallmentList]()
	sourcePtrType       = reflect.TypeFor[*engine.Source]()
)

var (
	stampType     = reflect.TypeFor[engine.Stamp]()
	frequencyType = reflect.TypeFor[engine.Frequency]()
	streamPosType = reflect.TypeFor[engine.StreamPosition]()
	classType     = reflect.TypeFor[engine.ShareClass]()
	lineType      = reflect.TypeFor[engine.Line]()
	lineTableType = reflect.TypeFor[*engine.LineTable]()
	symType       = reflect.TypeFor[engine.Sym]()
	derivedType   = reflect.TypeFor[engine.Derived]()
	lazyRepType   = reflect.TypeFor[engine.LazyReports]()
)

func diffValue(a, b reflect.Value, path string) string {
	if a.Type() != b.Type() {
		return path + ": types differ"
	}
	if a.Type() == sourceListType { // a pointer to the list: compare the lists
		return diffValue(reflect.ValueOf(a.Interface().(engine.SourceList).All()), reflect.ValueOf(b.Interface().(engine.SourceList).All()), path)
	}
	if a.Type() == lazyRepType { // a load's reader of the report heads, not data
		if a.IsNil() != b.IsNil() {
			return path + ": one Universe's reports are read on first use"
		}
		return ""
	}
	if a.Type() == installmentListType { // a pointer to the list: compare the lists
		return diffValue(reflect.ValueOf(a.Interface().(engine.InstallmentList).All()), reflect.ValueOf(b.Interface().(engine.InstallmentList).All()), path)
	}
	if a.Type() == timeType {
		ta, tb := a.Interface().(time.Time), b.Interface().(time.Time)
		if !ta.Equal(tb) || ta.IsZero() != tb.IsZero() {
			return fmt.Sprintf("%s: %v != %v", path, ta, tb)
		}
		return ""
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path + ": nil pointer"
			}
			return ""
		}
		return diffValue(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if d := diffValue(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
	case reflect.Slice:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: len %d != %d", path, a.Len(), b.Len())
		}
		for i := 0; i < a.Len(); i++ {
			if d := diffValue(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
	case reflect.Map:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: len %d != %d", path, a.Len(), b.Len())
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() {
				return fmt.Sprintf("%s[%v]: missing", path, k)
			}
			if d := diffValue(a.MapIndex(k), bv, fmt.Sprintf("%s[%v]", path, k)); d != "" {
				return d
			}
		}
	case reflect.Float32, reflect.Float64:
		if math.Float64bits(a.Float()) != math.Float64bits(b.Float()) {
			return fmt.Sprintf("%s: %v (%016x) != %v (%016x)", path, a.Float(), math.Float64bits(a.Float()), b.Float(), math.Float64bits(b.Float()))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if a.Int() != b.Int() {
			return fmt.Sprintf("%s: %d != %d", path, a.Int(), b.Int())
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if a.Uint() != b.Uint() {
			return fmt.Sprintf("%s: %d != %d", path, a.Uint(), b.Uint())
		}
	case reflect.String:
		if a.String() != b.String() {
			return fmt.Sprintf("%s: %q != %q", path, a.String(), b.String())
		}
	case reflect.Bool:
		if a.Bool() != b.Bool() {
			return fmt.Sprintf("%s: %v != %v", path, a.Bool(), b.Bool())
		}
	default:
		return fmt.Sprintf("%s: kind %s not compared (extend diffValue)", path, a.Kind())
	}
	return ""
}

// fill sets every field reachable from v to a pseudo-random value: any
// field added to the model is filled and must then survive a round trip.
func fill(tb testing.TB, rng *rand.Rand, v reflect.Value, depth int) {
	tb.Helper()
	if v.Type() == timeType || v.Type() == stampType {
		var t time.Time
		switch rng.IntN(4) {
		case 0: // zero
		case 1:
			t = time.Unix(rng.Int64N(4e9)-1e9, 0).UTC()
		default:
			t = time.Unix(rng.Int64N(4e9)-1e9, rng.Int64N(1e9)).UTC()
		}
		if v.Type() == stampType {
			v.Set(reflect.ValueOf(engine.StampOf(t)))
		} else {
			v.Set(reflect.ValueOf(t))
		}
		return
	}
	if v.Type() == installmentListType {
		var in []engine.Installment
		fill(tb, rng, reflect.ValueOf(&in).Elem(), depth)
		v.Set(reflect.ValueOf(engine.InstallmentsOf(in)))
		return
	}
	if v.Type() == sourcePtrType { // a snapshot gives every cash action one
		src := new(engine.Source)
		fill(tb, rng, reflect.ValueOf(src).Elem(), depth)
		v.Set(reflect.ValueOf(src))
		return
	}
	if v.Type() == streamPosType {
		// Unknown, or a valid position (a header refuses any other).
		if rng.IntN(3) > 0 {
			v.Set(reflect.ValueOf(engine.StreamPosition{Next: rng.Uint64N(1<<50) + 1, Name: "PREGAO_LIVE",
				Session: engine.Date(rng.IntN(40000) - 10000), Batch: rng.Uint64N(1e6) + 1}))
		}
		return
	}
	if v.Type() == frequencyType {
		v.Set(reflect.ValueOf(engine.Frequency(rng.IntN(int(engine.FrequencyYTD) + 1))))
		return
	}
	if v.Type() == classType {
		v.Set(reflect.ValueOf(engine.ShareClass(rng.IntN(int(engine.ShareClassUnit) + 1))))
		return
	}
	if v.Type() == symType {
		vals := []string{"", "PETR4", "33000167000101", "Ação ON — São Paulo", "a\"b\\c"}
		v.Set(reflect.ValueOf(engine.Intern(vals[rng.IntN(len(vals))])))
		return
	}
	if v.Type() == derivedType {
		// Random fields, then every point's variables re-laid in range
		// (VarsAt and NVars are an offset and a count, not free values).
		for i := 0; i < v.NumField(); i++ {
			fill(tb, rng, v.Field(i), depth)
		}
		d := v.Addr().Interface().(*engine.Derived)
		pool := d.RatioVars
		d.RatioVars = nil
		d.RatioSyms = nil // a load's table (points in place), not data
		d.RatioRuns = nil // a load's runs (points in place), not data
		d.FundSyms = nil  // a load's table (fund points in place), not data
		d.FundRuns = nil  // a load's runs (fund points in place), not data
		for i := range d.Ratios {
			n := 0
			if len(pool) > 0 {
				n = rng.IntN(min(len(pool), 4) + 1)
			}
			d.AddVars(&d.Ratios[i], pool[:n])
		}
		return
	}
	if v.Type() == lineTableType || v.Type() == lazyRepType {
		return // a load's table (accounts in place) or reader (heads), not data
	}
	if v.Type() == lineType {
		codes := []string{"", "1", "3.01", "3.99.01.01", "6.01.01.02"}
		names := []string{"", "Receita", "Ação ON — São Paulo", "a\"b\\c"}
		v.Set(reflect.ValueOf(engine.InternLine(codes[rng.IntN(len(codes))], names[rng.IntN(len(names))], rng.IntN(2) == 1)))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if !v.Type().Field(i).IsExported() {
				continue // engine state (a Series' compact rows), not data
			}
			fill(tb, rng, v.Field(i), depth)
		}
	case reflect.Slice:
		n := rng.IntN(4)
		if rng.IntN(5) == 0 {
			return // nil
		}
		if depth > 0 {
			n = min(n, 2)
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := 0; i < n; i++ {
			fill(tb, rng, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Float64:
		vals := []float64{math.NaN(), math.Float64frombits(0x7ff8dead00000001), 0, math.Copysign(0, -1),
			math.Inf(1), math.Inf(-1), 12.34, 1e-300, 123456789012, -0.5, 1.0 / 3, math.MaxFloat64,
			math.SmallestNonzeroFloat64, 4503599627370496.5, 9e15}
		if rng.IntN(2) == 0 {
			v.SetFloat(vals[rng.IntN(len(vals))])
		} else {
			v.SetFloat(float64(rng.Int64N(1e9)-5e8) / 100)
		}
	case reflect.Int32: // engine.Date
		vals := []int64{int64(engine.NoDate), 0, -1, math.MaxInt32, 19000, 20000}
		v.SetInt(vals[rng.IntN(len(vals))])
	case reflect.Int, reflect.Int64:
		vals := []int64{0, -1, 1, math.MaxInt64, math.MinInt64, rng.Int64()}
		v.SetInt(vals[rng.IntN(len(vals))])
	case reflect.Uint16, reflect.Uint8, reflect.Uint32:
		v.SetUint(uint64(rng.IntN(3)))
	case reflect.String:
		vals := []string{"", "PETR4", "Ação ON — São Paulo", "日本語", "\x00nul", "a\"b\\c", "🙂"}
		v.SetString(vals[rng.IntN(len(vals))] + fmt.Sprint(rng.IntN(3)))
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 1)
	default:
		tb.Fatalf("fill: kind %s of %s not handled (extend fill and the codec)", v.Kind(), v.Type())
	}
}

// randomUniverse returns a Universe with every field of every entity
// filled; series columns get equal lengths and catalog indexes are valid.
func randomUniverse(tb testing.TB, seed uint64) *engine.Universe {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	u := &engine.Universe{}
	fill(tb, rng, reflect.ValueOf(u).Elem(), 0)
	for i := range u.Daily {
		s := &u.Daily[i]
		n := len(s.Dates)
		s.Open, s.High, s.Low, s.Close, s.Volume = resizeN(rng, s.Open, n), resizeN(rng, s.High, n), resizeN(rng, s.Low, n), resizeN(rng, s.Close, n), resizeN(rng, s.Volume, n)
		s.Quantity, s.Trades = resizeI(s.Quantity, n), resizeI(s.Trades, n)
	}
	for i := range u.Intraday {
		s := &u.Intraday[i]
		n := len(s.Times)
		s.Open, s.High, s.Low, s.Close, s.Volume = resizeN(rng, s.Open, n), resizeN(rng, s.High, n), resizeN(rng, s.Low, n), resizeN(rng, s.Close, n), resizeN(rng, s.Volume, n)
		s.Quantity = resizeI(s.Quantity, n)
	}
	if len(u.Derived.Catalog) == 0 {
		u.Derived.Catalog = []engine.Indicator{{ID: "X"}}
	}
	for i := range u.Derived.Ratios {
		u.Derived.Ratios[i].Indicator %= uint16(len(u.Derived.Catalog))
	}
	for i := range u.Derived.FundRatios {
		u.Derived.FundRatios[i].Indicator %= uint16(len(u.Derived.Catalog))
		u.Derived.FundRatios[i].Sources %= uint32(len(u.Derived.FundSources) + 1)
	}
	return u
}

func resizeN(rng *rand.Rand, s []engine.Num, n int) []engine.Num {
	out := make([]engine.Num, n)
	for i := range out {
		if i < len(s) {
			out[i] = s[i]
		} else {
			out[i] = engine.Num(float64(rng.IntN(100000)) / 100)
		}
	}
	return out
}

func resizeI(s []int64, n int) []int64 {
	out := make([]int64, n)
	copy(out, s)
	return out
}

var (
	t0 = time.Date(2024, 3, 28, 21, 0, 0, 0, time.UTC)
	d0 = engine.MakeDate(2024, time.March, 28)
)

// handUniverse returns a small Universe with at least one value of every
// field of every type, special values included (NaN, NoDate, zero times,
// nil and empty slices, unicode).
func handUniverse() *engine.Universe {
	nan := engine.Null
	src := engine.Source{VisualizationURL: engine.URLOf("https://example.invalid/v?id=1"), DownloadURL: engine.URLOf(""), PublishedAt: t0, RetrievedAt: time.Time{}, Name: "CVM — DFP"}
	u := &engine.Universe{
		Meta: engine.Meta{AsOf: t0, Description: "hand-built fixture: Ação, São Paulo", Attribution: "Pregão tests",
			Stream: engine.StreamPosition{Next: 1234, Name: "PREGAO_LIVE", Session: engine.MakeDate(2024, 3, 28), Batch: 57}},
		Sectors: []engine.Sector{
			{ID: "S10", Name: "Energia", Level: 1},
			{ID: "S10.10", Name: "Petróleo, Gás e Biocombustíveis", Level: 2, ParentID: "S10"},
		},
		Companies: []engine.Company{{
			ID: "33000167000101", CVMCode: "9512", Symbol: "PETR", Name: "PETRÓLEO BRASILEIRO S.A.", TradingName: "PETROBRAS",
			Kind: engine.KindCompany, BDRSponsored: true, SubIndustryID: "S10.10.10.10", Description: "Exploração 日本語 🙂",
			CEOName: "Fulana", Employees: -1, FreeFloat: 0.6312, Website: "https://example.invalid", LogoURL: "https://example.invalid/logo",
			Address:      engine.Address{Line1: "Av. Chile, 65", Line2: "", City: "Rio de Janeiro", State: "RJ", PostalCode: "20031-912", Country: "BR"},
			FoundingDate: engine.MakeDate(1953, 10, 3), IPODate: engine.NoDate, Status: "ACTIVE", StatusDate: engine.MakeDate(2001, 5, 2), ListingSegment: "N2",
			Characteristics: []engine.Characteristic{{ID: "c1", Name: "Risco", Type: "RISK", Description: "x\x00y"}},
		}, {ID: "2", Kind: engine.KindFII, FreeFloat: nan, Characteristics: []engine.Characteristic{}}, {ID: "3"}},
		Securities: []engine.Security{
			{Ticker: "PETR4", CompanyID: "33000167000101", ISIN: "BRPETRACNPR6", StockType: engine.ClassPS, Currency: "BRL", UnitFactor: nan, ListedFrom: engine.MakeDate(1977, 1, 3), ListedTo: engine.NoDate, LiquidityRank: 1},
			{Ticker: "SELIC", StockType: engine.ClassMacro, UnitFactor: 3},
		},
		Renames: []engine.TickerRename{{From: "VVAR3", To: "BHIA3", Date: d0}},
		Daily: []engine.Series{{
			Ticker:   "PETR4",
			Dates:    []engine.Date{d0 - 2, d0 - 1, d0},
			Open:     []engine.Num{37.5, 37.61, nan},
			High:     []engine.Num{38.02, engine.Num(math.Float64frombits(0x7ff8000000000bad)), 1.0 / 3},
			Low:      []engine.Num{37.1, engine.Num(math.Copysign(0, -1)), 0}, // negative zero
			Close:    []engine.Num{37.9, 38, 1e300},
			Volume:   []engine.Num{1234567890.12, nan, 5},
			Quantity: []int64{100, 0, math.MaxInt64},
			Trades:   []int64{1, -1, math.MinInt64},
		}, {Ticker: "EMPTY", Dates: []engine.Date{}, Open: []engine.Num{}, High: []engine.Num{}, Low: []engine.Num{}, Close: []engine.Num{}, Volume: []engine.Num{}, Quantity: []int64{}, Trades: []int64{}},
			{Ticker: "NIL"}},
		Intraday: []engine.Intraday{{
			Ticker:   "PETR4",
			Times:    []int64{t0.Unix() - 120, t0.Unix() - 60, t0.Unix()},
			Open:     []engine.Num{37.5, 37.61, nan},
			High:     []engine.Num{37.6, 37.7, 37.8},
			Low:      []engine.Num{37.4, 37.5, 37.6},
			Close:    []engine.Num{37.55, 37.65, 37.75},
			Volume:   []engine.Num{1e6, 2e6, nan},
			Quantity: []int64{100, 200, 300},
		}},
		Indexes: []engine.Index{{Symbol: "IBOV", Name: "Ibovespa", AsOf: d0, Reductor: 18296803.37677573, Members: []engine.IndexMember{{Ticker: "PETR4", Weight: 0.1234, TheoreticalQty: 4.5e9}}}, {Symbol: "EMPTY", Reductor: nan}},
		Reports: []engine.Report{{
			CompanyID: "33000167000101", Statement: engine.LabelDRE, Aggregation: engine.LabelConsolidated, Form: engine.LabelDFP,
			ReferenceDate: d0, StartDate: engine.MakeDate(2023, 1, 1), EndDate: engine.MakeDate(2023, 12, 31),
			PublishDate: engine.StampOf(t0), RetrievalDate: engine.StampOf(t0.Add(90 * time.Minute)), Version: 2,
			Accounts: []engine.Account{engine.NewAccount("3.01", "Receita de Venda de Bens e/ou Serviços", true, 511994000000), engine.NewAccount("3.99.01.01", "ON", false, 0.93), engine.NewAccount("3.02", "Custo", false, nan)},
			Sources:  engine.SourcesOf([]engine.Source{src}),
		}, {CompanyID: "2", Statement: engine.LabelBPA, StartDate: engine.NoDate, Accounts: []engine.Account{}}},
		Shares: []engine.SharesPoint{{CompanyID: "33000167000101", Date: d0, Common: 7442454142, Preferred: 5602042788, Treasury: 0}},
		CashActions: []engine.CashAction{{
			ID: "ca-1-v2", EventID: "ca-1", Version: 2, CompanyID: engine.Intern("33000167000101"), Ticker: engine.Intern("PETR4"), StockType: engine.MustLabel(engine.ClassPS), ISIN: engine.Intern("BRPETRACNPR6"),
			ApprovalDate: d0 - 30, PriorExDate: d0 - 10, PublishDate: engine.StampOf(t0), PaymentDate: engine.NoDate, Protocol: "P-1", Name: engine.MustLabel("DIVIDEND"), Code: engine.MustLabel("DIV"),
			DeclaredValue: 1.234567, MonetaryCorrection: 0, CorrectionStart: engine.NoDate, CorrectionEnd: engine.NoDate, NetValue: nan, Currency: engine.MustLabel("BRL"),
			Installments: engine.InstallmentsOf([]engine.Installment{{DeclaredValue: 0.5, MonetaryCorrection: 0.01, NetValue: 0.51, Currency: "BRL", PaymentDate: d0 + 30}}),
			Source:       &src,
		}},
		ShareActions: []engine.ShareAction{
			{CompanyID: "33000167000101", ISIN: "BRPETRACNPR6", Ticker: "PETR4", ApprovalDate: d0, PriorExDate: d0, Type: engine.ActStockSplit, Label: "1:10", Factor: 10, Remarks: "—"},
			{Type: engine.ActSpinOff, Factor: nan, Legs: []engine.Leg{{LegType: engine.LegOriginal, ISIN: "A", Ticker: "A3", Factor: 0.9}, {LegType: engine.LegReceived, ISIN: "B", Ticker: "B3", Factor: 0.1}}},
		},
		FundReports: []engine.FundReport{{FundID: "2", ReferenceDate: engine.MakeDate(2024, 2, 1), Version: 1, PublishDate: t0, NetAssets: 1e9, SharesOut: 1e7, NAVPerShare: 100, Investors: nan, DividendYield: 0.0085, MonthlyReturn: -0.0123, TotalAssets: 1.1e9, Sources: []engine.Source{src, {}}}},
		InsiderReports: []engine.InsiderReport{{CompanyID: "33000167000101", ReferenceDate: engine.MakeDate(2024, 2, 1), Aggregation: engine.AggIndividual, Version: 1, PublishDate: t0, RetrievalDate: t0,
			Movements: []engine.InsiderMove{{Group: "BOARD", Operation: "BUY", Ticker: "PETR4", StockType: engine.ClassPS, Date: d0, Quantity: 1000, Price: 37.5, Volume: 37500}}, Sources: nil}},
		Documents: []engine.Document{{ID: "doc-1", CompanyID: "33000167000101", Category: "Fato Relevante", Type: "FR", Title: "Aquisição ✓", ReferenceDate: d0, PublishDate: t0, RetrievalDate: time.Time{}, Version: 1, Source: src}},
		Derived: engine.Derived{
			Catalog: []engine.Indicator{
				{ID: "EBITDA_MARGIN", Name: "Margem EBITDA", Kind: engine.IndFundamental, Format: "PERCENTAGE", Formula: "EBITDA / NET_REVENUE", Variables: []string{"EBITDA", "NET_REVENUE"}, Frequencies: []string{engine.FreqAnnual, engine.FreqTTM}},
				{ID: "PRICE_EARNINGS", Kind: engine.IndValuation, ByClass: true, Variables: []string{}},
			},
			Ratios: []engine.RatioPoint{
				{CompanyID: engine.Intern("33000167000101"), Indicator: 0, Frequency: engine.FrequencyAnnual, ReferenceDate: d0, PublishDate: engine.StampOf(t0), RetrievalDate: engine.StampOf(t0), Value: 0.3456, VarsAt: 0, NVars: 2},
				{CompanyID: engine.Intern("33000167000101"), Indicator: 1, Class: engine.ShareClassPS, Ticker: engine.Intern("PETR4"), Frequency: engine.FrequencyDaily, ReferenceDate: d0, PublishDate: engine.StampOf(t0), Value: nan},
			},
			RatioVars:   []engine.Num{1.5e11, nan},
			FundRatios:  []engine.FundRatioPoint{{FundID: engine.Intern("2"), Indicator: 1, Frequency: engine.FrequencyMonthly, ReferenceDate: d0, PublishDate: engine.StampOf(t0), Value: 0.01, Sources: 1}},
			FundSources: [][]engine.Source{{src}},
		},
	}
	return u
}

// synthUniverse returns a Universe shaped like a market: tickers with
// daily bars, intraday bars, reports with account trees and ratio points.
func synthUniverse(tickers, days, intradayTickers, intradayBars, reports int) *engine.Universe {
	rng := rand.New(rand.NewPCG(1, 2))
	u := &engine.Universe{Meta: engine.Meta{AsOf: t0, Description: "synthetic"}}
	u.Daily = make([]engine.Series, tickers)
	for i := range u.Daily {
		s := &u.Daily[i]
		s.Ticker = fmt.Sprintf("T%03d3", i)
		s.Dates = make([]engine.Date, days)
		s.Open, s.High, s.Low, s.Close, s.Volume = make([]engine.Num, days), make([]engine.Num, days), make([]engine.Num, days), make([]engine.Num, days), make([]engine.Num, days)
		s.Quantity, s.Trades = make([]int64, days), make([]int64, days)
		px := 1000 + rng.IntN(5000)
		for j := 0; j < days; j++ {
			s.Dates[j] = d0 - engine.Date(days-j)*7/5
			px += rng.IntN(41) - 20
			px = max(px, 10)
			s.Open[j] = engine.Num(px) / 100
			s.High[j] = engine.Num(px+rng.IntN(30)) / 100
			s.Low[j] = engine.Num(px-rng.IntN(9)) / 100
			s.Close[j] = engine.Num(px+rng.IntN(21)-10) / 100
			q := int64(rng.IntN(1e6))
			s.Quantity[j] = q
			s.Volume[j] = engine.Num(q*int64(px)) / 100
			s.Trades[j] = int64(rng.IntN(5000))
		}
	}
	u.Intraday = make([]engine.Intraday, intradayTickers)
	for i := range u.Intraday {
		s := &u.Intraday[i]
		s.Ticker = fmt.Sprintf("T%03d3", i)
		n := intradayBars
		s.Times = make([]int64, n)
		s.Open, s.High, s.Low, s.Close, s.Volume = make([]engine.Num, n), make([]engine.Num, n), make([]engine.Num, n), make([]engine.Num, n), make([]engine.Num, n)
		s.Quantity = make([]int64, n)
		px := 1000 + rng.IntN(5000)
		for j := 0; j < n; j++ {
			s.Times[j] = t0.Unix() - int64(n-j)*60
			px += rng.IntN(5) - 2
			s.Open[j], s.High[j], s.Low[j], s.Close[j] = engine.Num(px)/100, engine.Num(px+2)/100, engine.Num(px-2)/100, engine.Num(px+1)/100
			q := int64(rng.IntN(1e4))
			s.Quantity[j] = q
			s.Volume[j] = engine.Num(q*int64(px)) / 100
		}
	}
	names := make([]string, 25)
	for i := range names {
		names[i] = fmt.Sprintf("Conta de resultado número %d", i)
	}
	u.Reports = make([]engine.Report, reports)
	for i := range u.Reports {
		r := &u.Reports[i]
		r.CompanyID = fmt.Sprintf("%014d", i%1000)
		r.Statement = engine.MustLabel(engine.Statements[i%len(engine.Statements)])
		r.Aggregation = engine.LabelConsolidated
		r.Form = engine.LabelITR
		r.ReferenceDate = d0 - engine.Date(i%40*91)
		r.StartDate, r.EndDate = r.ReferenceDate-90, r.ReferenceDate
		r.PublishDate = engine.StampOf(t0.Add(-time.Duration(i%40) * 91 * 24 * time.Hour))
		r.RetrievalDate = engine.StampOf(t0)
		r.Version = 1
		r.Accounts = make([]engine.Account, 25)
		for j := range r.Accounts {
			r.Accounts[j] = engine.NewAccount(fmt.Sprintf("3.%02d", j), names[j], j < 10, engine.Num(rng.Int64N(1e12)))
		}
		r.Sources = engine.SourcesOf([]engine.Source{{VisualizationURL: engine.URLOf(fmt.Sprintf("https://example.invalid/r/%d", i)), PublishedAt: r.PublishDate.Time(), Name: "CVM"}})
	}
	u.Derived.Catalog = []engine.Indicator{{ID: "A"}, {ID: "B"}}
	u.Derived.Ratios = make([]engine.RatioPoint, reports*4)
	for i := range u.Derived.Ratios {
		r := &u.Reports[i/4]
		u.Derived.Ratios[i] = engine.RatioPoint{CompanyID: engine.Intern(r.CompanyID), Indicator: uint16(i % 2), Frequency: engine.FrequencyQuarterly,
			ReferenceDate: r.ReferenceDate, PublishDate: engine.StampOf(r.PublishDate.Time()), RetrievalDate: engine.StampOf(r.RetrievalDate.Time()),
			Value: engine.Num(rng.Float64())}
		u.Derived.AddVars(&u.Derived.Ratios[i], []engine.Num{engine.Num(rng.Int64N(1e9)), engine.Num(rng.Int64N(1e9))})
	}
	return u
}

func mustWrite(tb testing.TB, u *engine.Universe, opt WriteOptions) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, u, opt); err != nil {
		tb.Fatalf("Write: %v", err)
	}
	return buf.Bytes()
}

func mustDecode(tb testing.TB, b []byte) (*engine.Universe, Header) {
	tb.Helper()
	u, h, err := Decode(b)
	if err != nil {
		tb.Fatalf("Decode: %v", err)
	}
	return u, h
}

// reportsOf returns the reports of u in their order, read from their
// heads when u's are read on first use (a load of format 6).
func reportsOf(tb testing.TB, u *engine.Universe) []engine.Report {
	tb.Helper()
	cu, err := withReports(u)
	if err != nil {
		tb.Fatal(err)
	}
	return cu.Reports
}
