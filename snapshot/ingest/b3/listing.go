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

// Listing is one row of a listed-funds export (B3 "ETFs listados", listed
// FII lists): a fund's ticker or symbol and its name.
type Listing struct {
	Code  string // as written: a ticker (XPML11) or a 4-letter symbol (BOVA)
	Name  string // Razão Social
	Index string // Índice (ETF exports), "" when absent
	// Geography is the ETF export's Geografia: where the fund's assets
	// are (BR, US, WRD, CRIPTO...), "" when absent.
	Geography string
}

// Symbol returns the 4-character root of the code.
func (l Listing) Symbol() string {
	if len(l.Code) >= 4 {
		return l.Code[:4]
	}
	return l.Code
}

// ReadListings reads a listing export: ';' or ',' separated (told by the
// header), ISO-8859-1 or UTF-8, a header naming a code column ("Código",
// "codigo") and optionally "Razão Social", "Índice" and "Geografia". Rows with an empty
// code are skipped; a malformed code is an error naming line and column,
// or, when lenient, is skipped and counted in the second result; so is a
// row with a field holding a NUL byte (datafile.ErrNUL), and such a
// header is an error, lenient or not.
func ReadListings(r io.Reader, name string, lenient bool) ([]Listing, int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var sep string
	code, nameCol, idx, geo := -1, -1, -1, -1
	var out []Listing
	seen := map[string]bool{}
	lineNo := 0
	bad := 0
	for sc.Scan() {
		lineNo++
		raw := bytes.TrimRight(sc.Bytes(), "\r")
		if lineNo == 1 {
			raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
		}
		line := datafile.Text(raw)
		if strings.TrimSpace(line) == "" {
			continue
		}
		if sep == "" {
			sep = ";"
			if !strings.Contains(line, ";") {
				sep = ","
			}
			if i := datafile.NULField(strings.Split(line, sep)); i >= 0 {
				return nil, 0, fmt.Errorf("%s:%d:%d: %w", name, lineNo, i+1, datafile.ErrNUL)
			}
			for i, h := range strings.Split(line, sep) {
				h = fold(strings.TrimSpace(h))
				switch {
				case h == "codigo" || h == "code" || h == "ticker":
					code = i
				case strings.HasPrefix(h, "razao social"):
					nameCol = i
				case h == "indice":
					idx = i
				case h == "geografia":
					geo = i
				}
			}
			if code < 0 {
				return nil, 0, fmt.Errorf("%s:%d: want a header with a Código column, got %q", name, lineNo, line)
			}
			continue
		}
		f := strings.Split(line, sep)
		if i := datafile.NULField(f); i >= 0 {
			if lenient {
				bad++
				continue
			}
			return nil, 0, fmt.Errorf("%s:%d:%d: %w", name, lineNo, i+1, datafile.ErrNUL)
		}
		if len(f) <= code {
			return nil, 0, fmt.Errorf("%s:%d: want at least %d fields, got %d", name, lineNo, code+1, len(f))
		}
		l := Listing{Code: strings.TrimSpace(f[code])}
		if l.Code == "" {
			continue
		}
		if !(len(l.Code) == 4 && validSymbol(l.Code)) && !engine.ValidTicker(l.Code) {
			if lenient {
				bad++
				continue
			}
			return nil, 0, fmt.Errorf("%s:%d:%d: bad code %q", name, lineNo, code+1, l.Code)
		}
		if seen[l.Code] {
			continue
		}
		seen[l.Code] = true
		if nameCol >= 0 && nameCol < len(f) {
			l.Name = strings.TrimSpace(f[nameCol])
		}
		if idx >= 0 && idx < len(f) {
			l.Index = strings.TrimSpace(f[idx])
		}
		if geo >= 0 && geo < len(f) {
			l.Geography = strings.TrimSpace(f[geo])
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", name, err)
	}
	if sep == "" {
		return nil, 0, fmt.Errorf("%s: empty file", name)
	}
	return out, bad, nil
}

func validSymbol(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
