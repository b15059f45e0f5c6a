package pspsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pixgate/pixgate/internal/brcode"
)

// cobv is a charge with a due date (API Pix /cobv).
type cobv struct {
	TxID        string
	Created     time.Time
	Revisao     int
	LocID       int64
	Location    string
	Status      string
	Devedor     cobvDevedor
	Terms       cobvTerms
	Chave       string
	Solicitacao string
	BRCode      string
	Pix         []*pixRec
}

// cobvDevedor is a cobv's debtor, with the address the API allows.
type cobvDevedor struct {
	CPF        string `json:"cpf,omitempty"`
	CNPJ       string `json:"cnpj,omitempty"`
	Nome       string `json:"nome"`
	Logradouro string `json:"logradouro,omitempty"`
	Cidade     string `json:"cidade,omitempty"`
	UF         string `json:"uf,omitempty"`
	CEP        string `json:"cep,omitempty"`
}

type modalidadeJSON struct {
	Modalidade int    `json:"modalidade"`
	ValorPerc  string `json:"valorPerc"`
}

type descontoJSON struct {
	Modalidade       int            `json:"modalidade"`
	DescontoDataFixa []dataFixaJSON `json:"descontoDataFixa,omitempty"`
	ValorPerc        *string        `json:"valorPerc,omitempty"`
}

type dataFixaJSON struct {
	Data      string `json:"data"`
	ValorPerc string `json:"valorPerc"`
}

// cobvRequest is the body of PUT and PATCH /cobv/{txid}; pointers tell an
// absent field from an empty one.
type cobvRequest struct {
	Calendario *struct {
		DataDeVencimento       *string `json:"dataDeVencimento"`
		ValidadeAposVencimento *int    `json:"validadeAposVencimento"`
	} `json:"calendario"`
	Devedor *cobvDevedor `json:"devedor"`
	Valor   *struct {
		Original   *string         `json:"original"`
		Multa      *modalidadeJSON `json:"multa"`
		Juros      *modalidadeJSON `json:"juros"`
		Abatimento *modalidadeJSON `json:"abatimento"`
		Desconto   *descontoJSON   `json:"desconto"`
	} `json:"valor"`
	Chave              *string         `json:"chave"`
	SolicitacaoPagador *string         `json:"solicitacaoPagador"`
	Status             *string         `json:"status"`
	Loc                json.RawMessage `json:"loc"`
}

// cobvRoutes adds the /cobv endpoints to the API.
func (s *Server) cobvRoutes(api *http.ServeMux) {
	api.HandleFunc("PUT /v2/cobv/{txid}", s.putCobV)
	api.HandleFunc("GET /v2/cobv/{txid}", s.getCobV)
	api.HandleFunc("PATCH /v2/cobv/{txid}", s.patchCobV)
}

