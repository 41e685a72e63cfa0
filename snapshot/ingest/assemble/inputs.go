package assemble

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/pregao/pregao/snapshot/ingest/cvm"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// expand turns an input list into sorted file paths: files as given,
// directories searched recursively for files accepted by keep (in name
// order: the downloads of a yearly CVM archive pregao fetch keeps,
// NAME.<time>.zip, before NAME.zip, the newest), glob patterns expanded.
func expand(vals []string, keep func(base string) bool) ([]string, error) {
	var out []string
	for _, v := range vals {
		if strings.ContainsAny(v, "*?[") {
			m, err := filepath.Glob(v)
			if err != nil {
				return nil, err
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("%s: no file matches", v)
			}
			out = append(out, m...)
			continue
		}
		fi, err := os.Stat(v)
		if err != nil {
			if _, err2 := datafile.Open(v); err2 == nil {
				out = append(out, v) // v.zst or v.gz exists
				continue
			}
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, v)
			continue
		}
		var found []string
		err = filepath.WalkDir(v, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			// A download pregao fetch has not finished (NAME.part) is no
			// input.
			if !d.IsDir() && !strings.HasSuffix(p, ".part") && keep(strings.ToLower(datafile.BaseName(p))) {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no input file of this kind in the directory", v)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

func isCotahist(b string) bool {
	return strings.HasSuffix(b, ".txt") || strings.HasSuffix(b, ".zip")
}
func isDFP(b string) bool { return strings.HasPrefix(b, "dfp_cia_aberta") }
func isITR(b string) bool { return strings.HasPrefix(b, "itr_cia_aberta") }
func isFII(b string) bool { return strings.HasPrefix(b, "inf_mensal_fii") }
func isFCA(b string) bool {
	rest, ok := strings.CutPrefix(b, "fca_cia_aberta_")
	return ok && (strings.HasPrefix(rest, "valor_mobiliario") || strings.HasPrefix(rest, "geral") ||
		strings.HasPrefix(rest, "endereco") || strings.HasSuffix(rest, ".zip"))
}
func isIndex(b string) bool {
	return strings.HasSuffix(b, ".csv") && strings.Contains(b, "dia_") || strings.HasPrefix(b, "getstockindex") || strings.HasPrefix(b, "stockindexinfo")
}
func isListing(b string) bool { return strings.HasSuffix(b, ".csv") }
func isJSON(b string) bool    { return strings.HasSuffix(b, ".json") }

// symbolPath splits "SYMBOL=path"; symbol is "" when absent.
func symbolPath(v string) (symbol, path string) {
	if i := strings.IndexByte(v, '='); i > 0 && !strings.ContainsAny(v[:i], `/\.`) {
		return strings.ToUpper(v[:i]), v[i+1:]
	}
	return "", v
}

// plainName is path without its compression suffix: the official name the
// CVM readers classify files by.
func plainName(path string) string {
	return filepath.Join(filepath.Dir(path), datafile.BaseName(path))
}

// cvmProgress returns the cvm.Options.Progress hook that shows, through
// prog, the file being read by the CVM readers (kind names the input:
// "CVM DFP"...), its rows, rows per second since its header and the MB of
// its text read, in the COTAHIST line's format. It returns nil (no
// progress) when prog is nil. The hook is called every
// cvm.DefaultProgressEvery rows, so its clock and memory readings cost
// nothing per row.
func cvmProgress(prog Progress, kind string) func(file string, rows, bytes int64) {
	if prog == nil {
		return nil
	}
	var ms runtime.MemStats
	var start time.Time
	return func(file string, rows, n int64) {
		now := time.Now()
		if rows == 0 || start.IsZero() {
			start = now
		}
		runtime.ReadMemStats(&ms)
		rate := float64(rows) / max(now.Sub(start).Seconds(), 1e-3)
		prog(fmt.Sprintf("%s %s: %d rows (%.0f rows/s), %.1f MB read, heap %.0f MiB",
			kind, filepath.Base(file), rows, rate, float64(n)/1e6, float64(ms.HeapInuse)/(1<<20)))
	}
}

// withProgress returns a.opt reporting to prog under kind (see
// cvmProgress).
func (a *assembler) withProgress(prog Progress, kind string) cvm.Options {
	opt := a.opt
	opt.Progress = cvmProgress(prog, kind)
	return opt
}
