package efi

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/provider/apipix"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

const (
	testSecret = "S3CR3T-efi-client-secret"
	testPixKey = "3f1e0a4c-8f7e-4a55-9d0e-2b7c1a9e6d11"
	payoutUUID = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
	payoutHex  = "6ba7b8109dad11d180b400c04fd430c8"
	e2eid      = "E09089356202601011200abcdefghijk"
	paymentE2E = "E12345678202601011200abcdefghijk"
	tokenValue = "AT-efi-secret-token"
)

type recorded struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// fakeEfi is Efí over real mutual TLS: a token endpoint and a handler.
type fakeEfi struct {
	pki *pspsim.PKI
	srv *httptest.Server

	mu      sync.Mutex
	calls   []recorded
	tokens  int
	handler func(w http.ResponseWriter, r *http.Request)
}

func newFake(t *testing.T) *fakeEfi {
	t.Helper()
	pki, err := pspsim.NewPKI(time.Hour)
	require.NoError(t, err)
	f := &fakeEfi{pki: pki}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		if r.URL.Path == "/oauth/token" {
			f.tokens++
			f.mu.Unlock()
			writeJSON(w, http.StatusOK, `{"access_token":"`+tokenValue+`","token_type":"Bearer","expires_in":3600}`)
			return
		}
		f.calls = append(f.calls, recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		h := f.handler
		f.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+tokenValue || h == nil {
			writeJSON(w, http.StatusUnauthorized, `{"title":"Unauthorized","status":401}`)
			return
		}
		h(w, r)
	}))
	f.srv.TLS = &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{pki.Server},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pki.CA,
	}
	f.srv.StartTLS()
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeEfi) setHandler(h func(w http.ResponseWriter, r *http.Request)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handler = h
}

func (f *fakeEfi) recorded() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.calls...)
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body) //nolint:gosec // G705: a test fake answering JSON, never rendered
}

// syncBuffer is a log sink safe for the concurrent writes of a test.
type syncBuffer = testkit.Buffer

func newTestClient(t *testing.T, opts ...apipix.Option) (*Client, *fakeEfi, *syncBuffer) {
	t.Helper()
	f := newFake(t)
	log := &syncBuffer{}
	c, err := newClient(apipix.Config{
		APIURL:       f.srv.URL + "/v2",
		ClientID:     "efi-client",
		ClientSecret: testSecret,
		CertPEM:      f.pki.ClientCertPEM,
		KeyPEM:       f.pki.ClientKeyPEM,
		CAPEM:        f.pki.CAPEM,
		PixKey:       testPixKey,
		WebhookURL:   "https://pixgate.example/psp/webhook/0123456789abcdef0123456789abcdef",
		Log:          slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}, opts...)
	require.NoError(t, err)
	return c, f, log
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), "%s", b)
	return m
}

func payout() provider.Transfer {
	return provider.Transfer{ID: payoutUUID, Amount: 1234, Key: "fulano@example.com", Description: "Saque 7"}
}

func TestNameCapabilitiesAndNew(t *testing.T) {
	c, _, _ := newTestClient(t)
	assert.Equal(t, provider.NameEfi, c.Name())
	assert.Equal(t, provider.Capabilities{Payouts: true, TxIDLength: 32}, c.Capabilities())
	_, err := New(apipix.Config{APIURL: "https://efi.example/v2"})
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "efi: "), err.Error())
}

func TestStartSkipsMTLSChecking(t *testing.T) {
	c, f, _ := newTestClient(t)
	f.setHandler(func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, `{"webhookUrl":"x"}`) })
	require.NoError(t, c.Start(context.Background()))
	calls := f.recorded()
	require.Len(t, calls, 1)
	assert.Equal(t, http.MethodPut, calls[0].Method)
	assert.Equal(t, "/v2/webhook/"+testPixKey, calls[0].Path)
	assert.Equal(t, "true", calls[0].Header.Get("x-skip-mtls-checking"))
}

