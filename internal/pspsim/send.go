package pspsim

import (
	"cmp"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"
)

// This file is Efí's Pix send: PUT /v3/gn/pix/{idEnvio}, GET of one send
// and the list of sent Pix.

type send struct {
	IDEnvio     string
	E2EID       string
	Valor       int64
	PagadorKey  string
	InfoPagador string
	Favorecido  string
	Requested   time.Time
	Settled     time.Time
	Status      string
}

type sendPartyJSON struct {
	Chave       string `json:"chave"`
	InfoPagador string `json:"infoPagador,omitempty"`
}

type sendJSON struct {
	EndToEndID string        `json:"endToEndId"`
	IDEnvio    string        `json:"idEnvio"`
	Valor      string        `json:"valor"`
	Chave      string        `json:"chave"`
	Status     string        `json:"status"`
	Horario    horarioJSON   `json:"horario"`
	Pagador    sendPartyJSON `json:"pagador"`
	Favorecido sendPartyJSON `json:"favorecido"`
}

// sentPixJSON is Efí's webhook report of a send that settled: one item
// of the same pix array as received Pix, told apart by tipo SOLICITACAO
// and gnExtras.idEnvio.
type sentPixJSON struct {
	EndToEndID string       `json:"endToEndId"`
	Chave      string       `json:"chave"`
	Tipo       string       `json:"tipo"`
	Status     string       `json:"status"`
	Valor      string       `json:"valor"`
	Horario    *string      `json:"horario"`
	GnExtras   sentExtrasJS `json:"gnExtras"`
}

// sentExtrasJS is a sent Pix's gnExtras: its idEnvio and, when it failed,
// why.
type sentExtrasJS struct {
	IDEnvio string       `json:"idEnvio"`
	Erro    *sentErrorJS `json:"erro,omitempty"`
}

type sentErrorJS struct {
	Codigo string `json:"codigo"`
	Origem string `json:"origem"`
	Motivo string `json:"motivo"`
}

// report is the webhook's report of s, settled.
func (s *send) report() sentPixJSON {
	r := sentPixJSON{EndToEndID: s.E2EID, Chave: s.Favorecido, Tipo: "SOLICITACAO", Status: s.Status, Valor: formatValor(s.Valor),
		GnExtras: sentExtrasJS{IDEnvio: s.IDEnvio}}
	if s.Status == NaoRealizado {
		r.GnExtras.Erro = &sentErrorJS{Codigo: "AC03", Origem: "PSP do usuário recebedor", Motivo: "Conta do recebedor inválida"}
	} else {
		h := formatTime(s.Settled)
		r.Horario = &h
	}
	return r
}

func (s *send) json() sendJSON {
	j := sendJSON{EndToEndID: s.E2EID, IDEnvio: s.IDEnvio, Valor: formatValor(s.Valor), Chave: s.PagadorKey, Status: s.Status,
		Horario: horarioJSON{Solicitacao: formatTime(s.Requested)},
		Pagador: sendPartyJSON{Chave: s.PagadorKey, InfoPagador: s.InfoPagador}, Favorecido: sendPartyJSON{Chave: s.Favorecido}}
	if !s.Settled.IsZero() {
		j.Horario.Liquidacao = formatTime(s.Settled)
	}
	return j
}

// sendKind is what the send handlers answer.
var sendKind = resource{refused: "EnvioInvalido", refusedTitle: "Envio inválido",
	missing: "EnvioNaoEncontrado", missingTitle: "Envio não encontrado", missingDetail: "no send with this idEnvio"}

// sendRequest is the body of PUT /v3/gn/pix/{idEnvio}.
type sendRequest struct {
	Valor   string `json:"valor"`
	Pagador struct {
		Chave       string `json:"chave"`
		InfoPagador string `json:"infoPagador"`
	} `json:"pagador"`
	Favorecido struct {
		Chave string `json:"chave"`
	} `json:"favorecido"`
}

