package pspsim_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

// problemOf is the part of a problem+json answer the shared handler
// pattern writes.
func problemOf(b map[string]any) []any {
	return []any{b["type"], b["title"], b["status"], b["detail"], b["violacoes"]}
}

// TestMissingResourcesAnswerTheirOwn404 checks that every resource's
// lookup, shared by its handlers, answers BACEN's 404 in its own words.
func TestMissingResourcesAnswerTheirOwn404(t *testing.T) {
	t.Parallel()
	e := startSim(t, nil)
	e.registerWebhook()
	const base = "https://pix.bcb.gov.br/api/v2/error/"
	for _, c := range []struct {
		method, path, typ, title, detail string
	}{
		{http.MethodGet, "/v2/cob/" + txid(9), "CobNaoEncontrado", "Cobrança não encontrada", "no cob with this txid"},
		{http.MethodPatch, "/v2/cob/" + txid(9), "CobNaoEncontrado", "Cobrança não encontrada", "no cob with this txid"},
		{http.MethodGet, "/v2/cobv/" + txid(9), "CobVNaoEncontrada", "Cobrança não encontrada", "no cobv with this txid"},
		{http.MethodGet, "/v2/pix/E0", "PixNaoEncontrado", "Pix não encontrado", "no Pix with this endToEndId"},
		{http.MethodGet, "/v2/pix/E0/devolucao/d1", "PixDevolucaoNaoEncontrada", "Devolução não encontrada", "no devolução with this id for this Pix"},
		{http.MethodGet, "/v2/gn/pix/enviados/id-envio/s1", "EnvioNaoEncontrado", "Envio não encontrado", "no send with this idEnvio"},
		{http.MethodGet, "/v2/rec/RR0", "NaoEncontrado", "Recorrência não encontrada", "no recurrence with this idRec"},
		{http.MethodGet, "/v2/cobr/" + txid(9), "NaoEncontrado", "Cobrança não encontrada", "no cobr with this txid"},
		{http.MethodPost, "/v2/cobr/" + txid(9) + "/retentativa/2026-12-11", "NaoEncontrado", "Cobrança não encontrada", "no cobr with this txid"},
		{http.MethodGet, "/v2/locrec/abc", "NaoEncontrado", "Não encontrado", "no location of a recurrence with this id"},
		{http.MethodGet, "/v2/locrec/99999", "NaoEncontrado", "Não encontrado", "no location of a recurrence with this id"},
		{http.MethodGet, "/v2/webhook/other@example.com", "WebhookNaoEncontrado", "Webhook não encontrado", "no webhook for this key"},
		{http.MethodDelete, "/v2/webhook/other@example.com", "WebhookNaoEncontrado", "Webhook não encontrado", "no webhook for this key"},
		{http.MethodGet, "/v2/webhookrec", "WebhookNaoEncontrado", "Webhook não encontrado", "no webhookrec registered"},
		{http.MethodDelete, "/v2/webhookcobr", "WebhookNaoEncontrado", "Webhook não encontrado", "no webhookcobr registered"},
	} {
		var body any
		if c.method == http.MethodPatch {
			body = map[string]any{}
		}
		st, b := e.do(c.method, c.path, body)
		require.Equal(t, http.StatusNotFound, st, "%s %s", c.method, c.path)
		require.Equal(t, []any{base + c.typ, c.title, float64(404), c.detail, nil}, problemOf(b), "%s %s", c.method, c.path)
	}
	// A delete for another key leaves the account's webhook registered.
	st, _ := e.do(http.MethodGet, "/v2/webhook/"+url.PathEscape(testKey), nil)
	require.Equal(t, http.StatusOK, st)
}

// TestStatusGuardsAnswerTheStatus checks the shared refusals of an
// operation that the resource's status does not allow, or that sets more
// than the status.
func TestStatusGuardsAnswerTheStatus(t *testing.T) {
	t.Parallel()
	clock := &testkit.Clock{}
	clock.Set(recNow)
	e := startSim(t, func(o *pspsim.Options) { o.Now = clock.Now })
	const base = "https://pix.bcb.gov.br/api/v2/error/"
	violation := func(razao, prop string, valor any) []any {
		v := map[string]any{"razao": razao, "propriedade": prop}
		if valor != nil {
			v["valor"] = valor
		}
		return []any{v}
	}

	st, _ := e.do(http.MethodPut, "/v2/cobv/"+txid(1), cobvBody("1000.00"))
	require.Equal(t, http.StatusCreated, st)
	remove := map[string]any{"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"}
	st, _ = e.do(http.MethodPatch, "/v2/cobv/"+txid(1), remove)
	require.Equal(t, http.StatusOK, st)
	st, b := e.do(http.MethodPut, "/v2/cobv/"+txid(1), cobvBody("1000.00"))
	require.Equal(t, http.StatusBadRequest, st)
	require.Equal(t, []any{base + "CobVOperacaoInvalida", "Cobrança inválida", float64(400),
		"the cobv is REMOVIDA_PELO_USUARIO_RECEBEDOR and can no longer be changed",
		violation("only an ATIVA cobv can be changed", "cobv.status", "REMOVIDA_PELO_USUARIO_RECEBEDOR")}, problemOf(b))

	idRec := e.newRec("NAO_PERMITE")
	st, b = e.do(http.MethodPatch, "/v2/rec/"+idRec, map[string]any{"status": "CANCELADA", "loc": 1})
	require.Equal(t, http.StatusBadRequest, st)
	require.Equal(t, []any{base + "RecOperacaoInvalida", "Operação inválida", float64(400),
		"the simulator revises only status, to CANCELADA", violation("status can only be revised to CANCELADA, alone", "rec.status", nil)}, problemOf(b))
	require.NoError(t, e.RejectRec(t.Context(), idRec))
	st, b = e.do(http.MethodPatch, "/v2/rec/"+idRec, map[string]any{"status": "CANCELADA"})
	require.Equal(t, http.StatusBadRequest, st)
	require.Equal(t, []any{base + "RecOperacaoInvalida", "Operação inválida", float64(400),
		"the recurrence is REJEITADA and can no longer be cancelled",
		violation("only a CRIADA or APROVADA recurrence can be cancelled", "rec.status", "REJEITADA")}, problemOf(b))

	st, b = e.do(http.MethodPatch, "/v2/cobr/"+txid(2), map[string]any{"status": "ATIVA"})
	require.Equal(t, http.StatusBadRequest, st)
	require.Equal(t, []any{base + "CobROperacaoInvalida", "Operação inválida", float64(400),
		"a cobr can only be revised to CANCELADA", violation("status can only be revised to CANCELADA, alone", "cobr.status", nil)}, problemOf(b))
}
