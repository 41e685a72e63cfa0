package bcb

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// Rate is one line of a PTAX closing-rates file: the closing bulletin of
// one currency on one day.
type Rate struct {
	Date     engine.Date
	Code     int    // the Banco Central's currency code (220: USD)
	Type     byte   // 'A': the parity is units of the currency per US dollar; 'B': US dollars per unit
	Currency string // ISO 4217 code, as the file writes it (USD, EUR, ARS, CNY...)
	Buy      float64
	Sell     float64 // BRL per unit of the currency (Buy too): the PTAX rates
	// ParityBuy and ParitySell are the parities with the US dollar, in the
	// direction Type says.
	ParityBuy, ParitySell float64
}

// ClosingFile is what ReadClosing read from one file.
type ClosingFile struct {
	Rates     []Rate // in file order
	Malformed int    // lines skipped by a lenient read
}

// ReadClosing reads a PTAX closing-rates file (Download/fechamento/
// YYYYMMDD.csv: "dd/mm/yyyy;code;type;ISO;buy;sell;parity buy;parity
// sell" lines, decimal commas, no header) from r. name is used in errors.
// Strict, a malformed line is an error naming the file, line, field and
// value; lenient, it is skipped and counted. A file that holds no rate at
// all (an HTML page, an empty answer) is an error either way. The result
// is the caller's.
func ReadClosing(r io.Reader, name string, lenient bool) (*ClosingFile, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxAnswerBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > MaxAnswerBytes {
		return nil, fmt.Errorf("%s: more than %d bytes: not a closing-rates file", name, MaxAnswerBytes)
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && (t[0] == '<' || t[0] == '{' || t[0] == '[') {
		return nil, fmt.Errorf("%s: starts with %q: not a closing-rates file%s", name, snippet(t), pageHint(t))
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	out := &ClosingFile{}
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		f := strings.Split(text, ";")
		for i := range f {
			f[i] = unquote(f[i])
		}
		if datafile.NULField(f) >= 0 {
			return nil, fmt.Errorf("%s:%d: %w", name, line, datafile.ErrNUL)
		}
		rt, err := closingRate(f)
		if err != nil {
			if lenient {
				out.Malformed++
				continue
			}
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		out.Rates = append(out.Rates, rt)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if len(out.Rates) == 0 {
		return nil, fmt.Errorf("%s: no closing rate in the file", name)
	}
	return out, nil
}

// closingRate reads the eight fields of one line.
func closingRate(f []string) (Rate, error) {
	if len(f) != 8 {
		return Rate{}, fmt.Errorf("%d fields, want 8 (date;code;type;currency;buy;sell;parity buy;parity sell)", len(f))
	}
	var rt Rate
	var err error
	if rt.Date, err = ParseDate(f[0]); err != nil {
		return rt, fmt.Errorf("date: %w", err)
	}
	if len(f[1]) < 1 || len(f[1]) > 4 {
		return rt, fmt.Errorf("code %q: want a number", f[1])
	}
	if rt.Code, err = digits(f[1]); err != nil {
		return rt, fmt.Errorf("code %q: want a number", f[1])
	}
	if f[2] != "A" && f[2] != "B" {
		return rt, fmt.Errorf("type %q: want A or B", f[2])
	}
	rt.Type = f[2][0]
	if !ValidCurrency(f[3]) {
		return rt, fmt.Errorf("currency %q: want 3 capital letters (ISO 4217)", f[3])
	}
	rt.Currency = f[3]
	for i, dst := range []*float64{&rt.Buy, &rt.Sell, &rt.ParityBuy, &rt.ParitySell} {
		v, err := ParseComma(f[4+i])
		if err != nil {
			return rt, fmt.Errorf("%s: %w", closingFields[i], err)
		}
		if v <= 0 {
			return rt, fmt.Errorf("%s %q: want a positive number", closingFields[i], f[4+i])
		}
		*dst = v
	}
	return rt, nil
}

var closingFields = [...]string{"buy rate", "sell rate", "buy parity", "sell parity"}

// ValidCurrency reports whether s is three capital ASCII letters, the
// form of an ISO 4217 code and of a currency's macro series ticker.
func ValidCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}
