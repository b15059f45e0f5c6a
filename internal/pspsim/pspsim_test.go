package pspsim_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/brcode"
	"github.com/pixgate/pixgate/internal/pspsim"
)

var e2eRE = regexp.MustCompile(`^E99999999\d{12}[a-zA-Z0-9]{11}$`)

func TestMutualTLSAndTokens(t *testing.T) {
	e := startSim(t, func(o *pspsim.Options) { o.TokenLifetime = 10 * time.Minute })

	// Without a client certificate the handshake fails.
	noCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: e.Options().PKI.CA, MinVersion: tls.VersionTLS12}}}
	resp, err := noCert.Post(e.TokenURL(), "application/x-www-form-urlencoded", strings.NewReader("grant_type=client_credentials"))
	if err == nil {
		resp.Body.Close()
	}
	require.Error(t, err, "a client without certificate must be refused")

	// Wrong credentials: 401.
	req, _ := http.NewRequest(http.MethodPost, e.TokenURL(), strings.NewReader("grant_type=client_credentials"))
	req.SetBasicAuth("client-1", "wrong")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err = e.client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	// Efí's JSON form of the grant is taken too.
	req, _ = http.NewRequest(http.MethodPost, e.TokenURL(), strings.NewReader(`{"grant_type":"client_credentials"}`))
	req.SetBasicAuth("client-1", "secret-1")
	req.Header.Set("Content-Type", "application/json")
	resp, err = e.client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	st, _ := e.do(http.MethodGet, "/v2/cob/"+txid(1), nil)
	assert.Equal(t, http.StatusNotFound, st, "a valid token reaches the API")

	good := e.token
	e.token = "not-a-token"
	st, body := e.do(http.MethodGet, "/v2/cob/"+txid(1), nil)
	assert.Equal(t, http.StatusUnauthorized, st)
	assert.Equal(t, "https://pix.bcb.gov.br/api/v2/error/NaoAutorizado", body["type"])

	e.token = good
	e.clock.Advance(10*time.Minute + time.Second)
	st, _ = e.do(http.MethodGet, "/v2/cob/"+txid(1), nil)
	assert.Equal(t, http.StatusUnauthorized, st, "an expired token is refused")

	e.token = e.fetchToken("client-1", "secret-1")
	st, _ = e.do(http.MethodGet, "/v2/cob/"+txid(1), nil)
	assert.Equal(t, http.StatusNotFound, st)
	e.ExpireTokens()
	st, _ = e.do(http.MethodGet, "/v2/cob/"+txid(1), nil)
	assert.Equal(t, http.StatusUnauthorized, st, "ExpireTokens invalidates issued tokens")
}

