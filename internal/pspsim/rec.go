package pspsim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pixgate/pixgate/internal/brcode"
)

// This file simulates Pix Automático's receiving side (BACEN's tags
// PayloadLocationRec, Rec, CobR, WebhookRec and WebhookCobR): locations of
// recurrences, recurrences the payer approves, rejects or cancels at their
// bank (control actions), cycle charges debited on their settlement day
// (or failed, on request), retries, and the notifications of both.

// Statuses of a recurrence (rec) and of a cycle charge (cobr).
const (
	RecCriada    = "CRIADA"
	RecAprovada  = "APROVADA"
	RecRejeitada = "REJEITADA"
	RecExpirada  = "EXPIRADA"
	RecCancelada = "CANCELADA"

	CobRCriada    = "CRIADA"
	CobRAtiva     = "ATIVA"
	CobRConcluida = "CONCLUIDA"
	CobRExpirada  = "EXPIRADA"
	CobRRejeitada = "REJEITADA"
	CobRCancelada = "CANCELADA"
)

// Statuses and kinds of a cycle charge's attempt (tentativa).
const (
	tentSolicitada = "SOLICITADA"
	tentAgendada   = "AGENDADA"
	tentPaga       = "PAGA"
	tentCancelada  = "CANCELADA"
	tentRejeitada  = "REJEITADA"

	tentAGND = "AGND" // the debit scheduled for the due date
	tentNTAG = "NTAG" // a retry the receiver asked for
)

// Retry policies (politicaRetentativa) and how many retries the second
// allows, within how many days after the due date.
const (
	politicaNaoPermite = "NAO_PERMITE"
	politicaPermite    = "PERMITE_3R_7D"
	maxRetries         = 3
	retryWindowDays    = 7
)

// RecApprovalWindow is how long a CRIADA recurrence waits for the payer
// before the simulator makes it EXPIRADA.
const RecApprovalWindow = 7 * 24 * time.Hour

// cobrLeadDays bounds how far ahead of its due date a cobr is created:
// between 2 and 10 days before it, both included.
const (
	cobrMinLeadDays = 2
	cobrMaxLeadDays = 10
)

// FailDebitCode is the rejection code of an attempt failed with FailCobR:
// AM04-like "insufficient funds" is not in BACEN's list, AM02 (amount not
// allowed) is, and it lets the cobr be retried.
const FailDebitCode = "AM02"

// simCodMun is the payer's municipality (São Paulo's IBGE code) reported
// once a recurrence is approved.
const simCodMun = "3550308"

type statusAt struct {
	Status string
	At     time.Time
}

type statusAtJSON struct {
	Status string `json:"status"`
	Data   string `json:"data"`
}

func updatesJSON(u []statusAt) []statusAtJSON {
	out := make([]statusAtJSON, len(u))
	for i, x := range u {
		out[i] = statusAtJSON{Status: x.Status, Data: formatTime(x.At)}
	}
	return out
}

// changedIn reports whether any update falls in [from, to].
func changedIn(u []statusAt, from, to time.Time) bool {
	for _, x := range u {
		if !x.At.Before(from) && !x.At.After(to) {
			return true
		}
	}
	return false
}

type recDevedor struct {
	CPF  string `json:"cpf,omitempty"`
	CNPJ string `json:"cnpj,omitempty"`
	Nome string `json:"nome"`
}

type encerramento struct {
	Rejeicao     *codeText   `json:"rejeicao,omitempty"`
	Cancelamento *cancelamen `json:"cancelamento,omitempty"`
}

type codeText struct {
	Codigo    string `json:"codigo"`
	Descricao string `json:"descricao"`
}

type cancelamen struct {
	Solicitante string `json:"solicitante"`
	Codigo      string `json:"codigo"`
	Descricao   string `json:"descricao"`
}

type locRec struct {
	ID       int64
	Location string
	Created  time.Time
	IDRec    string
}

type rec struct {
	IDRec         string
	Created       time.Time
	Loc           *locRec
	Contrato      string
	Objeto        string
	Devedor       recDevedor
	DataInicial   day
	DataFinal     day // zero: none
	Periodicidade string
	ValorRec      int64 // 0: not fixed
	ValorMinimo   int64
	Politica      string
	Status        string
	Updates       []statusAt
	End           *encerramento
	Jornada       string
	TxID          string // ativacao.dadosJornada.txid (journey 3)
}

type tentativa struct {
	Data     day
	Tipo     string
	Status   string
	E2EID    string
	Updates  []statusAt
	Rejeicao *codeText
}

type cobrRecebedor struct {
	Agencia   string `json:"agencia,omitempty"`
	Conta     string `json:"conta"`
	TipoConta string `json:"tipoConta"`
}

type cobrDevedor struct {
	CPF        string `json:"cpf,omitempty"`
	CNPJ       string `json:"cnpj,omitempty"`
	Nome       string `json:"nome,omitempty"`
	Email      string `json:"email,omitempty"`
	Logradouro string `json:"logradouro,omitempty"`
	Cidade     string `json:"cidade,omitempty"`
	UF         string `json:"uf,omitempty"`
	CEP        string `json:"cep,omitempty"`
}

type cobr struct {
	TxID       string
	IDRec      string
	Created    time.Time
	Vencimento day
	Ajuste     bool
	Valor      int64
	Info       string
	Devedor    *cobrDevedor
	Recebedor  cobrRecebedor
	Status     string
	Updates    []statusAt
	Tentativas []*tentativa
	Pix        []*pixRec
	End        *encerramento
}

// recBooks are the simulated PSP's recurrences; Server.mu guards them.
type recBooks struct {
	locs     map[int64]*locRec
	recs     map[string]*rec
	cobrs    map[string]*cobr
	hookRec  *webhookReg
	hookCobr *webhookReg
}

// books returns the recurrence books, made at first use (s.mu held).
func (s *Server) books() *recBooks {
	if s.st.recs == nil {
		s.st.recs = &recBooks{locs: map[int64]*locRec{}, recs: map[string]*rec{}, cobrs: map[string]*cobr{}}
	}
	return s.st.recs
}

// notice is a notification to deliver once s.mu is released: kind "rec"
// or "cobr", and the item.
type notice struct {
	kind string
	id   string
	item any
}

// recRoutes adds the recurrence endpoints to the API.
func (s *Server) recRoutes(api *http.ServeMux) {
	api.HandleFunc("POST /v2/locrec", s.postLocRec)
	api.HandleFunc("GET /v2/locrec/{id}", s.getLocRec)
	api.HandleFunc("POST /v2/rec", s.postRec)
	api.HandleFunc("GET /v2/rec", s.listRecs)
	api.HandleFunc("GET /v2/rec/{idRec}", s.getRec)
	api.HandleFunc("PATCH /v2/rec/{idRec}", s.patchRec)
	api.HandleFunc("PUT /v2/cobr/{txid}", s.putCobR)
	api.HandleFunc("GET /v2/cobr", s.listCobRs)
	api.HandleFunc("GET /v2/cobr/{txid}", s.getCobR)
	api.HandleFunc("PATCH /v2/cobr/{txid}", s.patchCobR)
	api.HandleFunc("POST /v2/cobr/{txid}/retentativa/{data}", s.retryCobR)
	for _, kind := range []string{"rec", "cobr"} {
		api.HandleFunc("PUT /v2/webhook"+kind, func(w http.ResponseWriter, r *http.Request) { s.putHook(w, r, kind) })
		api.HandleFunc("GET /v2/webhook"+kind, func(w http.ResponseWriter, r *http.Request) { s.getHook(w, kind) })
		api.HandleFunc("DELETE /v2/webhook"+kind, func(w http.ResponseWriter, r *http.Request) { s.deleteHook(w, kind) })
	}
}

