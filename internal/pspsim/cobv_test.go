package pspsim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

// cobvNow is the simulator's clock in these tests: Tuesday 2026-12-01,
// noon in São Paulo.
var cobvNow = time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)

// cobvBody is a cobv as pixgate sends it: due Saturday 2026-12-12, 2%
// fine, 1% a month, fixed discounts.
func cobvBody(valor string) map[string]any {
	return map[string]any{
		"calendario": map[string]any{"dataDeVencimento": "2026-12-12", "validadeAposVencimento": 5},
		"devedor": map[string]any{"cpf": "12345678909", "nome": "Fulano de Tal", "logradouro": "Rua das Flores, 10",
			"cidade": "São Paulo", "uf": "SP", "cep": "01001000"},
		"valor": map[string]any{
			"original": valor,
			"multa":    map[string]any{"modalidade": 2, "valorPerc": "2.00"},
			"juros":    map[string]any{"modalidade": 3, "valorPerc": "1.00"},
			"desconto": map[string]any{"modalidade": 1, "descontoDataFixa": []any{
				map[string]any{"data": "2026-12-05", "valorPerc": "50.00"},
				map[string]any{"data": "2026-12-12", "valorPerc": "20.00"}}},
		},
		"chave":              testKey,
		"solicitacaoPagador": "Fatura 12/2026",
	}
}

