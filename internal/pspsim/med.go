package pspsim

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// This file is the MED (Mecanismo Especial de Devolução) as the receiving
// PSP lives it: the devoluções it makes by itself (MEDReturn), and Efí's
// infractions — the contests of a received Pix, listed with GET
// /v2/gn/infracoes and answered with POST
// /v2/gn/infracoes/{idInfracao}/defesa, in the shapes of Efí's SDK
// (docs/psp.md, MED).

// Naturezas of a devolução (BACEN's DevolucaoNatureza).
const (
	NatureOriginal         = "ORIGINAL"
	NatureMEDFraud         = "MED_FRAUDE"
	NatureMEDOperational   = "MED_OPERACIONAL"
	NatureMEDPixAutomatico = "MED_PIX_AUTOMATICO"
)

// Efí's statuses of an infraction.
const (
	InfracaoAberta    = "ABERTA"
	InfracaoEmDefesa  = "EM_DEFESA"
	InfracaoAceita    = "ACEITA"
	InfracaoRejeitada = "REJEITADA"
	InfracaoCancelada = "CANCELADA_EFI"
)

// DefaultRespondBy is how long a merchant has to defend an infraction
// opened without a deadline: the receiving PSP's seven days of analysis
// in BACEN's MED rules.
const DefaultRespondBy = 7 * 24 * time.Hour

// maxJustificativa is the longest defense the simulator takes. Efí does not
// publish its limit; pixgate's is 2000 characters.
const maxJustificativa = 2000

// Errors of the MED actions.
var (
	// ErrUnknownPix: no received Pix has that endToEndId.
	ErrUnknownPix = errors.New("pspsim: no Pix with this endToEndId")
	// ErrAboveRefundable: the amount is above what is left to return of
	// the Pix (or nothing is left).
	ErrAboveRefundable = errors.New("pspsim: valor is above what is left to return of the Pix")
	// ErrBadNature: not a MED natureza.
	ErrBadNature = errors.New("pspsim: natureza must be MED_FRAUDE, MED_OPERACIONAL or MED_PIX_AUTOMATICO")
	// ErrUnknownInfraction: no infraction has that idInfracao.
	ErrUnknownInfraction = errors.New("pspsim: no infraction with this idInfracao")
	// ErrInfractionClosed: the infraction is closed already.
	ErrInfractionClosed = errors.New("pspsim: the infraction is closed")
)

// infraction is one MED contest of a received Pix.
type infraction struct {
	ID          string
	E2EID       string
	Protocolo   string
	Valor       int64
	Natureza    string
	Status      string
	Opened      time.Time
	Updated     time.Time
	RespondBy   time.Time
	Closed      time.Time
	Defense     *InfractionDefense
	DefenseAt   time.Time
	DevolucaoID string
}

// open reports whether the infraction is still under analysis.
func (in *infraction) open() bool {
	return in.Status == InfracaoAberta || in.Status == InfracaoEmDefesa
}

// InfractionDefense is the merchant's answer to an infraction.
type InfractionDefense struct {
	Analise       string `json:"analise"`
	Justificativa string `json:"justificativa"`
}

// InfractionFact is one infraction as State shows it.
type InfractionFact struct {
	ID          string             `json:"id"`
	EndToEndID  string             `json:"e2eid"`
	Valor       string             `json:"valor"`
	Natureza    string             `json:"natureza"`
	Status      string             `json:"status"`
	RespondBy   string             `json:"respond_by"`
	Defense     *InfractionDefense `json:"defense"`
	DevolucaoID string             `json:"devolucao_id,omitempty"`
}

// infractionParty is an origem or destino of Efí's infraction.
type infractionParty struct {
	NomeParticipante string `json:"nomeParticipante"`
	Conta            string `json:"conta"`
	Nome             string `json:"nome"`
	Documento        string `json:"documento"`
}

// infractionJSON is an infraction as Efí's list shows it.
type infractionJSON struct {
	IDInfracao          string          `json:"idInfracao"`
	EndToEndID          string          `json:"endToEndId"`
	Protocolo           string          `json:"protocolo"`
	DataTransacao       string          `json:"dataTransacao"`
	Valor               string          `json:"valor"`
	Chave               string          `json:"chave,omitempty"`
	Status              string          `json:"status"`
	Razao               string          `json:"razao"`
	TipoSituacao        string          `json:"tipoSituacao,omitempty"`
	Defesa              string          `json:"defesa,omitempty"`
	IdentificadorTicket []int64         `json:"identificadorTicket"`
	DadosAnalise        analysisJSON    `json:"dadosAnalise"`
	Origem              infractionParty `json:"origem"`
	Destino             infractionParty `json:"destino"`
	CriadoEm            string          `json:"criadoEm"`
	AtualizadoEm        string          `json:"atualizadoEm"`
}

