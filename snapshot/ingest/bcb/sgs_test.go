package bcb

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// Real sample files (testdata/real).
const (
	realSelic20   = "bcb-sgs/JuanRocha01__ML-ETTJ26/432_01-01-2020_13-02-2026.json.zst"
	realIPCA20    = "bcb-sgs/JuanRocha01__ML-ETTJ26/433_01-01-2020_13-02-2026.json.zst"
	realIPCA10    = "bcb-sgs/JuanRocha01__ML-ETTJ26/433_01-01-2010_31-12-2019.json.zst"
	realRejected  = "bcb-sgs/JuanRocha01__ML-ETTJ26/432_01-01-2010_31-12-2019.json.zst"
	realClosing26 = "bcb-ptax/Wigny__ptax/20260731.csv"
)

func realPath(tb testing.TB, rel string) string {
	tb.Helper()
	p, err := datafile.RealPath(rel)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func readReal(tb testing.TB, rel string) []byte {
	tb.Helper()
	b, err := datafile.ReadFile(realPath(tb, rel))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func day(s string) engine.Date {
	d, err := engine.ParseDate(s)
	if err != nil {
		panic("BUG: " + s)
	}
	return d
}

// pointOn returns the value of pts on d.
func pointOn(pts []Point, d engine.Date) (float64, bool) {
	for _, p := range pts {
		if p.Date == d {
			return p.Value, true
		}
	}
	return 0, false
}

// The real answers of series 432 and 433 read as the Banco Central
// published them: the Selic target of every calendar day (2.00 until the
// Copom's rise of 2021-03-17 took effect on the 18th, 2.75), the IPCA's
// monthly changes, negative and zero ones included.
func TestReadSGSReal(t *testing.T) {
	for _, tc := range []struct {
		file  string
		n     int
		first string
		want  map[string]float64
	}{
		{realSelic20, 2236, "2020-01-01", map[string]float64{"2021-03-17": 2.00, "2021-03-18": 2.75, "2021-03-26": 2.75,
			"2021-04-21": 2.75, "2022-02-03": 10.75, "2026-02-13": 15.00}},
		{realIPCA20, 73, "2020-01-01", map[string]float64{"2020-04-01": -0.31, "2021-03-01": 0.93, "2021-12-01": 0.73, "2022-01-01": 0.54, "2026-01-01": 0.33}},
		{realIPCA10, 120, "2010-01-01", map[string]float64{"2010-06-01": 0, "2019-09-01": -0.04, "2019-12-01": 1.15}},
	} {
		f, err := ReadSGS(strings.NewReader(string(readReal(t, tc.file))), tc.file, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Points) != tc.n || f.Points[0].Date != day(tc.first) || f.Empty != 0 {
			t.Errorf("%s: %d points from %s (%d empty), want %d from %s", tc.file, len(f.Points), f.Points[0].Date, f.Empty, tc.n, tc.first)
		}
		for d, want := range tc.want {
			if got, ok := pointOn(f.Points, day(d)); !ok || got != want {
				t.Errorf("%s on %s: %v %v, want %v", tc.file, d, got, ok, want)
			}
		}
	}
}

// The Banco Central's rejection page, stored under a series' name by a
// client that did not look, is refused with what it is, never read as a
// series without values.
func TestReadSGSRejectionPage(t *testing.T) {
	_, err := ReadSGS(strings.NewReader(string(readReal(t, realRejected))), "432.json", true)
	if !errors.Is(err, ErrNotSeries) || !strings.Contains(err.Error(), "Requisição inválida!") || !strings.Contains(err.Error(), "432.json") {
		t.Fatalf("err = %v", err)
	}
}

func TestReadSGSLayouts(t *testing.T) {
	p := func(d string, v float64) Point { return Point{day(d), v} }
	for _, tc := range []struct {
		name, in string
		want     []Point
		empty    int
	}{
		{"json", `[{"data":"02/01/2024","valor":"11.65"},{"data":"03/01/2024","valor":"-0.31"}]`, []Point{p("2024-01-02", 11.65), p("2024-01-03", -0.31)}, 0},
		{"json with spaces, BOM, number value, datafim", "\xef\xbb\xbf [ {\"data\": \"01/06/2010\", \"datafim\": \"30/06/2010\", \"valor\": 0} ]\n", []Point{p("2010-06-01", 0)}, 0},
		{"json empty and null values", `[{"data":"01/01/2024","valor":""},{"data":"02/01/2024","valor":null},{"data":"03/01/2024","valor":"1.5"}]`, []Point{p("2024-01-03", 1.5)}, 2},
		{"json empty array", `[]`, nil, 0},
		{"csv decimal comma CRLF", "\"data\";\"valor\"\r\n\"01/06/1986\";\"1,27\"\r\n\"01/07/1986\";\"-1,95\"\r\n", []Point{p("1986-06-01", 1.27), p("1986-07-01", -1.95)}, 0},
		{"csv unquoted LF thousands", "data;valor\n02/01/2020;4,40\n03/01/2020;1.234,5\n\n", []Point{p("2020-01-02", 4.40), p("2020-01-03", 1234.5)}, 0},
		{"csv empty value", "\"data\";\"valor\"\n\"01/01/2024\";\"\"\n", nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ReadSGS(strings.NewReader(tc.in), "f", false)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Points) != len(tc.want) || f.Empty != tc.empty {
				t.Fatalf("got %v (%d empty), want %v (%d empty)", f.Points, f.Empty, tc.want, tc.empty)
			}
			for i := range tc.want {
				if f.Points[i] != tc.want[i] {
					t.Errorf("point %d = %v, want %v", i, f.Points[i], tc.want[i])
				}
			}
		})
	}
}

