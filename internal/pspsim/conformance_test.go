package pspsim_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestAPIPixConformance drives every API Pix endpoint of the simulator,
// answers of success and of refusal, through BACEN's OpenAPI.
func TestAPIPixConformance(t *testing.T) {
	v := testkit.BACENValidator(t)
	e := startSim(t, func(o *pspsim.Options) { o.Wrap = v.Wrap })
	hook := "/v2/webhook/" + url.PathEscape(testKey)
	expect := func(want, got int, body map[string]any) {
		t.Helper()
		require.Equal(t, want, got, "%v", body)
	}

	st, b := e.do(http.MethodGet, hook, nil)
	expect(http.StatusNotFound, st, b)
	e.registerWebhook()
	st, b = e.do(http.MethodGet, hook, nil)
	expect(http.StatusOK, st, b)

	st, b = e.do(http.MethodPut, "/v2/cob/"+txid(1), cobBody("25.90"))
	expect(http.StatusCreated, st, b)
	cnpj := cobBody("7.00")
	cnpj["devedor"] = map[string]any{"cnpj": "12345678000195", "nome": "Empresa"}
	st, b = e.do(http.MethodPut, "/v2/cob/"+txid(2), cnpj)
	expect(http.StatusCreated, st, b)
	noDevedor := cobBody("1.00")
	delete(noDevedor, "devedor")
	st, b = e.do(http.MethodPut, "/v2/cob/"+txid(3), noDevedor)
	expect(http.StatusCreated, st, b)
	st, b = e.do(http.MethodPut, "/v2/cob/"+txid(1), cobBody("25.90"))
	expect(http.StatusBadRequest, st, b)
	other := cobBody("1.00")
	other["chave"] = "other@example.com"
	st, b = e.do(http.MethodPut, "/v2/cob/"+txid(4), other)
	expect(http.StatusBadRequest, st, b)

	st, b = e.do(http.MethodGet, "/v2/cob/"+txid(1), nil)
	expect(http.StatusOK, st, b)
	st, b = e.do(http.MethodGet, "/v2/cob/"+txid(9), nil)
	expect(http.StatusNotFound, st, b)

	e2eid, err := e.Pay(context.Background(), txid(1))
	require.NoError(t, err)
	st, b = e.do(http.MethodGet, "/v2/cob/"+txid(1), nil)
	expect(http.StatusOK, st, b)
	remove := map[string]any{"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"}
	st, b = e.do(http.MethodPatch, "/v2/cob/"+txid(1), remove)
	expect(http.StatusBadRequest, st, b)
	st, b = e.do(http.MethodPatch, "/v2/cob/"+txid(2), remove)
	expect(http.StatusOK, st, b)
	st, b = e.do(http.MethodPatch, "/v2/cob/"+txid(9), remove)
	expect(http.StatusNotFound, st, b)

	st, b = e.do(http.MethodGet, "/v2/pix/"+e2eid, nil)
	expect(http.StatusOK, st, b)
	st, b = e.do(http.MethodGet, "/v2/pix/E99999999202001011200abcdefghijk", nil)
	expect(http.StatusNotFound, st, b)
	now := e.clock.Now()
	q := url.Values{"inicio": {now.Add(-time.Hour).UTC().Format(time.RFC3339)}, "fim": {now.Add(time.Hour).UTC().Format(time.RFC3339)},
		"paginacao.paginaAtual": {"0"}, "paginacao.itensPorPagina": {strconv.Itoa(10)}}
	st, b = e.do(http.MethodGet, "/v2/pix?"+q.Encode(), nil)
	expect(http.StatusOK, st, b)
	q.Set("inicio", now.Add(2*time.Hour).UTC().Format(time.RFC3339))
	q.Set("fim", now.Add(3*time.Hour).UTC().Format(time.RFC3339))
	st, b = e.do(http.MethodGet, "/v2/pix?"+q.Encode(), nil)
	expect(http.StatusOK, st, b)

	dev := "/v2/pix/" + e2eid + "/devolucao/"
	st, b = e.do(http.MethodPut, dev+hex32(1), map[string]any{"valor": "5.00", "descricao": "partial"})
	expect(http.StatusCreated, st, b)
	st, b = e.do(http.MethodPut, dev+hex32(1), map[string]any{"valor": "5.00"})
	expect(http.StatusBadRequest, st, b)
	st, b = e.do(http.MethodPut, dev+hex32(2), map[string]any{"valor": "99.00"})
	expect(http.StatusBadRequest, st, b)
	st, b = e.do(http.MethodPut, dev+hex32(3), map[string]any{"valor": "1.00", "descricao": pspsim.FailRefundDescription})
	expect(http.StatusCreated, st, b)
	st, b = e.do(http.MethodGet, dev+hex32(1), nil)
	expect(http.StatusOK, st, b)
	e.clock.Advance(2 * time.Minute)
	e.token = e.fetchToken("client-1", "secret-1")
	st, b = e.do(http.MethodGet, dev+hex32(1), nil)
	expect(http.StatusOK, st, b)
	st, b = e.do(http.MethodGet, dev+hex32(3), nil)
	expect(http.StatusOK, st, b)
	st, b = e.do(http.MethodGet, dev+hex32(9), nil)
	expect(http.StatusNotFound, st, b)
	st, b = e.do(http.MethodGet, "/v2/pix/"+e2eid, nil)
	expect(http.StatusOK, st, b)
	require.Len(t, b["devolucoes"], 2)

	st, b = e.do(http.MethodDelete, hook, nil)
	expect(http.StatusNoContent, st, b)

	// Efí's send API is not API Pix: it passes the check unvalidated.
	st, b = e.do(http.MethodPut, "/v3/gn/pix/"+hex32(7), map[string]any{"valor": "1.00",
		"pagador": map[string]any{"chave": testKey}, "favorecido": map[string]any{"chave": "a@b.c"}})
	expect(http.StatusCreated, st, b)
	st, b = e.do(http.MethodGet, "/v2/gn/pix/enviados/id-envio/"+hex32(7), nil)
	expect(http.StatusOK, st, b)

	v.Check(t)
	require.Equal(t, 28, v.Validated(), "every API Pix exchange above was validated")
}
