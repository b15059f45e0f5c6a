package apipix

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/pspsim"
)

const (
	txid      = "abcdefghijklmnopqrstuvwxyz012345"
	e2eid     = "E12345678202601011200abcdefghijk"
	rtrID     = "D12345678202601011300abcdefghijk"
	refundID  = "0f8fad5b-d9cb-469f-a165-70867728950e"
	refundHex = "0f8fad5bd9cb469fa16570867728950e"
	// brCode has characters a re-encoder would touch, to prove it is
	// passed on verbatim.
	brCode = "00020101021226870014br.gov.bcb.pix2565pix.example/qr/v2/cobv/9d36b84f-c70b-478f-b95c-12729b90ca255204000053039865802BR5913Loja <&> Ltda6008BRASILIA62070503***6304ABCD"
)

func decodeBody(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), "body %s", b)
	return m
}

func TestNameAndCapabilities(t *testing.T) {
	e := newEnv(t)
	assert.Equal(t, provider.NameAPIPix, e.c.Name())
	assert.Equal(t, provider.Capabilities{Payouts: false, TxIDLength: 32}, e.c.Capabilities())
}

func TestCreateChargeRequestShapeAndToken(t *testing.T) {
	e := newEnv(t)
	e.psp.setHandler(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		writeJSON(w, http.StatusCreated, fmt.Sprintf(`{"txid":%q,"revisao":0,"status":"ATIVA","valor":{"original":"25.90"},"chave":%q,"pixCopiaECola":%q,"extra":{"x":1}}`, txid, testPixKey, brCode))
	})
	got, err := e.c.CreateCharge(context.Background(), provider.Charge{
		TxID: txid, Amount: 2590, TTL: time.Hour, PayerName: "Fulano de Tal", PayerDocument: "12345678909", Question: "Pedido 42",
	})
	require.NoError(t, err)
	assert.Equal(t, brCode, got, "pixCopiaECola verbatim")

	calls := e.psp.apiCalls()
	require.Len(t, calls, 1)
	assert.Equal(t, http.MethodPut, calls[0].Method)
	assert.Equal(t, "/v2/cob/"+txid, calls[0].Path)
	assert.Equal(t, "Bearer "+tokenPrefix+"1", calls[0].Header.Get("Authorization"))
	assert.Equal(t, "application/json", calls[0].Header.Get("Content-Type"))
	b := decodeBody(t, calls[0].Body)
	assert.Equal(t, map[string]any{
		"calendario":         map[string]any{"expiracao": float64(3600)},
		"devedor":            map[string]any{"cpf": "12345678909", "nome": "Fulano de Tal"},
		"valor":              map[string]any{"original": "25.90"},
		"chave":              testPixKey,
		"solicitacaoPagador": "Pedido 42",
	}, b)

	// The token call: POST, client credentials in HTTP Basic, grant type.
	toks := e.psp.tokenCalls()
	require.Len(t, toks, 1)
	assert.Equal(t, http.MethodPost, toks[0].Method)
	req, _ := http.NewRequest(http.MethodPost, "/", nil)
	req.Header = toks[0].Header
	id, secret, ok := req.BasicAuth()
	require.True(t, ok, "Basic auth on the token call")
	assert.Equal(t, testClientID, id)
	assert.Equal(t, testClientSecret, secret)
	form, err := url.ParseQuery(string(toks[0].Body))
	require.NoError(t, err)
	assert.Equal(t, "client_credentials", form.Get("grant_type"))
	assert.Empty(t, form.Get("client_secret"), "the secret travels only in the Authorization header")
}

func TestCreateChargeCNPJAndOmittedFields(t *testing.T) {
	e := newEnv(t)
	e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		writeJSON(w, http.StatusCreated, fmt.Sprintf(`{"pixCopiaECola":%q}`, brCode))
	})
	_, err := e.c.CreateCharge(context.Background(), provider.Charge{TxID: txid, Amount: 1, TTL: 90 * time.Second, PayerName: "ACME", PayerDocument: "12345678000195"})
	require.NoError(t, err)
	_, err = e.c.CreateCharge(context.Background(), provider.Charge{TxID: txid, Amount: 100_000_000, TTL: 90 * time.Second})
	require.NoError(t, err)
	calls := e.psp.apiCalls()
	require.Len(t, calls, 2)
	b := decodeBody(t, calls[0].Body)
	assert.Equal(t, map[string]any{"cnpj": "12345678000195", "nome": "ACME"}, b["devedor"])
	assert.Equal(t, map[string]any{"original": "0.01"}, b["valor"])
	assert.NotContains(t, b, "solicitacaoPagador")
	b = decodeBody(t, calls[1].Body)
	assert.NotContains(t, b, "devedor")
	assert.Equal(t, map[string]any{"original": "1000000.00"}, b["valor"])
	assert.Equal(t, map[string]any{"expiracao": float64(90)}, b["calendario"])
}

