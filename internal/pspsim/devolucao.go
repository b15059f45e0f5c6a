package pspsim

import (
	"net/http"
	"time"
)

// This file is the devolução of a Pix received (API Pix
// /pix/{e2eid}/devolucao/{id}): PUT and GET.

type refund struct {
	ID        string
	E2EID     string
	RtrID     string
	Valor     int64
	Descricao string
	// Natureza is ORIGINAL for a devolução the receiver asked for, a MED
	// one (MED_FRAUDE, …) for one the PSP made itself (MEDReturn).
	Natureza  string
	Requested time.Time
	Settled   time.Time
	Status    string
}

type refundJSON struct {
	ID        string      `json:"id"`
	RtrID     string      `json:"rtrId"`
	Valor     string      `json:"valor"`
	Natureza  string      `json:"natureza"`
	Descricao string      `json:"descricao,omitempty"`
	Horario   horarioJSON `json:"horario"`
	Status    string      `json:"status"`
	Motivo    string      `json:"motivo,omitempty"`
}

func (r *refund) json() refundJSON {
	j := refundJSON{ID: r.ID, RtrID: r.RtrID, Valor: formatValor(r.Valor), Natureza: r.Natureza, Descricao: r.Descricao,
		Horario: horarioJSON{Solicitacao: formatTime(r.Requested)}, Status: r.Status}
	if !r.Settled.IsZero() {
		j.Horario.Liquidacao = formatTime(r.Settled)
	}
	if r.Status == NaoRealizado {
		j.Motivo = "Devolução recusada pelo simulador"
	}
	return j
}

// refundKind is what the devolução handlers answer.
var refundKind = resource{refused: "PixDevolucaoInvalida", refusedTitle: "Devolução inválida",
	missing: "PixDevolucaoNaoEncontrada", missingTitle: "Devolução não encontrada", missingDetail: "no devolução with this id for this Pix"}

// refundRequest is the body of PUT /pix/{e2eid}/devolucao/{id}.
type refundRequest struct {
	Valor     *string `json:"valor"`
	Descricao *string `json:"descricao"`
}

// check returns the amount and description asked for, and the violations
// found without looking at the Pix.
func (req *refundRequest) check() (int64, string, violations) {
	var valor int64
	var v violations
	if req.Valor == nil {
		v.add("devolucao.valor", "valor is required", "")
	} else if n, ok := parseValor(*req.Valor); !ok || n <= 0 {
		v.add("devolucao.valor", `valor must match ^\d{1,10}\.\d{2}$ and be above 0.00`, *req.Valor)
	} else {
		valor = n
	}
	var desc string
	if req.Descricao != nil {
		desc = *req.Descricao
		v.checkText("devolucao.descricao", "descricao", req.Descricao, 140)
	}
	return valor, desc, v
}

// refundable is what remains of p to refund: its value less the
// devoluções not refused.
func (p *pixRec) refundable() int64 {
	left := p.Valor
	for _, rf := range p.Refunds {
		if rf.Status != NaoRealizado {
			left -= rf.Valor
		}
	}
	return left
}

func (s *Server) putRefund(w http.ResponseWriter, r *http.Request) {
	e2eid, id := r.PathValue("e2eid"), r.PathValue("id")
	if !isAlnum(id, 1, 35) {
		s.countPut(s.st.refundPuts, id)
		refundKind.refuse(w, "id must be 1 to 35 of [a-zA-Z0-9]",
			violacao{Razao: "id must match ^[a-zA-Z0-9]{1,35}$", Propriedade: "devolucao.id", Valor: id})
		return
	}
	var req refundRequest
	if !refundKind.decode(w, r, &req) {
		return // a body that never arrived whole: the PSP could not act on it
	}
	s.countPut(s.st.refundPuts, id)
	valor, desc, v := req.check()
	s.mu.Lock()
	defer s.mu.Unlock()
	p := found(w, pixKind, s.st.pix[e2eid])
	if p == nil {
		return
	}
	if _, dup := s.st.refunds[e2eid+"/"+id]; dup {
		v.add("devolucao.id", "a devolução with this id already exists", id)
	}
	if left := p.refundable(); valor > 0 && valor > left {
		v.add("devolucao.valor", "valor is above what remains refundable ("+formatValor(left)+")", *req.Valor)
	}
	if len(v) > 0 {
		refundKind.refuse(w, "the devolução cannot be made", v...)
		return
	}
	now := s.now()
	rf := &refund{ID: id, E2EID: e2eid, RtrID: newE2EID("D", now), Valor: valor, Descricao: desc,
		Natureza: NatureOriginal, Requested: now, Status: EmProcessamento}
	s.st.refunds[e2eid+"/"+id] = rf
	p.Refunds = append(p.Refunds, rf)
	countAccepted(s.st.refundPuts, id)
	writeJSON(w, http.StatusCreated, rf.json())
}

func (s *Server) getRefund(w http.ResponseWriter, r *http.Request) {
	show(s, w, refundKind, func() *refund { return s.st.refunds[r.PathValue("e2eid")+"/"+r.PathValue("id")] }, (*refund).json)
}

// countPut counts one PUT for id in puts (s.mu taken here).
func (s *Server) countPut(puts map[string]Count, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := puts[id]
	c.Puts++
	puts[id] = c
}

// countAccepted counts the acceptance of a PUT for id in puts (s.mu held).
func countAccepted(puts map[string]Count, id string) {
	c := puts[id]
	c.Accepted++
	puts[id] = c
}
