package engine

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// URL is the address of an official document (Source.VisualizationURL,
// Source.DownloadURL), held as a template number and its variable part:
// the regulators' and the exchange's addresses follow a few patterns (a
// CVM RAD page with a document number, a B3 page with a ticker and an
// event), so that a snapshot's millions of sources hold the numbers and
// short parts instead of whole strings (see urlTemplates). An address
// that matches no template is held whole. URLOf splits, String joins:
// URLOf(s).String() == s for every string s, and a URL is comparable
// (==) as its string is, each string having one split. A URL is one
// string header, as the address was.
//
// The zero URL is "". JSON and text spell a URL as its string.
type URL struct {
	// p is the packed form (Packed): "" for "", a template's number
	// (a byte below urlPackBelow) then its part (a Number template's
	// as a uvarint), or a whole address, after a 0 byte when it starts
	// with a byte below urlPackBelow.
	p string
}

// urlPackBelow bounds the template numbers (urlTemplates has at most
// this many entries): a packed URL starting with a byte at or above it
// is a whole address.
const urlPackBelow = 0x20

// URLTemplate is an address made of a fixed Prefix, a variable part and
// a fixed Suffix. The variable part of a Number template is a decimal
// number without leading zeros below 2^56 ("0" itself included); of
// another template, any string.
type URLTemplate struct {
	Prefix, Suffix string
	Number         bool
}

// MaxURLNumber is the largest variable number a URL holds.
const MaxURLNumber = 1<<56 - 1

// urlTemplates are the templates a URL is split by, numbered from 1 (0 is
// the whole address). Snapshot files store these numbers: entries are
// only ever appended (a new one changes the files' layout), and URLOf
// tries them in order, so a Number template comes before a string one
// of the same prefix and a longer prefix before its shorter forms.
var urlTemplates = [...]URLTemplate{
	1:  {Prefix: "https://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=", Suffix: "&CodigoTipoInstituicao=2", Number: true},
	2:  {Prefix: "https://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=", Suffix: "&CodigoTipoInstituicao=1", Number: true},
	3:  {Prefix: "https://www.rad.cvm.gov.br/ENET/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=", Number: true},
	4:  {Prefix: "https://www.rad.cvm.gov.br/ENET/frmExibirArquivoIPEExterno.aspx?NumeroProtocoloEntrega=", Number: true},
	5:  {Prefix: "https://www.rad.cvm.gov.br/ENET/frmDownloadDocumento.aspx?numProtocolo=", Number: true},
	6:  {Prefix: "https://www.rad.cvm.gov.br/ENET/frmDownloadDocumento.aspx?Tela=ext&numProtocolo=", Number: true},
	7:  {Prefix: "https://www.rad.cvm.gov.br/ENET/frmExibirArquivoFCAView.aspx?NumeroSequencialDocumento=", Number: true},
	8:  {Prefix: "https://www.rad.cvm.gov.br/ENET/"},
	9:  {Prefix: "https://fnet.bmfbovespa.com.br/fnet/publico/exibirDocumento?id=", Number: true},
	10: {Prefix: "https://fnet.bmfbovespa.com.br/fnet/publico/downloadDocumento?id=", Number: true},
	11: {Prefix: "https://fnet.bmfbovespa.com.br/fnet/"},
	12: {Prefix: "https://sistemaswebb3-listados.b3.com.br/listedCompaniesPage/"},
	13: {Prefix: "https://dados.cvm.gov.br/"},
	// The demo's addresses (package demo, URLBase).
	14: {Prefix: "https://demo.pregao.invalid/cvm/enet/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=", Suffix: "&CodigoTipoInstituicao=2", Number: true},
	15: {Prefix: "https://demo.pregao.invalid/cvm/fnet/informe-mensal/"},
	16: {Prefix: "https://demo.pregao.invalid/cvm/vlmo/", Suffix: "/CONSOLIDATED"},
	17: {Prefix: "https://demo.pregao.invalid/cvm/vlmo/", Suffix: "/INDIVIDUAL"},
	18: {Prefix: "https://demo.pregao.invalid/cvm/ipe/"},
	19: {Prefix: "https://demo.pregao.invalid/b3/proventos/"},
	20: {Prefix: "https://demo.pregao.invalid/"},
}

