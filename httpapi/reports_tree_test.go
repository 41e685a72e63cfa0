package httpapi

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

// refTree and refFlat are the plain forms of appendTree and appendFlat
// (a map and a slice per node, strings split and joined per account):
// the fast forms must answer byte for byte the same.
func refTree(dst []byte, rep *engine.Report) []byte {
	acc := rep.Accounts
	pos := make(map[string]int, len(acc))
	for i := range acc {
		pos[acc[i].Code()] = i
	}
	children := make([][]int, len(acc))
	var tops []int
	for i := range acc {
		parent := -1
		for code := acc[i].Code(); ; {
			j := strings.LastIndexByte(code, '.')
			if j < 0 {
				break
			}
			code = code[:j]
			if p, ok := pos[code]; ok {
				parent = p
				break
			}
		}
		if parent < 0 {
			tops = append(tops, i)
		} else {
			children[parent] = append(children[parent], i)
		}
	}
	var node func(dst []byte, i int) []byte
	node = func(dst []byte, i int) []byte {
		a := &acc[i]
		dst = append(dst, `{"name":`...)
		dst = appendString(dst, a.Name())
		dst = append(dst, `,"code":`...)
		dst = appendString(dst, a.Code())
		dst = append(dst, `,"value":`...)
		if len(children[i]) > 0 {
			dst = append(dst, "null"...)
		} else {
			dst = appendNum(dst, a.Value)
		}
		dst = append(dst, `,"children":[`...)
		for n, j := range children[i] {
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = node(dst, j)
		}
		return append(dst, "]}"...)
	}
	if len(tops) == 1 {
		return node(dst, tops[0])
	}
	code := ""
	if len(acc) > 0 {
		code, _, _ = strings.Cut(acc[0].Code(), ".")
	}
	dst = append(dst, `{"name":`...)
	dst = appendString(dst, statementNames[rep.Statement.String()])
	dst = append(dst, `,"code":`...)
	dst = appendString(dst, code)
	dst = append(dst, `,"value":null,"children":[`...)
	for j, i := range tops {
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = node(dst, i)
	}
	return append(dst, "]}"...)
}

func refFlat(dst []byte, acc []engine.Account) []byte {
	byCode := make(map[string]string, len(acc))
	for i := range acc {
		byCode[acc[i].Code()] = acc[i].Name()
	}
	dst = append(dst, '{')
	seen := make(map[string]bool, len(acc))
	for i := range acc {
		a := &acc[i]
		parts := strings.Split(a.Code(), ".")
		var names []string
		for k := 1; k <= len(parts); k++ {
			if n, ok := byCode[strings.Join(parts[:k], ".")]; ok {
				names = append(names, n)
			}
		}
		key := strings.Join(names, " | ")
		if seen[key] {
			key += " (" + a.Code() + ")"
		}
		seen[key] = true
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, key)
		dst = append(dst, ':')
		dst = appendNum(dst, a.Value)
	}
	return append(dst, '}')
}

// accountsOf turns b into an account list: each byte picks a code among
// awkward ones (missing parents, repeats, empty, leading or doubled dots)
// and a name among a few, some shared, so that flat keys repeat.
func accountsOf(b []byte) []engine.Account {
	codes := []string{"1", "1.01", "1.01.01", "1.01.02", "1.02.01", "2", "2.01", "3.01", "3.02", "3.99.01.01",
		"", ".", ".01", "1..01", "1.01.01.01.01", "7", "1.01"}
	names := []string{"Ativo Total", "Caixa", "Outros", "Outros", "", "Receita \"bruta\"", "Ação ON"}
	out := make([]engine.Account, 0, len(b))
	for i, x := range b {
		v := engine.Num(float64(int(x)*1000 - 50000))
		if x%11 == 0 {
			v = engine.Null
		}
		out = append(out, engine.NewAccount(codes[int(x)%len(codes)], names[(int(x)/len(codes)+i)%len(names)], x%2 == 0, v))
	}
	return out
}