type analysisJSON struct {
	Abertura          string `json:"abertura"`
	PrazoFinalizacao  string `json:"prazoFinalizacao"`
	RecebimentoDefesa string `json:"recebimentoDefesa,omitempty"`
	Finalizacao       string `json:"finalizacao,omitempty"`
}

// razaoOf is the razao the simulator writes for a natureza: Efí's texts are
// not published, so these are plain Portuguese names of the MED's reasons.
func razaoOf(natureza string) string {
	switch natureza {
	case NatureMEDOperational:
		return "Falha operacional"
	case NatureMEDPixAutomatico:
		return "Pix Automático"
	}
	return "Fundada suspeita de fraude"
}

// json is in as Efí lists it (s.mu held: it reads the Pix).
func (s *Server) infractionJSON(in *infraction) infractionJSON {
	j := infractionJSON{IDInfracao: in.ID, EndToEndID: in.E2EID, Protocolo: in.Protocolo, Valor: formatValor(in.Valor),
		Status: in.Status, Razao: razaoOf(in.Natureza), IdentificadorTicket: []int64{},
		DadosAnalise: analysisJSON{Abertura: formatTime(in.Opened), PrazoFinalizacao: formatTime(in.RespondBy)},
		Destino:      infractionParty{NomeParticipante: "PSP Simulado", Conta: "1", Nome: s.opts.MerchantName, Documento: s.opts.CNPJ},
		CriadoEm:     formatTime(in.Opened), AtualizadoEm: formatTime(in.Updated)}
	if in.Natureza == NatureMEDFraud {
		j.TipoSituacao = "golpe"
	}
	if p := s.st.pix[in.E2EID]; p != nil {
		j.DataTransacao, j.Chave = formatTime(p.Horario), p.Chave
		if p.Pagador != nil {
			doc := p.Pagador.CPF
			if doc == "" {
				doc = p.Pagador.CNPJ
			}
			j.Origem = infractionParty{NomeParticipante: "PSP Pagador Simulado", Conta: "2", Nome: p.Pagador.Nome, Documento: doc}
		}
	}
	if in.Defense != nil {
		j.Defesa = in.Defense.Justificativa
		j.DadosAnalise.RecebimentoDefesa = formatTime(in.DefenseAt)
	}
	if !in.Closed.IsZero() {
		j.DadosAnalise.Finalizacao = formatTime(in.Closed)
	}
	return j
}

// medNature is natureza, "" meaning MED_FRAUDE, or ErrBadNature.
func medNature(natureza string) (string, error) {
	switch natureza {
	case "":
		return NatureMEDFraud, nil
	case NatureMEDFraud, NatureMEDOperational, NatureMEDPixAutomatico:
		return natureza, nil
	}
	return "", fmt.Errorf("%w: %q", ErrBadNature, natureza)
}

// MEDReturn makes a devolução nobody announced of the received Pix e2eid,
// as the PSP does when the MED imposes one: valor centavos (0: all that is
// left to return of it), of natureza ("": MED_FRAUDE), with an id of the
// PSP's own, settled at once (DEVOLVIDO). It is then reported with the Pix
// (GET /pix/{e2eid} and the lists), and the Pix, with all its devoluções,
// is delivered to the registered webhook before MEDReturn returns, as when
// a devolução settles.
func (s *Server) MEDReturn(e2eid string, valor int64, natureza string) (string, error) {
	s.mu.Lock()
	p := s.st.pix[e2eid]
	if p == nil {
		s.mu.Unlock()
		return "", fmt.Errorf("%w: %s", ErrUnknownPix, e2eid)
	}
	rf, err := s.medReturn(p, valor, natureza)
	if err != nil {
		s.mu.Unlock()
		return "", err
	}
	item := p.json()
	s.mu.Unlock()
	s.deliverNow([]pixJSON{item})
	return rf.ID, nil
}

// medReturn records a MED devolução of p (s.mu held); see MEDReturn.
func (s *Server) medReturn(p *pixRec, valor int64, natureza string) (*refund, error) {
	nat, err := medNature(natureza)
	if err != nil {
		return nil, err
	}
	left := p.refundable()
	if valor == 0 {
		valor = left
	}
	if valor <= 0 || valor > left {
		return nil, fmt.Errorf("%w (%s left)", ErrAboveRefundable, formatValor(left))
	}
	now := s.now()
	// The PSP's own id: of the API's form, and never 32 hex characters,
	// so that it cannot pass for one of pixgate's devoluções.
	rf := &refund{ID: "MED" + randomAlnum(29), E2EID: p.E2EID, RtrID: newE2EID("D", now), Valor: valor, Natureza: nat,
		Descricao: "Devolução MED", Requested: now, Settled: now, Status: Devolvido}
	s.st.refunds[p.E2EID+"/"+rf.ID] = rf
	p.Refunds = append(p.Refunds, rf)
	return rf, nil
}

