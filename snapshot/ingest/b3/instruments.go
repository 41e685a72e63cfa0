package b3

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// Instrument is one cash-market row of B3's listed-instruments file
// ("Cadastro de Instrumentos (Listado)", InstrumentsConsolidatedFile):
// what B3 says a ticker is and who issues it, on the file's day.
type Instrument struct {
	Day      engine.Date // RptDt: the day the file describes
	Ticker   string      // TckrSymb ("PETR4")
	ISIN     string      // "" when absent or not 12 characters
	Category string      // SctyCtgyNm: SHARES, UNIT, BDR, ETF EQUITIES, FUNDS...
	Spec     string      // SpcfctnCd, spaces folded: "PN N2", "UNT N2", "CI", "DR3"
	// Issuer is CrpnNm, the issuer's legal name as B3 registers it
	// ("BCO BRADESCO S.A."): B3 abbreviates words the CVM registry spells
	// out (BANCO BRADESCO S.A.).
	Issuer     string
	Governance string // CorpGovnLvlNm ("NOVO MERCADO", "NIVEL 2"), "" when absent
}

// InstrumentStats counts what ReadInstruments passed over.
type InstrumentStats struct {
	Rows      int // data rows read
	Other     int // rows of another market or segment (derivatives, odd lot, fixed income...)
	BadTicker int // cash-market rows whose ticker engine.ValidTicker refuses
	Malformed int // rows skipped when lenient: too few fields, a bad date, a NUL byte
}

// InstrumentsHeader is the header of B3's InstrumentsConsolidatedFile,
// its 52 column codes in the official order (ReadInstruments needs only
// those of instrumentLayouts).
const InstrumentsHeader = "RptDt;TckrSymb;Asst;AsstDesc;SgmtNm;MktNm;SctyCtgyNm;XprtnDt;XprtnCd;TradgStartDt;TradgEndDt;BaseCd;ConvsCritNm;" +
	"MtrtyDtTrgtPt;ReqrdConvsInd;ISIN;CFICd;DlvryNtceStartDt;DlvryNtceEndDt;OptnTp;CtrctMltplr;AsstQtnQty;AllcnRndLot;TradgCcy;" +
	"DlvryTpNm;WdrwlDays;WrkgDays;ClnrDays;RlvrBasePricNm;OpngFutrPosDay;SdTpCd1;UndrlygTckrSymb1;SdTpCd2;UndrlygTckrSymb2;" +
	"PureGoldWght;ExrcPric;OptnStyle;ValTpNm;PrmUpfrntInd;OpngPosLmtDt;DstrbtnId;PricFctr;DaysToSttlm;SrsTpNm;PrtcnFlg;" +
	"AutomtcExrcInd;SpcfctnCd;CrpnNm;CorpActnStartDt;CtdyTrtmntTpNm;MktCptlstn;CorpGovnLvlNm"

// The two layouts of B3's instruments file: the consolidated file's
// column codes (InstrumentsConsolidatedFile: RptDt;TckrSymb;...;CrpnNm)
// and the daily bulletin's export (BDI table InstrumentsEquities: a few
// lines of text, then Portuguese labels, no day column, "-" for none, a
// closing line of text). Each field is named by its column in both.
var instrumentLayouts = [2]map[string]string{
	{"day": "RptDt", "ticker": "TckrSymb", "segment": "SgmtNm", "market": "MktNm", "category": "SctyCtgyNm",
		"isin": "ISIN", "issuer": "CrpnNm", "spec": "SpcfctnCd", "governance": "CorpGovnLvlNm"},
	{"ticker": "instrumento financeiro", "segment": "segmento", "market": "mercado", "category": "categoria",
		"isin": "codigo isin", "issuer": "nome da instituicao", "governance": "nivel de governanca corporativa"},
}

// instrumentNeeded are the fields a header must name (the day aside: the
// bulletin's export gives it in its text or the file's name).
var instrumentNeeded = []string{"ticker", "segment", "market", "category", "isin", "issuer"}

// maxPreamble is how many lines may precede the header.
const maxPreamble = 20