// --- locations ---

func (s *Server) postLocRec(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.books()
	s.st.nextLoc++
	l := &locRec{ID: s.st.nextLoc, Created: s.now(), Location: s.ln.Addr().String() + "/qr/v2/rec/" + strings.ToLower(randomHex(32))}
	b.locs[l.ID] = l
	w.Header().Set("Location", l.Location)
	writeJSON(w, http.StatusCreated, l.json())
}

func (l *locRec) json() map[string]any {
	j := map[string]any{"id": l.ID, "location": l.Location, "tipo": "rec", "criacao": formatTime(l.Created)}
	if l.IDRec != "" {
		j["idRec"] = l.IDRec
	}
	return j
}

func (s *Server) getLocRec(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.books().locs[id]
	if err != nil || l == nil {
		writeProblem(w, http.StatusNotFound, "NaoEncontrado", "Não encontrado", "no location of a recurrence with this id", nil)
		return
	}
	writeJSON(w, http.StatusOK, l.json())
}

// --- recurrences ---

// recRequest is the body of POST /rec; pointers tell an absent field from
// an empty one.
type recRequest struct {
	Vinculo *struct {
		Contrato *string    `json:"contrato"`
		Objeto   *string    `json:"objeto"`
		Devedor  recDevedor `json:"devedor"`
	} `json:"vinculo"`
	Calendario *struct {
		DataInicial   *string `json:"dataInicial"`
		DataFinal     *string `json:"dataFinal"`
		Periodicidade *string `json:"periodicidade"`
	} `json:"calendario"`
	Valor *struct {
		ValorRec    *string `json:"valorRec"`
		ValorMinimo *string `json:"valorMinimoRecebedor"`
	} `json:"valor"`
	PoliticaRetentativa *string `json:"politicaRetentativa"`
	Loc                 *int64  `json:"loc"`
	Ativacao            *struct {
		DadosJornada *struct {
			TxID string `json:"txid"`
		} `json:"dadosJornada"`
	} `json:"ativacao"`
	Status *string `json:"status"`
}

var periodicidades = map[string]bool{"SEMANAL": true, "MENSAL": true, "TRIMESTRAL": true, "SEMESTRAL": true, "ANUAL": true}

// checkRec returns a recurrence from req, or the violations (s.mu held).
func (s *Server) checkRec(req *recRequest, today day) (*rec, []violacao) {
	var v []violacao
	add := func(prop, reason, val string) { v = append(v, violacao{Razao: reason, Propriedade: prop, Valor: val}) }
	rc := &rec{Status: RecCriada, Jornada: "AGUARDANDO_DEFINICAO"}
	if vin := req.Vinculo; vin == nil {
		add("rec.vinculo", "vinculo is required", "")
	} else {
		if vin.Contrato == nil || *vin.Contrato == "" || utf8.RuneCountInString(*vin.Contrato) > 35 {
			add("rec.vinculo.contrato", "contrato is required, at most 35 characters", "")
		} else {
			rc.Contrato = *vin.Contrato
		}
		if vin.Objeto != nil {
			if utf8.RuneCountInString(*vin.Objeto) > 35 {
				add("rec.vinculo.objeto", "objeto is at most 35 characters", "")
			}
			rc.Objeto = *vin.Objeto
		}
		d := vin.Devedor
		switch {
		case d.CPF != "" && d.CNPJ != "":
			add("rec.vinculo.devedor", "give cpf or cnpj, not both", "")
		case d.CPF != "" && (len(d.CPF) != 11 || !allDigits(d.CPF)):
			add("rec.vinculo.devedor.cpf", "cpf must be 11 digits", d.CPF)
		case d.CNPJ != "" && !isCNPJ(d.CNPJ):
			add("rec.vinculo.devedor.cnpj", "cnpj must be 14 characters of [0-9A-Z]", d.CNPJ)
		case d.CPF == "" && d.CNPJ == "":
			add("rec.vinculo.devedor", "devedor needs cpf or cnpj", "")
		}
		if strings.TrimSpace(d.Nome) == "" || utf8.RuneCountInString(d.Nome) > 140 {
			add("rec.vinculo.devedor.nome", "nome is required, at most 140 characters", d.Nome)
		}
		rc.Devedor = d
	}
	if c := req.Calendario; c == nil {
		add("rec.calendario", "calendario is required", "")
	} else {
		if c.DataInicial == nil {
			add("rec.calendario.dataInicial", "dataInicial is required", "")
		} else if d, ok := parseDay(*c.DataInicial); !ok || d.Before(today) {
			add("rec.calendario.dataInicial", "dataInicial must be a date YYYY-MM-DD, not before today", *c.DataInicial)
		} else {
			rc.DataInicial = d
		}
		if c.DataFinal != nil {
			if d, ok := parseDay(*c.DataFinal); !ok || (!rc.DataInicial.IsZero() && d.Before(rc.DataInicial)) {
				add("rec.calendario.dataFinal", "dataFinal must be a date YYYY-MM-DD, not before dataInicial", *c.DataFinal)
			} else {
				rc.DataFinal = d
			}
		}
		if c.Periodicidade == nil || !periodicidades[*c.Periodicidade] {
			add("rec.calendario.periodicidade", "periodicidade must be SEMANAL, MENSAL, TRIMESTRAL, SEMESTRAL or ANUAL", "")
		} else {
			rc.Periodicidade = *c.Periodicidade
		}
	}
	if val := req.Valor; val != nil {
		if val.ValorRec != nil && val.ValorMinimo != nil {
			add("rec.valor", "valorRec and valorMinimoRecebedor exclude each other", "")
		}
		for _, p := range []struct {
			name string
			raw  *string
			dst  *int64
		}{{"rec.valor.valorRec", val.ValorRec, &rc.ValorRec}, {"rec.valor.valorMinimoRecebedor", val.ValorMinimo, &rc.ValorMinimo}} {
			if p.raw == nil {
				continue
			}
			if c, ok := parseValor(*p.raw); !ok || c <= 0 {
				add(p.name, `the value must match ^\d{1,10}\.\d{2}$ and be above 0.00`, *p.raw)
			} else {
				*p.dst = c
			}
		}
	}
	switch p := req.PoliticaRetentativa; {
	case p == nil:
		add("rec.politicaRetentativa", "politicaRetentativa is required", "")
	case *p != politicaNaoPermite && *p != politicaPermite:
		add("rec.politicaRetentativa", "politicaRetentativa must be NAO_PERMITE or PERMITE_3R_7D", *p)
	default:
		rc.Politica = *p
	}
	b := s.books()
	if req.Loc != nil {
		l := b.locs[*req.Loc]
		switch {
		case l == nil:
			add("rec.loc", "no location of a recurrence with this id", strconv.FormatInt(*req.Loc, 10))
		case l.IDRec != "":
			add("rec.loc", "the location serves another recurrence", strconv.FormatInt(*req.Loc, 10))
		default:
			rc.Loc = l
		}
	}
	if a := req.Ativacao; a != nil && a.DadosJornada != nil {
		c := s.st.cobs[a.DadosJornada.TxID]
		switch {
		case c == nil:
			add("rec.ativacao.dadosJornada.txid", "no cob with this txid", a.DadosJornada.TxID)
		case c.Status != CobAtiva:
			add("rec.ativacao.dadosJornada.txid", "the cob is "+c.Status, a.DadosJornada.TxID)
		default:
			rc.TxID = c.TxID
		}
	}
	if req.Status != nil {
		add("rec.status", "status cannot be set when creating a recurrence", *req.Status)
	}
	return rc, v
}

