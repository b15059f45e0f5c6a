package pspsim

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// This file is Pix Automático's cycle charges (API Pix /cobr): PUT, GET,
// PATCH (cancellation), retries and the list.

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

// cobrKind is what the cobr handlers answer.
var cobrKind = resource{noun: "cobr", prop: "cobr", refused: "CobROperacaoInvalida", refusedTitle: "Operação inválida",
	missing: "NaoEncontrado", missingTitle: "Cobrança não encontrada", missingDetail: "no cobr with this txid"}

// cobrRequest is the body of PUT and PATCH /cobr/{txid}.
type cobrRequest struct {
	IDRec      *string `json:"idRec"`
	Calendario *struct {
		DataDeVencimento *string `json:"dataDeVencimento"`
	} `json:"calendario"`
	Valor         *originalValor `json:"valor"`
	AjusteDiaUtil *bool          `json:"ajusteDiaUtil"`
	Devedor       *cobrDevedor   `json:"devedor"`
	Recebedor     *cobrRecebedor `json:"recebedor"`
	InfoAdicional *string        `json:"infoAdicional"`
	Status        *string        `json:"status"`
}

var tiposConta = map[string]bool{"CORRENTE": true, "POUPANCA": true, "PAGAMENTO": true}

// checkCobR reads req into c, a new cobr, and returns the violations
// (s.mu held); today is the São Paulo date.
func (s *Server) checkCobR(req *cobrRequest, c *cobr, today day) violations {
	var v violations
	rc := s.cobrRec(req, c, &v)
	c.takeDue(req, today, &v)
	c.takeValor(req, rc, &v)
	if req.AjusteDiaUtil == nil {
		v.add("cobr.ajusteDiaUtil", "ajusteDiaUtil is required", "")
	} else {
		c.Ajuste = *req.AjusteDiaUtil
	}
	if rb := req.Recebedor; rb == nil || rb.Conta == "" || len(rb.Conta) > 20 || !tiposConta[rb.TipoConta] || len(rb.Agencia) > 4 {
		v.add("cobr.recebedor", "recebedor needs conta (at most 20), tipoConta (CORRENTE, POUPANCA or PAGAMENTO) and at most 4 characters of agencia", "")
	} else {
		c.Recebedor = *rb
	}
	if d := req.Devedor; d != nil {
		v.checkAddress("cobr.devedor", d.Logradouro, d.Cidade, d.UF, d.CEP)
		c.Devedor = d
	}
	if req.InfoAdicional != nil {
		v.checkText("cobr.infoAdicional", "infoAdicional", req.InfoAdicional, 140)
		c.Info = *req.InfoAdicional
	}
	if req.Status != nil {
		v.add("cobr.status", "status cannot be set when creating a cobr", *req.Status)
	}
	if s.books().cobrs[c.TxID] != nil {
		v.add("cobr.txid", "a cobr with this txid already exists", c.TxID)
	}
	return v
}

// cobrRec is the APROVADA recurrence req charges, linked to c, or nil,
// adding to v why there is none (s.mu held).
func (s *Server) cobrRec(req *cobrRequest, c *cobr, v *violations) *rec {
	recs := s.books().recs
	switch {
	case req.IDRec == nil:
		v.add("cobr.idRec", "idRec is required", "")
	case recs[*req.IDRec] == nil:
		v.add("cobr.idRec", "no recurrence with this idRec", *req.IDRec)
	case recs[*req.IDRec].Status != RecAprovada:
		v.add("cobr.idRec", "the recurrence is "+recs[*req.IDRec].Status+", not APROVADA", *req.IDRec)
	default:
		c.IDRec = *req.IDRec
		return recs[*req.IDRec]
	}
	return nil
}

