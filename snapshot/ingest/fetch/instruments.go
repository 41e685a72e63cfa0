package fetch

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/b3"
)

// ArquivosHost serves B3's daily files: the daily bulletin's tables
// (bdi/table/export/csv, a POST naming the table and day) and the older
// downloads in two steps (api/download/requestname?fileName=NAME&date=DAY
// answers a token, api/download/?token=TOKEN the file).
const ArquivosHost = "https://arquivos.b3.com.br"

// InstrumentsDir is the folder of the listed-instruments files under a
// download folder: InstrumentsDir/YYYY-MM-DD.csv, the file of that day as
// B3 sends it (the bulletin's export, or InstrumentsConsolidatedFile).
const InstrumentsDir = "api/download/InstrumentsConsolidatedFile"

// maxInstrumentsBytes bounds an instruments file, which is held in
// memory before it is stored (Client.MaxFileBytes lowers it): the file is
// some 40 to 60 MB, options included.
const maxInstrumentsBytes = 512 << 20

// instrumentsLookBack is how many days before the asked day are tried
// when B3 has no instruments file for it (a holiday, a day not yet
// published).
const instrumentsLookBack = 7

// instruments stores the listed-instruments file of day, or of the
// latest weekday before it (up to instrumentsLookBack days) B3 has one
// for. Each day is asked first of the daily bulletin (the table
// InstrumentsEquities), then, when the bulletin does not answer it (an
// HTTP error other than 5xx and 429, which are retried), of the older
// two-step download (InstrumentsConsolidatedFile). A file without a
// cash-market row (b3.ReadInstruments) is no file: the day is recorded
// absent and the day before is tried. A stored file of a past day is kept
// (B3 does not change it); one of the run's day is asked again on a later
// day.
func (st *svcRun) instruments(day engine.Date) error {
	for back := 0; back <= instrumentsLookBack; back++ {
		d := day - engine.Date(back)
		if wd := d.Time().Weekday(); wd == time.Saturday || wd == time.Sunday {
			continue
		}
		ds := d.String()
		p := InstrumentsDir + "/" + ds + ".csv"
		if e, ok := st.man[p]; ok && !e.Absent && ds < st.today && st.onDisk(p, e) || st.fresh(p) {
			st.res.Skipped++
			if !st.man[p].Absent {
				return nil
			}
			continue
		}
		export := ArquivosHost + "/bdi/table/export/csv?lang=pt-BR"
		body, answered, err := st.instrumentsFile(p, export, func() ([]byte, error) {
			q, _ := json.Marshal(map[string]any{"Name": "InstrumentsEquities", "Date": ds, "FinalDate": ds, "ClientId": "", "Filters": map[string]any{}})
			return st.do(http.MethodPost, export, q, st.c.maxFile())
		})
		if err != nil {
			return err
		}
		src := export + " InstrumentsEquities " + ds
		if !answered {
			if body, src, err = st.consolidated(p, ds); err != nil {
				return err
			}
		}
		if body == nil {
			if err := st.absent(p, src); err != nil {
				return err
			}
			continue
		}
		return st.store(p, src, body)
	}
	return nil
}

// consolidated asks the two-step download of InstrumentsConsolidatedFile
// of day ds: the file, or nil when there is none, and the URL recorded.
func (st *svcRun) consolidated(p, ds string) ([]byte, string, error) {
	ask := ArquivosHost + "/api/download/requestname?fileName=InstrumentsConsolidatedFile&date=" + ds + "&recaptchaToken="
	var token string
	err := st.retry(ask, func() (bool, error) {
		b, err := st.get(ask, 0)
		if err != nil {
			if errors.Is(err, ErrStatus) && !retryable(err) {
				return false, nil // 404: no file of the day
			}
			return retryable(err), err
		}
		var ans struct {
			Token string `json:"token"`
		}
		if t := bytes.TrimSpace(b); len(t) == 0 || string(t) == "null" {
			return false, nil
		}
		if err := json.Unmarshal(b, &ans); err != nil {
			return true, fmt.Errorf("%s: want {\"token\": ...}: %w", ask, err)
		}
		token = ans.Token
		return false, nil
	})
	if err != nil || token == "" {
		return nil, ask, err
	}
	dl := ArquivosHost + "/api/download/?token=" + url.QueryEscape(token)
	body, _, err := st.instrumentsFile(p, dl, func() ([]byte, error) { return st.get(dl, st.c.maxFile()) })
	return body, ask, err
}

// instrumentsFile makes the request of ask (retrying 5xx, 429, network
// errors and answers that are not an instruments file) and returns the
// file (unpacked, instrumentsCSV), nil when the answer holds none (empty,
// or no cash-market row), and whether the server answered the request at
// all (false: another HTTP error, 404 say).
func (st *svcRun) instrumentsFile(p, u string, ask func() ([]byte, error)) (body []byte, answered bool, err error) {
	err = st.retry(u, func() (bool, error) {
		b, err := ask()
		if err != nil {
			if errors.Is(err, ErrStatus) && !retryable(err) {
				return false, nil
			}
			return retryable(err), err
		}
		answered = true
		if body, err = instrumentsCSV(b, p); err != nil {
			return true, fmt.Errorf("%s: %w", u, err)
		}
		return false, nil
	})
	return body, answered, err
}

func (c *Client) maxFile() int64 {
	if c.MaxFileBytes > 0 {
		return min(c.MaxFileBytes, maxInstrumentsBytes)
	}
	return maxInstrumentsBytes
}

// instrumentsCSV returns the CSV text of a download answer (stored at p,
// whose name gives the day of an export that states none): the answer
// itself, or the one member of a ZIP archive; nil for an empty answer or
// a file without a cash-market row (a day not published). Text that is
// not an instruments file (b3.ReadInstruments: an error page, a cut
// answer) is an error, retried.
func instrumentsCSV(b []byte, p string) ([]byte, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	if bytes.HasPrefix(b, []byte("PK\x03\x04")) {
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return nil, err
		}
		if len(zr.File) != 1 {
			return nil, fmt.Errorf("archive of %d members, want 1", len(zr.File))
		}
		rc, err := zr.File[0].Open()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		if b, err = io.ReadAll(io.LimitReader(rc, maxInstrumentsBytes+1)); err != nil {
			return nil, err
		}
		if len(b) > maxInstrumentsBytes {
			return nil, fmt.Errorf("%w: member over %d bytes", errTooBig, maxInstrumentsBytes)
		}
	}
	ins, st, err := b3.ReadInstruments(bytes.NewReader(b), p, true)
	if err != nil {
		return nil, err
	}
	if len(ins) == 0 && st.BadTicker == 0 {
		return nil, nil
	}
	return b, nil
}
