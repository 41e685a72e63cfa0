package engine

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"unsafe"
)

func TestInternLine(t *testing.T) {
	a := InternLine("3.01", "Receita de Venda de Bens e/ou Serviços", true)
	if b := InternLine("3.01", "Receita de Venda de Bens e/ou Serviços", true); a != b {
		t.Errorf("same line interned twice: %d and %d", a, b)
	}
	for _, other := range []Line{
		InternLine("3.01", "Receita de Venda de Bens e/ou Serviços", false),
		InternLine("3.01", "Receitas da Intermediação Financeira", true),
		InternLine("3.02", "Receita de Venda de Bens e/ou Serviços", true),
	} {
		if other == a {
			t.Errorf("different lines share handle %d", a)
		}
	}
	if a.Code() != "3.01" || a.Name() != "Receita de Venda de Bens e/ou Serviços" || !a.Fixed() {
		t.Errorf("line %d = (%q, %q, %v)", a, a.Code(), a.Name(), a.Fixed())
	}
	var zero Line
	if zero.Code() != "" || zero.Name() != "" || zero.Fixed() {
		t.Errorf("zero line = (%q, %q, %v), want empty", zero.Code(), zero.Name(), zero.Fixed())
	}
	if InternLine("", "", false) != 0 {
		t.Error("the empty line is not the zero Line")
	}
}

// TestInternLineCopies checks that the table keeps its own copy of the
// strings, not the caller's buffer.
func TestInternLineCopies(t *testing.T) {
	buf := []byte("9.87.65|Linha copiada")
	code, name := unsafe.String(&buf[0], 7), unsafe.String(&buf[8], 13)
	l := InternLine(code, name, false)
	copy(buf, "XXXXXXXXXXXXXXXXXXXXX")
	if l.Code() != "9.87.65" || l.Name() != "Linha copiada" {
		t.Errorf("line changed with the caller's buffer: (%q, %q)", l.Code(), l.Name())
	}
}

// TestInternLineConcurrent interns more lines than a chunk holds from
// several goroutines at once (run with -race) and checks every handle.
func TestInternLineConcurrent(t *testing.T) {
	const workers, n = 4, 3 * internChunk
	got := make([][]Line, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				j := (i*7 + w*13) % n // each worker in another order
				l := InternLine(fmt.Sprintf("c.%d", j), "concurrent", j%2 == 0)
				if l.Code() != fmt.Sprintf("c.%d", j) || l.Fixed() != (j%2 == 0) {
					t.Errorf("line %d read back as (%q, %v)", j, l.Code(), l.Fixed())
					return
				}
				if got[w] == nil {
					got[w] = make([]Line, n)
				}
				got[w][j] = l
			}
		}()
	}
	wg.Wait()
	seen := map[Line]bool{}
	for j := range n {
		for w := 1; w < workers; w++ {
			if got[w][j] != got[0][j] {
				t.Fatalf("line %d: worker %d got %d, worker 0 got %d", j, w, got[w][j], got[0][j])
			}
		}
		if seen[got[0][j]] {
			t.Fatalf("handle %d given to two lines", got[0][j])
		}
		seen[got[0][j]] = true
	}
}

func TestAccountLayoutAndJSON(t *testing.T) {
	if s := unsafe.Sizeof(Account{}); s != 16 {
		t.Errorf("Account is %d bytes, want 16", s)
	}
	a := NewAccount("1.01", "Caixa e Equivalentes de Caixa", true, Null)
	js, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"code":"1.01","name":"Caixa e Equivalentes de Caixa","value":null,"fixed":true}`; string(js) != want {
		t.Errorf("marshal = %s, want %s", js, want)
	}
	var b Account
	if err := json.Unmarshal(js, &b); err != nil {
		t.Fatal(err)
	}
	if b.Line != a.Line || b.Value.Valid() {
		t.Errorf("round trip = %+v, want %+v", b, a)
	}
}

func BenchmarkInternLine(b *testing.B) {
	InternLine("3.01", "Receita de Venda de Bens e/ou Serviços", true)
	for b.Loop() {
		InternLine("3.01", "Receita de Venda de Bens e/ou Serviços", true)
	}
}

func BenchmarkLineCode(b *testing.B) {
	l := InternLine("3.01", "Receita de Venda de Bens e/ou Serviços", true)
	n := 0
	for b.Loop() {
		n += len(l.Code())
	}
	_ = n
}

func TestIntern(t *testing.T) {
	a := Intern("33000167000101")
	if b := Intern("33000167000101"); a != b {
		t.Errorf("same string interned twice: %d and %d", a, b)
	}
	if Intern("PETR4") == a {
		t.Error("different strings share a Sym")
	}
	if a.String() != "33000167000101" {
		t.Errorf("String() = %q", a.String())
	}
	var zero Sym
	if zero.String() != "" || Intern("") != 0 {
		t.Errorf("zero Sym = %q, Intern(\"\") = %d", zero.String(), Intern(""))
	}
}

// TestInternZeroAlloc: reading a Line or Sym, and interning a value seen
// before, allocate nothing (the snapshot decoder and the report encoders
// do both per account).
func TestInternZeroAlloc(t *testing.T) {
	l := InternLine("3.01", "Receita de Venda de Bens e/ou Serviços", true)
	s := Intern("PETR4")
	n := 0
	if a := testing.AllocsPerRun(100, func() {
		n += len(l.Code()) + len(l.Name()) + len(s.String())
		if InternLine("3.01", "Receita de Venda de Bens e/ou Serviços", true) != l || Intern("PETR4") != s || !l.Fixed() {
			n = -1
		}
	}); a != 0 {
		t.Errorf("%v allocations per run, want 0", a)
	}
	if n < 0 {
		t.Error("interning changed a handle")
	}
}
