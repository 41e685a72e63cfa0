package cotahist

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"
)

// synthYear streams a synthetic annual COTAHIST file: one header, the quote
// records of the sample days cycled over every calendar day of 2021 (each
// re-dated), one trailer with the right count. It holds one day at a time.
type synthYear struct {
	days  [][]byte // record lines of each sample day, CRLF-terminated
	dates []time.Time
	next  int
	buf   []byte
	pos   int
	lines int64
	done  bool
}

func loadDays(tb testing.TB) [][]byte {
	tb.Helper()
	var days [][]byte
	add := func(b []byte) {
		var out []byte
		for _, l := range bytes.Split(b, []byte("\n")) {
			l = bytes.TrimRight(l, "\r")
			if len(l) == RecordLen && RecordType(l) == TypeQuote {
				out = append(out, l...)
				out = append(out, '\r', '\n')
			}
		}
		days = append(days, out)
	}
	for _, rel := range []string{fileD23, fileD25, fileD26, fileJun} {
		add(readReal(tb, rel))
	}
	for _, rel := range []string{fileZip3, fileZip4} {
		zr, err := zip.OpenReader(realPath(tb, rel))
		if err != nil {
			tb.Fatal(err)
		}
		rc, _ := zr.File[0].Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		zr.Close()
		add(b)
	}
	return days
}

func newSynthYear(days [][]byte) *synthYear {
	s := &synthYear{days: days}
	for d := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() == 2021; d = d.AddDate(0, 0, 1) {
		s.dates = append(s.dates, d)
	}
	s.buf = append(pad("00COTAHIST.2021BOVESPA 20211231"), '\r', '\n')
	s.lines = 1
	return s
}

func pad(s string) []byte {
	b := []byte(s)
	for len(b) < RecordLen {
		b = append(b, ' ')
	}
	return b
}

func (s *synthYear) Read(p []byte) (int, error) {
	for s.pos == len(s.buf) {
		if s.done {
			return 0, io.EOF
		}
		s.pos = 0
		s.buf = s.buf[:0]
		if s.next == len(s.dates) {
			s.lines++
			s.buf = append(pad(fmt.Sprintf("99COTAHIST.2021BOVESPA 20211231%011d", s.lines)), '\r', '\n')
			s.done = true
			continue
		}
		day := s.days[s.next%len(s.days)]
		date := []byte(s.dates[s.next].Format("20060102"))
		s.buf = append(s.buf, day...)
		for i := 0; i < len(s.buf); i += RecordLen + 2 {
			copy(s.buf[i+2:i+10], date)
		}
		s.lines += int64(len(day) / (RecordLen + 2))
		s.next++
	}
	n := copy(p, s.buf[s.pos:])
	s.pos += n
	return n, nil
}

// BenchmarkImportYear imports a synthetic full-year file (365 re-dated
// sample days, about 2.5 million lines) and reports lines/s, MB/s and the
// peak heap in use while importing.
func BenchmarkImportYear(b *testing.B) {
	days := loadDays(b)
	// Measure the size once.
	n, _ := io.Copy(io.Discard, newSynthYear(days))
	b.SetBytes(n)
	b.ReportAllocs()
	var peak uint64
	var lines int64
	var ms runtime.MemStats
	sample := func(Progress) {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	runtime.GC()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		im := NewImporter(Options{Progress: sample})
		if err := im.Import(newSynthYear(days), "synthetic-A2021"); err != nil {
			b.Fatal(err)
		}
		res := im.Result()
		lines += res.Stats.Lines
		sink = len(res.Series)
	}
	el := time.Since(start).Seconds()
	b.ReportMetric(float64(lines)/el, "lines/s")
	b.ReportMetric(float64(lines)/float64(b.N), "lines/op")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

// BenchmarkParseRecord parses one standard-lot record.
func BenchmarkParseRecord(b *testing.B) {
	data := readReal(b, fileD26)
	i := bytes.Index(data, []byte("012021032602PETR4 "))
	line := data[i : i+RecordLen]
	var r Record
	b.SetBytes(RecordLen)
	b.ReportAllocs()
	for b.Loop() {
		if err := ParseRecord(line, &r); err != nil {
			b.Fatal(err)
		}
	}
}

var sink int

// TestSynthYear checks the benchmark's generator: a valid file whose
// trailer matches and whose every day is imported.
func TestSynthYear(t *testing.T) {
	days := loadDays(t)
	sy := newSynthYear(days)
	sy.dates = sy.dates[:3]
	im := NewImporter(Options{})
	if err := im.Import(sy, "synthetic"); err != nil {
		t.Fatal(err)
	}
	s, _ := find(t, im.Result(), "PETR4")
	if s.Len() != 3 {
		t.Errorf("PETR4 rows %d", s.Len())
	}
}

func TestParseRecordAllocs(t *testing.T) {
	data := readReal(t, fileD26)
	i := bytes.Index(data, []byte("012021032602PETR4 "))
	line := data[i : i+RecordLen]
	var r Record
	if n := testing.AllocsPerRun(100, func() { ParseRecord(line, &r) }); n > 0 {
		t.Errorf("ParseRecord allocates %v times", n)
	}
}