// newIDRec is an idRec: "R", R or N (retries allowed or not), the ISPB,
// the creation date and 11 random characters.
func newIDRec(politica string, at time.Time) string {
	a := "N"
	if politica == politicaPermite {
		a = "R"
	}
	return "R" + a + ispb + at.In(saoPaulo).Format("20060102") + randomAlnum(11)
}

func (s *Server) postRec(w http.ResponseWriter, r *http.Request) {
	var req recRequest
	if !decodeBody(w, r, "RecOperacaoInvalida", &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	rc, v := s.checkRec(&req, dayOf(now))
	if len(v) > 0 {
		writeProblem(w, http.StatusBadRequest, "RecOperacaoInvalida", "Operação inválida", "the recurrence has invalid fields", v)
		return
	}
	rc.IDRec, rc.Created = newIDRec(rc.Politica, now), now
	rc.Updates = []statusAt{{RecCriada, now}}
	if rc.Loc != nil {
		rc.Loc.IDRec = rc.IDRec
	}
	s.books().recs[rc.IDRec] = rc
	writeJSON(w, http.StatusCreated, s.recJSON(rc, false, ""))
}

func (s *Server) getRec(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rc := s.books().recs[r.PathValue("idRec")]
	if rc == nil {
		writeProblem(w, http.StatusNotFound, "NaoEncontrado", "Recorrência não encontrada", "no recurrence with this idRec", nil)
		return
	}
	writeJSON(w, http.StatusOK, s.recJSON(rc, true, r.URL.Query().Get("txid")))
}

// patchRec takes the one revision pixgate makes: {"status": "CANCELADA"},
// the receiver cancelling a recurrence that is CRIADA or APROVADA.
func (s *Server) patchRec(w http.ResponseWriter, r *http.Request) {
	var req recRequest
	if !decodeBody(w, r, "RecOperacaoInvalida", &req) {
		return
	}
	if req.Status == nil || *req.Status != RecCancelada || req.Vinculo != nil || req.Calendario != nil || req.Loc != nil || req.Ativacao != nil {
		writeProblem(w, http.StatusBadRequest, "RecOperacaoInvalida", "Operação inválida", "the simulator revises only status, to CANCELADA",
			[]violacao{{Razao: "status can only be revised to CANCELADA, alone", Propriedade: "rec.status"}})
		return
	}
	s.mu.Lock()
	rc := s.books().recs[r.PathValue("idRec")]
	if rc == nil {
		s.mu.Unlock()
		writeProblem(w, http.StatusNotFound, "NaoEncontrado", "Recorrência não encontrada", "no recurrence with this idRec", nil)
		return
	}
	if rc.Status != RecCriada && rc.Status != RecAprovada {
		s.mu.Unlock()
		writeProblem(w, http.StatusBadRequest, "RecOperacaoInvalida", "Operação inválida", "the recurrence is "+rc.Status+" and can no longer be cancelled",
			[]violacao{{Razao: "only a CRIADA or APROVADA recurrence can be cancelled", Propriedade: "rec.status", Valor: rc.Status}})
		return
	}
	notes := s.cancelRec(rc, "USUARIO_RECEBEDOR", "SLCR", "Cancelamento solicitado pelo usuário recebedor")
	body := s.recJSON(rc, false, "")
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, body)
	s.deliverNotices(r.Context(), notes)
}

// cancelRec cancels rc and its cycle charges not yet debited (s.mu held).
func (s *Server) cancelRec(rc *rec, solicitante, codigo, descricao string) []notice {
	now := s.now()
	rc.Status = RecCancelada
	rc.Updates = append(rc.Updates, statusAt{RecCancelada, now})
	rc.End = &encerramento{Cancelamento: &cancelamen{Solicitante: solicitante, Codigo: codigo, Descricao: descricao}}
	notes := []notice{s.recNotice(rc)}
	cobrCode := "SLCR"
	if solicitante == "USUARIO_PAGADOR" {
		cobrCode = "SLBD"
	}
	for _, c := range s.sortedCobRs(rc.IDRec) {
		if c.Status == CobRCriada || c.Status == CobRAtiva {
			s.closeCobR(c, CobRCancelada, now)
			c.End = &encerramento{Cancelamento: &cancelamen{Solicitante: solicitante, Codigo: cobrCode, Descricao: "Recorrência cancelada"}}
			notes = append(notes, s.cobrNotice(c))
		}
	}
	return notes
}

// recJSON is a recurrence as POST and PATCH (RecGerada) or GET (RecCompleta,
// with the payer and, when it has a location, the QR code) show it.
func (s *Server) recJSON(rc *rec, complete bool, txid string) map[string]any {
	vinculo := map[string]any{"contrato": rc.Contrato, "devedor": rc.Devedor}
	if rc.Objeto != "" {
		vinculo["objeto"] = rc.Objeto
	}
	cal := map[string]any{"dataInicial": formatDay(rc.DataInicial), "periodicidade": rc.Periodicidade}
	if !rc.DataFinal.IsZero() {
		cal["dataFinal"] = formatDay(rc.DataFinal)
	}
	j := map[string]any{
		"idRec": rc.IDRec, "vinculo": vinculo, "calendario": cal, "politicaRetentativa": rc.Politica,
		"recebedor":   map[string]string{"cnpj": s.opts.CNPJ, "nome": s.opts.MerchantName},
		"status":      rc.Status,
		"atualizacao": updatesJSON(rc.Updates),
	}
	switch {
	case rc.ValorRec > 0:
		j["valor"] = map[string]string{"valorRec": formatValor(rc.ValorRec)}
	case rc.ValorMinimo > 0:
		j["valor"] = map[string]string{"valorMinimoRecebedor": formatValor(rc.ValorMinimo)}
	}
	if rc.Loc != nil {
		j["loc"] = rc.Loc.json()
	}
	if rc.End != nil {
		j["encerramento"] = rc.End
	}
	j["ativacao"] = rc.ativacaoJSON()
	if !complete {
		return j
	}
	if rc.Status == RecAprovada || rc.Status == RecCancelada && rc.Jornada != "AGUARDANDO_DEFINICAO" {
		p := map[string]string{"ispbParticipante": ispb, "codMun": simCodMun}
		if rc.Devedor.CPF != "" {
			p["cpf"] = rc.Devedor.CPF
		} else {
			p["cnpj"] = rc.Devedor.CNPJ
		}
		j["pagador"] = p
	}
	if qr, jornada := s.recQR(rc, txid); qr != "" {
		j["dadosQR"] = map[string]string{"jornada": jornada, "pixCopiaECola": qr}
	}
	return j
}

