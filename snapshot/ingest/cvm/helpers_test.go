package cvm

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// realDir is the project's copy of the official sample files (compressed).
const realDir = "../../../testdata/real"

// readReal returns the decompressed bytes of testdata/real/<rel> (.zst).
func readReal(tb testing.TB, rel string) []byte {
	tb.Helper()
	f, err := os.Open(filepath.Join(realDir, rel))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(rel, ".zst") {
		zr, err := zstd.NewReader(f)
		if err != nil {
			tb.Fatal(err)
		}
		defer zr.Close()
		r = zr
	}
	b, err := io.ReadAll(r)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// header returns the real header line (with its line end) of a
// cvm-headers fixture, e.g. header(t, "dfp_cia_aberta_DRE_con").
func header(tb testing.TB, table string) string {
	tb.Helper()
	return string(readReal(tb, "cvm-headers/"+table+"_header.csv.zst"))
}

// headerLine is header without the line end.
func headerLine(tb testing.TB, table string) string {
	return strings.TrimRight(header(tb, table), "\r\n")
}

var retrieved = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func latin1(s string) []byte {
	var b bytes.Buffer
	for _, r := range s {
		if r > 0xFF {
			panic("not latin1")
		}
		b.WriteByte(byte(r))
	}
	return b.Bytes()
}