func TestCobCreatePayCancel(t *testing.T) {
	e := startSim(t, nil)
	e.registerWebhook()

	st, cob := e.do(http.MethodPut, "/v2/cob/"+txid(1), cobBody("25.90"))
	require.Equal(t, http.StatusCreated, st, "%v", cob)
	assert.Equal(t, "ATIVA", cob["status"])
	assert.Equal(t, txid(1), cob["txid"])
	assert.EqualValues(t, 0, cob["revisao"])
	assert.Equal(t, "25.90", get(cob, "valor", "original"))
	assert.Equal(t, testKey, cob["chave"])
	assert.EqualValues(t, 3600, get(cob, "calendario", "expiracao"))
	loc, _ := cob["location"].(string)
	require.NotEmpty(t, loc)
	assert.Equal(t, loc, get(cob, "loc", "location"))

	// The BR Code is a dynamic one pointing at the location.
	code, err := brcode.Parse(cob["pixCopiaECola"].(string))
	require.NoError(t, err)
	poi, _ := code.Lookup("01")
	assert.Equal(t, "12", poi.Value)
	mai, ok := code.Lookup("26")
	require.True(t, ok)
	gui, _ := mai.Lookup("00")
	url25, _ := mai.Lookup("25")
	_, hasKey := mai.Lookup("01")
	assert.Equal(t, brcode.GUI, gui.Value)
	assert.Equal(t, loc, url25.Value)
	assert.False(t, hasKey, "a dynamic code carries no key")
	add, _ := code.Lookup("62")
	tx, _ := add.Lookup("05")
	assert.Equal(t, "***", tx.Value)
	amount, _ := code.Lookup("54")
	assert.Equal(t, "25.90", amount.Value)

	// A txid is used once.
	st, prob := e.do(http.MethodPut, "/v2/cob/"+txid(1), cobBody("25.90"))
	assert.Equal(t, http.StatusBadRequest, st)
	assert.Equal(t, "https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida", prob["type"])

	st, got := e.do(http.MethodGet, "/v2/cob/"+txid(1), nil)
	require.Equal(t, http.StatusOK, st)
	assert.Equal(t, cob["pixCopiaECola"], got["pixCopiaECola"])

	e2eid, err := e.Pay(context.Background(), txid(1))
	require.NoError(t, err)
	assert.Regexp(t, e2eRE, e2eid)
	assert.Len(t, e2eid, 32)

	// The webhook arrived before Pay returned, at <webhookUrl>/pix.
	paths, bodies := e.hooks.received()
	require.Equal(t, []string{"POST /psp/webhook/secret/pix"}, paths)
	assert.Equal(t, e2eid, get(bodies[0], "pix", 0, "endToEndId"))
	assert.Equal(t, txid(1), get(bodies[0], "pix", 0, "txid"))
	assert.Equal(t, "25.90", get(bodies[0], "pix", 0, "valor"))
	assert.NotEmpty(t, get(bodies[0], "pix", 0, "horario"))

	st, got = e.do(http.MethodGet, "/v2/cob/"+txid(1), nil)
	require.Equal(t, http.StatusOK, st)
	assert.Equal(t, "CONCLUIDA", got["status"])
	assert.Equal(t, e2eid, get(got, "pix", 0, "endToEndId"))

	st, pix := e.do(http.MethodGet, "/v2/pix/"+e2eid, nil)
	require.Equal(t, http.StatusOK, st)
	assert.Equal(t, "25.90", pix["valor"])
	assert.Equal(t, txid(1), pix["txid"])
	st, _ = e.do(http.MethodGet, "/v2/pix/E99999999202001011200abcdefghijk", nil)
	assert.Equal(t, http.StatusNotFound, st)

	_, err = e.Pay(context.Background(), txid(1))
	assert.ErrorIs(t, err, pspsim.ErrNotPayable, "a paid cob cannot be paid again")

	// A paid cob cannot be removed; an active one can.
	remove := map[string]any{"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"}
	st, _ = e.do(http.MethodPatch, "/v2/cob/"+txid(1), remove)
	assert.Equal(t, http.StatusBadRequest, st)
	st, _ = e.do(http.MethodPut, "/v2/cob/"+txid(2), cobBody("1.00"))
	require.Equal(t, http.StatusCreated, st)
	st, got = e.do(http.MethodPatch, "/v2/cob/"+txid(2), remove)
	require.Equal(t, http.StatusOK, st, "%v", got)
	assert.Equal(t, "REMOVIDA_PELO_USUARIO_RECEBEDOR", got["status"])
	assert.EqualValues(t, 1, got["revisao"])
	_, err = e.Pay(context.Background(), txid(2))
	assert.ErrorIs(t, err, pspsim.ErrNotPayable)
	_, err = e.Pay(context.Background(), txid(3))
	assert.ErrorIs(t, err, pspsim.ErrUnknownCharge)

	// An expired cob cannot be paid.
	body := cobBody("2.00")
	body["calendario"] = map[string]any{"expiracao": 60}
	st, _ = e.do(http.MethodPut, "/v2/cob/"+txid(4), body)
	require.Equal(t, http.StatusCreated, st)
	e.clock.Advance(61 * time.Second)
	_, err = e.Pay(context.Background(), txid(4))
	assert.ErrorIs(t, err, pspsim.ErrNotPayable)
}

