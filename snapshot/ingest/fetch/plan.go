package fetch

import (
	"fmt"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
)

// Sources are the names Plan accepts: the official files, the Banco
// Central's (bcb: Plan lists its closing-rates files, FetchSGS asks its
// SGS series), then the B3 service sources (ServiceSources), which Plan
// leaves to FetchServices.
var Sources = []string{"cotahist", "cad", "dfp", "itr", "fca", "fii", "bcb", "indexes", "companies", "listings", "instruments"}

// ServiceSources are the sources answered by B3's listed-data services
// (FetchServices): index portfolios, listed-company data (supplement,
// details, cash dividends), the listed-fund exports and the
// listed-instruments file.
var ServiceSources = []string{"indexes", "companies", "listings", "instruments"}

// IsService reports whether source s is one of ServiceSources.
func IsService(s string) bool {
	for _, x := range ServiceSources {
		if x == s {
			return true
		}
	}
	return false
}

// Official hosts.
const (
	B3Host  = "https://bvmf.bmfbovespa.com.br"
	CVMHost = "https://dados.cvm.gov.br"
)

// Item is one file to download.
type Item struct {
	URL string // official address
	// Path is the file's place under the download folder, slash-separated:
	// the URL path without its leading slash.
	Path string
	// Optional items may answer 404 (a daily quote file of a day without a
	// session): that is counted, not an error.
	Optional bool
	// Immutable items never change once published (past quote files): a
	// complete copy is skipped without asking the server.
	Immutable bool
	// Keep items keep every download of other content: CVM republishes
	// its yearly archives with the latest version of each filing of the
	// day, so a restated filing's earlier version is only in an earlier
	// download. The newest stays under Path; the one it replaces is kept
	// beside it as KeptName(Path, when it was stored), and a download of
	// the content held is dropped (see settle).
	Keep bool
}

// Plan returns the files of sources for the days from..to (inclusive).
// cotahist: one daily file per weekday (or, when annual, one file per
// year; the current and future years are not immutable); cad: the current
// registry; dfp, itr, fca (the reference form: tickers of each company's
// securities), fii: one yearly archive per year of the range, each
// download of other content kept (Item.Keep); bcb: the
// PTAX closing-rates file of every weekday (a holiday answers 404,
// counted; its SGS series are FetchSGS's).
func Plan(sources []string, from, to engine.Date, annual bool) ([]Item, error) {
	if !from.Valid() || !to.Valid() || to < from {
		return nil, fmt.Errorf("bad date range %s..%s", from, to)
	}
	if to-from > 366*40 {
		return nil, fmt.Errorf("date range %s..%s too long", from, to)
	}
	thisYear := time.Now().UTC().Year()
	fy, ty := from.Time().Year(), to.Time().Year()
	var items []Item
	seen := map[string]bool{}
	for _, s := range sources {
		if seen[s] {
			continue
		}
		seen[s] = true
		switch s {
		case "indexes", "companies", "listings", "instruments":
		case "cotahist":
			if annual {
				for y := fy; y <= ty; y++ {
					items = append(items, b3Item(fmt.Sprintf("COTAHIST_A%d.ZIP", y), false, y < thisYear))
				}
				continue
			}
			for d := from; d <= to; d++ {
				t := d.Time()
				if wd := t.Weekday(); wd == time.Saturday || wd == time.Sunday {
					continue
				}
				items = append(items, b3Item("COTAHIST_D"+t.Format("02012006")+".ZIP", true, true))
			}
		case "bcb":
			for d := from; d <= to; d++ {
				if wd := d.Time().Weekday(); wd == time.Saturday || wd == time.Sunday {
					continue
				}
				p := ClosingPath(d)
				items = append(items, Item{URL: BCBPTAXHost + "/" + p, Path: p, Optional: true, Immutable: true})
			}
		case "cad":
			items = append(items, cvmItem("dados/CIA_ABERTA/CAD/DADOS/cad_cia_aberta.csv", false))
		case "dfp", "itr", "fca":
			for y := fy; y <= ty; y++ {
				items = append(items, cvmItem(fmt.Sprintf("dados/CIA_ABERTA/DOC/%s/DADOS/%s_cia_aberta_%d.zip", strings.ToUpper(s), s, y), true))
			}
		case "fii":
			for y := fy; y <= ty; y++ {
				items = append(items, cvmItem(fmt.Sprintf("dados/FII/DOC/INF_MENSAL/DADOS/inf_mensal_fii_%d.zip", y), true))
			}
		default:
			return nil, fmt.Errorf("unknown source %q (want %s)", s, strings.Join(Sources, ", "))
		}
	}
	return items, nil
}

func b3Item(name string, optional, immutable bool) Item {
	p := "InstDados/SerHist/" + name
	return Item{URL: B3Host + "/" + p, Path: p, Optional: optional, Immutable: immutable}
}

// cvmItem is a CVM file; keep: a yearly archive, whose every download of
// other content is kept (Item.Keep).
func cvmItem(p string, keep bool) Item {
	return Item{URL: CVMHost + "/" + p, Path: p, Keep: keep}
}
