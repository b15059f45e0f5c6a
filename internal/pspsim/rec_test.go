package pspsim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

// recNow is the simulator's clock in these tests: Tuesday 2026-12-01,
// noon in São Paulo.
var recNow = time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)

// recBody is a recurrence as pixgate sends it: monthly from the 10th.
func recBody(loc any, politica string) map[string]any {
	b := map[string]any{
		"vinculo": map[string]any{"contrato": "CTR-1001", "objeto": "Plano mensal",
			"devedor": map[string]any{"cpf": "52998224725", "nome": "Maria Souza"}},
		"calendario":          map[string]any{"dataInicial": "2026-12-10", "dataFinal": "2027-12-10", "periodicidade": "MENSAL"},
		"valor":               map[string]any{"valorRec": "49.90"},
		"politicaRetentativa": politica,
	}
	if loc != nil {
		b["loc"] = loc
	}
	return b
}

// cobrBody is a cycle charge as pixgate sends it.
func cobrBody(idRec, due, valor string) map[string]any {
	return map[string]any{
		"idRec": idRec, "calendario": map[string]any{"dataDeVencimento": due},
		"valor": map[string]any{"original": valor}, "ajusteDiaUtil": true,
		"devedor":   map[string]any{"cpf": "52998224725", "nome": "Maria Souza", "cidade": "São Paulo", "uf": "SP"},
		"recebedor": map[string]any{"agencia": "0001", "conta": "123456", "tipoConta": "CORRENTE"},
	}
}

func (e *sim) registerRecHooks() {
	e.t.Helper()
	for _, kind := range []string{"rec", "cobr"} {
		st, body := e.do(http.MethodPut, "/v2/webhook"+kind, map[string]any{"webhookUrl": e.hooks.URL + "/psp/webhook/secret"})
		require.Equal(e.t, http.StatusOK, st, "%v", body)
	}
}

// newRec creates a location and a recurrence on it and returns its idRec.
func (e *sim) newRec(politica string) string {
	e.t.Helper()
	st, b := e.do(http.MethodPost, "/v2/locrec", nil)
	require.Equal(e.t, http.StatusCreated, st, "%v", b)
	st, b = e.do(http.MethodPost, "/v2/rec", recBody(b["id"], politica))
	require.Equal(e.t, http.StatusCreated, st, "%v", b)
	return b["idRec"].(string)
}

