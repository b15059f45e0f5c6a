package pspsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
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
func (s *Server) checkCobV(req *cobvRequest, today day) (cobvTerms, cobvDevedor, violations) {
	var v violations
	var t cobvTerms
	switch c := req.Calendario; {
	case c == nil || c.DataDeVencimento == nil:
		v.add("cobv.calendario.dataDeVencimento", "dataDeVencimento is required", "")
	default:
		d, ok := parseDay(*c.DataDeVencimento)
		switch {
		case !ok:
			v.add("cobv.calendario.dataDeVencimento", "dataDeVencimento must be a date YYYY-MM-DD", *c.DataDeVencimento)
		case d.Before(today):
			v.add("cobv.calendario.dataDeVencimento", "dataDeVencimento is before the cobv's creation", *c.DataDeVencimento)
		}
		t.Vencimento = d
	}
	if c := req.Calendario; c != nil && c.ValidadeAposVencimento != nil {
		t.Validade = *c.ValidadeAposVencimento
		if t.Validade < 0 {
			v.add("cobv.calendario.validadeAposVencimento", "validadeAposVencimento must not be negative", strconv.Itoa(t.Validade))
		}
	} else {
		t.Validade = 30
	}
	var dev cobvDevedor
	if d := req.Devedor; d == nil {
		v.add("cobv.devedor", "devedor is required", "")
	} else {
		dev = *d
		v.checkPerson("cobv.devedor", d.CPF, d.CNPJ, d.Nome, 200)
		v.checkAddress("cobv.devedor", d.Logradouro, d.Cidade, d.UF, d.CEP)
	}
	switch {
	case req.Valor == nil || req.Valor.Original == nil:
		v.add("cobv.valor.original", "valor.original is required", "")
	default:
		c, ok := parseValor(*req.Valor.Original)
		if !ok || c <= 0 {
			v.add("cobv.valor.original", `valor.original must match ^\d{1,10}\.\d{2}$ and be above 0.00`, *req.Valor.Original)
		}
		t.Original = c
		s.checkCobVValor(req, &t, &v)
	}
	switch {
	case req.Chave == nil:
		v.add("cobv.chave", "chave is required", "")
	case *req.Chave != s.opts.PixKey:
		v.add("cobv.chave", "chave is not a key of this account", *req.Chave)
	}
	v.checkText("cobv.solicitacaoPagador", "solicitacaoPagador", req.SolicitacaoPagador, 140)
	if req.Status != nil {
		v.add("cobv.status", "status cannot be set when creating a cobv", *req.Status)
	}
	return t, dev, v
}

// checkCobVValor reads multa, juros, abatimento and desconto into t.
func (s *Server) checkCobVValor(req *cobvRequest, t *cobvTerms, v *violations) {
	val := req.Valor
	mod := func(prop string, m *modalidadeJSON, lo, hi int) (int, int64) {
		if m == nil {
			return 0, 0
		}
		n, ok := parseValor(m.ValorPerc)
		switch {
		case m.Modalidade < lo || m.Modalidade > hi:
			v.add(prop+".modalidade", fmt.Sprintf("modalidade %d is not one the simulator takes (%d to %d)", m.Modalidade, lo, hi), strconv.Itoa(m.Modalidade))
		case !ok:
			v.add(prop+".valorPerc", `valorPerc must match ^\d{1,10}\.\d{2}$`, m.ValorPerc)
		}
		return m.Modalidade, n
	}
	t.MultaMod, t.Multa = mod("cobv.valor.multa", val.Multa, 1, 2)
	t.JurosMod, t.Juros = mod("cobv.valor.juros", val.Juros, 1, 3)
	t.AbatMod, t.Abatimento = mod("cobv.valor.abatimento", val.Abatimento, 1, 2)
	// A deduction of the whole value or more (or 100% or more) is refused.
	tooMuch := func(m int, n int64) bool { return m == 1 && n >= t.Original || m == 2 && n >= 10000 }
	if tooMuch(t.AbatMod, t.Abatimento) {
		v.add("cobv.valor.abatimento", "abatimento is the whole value or more", val.Abatimento.ValorPerc)
	}
	d := val.Desconto
	if d == nil {
		return
	}
	t.DescMod = d.Modalidade
	switch {
	case d.Modalidade < 1 || d.Modalidade > 2:
		v.add("cobv.valor.desconto.modalidade", "only modalidades 1 and 2 (until fixed dates) are simulated", strconv.Itoa(d.Modalidade))
		return
	case d.ValorPerc != nil:
		v.add("cobv.valor.desconto.valorPerc", "modalidades 1 and 2 take descontoDataFixa, not valorPerc", *d.ValorPerc)
	case len(d.DescontoDataFixa) == 0 || len(d.DescontoDataFixa) > 3:
		v.add("cobv.valor.desconto.descontoDataFixa", "descontoDataFixa has 1 to 3 elements", "")
	}
	seen := map[string]bool{}
	for i, e := range d.DescontoDataFixa {
		prop := fmt.Sprintf("cobv.valor.desconto.descontoDataFixa[%d]", i)
		day, ok := parseDay(e.Data)
		switch {
		case !ok:
			v.add(prop+".data", "data must be a date YYYY-MM-DD", e.Data)
		case !t.Vencimento.IsZero() && day.After(t.Vencimento):
			v.add(prop+".data", "data is after dataDeVencimento", e.Data)
		case seen[e.Data]:
			v.add(prop+".data", "two discounts for the same date", e.Data)
		}
		seen[e.Data] = true
		n, ok := parseValor(e.ValorPerc)
		switch {
		case !ok || n <= 0:
			v.add(prop+".valorPerc", `valorPerc must match ^\d{1,10}\.\d{2}$ and be above 0.00`, e.ValorPerc)
		case tooMuch(t.DescMod, n):
			v.add(prop+".valorPerc", "the discount is the whole value or more", e.ValorPerc)
		}
		t.Descontos = append(t.Descontos, descontoTerm{Data: day, Valor: n})
	}
}