func TestTreeAndFlatMatchReference(t *testing.T) {
	seeds := [][]byte{nil, {0}, {0, 1, 2, 3}, {5, 6, 7, 8, 9}, {1, 1, 1}, {10, 11, 12, 13, 14, 15, 16}, []byte("pregão raw reports"), bytes.Repeat([]byte{3, 4, 16, 2}, 40)}
	for _, b := range seeds {
		check(t, b)
	}
}

func FuzzTreeAndFlat(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3})
	f.Add([]byte("pregão raw reports"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 512 {
			return
		}
		check(t, b)
	})
}

func check(t *testing.T, b []byte) {
	t.Helper()
	for _, st := range []string{"BPA", "DRE"} {
		rep := &engine.Report{Statement: engine.MustLabel(st), Accounts: accountsOf(b)}
		if got, want := appendTree(nil, rep), refTree(nil, rep); !bytes.Equal(got, want) {
			t.Fatalf("%s tree of %v:\n got %s\nwant %s", st, b, got, want)
		}
		if got, want := appendFlat(nil, rep.AccountList()), refFlat(nil, rep.Accounts); !bytes.Equal(got, want) {
			t.Fatalf("flat of %v:\n got %s\nwant %s", b, got, want)
		}
		// The accounts numbered by a table (a format 6 file's, used in
		// place): the same answers.
		mapped := numbered(rep)
		if got, want := appendTree(nil, mapped), appendTree(nil, rep); !bytes.Equal(got, want) {
			t.Fatalf("%s tree of %v through a line table:\n got %s\nwant %s", st, b, got, want)
		}
		if got, want := appendFlat(nil, mapped.AccountList()), appendFlat(nil, rep.AccountList()); !bytes.Equal(got, want) {
			t.Fatalf("flat of %v through a line table:\n got %s\nwant %s", b, got, want)
		}
	}
}

// numbered returns rep with its accounts' lines numbered by a table of
// its own (Report.Lines), in reverse order of first use.
func numbered(rep *engine.Report) *engine.Report {
	out := *rep
	num := map[engine.Line]engine.Line{}
	var lines []engine.Line
	for _, a := range rep.Accounts {
		if _, ok := num[a.Line]; !ok {
			num[a.Line] = 0
			lines = append(lines, a.Line)
		}
	}
	slices.Reverse(lines)
	for i, l := range lines {
		num[l] = engine.Line(i)
	}
	out.Accounts = make([]engine.Account, len(rep.Accounts))
	for i, a := range rep.Accounts {
		out.Accounts[i] = engine.Account{Line: num[a.Line], Value: a.Value}
	}
	out.Lines = &engine.LineTable{Lines: lines}
	return &out
}

// BenchmarkReportAccounts renders a report of 200 accounts as a tree,
// flat and standardized, its lines the process's (plain) or numbered by
// a table (a format 6 file's accounts used in place).
func BenchmarkReportAccounts(b *testing.B) {
	seed := make([]byte, 200)
	for i := range seed {
		seed[i] = byte(i*7 + i/13)
	}
	plain := &engine.Report{Statement: engine.LabelDRE, Accounts: accountsOf(seed)}
	for _, c := range []struct {
		name string
		rep  *engine.Report
	}{{"plain", plain}, {"table", numbered(plain)}} {
		var dst []byte
		var vals []engine.Num
		b.Run("tree/"+c.name, func(b *testing.B) {
			for b.Loop() {
				dst = appendTree(dst[:0], c.rep)
			}
		})
		b.Run("flat/"+c.name, func(b *testing.B) {
			for b.Loop() {
				dst = appendFlat(dst[:0], c.rep.AccountList())
			}
		})
		b.Run("standardized/"+c.name, func(b *testing.B) {
			for b.Loop() {
				vals = engine.AppendStandardized(vals[:0], c.rep)
			}
		})
	}
}