func TestPayoutSendShape(t *testing.T) {
	c, f, _ := newTestClient(t)
	f.setHandler(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusCreated, fmt.Sprintf(`{"idEnvio":%q,"e2eId":%q,"valor":"12.34","horario":{"solicitacao":"2026-01-01T12:00:00.000Z"},"status":"EM_PROCESSAMENTO"}`, payoutHex, e2eid))
	})
	ctx := context.Background()
	st, err := c.Send(ctx, payout())
	require.NoError(t, err)
	assert.Equal(t, provider.TransferState{ID: payoutUUID, Status: provider.Processing, EndToEndID: e2eid}, st)
	calls := f.recorded()
	require.Len(t, calls, 1)
	assert.Equal(t, http.MethodPut, calls[0].Method)
	assert.Equal(t, "/v3/gn/pix/"+payoutHex, calls[0].Path, "on the API's origin, not under /v2")
	assert.Equal(t, map[string]any{
		"valor":      "12.34",
		"pagador":    map[string]any{"chave": testPixKey, "infoPagador": "Saque 7"},
		"favorecido": map[string]any{"chave": "fulano@example.com"},
	}, decode(t, calls[0].Body))

	tr := payout()
	tr.Description = ""
	_, err = c.Send(ctx, tr)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"chave": testPixKey}, decode(t, f.recorded()[1].Body)["pagador"], "infoPagador omitted when empty")
}

func TestPayoutSendNeverRetried(t *testing.T) {
	t.Run("5xx", func(t *testing.T) {
		c, f, _ := newTestClient(t)
		var n atomic.Int32
		f.setHandler(func(w http.ResponseWriter, _ *http.Request) {
			n.Add(1)
			writeJSON(w, http.StatusInternalServerError, `{"title":"Erro interno","status":500}`)
		})
		_, err := c.Send(context.Background(), payout())
		require.Error(t, err)
		assert.NotErrorIs(t, err, provider.ErrRejected)
		assert.Equal(t, int32(1), n.Load())
	})
	t.Run("timeout", func(t *testing.T) {
		c, f, _ := newTestClient(t, apipix.WithTimeouts(0, 300*time.Millisecond))
		var n atomic.Int32
		// The handler never answers before the client's deadline, whatever
		// the server's request context does: returning early would send an
		// empty 200.
		release := make(chan struct{})
		t.Cleanup(func() { close(release) })
		f.setHandler(func(w http.ResponseWriter, _ *http.Request) {
			n.Add(1)
			select {
			case <-release:
				panic(http.ErrAbortHandler)
			case <-time.After(3 * time.Second):
				writeJSON(w, http.StatusCreated, fmt.Sprintf(`{"idEnvio":%q,"status":"EM_PROCESSAMENTO"}`, payoutHex))
			}
		})
		_, err := c.Send(context.Background(), payout())
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, int32(1), n.Load())
	})
	t.Run("4xx", func(t *testing.T) {
		c, f, _ := newTestClient(t)
		f.setHandler(func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusBadRequest, `{"nome":"saldo_insuficiente","title":"Saldo insuficiente","status":400,"detail":"Saldo insuficiente para a transação"}`)
		})
		_, err := c.Send(context.Background(), payout())
		require.ErrorIs(t, err, provider.ErrRejected)
		assert.Contains(t, err.Error(), "Saldo insuficiente")
		assert.Len(t, f.recorded(), 1)
	})
}

func TestPayoutStatus(t *testing.T) {
	c, f, _ := newTestClient(t)
	var answer atomic.Value
	f.setHandler(func(w http.ResponseWriter, _ *http.Request) {
		a := answer.Load().(string)
		if a == "404" {
			writeJSON(w, http.StatusNotFound, `{"nome":"envio_nao_encontrado","title":"Not Found","status":404}`)
			return
		}
		writeJSON(w, http.StatusOK, a)
	})
	ctx := context.Background()
	for _, tc := range []struct {
		body string
		want provider.TransferState
	}{
		{fmt.Sprintf(`{"endToEndId":%q,"idEnvio":%q,"valor":"12.34","status":"REALIZADO","chave":"x"}`, e2eid, payoutHex), provider.TransferState{ID: payoutUUID, Status: provider.Completed, EndToEndID: e2eid}},
		{fmt.Sprintf(`{"e2eId":%q,"idEnvio":%q,"valor":"12.34","status":"NAO_REALIZADO"}`, e2eid, payoutHex), provider.TransferState{ID: payoutUUID, Status: provider.Failed, EndToEndID: e2eid}},
		{fmt.Sprintf(`{"idEnvio":%q,"valor":"12.34","status":"EM_PROCESSAMENTO"}`, payoutHex), provider.TransferState{ID: payoutUUID, Status: provider.Processing}},
	} {
		answer.Store(tc.body)
		st, err := c.Status(ctx, payout())
		require.NoError(t, err, tc.body)
		assert.Equal(t, tc.want, st)
	}
	calls := f.recorded()
	assert.Equal(t, http.MethodGet, calls[0].Method)
	assert.Equal(t, "/v2/gn/pix/enviados/id-envio/"+payoutHex, calls[0].Path)

	answer.Store("404")
	_, err := c.Status(ctx, payout())
	require.ErrorIs(t, err, provider.ErrNotFound)

	for _, bad := range []string{
		fmt.Sprintf(`{"idEnvio":%q,"valor":"12.34","status":"DESCONHECIDO"}`, payoutHex),
		fmt.Sprintf(`{"idEnvio":%q,"valor":"99.99","status":"REALIZADO"}`, payoutHex),
		`{"idEnvio":"ffffffffffffffffffffffffffffffff","valor":"12.34","status":"REALIZADO"}`,
		fmt.Sprintf(`{"idEnvio":%q,"valor":"12.34","status":"REALIZADO","endToEndId":"E123"}`, payoutHex),
	} {
		answer.Store(bad)
		_, err := c.Status(ctx, payout())
		require.Error(t, err, bad)
	}
}

