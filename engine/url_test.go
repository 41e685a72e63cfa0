package engine

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestURLOf(t *testing.T) {
	for _, c := range []struct {
		in   string
		t    int
		tail string
		n    uint64
	}{
		{"", 0, "", 0},
		// Addresses of the CVM's and B3's files (LINK_DOC of the DFP/ITR
		// and IPE indexes, fnet documents, B3's pages).
		{"https://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=131502&CodigoTipoInstituicao=2", 1, "", 131502},
		{"https://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=131502&CodigoTipoInstituicao=1", 2, "", 131502},
		{"https://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=131502", 3, "", 131502},
		{"https://www.rad.cvm.gov.br/ENET/frmExibirArquivoIPEExterno.aspx?NumeroProtocoloEntrega=1203344", 4, "", 1203344},
		{"https://www.rad.cvm.gov.br/ENET/frmDownloadDocumento.aspx?numProtocolo=129003", 5, "", 129003},
		{"https://www.rad.cvm.gov.br/ENET/frmDownloadDocumento.aspx?Tela=ext&numProtocolo=1201877", 6, "", 1201877},
		{"https://www.rad.cvm.gov.br/ENET/frmExibirArquivoFCAView.aspx?NumeroSequencialDocumento=88", 7, "", 88},
		{"https://www.rad.cvm.gov.br/ENET/frmDownloadDocumento.aspx?Tela=ext&numSequencia=2&numVersao=2&numProtocolo=129002&descTipo=IPE&CodigoInstituicao=1", 8, "frmDownloadDocumento.aspx?Tela=ext&numSequencia=2&numVersao=2&numProtocolo=129002&descTipo=IPE&CodigoInstituicao=1", 0},
		{"https://fnet.bmfbovespa.com.br/fnet/publico/exibirDocumento?id=598812", 9, "", 598812},
		{"https://fnet.bmfbovespa.com.br/fnet/publico/downloadDocumento?id=598812", 10, "", 598812},
		{"https://fnet.bmfbovespa.com.br/fnet/publico/abrirGerenciadorDocumentosCVM?cnpjFundo=1", 11, "publico/abrirGerenciadorDocumentosCVM?cnpjFundo=1", 0},
		{"https://sistemaswebb3-listados.b3.com.br/listedCompaniesPage/?language=pt-br", 12, "?language=pt-br", 0},
		{"https://sistemaswebb3-listados.b3.com.br/listedCompaniesPage/main/25011/ENHZ/corporate-events", 12, "main/25011/ENHZ/corporate-events", 0},
		{"https://dados.cvm.gov.br/dataset/fii-doc-inf_mensal", 13, "dataset/fii-doc-inf_mensal", 0},
		// The demo's.
		{"https://demo.pregao.invalid/cvm/enet/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=6100001&CodigoTipoInstituicao=2", 14, "", 6100001},
		{"https://demo.pregao.invalid/cvm/fnet/informe-mensal/48429920000156/2016-02", 15, "48429920000156/2016-02", 0},
		{"https://demo.pregao.invalid/cvm/vlmo/06239939000190/2026-10/CONSOLIDATED", 16, "06239939000190/2026-10", 0},
		{"https://demo.pregao.invalid/cvm/vlmo/06239939000190/2026-10/INDIVIDUAL", 17, "06239939000190/2026-10", 0},
		{"https://demo.pregao.invalid/cvm/ipe/06239939000190/DOC000060-0027", 18, "06239939000190/DOC000060-0027", 0},
		{"https://demo.pregao.invalid/b3/proventos/ITAG3/C000383-00107-0", 19, "ITAG3/C000383-00107-0", 0},
		{"https://demo.pregao.invalid", 0, "https://demo.pregao.invalid", 0},
		// Numbers that would not spell the address back: whole, or the
		// next template that takes them.
		{"https://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=0131502", 8, "frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=0131502", 0},
		{"https://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=0", 3, "", 0},
		{"https://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=", 8, "frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=", 0},
		{"https://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=+1", 8, "frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=+1", 0},
		{"https://fnet.bmfbovespa.com.br/fnet/publico/exibirDocumento?id=72057594037927935", 9, "", MaxURLNumber},
		{"https://fnet.bmfbovespa.com.br/fnet/publico/exibirDocumento?id=72057594037927936", 11, "publico/exibirDocumento?id=72057594037927936", 0},
		{"https://fnet.bmfbovespa.com.br/fnet/publico/exibirDocumento?id=18446744073709551616", 11, "publico/exibirDocumento?id=18446744073709551616", 0},
		// Others, whole.
		{"https://dados.cvm.gov.br", 0, "https://dados.cvm.gov.br", 0},
		{"http://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=1", 0, "http://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=1", 0},
		{"https://example.invalid/v?id=1", 0, "https://example.invalid/v?id=1", 0},
		{"d", 0, "d", 0},
		{"\xff\"\\<&>\u2028", 0, "\xff\"\\<&>\u2028", 0},
	} {
		u := URLOf(c.in)
		tail, n := u.Part()
		if u.Template() != c.t || tail != c.tail || n != c.n {
			t.Errorf("URLOf(%q) = template %d, part %q %d; want %d, %q %d", c.in, u.Template(), tail, n, c.t, c.tail, c.n)
		}
		if got := u.String(); got != c.in {
			t.Errorf("URLOf(%q).String() = %q", c.in, got)
		}
		if u.Len() != len(c.in) {
			t.Errorf("URLOf(%q).Len() = %d", c.in, u.Len())
		}
		if u.IsZero() != (c.in == "") {
			t.Errorf("URLOf(%q).IsZero() = %v", c.in, u.IsZero())
		}
		if v, ok := URLFromParts(u.Template(), tail, n); !ok || v != u {
			t.Errorf("URLFromParts(%d, %q, %d) = %v, %v", u.Template(), tail, n, v, ok)
		}
		if v, ok := UnpackURL(u.Packed()); !ok || v != u {
			t.Errorf("UnpackURL(%q) = %v, %v", u.Packed(), v, ok)
		}
		// JSON as a string field's.
		want, _ := json.Marshal(struct{ A string }{c.in})
		got, err := json.Marshal(struct{ A URL }{u})
		if err != nil || string(got) != string(want) {
			t.Errorf("json of %q = %s, %v; want %s", c.in, got, err, want)
		}
		var back struct{ A URL }
		if err := json.Unmarshal(want, &back); err != nil || back.A != URLOf(string([]rune(c.in))) && back.A != u {
			t.Errorf("json %s read back as %q, %v", want, back.A.String(), err)
		}
	}
}