// ReadInstruments reads B3's listed-instruments file, in either layout:
// the consolidated file (InstrumentsConsolidatedFile: an optional "Status
// do Arquivo" line, then the column codes RptDt;TckrSymb;...;CrpnNm; 52
// columns, or an extract naming the needed ones) or the daily bulletin's
// export (InstrumentsEquities: lines of text, then Portuguese labels
// "Instrumento financeiro;...;Código ISIN;...;Nome da instituição;...",
// "-" for an empty field, a closing line of text). Either is
// ';'-separated, ISO-8859-1 or UTF-8 (with or without a byte-order mark),
// CRLF or LF. The export has no day column: its day is the last
// dd/mm/yyyy date of the text before the header, else a YYYY-MM-DD or
// YYYYMMDD date in the file's name, else it is refused.
//
// It keeps the rows of the equity cash market's regular lot (market
// EQUITY-CASH, segment CASH): shares, units, BDRs and fund quotas; other
// rows (options, forwards, odd lot, fixed income) are counted in Other. A
// data row with too few fields, a day that is not a date or a NUL byte is
// an error naming file and line or, when lenient, skipped and counted; a
// line of one field after the header (the export's closing text) is not a
// row.
func ReadInstruments(r io.Reader, name string, lenient bool) ([]Instrument, InstrumentStats, error) {
	var st InstrumentStats
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var col map[string]int // field -> column
	need := 0
	lineNo := 0
	day := engine.NoDate // the export's day
	var out []Instrument
	for sc.Scan() {
		lineNo++
		raw := bytes.TrimRight(sc.Bytes(), "\r")
		if lineNo == 1 {
			raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		line := datafile.Text(raw)
		f := strings.Split(line, ";")
		if col == nil {
			if i := datafile.NULField(f); i >= 0 {
				return nil, st, fmt.Errorf("%s:%d:%d: %w", name, lineNo, i+1, datafile.ErrNUL)
			}
			if col = instrumentHeader(f); col == nil {
				if lineNo >= maxPreamble {
					return nil, st, fmt.Errorf("%s: no header of B3's instruments file in the first %d lines (want RptDt;TckrSymb;...;CrpnNm, or the bulletin's Instrumento financeiro;...)", name, maxPreamble)
				}
				if d, ok := lastBRDate(line); ok {
					day = d
				}
				continue
			}
			for _, k := range instrumentNeeded {
				i, ok := col[k]
				if !ok {
					return nil, st, fmt.Errorf("%s:%d: B3's instruments header lacks the column of %s (%s)", name, lineNo, k, instrumentLayouts[0][k])
				}
				need = max(need, i+1)
			}
			if _, ok := col["day"]; !ok && !day.Valid() {
				if day = dayInName(name); !day.Valid() {
					return nil, st, fmt.Errorf("%s:%d: the bulletin's export gives no day: neither its text nor the file's name holds a date", name, lineNo)
				}
			}
			continue
		}
		if len(f) == 1 {
			continue // the export's closing text
		}
		st.Rows++
		if i := datafile.NULField(f); i >= 0 {
			if lenient {
				st.Malformed++
				continue
			}
			return nil, st, fmt.Errorf("%s:%d:%d: %w", name, lineNo, i+1, datafile.ErrNUL)
		}
		if len(f) < need {
			if lenient {
				st.Malformed++
				continue
			}
			return nil, st, fmt.Errorf("%s:%d: want at least %d fields, got %d", name, lineNo, need, len(f))
		}
		get := func(k string) string {
			if i, ok := col[k]; ok && i < len(f) {
				if v := strings.TrimSpace(f[i]); v != "-" {
					return v
				}
			}
			return ""
		}
		if get("market") != "EQUITY-CASH" || get("segment") != "CASH" {
			st.Other++
			continue
		}
		d := day
		if _, ok := col["day"]; ok {
			var err error
			if d, err = engine.ParseDate(get("day")); err != nil {
				if lenient {
					st.Malformed++
					continue
				}
				return nil, st, fmt.Errorf("%s:%d: RptDt %q: want YYYY-MM-DD", name, lineNo, get("day"))
			}
		}
		in := Instrument{Day: d, Ticker: get("ticker"), ISIN: get("isin"), Category: get("category"),
			Spec: strings.Join(strings.Fields(get("spec")), " "), Issuer: strings.Join(strings.Fields(get("issuer")), " "),
			Governance: get("governance")}
		if !engine.ValidTicker(in.Ticker) {
			st.BadTicker++
			continue
		}
		if len(in.ISIN) != 12 {
			in.ISIN = ""
		}
		out = append(out, in)
	}
	if err := sc.Err(); err != nil {
		return nil, st, fmt.Errorf("%s: %w", name, err)
	}
	if col == nil {
		return nil, st, fmt.Errorf("%s: no header of B3's instruments file (want RptDt;TckrSymb;...;CrpnNm, or the bulletin's Instrumento financeiro;...)", name)
	}
	return out, st, nil
}

// instrumentHeader returns the columns of the fields of header line f in
// the layout it is of, or nil when f is no header: the consolidated
// file's codes as written, the export's labels folded (case and accents).
func instrumentHeader(f []string) map[string]int {
	codes := map[string]int{}
	labels := map[string]int{}
	for i, h := range f {
		h = strings.TrimSpace(h)
		codes[h] = i
		labels[fold(h)] = i
	}
	for li, lay := range instrumentLayouts {
		names := codes
		if li == 1 {
			names = labels
		}
		if _, ok := names[lay["ticker"]]; !ok {
			continue
		}
		col := map[string]int{}
		for k, c := range lay {
			if i, ok := names[c]; ok {
				col[k] = i
			}
		}
		if li == 1 {
			for l, i := range labels {
				if strings.HasPrefix(l, "especificacao") || strings.HasPrefix(l, "codigo de especificacao") {
					col["spec"] = i
				}
			}
		}
		return col
	}
	return nil
}

// lastBRDate returns the last valid dd/mm/yyyy date in s.
func lastBRDate(s string) (engine.Date, bool) {
	for i := len(s) - 10; i >= 0; i-- {
		t := s[i : i+10]
		if t[2] != '/' || t[5] != '/' {
			continue
		}
		if d, err := engine.ParseDate(t[6:] + "-" + t[3:5] + "-" + t[:2]); err == nil {
			return d, true
		}
	}
	return engine.NoDate, false
}

// dayInName returns the date a file's name holds (YYYY-MM-DD, or the
// YYYYMMDD of InstrumentsConsolidatedFile_20240527.csv), NoDate when none.
func dayInName(name string) engine.Date {
	b := filepath.Base(name)
	for i := 0; i+8 <= len(b); i++ {
		if i+10 <= len(b) {
			if d, err := engine.ParseDate(b[i : i+10]); err == nil {
				return d
			}
		}
		t := b[i : i+8]
		if strings.Trim(t, "0123456789") == "" && (i == 0 || b[i-1] < '0' || b[i-1] > '9') && (i+8 == len(b) || b[i+8] < '0' || b[i+8] > '9') {
			if d, err := engine.ParseDate(t[:4] + "-" + t[4:6] + "-" + t[6:]); err == nil {
				return d
			}
		}
	}
	return engine.NoDate
}