func (rc *rec) ativacaoJSON() map[string]any {
	a := map[string]any{"tipoJornada": rc.Jornada}
	if rc.TxID != "" {
		a["dadosJornada"] = map[string]string{"txid": rc.TxID}
	}
	return a
}

// recQR is the composite QR code of a recurrence with a location: alone
// (journey 2), or after the cob txid's (journey 3). "" when the locations
// needed are missing.
func (s *Server) recQR(rc *rec, txid string) (string, string) {
	if rc.Loc == nil {
		return "", ""
	}
	rec80 := brcode.Field{ID: "80", Sub: []brcode.Field{{ID: "00", Value: brcode.GUI}, {ID: "25", Value: rc.Loc.Location}}}
	if txid != "" {
		c := s.st.cobs[txid]
		if c == nil {
			return "", ""
		}
		code, err := brcode.Parse(c.BRCode)
		if err != nil {
			return "", ""
		}
		code.Fields = slices.DeleteFunc(code.Fields, func(f brcode.Field) bool { return f.ID == "63" })
		code.Fields = append(code.Fields, rec80)
		return code.String(), "JORNADA_3"
	}
	name := brcode.Sanitize(s.opts.MerchantName, brcode.MaxMerchantName)
	city := brcode.Sanitize(s.opts.MerchantCity, brcode.MaxMerchantCity)
	c := brcode.Code{Fields: []brcode.Field{
		{ID: "00", Value: "01"},
		{ID: "26", Sub: []brcode.Field{{ID: "00", Value: brcode.GUI}}},
		{ID: "52", Value: "0000"},
		{ID: "53", Value: "986"},
		{ID: "58", Value: "BR"},
		{ID: "59", Value: name},
		{ID: "60", Value: city},
		{ID: "62", Sub: []brcode.Field{{ID: "05", Value: "***"}}},
		rec80,
	}}
	return c.String(), "JORNADA_2"
}

// listQuery reads inicio, fim and the page of a list request, or answers
// 400 with the problem type problem and returns false.
func listQuery(w http.ResponseWriter, r *http.Request, problem string) (inicio, fim time.Time, page, perPage int, ok bool) {
	q := r.URL.Query()
	var v []violacao
	parseTime := func(name string) time.Time {
		t, err := time.Parse(time.RFC3339Nano, q.Get(name))
		if err != nil {
			v = append(v, violacao{Razao: name + " is required, an RFC 3339 date-time", Propriedade: name, Valor: q.Get(name)})
		}
		return t
	}
	parseInt := func(name string, def, lo, hi int) int {
		raw := q.Get(name)
		if raw == "" {
			return def
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < lo || n > hi {
			v = append(v, violacao{Razao: fmt.Sprintf("%s must be an integer from %d to %d", name, lo, hi), Propriedade: name, Valor: raw})
		}
		return n
	}
	inicio, fim = parseTime("inicio"), parseTime("fim")
	page = parseInt("paginacao.paginaAtual", 0, 0, 1<<30)
	perPage = parseInt("paginacao.itensPorPagina", 100, 1, 1000)
	if len(v) == 0 && fim.Before(inicio) {
		v = append(v, violacao{Razao: "fim is before inicio", Propriedade: "fim", Valor: q.Get("fim")})
	}
	if len(v) > 0 {
		writeProblem(w, http.StatusBadRequest, problem, "Consulta inválida", "invalid query parameters", v)
		return inicio, fim, 0, 0, false
	}
	return inicio, fim, page, perPage, true
}

// writeList answers one page of items under key.
func writeList[T any](w http.ResponseWriter, key string, inicio, fim time.Time, page, perPage int, all []T) {
	items := []T{}
	for i := page * perPage; i < len(all) && i < (page+1)*perPage; i++ {
		items = append(items, all[i])
	}
	total := len(all)
	writeJSON(w, http.StatusOK, map[string]any{
		"parametros": map[string]any{
			"inicio": formatTime(inicio), "fim": formatTime(fim),
			"paginacao": map[string]int{"paginaAtual": page, "itensPorPagina": perPage,
				"quantidadeDePaginas": max((total+perPage-1)/perPage, 1), "quantidadeTotalDeItens": total},
		},
		key: items,
	})
}

// listRecs is GET /rec: the recurrences with a status change in [inicio,
// fim], oldest first, one page.
func (s *Server) listRecs(w http.ResponseWriter, r *http.Request) {
	inicio, fim, page, perPage, ok := listQuery(w, r, "ConsultaInvalida")
	if !ok {
		return
	}
	status := r.URL.Query().Get("status")
	s.mu.Lock()
	var matched []*rec
	for _, rc := range s.books().recs {
		if changedIn(rc.Updates, inicio, fim) && (status == "" || rc.Status == status) {
			matched = append(matched, rc)
		}
	}
	slices.SortFunc(matched, func(a, b *rec) int { return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.IDRec, b.IDRec)) })
	all := make([]map[string]any, len(matched))
	for i, rc := range matched {
		all[i] = s.recJSON(rc, true, "")
		delete(all[i], "dadosQR") // RecCompletaPesquisada has none
	}
	s.mu.Unlock()
	writeList(w, "recs", inicio, fim, page, perPage, all)
}

// --- cycle charges ---

// cobrRequest is the body of PUT and PATCH /cobr/{txid}.
type cobrRequest struct {
	IDRec      *string `json:"idRec"`
	Calendario *struct {
		DataDeVencimento *string `json:"dataDeVencimento"`
	} `json:"calendario"`
	Valor *struct {
		Original *string `json:"original"`
	} `json:"valor"`
	AjusteDiaUtil *bool          `json:"ajusteDiaUtil"`
	Devedor       *cobrDevedor   `json:"devedor"`
	Recebedor     *cobrRecebedor `json:"recebedor"`
	InfoAdicional *string        `json:"infoAdicional"`
	Status        *string        `json:"status"`
}

var tiposConta = map[string]bool{"CORRENTE": true, "POUPANCA": true, "PAGAMENTO": true}