// TestURLFromPartsRefuses checks that only the splits URLOf makes are
// accepted, so that a URL read from a file compares as URLOf's.
func TestURLFromPartsRefuses(t *testing.T) {
	for _, c := range []struct {
		t    int
		tail string
		n    uint64
	}{
		{-1, "", 0},
		{len(urlTemplates), "", 0},
		{0, "https://www.rad.cvm.gov.br/ENET/frmExibirArquivoIPEExterno.aspx?NumeroProtocoloEntrega=1", 0}, // template 4's
		{0, "x", 1},  // a number with a whole address
		{1, "12", 0}, // a string for a Number template
		{15, "a", 3}, // a number for a string template
		{1, "", MaxURLNumber + 1},
		{8, "frmExibirArquivoIPEExterno.aspx?NumeroProtocoloEntrega=1", 0}, // template 4's
		{20, "cvm/ipe/1/DOC1", 0}, // template 18's
		{12, "", 0},
	} {
		if c.t == 12 { // a string template's empty part is its own split
			if _, ok := URLFromParts(c.t, c.tail, c.n); !ok {
				t.Errorf("URLFromParts(%d, %q, %d) refused", c.t, c.tail, c.n)
			}
			continue
		}
		if u, ok := URLFromParts(c.t, c.tail, c.n); ok {
			t.Errorf("URLFromParts(%d, %q, %d) = %q, accepted", c.t, c.tail, c.n, u.String())
		}
	}
}

// TestURLTemplates checks the table: every template is https (URLOf's
// shortcut), and none is shadowed by an earlier one.
func TestURLTemplates(t *testing.T) {
	if urlTemplates[0] != (URLTemplate{}) {
		t.Fatal("template 0 is the whole address")
	}
	for i := 1; i < len(urlTemplates); i++ {
		p := urlTemplates[i]
		if !strings.HasPrefix(p.Prefix, "https://") {
			t.Errorf("template %d: %q is not https", i, p.Prefix)
		}
		ex := p.Prefix + "12345" + p.Suffix
		if u := URLOf(ex); u.Template() != i {
			t.Errorf("template %d: %q splits as template %d", i, ex, u.Template())
		}
	}
}