func TestCobValidation(t *testing.T) {
	e := startSim(t, nil)
	for name, tc := range map[string]struct {
		txid string
		mod  func(map[string]any)
		prop string
	}{
		"other key":         {txid(1), func(b map[string]any) { b["chave"] = "someone@else.com" }, "cob.chave"},
		"no key":            {txid(1), func(b map[string]any) { delete(b, "chave") }, "cob.chave"},
		"three decimals":    {txid(1), func(b map[string]any) { b["valor"] = map[string]any{"original": "1.000"} }, "cob.valor.original"},
		"zero":              {txid(1), func(b map[string]any) { b["valor"] = map[string]any{"original": "0.00"} }, "cob.valor.original"},
		"comma":             {txid(1), func(b map[string]any) { b["valor"] = map[string]any{"original": "1,00"} }, "cob.valor.original"},
		"zero expiry":       {txid(1), func(b map[string]any) { b["calendario"] = map[string]any{"expiracao": 0} }, "cob.calendario.expiracao"},
		"no calendario":     {txid(1), func(b map[string]any) { delete(b, "calendario") }, "cob.calendario"},
		"short cpf":         {txid(1), func(b map[string]any) { b["devedor"] = map[string]any{"cpf": "123", "nome": "X"} }, "cob.devedor.cpf"},
		"long question":     {txid(1), func(b map[string]any) { b["solicitacaoPagador"] = strings.Repeat("a", 141) }, "cob.solicitacaoPagador"},
		"short txid":        {strings.Repeat("a", 25), func(map[string]any) {}, "cob.txid"},
		"txid with a dash":  {strings.Repeat("a", 25) + "-", func(map[string]any) {}, "cob.txid"},
		"status on create":  {txid(1), func(b map[string]any) { b["status"] = "ATIVA" }, "cob.status"},
		"cnpj of lowercase": {txid(1), func(b map[string]any) { b["devedor"] = map[string]any{"cnpj": "1234567800019a", "nome": "X"} }, "cob.devedor.cnpj"},
	} {
		t.Run(name, func(t *testing.T) {
			b := cobBody("10.00")
			tc.mod(b)
			st, prob := e.do(http.MethodPut, "/v2/cob/"+tc.txid, b)
			require.Equal(t, http.StatusBadRequest, st, "%v", prob)
			assert.EqualValues(t, 400, prob["status"])
			assert.Equal(t, tc.prop, get(prob, "violacoes", 0, "propriedade"), "%v", prob)
		})
	}
	// A CNPJ devedor and the default expiry are fine.
	b := cobBody("10.00")
	b["devedor"] = map[string]any{"cnpj": "12345678000195", "nome": "Empresa"}
	b["calendario"] = map[string]any{}
	st, cob := e.do(http.MethodPut, "/v2/cob/"+txid(9), b)
	require.Equal(t, http.StatusCreated, st, "%v", cob)
	assert.EqualValues(t, 86400, get(cob, "calendario", "expiracao"))
}

func TestListPixPaged(t *testing.T) {
	e := startSim(t, nil)
	start := e.clock.Now()
	var e2eids []string
	for i := range 5 {
		st, _ := e.do(http.MethodPut, "/v2/cob/"+txid(i), cobBody("1.0"+string(rune('0'+i))))
		require.Equal(t, http.StatusCreated, st)
		e.clock.Advance(time.Minute)
		id, err := e.Pay(context.Background(), txid(i))
		require.NoError(t, err)
		e2eids = append(e2eids, id)
	}
	end := e.clock.Now()
	list := func(from, to time.Time, page, per int) (int, map[string]any) {
		q := url.Values{"inicio": {from.UTC().Format(time.RFC3339Nano)}, "fim": {to.UTC().Format(time.RFC3339Nano)},
			"paginacao.paginaAtual": {strconv.Itoa(page)}, "paginacao.itensPorPagina": {strconv.Itoa(per)}}
		return e.do(http.MethodGet, "/v2/pix?"+q.Encode(), nil)
	}
	var seen []string
	for page := range 3 {
		st, body := list(start, end, page, 2)
		require.Equal(t, http.StatusOK, st, "%v", body)
		assert.EqualValues(t, 3, get(body, "parametros", "paginacao", "quantidadeDePaginas"))
		assert.EqualValues(t, 5, get(body, "parametros", "paginacao", "quantidadeTotalDeItens"))
		assert.EqualValues(t, page, get(body, "parametros", "paginacao", "paginaAtual"))
		for _, p := range body["pix"].([]any) {
			seen = append(seen, p.(map[string]any)["endToEndId"].(string))
		}
	}
	assert.Equal(t, e2eids, seen, "every Pix once, oldest first")

	// The window is on horario: minutes 2..3 hold the second and third.
	st, body := list(start.Add(90*time.Second), start.Add(3*time.Minute+time.Second), 0, 100)
	require.Equal(t, http.StatusOK, st)
	assert.Len(t, body["pix"], 2)
	assert.Equal(t, e2eids[1], get(body, "pix", 0, "endToEndId"))

	st, body = list(end.Add(time.Hour), end.Add(2*time.Hour), 0, 100)
	require.Equal(t, http.StatusOK, st)
	assert.Empty(t, body["pix"])
	assert.EqualValues(t, 1, get(body, "parametros", "paginacao", "quantidadeDePaginas"))

	st, _ = e.do(http.MethodGet, "/v2/pix?inicio=yesterday&fim=today", nil)
	assert.Equal(t, http.StatusBadRequest, st)
}

