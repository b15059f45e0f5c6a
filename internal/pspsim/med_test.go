package pspsim_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

// medIDRE is a devolução id the PSP makes: of the API's form, never 32 hex
// characters (which would pass for one of pixgate's).
var medIDRE = regexp.MustCompile(`^MED[A-Za-z0-9]{29}$`)

// paid creates a cob of valor and pays it, returning the Pix's e2eid.
func (e *sim) paid(n int, valor string) string {
	e.t.Helper()
	st, b := e.do(http.MethodPut, "/v2/cob/"+txid(n), cobBody(valor))
	require.Equal(e.t, http.StatusCreated, st, "%v", b)
	e2eid, err := e.Pay(context.Background(), txid(n))
	require.NoError(e.t, err)
	return e2eid
}

// pixWindow is a GET /v2/pix query over the last and next hour.
func (e *sim) pixWindow(extra url.Values) string {
	now := e.clock.Now()
	q := url.Values{"inicio": {now.Add(-time.Hour).UTC().Format(time.RFC3339)}, "fim": {now.Add(time.Hour).UTC().Format(time.RFC3339)}}
	for k, v := range extra {
		q[k] = v
	}
	return "/v2/pix?" + q.Encode()
}

// A MED return is made by the PSP alone: settled at once with its natureza
// and an id of the PSP's, it takes what is left of the Pix, is reported by
// the webhook, GET /pix/{e2eid} and the list (filtered by
// devolucaoPresente), every answer conforming to BACEN's OpenAPI.
func TestMEDReturn(t *testing.T) {
	v := testkit.BACENValidator(t)
	e := startSim(t, func(o *pspsim.Options) { o.Wrap = v.Wrap })
	e.registerWebhook()
	returned := e.paid(1, "25.90")
	untouched := e.paid(2, "3.00")

	st, b := e.do(http.MethodPut, "/v2/pix/"+returned+"/devolucao/"+hex32(1), map[string]any{"valor": "5.00"})
	require.Equal(t, http.StatusCreated, st, "%v", b)
	assert.Equal(t, pspsim.NatureOriginal, b["natureza"], "a devolução the receiver asks for is ORIGINAL")

	_, before := e.hooks.received()
	id, err := e.MEDReturn(returned, 0, "")
	require.NoError(t, err)
	assert.Regexp(t, medIDRE, id)
	paths, bodies := e.hooks.received()
	require.Len(t, bodies, len(before)+1, "reported by webhook before MEDReturn returns")
	assert.Equal(t, "POST /psp/webhook/secret/pix", paths[len(paths)-1])
	hook := bodies[len(bodies)-1]
	assert.Equal(t, returned, get(hook, "pix", 0, "endToEndId"))
	assert.Equal(t, id, get(hook, "pix", 0, "devolucoes", 1, "id"))

	st, b = e.do(http.MethodGet, "/v2/pix/"+returned, nil)
	require.Equal(t, http.StatusOK, st)
	require.Len(t, b["devolucoes"], 2)
	med := get(b, "devolucoes", 1).(map[string]any)
	assert.Equal(t, id, med["id"])
	assert.Equal(t, "20.90", med["valor"], "all that was left")
	assert.Equal(t, pspsim.NatureMEDFraud, med["natureza"], "no natureza is MED_FRAUDE")
	assert.Equal(t, pspsim.Devolvido, med["status"], "settled at once")
	assert.Regexp(t, `^D99999999\d{12}[a-zA-Z0-9]{11}$`, med["rtrId"], "a return's end-to-end id")
	assert.NotEmpty(t, get(med, "horario", "liquidacao"))

	_, err = e.MEDReturn(returned, 0, "")
	require.ErrorIs(t, err, pspsim.ErrAboveRefundable, "nothing is left")
	st, b = e.do(http.MethodPut, "/v2/pix/"+returned+"/devolucao/"+hex32(2), map[string]any{"valor": "0.01"})
	assert.Equal(t, http.StatusBadRequest, st, "the MED return took what was left: %v", b)
	_, err = e.MEDReturn(untouched, 301, pspsim.NatureMEDOperational)
	require.ErrorIs(t, err, pspsim.ErrAboveRefundable)
	_, err = e.MEDReturn(untouched, 100, "ORIGINAL")
	require.ErrorIs(t, err, pspsim.ErrBadNature)
	_, err = e.MEDReturn("E99999999202001011200abcdefghijk", 0, "")
	require.ErrorIs(t, err, pspsim.ErrUnknownPix)
	id2, err := e.MEDReturn(untouched, 100, pspsim.NatureMEDPixAutomatico)
	require.NoError(t, err)
	require.NotEqual(t, id, id2)
	_, b = e.do(http.MethodGet, "/v2/pix/"+untouched, nil)
	assert.Equal(t, "1.00", get(b, "devolucoes", 0, "valor"))
	assert.Equal(t, pspsim.NatureMEDPixAutomatico, get(b, "devolucoes", 0, "natureza"))

	third := e.paid(3, "7.00")
	st, b = e.do(http.MethodGet, e.pixWindow(url.Values{"devolucaoPresente": {"true"}}), nil)
	require.Equal(t, http.StatusOK, st)
	require.Len(t, b["pix"], 2, "only the Pix having a devolução")
	assert.Equal(t, returned, get(b, "pix", 0, "endToEndId"))
	assert.Equal(t, untouched, get(b, "pix", 1, "endToEndId"))
	st, b = e.do(http.MethodGet, e.pixWindow(url.Values{"devolucaoPresente": {"false"}}), nil)
	require.Equal(t, http.StatusOK, st)
	require.Len(t, b["pix"], 1)
	assert.Equal(t, third, get(b, "pix", 0, "endToEndId"))
	st, b = e.do(http.MethodGet, e.pixWindow(nil), nil)
	require.Equal(t, http.StatusOK, st)
	assert.Len(t, b["pix"], 3, "no filter: every Pix")

	facts := e.State().Pix
	require.Len(t, facts, 3)
	assert.Len(t, facts[0].Devolucoes, 2)
	v.Check(t)
	assert.Equal(t, 11, v.Validated(), "every API Pix exchange above was validated")
}