func FuzzURL(f *testing.F) {
	for _, s := range []string{
		"", "https://", "https://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=131502&CodigoTipoInstituicao=2",
		"https://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=0&CodigoTipoInstituicao=2",
		"https://demo.pregao.invalid/cvm/vlmo//CONSOLIDATED", "https://demo.pregao.invalid/cvm/vlmo/CONSOLIDATED",
		"https://fnet.bmfbovespa.com.br/fnet/publico/exibirDocumento?id=99999999999999999",
		"https://demo.pregao.invalid/b3/proventos/ITAG3/C000383-00107-0", "\x00\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u := URLOf(s)
		if got := u.String(); got != s {
			t.Fatalf("URLOf(%q).String() = %q", s, got)
		}
		if got := string(u.AppendTo([]byte("x"))); got != "x"+s {
			t.Fatalf("AppendTo = %q", got)
		}
		if u.Len() != len(s) {
			t.Fatalf("Len = %d, want %d", u.Len(), len(s))
		}
		tail, n := u.Part()
		if v, ok := URLFromParts(u.Template(), tail, n); !ok || v != u {
			t.Fatalf("URLFromParts(%d, %q, %d) = %v, %v", u.Template(), tail, n, v, ok)
		}
		if v, ok := UnpackURL(u.Packed()); !ok || v != u {
			t.Fatalf("UnpackURL(%q) = %v, %v", u.Packed(), v, ok)
		}
		// Any packed string: accepted only as URLOf's of its address.
		if v, ok := UnpackURL(s); ok && (URLOf(v.String()) != v || v.Packed() != s) {
			t.Fatalf("UnpackURL(%q) = %q, not its split", s, v.String())
		}
		// Any parts: accepted only as a split of their own address.
		for tp := 0; tp < len(urlTemplates); tp++ {
			if v, ok := URLFromParts(tp, s, 0); ok && URLOf(v.String()) != v {
				t.Fatalf("URLFromParts(%d, %q) = %q, not its split", tp, s, v.String())
			}
		}
	})
}

func BenchmarkURLAppend(b *testing.B) {
	u := URLOf("https://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=131502&CodigoTipoInstituicao=2")
	buf := make([]byte, 0, 256)
	for b.Loop() {
		buf = u.AppendTo(buf[:0])
	}
}

// TestURLRivals checks URLFromParts's shortcut: a template without
// rivals takes every address of its form (no earlier template does).
func TestURLRivals(t *testing.T) {
	for i := 1; i < len(urlTemplates); i++ {
		if urlRivals[i] {
			continue
		}
		p := urlTemplates[i]
		for _, part := range []string{"", "0", "7", "x", "ENET/frmDownloadDocumento.aspx?numProtocolo=1", "cvm/ipe/1", "/?a=1&b=2"} {
			s := p.Prefix + part + p.Suffix
			if j := URLOf(s).Template(); j != 0 && j < i {
				t.Errorf("template %d has no rivals, but %q splits as template %d", i, s, j)
			}
		}
	}
	if !urlRivals[3] || !urlRivals[20] || urlRivals[1] || urlRivals[14] {
		t.Errorf("rivals %v", urlRivals)
	}
}

// A URL is one string header, as the address was.
func TestURLSize(t *testing.T) {
	if n := unsafe.Sizeof(URL{}); n != 16 {
		t.Errorf("URL is %d bytes", n)
	}
	if len(urlTemplates) > urlPackBelow {
		t.Errorf("%d templates, at most %d", len(urlTemplates), urlPackBelow)
	}
}

func BenchmarkUnpackURL(b *testing.B) {
	for _, s := range []string{
		"https://demo.pregao.invalid/b3/proventos/ITAG3/C000383-00107-0",
		"https://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=131502",
		"https://example.invalid/v?id=1",
	} {
		u := URLOf(s)
		b.Run(strconv.Itoa(u.Template()), func(b *testing.B) {
			for b.Loop() {
				UnpackURL(u.Packed())
			}
		})
	}
}

func BenchmarkURLFromParts(b *testing.B) {
	for _, s := range []string{
		"https://demo.pregao.invalid/b3/proventos/ITAG3/C000383-00107-0",
		"https://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=131502",
	} {
		u := URLOf(s)
		tail, n := u.Part()
		b.Run(strconv.Itoa(u.Template()), func(b *testing.B) {
			for b.Loop() {
				URLFromParts(u.Template(), tail, n)
			}
		})
	}
}