func TestCreateChargeRefusesBadInput(t *testing.T) {
	e := newEnv(t)
	for _, ch := range []provider.Charge{
		{TxID: "short", Amount: 100, TTL: time.Hour},
		{TxID: txid[:31] + "-", Amount: 100, TTL: time.Hour},
		{TxID: txid, Amount: 0, TTL: time.Hour},
		{TxID: txid, Amount: 100, TTL: time.Millisecond},
	} {
		_, err := e.c.CreateCharge(context.Background(), ch)
		require.ErrorIs(t, err, provider.ErrRejected, "%+v", ch)
	}
	assert.Empty(t, e.psp.apiCalls())
}

func TestTokenReusedThenRenewedWithin60sOfExpiry(t *testing.T) {
	e := newEnv(t)
	e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		writeJSON(w, http.StatusOK, `{"status":"ATIVA","pix":[]}`)
	})
	ctx := context.Background()
	for range 3 {
		_, err := e.c.ChargePayments(ctx, txid)
		require.NoError(t, err)
	}
	assert.Len(t, e.psp.tokenCalls(), 1, "one token for every call")

	e.clock.advance(3600*time.Second - 62*time.Second) // 62 s left: still good
	_, err := e.c.ChargePayments(ctx, txid)
	require.NoError(t, err)
	assert.Len(t, e.psp.tokenCalls(), 1)

	e.clock.advance(4 * time.Second) // 58 s left: renewed
	_, err = e.c.ChargePayments(ctx, txid)
	require.NoError(t, err)
	assert.Len(t, e.psp.tokenCalls(), 2)
	calls := e.psp.apiCalls()
	assert.Equal(t, "Bearer "+tokenPrefix+"2", calls[len(calls)-1].Header.Get("Authorization"))
}

func TestConcurrentCallsShareOneToken(t *testing.T) {
	e := newEnv(t)
	e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		writeJSON(w, http.StatusOK, `{"status":"ATIVA"}`)
	})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := e.c.ChargePayments(context.Background(), txid)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	assert.Len(t, e.psp.tokenCalls(), 1)
	assert.Len(t, e.psp.apiCalls(), 8)
}

func TestUnauthorizedRenewsTokenAndRetriesOnce(t *testing.T) {
	e := newEnv(t)
	e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		writeJSON(w, http.StatusOK, `{"status":"ATIVA"}`)
	})
	ctx := context.Background()
	_, err := e.c.ChargePayments(ctx, txid)
	require.NoError(t, err)
	e.psp.revoke(tokenPrefix + "1") // the PSP forgets the cached token

	require.NoError(t, e.c.CancelCharge(ctx, txid))
	assert.Len(t, e.psp.tokenCalls(), 2, "a new token after the 401")
	calls := e.psp.apiCalls()
	require.Len(t, calls, 3)
	assert.Equal(t, "Bearer "+tokenPrefix+"1", calls[1].Header.Get("Authorization"))
	assert.Equal(t, "Bearer "+tokenPrefix+"2", calls[2].Header.Get("Authorization"))
	assert.Equal(t, http.MethodPatch, calls[2].Method)

	// Even a non-idempotent call gets its one retry after a 401: the PSP
	// did nothing with an unauthenticated request.
	e.psp.revoke(tokenPrefix + "2")
	e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		writeJSON(w, http.StatusCreated, fmt.Sprintf(`{"id":%q,"rtrId":%q,"valor":"1.00","status":"EM_PROCESSAMENTO"}`, refundHex, rtrID))
	})
	st, err := e.c.Send(ctx, provider.Transfer{ID: refundID, Amount: 100, Refund: true, PaymentE2E: e2eid})
	require.NoError(t, err)
	assert.Equal(t, provider.Processing, st.Status)
	assert.Len(t, e.psp.apiCalls(), 5)
}

func TestUnauthorizedTwiceIsRejectedWithoutLoop(t *testing.T) {
	e := newEnv(t)
	var n atomic.Int32
	e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		n.Add(1)
		writeProblem(w, http.StatusUnauthorized, "Unauthorized", "nope")
	})
	_, err := e.c.ConfirmPayment(context.Background(), e2eid)
	require.ErrorIs(t, err, provider.ErrRejected)
	assert.Equal(t, int32(2), n.Load(), "the call and one retry")
	assert.Len(t, e.psp.tokenCalls(), 2)
}