// cobvKind is what the cobv handlers answer.
var cobvKind = resource{noun: "cobv", prop: "cobv", refused: "CobVOperacaoInvalida", refusedTitle: "Cobrança inválida",
	missing: "CobVNaoEncontrada", missingTitle: "Cobrança não encontrada", missingDetail: "no cobv with this txid"}

// Only an ATIVA cobv can be changed (PUT on an existing one) or revised
// (PATCH).
var (
	cobvChange   = statusGuard{allowed: []string{CobAtiva}, verb: "changed", razao: "only an ATIVA cobv can be changed"}
	cobvRevision = statusGuard{allowed: []string{CobAtiva}, verb: "revised", razao: "only an ATIVA cobv can be revised"}
)

func (s *Server) putCobV(w http.ResponseWriter, r *http.Request) {
	txid := r.PathValue("txid")
	var req cobvRequest
	if !cobvKind.validTxID(w, txid) || !cobvKind.decode(w, r, &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	terms, dev, v := s.checkCobV(&req, dayOf(now))
	if len(v) > 0 {
		cobvKind.refuse(w, "the cobv has invalid fields", v...)
		return
	}
	if s.st.cobvs == nil {
		s.st.cobvs = map[string]*cobv{}
	}
	c := s.st.cobvs[txid]
	switch {
	case c != nil && !cobvKind.allows(w, c.Status, cobvChange):
		return
	case c != nil:
		// PUT on an ATIVA cobv replaces its terms: a new revision.
		c.Revisao++
	default:
		c = &cobv{TxID: txid, Created: now, Status: CobAtiva}
		c.LocID, c.Location = s.newLocation("/qr/v2/cobv/")
		code, err := chargeBRCode(c.Location, s.opts.MerchantName, s.opts.MerchantCity, "")
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
	show(s, w, cobvKind, func() *cobv { return s.st.cobvs[r.PathValue("txid")] }, s.cobvJSON)
}

// patchCobV revises a cobv. The simulator takes one revision, the one
// pixgate makes: removal ({"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"}),
// which the API refuses together with any other change.
func (s *Server) patchCobV(w http.ResponseWriter, r *http.Request) {
	var req cobvRequest
	if !cobvKind.decode(w, r, &req) {
		return
	}
	var v violations
	switch {
	case req.Status == nil:
		v.add("cobv", "the simulator revises only status", "")
	case *req.Status != CobRemovidaUR:
		v.add("cobv.status", "status can only be revised to "+CobRemovidaUR, *req.Status)
	case req.Calendario != nil || req.Devedor != nil || req.Valor != nil || req.Chave != nil || req.SolicitacaoPagador != nil || req.Loc != nil:
		v.add("cobv.status", "a removal cannot change anything else", *req.Status)
	}
	if len(v) > 0 {
		cobvKind.refuse(w, "the revision has invalid fields", v...)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := found(w, cobvKind, s.st.cobvs[r.PathValue("txid")])
	if c == nil || !cobvKind.allows(w, c.Status, cobvRevision) {
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