func (s *Server) putCobR(w http.ResponseWriter, r *http.Request) {
	txid := r.PathValue("txid")
	if !isAlnum(txid, 26, 35) {
		writeProblem(w, http.StatusBadRequest, "CobROperacaoInvalida", "Operação inválida", "txid must be 26 to 35 of [a-zA-Z0-9]",
			[]violacao{{Razao: "txid must match ^[a-zA-Z0-9]{26,35}$", Propriedade: "cobr.txid", Valor: txid}})
		return
	}
	var req cobrRequest
	if !decodeBody(w, r, "CobROperacaoInvalida", &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	today := dayOf(now)
	b := s.books()
	var v []violacao
	add := func(prop, reason, val string) { v = append(v, violacao{Razao: reason, Propriedade: prop, Valor: val}) }
	c := &cobr{TxID: txid, Created: now, Status: CobRCriada}
	var rc *rec
	switch {
	case req.IDRec == nil:
		add("cobr.idRec", "idRec is required", "")
	case b.recs[*req.IDRec] == nil:
		add("cobr.idRec", "no recurrence with this idRec", *req.IDRec)
	case b.recs[*req.IDRec].Status != RecAprovada:
		add("cobr.idRec", "the recurrence is "+b.recs[*req.IDRec].Status+", not APROVADA", *req.IDRec)
	default:
		rc = b.recs[*req.IDRec]
		c.IDRec = rc.IDRec
	}
	if req.Calendario == nil || req.Calendario.DataDeVencimento == nil {
		add("cobr.calendario.dataDeVencimento", "dataDeVencimento is required", "")
	} else if d, ok := parseDay(*req.Calendario.DataDeVencimento); !ok {
		add("cobr.calendario.dataDeVencimento", "dataDeVencimento must be a date YYYY-MM-DD", *req.Calendario.DataDeVencimento)
	} else if lead := int(d.Sub(today).Hours() / 24); lead < cobrMinLeadDays || lead > cobrMaxLeadDays {
		add("cobr.calendario.dataDeVencimento", fmt.Sprintf("a cobr is created %d to %d days before its due date", cobrMinLeadDays, cobrMaxLeadDays),
			*req.Calendario.DataDeVencimento)
	} else {
		c.Vencimento = d
	}
	if req.Valor == nil || req.Valor.Original == nil {
		add("cobr.valor.original", "valor.original is required", "")
	} else if n, ok := parseValor(*req.Valor.Original); !ok || n <= 0 {
		add("cobr.valor.original", `valor.original must match ^\d{1,10}\.\d{2}$ and be above 0.00`, *req.Valor.Original)
	} else if rc != nil && rc.ValorRec > 0 && n != rc.ValorRec {
		add("cobr.valor.original", "the recurrence's value is fixed at "+formatValor(rc.ValorRec), *req.Valor.Original)
	} else if rc != nil && n < rc.ValorMinimo {
		add("cobr.valor.original", "below the recurrence's minimum "+formatValor(rc.ValorMinimo), *req.Valor.Original)
	} else {
		c.Valor = n
	}
	if req.AjusteDiaUtil == nil {
		add("cobr.ajusteDiaUtil", "ajusteDiaUtil is required", "")
	} else {
		c.Ajuste = *req.AjusteDiaUtil
	}
	if rb := req.Recebedor; rb == nil || rb.Conta == "" || len(rb.Conta) > 20 || !tiposConta[rb.TipoConta] || len(rb.Agencia) > 4 {
		add("cobr.recebedor", "recebedor needs conta (at most 20), tipoConta (CORRENTE, POUPANCA or PAGAMENTO) and at most 4 characters of agencia", "")
	} else {
		c.Recebedor = *rb
	}
	if d := req.Devedor; d != nil {
		if utf8.RuneCountInString(d.Logradouro) > 200 || utf8.RuneCountInString(d.Cidade) > 200 || len(d.UF) > 2 || len(d.CEP) > 8 {
			add("cobr.devedor", "logradouro and cidade are at most 200 characters, uf 2, cep 8", "")
		}
		c.Devedor = d
	}
	if req.InfoAdicional != nil {
		if utf8.RuneCountInString(*req.InfoAdicional) > 140 {
			add("cobr.infoAdicional", "infoAdicional is at most 140 characters", "")
		}
		c.Info = *req.InfoAdicional
	}
	if req.Status != nil {
		add("cobr.status", "status cannot be set when creating a cobr", *req.Status)
	}
	if b.cobrs[txid] != nil {
		add("cobr.txid", "a cobr with this txid already exists", txid)
	}
	if len(v) > 0 {
		writeProblem(w, http.StatusBadRequest, "CobROperacaoInvalida", "Operação inválida", "the cobr has invalid fields", v)
		return
	}
	settle := c.Vencimento
	if c.Ajuste {
		settle = nextBusinessDay(settle)
	}
	c.Updates = []statusAt{{CobRCriada, now}}
	c.Tentativas = []*tentativa{{Data: settle, Tipo: tentAGND, Status: tentSolicitada, E2EID: newE2EID("E", now),
		Updates: []statusAt{{tentSolicitada, now}}}}
	b.cobrs[txid] = c
	writeJSON(w, http.StatusCreated, s.cobrJSON(c, true))
}

func (s *Server) getCobR(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.books().cobrs[r.PathValue("txid")]
	if c == nil {
		writeProblem(w, http.StatusNotFound, "NaoEncontrado", "Cobrança não encontrada", "no cobr with this txid", nil)
		return
	}
	writeJSON(w, http.StatusOK, s.cobrJSON(c, false))
}

// patchCobR takes {"status": "CANCELADA"}: the receiver cancels a cobr
// before the day of its first attempt.
func (s *Server) patchCobR(w http.ResponseWriter, r *http.Request) {
	var req cobrRequest
	if !decodeBody(w, r, "CobROperacaoInvalida", &req) {
		return
	}
	if req.Status == nil || *req.Status != CobRCancelada || req.IDRec != nil || req.Calendario != nil || req.Valor != nil || req.Devedor != nil {
		writeProblem(w, http.StatusBadRequest, "CobROperacaoInvalida", "Operação inválida", "a cobr can only be revised to CANCELADA",
			[]violacao{{Razao: "status can only be revised to CANCELADA, alone", Propriedade: "cobr.status"}})
		return
	}
	s.mu.Lock()
	c := s.books().cobrs[r.PathValue("txid")]
	if c == nil {
		s.mu.Unlock()
		writeProblem(w, http.StatusNotFound, "NaoEncontrado", "Cobrança não encontrada", "no cobr with this txid", nil)
		return
	}
	now := s.now()
	if (c.Status != CobRCriada && c.Status != CobRAtiva) || !dayOf(now).Before(c.Tentativas[0].Data) {
		s.mu.Unlock()
		writeProblem(w, http.StatusBadRequest, "CobROperacaoInvalida", "Operação inválida",
			"Não é possível cancelar uma cobrança em uma data igual ou maior que a data prevista da primeira tentativa de liquidação.",
			[]violacao{{Razao: "only a CRIADA or ATIVA cobr can be cancelled, before its first attempt's day", Propriedade: "cobr.status", Valor: c.Status}})
		return
	}
	s.closeCobR(c, CobRCancelada, now)
	c.End = &encerramento{Cancelamento: &cancelamen{Solicitante: "USUARIO_RECEBEDOR", Codigo: "SLCR", Descricao: "Cancelamento solicitado pelo usuário recebedor"}}
	body := s.cobrJSON(c, true)
	notes := []notice{s.cobrNotice(c)}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, body)
	s.deliverNotices(r.Context(), notes)
}

// closeCobR ends c in status, cancelling the attempt still scheduled
// (s.mu held).
func (s *Server) closeCobR(c *cobr, status string, now time.Time) {
	c.Status = status
	c.Updates = append(c.Updates, statusAt{status, now})
	if t := c.pending(); t != nil {
		t.Status = tentCancelada
		t.Updates = append(t.Updates, statusAt{tentCancelada, now})
	}
}