func TestTokenRenewedOncePerCall(t *testing.T) {
	e := newEnv(t)
	var n atomic.Int32
	e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		switch n.Add(1) {
		case 2: // a 5xx between two 401s: the retry must not renew again
			writeProblem(w, http.StatusServiceUnavailable, "Indisponível", "")
		default:
			writeProblem(w, http.StatusUnauthorized, "Unauthorized", "")
		}
	})
	_, err := e.c.ConfirmPayment(context.Background(), e2eid)
	require.ErrorIs(t, err, provider.ErrRejected)
	assert.Equal(t, int32(3), n.Load())
	assert.Len(t, e.psp.tokenCalls(), 2)
}

func TestMutualTLSIsRequired(t *testing.T) {
	e := newEnv(t)
	// A client that trusts the server but shows no certificate.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: e.psp.pki.CA, MinVersion: tls.VersionTLS12}}}
	resp, err := hc.Get(e.psp.srv.URL + "/oauth/token")
	if err == nil {
		_ = resp.Body.Close()
	}
	require.Error(t, err, "the server must refuse a client without a certificate")

	// A client whose certificate another authority signed.
	other, err := pspsim.NewPKI(time.Hour)
	require.NoError(t, err)
	cfg := e.psp.config(e.log, nil)
	cfg.CertPEM, cfg.KeyPEM = other.ClientCertPEM, other.ClientKeyPEM
	c, err := New(cfg)
	require.NoError(t, err)
	_, err = c.ConfirmPayment(context.Background(), e2eid)
	require.Error(t, err)
	assert.Empty(t, e.psp.tokenCalls())

	// And ours is accepted: the certificate is really presented.
	e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"endToEndId":%q,"valor":"1.00","horario":"2026-01-01T12:00:00Z"}`, e2eid))
	})
	_, err = e.c.ConfirmPayment(context.Background(), e2eid)
	require.NoError(t, err)
}

func TestServerCertificateIsVerified(t *testing.T) {
	e := newEnv(t)
	other, err := pspsim.NewPKI(time.Hour)
	require.NoError(t, err)
	cfg := e.psp.config(e.log, nil)
	cfg.CAPEM = other.CAPEM
	c, err := New(cfg)
	require.NoError(t, err)
	_, err = c.ConfirmPayment(context.Background(), e2eid)
	require.Error(t, err)
	assert.Empty(t, e.psp.tokenCalls())
}

func TestCreateChargeHasItsOwnBudget(t *testing.T) {
	e := newEnv(t, WithTimeouts(300*time.Millisecond, time.Minute))
	var n atomic.Int32
	// The handler never answers before the budget is spent, not even when
	// its request is cancelled: an empty answer then, raced against the
	// client's timeout, would test the race rather than the budget.
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		n.Add(1)
		select {
		case <-stop:
			panic(http.ErrAbortHandler)
		case <-time.After(3 * time.Second): // far past the budget: success
			writeJSON(w, http.StatusCreated, fmt.Sprintf(`{"pixCopiaECola":%q}`, brCode))
		}
	})
	_, err := e.c.CreateCharge(context.Background(), provider.Charge{TxID: txid, Amount: 100, TTL: time.Hour})
	require.Error(t, err)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotErrorIs(t, err, provider.ErrRejected)
	assert.GreaterOrEqual(t, n.Load(), int32(1))
	assert.LessOrEqual(t, n.Load(), int32(3))
}

func TestGetRetriedOn5xx(t *testing.T) {
	e := newEnv(t)
	var n atomic.Int32
	e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		if n.Add(1) < 3 {
			writeProblem(w, http.StatusServiceUnavailable, "Serviço Indisponível", "try later")
			return
		}
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"endToEndId":%q,"txid":%q,"valor":"10.50","horario":"2026-01-01T12:00:00.123-03:00"}`, e2eid, txid))
	})
	p, err := e.c.ConfirmPayment(context.Background(), e2eid)
	require.NoError(t, err)
	assert.Equal(t, int32(3), n.Load())
	assert.Equal(t, pix.Amount(1050), p.Amount)

	// Three 5xx in a row: at most two retries, then an unknown outcome.
	n.Store(-10)
	_, err = e.c.ConfirmPayment(context.Background(), e2eid)
	require.Error(t, err)
	assert.NotErrorIs(t, err, provider.ErrRejected)
	assert.NotErrorIs(t, err, provider.ErrNotFound)
	assert.Contains(t, err.Error(), "503")
	assert.Equal(t, int32(-7), n.Load())
}