// deliverNow delivers items to the Pix webhook in the caller's goroutine,
// ending early when the simulator closes: the Go methods without a
// context (MEDReturn, AcceptInfraction) still report before they return.
func (s *Server) deliverNow(items []pixJSON) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	s.deliver(ctx, items)
}

// OpenInfraction opens an infraction (a MED contest) of the received Pix
// e2eid for valor centavos (0: the Pix's whole valor, less what was
// returned of it already; never more than that) of natureza ("":
// MED_FRAUDE), to be defended until respondBy (zero: DefaultRespondBy from
// now). It is ABERTA, and listed by GET /v2/gn/infracoes.
func (s *Server) OpenInfraction(e2eid string, valor int64, natureza string, respondBy time.Time) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.st.pix[e2eid]
	if p == nil {
		return "", fmt.Errorf("%w: %s", ErrUnknownPix, e2eid)
	}
	nat, err := medNature(natureza)
	if err != nil {
		return "", err
	}
	left := p.refundable()
	if valor == 0 {
		valor = left
	}
	if valor <= 0 || valor > left {
		return "", fmt.Errorf("%w (%s left)", ErrAboveRefundable, formatValor(left))
	}
	now := s.now()
	if respondBy.IsZero() {
		respondBy = now.Add(DefaultRespondBy)
	}
	in := &infraction{ID: randomEVP(), E2EID: e2eid, Protocolo: "MED" + randomDigits(12), Valor: valor, Natureza: nat,
		Status: InfracaoAberta, Opened: now, Updated: now, RespondBy: respondBy}
	s.st.infracoes[in.ID] = in
	s.st.infOrder = append(s.st.infOrder, in)
	return in.ID, nil
}

// openInfraction is the infraction id while it is open (s.mu held):
// ErrUnknownInfraction or ErrInfractionClosed otherwise.
func (s *Server) openInfraction(id string) (*infraction, error) {
	in := s.st.infracoes[id]
	switch {
	case in == nil:
		return nil, fmt.Errorf("%w: %s", ErrUnknownInfraction, id)
	case !in.open():
		return nil, fmt.Errorf("%w: it is %s", ErrInfractionClosed, in.Status)
	}
	return in, nil
}

// ReleaseInfraction closes the open infraction id as failed (REJEITADA):
// the contested money is the merchant's again, nothing is returned.
func (s *Server) ReleaseInfraction(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.openInfraction(id)
	if err != nil {
		return err
	}
	now := s.now()
	in.Status, in.Closed, in.Updated = InfracaoRejeitada, now, now
	return nil
}

// AcceptInfraction closes the open infraction id as held (ACEITA) and
// makes its MED devolução, as MEDReturn does, of valor centavos (0: the
// infraction's valor, capped at what is left to return of the Pix; never
// above the infraction's valor), with
// the infraction's natureza; it returns the devolução's id.
func (s *Server) AcceptInfraction(id string, valor int64) (string, error) {
	s.mu.Lock()
	in, err := s.openInfraction(id)
	if err != nil {
		s.mu.Unlock()
		return "", err
	}
	p := s.st.pix[in.E2EID]
	switch {
	case valor == 0:
		valor = min(in.Valor, p.refundable())
	case valor > in.Valor:
		s.mu.Unlock()
		return "", fmt.Errorf("%w: above the contested %s", ErrAboveRefundable, formatValor(in.Valor))
	}
	rf, err := s.medReturn(p, valor, in.Natureza)
	if err != nil {
		s.mu.Unlock()
		return "", err
	}
	now := s.now()
	in.Status, in.Closed, in.Updated, in.DevolucaoID = InfracaoAceita, now, now, rf.ID
	item := p.json()
	s.mu.Unlock()
	s.deliverNow([]pixJSON{item})
	return rf.ID, nil
}

// infractionFacts returns every infraction, oldest first (s.mu held).
func (s *Server) infractionFacts() []InfractionFact {
	out := []InfractionFact{}
	for _, in := range s.st.infOrder {
		f := InfractionFact{ID: in.ID, EndToEndID: in.E2EID, Valor: formatValor(in.Valor), Natureza: in.Natureza,
			Status: in.Status, RespondBy: formatTime(in.RespondBy), DevolucaoID: in.DevolucaoID}
		if in.Defense != nil {
			d := *in.Defense
			f.Defense = &d
		}
		out = append(out, f)
	}
	return out
}

