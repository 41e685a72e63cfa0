package fii

import (
	"bytes"
	"testing"

	"github.com/pregao/pregao/snapshot/ingest/cvm"
)

func headLines(b []byte, n int) []byte {
	i := 0
	for ; n > 0; n-- {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return b
		}
		i += j + 1
	}
	return b[:i]
}

func FuzzFII(f *testing.F) {
	tables := []string{TableGeneral, TableComplement, TableAssetsLiabs}
	for i, t := range tables {
		f.Add(headLines(readReal(f, "inf_mensal_fii_"+t+"_2022.csv"), 6), uint8(i))
	}
	f.Add([]byte(geral2024), uint8(0))
	f.Add([]byte(complemento2024), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, which uint8) {
		name := "inf_mensal_fii_" + tables[int(which)%3] + "_2024.csv"
		m, err := ReadMonthlyReader(bytes.NewReader(in), name, cvm.Options{Lenient: which&4 != 0})
		if err != nil {
			return
		}
		for _, c := range m.Funds {
			if len(c.ID) != 14 {
				t.Fatalf("fund id %q", c.ID)
			}
		}
	})
}
