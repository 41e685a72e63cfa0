package official

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/pregao/pregao/engine"
)

// cotahistRecordLen is the length of a COTAHIST record, line end
// excluded (SeriesHistoricas_Layout.pdf).
const cotahistRecordLen = 245

// maxTrades is the largest TOTNEG the layout holds (5 digits).
const maxTrades = 99999

// quoted is one daily series to write and what its records repeat.
type quoted struct {
	s        *engine.Series          // the universe's, read only
	tmpl     [cotahistRecordLen]byte // the record with its per-row fields (date, prices, counts) left to fill
	bdi      int                     // CODBDI
	extras   bool                    // a company's share or unit: carries the rows import skips
	tick     string
	specWord string // ESPECI's first word (ON, PN, UNT, CI, DR3...)
}

// Board codes (CODBDI) the writer uses.
const (
	bdiStandard = 2  // lote padrão: shares, units
	bdiFII      = 12 // fundos imobiliários
	bdiETF      = 14 // certificados de investimento (ETFs)
	bdiBDR      = 34 // BDRs: not a default board, kept by the ISIN category
	bdiForward  = 62
	bdiOption   = 78
	bdiOddLot   = 96
)

// segmentCode is the listing segment suffix of ESPECI ("ON      NM").
func segmentCode(seg string) string {
	switch strings.ToUpper(seg) {
	case "NOVO MERCADO":
		return "NM"
	case "NIVEL 1", "NÍVEL 1":
		return "N1"
	case "NIVEL 2", "NÍVEL 2":
		return "N2"
	case "BOVESPA MAIS":
		return "MA"
	}
	return ""
}

// specWord is ESPECI's first word for a security of class st.
func specWord(st, ticker string, sponsored bool) string {
	switch st {
	case engine.ClassCS:
		return "ON"
	case engine.ClassPS:
		return "PN"
	case engine.ClassPSA:
		return "PNA"
	case engine.ClassPSB:
		return "PNB"
	case engine.ClassPSC:
		return "PNC"
	case engine.ClassPSD:
		return "PND"
	case engine.ClassPSE:
		return "PNE"
	case engine.ClassUnit:
		return "UNT"
	case engine.ClassFundUnit:
		return "CI"
	case engine.ClassBDR:
		switch {
		case !sponsored:
			return "DRN"
		case strings.HasSuffix(ticker, "33"):
			return "DR3"
		}
		return "DR2"
	}
	return ""
}

// putText writes s (ISO-8859-1, truncated) left-aligned at 1-based
// columns from..to of rec, blank-padded.
func putText(rec []byte, from, to int, s string) {
	b := latin1(nil, s)
	f := rec[from-1 : to]
	for i := range f {
		f[i] = ' '
	}
	copy(f, b)
}

// putNum writes v zero-padded at 1-based columns from..to; a value too
// wide for the field panics (callers cap it first).
func putNum(rec []byte, from, to int, v int64) {
	if v < 0 {
		v = 0
	}
	for i := to - 1; i >= from-1; i-- {
		rec[i] = byte('0' + v%10)
		v /= 10
	}
	if v != 0 {
		panic(fmt.Sprintf("official: COTAHIST value too wide for columns %d-%d", from, to))
	}
}

// putDate writes YYYYMMDD at columns from..from+7 (zeros for NoDate).
func putDate(rec []byte, from int, d engine.Date) {
	if !d.Valid() {
		putNum(rec, from, from+7, 0)
		return
	}
	y, m, day := d.Time().Date()
	putNum(rec, from, from+7, int64(y*10000+int(m)*100+day))
}

// cents is a BRL amount in hundredths of BRL, rounded (0 for missing:
// COTAHIST's "no trade").
func cents(v engine.Num) int64 {
	if !v.Valid() {
		return 0
	}
	return int64(math.Round(float64(v) * 100))
}