// infractionKind is what Efí's infraction handlers answer (problem+json,
// which Efí's SDK documents for these endpoints' failures).
var infractionKind = resource{noun: "infração", prop: "infracao", refused: "InfracaoOperacaoInvalida", refusedTitle: "Operação inválida",
	missing: "InfracaoNaoEncontrada", missingTitle: "Infração não encontrada", missingDetail: "no infraction with this idInfracao"}

// listInfractions is GET /v2/gn/infracoes?inicio&fim: the infractions
// created or changed within [inicio, fim], oldest first, one page. Efí's
// SDK documents inicio and fim as dates (YYYY-MM-DD, a whole day in São
// Paulo's time, fim's included); RFC 3339 date-times are taken too.
func (s *Server) listInfractions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var v violations
	inicio, okI := parseDayOrTime(q.Get("inicio"), false)
	if !okI {
		v.add("inicio", "inicio is required, a date YYYY-MM-DD or an RFC 3339 date-time", q.Get("inicio"))
	}
	fim, okF := parseDayOrTime(q.Get("fim"), true)
	if !okF {
		v.add("fim", "fim is required, a date YYYY-MM-DD or an RFC 3339 date-time", q.Get("fim"))
	}
	if okI && okF && fim.Before(inicio) {
		v.add("fim", "fim is before inicio", q.Get("fim"))
	}
	page, perPage := 0, 100
	if raw := q.Get("paginacao.paginaAtual"); raw != "" {
		if _, err := fmt.Sscan(raw, &page); err != nil || page < 0 {
			v.add("paginacao.paginaAtual", "must be an integer from 0", raw)
		}
	}
	if raw := q.Get("paginacao.itensPorPagina"); raw != "" {
		if _, err := fmt.Sscan(raw, &perPage); err != nil || perPage < 1 || perPage > 1000 {
			v.add("paginacao.itensPorPagina", "must be an integer from 1 to 1000", raw)
		}
	}
	if len(v) > 0 {
		writeProblem(w, http.StatusBadRequest, "InfracaoConsultaInvalida", "Consulta inválida", "invalid query parameters", v)
		return
	}
	s.mu.Lock()
	all := []infractionJSON{}
	for _, in := range s.st.infOrder {
		if !in.Updated.Before(inicio) && !in.Updated.After(fim) {
			all = append(all, s.infractionJSON(in))
		}
	}
	s.mu.Unlock()
	writeList(w, "infracoes", inicio, fim, page, perPage, all)
}

// parseDayOrTime reads a list bound: RFC 3339, or a date in São Paulo's
// time (its start, or with end its last instant).
func parseDayOrTime(raw string, end bool) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, raw); err == nil {
		return t, true
	}
	d, err := time.ParseInLocation(time.DateOnly, raw, saoPaulo)
	if err != nil {
		return time.Time{}, false
	}
	if end {
		d = d.AddDate(0, 0, 1).Add(-time.Nanosecond)
	}
	return d, true
}

// defenseRequest is the body of POST /v2/gn/infracoes/{idInfracao}/defesa.
type defenseRequest struct {
	Analise       *string `json:"analise"`
	Justificativa *string `json:"justificativa"`
}

