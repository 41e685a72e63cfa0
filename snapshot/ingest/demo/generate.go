package demo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/pregao/pregao/engine"
)

// Size sets how much a universe holds. Per-ticker history is the same at
// every size; only the number of entities changes.
type Size struct {
	Companies        int // Brazilian listed companies (kind COMPANY)
	SponsoredBDRs    int // foreign issuers with sponsored BDRs (full coverage)
	UnsponsoredBDRs  int // foreign issuers with unsponsored BDRs (events and cash only)
	FIIs             int // real-estate funds
	ETFs             int // exchange-traded funds
	IntradayTickers  int // most liquid tickers with 1-minute bars of IntradaySessions sessions
	IntradaySessions int // last sessions with 1-minute bars of those (every ticker has the last one's)
	ReportsFrom      int // first fiscal year of CVM reports (DFP and ITR)
	FundReportsFrom  int // first year of fund monthly reports
	EventsFrom       int // first year of insider reports and documents
	// HistoryFrom is the first year of daily bars (0 means 2000). Later
	// years shorten every history; meant for quick tests.
	HistoryFrom int
}

// ScaleSize returns the Size of Generate's scale: scale 1 is about 450
// companies, 80 BDR issuers, 300 FIIs and 80 ETFs; scale S multiplies the
// entity counts by S. Scales below 1 are treated as 1.
func ScaleSize(scale int) Size {
	if scale < 1 {
		scale = 1
	}
	return Size{
		Companies:        450 * scale,
		SponsoredBDRs:    40 * scale,
		UnsponsoredBDRs:  40 * scale,
		FIIs:             300 * scale,
		ETFs:             80 * scale,
		IntradayTickers:  150 * scale,
		IntradaySessions: 10,
		ReportsFrom:      2016,
		FundReportsFrom:  2016,
		EventsFrom:       2020,
	}
}

// First and last calendar days covered by every generated universe.
var (
	FirstDay = engine.MakeDate(2000, time.January, 3)
	LastDay  = engine.MakeDate(2026, time.November, 20)
)

// URLBase is the host of every generated source address.
const URLBase = "https://demo.pregao.invalid"

// Generate returns the demo universe of the given seed and scale. The same
// arguments always give an identical Universe. It is safe for concurrent use.
func Generate(seed int64, scale int) *engine.Universe {
	return GenerateSize(seed, ScaleSize(scale))
}

// Meter receives the progress of a generation (snapshot.Progress is one):
// Begin names a phase with its unit and total (0: unknown), Add counts
// units done; Add is called from several goroutines.
type Meter interface {
	Begin(phase, unit string, total int64)
	Add(n int64)
}

// GenerateMetered is GenerateSize reporting to m: phases "simulate" and
// "detail" in entities (companies, funds, BDRs, ETFs), then "assemble".
// The universe does not depend on m.
func GenerateMetered(seed int64, sz Size, m Meter) *engine.Universe {
	return generate(seed, sz, m)
}

// GenerateSpilled is GenerateMetered handing every daily series, whole,
// to add (from several goroutines at once, in no set order) once the
// generation no longer reads its bars, and keeping of it in the universe
// only its ticker, dates and closes (what the ratios read): the bars of
// the whole universe are never in memory together. A format 6 build
// writes them as add receives them (snapshot.DailySpill). The first
// error of add is returned (the universe is then incomplete).
func GenerateSpilled(seed int64, sz Size, m Meter, add func(*engine.Series) error) (*engine.Universe, error) {
	g := newGen(uint64(seed), withDefaults(sz))
	g.meter, g.sink = m, add
	u := g.run()
	return u, g.sinkErr
}

// GenerateSize returns the demo universe of the given seed and size.
// Counts below their minimum (1 company, 0 for the rest) are raised to it.
func GenerateSize(seed int64, sz Size) *engine.Universe {
	return generate(seed, sz, nil)
}

// GenerateSession returns the demo universe of the given seed and size
// (the same as GenerateSize's) and its last session as B3's trade file
// carries it: the trades whose aggregation (package negocios) gives that
// session's daily and 1-minute bars. HoldBack(u, s) is the universe
// without that session. m, when not nil, receives the progress as
// GenerateMetered's does.
func GenerateSession(seed int64, sz Size, m Meter) (*engine.Universe, *Session) {
	return generateAll(seed, sz, m, true)
}

func generate(seed int64, sz Size, m Meter) *engine.Universe {
	u, _ := generateAll(seed, sz, m, false)
	return u
}

func generateAll(seed int64, sz Size, m Meter, keepRows bool) (*engine.Universe, *Session) {
	g := newGen(uint64(seed), withDefaults(sz))
	g.meter, g.keepRows = m, keepRows
	u := g.run()
	return u, g.sess
}

// withDefaults raises the counts of sz below their minimum and fills in the
// default years.
func withDefaults(sz Size) Size {
	sz.Companies = max(sz.Companies, 1)
	sz.SponsoredBDRs = max(sz.SponsoredBDRs, 0)
	sz.UnsponsoredBDRs = max(sz.UnsponsoredBDRs, 0)
	sz.FIIs = max(sz.FIIs, 0)
	sz.ETFs = max(sz.ETFs, 0)
	sz.IntradayTickers = max(sz.IntradayTickers, 0)
	sz.IntradaySessions = max(sz.IntradaySessions, 0)
	if sz.ReportsFrom == 0 {
		sz.ReportsFrom = 2016
	}
	if sz.FundReportsFrom == 0 {
		sz.FundReportsFrom = 2016
	}
	if sz.EventsFrom == 0 {
		sz.EventsFrom = 2020
	}
	if sz.HistoryFrom < 2000 || sz.HistoryFrom > 2025 {
		sz.HistoryFrom = 2000
	}
	return sz
}