// TestRecConformance drives locrec, rec, cobr, retentativa, webhookrec and
// webhookcobr, answers of success and of refusal, through BACEN's OpenAPI,
// with the payer's approval, a debit, a failed attempt and its retry, and
// cancellations.
func TestRecConformance(t *testing.T) {
	t.Parallel()
	v := testkit.BACENValidator(t)
	clock := &testkit.Clock{}
	clock.Set(recNow)
	e := startSim(t, func(o *pspsim.Options) {
		o.Wrap = v.Wrap
		o.Now = clock.Now
	})
	e.clock = clock
	expect := func(want, got int, body map[string]any) {
		t.Helper()
		require.Equal(t, want, got, "%v", body)
	}
	ctx := context.Background()

	st, b := e.do(http.MethodGet, "/v2/webhookrec", nil)
	expect(http.StatusNotFound, st, b)
	e.registerRecHooks()
	st, b = e.do(http.MethodGet, "/v2/webhookrec", nil)
	expect(http.StatusOK, st, b)
	st, b = e.do(http.MethodGet, "/v2/webhookcobr", nil)
	expect(http.StatusOK, st, b)

	// Journey 2: a location, a recurrence on it, its QR code.
	st, loc := e.do(http.MethodPost, "/v2/locrec", nil)
	expect(http.StatusCreated, st, loc)
	st, b = e.do(http.MethodGet, "/v2/locrec/"+jsonNumber(loc["id"]), nil)
	expect(http.StatusOK, st, b)
	st, b = e.do(http.MethodPost, "/v2/rec", recBody(loc["id"], "PERMITE_3R_7D"))
	expect(http.StatusCreated, st, b)
	idRec := b["idRec"].(string)
	require.Regexp(t, `^RR99999999202612\d{2}[a-zA-Z0-9]{11}$`, idRec)
	require.Equal(t, "CRIADA", b["status"])
	require.Equal(t, "AGUARDANDO_DEFINICAO", get(b, "ativacao", "tipoJornada"))
	st, b = e.do(http.MethodGet, "/v2/rec/"+idRec, nil)
	expect(http.StatusOK, st, b)
	require.Equal(t, "JORNADA_2", get(b, "dadosQR", "jornada"))
	require.Contains(t, get(b, "dadosQR", "pixCopiaECola"), "/qr/v2/rec/")
	st, b = e.do(http.MethodPost, "/v2/rec", recBody(loc["id"], "NAO_PERMITE"))
	expect(http.StatusBadRequest, st, b) // the location serves the first one
	bad := recBody(int64(99999), "NAO_PERMITE")
	bad["calendario"] = map[string]any{"dataInicial": "2026-11-30", "dataFinal": "2026-11-29", "periodicidade": "MENSAL"}
	st, b = e.do(http.MethodPost, "/v2/rec", bad)
	expect(http.StatusBadRequest, st, b)
	require.Len(t, b["violacoes"], 2)
	st, b = e.do(http.MethodGet, "/v2/rec/RR999999992026120100000000000", nil)
	expect(http.StatusNotFound, st, b)

	// A cobr before approval is refused; the payer approves.
	st, b = e.do(http.MethodPut, "/v2/cobr/"+txid(1), cobrBody(idRec, "2026-12-10", "49.90"))
	expect(http.StatusBadRequest, st, b)
	e2e, err := e.ApproveRec(ctx, idRec)
	require.NoError(t, err)
	require.Empty(t, e2e, "journey 2 pays nothing")
	_, err = e.ApproveRec(ctx, idRec)
	require.ErrorIs(t, err, pspsim.ErrRecState)
	st, b = e.do(http.MethodGet, "/v2/rec/"+idRec, nil)
	expect(http.StatusOK, st, b)
	require.Equal(t, "APROVADA", b["status"])
	require.Equal(t, "JORNADA_2", get(b, "ativacao", "tipoJornada"))
	require.Equal(t, "52998224725", get(b, "pagador", "cpf"))

	// Cycle charges: in the 2–10 day window, the recurrence's value.
	for _, c := range []struct{ due, valor string }{{"2026-12-02", "49.90"}, {"2026-12-12", "49.90"}, {"2026-12-10", "50.00"}} {
		st, b = e.do(http.MethodPut, "/v2/cobr/"+txid(1), cobrBody(idRec, c.due, c.valor))
		expect(http.StatusBadRequest, st, b)
	}
	st, b = e.do(http.MethodPut, "/v2/cobr/"+txid(1), cobrBody(idRec, "2026-12-10", "49.90"))
	expect(http.StatusCreated, st, b)
	require.Equal(t, "CRIADA", b["status"])
	st, b = e.do(http.MethodPut, "/v2/cobr/"+txid(1), cobrBody(idRec, "2026-12-10", "49.90"))
	expect(http.StatusBadRequest, st, b) // the txid exists
	st, b = e.do(http.MethodGet, "/v2/cobr/"+txid(1), nil)
	expect(http.StatusOK, st, b)
	require.Equal(t, "ATIVA", b["status"], "the payer's bank scheduled it")
	require.Equal(t, "AGENDADA", get(b, "tentativas", 0, "status"))
	require.Equal(t, "2026-12-10", get(b, "tentativas", 0, "dataLiquidacao"))
	st, b = e.do(http.MethodGet, "/v2/cobr/"+txid(9), nil)
	expect(http.StatusNotFound, st, b)

	// No retry before a failure; then the debit fails and is retried.
	st, b = e.do(http.MethodPost, "/v2/cobr/"+txid(1)+"/retentativa/2026-12-11", nil)
	expect(http.StatusBadRequest, st, b)
	require.NoError(t, e.FailCobR(ctx, txid(1)))
	st, b = e.do(http.MethodGet, "/v2/cobr/"+txid(1), nil)
	expect(http.StatusOK, st, b)
	require.Equal(t, "ATIVA", b["status"], "PERMITE_3R_7D: it waits for a retry")
	require.Equal(t, "REJEITADA", get(b, "tentativas", 0, "status"))
	require.Equal(t, pspsim.FailDebitCode, get(b, "tentativas", 0, "rejeicao", "codigo"))
	st, b = e.do(http.MethodPost, "/v2/cobr/"+txid(1)+"/retentativa/2026-12-18", nil)
	expect(http.StatusBadRequest, st, b) // beyond 7 days
	st, b = e.do(http.MethodPost, "/v2/cobr/"+txid(1)+"/retentativa/2026-12-11", nil)
	expect(http.StatusCreated, st, b)
	require.Equal(t, "NTAG", get(b, "tentativas", 1, "tipo"))
	st, b = e.do(http.MethodPost, "/v2/cobr/"+txid(1)+"/retentativa/2026-12-13", nil)
	expect(http.StatusBadRequest, st, b) // one is scheduled already

	// The retry's day comes: the debit is made by the clock.
	clock.Set(time.Date(2026, 12, 11, 12, 0, 0, 0, time.UTC))
	e.token = e.fetchToken("client-1", "secret-1")
	st, b = e.do(http.MethodGet, "/v2/cobr/"+txid(1), nil)
	expect(http.StatusOK, st, b)
	require.Equal(t, "CONCLUIDA", b["status"])
	require.Equal(t, "PAGA", get(b, "tentativas", 1, "status"))
	e2e = get(b, "pix", 0, "endToEndId").(string)
	require.Equal(t, get(b, "tentativas", 1, "endToEndId"), e2e)
	require.Equal(t, "49.90", get(b, "pix", 0, "valor"))
	st, b = e.do(http.MethodGet, "/v2/pix/"+e2e, nil)
	expect(http.StatusOK, st, b)
	require.Equal(t, txid(1), b["txid"])

	// Lists over the time of the changes.
	q := url.Values{"inicio": {recNow.Add(-time.Hour).Format(time.RFC3339)}, "fim": {clock.Now().Add(time.Hour).Format(time.RFC3339)}}
	st, b = e.do(http.MethodGet, "/v2/rec?"+q.Encode(), nil)
	expect(http.StatusOK, st, b)
	require.Len(t, b["recs"], 1)
	q.Set("idRec", idRec)
	st, b = e.do(http.MethodGet, "/v2/cobr?"+q.Encode(), nil)
	expect(http.StatusOK, st, b)
	require.Len(t, b["cobsr"], 1)
	q = url.Values{"inicio": {"2027-01-01T00:00:00Z"}, "fim": {"2027-01-02T00:00:00Z"}}
	st, b = e.do(http.MethodGet, "/v2/cobr?"+q.Encode(), nil)
	expect(http.StatusOK, st, b)
	require.Empty(t, b["cobsr"])

	// The next cycle is cancelled by the receiver before its day; the one
	// after fails for good without retries left in its window.
	st, b = e.do(http.MethodPut, "/v2/cobr/"+txid(2), cobrBody(idRec, "2026-12-21", "49.90"))
	expect(http.StatusCreated, st, b)
	cancel := map[string]any{"status": "CANCELADA"}
	st, b = e.do(http.MethodPatch, "/v2/cobr/"+txid(2), cancel)
	expect(http.StatusOK, st, b)
	require.Equal(t, "CANCELADA", b["status"])
	st, b = e.do(http.MethodPatch, "/v2/cobr/"+txid(2), cancel)
	expect(http.StatusBadRequest, st, b)
	st, b = e.do(http.MethodPatch, "/v2/cobr/"+txid(1), cancel)
	expect(http.StatusBadRequest, st, b)
	st, b = e.do(http.MethodPatch, "/v2/cobr/"+txid(9), cancel)
	expect(http.StatusNotFound, st, b)

	// The receiver cancels the recurrence: its open cobr goes with it.
	st, b = e.do(http.MethodPut, "/v2/cobr/"+txid(3), cobrBody(idRec, "2026-12-20", "49.90"))
	expect(http.StatusCreated, st, b)
	st, b = e.do(http.MethodPatch, "/v2/rec/"+idRec, cancel)
	expect(http.StatusOK, st, b)
	require.Equal(t, "CANCELADA", b["status"])
	require.Equal(t, "USUARIO_RECEBEDOR", get(b, "encerramento", "cancelamento", "solicitante"))
	st, b = e.do(http.MethodPatch, "/v2/rec/"+idRec, cancel)
	expect(http.StatusBadRequest, st, b)
	st, b = e.do(http.MethodPatch, "/v2/rec/RR999999992026120100000000000", cancel)
	expect(http.StatusNotFound, st, b)
	st, b = e.do(http.MethodGet, "/v2/cobr/"+txid(3), nil)
	expect(http.StatusOK, st, b)
	require.Equal(t, "CANCELADA", b["status"])

	st, b = e.do(http.MethodDelete, "/v2/webhookcobr", nil)
	expect(http.StatusNoContent, st, b)
	st, b = e.do(http.MethodDelete, "/v2/webhookcobr", nil)
	expect(http.StatusNotFound, st, b)

	require.Equal(t, 43, v.Validated(), "every exchange above was validated")

	// Every change was notified, each notification in BACEN's shape.
	paths, bodies := e.hooks.received()
	for i, p := range paths {
		switch p {
		case "POST /psp/webhook/secret/rec":
			v.CheckCallback(t, "/webhookrec", "rec", bodies[i])
		case "POST /psp/webhook/secret/cobr":
			v.CheckCallback(t, "/webhookcobr", "cobr", bodies[i])
		default:
			t.Fatalf("unexpected delivery %s", p)
		}
	}
	require.Contains(t, paths, "POST /psp/webhook/secret/rec")
	require.Contains(t, paths, "POST /psp/webhook/secret/cobr")
	require.Equal(t, 43+len(paths), v.Validated(), "and every notification")
	v.Check(t)
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestRecJourneys: journey 3 pays the cob with the approval; the payer
// rejects one recurrence and cancels another, whose cobr is cancelled; a
// CRIADA one expires after seven days; a failed debit without retries
// expires the cobr. Every step through the control API, as people use it.
func TestRecJourneys(t *testing.T) {
	t.Parallel()
	clock := &testkit.Clock{}
	clock.Set(recNow)
	e := startSim(t, func(o *pspsim.Options) {
		o.ControlAddr = "127.0.0.1:0"
		o.Now = clock.Now
	})
	e.registerWebhook()
	e.registerRecHooks()
	post := func(path string) (int, map[string]any) {
		resp, err := http.Post(e.ControlURL()+path, "application/json", bytes.NewReader(nil))
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return resp.StatusCode, out
	}

	// Journey 3: the cob of the first payment, then the recurrence naming it.
	st, b := e.do(http.MethodPut, "/v2/cob/"+txid(1), cobBody("49.90"))
	require.Equal(t, http.StatusCreated, st, "%v", b)
	_, loc := e.do(http.MethodPost, "/v2/locrec", nil)
	body := recBody(loc["id"], "NAO_PERMITE")
	body["ativacao"] = map[string]any{"dadosJornada": map[string]any{"txid": txid(1)}}
	st, b = e.do(http.MethodPost, "/v2/rec", body)
	require.Equal(t, http.StatusCreated, st, "%v", b)
	idRec := b["idRec"].(string)
	require.Regexp(t, `^RN`, idRec)
	st, b = e.do(http.MethodGet, "/v2/rec/"+idRec+"?txid="+txid(1), nil)
	require.Equal(t, http.StatusOK, st)
	require.Equal(t, "JORNADA_3", get(b, "dadosQR", "jornada"))
	qr := get(b, "dadosQR", "pixCopiaECola").(string)
	require.Contains(t, qr, "/qr/v2/rec/")
	require.Contains(t, qr, "540549.90", "the composite code carries the cob's amount")
	st, b = post("/sim/rec/" + idRec + "/approve")
	require.Equal(t, http.StatusOK, st, "%v", b)
	_, cob := e.do(http.MethodGet, "/v2/cob/"+txid(1), nil)
	require.Equal(t, "CONCLUIDA", cob["status"])
	require.Equal(t, b["endToEndId"], get(cob, "pix", 0, "endToEndId"))
	_, b = e.do(http.MethodGet, "/v2/rec/"+idRec, nil)
	require.Equal(t, "JORNADA_3", get(b, "ativacao", "tipoJornada"))
	require.Equal(t, txid(1), get(b, "ativacao", "dadosJornada", "txid"))

	// A failed debit under NAO_PERMITE ends the cobr: EXPIRADA.
	st, b = e.do(http.MethodPut, "/v2/cobr/"+txid(2), cobrBody(idRec, "2026-12-10", "49.90"))
	require.Equal(t, http.StatusCreated, st, "%v", b)
	st, b = post("/sim/cobr/" + txid(2) + "/fail")
	require.Equal(t, http.StatusOK, st, "%v", b)
	_, b = e.do(http.MethodGet, "/v2/cobr/"+txid(2), nil)
	require.Equal(t, "EXPIRADA", b["status"])
	st, _ = post("/sim/cobr/" + txid(2) + "/debit")
	require.Equal(t, http.StatusConflict, st)
	st, _ = post("/sim/cobr/" + txid(9) + "/debit")
	require.Equal(t, http.StatusNotFound, st)

	// Debited at once through the control API.
	st, b = e.do(http.MethodPut, "/v2/cobr/"+txid(3), cobrBody(idRec, "2026-12-11", "49.90"))
	require.Equal(t, http.StatusCreated, st, "%v", b)
	st, b = post("/sim/cobr/" + txid(3) + "/debit")
	require.Equal(t, http.StatusOK, st, "%v", b)
	require.Len(t, b["endToEndId"], 32)

	// The payer cancels: the open cobr goes too.
	st, b = e.do(http.MethodPut, "/v2/cobr/"+txid(4), cobrBody(idRec, "2026-12-09", "49.90"))
	require.Equal(t, http.StatusCreated, st, "%v", b)
	st, b = post("/sim/rec/" + idRec + "/cancel-by-payer")
	require.Equal(t, http.StatusOK, st, "%v", b)
	_, b = e.do(http.MethodGet, "/v2/rec/"+idRec, nil)
	require.Equal(t, "CANCELADA", b["status"])
	require.Equal(t, "USUARIO_PAGADOR", get(b, "encerramento", "cancelamento", "solicitante"))
	_, b = e.do(http.MethodGet, "/v2/cobr/"+txid(4), nil)
	require.Equal(t, "CANCELADA", b["status"])
	st, _ = post("/sim/rec/" + idRec + "/cancel-by-payer")
	require.Equal(t, http.StatusConflict, st)

	// Rejected; and another left unanswered expires after seven days.
	rejected, unanswered := e.newRec("NAO_PERMITE"), e.newRec("NAO_PERMITE")
	st, b = post("/sim/rec/" + rejected + "/reject")
	require.Equal(t, http.StatusOK, st, "%v", b)
	_, b = e.do(http.MethodGet, "/v2/rec/"+rejected, nil)
	require.Equal(t, "REJEITADA", b["status"])
	require.Equal(t, "AP13", get(b, "encerramento", "rejeicao", "codigo"))
	st, _ = post("/sim/rec/RR999999992026120100000000000/approve")
	require.Equal(t, http.StatusNotFound, st)
	clock.Advance(pspsim.RecApprovalWindow)
	e.token = e.fetchToken("client-1", "secret-1")
	_, b = e.do(http.MethodGet, "/v2/rec/"+unanswered, nil)
	require.Equal(t, "EXPIRADA", b["status"])
	st, _ = post("/sim/rec/" + unanswered + "/approve")
	require.Equal(t, http.StatusConflict, st)

	// The notifications, in order for the journey-3 recurrence.
	var recStatuses []string
	for _, d := range e.Deliveries() {
		if len(d.IDs) == 1 && d.IDs[0] == idRec {
			require.Equal(t, http.StatusOK, d.Status)
		}
	}
	paths, bodies := e.hooks.received()
	for i, p := range paths {
		if p == "POST /psp/webhook/secret/rec" && get(bodies[i], "recs", 0, "idRec") == idRec {
			recStatuses = append(recStatuses, get(bodies[i], "recs", 0, "status").(string))
		}
	}
	require.Equal(t, []string{"APROVADA", "CANCELADA"}, recStatuses)
	require.Contains(t, paths, "POST /psp/webhook/secret/pix", "the first payment is a Pix like any other")
}
