package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

// testURLs are addresses of every template and none, as the sources
// of the tests' universes cite them.
var testURLs = []string{
	"https://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=131502&CodigoTipoInstituicao=2",
	"https://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=131502",
	"https://www.rad.cvm.gov.br/ENET/frmExibirArquivoIPEExterno.aspx?NumeroProtocoloEntrega=1203344",
	"https://www.rad.cvm.gov.br/ENET/frmDownloadDocumento.aspx?Tela=ext&numSequencia=2&numVersao=2&numProtocolo=129002&descTipo=IPE&CodigoInstituicao=1",
	"https://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=0131502",
	"https://fnet.bmfbovespa.com.br/fnet/publico/exibirDocumento?id=598812",
	"https://sistemaswebb3-listados.b3.com.br/listedCompaniesPage/?language=pt-br",
	"https://dados.cvm.gov.br/dataset/fii-doc-inf_mensal",
	"https://demo.pregao.invalid/cvm/enet/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=6100001&CodigoTipoInstituicao=2",
	"https://demo.pregao.invalid/cvm/fnet/informe-mensal/48429920000156/2016-02",
	"https://demo.pregao.invalid/cvm/vlmo/06239939000190/2026-10/CONSOLIDATED",
	"https://demo.pregao.invalid/cvm/ipe/06239939000190/DOC000060-0027",
	"https://demo.pregao.invalid/b3/proventos/ITAG3/C000383-00107-0",
	"https://example.invalid/v?id=1",
	"",
	"ação\x00\"",
}

// urlUniverse is handUniverse with its sources citing testURLs.
func urlUniverse() *engine.Universe {
	u := handUniverse()
	k := 0
	set := func(s *engine.Source) {
		s.VisualizationURL = engine.URLOf(testURLs[k%len(testURLs)])
		s.DownloadURL = engine.URLOf(testURLs[(k+5)%len(testURLs)])
		k++
	}
	for i := range u.Reports {
		l := append([]engine.Source(nil), u.Reports[i].Sources.All()...)
		for j := range l {
			set(&l[j])
		}
		if l != nil {
			u.Reports[i].Sources = engine.SourcesOf(l)
		}
	}
	for i := range u.CashActions {
		if src := u.CashActions[i].Source; src != nil { // shared: a copy each
			c := *src
			set(&c)
			u.CashActions[i].Source = &c
		}
	}
	for i := range u.Documents {
		set(&u.Documents[i].Source)
	}
	for i := range u.FundReports {
		for j := range u.FundReports[i].Sources {
			set(&u.FundReports[i].Sources[j])
		}
	}
	for i := range u.InsiderReports {
		for j := range u.InsiderReports[i].Sources {
			set(&u.InsiderReports[i].Sources[j])
		}
	}
	for _, l := range u.Derived.FundSources {
		for j := range l {
			set(&l[j])
		}
	}
	return u
}

// Sources' addresses read back from formats 5 and 6 as written, and
// compare (==) as the addresses made by engine.URLOf.
func TestSourceURLsRoundTrip(t *testing.T) {
	u := urlUniverse()
	for _, v := range []uint16{FormatVersion, columnsVersion} {
		b := mustWrite(t, u, WriteOptions{Version: v, Level: 1})
		got, _ := mustDecode(t, b)
		for _, p := range []struct {
			name     string
			want, is any
		}{
			{"report sources", reportSources(u), reportSources(got)},
			{"cash actions", u.CashActions, got.CashActions},
			{"documents", u.Documents, got.Documents},
			{"fund reports", u.FundReports, got.FundReports},
			{"insider reports", u.InsiderReports, got.InsiderReports},
			{"fund sources", fundPoints(u), fundPoints(got)},
		} {
			if d := diff(p.want, p.is); d != "" {
				t.Fatalf("format %d: %s read back differ at %s", v, p.name, d)
			}
		}
		if again := mustWrite(t, got, WriteOptions{Version: v, Level: 1}); !bytes.Equal(again, b) {
			t.Fatalf("format %d: the decoded universe writes other bytes", v)
		}
	}
}

func reportSources(u *engine.Universe) (out [][]engine.Source) {
	for i := range u.Reports {
		out = append(out, u.Reports[i].Sources.All())
	}
	return out
}

