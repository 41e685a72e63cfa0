package demo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
)

// entity is the plan of one issuer: registry data, listed classes and the
// parameters of its simulation.
type entity struct {
	idx     int
	c       engine.Company
	tag     string
	sec     int // level-1 sector ordinal (factor)
	classes []*class
	first   int // first session index
	last    int // last session index (inclusive)

	mcap, vol, beta, drift, turnover float64
	startPrice                       float64
	yield                            float64 // annual cash yield, fraction
	divMonths                        []time.Month
	jcp                              bool
	fracON                           float64 // share of common shares in the total
	bank                             bool
	dfcMD                            bool
	insider                          bool

	spinParent int       // >= 0: spin-off child of that entity
	spin       *spinPlan // this entity spins off a child
	renameAt   int       // > 0: session of the root symbol change
	oldRoot    string
	mergeInto  int      // >= 0: absorbed by that entity after its last session
	redeem     bool     // fund fully redeemed after its last session
	special    *special // one of the rarer share actions
}

// class is one listed share class of an entity.
type class struct {
	stock     string // engine.Class*
	ticker    string // current ticker
	oldTicker string // ticker before a rename, "" if none
	isin      string
	suffix    string
	prem      float64 // log price premium over the first class
}

// spinPlan is a spin-off: on session ex the parent hands holders f shares
// of the child per share, worth fraction r of the parent's price.
type spinPlan struct {
	child int
	ex    int
	r     float64
}

// special is a rarer share action with price effects expressed as a share
// factor F (ORIGINAL_ASSET leg or root factor) and a value fraction r
// handed over as shares of another listed entity.
type special struct {
	typ   string
	ex    int
	f     float64 // original factor (or root factor)
	r     float64 // value fraction delivered in other's shares (0 if none)
	other int     // entity whose shares are delivered, -1 if none
}

// tickerAt returns the class's ticker on session i.
func (e *entity) tickerAt(c *class, i int) string {
	if c.oldTicker != "" && i < e.renameAt {
		return c.oldTicker
	}
	return c.ticker
}