func TestRefunds(t *testing.T) {
	e := startSim(t, nil)
	e.registerWebhook()
	st, _ := e.do(http.MethodPut, "/v2/cob/"+txid(1), cobBody("10.00"))
	require.Equal(t, http.StatusCreated, st)
	e2eid, err := e.Pay(context.Background(), txid(1))
	require.NoError(t, err)
	path := func(id string) string { return "/v2/pix/" + e2eid + "/devolucao/" + id }

	st, dev := e.do(http.MethodPut, path(hex32(1)), map[string]any{"valor": "4.00", "descricao": "customer asked"})
	require.Equal(t, http.StatusCreated, st, "%v", dev)
	assert.Equal(t, "EM_PROCESSAMENTO", dev["status"])
	assert.Equal(t, hex32(1), dev["id"])
	assert.Equal(t, "4.00", dev["valor"])
	assert.Len(t, dev["rtrId"], 32)
	assert.NotEmpty(t, get(dev, "horario", "solicitacao"))

	st, _ = e.do(http.MethodPut, path(hex32(1)), map[string]any{"valor": "4.00"})
	assert.Equal(t, http.StatusBadRequest, st, "a devolução id is used once")
	st, _ = e.do(http.MethodPut, path(hex32(2)), map[string]any{"valor": "6.01"})
	assert.Equal(t, http.StatusBadRequest, st, "no more than what remains")
	st, _ = e.do(http.MethodPut, "/v2/pix/E99999999202001011200abcdefghijk/devolucao/"+hex32(3), map[string]any{"valor": "1.00"})
	assert.Equal(t, http.StatusNotFound, st)
	st, _ = e.do(http.MethodGet, path(hex32(9)), nil)
	assert.Equal(t, http.StatusNotFound, st)
	assert.Equal(t, pspsim.Count{Puts: 2, Accepted: 1}, e.RefundCount(hex32(1)))

	st, failing := e.do(http.MethodPut, path(hex32(4)), map[string]any{"valor": "6.00", "descricao": "psp:fail"})
	require.Equal(t, http.StatusCreated, st, "%v", failing)

	// Before the settle delay: still processing.
	e.clock.Advance(30 * time.Second)
	st, dev = e.do(http.MethodGet, path(hex32(1)), nil)
	require.Equal(t, http.StatusOK, st)
	assert.Equal(t, "EM_PROCESSAMENTO", dev["status"])

	e.clock.Advance(31 * time.Second)
	st, dev = e.do(http.MethodGet, path(hex32(1)), nil)
	require.Equal(t, http.StatusOK, st)
	assert.Equal(t, "DEVOLVIDO", dev["status"])
	assert.NotEmpty(t, get(dev, "horario", "liquidacao"))
	st, dev = e.do(http.MethodGet, path(hex32(4)), nil)
	require.Equal(t, http.StatusOK, st)
	assert.Equal(t, "NAO_REALIZADO", dev["status"])

	// The failed 6.00 is refundable again.
	st, _ = e.do(http.MethodPut, path(hex32(5)), map[string]any{"valor": "6.00"})
	assert.Equal(t, http.StatusCreated, st)

	// Each settled devolução is reported with its Pix.
	require.Eventually(t, func() bool { _, b := e.hooks.received(); return len(b) >= 3 }, 5*time.Second, 10*time.Millisecond)
	_, bodies := e.hooks.received()
	found := map[string]string{}
	for _, b := range bodies[1:] {
		assert.Equal(t, e2eid, get(b, "pix", 0, "endToEndId"))
		for _, d := range get(b, "pix", 0, "devolucoes").([]any) {
			dm := d.(map[string]any)
			if dm["status"] != "EM_PROCESSAMENTO" {
				found[dm["id"].(string)] = dm["status"].(string)
			}
		}
	}
	assert.Equal(t, map[string]string{hex32(1): "DEVOLVIDO", hex32(4): "NAO_REALIZADO"}, found)
	st, pix := e.do(http.MethodGet, "/v2/pix/"+e2eid, nil)
	require.Equal(t, http.StatusOK, st)
	assert.Len(t, pix["devolucoes"], 3)
}