// takeDue reads the due date into c, which must be 2 to 10 days after
// today, adding to v what is wrong with it.
func (c *cobr) takeDue(req *cobrRequest, today day, v *violations) {
	if req.Calendario == nil || req.Calendario.DataDeVencimento == nil {
		v.add("cobr.calendario.dataDeVencimento", "dataDeVencimento is required", "")
	} else if d, ok := parseDay(*req.Calendario.DataDeVencimento); !ok {
		v.add("cobr.calendario.dataDeVencimento", "dataDeVencimento must be a date YYYY-MM-DD", *req.Calendario.DataDeVencimento)
	} else if lead := int(d.Sub(today).Hours() / 24); lead < cobrMinLeadDays || lead > cobrMaxLeadDays {
		v.add("cobr.calendario.dataDeVencimento", fmt.Sprintf("a cobr is created %d to %d days before its due date", cobrMinLeadDays, cobrMaxLeadDays),
			*req.Calendario.DataDeVencimento)
	} else {
		c.Vencimento = d
	}
}

// takeValor reads the amount into c, which the recurrence rc (when known)
// may fix or bound, adding to v what is wrong with it.
func (c *cobr) takeValor(req *cobrRequest, rc *rec, v *violations) {
	if req.Valor == nil || req.Valor.Original == nil {
		v.add("cobr.valor.original", "valor.original is required", "")
	} else if n, ok := parseValor(*req.Valor.Original); !ok || n <= 0 {
		v.add("cobr.valor.original", `valor.original must match ^\d{1,10}\.\d{2}$ and be above 0.00`, *req.Valor.Original)
	} else if rc != nil && rc.ValorRec > 0 && n != rc.ValorRec {
		v.add("cobr.valor.original", "the recurrence's value is fixed at "+formatValor(rc.ValorRec), *req.Valor.Original)
	} else if rc != nil && n < rc.ValorMinimo {
		v.add("cobr.valor.original", "below the recurrence's minimum "+formatValor(rc.ValorMinimo), *req.Valor.Original)
	} else {
		c.Valor = n
	}
}