// checkCobV returns the terms of a PUT /cobv request, or its violations.
// today is the São Paulo date of the request.
func (s *Server) checkCobV(req *cobvRequest, today day) (cobvTerms, cobvDevedor, []violacao) {
	var v []violacao
	add := func(prop, reason, val string) { v = append(v, violacao{Razao: reason, Propriedade: prop, Valor: val}) }
	var t cobvTerms
	switch c := req.Calendario; {
	case c == nil || c.DataDeVencimento == nil:
		add("cobv.calendario.dataDeVencimento", "dataDeVencimento is required", "")
	default:
		d, ok := parseDay(*c.DataDeVencimento)
		switch {
		case !ok:
			add("cobv.calendario.dataDeVencimento", "dataDeVencimento must be a date YYYY-MM-DD", *c.DataDeVencimento)
		case d.Before(today):
			add("cobv.calendario.dataDeVencimento", "dataDeVencimento is before the cobv's creation", *c.DataDeVencimento)
		}
		t.Vencimento = d
	}
	if c := req.Calendario; c != nil && c.ValidadeAposVencimento != nil {
		t.Validade = *c.ValidadeAposVencimento
		if t.Validade < 0 {
			add("cobv.calendario.validadeAposVencimento", "validadeAposVencimento must not be negative", strconv.Itoa(t.Validade))
		}
	} else {
		t.Validade = 30
	}
	var dev cobvDevedor
	if d := req.Devedor; d == nil {
		add("cobv.devedor", "devedor is required", "")
	} else {
		dev = *d
		switch {
		case d.CPF != "" && d.CNPJ != "":
			add("cobv.devedor", "give cpf or cnpj, not both", "")
		case d.CPF != "" && (len(d.CPF) != 11 || !allDigits(d.CPF)):
			add("cobv.devedor.cpf", "cpf must be 11 digits", d.CPF)
		case d.CNPJ != "" && !isCNPJ(d.CNPJ):
			add("cobv.devedor.cnpj", "cnpj must be 14 characters of [0-9A-Z]", d.CNPJ)
		case d.CPF == "" && d.CNPJ == "":
			add("cobv.devedor", "devedor needs cpf or cnpj", "")
		}
		if strings.TrimSpace(d.Nome) == "" || utf8.RuneCountInString(d.Nome) > 200 {
			add("cobv.devedor.nome", "nome is required, at most 200 characters", d.Nome)
		}
		if utf8.RuneCountInString(d.Logradouro) > 200 || utf8.RuneCountInString(d.Cidade) > 200 || len(d.UF) > 2 || len(d.CEP) > 8 {
			add("cobv.devedor", "logradouro and cidade are at most 200 characters, uf 2, cep 8", "")
		}
	}
	switch {
	case req.Valor == nil || req.Valor.Original == nil:
		add("cobv.valor.original", "valor.original is required", "")
	default:
		c, ok := parseValor(*req.Valor.Original)
		if !ok || c <= 0 {
			add("cobv.valor.original", `valor.original must match ^\d{1,10}\.\d{2}$ and be above 0.00`, *req.Valor.Original)
		}
		t.Original = c
		s.checkCobVValor(req, &t, add)
	}
	switch {
	case req.Chave == nil:
		add("cobv.chave", "chave is required", "")
	case *req.Chave != s.opts.PixKey:
		add("cobv.chave", "chave is not a key of this account", *req.Chave)
	}
	if q := req.SolicitacaoPagador; q != nil && utf8.RuneCountInString(*q) > 140 {
		add("cobv.solicitacaoPagador", "solicitacaoPagador is at most 140 characters", "")
	}
	if req.Status != nil {
		add("cobv.status", "status cannot be set when creating a cobv", *req.Status)
	}
	return t, dev, v
}

