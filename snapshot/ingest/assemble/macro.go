package assemble

import (
	"context"
	"fmt"
	"strings"

	"github.com/pregao/pregao/snapshot/ingest/bcb"
)

// readMacro reads the Banco Central's files of Config.BCB (SGS answers
// and PTAX closing-rates files, told apart by bcb.Classify) into MACRO
// securities and their daily series, as of the as-of day (package bcb
// states the mapping and the rules). A macro series named as a quoted
// ticker is an error.
func (a *assembler) readMacro(context.Context, Progress) error {
	if len(a.cfg.BCB) == 0 {
		return nil
	}
	var ins []bcb.Input
	for _, v := range a.cfg.BCB {
		prefix, path := "", v
		if i := strings.IndexByte(v, '='); i > 0 && !strings.ContainsAny(v[:i], `/\.`) {
			prefix, path = v[:i+1], v[i+1:]
		}
		files, err := expand([]string{path}, isBCB)
		if err != nil {
			return fmt.Errorf("--bcb: %w", err)
		}
		for _, f := range files {
			in, err := bcb.Classify(prefix + f)
			if err != nil {
				return fmt.Errorf("--bcb: %w", err)
			}
			ins = append(ins, in)
		}
	}
	res, err := bcb.Read(ins, bcb.Options{AsOf: a.asOf, Lenient: a.cfg.Lenient})
	if err != nil {
		return err
	}
	taken := make(map[string]bool, len(a.u.Securities))
	for i := range a.u.Securities {
		taken[a.u.Securities[i].Ticker] = true
	}
	for i, s := range res.Securities {
		if taken[s.Ticker] {
			return fmt.Errorf("--bcb: macro series %s: a quoted ticker has that name", s.Ticker)
		}
		a.u.Securities = append(a.u.Securities, s)
		a.u.Daily = append(a.u.Daily, res.Series[i])
	}
	a.rep.Macro = res.Stats
	return nil
}

// isBCB tells the files of a --bcb folder: SGS answers (.json, .csv) and
// closing-rates files (.csv); bcb.Classify names their kind.
func isBCB(b string) bool { return strings.HasSuffix(b, ".json") || strings.HasSuffix(b, ".csv") }
