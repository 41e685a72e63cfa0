package engine

import "testing"

// TestAccountListTranslates checks that a report whose accounts number
// their lines by a table reads through AccountList as one holding the
// process's Lines, and that a number beyond the table reads as the
// empty line.
func TestAccountListTranslates(t *testing.T) {
	a := NewAccount("1.01", "Ativo Circulante", true, 5)
	b := NewAccount("1.02", "Ativo Não Circulante", false, 7)
	plain := Report{Statement: LabelBPA, Accounts: []Account{a, b}}
	tab := &LineTable{Lines: []Line{0, b.Line, a.Line}}
	mapped := Report{Statement: LabelBPA, Accounts: []Account{{Line: 2, Value: 5}, {Line: 1, Value: 7}, {Line: 9, Value: 1}}, Lines: tab}
	pl, ml := plain.AccountList(), mapped.AccountList()
	if pl.Len() != 2 || ml.Len() != 3 {
		t.Fatalf("lengths %d and %d", pl.Len(), ml.Len())
	}
	for i := range pl.Len() {
		if pl.At(i) != ml.At(i) {
			t.Errorf("account %d: %+v through the table, want %+v", i, ml.At(i), pl.At(i))
		}
	}
	if got := ml.At(2); got.Line != 0 || got.Code() != "" || got.Value != 1 {
		t.Errorf("a number beyond the table: %+v, want the empty line", got)
	}
	if got, want := Standardize(&mapped), Standardize(&plain); len(got) != len(want) || got[1] != want[1] || got[1] != 5 {
		t.Errorf("Standardize through the table %v, want %v", got, want)
	}
	empty := Report{Lines: &LineTable{}, Accounts: []Account{{Line: 0, Value: 1}}}
	if got := empty.AccountList().At(0); got.Line != 0 {
		t.Errorf("an empty table: %+v", got)
	}
}