// pending is c's attempt still to be settled, or nil.
func (c *cobr) pending() *tentativa {
	if n := len(c.Tentativas); n > 0 {
		if t := c.Tentativas[n-1]; t.Status == tentSolicitada || t.Status == tentAgendada {
			return t
		}
	}
	return nil
}

func (c *cobr) retries() int {
	n := 0
	for _, t := range c.Tentativas {
		if t.Tipo == tentNTAG {
			n++
		}
	}
	return n
}

// retryCobR is POST /cobr/{txid}/retentativa/{data}: under PERMITE_3R_7D,
// after a rejected attempt, a new one on data, within 7 days of the first
// attempt (the due date, or the business day it moved to), at most 3.
func (s *Server) retryCobR(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	b := s.books()
	c := b.cobrs[r.PathValue("txid")]
	if c == nil {
		s.mu.Unlock()
		writeProblem(w, http.StatusNotFound, "NaoEncontrado", "Cobrança não encontrada", "no cobr with this txid", nil)
		return
	}
	now := s.now()
	raw := r.PathValue("data")
	d, ok := parseDay(raw)
	var reason string
	rc := b.recs[c.IDRec]
	switch {
	case !ok:
		reason = "data must be a date YYYY-MM-DD"
	case rc == nil || rc.Politica != politicaPermite:
		reason = "A política configurada na recorrência não permite retentativa de cobrança."
	case c.Status != CobRAtiva:
		reason = "the cobr is " + c.Status
	case c.pending() != nil:
		reason = "an attempt is still scheduled"
	case c.retries() >= maxRetries:
		reason = fmt.Sprintf("the %d retries have been made", maxRetries)
	case d.Before(dayOf(now)) || !d.After(c.Tentativas[len(c.Tentativas)-1].Data) || d.After(c.Tentativas[0].Data.AddDate(0, 0, retryWindowDays)):
		reason = fmt.Sprintf("data must be today or later, after the last attempt and within %d days of the first", retryWindowDays)
	}
	if reason != "" {
		s.mu.Unlock()
		writeProblem(w, http.StatusBadRequest, "CobROperacaoInvalida", "Operação inválida", reason,
			[]violacao{{Razao: reason, Propriedade: "cobr.tentativas", Valor: raw}})
		return
	}
	t := &tentativa{Data: d, Tipo: tentNTAG, Status: tentSolicitada, E2EID: newE2EID("E", now), Updates: []statusAt{{tentSolicitada, now}}}
	c.Tentativas = append(c.Tentativas, t)
	body := s.cobrJSON(c, false)
	notes := []notice{s.cobrNotice(c)}
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, body)
	s.deliverNotices(r.Context(), notes)
}

// listCobRs is GET /cobr: the cobrs with a change of status, or of an
// attempt's, in [inicio, fim], oldest first, one page; optionally of one
// idRec or status.
func (s *Server) listCobRs(w http.ResponseWriter, r *http.Request) {
	inicio, fim, page, perPage, ok := listQuery(w, r, "ConsultaInvalida")
	if !ok {
		return
	}
	q := r.URL.Query()
	idRec, status := q.Get("idRec"), q.Get("status")
	s.mu.Lock()
	var matched []*cobr
	for _, c := range s.books().cobrs {
		if (idRec != "" && c.IDRec != idRec) || (status != "" && c.Status != status) {
			continue
		}
		hit := changedIn(c.Updates, inicio, fim)
		for _, t := range c.Tentativas {
			hit = hit || changedIn(t.Updates, inicio, fim)
		}
		if hit {
			matched = append(matched, c)
		}
	}
	slices.SortFunc(matched, func(a, b *cobr) int { return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.TxID, b.TxID)) })
	all := make([]map[string]any, len(matched))
	for i, c := range matched {
		all[i] = s.cobrJSON(c, false)
	}
	s.mu.Unlock()
	writeList(w, "cobsr", inicio, fim, page, perPage, all)
}

// sortedCobRs are the cobrs of idRec, oldest first (s.mu held).
func (s *Server) sortedCobRs(idRec string) []*cobr {
	var out []*cobr
	for _, c := range s.books().cobrs {
		if c.IDRec == idRec {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b *cobr) int { return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.TxID, b.TxID)) })
	return out
}

func (t *tentativa) json() map[string]any {
	j := map[string]any{"dataLiquidacao": formatDay(t.Data), "tipo": t.Tipo, "status": t.Status, "endToEndId": t.E2EID,
		"atualizacao": updatesJSON(t.Updates)}
	if t.Rejeicao != nil {
		j["rejeicao"] = t.Rejeicao
	}
	return j
}

// cobrJSON is a cobr as PUT and PATCH (CobRGerada, created) or GET
// (CobRCompleta) show it.
func (s *Server) cobrJSON(c *cobr, created bool) map[string]any {
	rc := s.books().recs[c.IDRec]
	recebedor := map[string]string{"conta": c.Recebedor.Conta, "tipoConta": c.Recebedor.TipoConta}
	if c.Recebedor.Agencia != "" {
		recebedor["agencia"] = c.Recebedor.Agencia
	}
	if created {
		recebedor["cnpj"], recebedor["nome"] = s.opts.CNPJ, s.opts.MerchantName
	}
	j := map[string]any{
		"idRec": c.IDRec, "txid": c.TxID,
		"calendario":    map[string]string{"criacao": formatDay(dayOf(c.Created)), "dataDeVencimento": formatDay(c.Vencimento)},
		"valor":         map[string]string{"original": formatValor(c.Valor)},
		"ajusteDiaUtil": c.Ajuste,
		"status":        c.Status,
		"recebedor":     recebedor,
		"atualizacao":   updatesJSON(c.Updates),
	}
	if rc != nil {
		j["politicaRetentativa"] = rc.Politica
	}
	if c.Info != "" {
		j["infoAdicional"] = c.Info
	}
	if c.Devedor != nil {
		j["devedor"] = c.Devedor
	}
	if c.End != nil {
		j["encerramento"] = c.End
	}
	if len(c.Tentativas) > 0 {
		ts := make([]map[string]any, len(c.Tentativas))
		for i, t := range c.Tentativas {
			ts[i] = t.json()
		}
		j["tentativas"] = ts
	}
	if len(c.Pix) > 0 {
		ps := make([]pixJSON, len(c.Pix))
		for i, p := range c.Pix {
			ps[i] = p.json()
		}
		j["pix"] = ps
	}
	return j
}

// --- webhooks of recurrences and cycle charges ---

func (s *Server) hookOf(kind string) **webhookReg {
	b := s.books()
	if kind == "rec" {
		return &b.hookRec
	}
	return &b.hookCobr
}

func (s *Server) putHook(w http.ResponseWriter, r *http.Request, kind string) {
	var req struct {
		WebhookURL string `json:"webhookUrl"`
	}
	if !decodeBody(w, r, "WebhookOperacaoInvalida", &req) {
		return
	}
	u, err := url.Parse(req.WebhookURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		writeProblem(w, http.StatusBadRequest, "WebhookOperacaoInvalida", "Webhook inválido", "webhookUrl must be an absolute http(s) URL",
			[]violacao{{Razao: "webhookUrl must be an absolute URL", Propriedade: "webhookUrl", Valor: req.WebhookURL}})
		return
	}
	s.mu.Lock()
	*s.hookOf(kind) = &webhookReg{URL: req.WebhookURL, Created: s.now(), SkipMTLS: r.Header.Get("x-skip-mtls-checking") == "true"}
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (s *Server) getHook(w http.ResponseWriter, kind string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	wh := *s.hookOf(kind)
	if wh == nil {
		writeProblem(w, http.StatusNotFound, "WebhookNaoEncontrado", "Webhook não encontrado", "no webhook"+kind+" registered", nil)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"webhookUrl": wh.URL, "criacao": formatTime(wh.Created)})
}