// URLTemplates returns a copy of the templates a URL is split by, by
// number (entry 0, the whole address, is empty).
func URLTemplates() []URLTemplate { return slices.Clone(urlTemplates[:]) }

// urlRivals tells the templates that an earlier one might take an
// address of (their prefixes are one the other's prefix): only their
// splits need the join-and-split check in UnpackURL.
var urlRivals = func() (r [len(urlTemplates)]bool) {
	for t := 1; t < len(urlTemplates); t++ {
		for j := 1; j < t; j++ {
			p, q := urlTemplates[t].Prefix, urlTemplates[j].Prefix
			if strings.HasPrefix(p, q) || strings.HasPrefix(q, p) {
				r[t] = true
			}
		}
	}
	return r
}()

// URLOf returns s as a URL: split by the first template it matches, else
// whole.
func URLOf(s string) URL {
	t, n, lo, hi := urlSplit(s)
	switch {
	case t == 0 && (s == "" || s[0] >= urlPackBelow):
		return URL{s}
	case t == 0:
		return URL{"\x00" + s}
	case urlTemplates[t].Number:
		var b [1 + binary.MaxVarintLen64]byte
		b[0] = byte(t)
		return URL{string(binary.AppendUvarint(b[:1], n))}
	}
	return URL{string(byte(t)) + s[lo:hi]}
}

// urlSplit splits s by the first template it matches: its number t
// (0: none), and the variable part, the number n of a Number template or
// the string s[lo:hi] (all of s for t == 0, lo == hi for a number).
func urlSplit(s string) (t int, n uint64, lo, hi int) {
	if len(s) < 8 || s[:8] != "https://" { // every template's scheme
		return 0, 0, 0, len(s)
	}
	for t := 1; t < len(urlTemplates); t++ {
		p := &urlTemplates[t]
		if len(s) < len(p.Prefix)+len(p.Suffix) || !strings.HasPrefix(s, p.Prefix) || !strings.HasSuffix(s, p.Suffix) {
			continue
		}
		lo, hi := len(p.Prefix), len(s)-len(p.Suffix)
		if !p.Number {
			return t, 0, lo, hi
		}
		if n, ok := urlNumber(s[lo:hi]); ok {
			return t, n, lo, lo
		}
	}
	return 0, 0, 0, len(s)
}

// urlNumber parses v as a Number template's part: decimal digits, no
// leading zero unless v is "0", at most MaxURLNumber, so that the
// number spells v back.
func urlNumber(v string) (uint64, bool) {
	if v == "" || len(v) > 17 || v[0] == '0' && len(v) > 1 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if n > MaxURLNumber {
		return 0, false
	}
	return n, true
}

// URLFromParts returns the URL of template t with the variable part tail
// (a string template, or t == 0: the whole address) or n (a Number
// template), as Template and Part give them; ok is false when they are
// not the split URLOf makes of their address.
func URLFromParts(t int, tail string, n uint64) (URL, bool) {
	if t < 0 || t >= len(urlTemplates) || n > MaxURLNumber {
		return URL{}, false
	}
	num := t != 0 && urlTemplates[t].Number
	if num && tail != "" || !num && n != 0 {
		return URL{}, false
	}
	var p string
	switch {
	case t == 0 && (tail == "" || tail[0] >= urlPackBelow):
		p = tail
	case t == 0:
		p = "\x00" + tail
	case num:
		var b [1 + binary.MaxVarintLen64]byte
		b[0] = byte(t)
		p = string(binary.AppendUvarint(b[:1], n))
	default:
		p = string(byte(t)) + tail
	}
	return UnpackURL(p)
}

// Packed returns u's packed form, a string (a snapshot stores it): ""
// for "", or a template number below 32 as a byte then the part (a
// Number template's as a uvarint), or a whole address, after a 0 byte
// when it starts with a byte below 32. UnpackURL reads it.
func (u URL) Packed() string { return u.p }