// checkCobVValor reads multa, juros, abatimento and desconto into t.
func (s *Server) checkCobVValor(req *cobvRequest, t *cobvTerms, add func(prop, reason, val string)) {
	val := req.Valor
	mod := func(prop string, m *modalidadeJSON, lo, hi int) (int, int64) {
		if m == nil {
			return 0, 0
		}
		n, ok := parseValor(m.ValorPerc)
		switch {
		case m.Modalidade < lo || m.Modalidade > hi:
			add(prop+".modalidade", fmt.Sprintf("modalidade %d is not one the simulator takes (%d to %d)", m.Modalidade, lo, hi), strconv.Itoa(m.Modalidade))
		case !ok:
			add(prop+".valorPerc", `valorPerc must match ^\d{1,10}\.\d{2}$`, m.ValorPerc)
		}
		return m.Modalidade, n
	}
	t.MultaMod, t.Multa = mod("cobv.valor.multa", val.Multa, 1, 2)
	t.JurosMod, t.Juros = mod("cobv.valor.juros", val.Juros, 1, 3)
	t.AbatMod, t.Abatimento = mod("cobv.valor.abatimento", val.Abatimento, 1, 2)
	// A deduction of the whole value or more (or 100% or more) is refused.
	tooMuch := func(m int, n int64) bool { return m == 1 && n >= t.Original || m == 2 && n >= 10000 }
	if tooMuch(t.AbatMod, t.Abatimento) {
		add("cobv.valor.abatimento", "abatimento is the whole value or more", val.Abatimento.ValorPerc)
	}
	d := val.Desconto
	if d == nil {
		return
	}
	t.DescMod = d.Modalidade
	switch {
	case d.Modalidade < 1 || d.Modalidade > 2:
		add("cobv.valor.desconto.modalidade", "only modalidades 1 and 2 (until fixed dates) are simulated", strconv.Itoa(d.Modalidade))
		return
	case d.ValorPerc != nil:
		add("cobv.valor.desconto.valorPerc", "modalidades 1 and 2 take descontoDataFixa, not valorPerc", *d.ValorPerc)
	case len(d.DescontoDataFixa) == 0 || len(d.DescontoDataFixa) > 3:
		add("cobv.valor.desconto.descontoDataFixa", "descontoDataFixa has 1 to 3 elements", "")
	}
	seen := map[string]bool{}
	for i, e := range d.DescontoDataFixa {
		prop := fmt.Sprintf("cobv.valor.desconto.descontoDataFixa[%d]", i)
		day, ok := parseDay(e.Data)
		switch {
		case !ok:
			add(prop+".data", "data must be a date YYYY-MM-DD", e.Data)
		case !t.Vencimento.IsZero() && day.After(t.Vencimento):
			add(prop+".data", "data is after dataDeVencimento", e.Data)
		case seen[e.Data]:
			add(prop+".data", "two discounts for the same date", e.Data)
		}
		seen[e.Data] = true
		n, ok := parseValor(e.ValorPerc)
		switch {
		case !ok || n <= 0:
			add(prop+".valorPerc", `valorPerc must match ^\d{1,10}\.\d{2}$ and be above 0.00`, e.ValorPerc)
		case tooMuch(t.DescMod, n):
			add(prop+".valorPerc", "the discount is the whole value or more", e.ValorPerc)
		}
		t.Descontos = append(t.Descontos, descontoTerm{Data: day, Valor: n})
	}
}