// quotedSeries returns the daily series COTAHIST carries (every ticker of
// a company; macro series have no quote record), by ticker.
func (w *writer) quotedSeries() []*quoted {
	var out []*quoted
	for i := range w.u.Daily {
		s := &w.u.Daily[i]
		sec := w.byTick[s.Ticker]
		if sec == nil || sec.CompanyID == "" || sec.StockType == engine.ClassMacro || s.Len() == 0 {
			continue
		}
		co := w.company[sec.CompanyID]
		if co == nil {
			continue
		}
		q := &quoted{s: s, tick: s.Ticker}
		q.specWord = specWord(sec.StockType, sec.Ticker, co.BDRSponsored)
		spec := q.specWord
		if seg := segmentCode(co.ListingSegment); seg != "" && co.Kind == engine.KindCompany {
			spec = fmt.Sprintf("%-8s%s", q.specWord, seg)
		}
		switch {
		case sec.StockType == engine.ClassBDR:
			q.bdi = bdiBDR
		case sec.StockType == engine.ClassFundUnit && co.Kind == engine.KindFII:
			q.bdi = bdiFII
		case sec.StockType == engine.ClassFundUnit:
			q.bdi = bdiETF
		default:
			q.bdi = bdiStandard
			q.extras = co.Kind == engine.KindCompany
		}
		rec := q.tmpl[:]
		for j := range rec {
			rec[j] = ' '
		}
		putNum(rec, 1, 2, 1)
		putNum(rec, 11, 12, int64(q.bdi))
		putText(rec, 13, 24, s.Ticker)
		putNum(rec, 25, 27, 10)
		putText(rec, 28, 39, strings.ToUpper(co.TradingName))
		putText(rec, 40, 49, spec)
		putText(rec, 53, 56, "R$")
		putNum(rec, 189, 201, 0)
		rec[201] = '0'
		putNum(rec, 203, 210, 99991231)
		putNum(rec, 211, 217, 1)
		putNum(rec, 218, 230, 0)
		putText(rec, 231, 242, sec.ISIN)
		putNum(rec, 243, 245, 100)
		out = append(out, q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].tick < out[j].tick })
	return out
}

// cotahistJobs returns one job per year of quotes: COTAHIST_AYYYY.ZIP.
func (w *writer) cotahistJobs() []func() error {
	qs := w.quotedSeries()
	years := map[int]bool{}
	for _, q := range qs {
		for _, y := range []engine.Date{q.s.Dates[0], q.s.Dates[q.s.Len()-1]} {
			years[y.Time().Year()] = true
		}
		// Every year between the first and last row too.
		for y := q.s.Dates[0].Time().Year(); y <= q.s.Dates[q.s.Len()-1].Time().Year(); y++ {
			years[y] = true
		}
	}
	var ys []int
	for y := range years {
		ys = append(ys, y)
	}
	sort.Ints(ys)
	var jobs []func() error
	for _, y := range ys {
		jobs = append(jobs, func() error {
			name := fmt.Sprintf("COTAHIST_A%d", y)
			return w.writeZip(CotahistDir+"/"+name+".ZIP", []member{{name + ".TXT", func(out io.Writer) error {
				return w.writeCotahistYear(out, qs, y)
			}}})
		})
	}
	return jobs
}