// plan draws every entity's registry data and parameters.
func (g *gen) plan() {
	r := g.rng(-2, 0)
	usedRoot := map[string]bool{}
	usedCNPJ := map[string]bool{}
	usedCode := map[int]bool{}
	usedName := map[string]bool{}
	sz := g.sz
	newCode := func(lo, hi int) int {
		for {
			c := lo + r.IntN(hi-lo)
			if !usedCode[c] {
				usedCode[c] = true
				return c
			}
		}
	}
	uniqueName := func(mk func() (string, []string)) (string, []string) {
		for {
			n, w := mk()
			k := strings.ToLower(n)
			if !usedName[k] {
				usedName[k] = true
				return n, w
			}
		}
	}
	add := func(e *entity) {
		e.idx = len(g.ents)
		e.spinParent, e.mergeInto = -1, -1
		g.ents = append(g.ents, e)
	}
	// Brazilian companies.
	companyTags := []string{"oil", "oil", "agro", "mat", "mat", "mat", "ind", "ind", "ind", "ind", "cons", "cons", "cons",
		"realestate", "realestate", "cyc", "cyc", "cyc", "health", "health", "tech", "tech", "comm", "elec", "elec", "elec",
		"water", "gas", "bank", "bank", "fin", "fin", "ins"}
	for k := 0; k < sz.Companies; k++ {
		e := &entity{tag: companyTags[r.IntN(len(companyTags))]}
		e.c.Kind = engine.KindCompany
		sub := g.pickSub(r, e.tag)
		name, words := uniqueName(func() (string, []string) { return companyName(r, e.tag) })
		root := pickRoot(r, words, usedRoot)
		e.c.ID = newCNPJ(r, usedCNPJ)
		e.c.CVMCode = itoa(newCode(10000, 39999))
		g.registry(r, e, sub, name, words, root)
		e.bank = e.tag == "bank"
		// Listing date.
		if r.Float64() < 0.2 {
			e.first = 0
			e.c.IPODate = engine.MakeDate(1975+r.IntN(25), time.Month(1+r.IntN(12)), 1+r.IntN(28))
		} else {
			e.first = g.session(g.ipoDate(r, []int{2004, 2005, 2006, 2007, 2007, 2008, 2010, 2011, 2012, 2017, 2018, 2019, 2020, 2020, 2021, 2021}, 2000, 2025))
			e.c.IPODate = g.cal[e.first]
		}
		e.c.FoundingDate = e.c.IPODate - engine.Date(365*(3+r.IntN(60))+r.IntN(365))
		e.last = len(g.cal) - 1
		e.mcap = math.Min(5e11, math.Max(6e7, lognormal(r, 2.5e9, 1.6)))
		e.vol = tagVol(e.tag) * lognormal(r, 1, 0.2) * (1 + 0.06*math.Max(-2, math.Min(3, math.Log(2.5e9/e.mcap))))
		e.beta = uniform(r, 0.6, 1.4)
		e.drift = uniform(r, -0.03, 0.13)
		e.turnover = uniform(r, 0.2, 1.5)
		e.startPrice = uniform(r, 4, 45)
		e.dfcMD = r.Float64() < 0.1
		e.insider = r.Float64() < 0.3
		e.fracON = 1
		// Share classes.
		x := r.Float64()
		var cls []string
		switch {
		case x < 0.6:
			cls = []string{"3"}
		case x < 0.84:
			cls = []string{"3", "4"}
		case x < 0.90:
			cls = []string{"3", "4", "11"}
		case x < 0.96:
			cls = []string{"3", "5", "6"}
		default:
			cls = []string{"3", "5"}
		}
		if len(cls) > 1 {
			e.fracON = uniform(r, 0.34, 0.6)
		}
		for _, s := range cls {
			e.classes = append(e.classes, newClass(root, s, r))
		}
		switch {
		case len(cls) == 1 && e.c.IPODate >= engine.MakeDate(2002, 1, 1):
			e.c.ListingSegment = "NOVO MERCADO"
		case len(cls) == 1:
			e.c.ListingSegment = pick(r, "NOVO MERCADO", "NOVO MERCADO", "TRADICIONAL", "BOVESPA MAIS")
		case cls[len(cls)-1] == "11":
			e.c.ListingSegment = "NIVEL 2"
		default:
			e.c.ListingSegment = pick(r, "NIVEL 1", "NIVEL 1", "NIVEL 2", "TRADICIONAL")
		}
		g.dividendPolicy(r, e)
		add(e)
	}
	// BDR issuers.
	bdrTags := []string{"tech", "tech", "tech", "health", "cons", "cyc", "bank", "fin", "oil", "comm", "ind", "mat"}
	for k := 0; k < sz.SponsoredBDRs+sz.UnsponsoredBDRs; k++ {
		sponsored := k < sz.SponsoredBDRs
		e := &entity{tag: bdrTags[r.IntN(len(bdrTags))]}
		e.c.Kind = engine.KindBDR
		e.c.BDRSponsored = sponsored
		sub := g.pickSub(r, e.tag)
		name, words := uniqueName(func() (string, []string) {
			w := foreignWord(r)
			return w + " " + foreignSuffix[r.IntN(len(foreignSuffix))], []string{w, w[1:]}
		})
		root := pickRoot(r, words, usedRoot)
		if sponsored {
			e.c.CVMCode = itoa(newCode(80000, 89999))
			e.c.ID = e.c.CVMCode
		} else {
			e.c.ID = itoa(newCode(900000, 999999))
		}
		g.registry(r, e, sub, name, words, root)
		var suffix, tn string
		if sponsored {
			suffix, tn = pick(r, "33", "33", "32"), " DR3"
			if suffix == "32" {
				tn = " DR2"
			}
			e.first = g.session(g.ipoDate(r, nil, 2010, 2024))
		} else {
			suffix, tn = pick(r, "34", "34", "34", "35"), " DRN"
			e.first = g.session(g.ipoDate(r, nil, 2020, 2025))
			if e.first < g.session(engine.MakeDate(2020, time.October, 22)) {
				e.first = g.session(engine.MakeDate(2020, time.October, 22))
			}
		}
		e.c.TradingName = strings.ToUpper(words[0]) + tn
		e.c.ListingSegment = "BDR"
		e.c.IPODate = g.cal[e.first]
		e.c.FoundingDate = e.c.IPODate - engine.Date(365*(10+r.IntN(90)))
		e.c.FreeFloat = engine.Null
		e.last = len(g.cal) - 1
		e.mcap = lognormal(r, 4e8, 1.2)
		e.vol = tagVol(e.tag) * lognormal(r, 1, 0.2)
		e.beta = uniform(r, 0.7, 1.3)
		e.drift = uniform(r, 0, 0.12)
		e.turnover = uniform(r, 0.3, 2.5)
		e.startPrice = uniform(r, 15, 90)
		e.fracON = 1
		cl := &class{stock: engine.ClassBDR, ticker: root + suffix, suffix: suffix, isin: makeISIN(root, "BDR00")}
		e.classes = []*class{cl}
		if r.Float64() < 0.6 {
			e.yield = uniform(r, 0.005, 0.035)
			e.divMonths = []time.Month{time.February, time.May, time.August, time.November}
		}
		add(e)
	}
	// Real-estate funds and ETFs.
	for k := 0; k < sz.FIIs+sz.ETFs; k++ {
		fii := k < sz.FIIs
		e := &entity{tag: "etf"}
		if fii {
			e.tag = "fii"
		}
		sub := g.pickSub(r, e.tag)
		seg := g.sectors[sub].pt
		name, words := uniqueName(func() (string, []string) { return fundName(r, fii, seg) })
		root := pickRoot(r, words, usedRoot)
		e.c.ID = newCNPJ(r, usedCNPJ)
		g.registry(r, e, sub, name, words, root)
		e.c.Employees = -1
		e.c.CEOName = ""
		e.c.ListingSegment = "TRADICIONAL"
		e.c.FreeFloat = engine.Num(round(uniform(r, 0.97, 1), 4))
		e.fracON = 1
		e.beta = 0
		e.vol = 0.14 * lognormal(r, 1, 0.25)
		if fii {
			e.c.Kind = engine.KindFII
			e.c.TradingName = "FII " + strings.ToUpper(words[0])
			e.first = g.session(g.ipoDate(r, []int{2011, 2012, 2017, 2018, 2019, 2019, 2020, 2020, 2021, 2021, 2022}, 2008, 2025))
			e.mcap = lognormal(r, 6e8, 1.0)
			e.turnover = uniform(r, 0.25, 0.8)
			e.startPrice = pick(r, 100.0, 100.0, 100.0, 10.0)
			e.drift = uniform(r, -0.06, 0.02)
			e.yield = uniform(r, 0.08, 0.13)
			e.beta = uniform(r, 0.1, 0.35)
			e.divMonths = allMonths
		} else {
			e.c.Kind = engine.KindETF
			e.c.TradingName = strings.ToUpper(words[0]) + " ETF"
			e.first = g.session(g.ipoDate(r, []int{2008, 2012, 2018, 2019, 2020, 2021, 2021, 2022}, 2008, 2025))
			e.mcap = lognormal(r, 3e8, 1.3)
			e.turnover = uniform(r, 1, 5)
			e.startPrice = uniform(r, 40, 120)
			switch seg {
			case "Ações Brasil", "Setoriais e Dividendos":
				e.beta, e.vol, e.drift = uniform(r, 0.85, 1.05), 0.04, 0.0
				if seg == "Setoriais e Dividendos" && r.Float64() < 0.6 {
					e.yield = uniform(r, 0.03, 0.07)
					e.divMonths = []time.Month{time.March, time.June, time.September, time.December}
				}
			case "Ações Internacionais":
				e.beta, e.vol, e.drift = 0, 0.05, 0.02
			case "Renda Fixa":
				e.beta, e.vol, e.drift = 0, 0.04, 0.09
			default:
				e.beta, e.vol, e.drift = 0, 0.7, 0.15
			}
		}
		e.c.IPODate = g.cal[e.first]
		e.c.FoundingDate = e.c.IPODate - engine.Date(30+r.IntN(300))
		e.last = len(g.cal) - 1
		cl := &class{stock: engine.ClassFundUnit, ticker: root + "11", suffix: "11", isin: makeISIN(root, "CTF00")}
		e.classes = []*class{cl}
		add(e)
	}
	g.roles(r, usedRoot, usedCNPJ, usedCode, usedName)
}