func TestRefundSendIsNeverRetried(t *testing.T) {
	t.Run("5xx", func(t *testing.T) {
		e := newEnv(t)
		var n atomic.Int32
		e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			n.Add(1)
			writeProblem(w, http.StatusInternalServerError, "Erro", "boom")
		})
		_, err := e.c.Send(context.Background(), provider.Transfer{ID: refundID, Amount: 100, Refund: true, PaymentE2E: e2eid})
		require.Error(t, err)
		assert.NotErrorIs(t, err, provider.ErrRejected, "unknown outcome, not a refusal")
		assert.Equal(t, int32(1), n.Load())
	})
	t.Run("timeout", func(t *testing.T) {
		e := newEnv(t, WithTimeouts(0, 300*time.Millisecond))
		var n atomic.Int32
		stop := make(chan struct{}) // no answer at all before the budget is spent
		t.Cleanup(func() { close(stop) })
		e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			n.Add(1)
			select {
			case <-stop:
				panic(http.ErrAbortHandler)
			case <-time.After(3 * time.Second):
				writeJSON(w, http.StatusCreated, fmt.Sprintf(`{"id":%q,"status":"EM_PROCESSAMENTO"}`, refundHex))
			}
		})
		_, err := e.c.Send(context.Background(), provider.Transfer{ID: refundID, Amount: 100, Refund: true, PaymentE2E: e2eid})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, int32(1), n.Load())
	})
}

func TestRefundSendAndStatus(t *testing.T) {
	e := newEnv(t)
	status := "EM_PROCESSAMENTO"
	e.psp.setHandler(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		code := http.StatusOK
		if r.Method == http.MethodPut {
			code = http.StatusCreated
		}
		writeJSON(w, code, fmt.Sprintf(`{"id":%q,"rtrId":%q,"valor":"7.25","horario":{"solicitacao":"2026-01-01T12:00:00Z"},"status":%q}`, refundHex, rtrID, status))
	})
	ctx := context.Background()
	tr := provider.Transfer{ID: refundID, Amount: 725, Refund: true, PaymentE2E: e2eid, Description: strings.Repeat("é", 150)}
	st, err := e.c.Send(ctx, tr)
	require.NoError(t, err)
	assert.Equal(t, provider.TransferState{ID: refundID, Status: provider.Processing, EndToEndID: rtrID}, st)
	calls := e.psp.apiCalls()
	require.Len(t, calls, 1)
	assert.Equal(t, http.MethodPut, calls[0].Method)
	assert.Equal(t, "/v2/pix/"+e2eid+"/devolucao/"+refundHex, calls[0].Path)
	assert.Equal(t, map[string]any{"valor": "7.25", "descricao": strings.Repeat("é", 140)}, decodeBody(t, calls[0].Body))

	tr.Description = ""
	_, err = e.c.Send(ctx, tr)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"valor": "7.25"}, decodeBody(t, e.psp.apiCalls()[1].Body), "descricao omitted when empty")

	for wire, want := range map[string]provider.Status{"DEVOLVIDO": provider.Completed, "NAO_REALIZADO": provider.Failed, "EM_PROCESSAMENTO": provider.Processing} {
		status = wire
		st, err := e.c.Status(ctx, tr)
		require.NoError(t, err)
		assert.Equal(t, provider.TransferState{ID: refundID, Status: want, EndToEndID: rtrID}, st)
		calls := e.psp.apiCalls()
		assert.Equal(t, http.MethodGet, calls[len(calls)-1].Method)
		assert.Equal(t, "/v2/pix/"+e2eid+"/devolucao/"+refundHex, calls[len(calls)-1].Path)
	}
	status = "PERDIDO"
	_, err = e.c.Status(ctx, tr)
	require.Error(t, err, "an unknown status is not guessed")
}

func TestRejectedAndNotFound(t *testing.T) {
	e := newEnv(t)
	e.psp.setHandler(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.Method == http.MethodGet {
			writeProblem(w, http.StatusNotFound, "Não Encontrado", "devolução desconhecida")
			return
		}
		writeProblem(w, http.StatusBadRequest, "Devolução Inválida", "valor acima do disponível")
	})
	ctx := context.Background()
	tr := provider.Transfer{ID: refundID, Amount: 100, Refund: true, PaymentE2E: e2eid}
	_, err := e.c.Send(ctx, tr)
	require.ErrorIs(t, err, provider.ErrRejected)
	assert.Contains(t, err.Error(), "Devolução Inválida")
	assert.Contains(t, err.Error(), "valor acima do disponível")
	assert.Contains(t, e.log.String(), "valor acima do disponível", "the PSP's own words reach the log")

	_, err = e.c.Status(ctx, tr)
	require.ErrorIs(t, err, provider.ErrNotFound)
	assert.NotErrorIs(t, err, provider.ErrRejected)
	_, err = e.c.ConfirmPayment(ctx, e2eid)
	require.ErrorIs(t, err, provider.ErrNotFound)
	_, err = e.c.ChargePayments(ctx, txid)
	require.ErrorIs(t, err, provider.ErrNotFound)
	assert.Len(t, e.psp.apiCalls(), 4, "a 4xx is never retried")
}