func TestSends(t *testing.T) {
	e := startSim(t, nil)
	send := func(id, key string) (int, map[string]any) {
		return e.do(http.MethodPut, "/v3/gn/pix/"+id, map[string]any{"valor": "12.34",
			"pagador": map[string]any{"chave": testKey, "infoPagador": "payout 1"}, "favorecido": map[string]any{"chave": key}})
	}
	st, out := send(hex32(1), "payee@example.com")
	require.Equal(t, http.StatusCreated, st, "%v", out)
	assert.Equal(t, hex32(1), out["idEnvio"])
	assert.Equal(t, "EM_PROCESSAMENTO", out["status"])
	assert.Equal(t, "12.34", out["valor"])
	assert.Regexp(t, e2eRE, out["e2eId"])
	assert.NotEmpty(t, get(out, "horario", "solicitacao"))

	st, _ = send(hex32(1), "payee@example.com")
	assert.Equal(t, http.StatusConflict, st, "an idEnvio is used once")
	assert.Equal(t, pspsim.Count{Puts: 2, Accepted: 1}, e.SendCount(hex32(1)))

	st, _ = e.do(http.MethodPut, "/v3/gn/pix/"+hex32(2), map[string]any{"valor": "1.00",
		"pagador": map[string]any{"chave": "other@example.com"}, "favorecido": map[string]any{"chave": "x@y.z"}})
	assert.Equal(t, http.StatusBadRequest, st, "pagador.chave must be the account's key")
	assert.Equal(t, pspsim.Count{Puts: 1}, e.SendCount(hex32(2)))

	st, _ = send(hex32(3), "someone@fail.psp")
	require.Equal(t, http.StatusCreated, st)

	st, got := e.do(http.MethodGet, "/v2/gn/pix/enviados/id-envio/"+hex32(1), nil)
	require.Equal(t, http.StatusOK, st)
	assert.Equal(t, "EM_PROCESSAMENTO", got["status"])
	assert.Equal(t, out["e2eId"], got["endToEndId"])
	assert.Equal(t, "payee@example.com", get(got, "favorecido", "chave"))
	assert.Equal(t, testKey, get(got, "pagador", "chave"))

	e.clock.Advance(time.Minute)
	st, got = e.do(http.MethodGet, "/v2/gn/pix/enviados/id-envio/"+hex32(1), nil)
	require.Equal(t, http.StatusOK, st)
	assert.Equal(t, "REALIZADO", got["status"])
	assert.NotEmpty(t, get(got, "horario", "liquidacao"))
	st, got = e.do(http.MethodGet, "/v2/gn/pix/enviados/id-envio/"+hex32(3), nil)
	require.Equal(t, http.StatusOK, st)
	assert.Equal(t, "NAO_REALIZADO", got["status"])
	st, _ = e.do(http.MethodGet, "/v2/gn/pix/enviados/id-envio/"+hex32(4), nil)
	assert.Equal(t, http.StatusNotFound, st)
}

func TestSettleWithoutDelay(t *testing.T) {
	e := startSim(t, func(o *pspsim.Options) { o.SettleDelay = -1 })
	st, _ := e.do(http.MethodPut, "/v3/gn/pix/"+hex32(1), map[string]any{"valor": "1.00",
		"pagador": map[string]any{"chave": testKey}, "favorecido": map[string]any{"chave": "a@b.c"}})
	require.Equal(t, http.StatusCreated, st)
	e.clock.Advance(24 * time.Hour)
	e.token = e.fetchToken("client-1", "secret-1")
	_, got := e.do(http.MethodGet, "/v2/gn/pix/enviados/id-envio/"+hex32(1), nil)
	assert.Equal(t, "EM_PROCESSAMENTO", got["status"], "a negative delay waits for Settle")
	e.Settle(context.Background())
	_, got = e.do(http.MethodGet, "/v2/gn/pix/enviados/id-envio/"+hex32(1), nil)
	assert.Equal(t, "REALIZADO", got["status"])
}