var allMonths = []time.Month{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}

func pick[T any](r *rand.Rand, v ...T) T { return v[r.IntN(len(v))] }

// newClass returns the class of ticker suffix s.
func newClass(root, s string, r *rand.Rand) *class {
	c := &class{suffix: s, ticker: root + s}
	switch s {
	case "3":
		c.stock, c.isin = engine.ClassCS, makeISIN(root, "ACNOR")
	case "4":
		c.stock, c.isin, c.prem = engine.ClassPS, makeISIN(root, "ACNPR"), uniform(r, -0.15, 0.08)
	case "5":
		c.stock, c.isin, c.prem = engine.ClassPSA, makeISIN(root, "ACNPA"), uniform(r, -0.2, 0.05)
	case "6":
		c.stock, c.isin, c.prem = engine.ClassPSB, makeISIN(root, "ACNPB"), uniform(r, -0.2, 0.05)
	case "11":
		c.stock, c.isin = engine.ClassUnit, makeISIN(root, "CDAM1")
	}
	return c
}

// pickSub returns a random sub-industry index with the tag.
func (g *gen) pickSub(r *rand.Rand, tag string) int {
	subs := g.byTag[tag]
	return subs[r.IntN(len(subs))]
}

// ipoDate draws a listing day: a year from waves (or uniformly in
// [from, to] when waves is nil or one time in four), then a day in it.
func (g *gen) ipoDate(r *rand.Rand, waves []int, from, to int) engine.Date {
	y := from + r.IntN(to-from+1)
	if len(waves) > 0 && r.Float64() < 0.75 {
		y = waves[r.IntN(len(waves))]
	}
	d := engine.MakeDate(y, time.January, 2) + engine.Date(r.IntN(360))
	if limit := g.cal[len(g.cal)-1] - 120; d > limit {
		d = limit - engine.Date(r.IntN(200))
	}
	return d
}