func TestPayoutsUnsupported(t *testing.T) {
	e := newEnv(t)
	_, err := e.c.Send(context.Background(), provider.Transfer{ID: refundID, Amount: 100, Key: "x@example.com"})
	require.ErrorIs(t, err, provider.ErrUnsupported)
	_, err = e.c.Status(context.Background(), provider.Transfer{ID: refundID, Amount: 100, Key: "x@example.com"})
	require.ErrorIs(t, err, provider.ErrUnsupported)
	assert.Empty(t, e.psp.apiCalls())
}

func TestCreateChargeRetryFindsTheCobItCreated(t *testing.T) {
	for _, tc := range []struct {
		name    string
		valor   string
		wantErr bool
	}{{"same amount", "25.90", false}, {"other amount", "30.00", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			var puts atomic.Int32
			e.psp.setHandler(func(w http.ResponseWriter, r *http.Request, _ []byte) {
				switch {
				case r.Method == http.MethodPut && puts.Add(1) == 1:
					writeProblem(w, http.StatusBadGateway, "Bad Gateway", "created, but the answer was lost")
				case r.Method == http.MethodPut:
					writeProblem(w, http.StatusBadRequest, "Cobrança inválida", "txid já utilizado")
				default:
					writeJSON(w, http.StatusOK, fmt.Sprintf(`{"txid":%q,"status":"ATIVA","valor":{"original":%q},"pixCopiaECola":%q}`, txid, tc.valor, brCode))
				}
			})
			got, err := e.c.CreateCharge(context.Background(), provider.Charge{TxID: txid, Amount: 2590, TTL: time.Hour})
			calls := e.psp.apiCalls()
			require.Len(t, calls, 3)
			assert.Equal(t, http.MethodGet, calls[2].Method)
			assert.Equal(t, "/v2/cob/"+txid, calls[2].Path)
			if tc.wantErr {
				require.ErrorIs(t, err, provider.ErrRejected)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, brCode, got)
		})
	}
}

func TestCreateChargeFirstRefusalIsNotLookedUp(t *testing.T) {
	e := newEnv(t)
	e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		writeProblem(w, http.StatusBadRequest, "Cobrança inválida", "chave desconhecida")
	})
	_, err := e.c.CreateCharge(context.Background(), provider.Charge{TxID: txid, Amount: 2590, TTL: time.Hour})
	require.ErrorIs(t, err, provider.ErrRejected)
	assert.Len(t, e.psp.apiCalls(), 1)
}

