package fii

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/pregao/pregao/snapshot/ingest/cvm"
)

var sink *Monthly

// BenchmarkFIIYear joins the three real 2021 tables (3 x 7,553 rows).
func BenchmarkFIIYear(b *testing.B) {
	files := realYear(b, "2021")
	var size int64
	for _, f := range files {
		rc, _ := f.Open()
		n, _ := bytes.NewBuffer(nil).ReadFrom(rc)
		size += n
	}
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, err := ReadMonthlyFiles(files, cvm.Options{})
		if err != nil {
			b.Fatal(err)
		}
		sink = m
	}
	b.ReportMetric(3*7553*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkFIIComplement reads 302,120 complement rows: the real 2021
// table 40 times, Versao set to the copy number.
func BenchmarkFIIComplement(b *testing.B) {
	raw := readReal(b, "inf_mensal_fii_complemento_2021.csv")
	lines := bytes.SplitAfter(raw, []byte("\n"))
	var in bytes.Buffer
	in.Write(lines[0])
	rows := 0
	for c := 1; c <= 40; c++ {
		for _, l := range lines[1:] {
			if len(bytes.TrimSpace(l)) == 0 {
				continue
			}
			f := bytes.SplitN(l, []byte(";"), 4)
			in.Write(f[0])
			in.WriteByte(';')
			in.Write(f[1])
			in.WriteByte(';')
			in.WriteString(strconv.Itoa(c))
			in.WriteByte(';')
			in.Write(f[3])
			rows++
		}
	}
	data := in.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, err := ReadMonthlyReader(bytes.NewReader(data), "inf_mensal_fii_complemento_2021.csv", cvm.Options{})
		if err != nil {
			b.Fatal(err)
		}
		sink = m
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