func tagVol(tag string) float64 {
	switch tag {
	case "elec", "water", "gas":
		return 0.24
	case "bank", "ins", "cons":
		return 0.29
	case "tech", "realestate":
		return 0.45
	case "mat", "oil", "agro":
		return 0.40
	}
	return 0.34
}

// companyName returns a legal name and the words its symbol and brand use.
func companyName(r *rand.Rand, tag string) (string, []string) {
	var w string
	if r.Float64() < 0.5 {
		w = inventedWord(r)
	} else {
		w = nameWords[r.IntN(len(nameWords))]
	}
	nouns := sectorNouns[tag]
	n := nouns[r.IntN(len(nouns))]
	switch {
	case tag == "bank":
		return "Banco " + w + " S.A.", []string{w, n}
	case r.Float64() < 0.3:
		return "Companhia " + n + " " + w, []string{w, n}
	default:
		return w + " " + n + " S.A.", []string{w, n}
	}
}

// fundName returns a fund's legal name.
func fundName(r *rand.Rand, fii bool, seg string) (string, []string) {
	var w string
	if r.Float64() < 0.5 {
		w = inventedWord(r)
	} else {
		w = nameWords[r.IntN(len(nameWords))]
	}
	if fii {
		return "Fundo de Investimento Imobiliário " + w + " " + seg, []string{w, seg}
	}
	return w + " " + seg + " Fundo de Índice", []string{w, seg}
}

var riskItems = []engine.Characteristic{
	{ID: "RISK_LEVERAGE", Name: "Alavancagem financeira", Type: "RISK", Description: "Dívida líquida elevada em relação à geração de caixa."},
	{ID: "RISK_FX", Name: "Exposição cambial", Type: "RISK", Description: "Parte relevante dos custos ou da dívida em moeda estrangeira."},
	{ID: "RISK_REGULATORY", Name: "Risco regulatório", Type: "RISK", Description: "Receitas dependem de regras e tarifas definidas por agência reguladora."},
	{ID: "RISK_COMMODITY", Name: "Preço de commodities", Type: "RISK", Description: "Resultados sensíveis a preços internacionais de commodities."},
	{ID: "RISK_CONCENTRATION", Name: "Concentração de clientes", Type: "RISK", Description: "Poucos clientes respondem pela maior parte da receita."},
	{ID: "RISK_CREDIT", Name: "Inadimplência", Type: "RISK", Description: "Carteira sensível ao ciclo de crédito e ao desemprego."},
	{ID: "RISK_VACANCY", Name: "Vacância", Type: "RISK", Description: "Receita depende da ocupação dos imóveis do portfólio."},
}

var oppItems = []engine.Characteristic{
	{ID: "OPP_EXPANSION", Name: "Expansão de capacidade", Type: "OPPORTUNITY", Description: "Projetos em andamento ampliam a capacidade instalada."},
	{ID: "OPP_DIGITAL", Name: "Canais digitais", Type: "OPPORTUNITY", Description: "Crescimento acelerado das vendas por canais digitais."},
	{ID: "OPP_DIVIDENDS", Name: "Pagadora de proventos", Type: "OPPORTUNITY", Description: "Histórico consistente de distribuição de proventos."},
	{ID: "OPP_CONSOLIDATION", Name: "Consolidação do setor", Type: "OPPORTUNITY", Description: "Espaço para aquisições em um setor fragmentado."},
}