func (s *Server) putCobV(w http.ResponseWriter, r *http.Request) {
	txid := r.PathValue("txid")
	if !isAlnum(txid, 26, 35) {
		writeProblem(w, http.StatusBadRequest, "CobVOperacaoInvalida", "Cobrança inválida", "txid must be 26 to 35 of [a-zA-Z0-9]",
			[]violacao{{Razao: "txid must match ^[a-zA-Z0-9]{26,35}$", Propriedade: "cobv.txid", Valor: txid}})
		return
	}
	var req cobvRequest
	if !decodeBody(w, r, "CobVOperacaoInvalida", &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	terms, dev, v := s.checkCobV(&req, dayOf(now))
	if len(v) > 0 {
		writeProblem(w, http.StatusBadRequest, "CobVOperacaoInvalida", "Cobrança inválida", "the cobv has invalid fields", v)
		return
	}
	if s.st.cobvs == nil {
		s.st.cobvs = map[string]*cobv{}
	}
	c := s.st.cobvs[txid]
	switch {
	case c != nil && c.Status != CobAtiva:
		writeProblem(w, http.StatusBadRequest, "CobVOperacaoInvalida", "Cobrança inválida", "the cobv is "+c.Status+" and can no longer be changed",
			[]violacao{{Razao: "only an ATIVA cobv can be changed", Propriedade: "cobv.status", Valor: c.Status}})
		return
	case c != nil:
		// PUT on an ATIVA cobv replaces its terms: a new revision.
		c.Revisao++
	default:
		s.st.nextLoc++
		c = &cobv{TxID: txid, Created: now, LocID: s.st.nextLoc, Status: CobAtiva,
			Location: s.ln.Addr().String() + "/qr/v2/cobv/" + strings.ToLower(randomHex(32))}
		code, err := cobvBRCode(c.Location, s.opts.MerchantName, s.opts.MerchantCity)
		if err != nil {
			writeProblem(w, http.StatusInternalServerError, "ErroInternoDoServidor", "Erro interno do servidor", err.Error(), nil)
			return
		}
		c.BRCode = code
		s.st.cobvs[txid] = c
	}
	c.Devedor, c.Terms, c.Chave = dev, terms, *req.Chave
	c.Solicitacao = ""
	if req.SolicitacaoPagador != nil {
		c.Solicitacao = *req.SolicitacaoPagador
	}
	writeJSON(w, http.StatusCreated, s.cobvJSON(c))
}

func (s *Server) getCobV(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.st.cobvs[r.PathValue("txid")]
	if c == nil {
		writeProblem(w, http.StatusNotFound, "CobVNaoEncontrada", "Cobrança não encontrada", "no cobv with this txid", nil)
		return
	}
	writeJSON(w, http.StatusOK, s.cobvJSON(c))
}

// patchCobV revises a cobv. The simulator takes one revision, the one
// pixgate makes: removal ({"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"}),
// which the API refuses together with any other change.
func (s *Server) patchCobV(w http.ResponseWriter, r *http.Request) {
	var req cobvRequest
	if !decodeBody(w, r, "CobVOperacaoInvalida", &req) {
		return
	}
	var v []violacao
	switch {
	case req.Status == nil:
		v = append(v, violacao{Razao: "the simulator revises only status", Propriedade: "cobv"})
	case *req.Status != CobRemovidaUR:
		v = append(v, violacao{Razao: "status can only be revised to " + CobRemovidaUR, Propriedade: "cobv.status", Valor: *req.Status})
	case req.Calendario != nil || req.Devedor != nil || req.Valor != nil || req.Chave != nil || req.SolicitacaoPagador != nil || req.Loc != nil:
		v = append(v, violacao{Razao: "a removal cannot change anything else", Propriedade: "cobv.status", Valor: *req.Status})
	}
	if len(v) > 0 {
		writeProblem(w, http.StatusBadRequest, "CobVOperacaoInvalida", "Cobrança inválida", "the revision has invalid fields", v)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.st.cobvs[r.PathValue("txid")]
	if c == nil {
		writeProblem(w, http.StatusNotFound, "CobVNaoEncontrada", "Cobrança não encontrada", "no cobv with this txid", nil)
		return
	}
	if c.Status != CobAtiva {
		writeProblem(w, http.StatusBadRequest, "CobVOperacaoInvalida", "Cobrança inválida", "the cobv is "+c.Status+" and can no longer be revised",
			[]violacao{{Razao: "only an ATIVA cobv can be revised", Propriedade: "cobv.status", Valor: c.Status}})
		return
	}
	c.Status = *req.Status
	c.Revisao++
	writeJSON(w, http.StatusOK, s.cobvJSON(c))
}

// cobvJSON is a cobv as GET /cobv/{txid} shows it (CobVCompleta).
func (s *Server) cobvJSON(c *cobv) map[string]any {
	created := formatTime(c.Created)
	t := c.Terms
	valor := map[string]any{"original": formatValor(t.Original)}
	if t.MultaMod != 0 {
		valor["multa"] = modalidadeJSON{Modalidade: t.MultaMod, ValorPerc: formatValor(t.Multa)}
	}
	if t.JurosMod != 0 {
		valor["juros"] = modalidadeJSON{Modalidade: t.JurosMod, ValorPerc: formatValor(t.Juros)}
	}
	if t.AbatMod != 0 {
		valor["abatimento"] = modalidadeJSON{Modalidade: t.AbatMod, ValorPerc: formatValor(t.Abatimento)}
	}
	if t.DescMod != 0 {
		d := descontoJSON{Modalidade: t.DescMod}
		for _, e := range t.Descontos {
			d.DescontoDataFixa = append(d.DescontoDataFixa, dataFixaJSON{Data: formatDay(e.Data), ValorPerc: formatValor(e.Valor)})
		}
		valor["desconto"] = d
	}
	j := map[string]any{
		"calendario": map[string]any{"criacao": created, "dataDeVencimento": formatDay(t.Vencimento), "validadeAposVencimento": t.Validade},
		"txid":       c.TxID,
		"revisao":    c.Revisao,
		"loc":        locJSON{ID: c.LocID, Location: c.Location, TipoCob: "cobv", Criacao: created, TxID: c.TxID},
		"location":   c.Location,
		"status":     c.Status,
		"devedor":    c.Devedor,
		"recebedor": map[string]string{"cnpj": s.opts.CNPJ, "nome": s.opts.MerchantName, "logradouro": "Avenida Paulista, 1000",
			"cidade": "São Paulo", "uf": "SP", "cep": "01310100"},
		"valor":         valor,
		"chave":         c.Chave,
		"pixCopiaECola": c.BRCode,
	}
	if c.Solicitacao != "" {
		j["solicitacaoPagador"] = c.Solicitacao
	}
	if len(c.Pix) > 0 {
		pix := make([]pixJSON, 0, len(c.Pix))
		for _, p := range c.Pix {
			pix = append(pix, p.json())
		}
		j["pix"] = pix
	}
	return j
}

// cobvBRCode is the BR Code of a cobv: like a cob's, single use, pointing
// at the location, but without an amount (field 54): the payer's app reads
// the amount of the day from the location's payload.
func cobvBRCode(location, name, city string) (string, error) {
	name, city = brcode.Sanitize(name, brcode.MaxMerchantName), brcode.Sanitize(city, brcode.MaxMerchantCity)
	if name == "" || city == "" || len(location) > 77 {
		return "", errors.New("pspsim: merchant name, city or location unfit for a BR Code")
	}
	c := brcode.Code{Fields: []brcode.Field{
		{ID: "00", Value: "01"},
		{ID: "01", Value: "12"},
		{ID: "26", Sub: []brcode.Field{{ID: "00", Value: brcode.GUI}, {ID: "25", Value: location}}},
		{ID: "52", Value: "0000"},
		{ID: "53", Value: "986"},
		{ID: "58", Value: "BR"},
		{ID: "59", Value: name},
		{ID: "60", Value: city},
		{ID: "62", Sub: []brcode.Field{{ID: "05", Value: "***"}}},
	}}
	return c.String(), nil
}

// ErrBadDate: the day asked for is not a date YYYY-MM-DD.
var ErrBadDate = errors.New("pspsim: not a date YYYY-MM-DD")

// CobVDue returns what the cobv txid costs when paid on date (YYYY-MM-DD;
// "" is today in São Paulo by the simulator's clock), computed as BACEN
// defines the cobv's terms, and false when the cobv can no longer be paid
// that day.
func (s *Server) CobVDue(txid, date string) (CobVAmount, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.st.cobvs[txid]
	if c == nil {
		return CobVAmount{}, false, fmt.Errorf("%w: %s", ErrUnknownCharge, txid)
	}
	d, err := s.payDay(date)
	if err != nil {
		return CobVAmount{}, false, err
	}
	a, ok := c.Terms.amountOn(d)
	return a, ok, nil
}

// payDay reads date, "" being today in São Paulo (s.mu held or not: it
// reads only the clock).
func (s *Server) payDay(date string) (day, error) {
	if date == "" {
		return dayOf(s.now()), nil
	}
	d, ok := parseDay(date)
	if !ok {
		return day{}, fmt.Errorf("%w: %q", ErrBadDate, date)
	}
	return d, nil
}

// PayCobV has a payer pay the ATIVA cobv txid on date (YYYY-MM-DD; "" is
// today in São Paulo by the simulator's clock) for what BACEN's terms make
// due that day: the cobv becomes CONCLUIDA, the Pix (its horario on that
// date, at the clock's São Paulo time of day) is recorded and the webhook
// receives it before PayCobV returns. It returns the Pix's end-to-end id and the amount paid
// in centavos. ErrNotPayable: the cobv is not ATIVA, the date is before
// its creation or after its last day.
func (s *Server) PayCobV(ctx context.Context, txid, date string) (string, int64, error) {
	s.mu.Lock()
	c := s.st.cobvs[txid]
	if c == nil {
		s.mu.Unlock()
		return "", 0, fmt.Errorf("%w: %s", ErrUnknownCharge, txid)
	}
	now := s.now()
	d, err := s.payDay(date)
	if err != nil {
		s.mu.Unlock()
		return "", 0, err
	}
	amount, payable := c.Terms.amountOn(d)
	switch {
	case c.Status != CobAtiva:
		err = fmt.Errorf("%w: it is %s", ErrNotPayable, c.Status)
	case d.Before(dayOf(c.Created)):
		err = fmt.Errorf("%w: %s is before its creation", ErrNotPayable, formatDay(d))
	case !payable:
		err = fmt.Errorf("%w: its last day was %s", ErrNotPayable, formatDay(c.Terms.lastDay()))
	}
	if err != nil {
		s.mu.Unlock()
		return "", 0, err
	}
	// The Pix is stamped on the day it pays for: the receiver prices a
	// cobv by the date of its horario, as a real PSP's payment shows it.
	paid := payTime(now, d)
	p := &pixRec{E2EID: newE2EID("E", paid), TxID: txid, Valor: amount.Final, Chave: c.Chave, Horario: paid, InfoPagador: "pago pelo simulador"}
	c.Status = CobConcluida
	c.Pix = append(c.Pix, p)
	item := s.record(p)
	s.mu.Unlock()
	s.deliver(ctx, []pixJSON{item})
	return p.E2EID, amount.Final, nil
}

// payTime is the instant of a payment made on São Paulo date d: now's São
// Paulo time of day on that date (now itself when d is today).
func payTime(now time.Time, d day) time.Time {
	if dayOf(now).Equal(d) {
		return now
	}
	sp := now.In(saoPaulo)
	y, m, dd := d.Date()
	return time.Date(y, m, dd, sp.Hour(), sp.Minute(), sp.Second(), sp.Nanosecond(), saoPaulo)
}

// txidOfCobVCode is the txid of the cobv whose copy-and-paste code is
// code, or "" when no cobv has it.
func (s *Server) txidOfCobVCode(code string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for txid, c := range s.st.cobvs {
		if c.BRCode == code {
			return txid
		}
	}
	return ""
}

// cobvControl adds to the control API:
//
//	POST /sim/paycobv/{txid}  a payer pays the cobv on {"date": "YYYY-MM-DD"}
//	                          (optional; default today) what is due then →
//	                          {"endToEndId": …, "txid": …, "valor": "10.20"}
//	POST /sim/paycobv         the same for the cobv whose copy-and-paste
//	                          code (pixgate's qrcode) is {"code": "…"}
func (s *Server) cobvControl(mux *http.ServeMux) {
	pay := func(w http.ResponseWriter, r *http.Request, byCode bool) {
		var req struct {
			Date string `json:"date"`
			Code string `json:"code"`
		}
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err == nil && len(strings.TrimSpace(string(b))) > 0 {
			err = json.Unmarshal(b, &req)
		}
		if err == nil && byCode && strings.TrimSpace(req.Code) == "" {
			err = errors.New(`the body needs "code": the cobv's copy-and-paste code`)
		}
		if err != nil {
			writeProblem(w, http.StatusBadRequest, "RequisicaoInvalida", "Requisição inválida", err.Error(), nil)
			return
		}
		txid := r.PathValue("txid")
		if byCode {
			txid = s.txidOfCobVCode(strings.TrimSpace(req.Code))
		}
		e2eid, valor, err := s.PayCobV(r.Context(), txid, req.Date)
		switch {
		case errors.Is(err, ErrUnknownCharge):
			writeProblem(w, http.StatusNotFound, "CobVNaoEncontrada", "Cobrança não encontrada", err.Error(), nil)
		case errors.Is(err, ErrBadDate):
			writeProblem(w, http.StatusBadRequest, "RequisicaoInvalida", "Requisição inválida", err.Error(), nil)
		case err != nil:
			writeProblem(w, http.StatusConflict, "CobVOperacaoInvalida", "Cobrança não pode ser paga", err.Error(), nil)
		default:
			writeJSON(w, http.StatusOK, map[string]string{"endToEndId": e2eid, "txid": txid, "valor": formatValor(valor)})
		}
	}
	mux.HandleFunc("POST /sim/paycobv/{txid}", func(w http.ResponseWriter, r *http.Request) { pay(w, r, false) })
	mux.HandleFunc("POST /sim/paycobv", func(w http.ResponseWriter, r *http.Request) { pay(w, r, true) })
}