// Format 6 writes an address as its template number and part: the
// part's string table holds no template's text, and every address
// reads back.
func TestSourceURLsEncoding(t *testing.T) {
	e := newPenc(0)
	e.version = columnsVersion
	for _, s := range testURLs {
		encSource(e, &engine.Source{VisualizationURL: engine.URLOf(s), DownloadURL: engine.URLOf(s)})
	}
	tpl := engine.URLTemplates()
	for _, s := range e.list {
		for i := 1; i < len(tpl); i++ {
			if p := tpl[i].Prefix; strings.Contains(s, p) && s != "https://example.invalid/v?id=1" {
				t.Errorf("string table holds %q (template %d's prefix)", s, i)
			}
		}
	}
	raw := e.finish()
	d := &pdec{b: raw, ls: &loadState{version: columnsVersion}}
	d.strtab()
	d.i += 0
	for _, s := range testURLs {
		var src engine.Source
		decSource(d, &src)
		if d.err != nil {
			t.Fatal(d.err)
		}
		if src.VisualizationURL != engine.URLOf(s) || src.DownloadURL.String() != s {
			t.Fatalf("%q read back as %q", s, src.VisualizationURL.String())
		}
	}
}

// A source address that is not the packed form engine.URLOf makes (a
// template beyond the table, a number not in the shortest uvarint, a
// whole address a template takes, a part of a shorter template) is an
// error, not a URL that compares apart from its address's.
func TestSourceURLsRefused(t *testing.T) {
	for _, c := range []struct {
		name, packed string
	}{
		{"template beyond", string(rune(len(engine.URLTemplates())))},
		{"whole address of a template", "https://fnet.bmfbovespa.com.br/fnet/publico/exibirDocumento?id=1"},
		{"string part of a shorter template", "\x0bpublico/exibirDocumento?id=1"},
		{"number not shortest", "\x09\x81\x00"},
		{"number too large", "\x09\xff\xff\xff\xff\xff\xff\xff\xff\x01"},
		{"number cut", "\x09\x81"},
		{"needless escape", "\x00https://example.invalid/"},
	} {
		e := newPenc(0)
		e.version = columnsVersion
		e.str(c.packed)
		d := &pdec{b: e.finish(), ls: &loadState{version: columnsVersion}}
		d.strtab()
		d.url()
		if d.err == nil || !strings.Contains(d.err.Error(), "not a packed address") {
			t.Errorf("%s: err %v", c.name, d.err)
		}
	}
}

// A format 6 file written before the layout revisions (none after the
// column area's size in its header) is refused with ErrVersion.
func TestColumnsLayoutRefused(t *testing.T) {
	b := mustWrite(t, urlUniverse(), WriteOptions{Version: columnsVersion, Level: 1})
	hl, err := headerLen(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		body func([]byte) []byte
		want string
	}{
		{"none", func(body []byte) []byte { return body[:len(body)-1] }, fmt.Sprintf("layout revision 0, this build reads %d to %d", minLayout, columnsLayout)},
		{"earlier", func(body []byte) []byte { return append(body[:len(body)-1], minLayout-1) }, fmt.Sprintf("layout revision %d, this build reads %d to %d", minLayout-1, minLayout, columnsLayout)},
		{"later", func(body []byte) []byte { return append(body[:len(body)-1], columnsLayout+1) }, fmt.Sprintf("layout revision %d, this build reads %d to %d", columnsLayout+1, minLayout, columnsLayout)},
	} {
		body := c.body(bytes.Clone(b[prefixLen : hl-8]))
		h := assembleHeader(columnsVersion, body)
		// The sections follow the header: their offsets are relative
		// to its end, so the file reads on from the new header.
		f := append(h, b[hl:]...)
		_, _, err := Decode(f)
		if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want ErrVersion %q", c.name, err, c.want)
		}
	}
}

// FuzzSourceURL reads a source's address of format 6 from an arbitrary
// string table entry: refused or read, never a panic; what is read is
// URLOf's split of its address and writes back to the same string.
func FuzzSourceURL(f *testing.F) {
	for _, s := range testURLs {
		f.Add(engine.URLOf(s).Packed())
	}
	f.Fuzz(func(t *testing.T, p string) {
		d := &pdec{b: []byte{0}, strs: []string{p}, ls: &loadState{version: columnsVersion}}
		u := d.url()
		if d.err != nil {
			return
		}
		if engine.URLOf(u.String()) != u {
			t.Fatalf("read %q, not URLOf's split", u.String())
		}
		e := newPenc(0)
		e.version = columnsVersion
		e.url(u)
		if len(e.list) != 1 || e.list[0] != p {
			t.Fatalf("%q writes back as %q", p, e.list)
		}
	})
}
