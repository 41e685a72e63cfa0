// Package fetchtest is a local stand-in for the official hosts that pregao
// fetch downloads from, for tests and measurements: one http.Handler
// serves the official file layout (InstDados/SerHist/..., dados/...,
// with ETag, Range and conditional requests) and B3's listed-data
// services at their paths, with the base64 JSON parameter in the last
// path segment, answered from sample answers and paginated by the
// parameter's pageNumber and pageSize as B3 does (page.totalRecords,
// page.totalPages). Faults can be injected per path or answer key.
//
// It imports the standard library and snapshot/ingest/fetch only (and
// datafile for the samples); nothing outside tests should import it.
package fetchtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pregao/pregao/snapshot/ingest/fetch"
)

// Server holds the files and answers it serves. Fill its maps before
// serving; the fault maps may be changed under Mu while serving.
type Server struct {
	// Files are official files by URL path ("/InstDados/SerHist/...").
	Files map[string][]byte
	// Portfolios are whole GetPortfolioDay answers by index symbol;
	// Supplements GetListedSupplementCompany answers by issuingCompany;
	// Details GetDetail answers by codeCVM; Cash whole
	// GetListedCashDividends answers by tradingName; FundLists the CSV
	// text of GetListFundDownload by typeFund.
	Portfolios  map[string][]byte
	Supplements map[string][]byte
	Details     map[string][]byte
	Cash        map[string][]byte
	FundLists   map[int][]byte
	// Instruments are B3's listed-instruments files by day
	// (YYYY-MM-DD), served in two steps as B3's file service does:
	// api/download/requestname?fileName=InstrumentsConsolidatedFile&date=DAY
	// answers {"token": ...}, api/download/?token=TOKEN the file. A day
	// without a file answers a token whose download is empty (as for a
	// day B3 has not published); fault keys "requestname/DAY" and
	// "download/DAY".
	Instruments map[string][]byte
	// Bulletin are the daily bulletin's exports of the instruments table
	// by day, answered to POST bdi/table/export/csv with {"Name":
	// "InstrumentsEquities", "Date": DAY, ...}; a day without one
	// answers the export's text and header, no row; NoBulletin makes
	// every such request a 404 (a bulletin without the table). Fault key
	// "bulletin/DAY".
	Bulletin   map[string][]byte
	NoBulletin bool
	// Synthetic answers for every issuer code that Supplements lacks a
	// supplement without events or share counts (codeCVM "9" and the
	// code's four bytes in decimal, trading name "CODE SA"), a detail
	// without a CNPJ and no cash dividend: a stand-in for B3's answers
	// on every company of a day, for scale tests. Otherwise such codes
	// are unknown (an empty body).
	Synthetic bool
	// SGS are whole SGS answers by series code (JSON arrays of
	// {"data","valor"} as the Banco Central writes them), served at
	// /dados/serie/bcdata.sgs.CODE/dados?formato=json&dataInicial=
	// dd/mm/yyyy&dataFinal=dd/mm/yyyy cut to the window, as the SGS
	// does: a window of a series in SGSDaily longer than 10 years
	// answers 406 with the Banco Central's message, a window without
	// values 404, an unknown series 404. Fault key: the URL path.
	SGS      map[int][]byte
	SGSDaily map[int]bool
	// Rejected makes the next n requests of a URL path answer the Banco
	// Central's firewall page ("Requisição inválida!", HTML, status 200).
	Rejected map[string]int

	Mu sync.Mutex
	// Fail makes the next n requests of a key (a file's URL path, or
	// "SERVICE/VALUE" of a service answer: "GetPortfolioDay/IBOV",
	// "GetListedCashDividends/AMBEVSA") answer 503.
	Fail map[string]int
	// Gone keys answer 404.
	Gone map[string]bool
	// Requests counts the requests by key.
	Requests map[string]int
	// Bytes counts the bytes of the answers' bodies.
	Bytes int64
}

// New returns an empty Server.
func New() *Server {
	return &Server{Files: map[string][]byte{}, Portfolios: map[string][]byte{}, Supplements: map[string][]byte{},
		Details: map[string][]byte{}, Cash: map[string][]byte{}, FundLists: map[int][]byte{}, Instruments: map[string][]byte{}, Bulletin: map[string][]byte{},
		SGS: map[int][]byte{}, SGSDaily: map[int]bool{}, Rejected: map[string]int{},
		Fail: map[string]int{}, Gone: map[string]bool{}, Requests: map[string]int{}}
}

// Count returns the number of requests of key so far.
func (s *Server) Count(key string) int {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.Requests[key]
}

// Total returns the number of requests so far.
func (s *Server) Total() int {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	n := 0
	for _, v := range s.Requests {
		n += v
	}
	return n
}