func TestWebhookRegistration(t *testing.T) {
	e := startSim(t, nil)
	path := "/v2/webhook/" + url.PathEscape(testKey)
	st, _ := e.do(http.MethodGet, path, nil)
	assert.Equal(t, http.StatusNotFound, st)
	st, _ = e.do(http.MethodPut, "/v2/webhook/other@key.com", map[string]any{"webhookUrl": "https://example.com/hook"})
	assert.Equal(t, http.StatusBadRequest, st)
	st, _ = e.do(http.MethodPut, path, map[string]any{"webhookUrl": "not a url"})
	assert.Equal(t, http.StatusBadRequest, st)
	e.registerWebhook()
	st, got := e.do(http.MethodGet, path, nil)
	require.Equal(t, http.StatusOK, st)
	assert.Equal(t, e.hooks.URL+"/psp/webhook/secret", got["webhookUrl"])
	assert.Equal(t, testKey, got["chave"])
	assert.NotEmpty(t, got["criacao"])
	st, _ = e.do(http.MethodDelete, path, nil)
	assert.Equal(t, http.StatusNoContent, st)
	st, _ = e.do(http.MethodGet, path, nil)
	assert.Equal(t, http.StatusNotFound, st)

	// Without a webhook a payment is not announced.
	st, _ = e.do(http.MethodPut, "/v2/cob/"+txid(1), cobBody("1.00"))
	require.Equal(t, http.StatusCreated, st)
	_, err := e.Pay(context.Background(), txid(1))
	require.NoError(t, err)
	paths, _ := e.hooks.received()
	assert.Empty(t, paths)
	d := e.Deliveries()
	require.Len(t, d, 1)
	assert.Equal(t, "no webhook registered", d[0].Err)
}