// TestCobVConformance drives PUT, GET and PATCH /cobv/{txid}, answers of
// success and of refusal, and a payment on a chosen date, through BACEN's
// OpenAPI.
func TestCobVConformance(t *testing.T) {
	t.Parallel()
	v := testkit.BACENValidator(t)
	e := startSim(t, func(o *pspsim.Options) {
		o.Wrap = v.Wrap
		o.Now = func() time.Time { return cobvNow }
	})
	e.registerWebhook()
	expect := func(want, got int, body map[string]any) {
		t.Helper()
		require.Equal(t, want, got, "%v", body)
	}

	st, b := e.do(http.MethodPut, "/v2/cobv/"+txid(1), cobvBody("1000.00"))
	expect(http.StatusCreated, st, b)
	require.Equal(t, "ATIVA", b["status"])
	require.Equal(t, "2026-12-12", get(b, "calendario", "dataDeVencimento"))
	require.Equal(t, "cobv", get(b, "loc", "tipoCob"))
	require.NotContains(t, b["pixCopiaECola"], "5406", "a cobv's code carries no amount")
	// PUT again on an ATIVA cobv replaces it: a new revision.
	st, b = e.do(http.MethodPut, "/v2/cobv/"+txid(1), cobvBody("1000.00"))
	expect(http.StatusCreated, st, b)
	require.InDelta(t, 1, b["revisao"], 0)

	cnpj := cobvBody("7.00")
	cnpj["devedor"] = map[string]any{"cnpj": "12345678000195", "nome": "Empresa"}
	delete(cnpj["valor"].(map[string]any), "desconto")
	cnpj["valor"].(map[string]any)["multa"] = map[string]any{"modalidade": 1, "valorPerc": "0.50"}
	st, b = e.do(http.MethodPut, "/v2/cobv/"+txid(2), cnpj)
	expect(http.StatusCreated, st, b)
	percent := cobvBody("100.00")
	percent["valor"].(map[string]any)["desconto"] = map[string]any{"modalidade": 2, "descontoDataFixa": []any{
		map[string]any{"data": "2026-12-10", "valorPerc": "2.50"}}}
	st, b = e.do(http.MethodPut, "/v2/cobv/"+txid(3), percent)
	expect(http.StatusCreated, st, b)

	// Refusals: a due date before today, a discount after the due date, a
	// discount of the whole value, a devedor without a name, another key.
	for _, mod := range []func(map[string]any){
		func(m map[string]any) { m["calendario"] = map[string]any{"dataDeVencimento": "2026-11-30"} },
		func(m map[string]any) {
			m["valor"].(map[string]any)["desconto"] = map[string]any{"modalidade": 1, "descontoDataFixa": []any{
				map[string]any{"data": "2026-12-13", "valorPerc": "1.00"}}}
		},
		func(m map[string]any) {
			m["valor"].(map[string]any)["desconto"] = map[string]any{"modalidade": 1, "descontoDataFixa": []any{
				map[string]any{"data": "2026-12-10", "valorPerc": "10.00"}}}
		},
		func(m map[string]any) { m["devedor"] = map[string]any{"cpf": "12345678909", "nome": ""} },
		func(m map[string]any) { m["chave"] = "other@example.com" },
	} {
		body := cobvBody("10.00")
		mod(body)
		st, b = e.do(http.MethodPut, "/v2/cobv/"+txid(9), body)
		expect(http.StatusBadRequest, st, b)
	}

	st, b = e.do(http.MethodGet, "/v2/cobv/"+txid(1), nil)
	expect(http.StatusOK, st, b)
	st, b = e.do(http.MethodGet, "/v2/cobv/"+txid(9), nil)
	expect(http.StatusNotFound, st, b)

	// Paid on Tuesday the 15th: the due date moved to Monday the 14th, so
	// one day late: R$ 1,000.00 + 20.00 fine + 0.33 interest.
	due, ok, err := e.CobVDue(txid(1), "2026-12-15")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, pspsim.CobVAmount{Original: 100000, Multa: 2000, Juros: 33, Final: 102033}, due)
	_, _, err = e.PayCobV(context.Background(), txid(1), "2026-12-22")
	require.ErrorIs(t, err, pspsim.ErrNotPayable, "after the last day (the 19th, moved to Monday the 21st)")
	_, _, err = e.PayCobV(context.Background(), txid(1), "2026-11-30")
	require.ErrorIs(t, err, pspsim.ErrNotPayable, "before its creation")
	_, _, err = e.PayCobV(context.Background(), txid(1), "15/12/2026")
	require.ErrorIs(t, err, pspsim.ErrBadDate)
	e2eid, valor, err := e.PayCobV(context.Background(), txid(1), "2026-12-15")
	require.NoError(t, err)
	require.Equal(t, int64(102033), valor)
	_, _, err = e.PayCobV(context.Background(), txid(1), "2026-12-15")
	require.ErrorIs(t, err, pspsim.ErrNotPayable, "paid already")
	st, b = e.do(http.MethodGet, "/v2/cobv/"+txid(1), nil)
	expect(http.StatusOK, st, b)
	require.Equal(t, "CONCLUIDA", b["status"])
	require.Equal(t, e2eid, get(b, "pix", 0, "endToEndId"))
	require.Equal(t, "1020.33", get(b, "pix", 0, "valor"))
	st, b = e.do(http.MethodGet, "/v2/pix/"+e2eid, nil)
	expect(http.StatusOK, st, b)
	paths, hooks := e.hooks.received()
	require.Equal(t, []string{"POST /psp/webhook/secret/pix"}, paths)
	require.Equal(t, "1020.33", get(hooks[0], "pix", 0, "valor"))

	// Today (the simulator's clock, the 1st): the first discount.
	_, valor, err = e.PayCobV(context.Background(), txid(3), "")
	require.NoError(t, err)
	require.Equal(t, int64(10000-250), valor)

	remove := map[string]any{"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"}
	st, b = e.do(http.MethodPatch, "/v2/cobv/"+txid(1), remove)
	expect(http.StatusBadRequest, st, b)
	st, b = e.do(http.MethodPatch, "/v2/cobv/"+txid(2), map[string]any{"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR", "solicitacaoPagador": "x"})
	expect(http.StatusBadRequest, st, b)
	st, b = e.do(http.MethodPatch, "/v2/cobv/"+txid(2), remove)
	expect(http.StatusOK, st, b)
	require.Equal(t, "REMOVIDA_PELO_USUARIO_RECEBEDOR", b["status"])
	st, b = e.do(http.MethodPatch, "/v2/cobv/"+txid(2), remove)
	expect(http.StatusBadRequest, st, b)
	st, b = e.do(http.MethodPatch, "/v2/cobv/"+txid(9), remove)
	expect(http.StatusNotFound, st, b)
	_, _, err = e.PayCobV(context.Background(), txid(2), "")
	require.ErrorIs(t, err, pspsim.ErrNotPayable, "removed")

	v.Check(t)
	require.Equal(t, 19, v.Validated(), "every API Pix exchange above was validated")
}