// fault records a request of key and tells whether it must fail.
func (s *Server) fault(key string) (code int) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.Requests[key]++
	if s.Fail[key] > 0 {
		s.Fail[key]--
		return http.StatusServiceUnavailable
	}
	if s.Gone[key] {
		return http.StatusNotFound
	}
	return 0
}

func (s *Server) write(w http.ResponseWriter, ctype string, b []byte) {
	s.Mu.Lock()
	s.Bytes += int64(len(b))
	s.Mu.Unlock()
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

var services = []string{fetch.SvcPortfolioDay, fetch.SvcSupplement, fetch.SvcDetail, fetch.SvcCashDividends, fetch.SvcFundList}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw := r.URL.EscapedPath()
	switch raw {
	case "/api/download/requestname":
		q := r.URL.Query()
		day := q.Get("date")
		if code := s.fault("requestname/" + day); code != 0 {
			http.Error(w, http.StatusText(code), code)
			return
		}
		if q.Get("fileName") != "InstrumentsConsolidatedFile" {
			http.NotFound(w, r)
			return
		}
		tok := base64.URLEncoding.EncodeToString([]byte("instruments/" + day))
		b, _ := json.Marshal(map[string]any{"redirectUrl": "~/download?token=" + tok, "token": tok,
			"file": map[string]string{"name": "InstrumentsConsolidatedFile_" + strings.ReplaceAll(day, "-", ""), "extension": ".csv"}})
		s.write(w, "application/json", b)
		return
	case "/bdi/table/export/csv":
		var q struct{ Name, Date, FinalDate string }
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&q) != nil || q.Name != "InstrumentsEquities" || q.Date != q.FinalDate {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if code := s.fault("bulletin/" + q.Date); code != 0 {
			http.Error(w, http.StatusText(code), code)
			return
		}
		if s.NoBulletin {
			http.NotFound(w, r)
			return
		}
		b, ok := s.Bulletin[q.Date]
		if !ok {
			b = []byte("Cadastro de instrumentos listados\r\n\r\nInstrumento financeiro;Ativo;Segmento;Mercado;Categoria;Código ISIN;Nome da instituição\r\n")
		}
		s.write(w, "text/csv", b)
		return
	case "/api/download/":
		t, err := base64.URLEncoding.DecodeString(r.URL.Query().Get("token"))
		day, ok := strings.CutPrefix(string(t), "instruments/")
		if err != nil || !ok {
			http.Error(w, "bad token", http.StatusBadRequest)
			return
		}
		if code := s.fault("download/" + day); code != 0 {
			http.Error(w, http.StatusText(code), code)
			return
		}
		s.write(w, "text/csv", s.Instruments[day])
		return
	}
	if strings.HasPrefix(raw, "/dados/serie/bcdata.sgs.") {
		s.sgs(w, r)
		return
	}
	for _, svc := range services {
		if rest, ok := strings.CutPrefix(raw, "/"+svc+"/"); ok {
			s.service(w, svc, rest)
			return
		}
	}
	if code := s.fault(r.URL.Path); code != 0 {
		http.Error(w, http.StatusText(code), code)
		return
	}
	b, ok := s.Files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	sum := sha256.Sum256(b)
	w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
	s.Mu.Lock()
	s.Bytes += int64(len(b))
	s.Mu.Unlock()
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
}

