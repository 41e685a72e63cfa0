package demo

import "testing"

// FuzzValidCNPJ checks that any input is judged without panicking and that
// a valid CNPJ stops being valid when a check digit changes.
func FuzzValidCNPJ(f *testing.F) {
	for _, s := range []string{"02635522000195", "08773135000100", "", "abc", "0263552200019X", "99999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !ValidCNPJ(s) {
			return
		}
		b := []byte(s)
		b[13] = '0' + (b[13]-'0'+1)%10
		if ValidCNPJ(string(b)) {
			t.Fatalf("%s and %s both valid", s, b)
		}
	})
}

// FuzzValidISIN checks the same for ISINs.
func FuzzValidISIN(f *testing.F) {
	for _, s := range []string{"BRPETRACNPR6", "BRFVPQCTF015", "", "BR", "brpetracnpr6", "BRPETRACNPR\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !ValidISIN(s) {
			return
		}
		b := []byte(s)
		b[11] = '0' + (b[11]-'0'+1)%10
		if ValidISIN(string(b)) {
			t.Fatalf("%s and %s both valid", s, b)
		}
	})
}

func TestScaleSize(t *testing.T) {
	one, ten := ScaleSize(1), ScaleSize(10)
	if one.Companies != 450 || one.FIIs != 300 || one.ETFs != 80 || one.SponsoredBDRs+one.UnsponsoredBDRs != 80 {
		t.Errorf("scale 1: %+v", one)
	}
	if ten.Companies != 10*one.Companies || ten.FIIs != 10*one.FIIs || ten.IntradaySessions != one.IntradaySessions || ten.ReportsFrom != one.ReportsFrom {
		t.Errorf("scale 10: %+v", ten)
	}
	if ScaleSize(0) != one {
		t.Error("scale 0 must be scale 1")
	}
}