var tagDescr = map[string]string{
	"oil": "exploração, refino e distribuição de petróleo e derivados", "agro": "produção agroindustrial e bioenergia",
	"mat": "produção de materiais básicos", "ind": "bens de capital, engenharia e transporte",
	"cons": "alimentos, bebidas e bens de consumo", "realestate": "incorporação e exploração de imóveis",
	"cyc": "varejo e bens de consumo duráveis", "health": "serviços de saúde e medicamentos",
	"tech": "software e serviços de tecnologia", "comm": "telecomunicações e mídia",
	"elec": "geração, transmissão e distribuição de energia elétrica", "water": "saneamento básico e resíduos",
	"gas": "distribuição de gás natural", "bank": "serviços bancários", "fin": "serviços financeiros e participações",
	"ins": "seguros e previdência", "fii": "investimento em ativos imobiliários", "etf": "replicação de índice de mercado",
}

// registry fills the company's registry fields.
func (g *gen) registry(r *rand.Rand, e *entity, sub int, name string, words []string, root string) {
	c := &e.c
	c.Name = name
	c.Symbol = root
	c.TradingName = strings.ToUpper(strings.Join(words, " "))
	c.SubIndustryID = g.sectors[sub].ID
	e.sec = g.secOf[c.SubIndustryID]
	c.Status = "ACTIVE"
	c.StatusDate = g.cal[0] // registered before the histories begin; fixed below for cancelled ones
	c.CEOName = personName(r)
	c.Employees = int64(math.Round(lognormal(r, 2500, 1.4)))
	if r.Float64() < 0.06 {
		c.Employees = -1
	}
	c.FreeFloat = engine.Num(round(uniform(r, 0.18, 0.95), 4))
	host := slug(strings.Join(words, ""))
	if len(host) > 24 {
		host = host[:24]
	}
	c.Website = "https://www." + host + ".example"
	c.LogoURL = URLBase + "/logos/" + root
	where := ""
	if e.c.Kind == engine.KindBDR {
		p := foreignPlaces[r.IntN(len(foreignPlaces))]
		c.Address = engine.Address{Line1: fmt.Sprintf("%d %s Street", 100+r.IntN(9000), words[0]), City: p.city, State: p.state, Country: p.country}
		where = p.city + " (" + p.country + ")"
	} else {
		ct := cities[r.IntN(len(cities))]
		line2 := ""
		if r.Float64() < 0.6 {
			line2 = fmt.Sprintf("%dº andar", 1+r.IntN(30))
		}
		c.Address = engine.Address{
			Line1:      fmt.Sprintf("%s, %d - %s", streets[r.IntN(len(streets))], 10+r.IntN(3000), districts[r.IntN(len(districts))]),
			Line2:      line2,
			City:       ct.name,
			State:      ct.state,
			PostalCode: fmt.Sprintf("%s%03d-%03d", ct.cep, r.IntN(1000), r.IntN(1000)),
			Country:    "Brasil",
		}
		where = ct.name + " (" + ct.state + ")"
	}
	kind := "Companhia fictícia"
	switch e.tag {
	case "fii":
		kind = "Fundo imobiliário fictício"
	case "etf":
		kind = "Fundo de índice fictício"
	}
	if e.c.Kind == engine.KindBDR {
		kind = "Emissora estrangeira fictícia"
	}
	c.Description = fmt.Sprintf("%s de %s (%s), com sede em %s. Dados sintéticos de demonstração.",
		kind, tagDescr[e.tag], strings.ToLower(g.sectors[sub].pt), where)
	n := 1 + r.IntN(3)
	c.Characteristics = append(c.Characteristics, riskItems[r.IntN(len(riskItems))])
	for i := 1; i < n; i++ {
		it := oppItems[r.IntN(len(oppItems))]
		if i == 2 {
			it = riskItems[r.IntN(len(riskItems))]
		}
		if it.ID != c.Characteristics[0].ID && (len(c.Characteristics) < 2 || it.ID != c.Characteristics[1].ID) {
			c.Characteristics = append(c.Characteristics, it)
		}
	}
}

// dividendPolicy sets a company's cash distribution habits.
func (g *gen) dividendPolicy(r *rand.Rand, e *entity) {
	x := r.Float64()
	switch {
	case x < 0.5:
		e.yield = uniform(r, 0.025, 0.09)
	case x < 0.78:
		e.yield = uniform(r, 0.005, 0.025)
	default:
		return
	}
	switch y := r.Float64(); {
	case y < 0.3:
		e.divMonths = []time.Month{time.April}
	case y < 0.6:
		e.divMonths = []time.Month{time.April, time.October}
	case y < 0.93:
		e.divMonths = []time.Month{time.March, time.June, time.September, time.December}
	default:
		e.divMonths = allMonths
	}
	e.jcp = r.Float64() < 0.4
}
