package pspsim

import (
	"cmp"
	"net/http"
	"slices"
	"time"
)

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
	inicio, fim, page, perPage, ok := listQuery(w, r, "ConsultaInvalida")
	if !ok {
		return
	}
	s.mu.Lock()
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
	s.mu.Unlock()
	writeList(w, "pix", inicio, fim, page, perPage, matched)
}

// addSendInOrder adds sd to the sends by request time (then idEnvio).
func (st *state) addSendInOrder(sd *send) {
	i, _ := slices.BinarySearchFunc(st.sendOrder, sd, func(a, b *send) int {
		return cmp.Or(a.Requested.Compare(b.Requested), cmp.Compare(a.IDEnvio, b.IDEnvio))
	})
	st.sendOrder = slices.Insert(st.sendOrder, i, sd)
}
