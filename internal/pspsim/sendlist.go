package pspsim

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// listSends is Efí's GET /v2/gn/pix/enviados?inicio&fim: the Pix sent
// whose request time (horario.solicitacao) is in [inicio, fim], oldest
// first, paginated as the API Pix lists are, optionally of one status.
func (s *Server) listSends(w http.ResponseWriter, r *http.Request) {
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
	inicio, fim := parseTime("inicio"), parseTime("fim")
	page := parseInt("paginacao.paginaAtual", 0, 0, 1<<30)
	perPage := parseInt("paginacao.itensPorPagina", 100, 1, 1000)
	status := q.Get("status")
	switch status {
	case "", EmProcessamento, Realizado, NaoRealizado:
	default:
		v = append(v, violacao{Razao: "status must be EM_PROCESSAMENTO, REALIZADO or NAO_REALIZADO", Propriedade: "status", Valor: status})
	}
	if len(v) == 0 && fim.Before(inicio) {
		v = append(v, violacao{Razao: "fim is before inicio", Propriedade: "fim", Valor: q.Get("fim")})
	}
	if len(v) > 0 {
		writeProblem(w, http.StatusBadRequest, "ConsultaInvalida", "Consulta inválida", "invalid query parameters", v)
		return
	}
	s.mu.Lock()
	var matched []*send
	order := s.st.sendOrder
	first, _ := slices.BinarySearchFunc(order, inicio, func(sd *send, t time.Time) int { return sd.Requested.Compare(t) })
	for _, sd := range order[first:] {
		if sd.Requested.After(fim) {
			break
		}
		if status == "" || sd.Status == status {
			matched = append(matched, sd)
		}
	}
	items := []sendJSON{}
	for i := page * perPage; i < len(matched) && i < (page+1)*perPage; i++ {
		items = append(items, matched[i].json())
	}
	s.mu.Unlock()
	total := len(matched)
	pages := max((total+perPage-1)/perPage, 1)
	writeJSON(w, http.StatusOK, map[string]any{
		"parametros": map[string]any{
			"inicio": formatTime(inicio), "fim": formatTime(fim),
			"paginacao": map[string]int{"paginaAtual": page, "itensPorPagina": perPage,
				"quantidadeDePaginas": pages, "quantidadeTotalDeItens": total},
		},
		"pix": items,
	})
}

// addSendInOrder adds sd to the sends by request time (then idEnvio).
func (st *state) addSendInOrder(sd *send) {
	i, _ := slices.BinarySearchFunc(st.sendOrder, sd, func(a, b *send) int {
		return cmp.Or(a.Requested.Compare(b.Requested), cmp.Compare(a.IDEnvio, b.IDEnvio))
	})
	st.sendOrder = slices.Insert(st.sendOrder, i, sd)
}
