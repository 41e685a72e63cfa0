package fetch

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/pregao/pregao/engine"
)

// ArquivosHost serves B3's daily files (the "Boletim Diário" downloads)
// in two steps: api/download/requestname?fileName=NAME&date=YYYY-MM-DD
// answers a token, api/download/?token=TOKEN the file.
const ArquivosHost = "https://arquivos.b3.com.br"

// InstrumentsDir is the folder of the listed-instruments files
// (InstrumentsConsolidatedFile) under a download folder:
// InstrumentsDir/YYYY-MM-DD.csv, the file of that day as B3 sends it.
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
// latest weekday before it (up to instrumentsLookBack days) B3 answers
// one for. A stored file of a past day is kept (B3 does not change it);
// one of the run's day is asked again on a later day. A day B3 answers
// no token or an empty file for is recorded absent.
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
		if err != nil {
			return err
		}
		if token == "" {
			if err := st.absent(p, ask); err != nil {
				return err
			}
			continue
		}
		dl := ArquivosHost + "/api/download/?token=" + url.QueryEscape(token)
		var body []byte
		err = st.retry(dl, func() (bool, error) {
			b, err := st.get(dl, st.c.maxFile())
			if err != nil {
				if errors.Is(err, ErrStatus) && !retryable(err) {
					return false, nil
				}
				return retryable(err), err
			}
			body, err = instrumentsCSV(b)
			if err != nil {
				return true, fmt.Errorf("%s: %w", dl, err)
			}
			return false, nil
		})
		if err != nil {
			return err
		}
		if len(body) == 0 {
			if err := st.absent(p, ask); err != nil {
				return err
			}
			continue
		}
		return st.store(p, ask, body)
	}
	return nil
}

func (c *Client) maxFile() int64 {
	if c.MaxFileBytes > 0 {
		return min(c.MaxFileBytes, maxInstrumentsBytes)
	}
	return maxInstrumentsBytes
}

// instrumentsCSV returns the CSV text of a download answer: the answer
// itself, or the one member of a ZIP archive; nil for an empty answer (a
// file not published). Text whose first lines hold no "RptDt;TckrSymb"
// header is an error (an error page, a cut answer), retried.
func instrumentsCSV(b []byte) ([]byte, error) {
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
	head := b[:min(len(b), 4096)]
	if !bytes.Contains(head, []byte("RptDt;TckrSymb")) {
		return nil, errors.New("no instruments header (RptDt;TckrSymb;...) in the answer")
	}
	return b, nil
}