func TestFaults(t *testing.T) {
	e := startSim(t, nil)
	e.registerWebhook()
	sendBody := map[string]any{"valor": "5.00", "pagador": map[string]any{"chave": testKey}, "favorecido": map[string]any{"chave": "a@b.c"}}

	// Committed then 500: the send exists although the answer says otherwise.
	e.AddFault(pspsim.Fault{Method: http.MethodPut, PathPrefix: "/v3/gn/pix/", Kind: pspsim.FaultCommitThenError})
	st, prob := e.do(http.MethodPut, "/v3/gn/pix/"+hex32(1), sendBody)
	assert.Equal(t, http.StatusInternalServerError, st)
	assert.EqualValues(t, 500, prob["status"])
	st, _ = e.do(http.MethodGet, "/v2/gn/pix/enviados/id-envio/"+hex32(1), nil)
	assert.Equal(t, http.StatusOK, st)
	assert.Equal(t, pspsim.Count{Puts: 1, Accepted: 1}, e.SendCount(hex32(1)))

	// A plain 500: nothing happened, and only the next one fails.
	e.AddFault(pspsim.Fault{Method: http.MethodPut, PathPrefix: "/v3/gn/pix/", Kind: pspsim.FaultError})
	st, _ = e.do(http.MethodPut, "/v3/gn/pix/"+hex32(2), sendBody)
	assert.Equal(t, http.StatusInternalServerError, st)
	st, _ = e.do(http.MethodGet, "/v2/gn/pix/enviados/id-envio/"+hex32(2), nil)
	assert.Equal(t, http.StatusNotFound, st)
	assert.Equal(t, pspsim.Count{}, e.SendCount(hex32(2)))
	st, _ = e.do(http.MethodPut, "/v3/gn/pix/"+hex32(2), sendBody)
	assert.Equal(t, http.StatusCreated, st)

	// A method that does not match leaves the fault armed.
	e.AddFault(pspsim.Fault{Method: http.MethodPut, PathPrefix: "/v2/cob/", Kind: pspsim.FaultError, Times: 2})
	st, _ = e.do(http.MethodGet, "/v2/cob/"+txid(1), nil)
	assert.Equal(t, http.StatusNotFound, st)
	for range 2 {
		st, _ = e.do(http.MethodPut, "/v2/cob/"+txid(1), cobBody("1.00"))
		assert.Equal(t, http.StatusInternalServerError, st)
	}
	st, _ = e.do(http.MethodPut, "/v2/cob/"+txid(1), cobBody("1.00"))
	assert.Equal(t, http.StatusCreated, st)

	// A hang: the client gives up, nothing happened.
	e.AddFault(pspsim.Fault{PathPrefix: "/v3/gn/pix/" + hex32(3), Kind: pspsim.FaultHang})
	impatient := e.HTTPClient()
	impatient.Timeout = 300 * time.Millisecond
	req, _ := http.NewRequest(http.MethodPut, e.origin+"/v3/gn/pix/"+hex32(3), strings.NewReader(`{"valor":"5.00","pagador":{"chave":"`+testKey+`"},"favorecido":{"chave":"a@b.c"}}`))
	req.Header.Set("Authorization", "Bearer "+e.token)
	resp, err := impatient.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	require.Error(t, err)
	st, _ = e.do(http.MethodGet, "/v2/gn/pix/enviados/id-envio/"+hex32(3), nil)
	assert.Equal(t, http.StatusNotFound, st)

	// Committed then hang: it happened, the client never heard.
	e.AddFault(pspsim.Fault{PathPrefix: "/v3/gn/pix/" + hex32(4), Kind: pspsim.FaultCommitThenHang})
	req, _ = http.NewRequest(http.MethodPut, e.origin+"/v3/gn/pix/"+hex32(4), strings.NewReader(`{"valor":"5.00","pagador":{"chave":"`+testKey+`"},"favorecido":{"chave":"a@b.c"}}`))
	req.Header.Set("Authorization", "Bearer "+e.token)
	resp, err = impatient.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	require.Error(t, err)
	st, _ = e.do(http.MethodGet, "/v2/gn/pix/enviados/id-envio/"+hex32(4), nil)
	assert.Equal(t, http.StatusOK, st)

	// Down: every request, tokens included, answers 503.
	e.SetDown(true)
	st, prob = e.do(http.MethodGet, "/v2/cob/"+txid(1), nil)
	assert.Equal(t, http.StatusServiceUnavailable, st)
	assert.Equal(t, "https://pix.bcb.gov.br/api/v2/error/ServicoIndisponivel", prob["type"])
	resp, err = e.client.Post(e.TokenURL(), "application/x-www-form-urlencoded", strings.NewReader("grant_type=client_credentials"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	e.SetDown(false)

	// A lost webhook is recorded but never sent; the next one is.
	e.LoseWebhooks(1)
	_, err = e.Pay(context.Background(), txid(1))
	require.NoError(t, err)
	st, _ = e.do(http.MethodPut, "/v2/cob/"+txid(2), cobBody("1.00"))
	require.Equal(t, http.StatusCreated, st)
	_, err = e.Pay(context.Background(), txid(2))
	require.NoError(t, err)
	paths, _ := e.hooks.received()
	assert.Len(t, paths, 1)
	d := e.Deliveries()
	require.Len(t, d, 2)
	assert.True(t, d[0].Lost)
	assert.False(t, d[1].Lost)
	assert.Equal(t, http.StatusOK, d[1].Status)

	// The request log shows what the client saw, hangs as 0.
	var statuses []int
	for _, r := range e.Requests() {
		if r.Path == "/v3/gn/pix/"+hex32(1) || r.Path == "/v3/gn/pix/"+hex32(3) {
			statuses = append(statuses, r.Status)
		}
	}
	assert.Equal(t, []int{500, 0}, statuses)
}

func TestRunPrintsEnvironment(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	r, w := newPipe()
	done := make(chan error, 1)
	go func() {
		done <- pspsim.Run(ctx, pspsim.CommandConfig{Addr: "127.0.0.1:0", ControlAddr: "127.0.0.1:0", Dir: dir, PixKey: "k@example.com"}, w)
	}()
	env := readEnv(t, r)
	assert.Equal(t, "efi", env["PIXGATE_PROVIDER"])
	assert.Equal(t, "k@example.com", env["PIXGATE_PSP_PIX_KEY"])
	assert.Regexp(t, `^http://127\.0\.0\.1:8080/psp/webhook/[A-Za-z0-9_-]{32,}$`, env["PIXGATE_PSP_WEBHOOK_URL"])
	callWithEnv(t, env)
	cancel()
	require.NoError(t, <-done)
}

func TestControlAPI(t *testing.T) {
	e := startSim(t, func(o *pspsim.Options) { o.ControlAddr = "127.0.0.1:0" })
	e.registerWebhook()
	ctl := e.ControlURL()
	require.NotEmpty(t, ctl)
	st, _ := e.do(http.MethodPut, "/v2/cob/"+txid(1), cobBody("3.00"))
	require.Equal(t, http.StatusCreated, st)

	resp, err := http.Post(ctl+"/sim/pay/"+txid(1), "", nil)
	require.NoError(t, err)
	paid := decode(t, resp)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Regexp(t, e2eRE, paid["endToEndId"])
	resp, err = http.Post(ctl+"/sim/pay/"+txid(1), "", nil)
	require.NoError(t, err)
	decode(t, resp)
	assert.Equal(t, http.StatusConflict, resp.StatusCode)
	st, cob := e.do(http.MethodPut, "/v2/cob/"+txid(3), cobBody("4.00"))
	require.Equal(t, http.StatusCreated, st)
	resp, err = http.Post(ctl+"/sim/pay", "text/plain", strings.NewReader(cob["pixCopiaECola"].(string)+"\n"))
	require.NoError(t, err)
	paidByCode := decode(t, resp)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, txid(3), paidByCode["txid"], "a cob is found by its copy-and-paste code")
	resp, err = http.Post(ctl+"/sim/pay/"+txid(2), "", nil)
	require.NoError(t, err)
	decode(t, resp)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

	resp, err = http.Post(ctl+"/sim/faults", "application/json", strings.NewReader(`{"add":[{"method":"GET","path_prefix":"/v2/cob/","kind":"error"}],"down":false}`))
	require.NoError(t, err)
	state := decode(t, resp)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "error", get(state, "faults", 0, "kind"))
	st, _ = e.do(http.MethodGet, "/v2/cob/"+txid(1), nil)
	assert.Equal(t, http.StatusInternalServerError, st)

	resp, err = http.Post(ctl+"/sim/faults", "application/json", strings.NewReader(`{"add":[{"kind":"explode"}]}`))
	require.NoError(t, err)
	decode(t, resp)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)

	resp, err = http.Get(ctl + "/sim/state")
	require.NoError(t, err)
	state = decode(t, resp)
	assert.Equal(t, "CONCLUIDA", get(state, "cobs", 0, "status"))
	assert.Equal(t, paid["endToEndId"], get(state, "pix", 0, "endToEndId"))
	assert.Equal(t, testKey, state["pix_key"])
}