func TestReceivedReadsEveryPage(t *testing.T) {
	e := newEnv(t)
	item := func(i int) string {
		return fmt.Sprintf(`{"endToEndId":"E12345678202601011200abcdefgh%03d","txid":"tx%d","valor":"%d.05","horario":"2026-01-01T12:00:0%dZ"}`, i, i, i, i%10)
	}
	pages := [][]string{{item(1), item(2)}, {item(3), `{"endToEndId":"short","valor":"1.00","horario":"2026-01-01T12:00:00Z"}`, item(4)}, {item(5)}}
	e.psp.setHandler(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		q := r.URL.Query()
		var page int
		_, err := fmt.Sscan(q.Get("paginacao.paginaAtual"), &page)
		if err != nil || page >= len(pages) {
			writeProblem(w, http.StatusBadRequest, "bad page", q.Get("paginacao.paginaAtual"))
			return
		}
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"parametros":{"inicio":%q,"fim":%q,"paginacao":{"paginaAtual":%d,"itensPorPagina":100,"quantidadeDePaginas":3,"quantidadeTotalDeItens":6}},"pix":[%s]}`,
			q.Get("inicio"), q.Get("fim"), page, strings.Join(pages[page], ",")))
	})
	brt := time.FixedZone("BRT", -3*3600)
	from := time.Date(2026, 1, 1, 9, 0, 0, 0, brt)
	to := time.Date(2026, 1, 1, 9, 1, 0, 500, brt)
	got, err := e.c.Received(context.Background(), from, to)
	require.NoError(t, err)
	require.Len(t, got, 5, "every page read; the malformed item skipped")
	for i, p := range got {
		assert.Equal(t, fmt.Sprintf("tx%d", i+1), p.TxID)
		assert.Equal(t, pix.Amount((i+1)*100+5), p.Amount)
	}
	calls := e.psp.apiCalls()
	require.Len(t, calls, 3)
	for i, c := range calls {
		q, err := url.ParseQuery(c.Query)
		require.NoError(t, err)
		assert.Equal(t, "/v2/pix", c.Path)
		assert.Equal(t, "2026-01-01T12:00:00Z", q.Get("inicio"))
		assert.Equal(t, "2026-01-01T12:01:00Z", q.Get("fim"))
		assert.Equal(t, fmt.Sprint(i), q.Get("paginacao.paginaAtual"))
		assert.Equal(t, "100", q.Get("paginacao.itensPorPagina"))
	}
	assert.Contains(t, e.log.String(), "received Pix skipped")
}

func TestConfirmPaymentWithRefunds(t *testing.T) {
	e := newEnv(t)
	e.psp.setHandler(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"endToEndId":%q,"txid":%q,"valor":"100.00","horario":"2026-01-01T12:00:00Z","infoPagador":"oi",
			"devolucoes":[{"id":%q,"rtrId":%q,"valor":"10.00","natureza":"ORIGINAL","status":"DEVOLVIDO"},{"id":"abc","rtrId":"","valor":"1.05","status":"EM_PROCESSAMENTO"},
			{"id":"def","valor":"1.00","status":"NAO_REALIZADO"},{"id":"MED1","rtrId":%q,"valor":"88.95","natureza":"MED_FRAUDE","status":"DEVOLVIDO"}]}`,
			e2eid, txid, refundHex, rtrID, rtrID))
	})
	p, err := e.c.ConfirmPayment(context.Background(), e2eid)
	require.NoError(t, err)
	assert.Equal(t, provider.Payment{
		TxID: txid, Amount: 10000, EndToEndID: e2eid, PaidAt: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC),
		Refunds: []provider.TransferState{
			{ID: refundHex, Status: provider.Completed, EndToEndID: rtrID, Amount: 1000, Nature: provider.NatureOriginal},
			{ID: "abc", Status: provider.Processing, Amount: 105},
			{ID: "def", Status: provider.Failed, Amount: 100},
			{ID: "MED1", Status: provider.Completed, EndToEndID: rtrID, Amount: 8895, Nature: provider.NatureMEDFraud},
		},
	}, p)
	assert.Equal(t, "/v2/pix/"+e2eid, e.psp.apiCalls()[0].Path)
}

func TestAnswersAreValidated(t *testing.T) {
	for name, body := range map[string]string{
		"float valor":     `{"endToEndId":"` + e2eid + `","valor":"10.505","horario":"2026-01-01T12:00:00Z"}`,
		"number valor":    `{"endToEndId":"` + e2eid + `","valor":10.5,"horario":"2026-01-01T12:00:00Z"}`,
		"34-char e2e":     `{"endToEndId":"` + e2eid + `xx","valor":"10.50","horario":"2026-01-01T12:00:00Z"}`,
		"no horario":      `{"endToEndId":"` + e2eid + `","valor":"10.50"}`,
		"refund status":   `{"endToEndId":"` + e2eid + `","valor":"10.50","horario":"2026-01-01T12:00:00Z","devolucoes":[{"id":"a","status":"OK"}]}`,
		"refund valor":    `{"endToEndId":"` + e2eid + `","valor":"10.50","horario":"2026-01-01T12:00:00Z","devolucoes":[{"id":"a","valor":"1.005","status":"DEVOLVIDO"}]}`,
		"no refund valor": `{"endToEndId":"` + e2eid + `","valor":"10.50","horario":"2026-01-01T12:00:00Z","devolucoes":[{"id":"a","status":"DEVOLVIDO"}]}`,
		"number refund":   `{"endToEndId":"` + e2eid + `","valor":"10.50","horario":"2026-01-01T12:00:00Z","devolucoes":[{"id":"a","valor":1.5,"status":"DEVOLVIDO"}]}`,
		"natureza":        `{"endToEndId":"` + e2eid + `","valor":"10.50","horario":"2026-01-01T12:00:00Z","devolucoes":[{"id":"a","valor":"1.00","natureza":"med fraude","status":"DEVOLVIDO"}]}`,
		"not json":        `<html>`,
		"other payment":   `{"endToEndId":"` + rtrID + `","valor":"10.50","horario":"2026-01-01T12:00:00Z"}`,
		"negative valor":  `{"endToEndId":"` + e2eid + `","valor":"-1.00","horario":"2026-01-01T12:00:00Z"}`,
		"zero valor":      `{"endToEndId":"` + e2eid + `","valor":"0.00","horario":"2026-01-01T12:00:00Z"}`,
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) { writeJSON(w, http.StatusOK, body) })
			_, err := e.c.ConfirmPayment(context.Background(), e2eid)
			require.Error(t, err)
			assert.Len(t, e.psp.apiCalls(), 1, "a bad answer is not retried")
		})
	}
}