// gen holds the shared, read-only state of one generation.
type gen struct {
	meter    Meter // nil: none
	keepRows bool  // keep the last session's trades (GenerateSession)
	// sink, when not nil, receives every daily series once its bars are
	// read no more (GenerateSpilled); sinkErr is its first error.
	sink    func(*engine.Series) error
	sinkMu  sync.Mutex
	sinkErr error
	sess    *Session
	seed    uint64
	sz      Size
	first   engine.Date   // first calendar day of the histories
	cal     []engine.Date // every session, ascending
	idxOf   []int32       // day - cal[0] -> index of the first session on or after that day
	asOf    time.Time
	sectors []sectorNode
	byTag   map[string][]int // sub-industry indexes into sectors per tag
	secOf   map[string]int   // sub-industry id -> level-1 sector ordinal

	mkt   []float64   // market log return per session
	world []float64   // world equity log return per session (BDRs)
	secF  [][]float64 // per level-1 sector log return per session
	usd   []float64   // BRL per USD per session
	selic []float64   // SELIC target, percent per year, per session

	ents []*entity
	outs []*output
}

// rng returns the generator of stream k of entity i.
func (g *gen) rng(i, k int) *rand.Rand {
	return rand.New(rand.NewPCG(g.seed, uint64(i+1)<<8|uint64(k)))
}

func newGen(seed uint64, sz Size) *gen {
	g := &gen{seed: seed, sz: sz, first: FirstDay}
	if sz.HistoryFrom > 2000 {
		g.first = engine.MakeDate(sz.HistoryFrom, time.January, 1)
	}
	last := lastBusinessDay(LastDay)
	g.cal = BusinessDays(g.first, last)
	g.idxOf = make([]int32, int(LastDay-g.first)+2)
	j := 0
	for d := g.first; d <= LastDay+1; d++ {
		for j < len(g.cal) && g.cal[j] < d {
			j++
		}
		g.idxOf[d-g.first] = int32(j)
	}
	g.asOf = localTime(last, 18, 30)
	secs, err := parseTaxonomy()
	if err != nil {
		panic("BUG: " + err.Error())
	}
	g.sectors = secs
	g.byTag = map[string][]int{}
	g.secOf = map[string]int{}
	l1 := -1
	for i, s := range secs {
		if s.Level == 1 {
			l1++
		}
		if s.Level == 4 {
			g.byTag[s.tag] = append(g.byTag[s.tag], i)
			g.secOf[s.ID] = l1
		}
	}
	g.market(l1 + 1)
	return g
}

// session returns the index of the first session on or after d (len(cal)
// when d is after the last session).
func (g *gen) session(d engine.Date) int {
	if d < g.first {
		return 0
	}
	if d > LastDay {
		return len(g.cal)
	}
	return int(g.idxOf[d-g.first])
}

func (g *gen) run() *engine.Universe {
	g.plan()
	g.outs = make([]*output, len(g.ents))
	// Phase 1: every entity except spin-off children; phase 2: children,
	// which start from their parent's price.
	var first, second []int
	for i, e := range g.ents {
		if e.spinParent >= 0 {
			second = append(second, i)
		} else {
			first = append(first, i)
		}
	}
	g.begin("simulate", "entities", int64(len(g.ents)))
	simulate := g.simulateEntity
	if g.sink != nil {
		// Past its simulation, an entity's bars are read only for their
		// closes (and the last sessions' for the 1-minute bars): they
		// are handed over at once.
		simulate = func(i int) {
			g.simulateEntity(i)
			g.handOver(i)
		}
	}
	g.parallel(first, simulate)
	g.parallel(second, simulate)
	g.begin("detail", "entities", int64(len(g.ents)))
	g.parallel(allIdx(len(g.ents)), g.detailEntity)
	g.begin("assemble", "", 0)
	return g.assemble()
}

func allIdx(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// begin starts a phase on the meter, if any.
func (g *gen) begin(phase, unit string, total int64) {
	if g.meter != nil {
		g.meter.Begin(phase, unit, total)
	}
}

// done counts one entity done on the meter, if any.
func (g *gen) done() {
	if g.meter != nil {
		g.meter.Add(1)
	}
}

// parallel runs f for every index on all CPUs. Each call writes only its
// own entity's slot, so the result does not depend on scheduling.
func (g *gen) parallel(idx []int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), len(idx))
	if workers <= 1 {
		for _, i := range idx {
			f(i)
			g.done()
		}
		return
	}
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				k := next
				next++
				mu.Unlock()
				if k >= len(idx) {
					return
				}
				f(idx[k])
				g.done()
			}
		}()
	}
	wg.Wait()
}

// round rounds v to n decimals.
func round(v float64, n int) float64 {
	p := math.Pow10(n)
	return math.Round(v*p) / p
}

// cents rounds a price to the B3 tick, never below 0.01.
func cents(v float64) float64 {
	c := math.Round(v*100) / 100
	if c < 0.01 {
		return 0.01
	}
	return c
}

// thousand rounds a money amount to whole thousands of BRL (CVM files use
// ESCALA_MOEDA = MIL).
func thousand(v float64) float64 { return math.Round(v/1000) * 1000 }

func uniform(r *rand.Rand, a, b float64) float64 { return a + (b-a)*r.Float64() }

func lognormal(r *rand.Rand, median, sigma float64) float64 {
	return median * math.Exp(sigma*r.NormFloat64())
}

func itoa(i int) string { return fmt.Sprint(i) }