func (s *Server) putCobR(w http.ResponseWriter, r *http.Request) {
	txid := r.PathValue("txid")
	var req cobrRequest
	if !cobrKind.validTxID(w, txid) || !cobrKind.decode(w, r, &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	c := &cobr{TxID: txid, Created: now, Status: CobRCriada}
	if v := s.checkCobR(&req, c, dayOf(now)); len(v) > 0 {
		cobrKind.refuse(w, "the cobr has invalid fields", v...)
		return
	}
	settle := c.Vencimento
	if c.Ajuste {
		settle = nextBusinessDay(settle)
	}
	c.Updates = []statusAt{{CobRCriada, now}}
	c.Tentativas = []*tentativa{{Data: settle, Tipo: tentAGND, Status: tentSolicitada, E2EID: newE2EID("E", now),
		Updates: []statusAt{{tentSolicitada, now}}}}
	s.books().cobrs[txid] = c
	writeJSON(w, http.StatusCreated, s.cobrJSON(c, true))
}

func (s *Server) getCobR(w http.ResponseWriter, r *http.Request) {
	show(s, w, cobrKind, func() *cobr { return s.books().cobrs[r.PathValue("txid")] }, func(c *cobr) map[string]any {
		return s.cobrJSON(c, false)
	})
}

// cobrCancellation is PATCH /cobr/{txid}: the receiver cancels a cobr
// that is CRIADA or ATIVA, before the day of its first attempt.
var cobrCancellation = statusGuard{allowed: []string{CobRCriada, CobRAtiva},
	razao: "only a CRIADA or ATIVA cobr can be cancelled, before its first attempt's day"}

// patchCobR takes {"status": "CANCELADA"}: the receiver cancels a cobr
// before the day of its first attempt.
func (s *Server) patchCobR(w http.ResponseWriter, r *http.Request) {
	var req cobrRequest
	if !cobrKind.decode(w, r, &req) || !cobrKind.onlyStatus(w, req.Status, CobRCancelada,
		req.IDRec != nil || req.Calendario != nil || req.Valor != nil || req.Devedor != nil, "a cobr can only be revised to CANCELADA") {
		return
	}
	s.answerThenNotify(w, r, http.StatusOK, func() (any, []notice, bool) {
		c := found(w, cobrKind, s.books().cobrs[r.PathValue("txid")])
		if c == nil {
			return nil, nil, false
		}
		now := s.now()
		if !cobrCancellation.permits(c.Status) || !dayOf(now).Before(c.Tentativas[0].Data) {
			cobrKind.refuseStatus(w, c.Status,
				"Não é possível cancelar uma cobrança em uma data igual ou maior que a data prevista da primeira tentativa de liquidação.",
				cobrCancellation.razao)
			return nil, nil, false
		}
		s.closeCobR(c, CobRCancelada, now)
		c.End = &encerramento{Cancelamento: &cancelamen{Solicitante: "USUARIO_RECEBEDOR", Codigo: "SLCR", Descricao: "Cancelamento solicitado pelo usuário recebedor"}}
		return s.cobrJSON(c, true), []notice{s.cobrNotice(c)}, true
	})
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
	s.answerThenNotify(w, r, http.StatusCreated, func() (any, []notice, bool) {
		c := found(w, cobrKind, s.books().cobrs[r.PathValue("txid")])
		if c == nil {
			return nil, nil, false
		}
		now := s.now()
		raw := r.PathValue("data")
		d, ok := parseDay(raw)
		if reason := s.whyNoRetry(c, d, ok, dayOf(now)); reason != "" {
			cobrKind.refuse(w, reason, violacao{Razao: reason, Propriedade: "cobr.tentativas", Valor: raw})
			return nil, nil, false
		}
		t := &tentativa{Data: d, Tipo: tentNTAG, Status: tentSolicitada, E2EID: newE2EID("E", now), Updates: []statusAt{{tentSolicitada, now}}}
		c.Tentativas = append(c.Tentativas, t)
		return s.cobrJSON(c, false), []notice{s.cobrNotice(c)}, true
	})
}

// whyNoRetry is why c cannot be retried on d (ok false: not a date), or ""
// when it can (s.mu held).
func (s *Server) whyNoRetry(c *cobr, d day, ok bool, today day) string {
	rc := s.books().recs[c.IDRec]
	switch {
	case !ok:
		return "data must be a date YYYY-MM-DD"
	case rc == nil || rc.Politica != politicaPermite:
		return "A política configurada na recorrência não permite retentativa de cobrança."
	case c.Status != CobRAtiva:
		return "the cobr is " + c.Status
	case c.pending() != nil:
		return "an attempt is still scheduled"
	case c.retries() >= maxRetries:
		return fmt.Sprintf("the %d retries have been made", maxRetries)
	case d.Before(today) || !d.After(c.Tentativas[len(c.Tentativas)-1].Data) || d.After(c.Tentativas[0].Data.AddDate(0, 0, retryWindowDays)):
		return fmt.Sprintf("data must be today or later, after the last attempt and within %d days of the first", retryWindowDays)
	}
	return ""
}

// listCobRs is GET /cobr: the cobrs with a change of status, or of an
// attempt's, in [inicio, fim], oldest first, one page; optionally of one
// idRec or status.
func (s *Server) listCobRs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	idRec, status := q.Get("idRec"), q.Get("status")
	answerList(s, w, r, "ConsultaInvalida", "cobsr", func(inicio, fim time.Time) []map[string]any {
		var matched []*cobr
		for _, c := range s.books().cobrs {
			if (idRec == "" || c.IDRec == idRec) && (status == "" || c.Status == status) && c.changedIn(inicio, fim) {
				matched = append(matched, c)
			}
		}
		slices.SortFunc(matched, func(a, b *cobr) int { return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.TxID, b.TxID)) })
		all := make([]map[string]any, len(matched))
		for i, c := range matched {
			all[i] = s.cobrJSON(c, false)
		}
		return all
	})
}

// changedIn reports whether c's status, or one of its attempts', changed
// in [from, to].
func (c *cobr) changedIn(from, to time.Time) bool {
	hit := changedIn(c.Updates, from, to)
	for _, t := range c.Tentativas {
		hit = hit || changedIn(t.Updates, from, to)
	}
	return hit
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

// cobrNotice is c's notification (CobRNotification), s.mu held.
func (s *Server) cobrNotice(c *cobr) notice {
	j := s.cobrJSON(c, false)
	for _, k := range []string{"calendario", "valor", "ajusteDiaUtil", "recebedor", "devedor", "politicaRetentativa", "infoAdicional"} {
		delete(j, k)
	}
	return notice{kind: "cobr", id: c.TxID, item: j}
}