// Efí's infractions: opened, listed in Efí's shape by their day, defended
// once while ABERTA and in time, then released or accepted — accepting
// making the MED devolução of the contested valor with its natureza.
func TestInfractions(t *testing.T) {
	e := startSim(t, nil)
	e.registerWebhook()
	e2eid := e.paid(1, "50.00")
	other := e.paid(2, "8.00")
	now := e.clock.Now()

	_, err := e.OpenInfraction("E99999999202001011200abcdefghijk", 0, "", time.Time{})
	require.ErrorIs(t, err, pspsim.ErrUnknownPix)
	_, err = e.OpenInfraction(e2eid, 5001, "", time.Time{})
	require.ErrorIs(t, err, pspsim.ErrAboveRefundable)
	_, err = e.OpenInfraction(e2eid, 0, "RETIRADA", time.Time{})
	require.ErrorIs(t, err, pspsim.ErrBadNature)
	whole, err := e.OpenInfraction(e2eid, 0, "", time.Time{})
	require.NoError(t, err)
	part, err := e.OpenInfraction(other, 300, pspsim.NatureMEDOperational, now.Add(time.Hour))
	require.NoError(t, err)

	day := now.In(time.FixedZone("BRT", -3*3600)).Format(time.DateOnly)
	list := func(inicio, fim string) map[string]any {
		t.Helper()
		st, b := e.do(http.MethodGet, "/v2/gn/infracoes?"+url.Values{"inicio": {inicio}, "fim": {fim}}.Encode(), nil)
		require.Equal(t, http.StatusOK, st, "%v", b)
		return b
	}
	b := list(day, day)
	require.Len(t, b["infracoes"], 2)
	first := get(b, "infracoes", 0).(map[string]any)
	assert.Equal(t, whole, first["idInfracao"])
	assert.Equal(t, e2eid, first["endToEndId"])
	assert.Equal(t, "50.00", first["valor"], "no valor: the Pix's")
	assert.Equal(t, pspsim.InfracaoAberta, first["status"])
	assert.Equal(t, "golpe", first["tipoSituacao"])
	assert.NotEmpty(t, first["razao"])
	respondBy, err := time.Parse(time.RFC3339, get(first, "dadosAnalise", "prazoFinalizacao").(string))
	require.NoError(t, err)
	assert.WithinDuration(t, now.Add(pspsim.DefaultRespondBy), respondBy, time.Second)
	assert.NotEmpty(t, get(first, "dadosAnalise", "abertura"))
	assert.Equal(t, pspsim.InfracaoAberta, get(b, "infracoes", 1, "status"))
	assert.Equal(t, "3.00", get(b, "infracoes", 1, "valor"))
	assert.EqualValues(t, 1, get(b, "parametros", "paginacao", "quantidadeDePaginas"))
	yesterday := now.Add(-48 * time.Hour).Format(time.DateOnly)
	assert.Empty(t, list(yesterday, yesterday)["infracoes"], "nothing created or changed that day")
	b = list(now.Add(-time.Minute).UTC().Format(time.RFC3339), now.Add(time.Minute).UTC().Format(time.RFC3339))
	assert.Len(t, b["infracoes"], 2, "date-times are taken too")
	st, _ := e.do(http.MethodGet, "/v2/gn/infracoes?inicio=ontem&fim="+day, nil)
	assert.Equal(t, http.StatusBadRequest, st)
	st, _ = e.do(http.MethodGet, e.pixWindow(url.Values{"devolucaoPresente": {"yes"}}), nil)
	assert.Equal(t, http.StatusBadRequest, st, "devolucaoPresente is a boolean")

	defend := func(id, analise, text string) (int, map[string]any) {
		t.Helper()
		return e.do(http.MethodPost, "/v2/gn/infracoes/"+id+"/defesa", map[string]any{"analise": analise, "justificativa": text})
	}
	st, b = defend(whole, "talvez", "x")
	assert.Equal(t, http.StatusBadRequest, st, "%v", b)
	st, b = defend(whole, "rejeitado", "")
	assert.Equal(t, http.StatusBadRequest, st, "%v", b)
	st, _ = defend("nope", "rejeitado", "Entregue")
	assert.Equal(t, http.StatusNotFound, st)
	st, b = defend(whole, "rejeitado", "Produto entregue, nota fiscal 42")
	require.Equal(t, http.StatusNoContent, st, "%v", b)
	st, b = defend(whole, "aceito", "Mudei de ideia")
	assert.Equal(t, http.StatusBadRequest, st, "one defense: %v", b)
	b = list(day, day)
	assert.Equal(t, pspsim.InfracaoEmDefesa, get(b, "infracoes", 0, "status"))
	assert.Equal(t, "Produto entregue, nota fiscal 42", get(b, "infracoes", 0, "defesa"))
	facts := e.State().Infractions
	require.Len(t, facts, 2)
	assert.Equal(t, &pspsim.InfractionDefense{Analise: "rejeitado", Justificativa: "Produto entregue, nota fiscal 42"}, facts[0].Defense)
	assert.Nil(t, facts[1].Defense)

	require.NoError(t, e.ReleaseInfraction(whole))
	require.ErrorIs(t, e.ReleaseInfraction(whole), pspsim.ErrInfractionClosed)
	_, err = e.AcceptInfraction(whole, 0)
	require.ErrorIs(t, err, pspsim.ErrInfractionClosed)
	require.ErrorIs(t, e.ReleaseInfraction("nope"), pspsim.ErrUnknownInfraction)
	st, _ = defend(whole, "rejeitado", "De novo")
	assert.Equal(t, http.StatusBadRequest, st, "a closed infraction takes no defense")
	_, b = e.do(http.MethodGet, "/v2/pix/"+e2eid, nil)
	assert.Nil(t, b["devolucoes"], "a released infraction returns nothing")

	e.clock.Advance(2 * time.Hour)
	e.token = e.fetchToken("client-1", "secret-1")
	st, b = defend(part, "aceito", "Concordo")
	assert.Equal(t, http.StatusBadRequest, st, "past its deadline: %v", b)
	_, err = e.AcceptInfraction(part, 301)
	require.ErrorIs(t, err, pspsim.ErrAboveRefundable, "above the contested 3.00")
	_, hooksBefore := e.hooks.received()
	id, err := e.AcceptInfraction(part, 0)
	require.NoError(t, err)
	assert.Regexp(t, medIDRE, id)
	_, hooks := e.hooks.received()
	require.Len(t, hooks, len(hooksBefore)+1, "the MED devolução is reported by webhook")
	_, b = e.do(http.MethodGet, "/v2/pix/"+other, nil)
	assert.Equal(t, id, get(b, "devolucoes", 0, "id"))
	assert.Equal(t, "3.00", get(b, "devolucoes", 0, "valor"), "the contested valor")
	assert.Equal(t, pspsim.NatureMEDOperational, get(b, "devolucoes", 0, "natureza"))
	assert.Equal(t, pspsim.Devolvido, get(b, "devolucoes", 0, "status"))
	facts = e.State().Infractions
	assert.Equal(t, pspsim.InfracaoRejeitada, facts[0].Status)
	assert.Equal(t, pspsim.InfracaoAceita, facts[1].Status)
	assert.Equal(t, id, facts[1].DevolucaoID)
	later := e.clock.Now().In(time.FixedZone("BRT", -3*3600)).Format(time.DateOnly)
	b = list(later, later)
	assert.NotEmpty(t, get(b, "infracoes", 0, "dadosAnalise", "finalizacao"), "a closed infraction says when")
}