func TestPayoutStatusRetriedOn5xx(t *testing.T) {
	c, f, _ := newTestClient(t)
	var n atomic.Int32
	f.setHandler(func(w http.ResponseWriter, _ *http.Request) {
		if n.Add(1) == 1 {
			writeJSON(w, http.StatusBadGateway, `{"title":"Bad Gateway","status":502}`)
			return
		}
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"idEnvio":%q,"valor":"12.34","status":"REALIZADO","endToEndId":%q}`, payoutHex, e2eid))
	})
	st, err := c.Status(context.Background(), payout())
	require.NoError(t, err)
	assert.Equal(t, provider.Completed, st.Status)
	assert.Equal(t, int32(2), n.Load())
}

func TestRefundsGoThroughAPIPix(t *testing.T) {
	c, f, _ := newTestClient(t)
	f.setHandler(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusCreated, fmt.Sprintf(`{"id":%q,"rtrId":"D09089356202601011200abcdefghijk","valor":"1.00","status":"DEVOLVIDO"}`, payoutHex))
	})
	tr := provider.Transfer{ID: payoutUUID, Amount: 100, Refund: true, PaymentE2E: paymentE2E, Description: "motivo"}
	st, err := c.Send(context.Background(), tr)
	require.NoError(t, err)
	assert.Equal(t, provider.Completed, st.Status)
	st, err = c.Status(context.Background(), tr)
	require.NoError(t, err)
	assert.Equal(t, provider.Completed, st.Status)
	calls := f.recorded()
	require.Len(t, calls, 2)
	assert.Equal(t, "/v2/pix/"+paymentE2E+"/devolucao/"+payoutHex, calls[0].Path)
	assert.Equal(t, http.MethodPut, calls[0].Method)
	assert.Equal(t, http.MethodGet, calls[1].Method)
	assert.Equal(t, map[string]any{"valor": "1.00", "descricao": "motivo"}, decode(t, calls[0].Body))
}

func TestPayoutRefusesBadInputWithoutCalling(t *testing.T) {
	c, f, _ := newTestClient(t)
	for _, tr := range []provider.Transfer{
		{ID: "not-a-uuid", Amount: 100, Key: "k"},
		{ID: payoutUUID, Amount: 0, Key: "k"},
		{ID: payoutUUID, Amount: 100},
	} {
		_, err := c.Send(context.Background(), tr)
		require.ErrorIs(t, err, provider.ErrRejected, "%+v", tr)
	}
	assert.Empty(t, f.recorded())
}

func TestNoSecretInEfiLogsOrErrors(t *testing.T) {
	c, f, log := newTestClient(t)
	f.setHandler(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusServiceUnavailable, fmt.Sprintf(`{"title":"down","status":503,"detail":%q}`, r.Header.Get("Authorization")+" "+testSecret))
	})
	_, err := c.Send(context.Background(), payout())
	require.Error(t, err)
	_, err2 := c.Status(context.Background(), payout())
	require.Error(t, err2)
	for _, s := range []string{testSecret, tokenValue} {
		assert.NotContains(t, err.Error(), s)
		assert.NotContains(t, err2.Error(), s)
		assert.NotContains(t, log.String(), s)
	}
	assert.Contains(t, log.String(), "provider=efi")
}