func (s *Server) deleteHook(w http.ResponseWriter, kind string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hookOf(kind)
	if *h == nil {
		writeProblem(w, http.StatusNotFound, "WebhookNaoEncontrado", "Webhook não encontrado", "no webhook"+kind+" registered", nil)
		return
	}
	*h = nil
	w.WriteHeader(http.StatusNoContent)
}

// recNotice is rc's notification (RecNotification), s.mu held.
func (s *Server) recNotice(rc *rec) notice {
	j := map[string]any{"idRec": rc.IDRec, "status": rc.Status, "atualizacao": updatesJSON(rc.Updates), "ativacao": rc.ativacaoJSON()}
	if rc.End != nil {
		j["encerramento"] = rc.End
	}
	return notice{kind: "rec", id: rc.IDRec, item: j}
}

// cobrNotice is c's notification (CobRNotification), s.mu held.
func (s *Server) cobrNotice(c *cobr) notice {
	j := s.cobrJSON(c, false)
	for _, k := range []string{"calendario", "valor", "ajusteDiaUtil", "recebedor", "devedor", "politicaRetentativa", "infoAdicional"} {
		delete(j, k)
	}
	return notice{kind: "cobr", id: c.TxID, item: j}
}

// deliverNotices posts each notice to its registered webhook, once: recs
// to <webhookrec URL>/rec as {"recs": […]}, cobrs to <webhookcobr
// URL>/cobr as {"cobsr": […]}, one item a POST. Like Pix webhooks they may
// be lost on purpose (LoseWebhooks) and are logged in Deliveries.
func (s *Server) deliverNotices(ctx context.Context, notes []notice) {
	for _, n := range notes {
		s.mu.Lock()
		wh := *s.hookOf(n.kind)
		s.mu.Unlock()
		key := "recs"
		if n.kind == "cobr" {
			key = "cobsr"
		}
		s.post(ctx, wh, n.kind, Delivery{IDs: []string{n.id}}, map[string]any{key: []any{n.item}})
	}
}

// --- the payer's side: control actions and settlement ---

// Errors of the recurrence control actions.
var (
	// ErrUnknownRec: no recurrence has that idRec.
	ErrUnknownRec = errors.New("pspsim: no recurrence with this idRec")
	// ErrUnknownCobR: no cobr has that txid.
	ErrUnknownCobR = errors.New("pspsim: no cobr with this txid")
	// ErrRecState: the recurrence or cobr is not in a state that allows it.
	ErrRecState = errors.New("pspsim: not allowed in this state")
)

// ApproveRec has the payer approve the CRIADA recurrence idRec at their
// bank: journey 3 when it names a cob (the cob is paid first, its Pix
// reported like any other), journey 2 otherwise. The notifications are
// delivered before it returns; it returns the Pix's end-to-end id in
// journey 3, "" in journey 2.
func (s *Server) ApproveRec(ctx context.Context, idRec string) (string, error) {
	s.mu.Lock()
	rc := s.books().recs[idRec]
	if rc == nil {
		s.mu.Unlock()
		return "", fmt.Errorf("%w: %s", ErrUnknownRec, idRec)
	}
	if rc.Status != RecCriada {
		s.mu.Unlock()
		return "", fmt.Errorf("%w: the recurrence is %s", ErrRecState, rc.Status)
	}
	now := s.now()
	var items []pixJSON
	var e2eid string
	rc.Jornada = "JORNADA_2"
	if rc.TxID != "" {
		c := s.st.cobs[rc.TxID]
		if c == nil || c.Status != CobAtiva || !now.Before(c.Created.Add(time.Duration(c.Expiracao)*time.Second)) {
			s.mu.Unlock()
			return "", fmt.Errorf("%w: the first payment's cob %s can no longer be paid", ErrRecState, rc.TxID)
		}
		p := &pixRec{E2EID: newE2EID("E", now), TxID: c.TxID, Valor: c.Valor, Chave: c.Chave, Horario: now, InfoPagador: "pago pelo simulador"}
		c.Status = CobConcluida
		c.Pix = append(c.Pix, p)
		items = append(items, s.record(p))
		e2eid = p.E2EID
		rc.Jornada = "JORNADA_3"
	}
	rc.Status = RecAprovada
	rc.Updates = append(rc.Updates, statusAt{RecAprovada, now})
	notes := []notice{s.recNotice(rc)}
	s.mu.Unlock()
	if len(items) > 0 {
		s.deliver(ctx, items)
	}
	s.deliverNotices(ctx, notes)
	return e2eid, nil
}

// RejectRec has the payer reject the CRIADA recurrence idRec.
func (s *Server) RejectRec(ctx context.Context, idRec string) error {
	s.mu.Lock()
	rc := s.books().recs[idRec]
	switch {
	case rc == nil:
		s.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrUnknownRec, idRec)
	case rc.Status != RecCriada:
		s.mu.Unlock()
		return fmt.Errorf("%w: the recurrence is %s", ErrRecState, rc.Status)
	}
	rc.Status = RecRejeitada
	rc.Updates = append(rc.Updates, statusAt{RecRejeitada, s.now()})
	rc.End = &encerramento{Rejeicao: &codeText{Codigo: "AP13", Descricao: "Rejeitada pelo usuário pagador"}}
	notes := []notice{s.recNotice(rc)}
	s.mu.Unlock()
	s.deliverNotices(ctx, notes)
	return nil
}

// CancelRecByPayer has the payer cancel the APROVADA recurrence idRec at
// their bank; its cobrs not yet debited are cancelled with it.
func (s *Server) CancelRecByPayer(ctx context.Context, idRec string) error {
	s.mu.Lock()
	rc := s.books().recs[idRec]
	switch {
	case rc == nil:
		s.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrUnknownRec, idRec)
	case rc.Status != RecAprovada:
		s.mu.Unlock()
		return fmt.Errorf("%w: the recurrence is %s", ErrRecState, rc.Status)
	}
	notes := s.cancelRec(rc, "USUARIO_PAGADOR", "SLDB", "Cancelamento solicitado pelo usuário pagador")
	s.mu.Unlock()
	s.deliverNotices(ctx, notes)
	return nil
}

// DebitCobR settles the attempt of the cobr txid still scheduled now,
// whatever its day: the payer's bank debits it, the cobr is CONCLUIDA and
// its Pix is recorded (GET /pix lists it). It returns the Pix's
// end-to-end id.
func (s *Server) DebitCobR(ctx context.Context, txid string) (string, error) {
	return s.settleAttempt(ctx, txid, true)
}

