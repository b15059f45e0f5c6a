package pspsim

import (
	"net/http"
	"time"
)

// This file is the Pix received (API Pix /pix): one by its end-to-end id,
// and the list.

type pixRec struct {
	E2EID       string
	TxID        string
	Valor       int64
	Chave       string
	Horario     time.Time
	InfoPagador string
	Refunds     []*refund
	// Pagador is who paid, reported with the Pix (record fills it in).
	Pagador *devedor
}

type pixJSON struct {
	EndToEndID  string         `json:"endToEndId"`
	TxID        string         `json:"txid,omitempty"`
	Valor       string         `json:"valor"`
	Chave       string         `json:"chave,omitempty"`
	Horario     string         `json:"horario"`
	InfoPagador string         `json:"infoPagador,omitempty"`
	Devolucoes  []refundJSON   `json:"devolucoes,omitempty"`
	Componentes *componentJSON `json:"componentesValor,omitempty"`
	// Pagador is the payer: API Pix 2.0's field, which PSPs such as Efí
	// still send though later versions of the schema dropped it.
	Pagador *devedor `json:"pagador,omitempty"`
}

type componentJSON struct {
	Original struct {
		Valor string `json:"valor"`
	} `json:"original"`
}

func (p *pixRec) json() pixJSON {
	j := pixJSON{EndToEndID: p.E2EID, TxID: p.TxID, Valor: formatValor(p.Valor), Chave: p.Chave,
		Horario: formatTime(p.Horario), InfoPagador: p.InfoPagador, Componentes: &componentJSON{}, Pagador: p.Pagador}
	j.Componentes.Original.Valor = j.Valor
	for _, r := range p.Refunds {
		j.Devolucoes = append(j.Devolucoes, r.json())
	}
	return j
}

// pixKind is what the Pix handlers answer.
var pixKind = resource{missing: "PixNaoEncontrado", missingTitle: "Pix não encontrado", missingDetail: "no Pix with this endToEndId"}

func (s *Server) getPix(w http.ResponseWriter, r *http.Request) {
	show(s, w, pixKind, func() *pixRec { return s.st.pix[r.PathValue("e2eid")] }, (*pixRec).json)
}

// listPix is GET /pix: the Pix whose horario is within [inicio, fim], oldest
// first, one page; with devolucaoPresente=true only those having a
// devolução (false: only those having none), as BACEN's OpenAPI defines
// the filter.
func (s *Server) listPix(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	txid := q.Get("txid")
	withReturns, filter := false, q.Has("devolucaoPresente")
	if filter {
		switch q.Get("devolucaoPresente") {
		case "true":
			withReturns = true
		case "false":
		default:
			writeProblem(w, http.StatusBadRequest, "PixConsultaInvalida", "Consulta inválida", "invalid query parameters",
				[]violacao{{Razao: "devolucaoPresente must be true or false", Propriedade: "devolucaoPresente", Valor: q.Get("devolucaoPresente")}})
			return
		}
	}
	answerList(s, w, r, "PixConsultaInvalida", "pix", func(inicio, fim time.Time) []pixJSON {
		var matched []pixJSON
		for _, p := range s.st.pixOrder {
			if p.Horario.Before(inicio) || p.Horario.After(fim) || (txid != "" && p.TxID != txid) ||
				(filter && (len(p.Refunds) > 0) != withReturns) {
				continue
			}
			matched = append(matched, p.json())
		}
		return matched
	})
}
