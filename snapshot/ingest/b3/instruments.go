package b3

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
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

// instrumentColumns are the columns ReadInstruments needs, by header name.
var instrumentColumns = []string{"RptDt", "TckrSymb", "SgmtNm", "MktNm", "SctyCtgyNm", "ISIN", "CrpnNm"}

// ReadInstruments reads B3's listed-instruments file: ';'-separated,
// ISO-8859-1 or UTF-8, CRLF or LF, an optional first line "Status do
// Arquivo: ..." before the header, which must name the columns of
// instrumentColumns (SpcfctnCd and CorpGovnLvlNm are read when present;
// the official file has 52 columns, extracts fewer). It keeps the rows of
// the equity cash market's regular lot (MktNm EQUITY-CASH, SgmtNm CASH):
// shares, units, BDRs and fund quotas; other rows (options, forwards,
// odd lot, fixed income) are counted in Other. A row with too few fields,
// a day that is not YYYY-MM-DD or a NUL byte is an error naming file and
// line or, when lenient, skipped and counted.
func ReadInstruments(r io.Reader, name string, lenient bool) ([]Instrument, InstrumentStats, error) {
	var st InstrumentStats
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	col := map[string]int{}
	need := 0
	lineNo := 0
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
		if i := datafile.NULField(f); i >= 0 {
			if lenient && len(col) > 0 {
				st.Malformed++
				continue
			}
			return nil, st, fmt.Errorf("%s:%d:%d: %w", name, lineNo, i+1, datafile.ErrNUL)
		}
		if len(col) == 0 {
			if strings.HasPrefix(strings.TrimSpace(line), "Status do Arquivo") {
				continue
			}
			for i, h := range f {
				col[strings.TrimSpace(h)] = i
			}
			for _, c := range instrumentColumns {
				i, ok := col[c]
				if !ok {
					return nil, st, fmt.Errorf("%s:%d: want B3's instruments header (RptDt;TckrSymb;...;CrpnNm), missing column %s", name, lineNo, c)
				}
				need = max(need, i+1)
			}
			continue
		}
		st.Rows++
		if len(f) < need {
			if lenient {
				st.Malformed++
				continue
			}
			return nil, st, fmt.Errorf("%s:%d: want at least %d fields, got %d", name, lineNo, need, len(f))
		}
		get := func(c string) string {
			if i, ok := col[c]; ok && i < len(f) {
				return strings.TrimSpace(f[i])
			}
			return ""
		}
		if get("MktNm") != "EQUITY-CASH" || get("SgmtNm") != "CASH" {
			st.Other++
			continue
		}
		day, err := engine.ParseDate(get("RptDt"))
		if err != nil {
			if lenient {
				st.Malformed++
				continue
			}
			return nil, st, fmt.Errorf("%s:%d: RptDt %q: want YYYY-MM-DD", name, lineNo, get("RptDt"))
		}
		in := Instrument{Day: day, Ticker: get("TckrSymb"), ISIN: get("ISIN"), Category: get("SctyCtgyNm"),
			Spec: strings.Join(strings.Fields(get("SpcfctnCd")), " "), Issuer: strings.Join(strings.Fields(get("CrpnNm")), " "),
			Governance: get("CorpGovnLvlNm")}
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
	if len(col) == 0 {
		return nil, st, fmt.Errorf("%s: empty file (want B3's instruments header)", name)
	}
	return out, st, nil
}