// The MED's control actions answer 200 with the ids, 404 for an unknown
// Pix or infraction, 422 for an amount above what is left or a closed
// infraction, and 400 for a body that is wrong.
func TestMEDControlAPI(t *testing.T) {
	e := startSim(t, func(o *pspsim.Options) { o.ControlAddr = "127.0.0.1:0" })
	e.registerWebhook()
	e2eid := e.paid(1, "10.00")
	post := func(path, body string) (int, map[string]any) {
		t.Helper()
		resp, err := http.Post(e.ControlURL()+path, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		return resp.StatusCode, decode(t, resp)
	}

	st, b := post("/sim/pix/"+e2eid+"/med", `{"valor":"4.00","natureza":"MED_OPERACIONAL"}`)
	require.Equal(t, http.StatusOK, st, "%v", b)
	assert.Regexp(t, medIDRE, b["id"])
	assert.Equal(t, "4.00", e.State().Pix[0].Devolucoes[0].Valor)
	st, b = post("/sim/pix/"+e2eid+"/med", `{"valor":"6.01"}`)
	assert.Equal(t, http.StatusUnprocessableEntity, st, "%v", b)
	assert.Contains(t, b["detail"], "6.00 left")
	st, _ = post("/sim/pix/E99999999202001011200abcdefghijk/med", ``)
	assert.Equal(t, http.StatusNotFound, st)
	st, _ = post("/sim/pix/"+e2eid+"/med", `{"valor":"1,00"}`)
	assert.Equal(t, http.StatusBadRequest, st)
	st, _ = post("/sim/pix/"+e2eid+"/med", `{"natureza":"ORIGINAL"}`)
	assert.Equal(t, http.StatusBadRequest, st)

	st, b = post("/sim/infracoes", `{"endToEndId":"`+e2eid+`","valor":"2.00","natureza":"MED_FRAUDE","respond_by":"2030-01-01T00:00:00Z"}`)
	require.Equal(t, http.StatusOK, st, "%v", b)
	id := b["idInfracao"].(string)
	require.NotEmpty(t, id)
	assert.Equal(t, "2030-01-01T00:00:00.000Z", e.State().Infractions[0].RespondBy)
	st, _ = post("/sim/infracoes", `{"endToEndId":"`+e2eid+`","respond_by":"amanhã"}`)
	assert.Equal(t, http.StatusBadRequest, st)
	st, _ = post("/sim/infracoes", `{}`)
	assert.Equal(t, http.StatusBadRequest, st)
	st, _ = post("/sim/infracoes", `{"endToEndId":"E99999999202001011200abcdefghijk"}`)
	assert.Equal(t, http.StatusNotFound, st)
	st, _ = post("/sim/infracoes", `{"endToEndId":"`+e2eid+`","valor":"6.01"}`)
	assert.Equal(t, http.StatusUnprocessableEntity, st)

	st, b = post("/sim/infracoes/"+id+"/release", ``)
	require.Equal(t, http.StatusOK, st, "%v", b)
	assert.Equal(t, pspsim.InfracaoRejeitada, e.State().Infractions[0].Status)
	st, _ = post("/sim/infracoes/"+id+"/release", ``)
	assert.Equal(t, http.StatusUnprocessableEntity, st, "closed")
	st, _ = post("/sim/infracoes/"+id+"/accept", ``)
	assert.Equal(t, http.StatusUnprocessableEntity, st, "closed")
	st, _ = post("/sim/infracoes/nope/accept", ``)
	assert.Equal(t, http.StatusNotFound, st)

	st, b = post("/sim/infracoes", `{"endToEndId":"`+e2eid+`"}`)
	require.Equal(t, http.StatusOK, st, "%v", b)
	st, b = post("/sim/infracoes/"+b["idInfracao"].(string)+"/accept", `{"valor":"1.50"}`)
	require.Equal(t, http.StatusOK, st, "%v", b)
	pix := e.State().Pix[0]
	require.Len(t, pix.Devolucoes, 2)
	assert.Equal(t, b["id"], pix.Devolucoes[1].ID)
	assert.Equal(t, "1.50", pix.Devolucoes[1].Valor)
	assert.Equal(t, pspsim.NatureMEDFraud, pix.Devolucoes[1].Natureza)
}
