package pspsim

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// This file is what the lists of the API (Pix, recurrences, cycle charges,
// Efí's sent Pix) share: their query and their pages.

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

// answerList answers a list request (GET /pix, /rec, /cobr, Efí's sent
// Pix): 400 of type problem when inicio, fim or the page are wrong, else
// the page, under key, of what collect gathers under s.mu.
func answerList[T any](s *Server, w http.ResponseWriter, r *http.Request, problem, key string, collect func(inicio, fim time.Time) []T) {
	inicio, fim, page, perPage, ok := listQuery(w, r, problem)
	if !ok {
		return
	}
	s.mu.Lock()
	all := collect(inicio, fim)
	s.mu.Unlock()
	writeList(w, key, inicio, fim, page, perPage, all)
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