// checkSend returns the amount of a send, and its violations.
func (s *Server) checkSend(req *sendRequest) (int64, violations) {
	var v violations
	valor, ok := parseValor(req.Valor)
	if !ok || valor <= 0 {
		v.add("valor", `valor must match ^\d{1,10}\.\d{2}$ and be above 0.00`, req.Valor)
	}
	if req.Pagador.Chave != s.opts.PixKey {
		v.add("pagador.chave", "pagador.chave is not a key of this account", req.Pagador.Chave)
	}
	if req.Favorecido.Chave == "" || len(req.Favorecido.Chave) > 77 {
		v.add("favorecido.chave", "favorecido.chave is required, at most 77 characters", "")
	}
	if utf8.RuneCountInString(req.Pagador.InfoPagador) > 140 {
		v.add("pagador.infoPagador", "infoPagador is at most 140 characters", "")
	}
	return valor, v
}

// putSend is Efí's PUT /v3/gn/pix/{idEnvio}.
func (s *Server) putSend(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("idEnvio")
	if !isAlnum(id, 1, 35) {
		s.countPut(s.st.sendPuts, id)
		sendKind.refuse(w, "idEnvio must be 1 to 35 of [a-zA-Z0-9]")
		return
	}
	var req sendRequest
	if !sendKind.decode(w, r, &req) {
		return // a body that never arrived whole: the PSP could not act on it
	}
	s.countPut(s.st.sendPuts, id)
	valor, v := s.checkSend(&req)
	if len(v) > 0 {
		sendKind.refuse(w, "the send has invalid fields", v...)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.st.sends[id]; dup {
		writeProblem(w, http.StatusConflict, "EnvioDuplicado", "Envio duplicado", "a send with this idEnvio already exists", nil)
		return
	}
	now := s.now()
	sd := &send{IDEnvio: id, E2EID: newE2EID("E", now), Valor: valor, PagadorKey: req.Pagador.Chave, InfoPagador: req.Pagador.InfoPagador,
		Favorecido: req.Favorecido.Chave, Requested: now, Status: EmProcessamento}
	s.st.sends[id] = sd
	s.st.addSendInOrder(sd)
	countAccepted(s.st.sendPuts, id)
	writeJSON(w, http.StatusCreated, map[string]any{"idEnvio": id, "e2eId": sd.E2EID, "valor": formatValor(valor),
		"horario": map[string]string{"solicitacao": formatTime(now)}, "status": EmProcessamento})
}

// getSend is Efí's GET /v2/gn/pix/enviados/id-envio/{idEnvio}.
func (s *Server) getSend(w http.ResponseWriter, r *http.Request) {
	show(s, w, sendKind, func() *send { return s.st.sends[r.PathValue("idEnvio")] }, (*send).json)
}

// listSends is Efí's GET /v2/gn/pix/enviados?inicio&fim: the Pix sent
// whose request time (horario.solicitacao) is in [inicio, fim], oldest
// first, paginated as the API Pix lists are, optionally of one status.
func (s *Server) listSends(w http.ResponseWriter, r *http.Request) {
	status := r.URL.Query().Get("status")
	switch status {
	case "", EmProcessamento, Realizado, NaoRealizado:
	default:
		writeProblem(w, http.StatusBadRequest, "ConsultaInvalida", "Consulta inválida", "invalid query parameters",
			[]violacao{{Razao: "status must be EM_PROCESSAMENTO, REALIZADO or NAO_REALIZADO", Propriedade: "status", Valor: status}})
		return
	}
	answerList(s, w, r, "ConsultaInvalida", "pix", func(inicio, fim time.Time) []sendJSON {
		var matched []sendJSON
		order := s.st.sendOrder
		first, _ := slices.BinarySearchFunc(order, inicio, func(sd *send, t time.Time) int { return sd.Requested.Compare(t) })
		for _, sd := range order[first:] {
			if sd.Requested.After(fim) {
				break
			}
			if status == "" || sd.Status == status {
				matched = append(matched, sd.json())
			}
		}
		return matched
	})
}

// addSendInOrder adds sd to the sends by request time (then idEnvio).
func (st *state) addSendInOrder(sd *send) {
	i, _ := slices.BinarySearchFunc(st.sendOrder, sd, func(a, b *send) int {
		return cmp.Or(a.Requested.Compare(b.Requested), cmp.Compare(a.IDEnvio, b.IDEnvio))
	})
	st.sendOrder = slices.Insert(st.sendOrder, i, sd)
}
