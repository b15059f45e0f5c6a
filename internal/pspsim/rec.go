package pspsim

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/pixgate/pixgate/internal/brcode"
)

// This file and the next two simulate Pix Automático's receiving side
// (BACEN's tags PayloadLocationRec, Rec, CobR, WebhookRec and WebhookCobR):
// here the locations of recurrences and the recurrences; in cobr.go the
// cycle charges, debited on their settlement day (or failed, on request)
// and retried; in recpayer.go what the payer does at their bank (control
// actions). Both kinds notify their own webhook (webhook.go).

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
		api.HandleFunc("DELETE /v2/webhook"+kind, func(w http.ResponseWriter, r *http.Request) { s.unregister(w, kind, "") })
	}
}

func (s *Server) postLocRec(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.books()
	l := &locRec{Created: s.now()}
	l.ID, l.Location = s.newLocation("/qr/v2/rec/")
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

// locRecKind is what GET /locrec/{id} answers.
var locRecKind = resource{missing: "NaoEncontrado", missingTitle: "Não encontrado", missingDetail: "no location of a recurrence with this id"}

func (s *Server) getLocRec(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	show(s, w, locRecKind, func() *locRec {
		if err != nil {
			return nil
		}
		return s.books().locs[id]
	}, (*locRec).json)
}

// recRequest is the body of POST /rec; pointers tell an absent field from
// an empty one.
type recRequest struct {
	Vinculo             *recVinculo    `json:"vinculo"`
	Calendario          *recCalendario `json:"calendario"`
	Valor               *recValor      `json:"valor"`
	PoliticaRetentativa *string        `json:"politicaRetentativa"`
	Loc                 *int64         `json:"loc"`
	Ativacao            *struct {
		DadosJornada *struct {
			TxID string `json:"txid"`
		} `json:"dadosJornada"`
	} `json:"ativacao"`
	Status *string `json:"status"`
}

type recVinculo struct {
	Contrato *string    `json:"contrato"`
	Objeto   *string    `json:"objeto"`
	Devedor  recDevedor `json:"devedor"`
}

type recCalendario struct {
	DataInicial   *string `json:"dataInicial"`
	DataFinal     *string `json:"dataFinal"`
	Periodicidade *string `json:"periodicidade"`
}

type recValor struct {
	ValorRec    *string `json:"valorRec"`
	ValorMinimo *string `json:"valorMinimoRecebedor"`
}

var periodicidades = map[string]bool{"SEMANAL": true, "MENSAL": true, "TRIMESTRAL": true, "SEMESTRAL": true, "ANUAL": true}

// checkRec returns a recurrence from req, or the violations (s.mu held).
func (s *Server) checkRec(req *recRequest, today day) (*rec, violations) {
	var v violations
	rc := &rec{Status: RecCriada, Jornada: "AGUARDANDO_DEFINICAO"}
	rc.takeVinculo(req.Vinculo, &v)
	rc.takeCalendario(req.Calendario, today, &v)
	rc.takeValor(req.Valor, &v)
	switch p := req.PoliticaRetentativa; {
	case p == nil:
		v.add("rec.politicaRetentativa", "politicaRetentativa is required", "")
	case *p != politicaNaoPermite && *p != politicaPermite:
		v.add("rec.politicaRetentativa", "politicaRetentativa must be NAO_PERMITE or PERMITE_3R_7D", *p)
	default:
		rc.Politica = *p
	}
	s.linkRec(rc, req, &v)
	if req.Status != nil {
		v.add("rec.status", "status cannot be set when creating a recurrence", *req.Status)
	}
	return rc, v
}

// takeVinculo reads the contract and the debtor into rc, adding to v what
// is wrong with them.
func (rc *rec) takeVinculo(vin *recVinculo, v *violations) {
	if vin == nil {
		v.add("rec.vinculo", "vinculo is required", "")
		return
	}
	if vin.Contrato == nil || *vin.Contrato == "" || utf8.RuneCountInString(*vin.Contrato) > 35 {
		v.add("rec.vinculo.contrato", "contrato is required, at most 35 characters", "")
	} else {
		rc.Contrato = *vin.Contrato
	}
	if vin.Objeto != nil {
		v.checkText("rec.vinculo.objeto", "objeto", vin.Objeto, 35)
		rc.Objeto = *vin.Objeto
	}
	d := vin.Devedor
	v.checkPerson("rec.vinculo.devedor", d.CPF, d.CNPJ, d.Nome, 140)
	rc.Devedor = d
}

// takeCalendario reads the first and last days and the period into rc,
// adding to v what is wrong with them; today is the São Paulo date.
func (rc *rec) takeCalendario(c *recCalendario, today day, v *violations) {
	if c == nil {
		v.add("rec.calendario", "calendario is required", "")
		return
	}
	if c.DataInicial == nil {
		v.add("rec.calendario.dataInicial", "dataInicial is required", "")
	} else if d, ok := parseDay(*c.DataInicial); !ok || d.Before(today) {
		v.add("rec.calendario.dataInicial", "dataInicial must be a date YYYY-MM-DD, not before today", *c.DataInicial)
	} else {
		rc.DataInicial = d
	}
	if c.DataFinal != nil {
		if d, ok := parseDay(*c.DataFinal); !ok || (!rc.DataInicial.IsZero() && d.Before(rc.DataInicial)) {
			v.add("rec.calendario.dataFinal", "dataFinal must be a date YYYY-MM-DD, not before dataInicial", *c.DataFinal)
		} else {
			rc.DataFinal = d
		}
	}
	if c.Periodicidade == nil || !periodicidades[*c.Periodicidade] {
		v.add("rec.calendario.periodicidade", "periodicidade must be SEMANAL, MENSAL, TRIMESTRAL, SEMESTRAL or ANUAL", "")
	} else {
		rc.Periodicidade = *c.Periodicidade
	}
}

// takeValor reads the fixed value or the minimum into rc, adding to v what
// is wrong with them.
func (rc *rec) takeValor(val *recValor, v *violations) {
	if val == nil {
		return
	}
	if val.ValorRec != nil && val.ValorMinimo != nil {
		v.add("rec.valor", "valorRec and valorMinimoRecebedor exclude each other", "")
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
			v.add(p.name, `the value must match ^\d{1,10}\.\d{2}$ and be above 0.00`, *p.raw)
		} else {
			*p.dst = c
		}
	}
}