func TestCloseEndsHangingRequests(t *testing.T) {
	e := startSim(t, nil)
	e.AddFault(pspsim.Fault{Kind: pspsim.FaultHang})
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, e.origin+"/v2/cob/"+txid(1), nil)
		req.Header.Set("Authorization", "Bearer "+e.token)
		resp, err := e.client.Do(req)
		if err == nil {
			resp.Body.Close()
			err = errors.New(resp.Status)
		}
		errc <- err
	}()
	require.Eventually(t, func() bool { return len(e.State().Faults) == 0 }, 5*time.Second, 5*time.Millisecond)
	e.Close()
	select {
	case err := <-errc:
		assert.Error(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Close left a hanging request hanging")
	}
}

// cutReader gives its text, then fails: a client that dies while it sends
// a request's body.
type cutReader struct{ text string }

func (c *cutReader) Read(p []byte) (int, error) {
	if c.text == "" {
		return 0, errors.New("the client died mid-body")
	}
	n := copy(p, c.text)
	c.text = c.text[n:]
	return n, nil
}

// A PUT whose body never arrives whole is not a send the PSP saw: it is
// not counted, so that a resend after a reading (which finds nothing) is
// not taken for a second send. The whole PUT that follows is the one.
func TestSendCutMidBodyIsNotCounted(t *testing.T) {
	e := startSim(t, nil)
	path := "/v3/gn/pix/" + hex32(7)
	req, err := http.NewRequest(http.MethodPut, e.origin+path, &cutReader{text: `{"valor":"12.34","pagador":{"chave"`})
	require.NoError(t, err)
	req.ContentLength = 200
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.token)
	if resp, err := e.client.Do(req); err == nil {
		resp.Body.Close()
	}
	// The handler has run once the request is in the simulator's log.
	require.Eventually(t, func() bool {
		for _, r := range e.Requests() {
			if r.Method == http.MethodPut && r.Path == path {
				return true
			}
		}
		return false
	}, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, pspsim.Count{}, e.SendCount(hex32(7)))

	st, out := e.do(http.MethodPut, path, map[string]any{"valor": "12.34",
		"pagador": map[string]any{"chave": testKey}, "favorecido": map[string]any{"chave": "payee@example.com"}})
	require.Equal(t, http.StatusCreated, st, "%v", out)
	assert.Equal(t, pspsim.Count{Puts: 1, Accepted: 1}, e.SendCount(hex32(7)))
}
