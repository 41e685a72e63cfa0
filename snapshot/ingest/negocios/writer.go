package negocios

import (
	"archive/zip"
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/atomicfile"
)

// Header2026 is the header of the current (2026) equities file, the 11
// columns of the 2022 generation.
const Header2026 = "DataReferencia;CodigoInstrumento;AcaoAtualizacao;PrecoNegocio;QuantidadeNegociada;HoraFechamento;CodigoIdentificadorNegocio;TipoSessaoPregao;DataNegocio;CodigoParticipanteComprador;CodigoParticipanteVendedor"

// ZipName returns the name of the 2026 equities archive of day d
// (20261119_NEGOCIOSAVISTA.zip); TextName the name of the text inside it
// (19-11-2026_NEGOCIOSAVISTA_RV.txt).
func ZipName(d engine.Date) string { return d.Time().Format("20060102") + "_NEGOCIOSAVISTA.zip" }

// TextName returns the name of the 2026 equities text file of day d; see
// ZipName.
func TextName(d engine.Date) string { return d.Time().Format("02-01-2006") + "_NEGOCIOSAVISTA_RV.txt" }

// Writer writes rows in the 2026 equities layout: UTF-8 with a byte order
// mark, LF line ends, Header2026, ';'-separated fields, a decimal comma
// and three decimals, HHMMSSfff local times, empty participant codes for
// 0. It buffers: call Flush at the end. It is not safe for concurrent use.
type Writer struct {
	w    *bufio.Writer
	line []byte
	rows int64
}

// NewWriter writes the byte order mark and the header to w and returns a
// Writer of rows.
func NewWriter(w io.Writer) (*Writer, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	if _, err := bw.WriteString("\xef\xbb\xbf" + Header2026 + "\n"); err != nil {
		return nil, err
	}
	return &Writer{w: bw}, nil
}

// Write writes one row. The time of day is t.Time at UTC−03:00 on
// t.TradeDate; it must be within that day.
func (w *Writer) Write(t *Trade) error {
	ms := t.LocalTime()
	if ms < 0 || ms >= 86400000 {
		return fmt.Errorf("negocios: %s trade %d: time %d ms is not within its trade date %s", t.Ticker, t.ID, t.Time, t.TradeDate)
	}
	b := w.line[:0]
	b = t.RefDate.Time().AppendFormat(b, time.DateOnly)
	b = append(b, ';')
	b = append(b, t.Ticker...)
	b = append(b, ';')
	b = strconv.AppendUint(b, uint64(t.Action), 10)
	b = append(b, ';')
	b = FormatPrice(b, t.Price)
	b = append(b, ';')
	b = strconv.AppendInt(b, t.Quantity, 10)
	b = append(b, ';')
	hh, mm, ss, f := ms/3600000, ms/60000%60, ms/1000%60, ms%1000
	b = append(b, byte('0'+hh/10), byte('0'+hh%10), byte('0'+mm/10), byte('0'+mm%10), byte('0'+ss/10), byte('0'+ss%10),
		byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10), ';')
	b = strconv.AppendInt(b, t.ID, 10)
	b = append(b, ';')
	b = strconv.AppendUint(b, uint64(t.Session), 10)
	b = append(b, ';')
	b = t.TradeDate.Time().AppendFormat(b, time.DateOnly)
	b = append(b, ';')
	if t.Buyer != 0 {
		b = strconv.AppendInt(b, int64(t.Buyer), 10)
	}
	b = append(b, ';')
	if t.Seller != 0 {
		b = strconv.AppendInt(b, int64(t.Seller), 10)
	}
	b = append(b, '\n')
	w.line = b
	w.rows++
	_, err := w.w.Write(b)
	return err
}

// Rows returns the number of rows written.
func (w *Writer) Rows() int64 { return w.rows }

// Flush writes what is buffered.
func (w *Writer) Flush() error { return w.w.Flush() }

// WriteDay writes the rows each yields into dir as B3 publishes a day of
// the 2026 equities file: ZipName(day) holding TextName(day). The archive
// appears atomically (atomicfile.WriteFile, mode 0644). It returns the
// archive's path and the number of rows written.
func WriteDay(dir string, day engine.Date, each func(yield func(*Trade) error) error) (string, int64, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, err
	}
	dst := filepath.Join(dir, ZipName(day))
	var rows int64
	err := atomicfile.WriteFile(dst, 0o644, func(w io.Writer) (err error) {
		rows, err = writeZip(w, day, each)
		return err
	})
	if err != nil {
		return "", 0, fmt.Errorf("negocios: %s: %w", dst, err)
	}
	return dst, rows, nil
}

func writeZip(f io.Writer, day engine.Date, each func(yield func(*Trade) error) error) (int64, error) {
	zw := zip.NewWriter(f)
	fh := &zip.FileHeader{Name: TextName(day), Method: zip.Deflate}
	fh.Modified = day.Time().Add(21 * time.Hour) // 18:00 local, fixed: the archive is reproducible
	tw, err := zw.CreateHeader(fh)
	if err != nil {
		return 0, err
	}
	w, err := NewWriter(tw)
	if err != nil {
		return 0, err
	}
	if err := each(w.Write); err != nil {
		return 0, err
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	return w.Rows(), zw.Close()
}