// postDefense is POST /v2/gn/infracoes/{idInfracao}/defesa: the merchant's
// one defense of an ABERTA infraction before its deadline, which puts it
// EM_DEFESA. 204 (Efí's SDK documents no answer body); 400 for a bad body,
// a second defense, a closed infraction or a passed deadline; 404 for an
// unknown id.
func (s *Server) postDefense(w http.ResponseWriter, r *http.Request) {
	var req defenseRequest
	if !infractionKind.decode(w, r, &req) {
		return
	}
	var v violations
	if req.Analise == nil || (*req.Analise != "aceito" && *req.Analise != "rejeitado") {
		v.add("defesa.analise", `analise must be "aceito" or "rejeitado"`, "")
	}
	if req.Justificativa == nil || strings.TrimSpace(*req.Justificativa) == "" ||
		utf8.RuneCountInString(*req.Justificativa) > maxJustificativa {
		v.add("defesa.justificativa", fmt.Sprintf("justificativa is required, at most %d characters", maxJustificativa), "")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in := found(w, infractionKind, s.st.infracoes[r.PathValue("idInfracao")])
	if in == nil {
		return
	}
	if len(v) > 0 {
		infractionKind.refuse(w, "the defense cannot be read", v...)
		return
	}
	now := s.now()
	switch {
	case in.Status != InfracaoAberta:
		infractionKind.refuseStatus(w, in.Status, "the infraction is "+in.Status+" and takes no defense",
			"a defense is taken only while the infraction is ABERTA, once")
		return
	case now.After(in.RespondBy):
		infractionKind.refuseStatus(w, in.Status, "the deadline to defend passed at "+formatTime(in.RespondBy),
			"a defense is taken only until dadosAnalise.prazoFinalizacao")
		return
	}
	in.Defense = &InfractionDefense{Analise: *req.Analise, Justificativa: *req.Justificativa}
	in.Status, in.DefenseAt, in.Updated = InfracaoEmDefesa, now, now
	w.WriteHeader(http.StatusNoContent)
}

// randomDigits returns n random decimal digits.
func randomDigits(n int) string {
	b := []byte(randomAlnum(n))
	for i := range b {
		b[i] = '0' + b[i]%10
	}
	return string(b)
}

// medAnswer answers the MED control actions: 404 for an unknown Pix or
// infraction, 422 for an amount above what is left or a closed
// infraction, 400 for a natureza that is none, each with a JSON message.
func medAnswer(w http.ResponseWriter, err error, ok any) {
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, ok)
	case errors.Is(err, ErrUnknownPix), errors.Is(err, ErrUnknownInfraction):
		writeProblem(w, http.StatusNotFound, "NaoEncontrado", "Não encontrado", err.Error(), nil)
	case errors.Is(err, ErrBadNature):
		badControlRequest(w, err)
	default:
		writeProblem(w, http.StatusUnprocessableEntity, "OperacaoInvalida", "Operação inválida", err.Error(), nil)
	}
}

// controlValor reads an optional control valor ("5.00"; "" is 0).
func controlValor(raw string) (int64, error) {
	if raw == "" {
		return 0, nil
	}
	v, ok := parseValor(raw)
	if !ok || v <= 0 {
		return 0, errors.New("valor must be like 10.00 and above 0.00")
	}
	return v, nil
}

// medControl adds the MED's actions to the control API (see controlHandler).
func (s *Server) medControl(mux *http.ServeMux) {
	mux.HandleFunc("POST /sim/pix/{e2eid}/med", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Valor    string `json:"valor"`
			Natureza string `json:"natureza"`
		}
		err := decodeControl(w, r, &req, true)
		var valor int64
		if err == nil {
			valor, err = controlValor(req.Valor)
		}
		if err != nil {
			badControlRequest(w, err)
			return
		}
		id, err := s.MEDReturn(r.PathValue("e2eid"), valor, req.Natureza)
		medAnswer(w, err, map[string]string{"id": id})
	})
	mux.HandleFunc("POST /sim/infracoes", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			EndToEndID string `json:"endToEndId"`
			Valor      string `json:"valor"`
			Natureza   string `json:"natureza"`
			RespondBy  string `json:"respond_by"`
		}
		err := decodeControl(w, r, &req, false)
		var valor int64
		var respondBy time.Time
		if err == nil {
			valor, err = controlValor(req.Valor)
		}
		if err == nil && req.RespondBy != "" {
			if respondBy, err = time.Parse(time.RFC3339Nano, req.RespondBy); err != nil {
				err = errors.New("respond_by must be an RFC 3339 date-time")
			}
		}
		if err == nil && req.EndToEndID == "" {
			err = errors.New(`the body needs "endToEndId": the contested Pix`)
		}
		if err != nil {
			badControlRequest(w, err)
			return
		}
		id, err := s.OpenInfraction(req.EndToEndID, valor, req.Natureza, respondBy)
		medAnswer(w, err, map[string]string{"idInfracao": id})
	})
	mux.HandleFunc("POST /sim/infracoes/{id}/release", func(w http.ResponseWriter, r *http.Request) {
		medAnswer(w, s.ReleaseInfraction(r.PathValue("id")), map[string]string{"idInfracao": r.PathValue("id"), "status": InfracaoRejeitada})
	})
	mux.HandleFunc("POST /sim/infracoes/{id}/accept", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Valor string `json:"valor"`
		}
		err := decodeControl(w, r, &req, true)
		var valor int64
		if err == nil {
			valor, err = controlValor(req.Valor)
		}
		if err != nil {
			badControlRequest(w, err)
			return
		}
		id, err := s.AcceptInfraction(r.PathValue("id"), valor)
		medAnswer(w, err, map[string]string{"id": id})
	})
}