// TestCobVPaidThroughTheControlAPI pays a cobv on a chosen date with POST
// /sim/paycobv/{txid}.
func TestCobVPaidThroughTheControlAPI(t *testing.T) {
	t.Parallel()
	e := startSim(t, func(o *pspsim.Options) {
		o.ControlAddr = "127.0.0.1:0"
		o.Now = func() time.Time { return cobvNow }
	})
	st, b := e.do(http.MethodPut, "/v2/cobv/"+txid(1), cobvBody("1000.00"))
	require.Equal(t, http.StatusCreated, st, "%v", b)
	post := func(path, body string) (int, map[string]any) {
		resp, err := http.Post(e.ControlURL()+path, "application/json", bytes.NewReader([]byte(body)))
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return resp.StatusCode, out
	}
	st, b = post("/sim/paycobv/"+txid(1), `{"date":"2026-12-22"}`)
	require.Equal(t, http.StatusConflict, st, "%v", b)
	st, b = post("/sim/paycobv/"+txid(1), `{"date":"22/12/2026"}`)
	require.Equal(t, http.StatusBadRequest, st, "%v", b)
	st, b = post("/sim/paycobv/"+txid(8), `{}`)
	require.Equal(t, http.StatusNotFound, st, "%v", b)
	st, b = post("/sim/paycobv/"+txid(1), `{"date":"2026-12-21"}`)
	require.Equal(t, http.StatusOK, st, "%v", b)
	require.Equal(t, "1022.33", b["valor"], "seven days after Monday the 14th")
	require.Len(t, b["endToEndId"], 32)
}

// TestCobVPaidByCode: a person has pixgate's qrcode, not the txid. GET
// /sim/state lists the cobvs with their codes, POST /sim/paycobv pays the
// one whose code it is given, and the Pix is stamped with the day it was
// paid for (the receiver prices a cobv by that date), at the clock's São
// Paulo time of day.
func TestCobVPaidByCode(t *testing.T) {
	t.Parallel()
	e := startSim(t, func(o *pspsim.Options) {
		o.ControlAddr = "127.0.0.1:0"
		o.Now = func() time.Time { return cobvNow }
	})
	st, b := e.do(http.MethodPut, "/v2/cobv/"+txid(1), cobvBody("1000.00"))
	require.Equal(t, http.StatusCreated, st, "%v", b)
	code := b["pixCopiaECola"].(string)
	require.NotEmpty(t, code)

	cobvs := e.State().CobVs
	require.Len(t, cobvs, 1)
	require.Equal(t, txid(1), cobvs[0]["txid"])
	require.Equal(t, code, cobvs[0]["pixCopiaECola"])
	require.Equal(t, "ATIVA", cobvs[0]["status"])

	post := func(body string) (int, map[string]any) {
		resp, err := http.Post(e.ControlURL()+"/sim/paycobv", "application/json", bytes.NewReader([]byte(body)))
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return resp.StatusCode, out
	}
	st, b = post(`{"date":"2026-12-15"}`)
	require.Equal(t, http.StatusBadRequest, st, "no code: %v", b)
	st, b = post(`{"code":"00020101021226","date":"2026-12-15"}`)
	require.Equal(t, http.StatusNotFound, st, "no cobv has that code: %v", b)
	body, err := json.Marshal(map[string]string{"code": code, "date": "2026-12-15"})
	require.NoError(t, err)
	st, b = post(string(body))
	require.Equal(t, http.StatusOK, st, "%v", b)
	require.Equal(t, txid(1), b["txid"])
	require.Equal(t, "1020.33", b["valor"], "one day after the due date moved to Monday the 14th")

	st, b = e.do(http.MethodGet, "/v2/pix/"+b["endToEndId"].(string), nil)
	require.Equal(t, http.StatusOK, st, "%v", b)
	horario, err := time.Parse(time.RFC3339Nano, b["horario"].(string))
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 12, 15, 15, 0, 0, 0, time.UTC), horario.UTC(), "the day paid for, at noon in São Paulo as the clock reads")
	require.Equal(t, "CONCLUIDA", e.State().CobVs[0]["status"])
}