// service answers one service call; param is the escaped last segment.
func (s *Server) service(w http.ResponseWriter, svc, param string) {
	name := svc[strings.LastIndexByte(svc, '/')+1:]
	p, err := fetch.DecodeParam(param)
	if err != nil {
		s.fault(name + "/?")
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	str := func(k string) string {
		switch v := p[k].(type) {
		case string:
			return v
		case json.Number:
			return v.String()
		}
		return ""
	}
	var key string
	switch svc {
	case fetch.SvcPortfolioDay:
		key = str("index")
	case fetch.SvcSupplement:
		key = str("issuingCompany")
	case fetch.SvcDetail:
		key = str("codeCVM")
	case fetch.SvcCashDividends:
		key = str("tradingName")
	case fetch.SvcFundList:
		key = str("typeFund")
	}
	if key == "" {
		s.fault(name + "/?")
		http.Error(w, "missing parameter", http.StatusBadRequest)
		return
	}
	if code := s.fault(name + "/" + key); code != 0 {
		http.Error(w, http.StatusText(code), code)
		return
	}
	switch svc {
	case fetch.SvcPortfolioDay, fetch.SvcCashDividends:
		whole := s.Portfolios[key]
		if svc == fetch.SvcCashDividends {
			whole = s.Cash[key]
		}
		n, _ := strconv.Atoi(str("pageNumber"))
		size, _ := strconv.Atoi(str("pageSize"))
		b, err := Page(whole, n, size)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.write(w, "application/json; charset=utf-8", b)
	case fetch.SvcSupplement:
		b, ok := s.Supplements[key]
		if !ok && s.Synthetic && fetch.ValidCompany(key) {
			b, _ = json.Marshal([]map[string]any{{"code": key, "codeCVM": syntheticCVM(key), "tradingName": key + " SA",
				"numberCommonShares": "", "numberPreferredShares": "", "cashDividends": []any{}, "stockDividends": []any{}, "subscriptions": []any{}}})
		}
		s.write(w, "text/plain; charset=utf-8", b) // unknown: 200, empty body
	case fetch.SvcDetail:
		b, ok := s.Details[key]
		if !ok && s.Synthetic && strings.HasPrefix(key, "9") && len(key) == 13 {
			b, _ = json.Marshal(map[string]any{"codeCVM": key, "cnpj": "", "status": "A", "otherCodes": []any{}})
		}
		s.write(w, "text/plain; charset=utf-8", b)
	case fetch.SvcFundList:
		n, _ := strconv.Atoi(key)
		csv, ok := s.FundLists[n]
		if !ok {
			http.NotFound(w, nil)
			return
		}
		b, _ := json.Marshal(base64.StdEncoding.EncodeToString(csv))
		s.write(w, "text/plain; charset=utf-8", b)
	}
}

// Page returns page n (from 1) of size results of a whole paginated
// answer, as B3 answers it: the answer's other fields, results n, and
// page{pageNumber, pageSize, totalRecords, totalPages}. A nil whole is an
// unknown key: no result, totalPages 0. Bad page parameters are an error.
func Page(whole []byte, n, size int) ([]byte, error) {
	if n < 1 || size < 1 || size > 9999 {
		return nil, fmt.Errorf("bad pageNumber %d or pageSize %d", n, size)
	}
	fields := map[string]json.RawMessage{}
	var results []json.RawMessage
	if whole != nil {
		if err := json.Unmarshal(whole, &fields); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(fields["results"], &results); err != nil {
			return nil, err
		}
	}
	total := len(results)
	lo, hi := min((n-1)*size, total), min(n*size, total)
	page := results[lo:hi]
	if page == nil {
		page = []json.RawMessage{}
	}
	fields["results"], _ = json.Marshal(page)
	fields["page"], _ = json.Marshal(map[string]int{"pageNumber": n, "pageSize": size, "totalRecords": total, "totalPages": (total + size - 1) / size})
	return json.Marshal(fields)
}

// syntheticCVM is the CVM code of a synthetic company: "9" and the code's
// four bytes as three-digit numbers.
func syntheticCVM(code string) string {
	out := "9"
	for i := 0; i < 4; i++ {
		out += fmt.Sprintf("%03d", code[i])
	}
	return out
}

// rejectedPage is the shape of the Banco Central's firewall page.
const rejectedPage = `<?xml version="1.0" encoding="pt-br"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" lang="pt-br" xml:lang="pt-br"><head><title>Requisição inválida!</title></head>
<body>Requisi&ccedil;&atilde;o Inv&aacute;lida! A sua requisição foi rejeitada.</body></html>
`

// sgs answers one SGS request.
func (s *Server) sgs(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if code := s.fault(path); code != 0 {
		http.Error(w, http.StatusText(code), code)
		return
	}
	s.Mu.Lock()
	reject := s.Rejected[path] > 0
	if reject {
		s.Rejected[path]--
	}
	s.Mu.Unlock()
	if reject {
		s.write(w, "text/html", []byte(rejectedPage))
		return
	}
	rest := strings.TrimPrefix(path, "/dados/serie/bcdata.sgs.")
	num, ok := strings.CutSuffix(rest, "/dados")
	code, err := strconv.Atoi(num)
	q := r.URL.Query()
	if !ok || err != nil || q.Get("formato") != "json" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	whole, known := s.SGS[code]
	from, err1 := time.Parse("02/01/2006", q.Get("dataInicial"))
	to, err2 := time.Parse("02/01/2006", q.Get("dataFinal"))
	if err1 != nil || err2 != nil || to.Before(from) {
		http.Error(w, `{"erro":{"statusCode":400,"detail":"datas inválidas"}}`, http.StatusBadRequest)
		return
	}
	if s.SGSDaily[code] && to.After(from.AddDate(10, 0, 0)) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotAcceptable)
		w.Write([]byte(`{"error":"O sistema aceita uma janela de consulta de, no máximo, 10 anos em séries de periodicidade diária"}`))
		return
	}
	var recs []struct {
		Data  string `json:"data"`
		Valor string `json:"valor"`
	}
	if known {
		if err := json.Unmarshal(whole, &recs); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	var b bytes.Buffer
	b.WriteByte('[')
	n := 0
	for _, rec := range recs {
		d, err := time.Parse("02/01/2006", rec.Data)
		if err != nil || d.Before(from) || d.After(to) {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"data":%q,"valor":%q}`, rec.Data, rec.Valor)
		n++
	}
	b.WriteByte(']')
	if n == 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":"Value(s) not found"}`))
		return
	}
	s.write(w, "application/json", b.Bytes())
}