// UnpackURL returns the URL whose packed form (Packed) is p; ok is false
// when p is not the packed form of a URL that URLOf makes: a template
// beyond URLTemplates, a number beyond MaxURLNumber or not in the
// shortest uvarint, a part that an earlier template would take, a whole
// address that a template would split, or a needless 0 byte. So a URL
// read from a file compares (==) as the same address made by URLOf.
func UnpackURL(p string) (URL, bool) {
	u := URL{p}
	if p == "" {
		return u, true
	}
	t, rest := int(p[0]), p[1:]
	switch {
	case t >= urlPackBelow || t == 0:
		whole := p
		if t == 0 {
			if rest == "" || rest[0] >= urlPackBelow {
				return URL{}, false
			}
			whole = rest
		}
		if len(whole) < 8 || whole[:8] != "https://" {
			return u, true // no template splits it (the common check, cheap)
		}
		if gt, _, _, _ := urlSplit(whole); gt != 0 {
			return URL{}, false
		}
		return u, true
	case t >= len(urlTemplates):
		return URL{}, false
	}
	var n uint64
	if urlTemplates[t].Number {
		v, k := uvarintOf(rest)
		if k != len(rest) || k <= 0 || v > MaxURLNumber || k != uvarintLen(v) {
			return URL{}, false
		}
		n = v
	}
	if !urlRivals[t] {
		return u, true // no earlier template can take its address
	}
	// The split of the address must be u's: no earlier template takes
	// it (a number's spelling is its own by construction).
	var buf [256]byte
	b := buf[:0]
	if u.Len() > len(buf) {
		b = nil
	}
	b = u.AppendTo(b)
	gt, gn, lo, hi := urlSplit(unsafe.String(unsafe.SliceData(b), len(b)))
	if gt != t || gn != n || !urlTemplates[t].Number && hi-lo != len(rest) {
		return URL{}, false
	}
	return u, true
}

// uvarintOf is binary.Uvarint of a string.
func uvarintOf(s string) (uint64, int) {
	var x uint64
	var sh uint
	for i := 0; i < len(s); i++ {
		if i == binary.MaxVarintLen64 {
			return 0, -(i + 1) // overflow
		}
		b := s[i]
		if b < 0x80 {
			if i == binary.MaxVarintLen64-1 && b > 1 {
				return 0, -(i + 1) // overflow
			}
			return x | uint64(b)<<sh, i + 1
		}
		x |= uint64(b&0x7f) << sh
		sh += 7
	}
	return 0, 0
}

// uvarintLen returns the length of v's shortest uvarint.
func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// Template returns u's template number (0: the whole address).
func (u URL) Template() int {
	if u.p == "" || u.p[0] >= urlPackBelow {
		return 0
	}
	return int(u.p[0])
}

// Part returns u's variable part: the string (or, for template 0, the
// whole address), or the number of a Number template.
func (u URL) Part() (tail string, n uint64) {
	switch t := u.Template(); {
	case t == 0 && u.p != "" && u.p[0] == 0:
		return u.p[1:], 0
	case t == 0:
		return u.p, 0
	case urlTemplates[t].Number:
		n, _ = uvarintOf(u.p[1:])
		return "", n
	default:
		return u.p[1:], 0
	}
}

// IsZero reports whether u is "".
func (u URL) IsZero() bool { return u.p == "" }

// String returns the address.
func (u URL) String() string {
	if t := u.Template(); t == 0 {
		whole, _ := u.Part()
		return whole
	}
	return string(u.AppendTo(make([]byte, 0, u.Len())))
}

// Len returns the length of the address in bytes.
func (u URL) Len() int {
	t := u.Template()
	tail, v := u.Part()
	if t == 0 {
		return len(tail)
	}
	p := &urlTemplates[t]
	n := len(p.Prefix) + len(p.Suffix)
	if !p.Number {
		return n + len(tail)
	}
	d := 1
	for v >= 10 {
		v /= 10
		d++
	}
	return n + d
}

// AppendTo appends the address to b.
func (u URL) AppendTo(b []byte) []byte {
	t := u.Template()
	tail, n := u.Part()
	if t == 0 {
		return append(b, tail...)
	}
	p := &urlTemplates[t]
	b = append(b, p.Prefix...)
	if p.Number {
		b = strconv.AppendUint(b, n, 10)
	} else {
		b = append(b, tail...)
	}
	return append(b, p.Suffix...)
}

// MarshalText spells u as its address (JSON: a string, as a string
// field's).
func (u URL) MarshalText() ([]byte, error) { return u.AppendTo(nil), nil }

// UnmarshalText reads an address.
func (u *URL) UnmarshalText(b []byte) error {
	*u = URLOf(string(b))
	return nil
}