// Malformed answers: strict reads fail naming the record and the value;
// lenient ones skip the record, but an answer that is no series at all
// fails either way.
func TestReadSGSErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		lenientOK      bool
	}{
		{"bad date", `[{"data":"31/02/2021","valor":"1"}]`, `record 1: data: "31/02/2021": no such day`, true},
		{"iso date", `[{"data":"2021-02-01","valor":"1"}]`, `want dd/mm/yyyy`, true},
		{"comma in json", `[{"data":"01/02/2021","valor":"1,5"}]`, `"1,5": want a decimal number with a point`, true},
		{"nan", `[{"data":"01/02/2021","valor":"NaN"}]`, `"NaN"`, true},
		{"no data", `[{"valor":"1"}]`, `no "data"`, true},
		{"no valor", `[{"data":"01/02/2021"}]`, `no "valor"`, true},
		{"csv extra field", "data;valor\n01/02/2021;1,5;x\n", `f:2: 3 fields`, true},
		{"csv misplaced dot", "data;valor\n01/02/2021;12.34,5\n", `misplaced thousands separator`, true},
		{"csv bad header", "date;value\n01/02/2021;1\n", `header`, false},
		{"csv NUL", "data;valor\n01/02/2021;1\x00\n", `NUL byte`, false},
		{"truncated json", `[{"data":"01/02/2021","valor":"1"}`, `f:`, false},
		{"trailing text", `[] x`, `text after the array`, false},
		{"error object", `{"error":"O sistema aceita uma janela de consulta de, no máximo, 10 anos"}`, `a JSON object`, false},
		{"html", `<html><body>x</body></html>`, `an HTML page`, false},
		{"empty", ``, `empty`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSGS(strings.NewReader(tc.in), "f", false)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			_, err = ReadSGS(strings.NewReader(tc.in), "f", true)
			if (err == nil) != tc.lenientOK {
				t.Errorf("lenient: err = %v", err)
			}
		})
	}
}

func TestParseDateAndNumbers(t *testing.T) {
	for in, want := range map[string]string{"02/01/2024": "2024-01-02", "29/02/2024": "2024-02-29", "31072026": "2026-07-31", " 01/12/1999 ": "1999-12-01"} {
		if d, err := ParseDate(in); err != nil || d.String() != want {
			t.Errorf("ParseDate(%q) = %s, %v; want %s", in, d, err, want)
		}
	}
	for _, in := range []string{"29/02/2023", "1/2/2024", "01-02-2024", "00/01/2024", "01/13/2024", "aa/bb/cccc", "", "01/01/1800"} {
		if _, err := ParseDate(in); err == nil {
			t.Errorf("ParseDate(%q): no error", in)
		}
	}
	for in, want := range map[string]float64{"1,27": 1.27, "-0,31": -0.31, "5,07730000": 5.0773, "10": 10, "1.234.567,5": 1234567.5, "0,00": 0} {
		if v, err := ParseComma(in); err != nil || v != want {
			t.Errorf("ParseComma(%q) = %v, %v; want %v", in, v, err, want)
		}
	}
	for _, in := range []string{"1.27", "1,2,3", ",5", "5,", "1e3", "+1", "1.23,4", "12.3456,7", "Inf", "", "-", "0x10"} {
		if _, err := ParseComma(in); err == nil {
			t.Errorf("ParseComma(%q): no error", in)
		}
	}
}

// Hand-written answers in the official layouts (testdata/README.md).
func TestFixturesParse(t *testing.T) {
	es, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		name := e.Name()
		if name == "README.md" || e.IsDir() {
			continue
		}
		in, err := Classify(filepath.Join("testdata", name))
		if strings.HasPrefix(name, "cdi") {
			in, err = Classify("CDI=" + filepath.Join("testdata", name))
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Read([]Input{in}, Options{AsOf: engine.NoDate}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
