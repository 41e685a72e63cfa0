package httpapi

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// sourceURLs are addresses of templates (numbers and strings) and
// whole ones, some needing JSON escapes.
var sourceURLs = []string{
	"https://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=131502&CodigoTipoInstituicao=2",
	"https://demo.pregao.invalid/b3/proventos/ITAG3/C000383-00107-0",
	"https://demo.pregao.invalid/cvm/ipe/1/\"x\"\\\u2028",
	"https://example.invalid/v?id=1&a=<b>",
	"\x01ação\xff",
	"",
}

// A source answers its addresses as encoding/json (HTML escaping off)
// spells the strings, whatever their template.
func TestAppendSourceURLs(t *testing.T) {
	at := time.Date(2024, 3, 28, 13, 0, 0, 0, time.UTC)
	for _, v := range sourceURLs {
		for _, d := range sourceURLs {
			s := engine.Source{VisualizationURL: engine.URLOf(v), DownloadURL: engine.URLOf(d), PublishedAt: at, RetrievedAt: at, Name: "n"}
			got := string(appendSource(nil, &s))
			var back struct {
				V string  `json:"visualization_url"`
				D *string `json:"download_url"`
			}
			if err := json.Unmarshal([]byte(got), &back); err != nil {
				t.Fatalf("%q: %v", got, err)
			}
			want := string(appendString(nil, v))
			if got[:len(`{"visualization_url":`)+len(want)] != `{"visualization_url":`+want {
				t.Errorf("%q answers %s, want %s first", v, got, want)
			}
			if d == "" && back.D != nil || d != "" && string(appendString(nil, d)) != string(appendURL(nil, engine.URLOf(d))) {
				t.Errorf("%q: download_url answers %s", d, got)
			}
		}
	}
}

// BenchmarkAppendSources writes 12 sources (a filing's reports) whose
// address is a template's (joined per answer) or whole (copied as
// before).
func BenchmarkAppendSources(b *testing.B) {
	at := time.Date(2024, 3, 28, 13, 0, 0, 0, time.UTC)
	for _, c := range []struct{ name, url string }{
		{"template-number", sourceURLs[0]},
		{"template-string", sourceURLs[1]},
		{"whole", "https://example.invalid/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=131502&CodigoTipoInstituicao=2"},
	} {
		ss := make([]engine.Source, 12)
		for i := range ss {
			ss[i] = engine.Source{VisualizationURL: engine.URLOf(c.url), PublishedAt: at, RetrievedAt: at, Name: "DFP 31/12/2023 - versão 1"}
		}
		buf := make([]byte, 0, 8192)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buf = appendSources(buf[:0], ss)
			}
		})
	}
}
