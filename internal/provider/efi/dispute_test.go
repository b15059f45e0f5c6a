package efi

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
)

// infractionItem is one infraction of Efí's list as its SDK documents it.
func infractionItem(id, e2e, valor, status, razao, tipo string) string {
	return fmt.Sprintf(`{"idInfracao":%q,"endToEndId":%q,"protocolo":"P1","dataTransacao":"2026-01-01T12:00:00.000Z","valor":%q,
		"status":%q,"razao":%q,"tipoSituacao":%q,"identificadorTicket":[1],
		"dadosAnalise":{"abertura":"2026-01-02T10:00:00.000Z","prazoFinalizacao":"2026-01-09T10:00:00.000Z"},
		"origem":{"nomeParticipante":"B","conta":"1","nome":"N","documento":"1"},"destino":{"nomeParticipante":"E","conta":"2","nome":"M","documento":"2"},
		"criadoEm":"2026-01-02T10:00:00.000Z","atualizadoEm":"2026-01-02T10:00:00.000Z"}`, id, e2e, valor, status, razao, tipo)
}

// Efí's list is read page by page with inicio and fim as the days that
// cover the window; each status maps to one of the three, each reason is
// read, and an item that does not validate is skipped and logged.
func TestInfractionsReadEveryPageAndMap(t *testing.T) {
	c, f, log := newTestClient(t)
	pages := [][]string{
		{infractionItem("1", e2eid, "10.00", "ABERTA", "Fundada suspeita de fraude", "golpe"),
			infractionItem("2", e2eid, "", "EM_DEFESA", "MED_OPERACIONAL", "")},
		{infractionItem("3", e2eid, "0.50", "ACEITA", "Falha operacional", ""),
			infractionItem("bad", "short", "1.00", "ABERTA", "x", ""),
			infractionItem("4", e2eid, "1.00", "REJEITADA", "Pix Automático", ""),
			infractionItem("5", e2eid, "1.00", "CANCELADA_EFI", "", ""),
			infractionItem("6", e2eid, "1.00", "EM_ANALISE_BACEN", "", ""),
			infractionItem("7", e2eid, "1.005", "ABERTA", "", "")},
	}
	var mu sync.Mutex
	var queries []string
	f.setHandler(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		mu.Lock()
		queries = append(queries, r.URL.RawQuery)
		mu.Unlock()
		var page int
		_, _ = fmt.Sscan(q.Get("paginacao.paginaAtual"), &page)
		items := ""
		for i, it := range pages[page] {
			if i > 0 {
				items += ","
			}
			items += it
		}
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"parametros":{"inicio":%q,"fim":%q,"paginacao":{"paginaAtual":%d,"itensPorPagina":100,"quantidadeDePaginas":2,"quantidadeTotalDeItens":8}},"infracoes":[%s]}`,
			q.Get("inicio"), q.Get("fim"), page, items))
	})
	// 01:30 UTC is still the 1st in São Paulo; 02:30 UTC on the 3rd is
	// the 2nd there: the days asked cover both readings of the calendar.
	from := time.Date(2026, 1, 2, 1, 30, 0, 0, time.UTC)
	to := time.Date(2026, 1, 3, 2, 30, 0, 0, time.UTC)
	got, err := c.Infractions(context.Background(), from, to)
	require.NoError(t, err)
	calls := f.recorded()
	require.Len(t, calls, 2)
	mu.Lock()
	defer mu.Unlock()
	for i, c := range calls {
		assert.Equal(t, "/v2/gn/infracoes", c.Path)
		assert.Contains(t, queries[i], "inicio=2026-01-01&")
		assert.Contains(t, queries[i], "fim=2026-01-03&")
		assert.Contains(t, queries[i], fmt.Sprintf("paginacao.paginaAtual=%d", i))
	}
	opened := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	due := time.Date(2026, 1, 9, 10, 0, 0, 0, time.UTC)
	want := []provider.Infraction{
		{ID: "1", EndToEndID: e2eid, Amount: 1000, Reason: pix.ReasonFraud, Status: provider.InfractionOpen, RespondBy: due, OpenedAt: opened},
		{ID: "2", EndToEndID: e2eid, Reason: pix.ReasonOperationalFailure, Status: provider.InfractionOpen, RespondBy: due, OpenedAt: opened},
		{ID: "3", EndToEndID: e2eid, Amount: 50, Reason: pix.ReasonOperationalFailure, Status: provider.InfractionAccepted, RespondBy: due, OpenedAt: opened},
		{ID: "4", EndToEndID: e2eid, Amount: 100, Reason: pix.ReasonPixAutomatico, Status: provider.InfractionReleased, RespondBy: due, OpenedAt: opened},
		{ID: "5", EndToEndID: e2eid, Amount: 100, Reason: pix.ReasonFraud, Status: provider.InfractionReleased, RespondBy: due, OpenedAt: opened},
	}
	require.Len(t, got, len(want))
	for i := range want {
		assert.True(t, want[i].RespondBy.Equal(got[i].RespondBy) && want[i].OpenedAt.Equal(got[i].OpenedAt), "%d", i)
		got[i].RespondBy, got[i].OpenedAt = want[i].RespondBy, want[i].OpenedAt
	}
	assert.Equal(t, want, got)
	assert.Contains(t, log.String(), `idInfracao=bad`)
	assert.Contains(t, log.String(), `EM_ANALISE_BACEN`, "an unknown status is skipped and said")
	assert.Contains(t, log.String(), `idInfracao=7`, "a valor of three decimals is refused")
}

// A defense is posted once with Efí's body; a 404 is ErrNotFound, a 400
// ErrRejected, a 5xx an unknown outcome, never retried.
func TestDefendShapeAndErrors(t *testing.T) {
	c, f, _ := newTestClient(t)
	status := http.StatusNoContent
	f.setHandler(func(w http.ResponseWriter, _ *http.Request) {
		if status == http.StatusNoContent {
			w.WriteHeader(status)
			return
		}
		writeJSON(w, status, `{"type":"x","title":"Operação inválida","status":400,"detail":"a defesa já foi enviada"}`)
	})
	ctx := context.Background()
	require.NoError(t, c.Defend(ctx, "abc-1", false, "Produto entregue"))
	require.NoError(t, c.Defend(ctx, "abc-2", true, "Concordo"))
	calls := f.recorded()
	require.Len(t, calls, 2)
	assert.Equal(t, http.MethodPost, calls[0].Method)
	assert.Equal(t, "/v2/gn/infracoes/abc-1/defesa", calls[0].Path)
	assert.Equal(t, map[string]any{"analise": "rejeitado", "justificativa": "Produto entregue"}, decode(t, calls[0].Body))
	assert.Equal(t, map[string]any{"analise": "aceito", "justificativa": "Concordo"}, decode(t, calls[1].Body))

	status = http.StatusNotFound
	err := c.Defend(ctx, "abc-3", false, "x")
	require.ErrorIs(t, err, provider.ErrNotFound)
	require.NotErrorIs(t, err, provider.ErrRejected)
	status = http.StatusBadRequest
	err = c.Defend(ctx, "abc-3", false, "x")
	require.ErrorIs(t, err, provider.ErrRejected)
	assert.Contains(t, err.Error(), "a defesa já foi enviada")
	status = http.StatusServiceUnavailable
	n := len(f.recorded())
	err = c.Defend(ctx, "abc-3", false, "x")
	require.Error(t, err)
	require.NotErrorIs(t, err, provider.ErrRejected)
	require.NotErrorIs(t, err, provider.ErrNotFound)
	assert.Len(t, f.recorded(), n+1, "a defense is never retried")

	n = len(f.recorded())
	require.ErrorIs(t, c.Defend(ctx, "a/b", false, "x"), provider.ErrRejected)
	require.ErrorIs(t, c.Defend(ctx, "abc", false, "  "), provider.ErrRejected)
	assert.Len(t, f.recorded(), n, "refused before any call")
}