func TestChargePaymentsAndCancel(t *testing.T) {
	e := newEnv(t)
	e.psp.setHandler(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.Method == http.MethodPatch {
			writeJSON(w, http.StatusOK, `{"status":"REMOVIDA_PELO_USUARIO_RECEBEDOR"}`)
			return
		}
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"txid":%q,"status":"CONCLUIDA","valor":{"original":"5.00"},"pix":[{"endToEndId":%q,"txid":%q,"valor":"5.00","horario":"2026-01-01T12:00:00Z"}]}`, txid, e2eid, txid))
	})
	ctx := context.Background()
	ps, err := e.c.ChargePayments(ctx, txid)
	require.NoError(t, err)
	require.Len(t, ps, 1)
	assert.Equal(t, provider.Payment{TxID: txid, Amount: 500, EndToEndID: e2eid, PaidAt: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}, ps[0])

	require.NoError(t, e.c.CancelCharge(ctx, txid))
	calls := e.psp.apiCalls()
	require.Len(t, calls, 2)
	_, err = e.c.ChargePayments(ctx, "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz")
	require.Error(t, err, "a Pix of another txid is not this charge's")
	assert.Equal(t, http.MethodGet, calls[0].Method)
	assert.Equal(t, "/v2/cob/"+txid, calls[0].Path)
	assert.Equal(t, http.MethodPatch, calls[1].Method)
	assert.Equal(t, "/v2/cob/"+txid, calls[1].Path)
	assert.Equal(t, map[string]any{"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"}, decodeBody(t, calls[1].Body))
}

func TestStartRegistersWebhook(t *testing.T) {
	for _, answer := range []struct {
		code int
		body string
	}{{http.StatusOK, ""}, {http.StatusOK, `{"webhookUrl":"x"}`}, {http.StatusCreated, ""}, {http.StatusNoContent, ""}} {
		t.Run(fmt.Sprint(answer.code, answer.body != ""), func(t *testing.T) {
			e := newEnv(t, WithWebhookHeader("x-test", "yes"))
			e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
				w.WriteHeader(answer.code)
				_, _ = w.Write([]byte(answer.body))
			})
			require.NoError(t, e.c.Start(context.Background()))
			calls := e.psp.apiCalls()
			require.Len(t, calls, 1)
			assert.Equal(t, http.MethodPut, calls[0].Method)
			assert.Equal(t, "/v2/webhook/"+testPixKey, calls[0].Path)
			assert.Equal(t, map[string]any{"webhookUrl": testWebhookURL}, decodeBody(t, calls[0].Body))
			assert.Equal(t, "yes", calls[0].Header.Get("x-test"))
			assert.Empty(t, calls[0].Header.Get("x-skip-mtls-checking"))
		})
	}
}

func TestPathSegmentsEscaped(t *testing.T) {
	e := newEnv(t)
	cfg := e.psp.config(e.log, nil)
	cfg.PixKey = "chave/com espaço?"
	c, err := New(cfg)
	require.NoError(t, err)
	e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) { w.WriteHeader(http.StatusOK) })
	require.NoError(t, c.Start(context.Background()))
	calls := e.psp.apiCalls()
	require.Len(t, calls, 1)
	assert.Equal(t, "/v2/webhook/chave%2Fcom%20espa%C3%A7o%3F", calls[0].RawPath)
	assert.Empty(t, calls[0].Query)
}

// TestNoSecretInLogsOrErrors drives the paths where a secret could slip
// out (a refused token call whose body echoes what it got, an API 401
// echoing the bearer token, a 5xx) and searches every error and log line.
func TestNoSecretInLogsOrErrors(t *testing.T) {
	e := newEnv(t)
	secrets := []string{
		testClientSecret,
		base64.StdEncoding.EncodeToString([]byte(testClientID + ":" + testClientSecret)),
		tokenPrefix,
		string(e.psp.pki.ClientKeyPEM[40:80]),
		"PRIVATE KEY",
	}
	var errs []error
	ctx := context.Background()

	// The token endpoint refuses and echoes the credentials.
	e.psp.mu.Lock()
	e.psp.tokenStatus = http.StatusUnauthorized
	e.psp.tokenBody = fmt.Sprintf(`{"error":"invalid_client","error_description":"bad secret %s"}`, testClientSecret)
	e.psp.mu.Unlock()
	_, err := e.c.ConfirmPayment(ctx, e2eid)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "401")
	assert.Contains(t, err.Error(), "invalid_client")
	errs = append(errs, err)
	// …and when its body is not even OAuth JSON.
	e.psp.mu.Lock()
	e.psp.tokenStatus = http.StatusBadRequest
	e.psp.tokenBody = "Authorization: Basic " + secrets[1]
	e.psp.mu.Unlock()
	_, err = e.c.ConfirmPayment(ctx, e2eid)
	require.Error(t, err)
	errs = append(errs, err)
	// A 5xx token endpoint.
	e.psp.mu.Lock()
	e.psp.tokenStatus = http.StatusServiceUnavailable
	e.psp.tokenBody = `{"error":"temporarily_unavailable","error_description":"` + testClientSecret + `"}`
	e.psp.mu.Unlock()
	_, err = e.c.CreateCharge(ctx, provider.Charge{TxID: txid, Amount: 100, TTL: time.Hour})
	require.Error(t, err)
	errs = append(errs, err)

	// The API refuses every token and echoes it (the fake's 401 does).
	e.psp.mu.Lock()
	e.psp.tokenStatus = 0
	e.psp.mu.Unlock()
	e.psp.setHandler(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		writeProblem(w, http.StatusUnauthorized, "Unauthorized", "got "+r.Header.Get("Authorization")+" and "+testClientSecret)
	})
	_, err = e.c.Send(ctx, provider.Transfer{ID: refundID, Amount: 100, Refund: true, PaymentE2E: e2eid})
	require.ErrorIs(t, err, provider.ErrRejected)
	errs = append(errs, err)
	// A 400 and a 5xx echoing the header too.
	e.psp.setHandler(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		code := http.StatusBadRequest
		if r.Method == http.MethodGet {
			code = http.StatusInternalServerError
		}
		writeProblem(w, code, "Erro "+r.Header.Get("Authorization"), r.Header.Get("Authorization"))
	})
	_, err = e.c.Send(ctx, provider.Transfer{ID: refundID, Amount: 100, Refund: true, PaymentE2E: e2eid})
	require.ErrorIs(t, err, provider.ErrRejected)
	errs = append(errs, err)
	_, err = e.c.ChargePayments(ctx, txid)
	require.Error(t, err)
	errs = append(errs, err)

	// A bad key: the error names the certificate, not the material.
	cfg := e.psp.config(e.log, nil)
	cfg.KeyPEM = e.psp.pki.ServerKeyPEM
	_, err = New(cfg)
	require.ErrorContains(t, err, "client certificate")
	errs = append(errs, err)

	logs := e.log.String()
	require.NotEmpty(t, logs)
	for _, s := range secrets {
		assert.NotContains(t, logs, s, "log")
		for _, err := range errs {
			assert.NotContains(t, err.Error(), s, "error %v", err)
		}
	}
	assert.Contains(t, logs, "[redacted]", "the echoed secret was found and removed")
}

func TestNewValidates(t *testing.T) {
	psp := newFakePSP(t)
	good := psp.config(&syncBuffer{}, nil)
	_, err := New(good)
	require.NoError(t, err)
	for name, mut := range map[string]func(*Config){
		"http API":      func(c *Config) { c.APIURL = "http://pix.example/v2" },
		"relative API":  func(c *Config) { c.APIURL = "/v2" },
		"bad token URL": func(c *Config) { c.TokenURL = "ftp://x/oauth" },
		"no id":         func(c *Config) { c.ClientID = "" },
		"no secret":     func(c *Config) { c.ClientSecret = "" },
		"no cert":       func(c *Config) { c.CertPEM = nil },
		"garbage key":   func(c *Config) { c.KeyPEM = []byte("not a key") },
		"garbage CA":    func(c *Config) { c.CAPEM = []byte("not a CA") },
		"no pix key":    func(c *Config) { c.PixKey = "" },
		"long pix key":  func(c *Config) { c.PixKey = strings.Repeat("k", 78) },
		"bad webhook":   func(c *Config) { c.WebhookURL = "pixgate.example/psp" },
	} {
		cfg := good
		mut(&cfg)
		_, err := New(cfg)
		require.Error(t, err, name)
		assert.True(t, strings.HasPrefix(err.Error(), "apipix: "), "%s: %v", name, err)
	}
}

func TestDefaultTokenURLIsOnTheAPIOrigin(t *testing.T) {
	e := newEnv(t)
	e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) { w.WriteHeader(http.StatusNoContent) })
	require.NoError(t, e.c.Start(context.Background()))
	toks := e.psp.tokenCalls()
	require.Len(t, toks, 1)
	assert.Equal(t, "/oauth/token", toks[0].Path)
}

func TestErrorsAreWrapped(t *testing.T) {
	var se *StatusError
	e := newEnv(t)
	e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		writeProblem(w, http.StatusConflict, "Conflito", "x")
	})
	err := e.c.CancelCharge(context.Background(), txid)
	require.True(t, errors.As(err, &se))
	assert.Equal(t, http.StatusConflict, se.Status)
	assert.Contains(t, err.Error(), "PATCH /v2/cob/"+txid)
}
