package fetch

import (
	"archive/zip"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pregao/pregao/engine"
)

// CompanyCodes returns the issuer codes (the first four characters of the
// ticker: ABEV of ABEV3) of the shares, units and share deposit
// certificates that the COTAHIST files among items traded on the cash
// market: quote records (type 01) of market 010 whose ISIN names an ACN,
// UNT or CDA asset, the selection ropensci/rb3 makes for its company
// calls (R/scraper-company.R cotahist_companies_table_get). These are the
// companies the importer quotes, so their cash dividends can be joined to
// a ticker. Files of items absent from dir (days without a session) are
// skipped; sorted, each code once. It is an error when no COTAHIST file
// of items is in dir.
func CompanyCodes(dir string, items []Item) ([]string, error) {
	seen := map[string]bool{}
	files := 0
	for _, it := range items {
		if !strings.HasPrefix(it.Path, "InstDados/SerHist/COTAHIST_") {
			continue
		}
		p, err := localPath(dir, it.Path)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			continue
		}
		files++
		if err := scanCotahistFile(p, seen); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	if files == 0 {
		return nil, fmt.Errorf("no COTAHIST file of the range in %s to take the companies from (fetch cotahist too, or name them)", dir)
	}
	out := make([]string, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Strings(out)
	return out, nil
}

// scanCotahistFile adds the codes of a COTAHIST .ZIP (every member) or
// text file to seen.
func scanCotahistFile(p string, seen map[string]bool) error {
	if !strings.EqualFold(filepath.Ext(p), ".zip") {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return ScanCotahist(f, seen)
	}
	zr, err := zip.OpenReader(p)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, m := range zr.File {
		if m.FileInfo().IsDir() {
			continue
		}
		rc, err := m.Open()
		if err != nil {
			return err
		}
		err = ScanCotahist(rc, seen)
		rc.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
	}
	return nil
}

// ScanCotahist adds to seen the issuer codes of the COTAHIST records of r
// (245-byte lines, CRLF or LF) that CompanyCodes selects. Lines of other
// types, shorter lines and tickers the importer does not quote (not
// engine.ValidTicker: EQMA3B, a receipt on the organized OTC market, is
// not) are ignored.
func ScanCotahist(r io.Reader, seen map[string]bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 64<<10)
	for sc.Scan() {
		l := sc.Bytes()
		// 1-based columns of the layout: TIPREG 1-2, CODNEG 13-24,
		// TPMERC 25-27, CODISI 231-242 (asset type: ISIN characters 7-9).
		if len(l) < 242 || l[0] != '0' || l[1] != '1' || string(l[24:27]) != "010" {
			continue
		}
		switch string(l[236:239]) {
		case "ACN", "UNT", "CDA":
		default:
			continue
		}
		if t := bytes.TrimRight(l[12:24], " "); engine.ValidTicker(string(t)) {
			seen[string(t[:4])] = true
		}
	}
	return sc.Err()
}