// FailCobR fails the attempt of the cobr txid still scheduled now, with
// FailDebitCode: under PERMITE_3R_7D the cobr stays ATIVA for a retry
// (until its retries or days run out); otherwise it is EXPIRADA.
func (s *Server) FailCobR(ctx context.Context, txid string) error {
	_, err := s.settleAttempt(ctx, txid, false)
	return err
}

func (s *Server) settleAttempt(ctx context.Context, txid string, pay bool) (string, error) {
	s.mu.Lock()
	c := s.books().cobrs[txid]
	if c == nil {
		s.mu.Unlock()
		return "", fmt.Errorf("%w: %s", ErrUnknownCobR, txid)
	}
	t := c.pending()
	if t == nil || (c.Status != CobRAtiva && c.Status != CobRCriada) {
		s.mu.Unlock()
		return "", fmt.Errorf("%w: the cobr is %s with no attempt scheduled", ErrRecState, c.Status)
	}
	if c.Status == CobRCriada {
		s.activate(c)
	}
	s.settleTentativa(c, t, pay)
	notes := []notice{s.cobrNotice(c)}
	s.mu.Unlock()
	s.deliverNotices(ctx, notes)
	return t.E2EID, nil
}

// activate makes a CRIADA cobr ATIVA, its attempt AGENDADA: the payer's
// bank accepted the schedule (s.mu held).
func (s *Server) activate(c *cobr) {
	now := s.now()
	c.Status = CobRAtiva
	c.Updates = append(c.Updates, statusAt{CobRAtiva, now})
	if t := c.pending(); t != nil && t.Status == tentSolicitada {
		t.Status = tentAgendada
		t.Updates = append(t.Updates, statusAt{tentAgendada, now})
	}
}

// settleTentativa pays or fails t, c's scheduled attempt (s.mu held). A
// debit's Pix is recorded (GET /pix/{e2eid} and GET /pix show it) and
// reported with the cobr's notification, not to the Pix webhook.
func (s *Server) settleTentativa(c *cobr, t *tentativa, pay bool) {
	now := s.now()
	if pay {
		t.Status = tentPaga
		t.Updates = append(t.Updates, statusAt{tentPaga, now})
		p := &pixRec{E2EID: t.E2EID, TxID: c.TxID, Valor: c.Valor, Chave: s.opts.PixKey, Horario: now, InfoPagador: "Pix Automático"}
		c.Pix = append(c.Pix, p)
		c.Status = CobRConcluida
		c.Updates = append(c.Updates, statusAt{CobRConcluida, now})
		s.record(p)
		return
	}
	t.Status = tentRejeitada
	t.Updates = append(t.Updates, statusAt{tentRejeitada, now})
	t.Rejeicao = &codeText{Codigo: FailDebitCode, Descricao: "Débito recusado pelo simulador"}
	rc := s.books().recs[c.IDRec]
	if rc == nil || rc.Politica != politicaPermite || c.retries() >= maxRetries {
		c.Status = CobRExpirada
		c.Updates = append(c.Updates, statusAt{CobRExpirada, now})
	}
}

// settleRecs moves what time moves (s.mu taken here): CRIADA recurrences
// older than RecApprovalWindow expire; CRIADA cobrs become ATIVA; an
// attempt whose day has come is debited; a cobr under PERMITE_3R_7D whose
// retry window (7 days from its first attempt) has passed with no attempt
// scheduled expires.
func (s *Server) settleRecs() []notice {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.recs == nil {
		return nil
	}
	now := s.now()
	today := dayOf(now)
	b := s.books()
	var notes []notice
	for _, rc := range b.recs {
		if rc.Status == RecCriada && !now.Before(rc.Created.Add(RecApprovalWindow)) {
			rc.Status = RecExpirada
			rc.Updates = append(rc.Updates, statusAt{RecExpirada, now})
			notes = append(notes, s.recNotice(rc))
		}
	}
	for _, c := range b.cobrs {
		changed := false
		if c.Status == CobRCriada {
			s.activate(c)
			changed = true
		}
		if c.Status == CobRAtiva {
			if t := c.pending(); t != nil {
				if t.Status == tentSolicitada {
					t.Status = tentAgendada
					t.Updates = append(t.Updates, statusAt{tentAgendada, now})
					changed = true
				}
				if !today.Before(t.Data) {
					s.settleTentativa(c, t, true)
					changed = true
				}
			} else if today.After(c.Tentativas[0].Data.AddDate(0, 0, retryWindowDays)) {
				c.Status = CobRExpirada
				c.Updates = append(c.Updates, statusAt{CobRExpirada, now})
				changed = true
			}
		}
		if changed {
			notes = append(notes, s.cobrNotice(c))
		}
	}
	return notes
}

// --- control API ---

// recControl adds to the control API:
//
//	POST /sim/rec/{idRec}/approve          the payer approves (pays the
//	                                       journey-3 cob) → {"endToEndId": …}
//	POST /sim/rec/{idRec}/reject           the payer rejects
//	POST /sim/rec/{idRec}/cancel-by-payer  the payer cancels
//	POST /sim/cobr/{txid}/debit            the scheduled attempt is debited now
//	POST /sim/cobr/{txid}/fail             the scheduled attempt fails now
func (s *Server) recControl(mux *http.ServeMux) {
	answer := func(w http.ResponseWriter, err error, ok map[string]string) {
		switch {
		case errors.Is(err, ErrUnknownRec), errors.Is(err, ErrUnknownCobR):
			writeProblem(w, http.StatusNotFound, "NaoEncontrado", "Não encontrado", err.Error(), nil)
		case err != nil:
			writeProblem(w, http.StatusConflict, "OperacaoInvalida", "Operação inválida", err.Error(), nil)
		default:
			writeJSON(w, http.StatusOK, ok)
		}
	}
	mux.HandleFunc("POST /sim/rec/{idRec}/approve", func(w http.ResponseWriter, r *http.Request) {
		e2eid, err := s.ApproveRec(r.Context(), r.PathValue("idRec"))
		answer(w, err, map[string]string{"idRec": r.PathValue("idRec"), "status": RecAprovada, "endToEndId": e2eid})
	})
	mux.HandleFunc("POST /sim/rec/{idRec}/reject", func(w http.ResponseWriter, r *http.Request) {
		answer(w, s.RejectRec(r.Context(), r.PathValue("idRec")), map[string]string{"idRec": r.PathValue("idRec"), "status": RecRejeitada})
	})
	mux.HandleFunc("POST /sim/rec/{idRec}/cancel-by-payer", func(w http.ResponseWriter, r *http.Request) {
		answer(w, s.CancelRecByPayer(r.Context(), r.PathValue("idRec")), map[string]string{"idRec": r.PathValue("idRec"), "status": RecCancelada})
	})
	mux.HandleFunc("POST /sim/cobr/{txid}/debit", func(w http.ResponseWriter, r *http.Request) {
		e2eid, err := s.DebitCobR(r.Context(), r.PathValue("txid"))
		answer(w, err, map[string]string{"txid": r.PathValue("txid"), "status": CobRConcluida, "endToEndId": e2eid})
	})
	mux.HandleFunc("POST /sim/cobr/{txid}/fail", func(w http.ResponseWriter, r *http.Request) {
		answer(w, s.FailCobR(r.Context(), r.PathValue("txid")), map[string]string{"txid": r.PathValue("txid")})
	})
}