// linkRec links rc to the location and the journey-3 cob req names,
// adding to v what is wrong with them (s.mu held).
func (s *Server) linkRec(rc *rec, req *recRequest, v *violations) {
	if req.Loc != nil {
		l := s.books().locs[*req.Loc]
		switch {
		case l == nil:
			v.add("rec.loc", "no location of a recurrence with this id", strconv.FormatInt(*req.Loc, 10))
		case l.IDRec != "":
			v.add("rec.loc", "the location serves another recurrence", strconv.FormatInt(*req.Loc, 10))
		default:
			rc.Loc = l
		}
	}
	if a := req.Ativacao; a != nil && a.DadosJornada != nil {
		c := s.st.cobs[a.DadosJornada.TxID]
		switch {
		case c == nil:
			v.add("rec.ativacao.dadosJornada.txid", "no cob with this txid", a.DadosJornada.TxID)
		case c.Status != CobAtiva:
			v.add("rec.ativacao.dadosJornada.txid", "the cob is "+c.Status, a.DadosJornada.TxID)
		default:
			rc.TxID = c.TxID
		}
	}
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

// recKind is what the recurrence handlers answer.
var recKind = resource{noun: "recurrence", prop: "rec", refused: "RecOperacaoInvalida", refusedTitle: "Operação inválida",
	missing: "NaoEncontrado", missingTitle: "Recorrência não encontrada", missingDetail: "no recurrence with this idRec"}

// recCancellation is PATCH /rec/{idRec}: the receiver cancels a recurrence
// that is CRIADA or APROVADA.
var recCancellation = statusGuard{allowed: []string{RecCriada, RecAprovada}, verb: "cancelled",
	razao: "only a CRIADA or APROVADA recurrence can be cancelled"}

func (s *Server) postRec(w http.ResponseWriter, r *http.Request) {
	var req recRequest
	if !recKind.decode(w, r, &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	rc, v := s.checkRec(&req, dayOf(now))
	if len(v) > 0 {
		recKind.refuse(w, "the recurrence has invalid fields", v...)
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
	show(s, w, recKind, func() *rec { return s.books().recs[r.PathValue("idRec")] }, func(rc *rec) map[string]any {
		return s.recJSON(rc, true, r.URL.Query().Get("txid"))
	})
}

// patchRec takes the one revision pixgate makes: {"status": "CANCELADA"},
// the receiver cancelling a recurrence that is CRIADA or APROVADA.
func (s *Server) patchRec(w http.ResponseWriter, r *http.Request) {
	var req recRequest
	if !recKind.decode(w, r, &req) || !recKind.onlyStatus(w, req.Status, RecCancelada,
		req.Vinculo != nil || req.Calendario != nil || req.Loc != nil || req.Ativacao != nil, "the simulator revises only status, to CANCELADA") {
		return
	}
	s.answerThenNotify(w, r, http.StatusOK, func() (any, []notice, bool) {
		rc := found(w, recKind, s.books().recs[r.PathValue("idRec")])
		if rc == nil || !recKind.allows(w, rc.Status, recCancellation) {
			return nil, nil, false
		}
		notes := s.cancelRec(rc, "USUARIO_RECEBEDOR", "SLCR", "Cancelamento solicitado pelo usuário recebedor")
		return s.recJSON(rc, false, ""), notes, true
	})
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

// listRecs is GET /rec: the recurrences with a status change in [inicio,
// fim], oldest first, one page.
func (s *Server) listRecs(w http.ResponseWriter, r *http.Request) {
	status := r.URL.Query().Get("status")
	answerList(s, w, r, "ConsultaInvalida", "recs", func(inicio, fim time.Time) []map[string]any {
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
		return all
	})
}

// recNotice is rc's notification (RecNotification), s.mu held.
func (s *Server) recNotice(rc *rec) notice {
	j := map[string]any{"idRec": rc.IDRec, "status": rc.Status, "atualizacao": updatesJSON(rc.Updates), "ativacao": rc.ativacaoJSON()}
	if rc.End != nil {
		j["encerramento"] = rc.End
	}
	return notice{kind: "rec", id: rc.IDRec, item: j}
}