// writeCotahistYear writes the annual file of year y: a header, the
// records of every session of y (by date, then ticker; the rows import
// skips follow their share's row) and the trailer.
func (w *writer) writeCotahistYear(out io.Writer, qs []*quoted, y int) error {
	from, to := engine.MakeDate(y, 1, 1), engine.MakeDate(y+1, 1, 1)
	cur := make([]int, len(qs))
	days := map[engine.Date]bool{}
	for i, q := range qs {
		cur[i] = sort.Search(q.s.Len(), func(k int) bool { return q.s.Dates[k] >= from })
		for k := cur[i]; k < q.s.Len() && q.s.Dates[k] < to; k++ {
			days[q.s.Dates[k]] = true
		}
	}
	dates := make([]engine.Date, 0, len(days))
	for d := range days {
		dates = append(dates, d)
	}
	sort.Slice(dates, func(i, j int) bool { return dates[i] < dates[j] })
	gen := to - 1
	if len(dates) > 0 {
		gen = dates[len(dates)-1]
	}
	var lines, kept int64
	skipped := map[string]int64{}
	buf := make([]byte, 0, 1<<16)
	flush := func(force bool) error {
		if len(buf) < 1<<16-512 && !force {
			return nil
		}
		_, err := out.Write(buf)
		buf = buf[:0]
		return err
	}
	var rec [cotahistRecordLen]byte
	emit := func() error {
		buf = append(buf, rec[:]...)
		buf = append(buf, '\r', '\n')
		lines++
		return flush(false)
	}
	// Header (00) and trailer (99): file name, origin, generation date.
	frame := func(typ int, count int64) {
		for j := range rec {
			rec[j] = ' '
		}
		putNum(rec[:], 1, 2, int64(typ))
		putText(rec[:], 3, 15, fmt.Sprintf("COTAHIST.%04d", y))
		putText(rec[:], 16, 23, "BOVESPA")
		putDate(rec[:], 24, gen)
		if typ == 99 {
			putNum(rec[:], 32, 42, count)
		}
	}
	frame(0, 0)
	if err := emit(); err != nil {
		return err
	}
	for _, d := range dates {
		for i, q := range qs {
			k := cur[i]
			if k >= q.s.Len() || q.s.Dates[k] != d {
				continue
			}
			cur[i]++
			s := q.s
			rec = q.tmpl
			putDate(rec[:], 3, d)
			o, h, l, c := cents(s.Open[k]), cents(s.High[k]), cents(s.Low[k]), cents(s.Close[k])
			qty, vol := s.Quantity[k], cents(s.Volume[k])
			avg := c
			if qty > 0 && vol > 0 {
				avg = (vol + qty/2) / qty
			}
			trades := s.Trades[k]
			if trades > maxTrades {
				trades = maxTrades
				skipped["capped trades"]++
			}
			for j, v := range []int64{o, h, l, avg, c, c, c} {
				putNum(rec[:], 57+13*j, 69+13*j, v)
			}
			putNum(rec[:], 148, 152, trades)
			putNum(rec[:], 153, 170, qty)
			putNum(rec[:], 171, 188, vol)
			if err := emit(); err != nil {
				return err
			}
			kept++
			if !q.extras {
				continue
			}
			// Rows import must skip, on a fixed share of the sessions.
			base := rec
			switch {
			case k%20 == 7: // odd lot: TPMERC 020, BDI 96, ticker + F
				putNum(rec[:], 11, 12, bdiOddLot)
				putText(rec[:], 13, 24, q.tick+"F")
				putNum(rec[:], 25, 27, 20)
				putNum(rec[:], 148, 152, min(trades, 50))
				putNum(rec[:], 153, 170, 37)
				putNum(rec[:], 171, 188, 37*c)
				skipped["odd lot"]++
			case k%50 == 11: // call option: TPMERC 070, BDI 78
				putNum(rec[:], 11, 12, bdiOption)
				putText(rec[:], 13, 24, fmt.Sprintf("%sA%03d", root(q.tick), k%1000))
				putNum(rec[:], 25, 27, 70)
				putNum(rec[:], 189, 201, c)
				rec[201] = '0'
				putDate(rec[:], 203, d+30)
				putText(rec[:], 231, 242, root(q.tick)+"ACN0R99") // an option ISIN, not the share's
				skipped["option"]++
			case k%100 == 29: // forward: TPMERC 030, BDI 62, term 30 days
				putNum(rec[:], 11, 12, bdiForward)
				putText(rec[:], 13, 24, q.tick+"T")
				putNum(rec[:], 25, 27, 30)
				putText(rec[:], 50, 52, "030")
				skipped["forward"]++
			case k%60 == 41: // subscription right: BDI 02, ESPECI DIR
				putText(rec[:], 13, 24, root(q.tick)+"1")
				putText(rec[:], 40, 49, "DIR "+q.specWord)
				skipped["right"]++
			default:
				continue
			}
			if err := emit(); err != nil {
				return err
			}
			rec = base
		}
	}
	frame(99, lines+1)
	if err := emit(); err != nil {
		return err
	}
	if err := flush(true); err != nil {
		return err
	}
	w.add(func(st *Stats) {
		st.CotahistLines += lines
		st.QuoteRows += kept
		for k, v := range skipped {
			st.Skipped[k] += v
		}
	})
	return nil
}
