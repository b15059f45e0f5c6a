package apipix

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

// testHookSecret is the secret of testWebhookURL.
const testHookSecret = "0123456789abcdef0123456789abcdef"

// TestWebhookSecretScrubbed: when the PSP's error text quotes the webhook
// URL (whole, cut short, or another deployment's), neither the error nor
// any log line carries the secret of its path.
func TestWebhookSecretScrubbed(t *testing.T) {
	require.True(t, strings.HasSuffix(testWebhookURL, "/psp/webhook/"+testHookSecret))
	other := "otherDeploymentSecret_0123456789-ABCDEFG"
	for _, quote := range []string{
		testWebhookURL,
		"https://pixgate.example/psp/webhook/" + testHookSecret[:12] + "…",
		"https://other.example/psp/webhook/" + other,
		"webhookUrl=" + testHookSecret,
	} {
		e := newEnv(t)
		e.psp.setHandler(func(w http.ResponseWriter, r *http.Request, _ []byte) {
			code := http.StatusBadRequest
			if r.Method == http.MethodGet {
				code = http.StatusServiceUnavailable
			}
			writeProblem(w, code, "Webhook inválido "+quote, "the URL "+quote+" is not reachable")
		})
		ctx := context.Background()
		err := e.c.Start(ctx)
		require.ErrorIs(t, err, provider.ErrRejected)
		_, cerr := e.c.CheckWebhook(ctx)
		require.Error(t, cerr)
		for _, text := range []string{err.Error(), cerr.Error(), e.log.String()} {
			assert.NotContains(t, text, testHookSecret[:12], quote)
			assert.NotContains(t, text, other[:12], quote)
		}
		assert.Regexp(t, `\[redacted\]|\[webhook URL\]`, err.Error(), "the PSP's words are kept, the secret replaced")
		assert.Contains(t, err.Error(), "is not reachable")
	}
}

// TestHealthRecordsCalls: every call records whether the PSP answered (a
// 4xx is an answer), when one last did, and the class of the last failure.
func TestHealthRecordsCalls(t *testing.T) {
	// No call here may end by the call bound, whatever the machine's
	// load: a 503's retries are classed by the PSP's answer. The one
	// timeout comes from a PSP that never answers and a caller's deadline.
	e := newEnv(t, WithTimeouts(time.Second, time.Hour))
	ctx := context.Background()
	require.Equal(t, provider.Health{}, e.c.Health(), "nothing seen before the first call")

	// A hung exchange is held until the test ends (this cleanup runs
	// before the server's), so that nothing, not even an empty 200 when
	// the client goes away, ever answers it.
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	status := http.StatusOK
	var hang bool
	e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		e.psp.mu.Lock()
		code, h := status, hang
		e.psp.mu.Unlock()
		if h {
			<-never
			return
		}
		if code != http.StatusOK {
			writeProblem(w, code, "Erro", "x")
			return
		}
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"endToEndId":%q,"valor":"1.00","horario":"2026-01-01T12:00:00Z"}`, e2eid))
	})
	set := func(code int, h bool) {
		e.psp.mu.Lock()
		status, hang = code, h
		e.psp.mu.Unlock()
	}

	_, err := e.c.ConfirmPayment(ctx, e2eid)
	require.NoError(t, err)
	h := e.c.Health()
	require.True(t, h.Up)
	first := h.LastSuccess
	require.False(t, first.IsZero())
	require.Empty(t, h.LastFailClass)

	e.clock.advance(time.Minute)
	set(http.StatusServiceUnavailable, false)
	_, err = e.c.ConfirmPayment(ctx, e2eid)
	require.Error(t, err)
	h = e.c.Health()
	require.False(t, h.Up)
	require.Equal(t, provider.FailHTTP5xx, h.LastFailClass)
	require.Equal(t, first, h.LastSuccess, "the last success is kept")
	require.True(t, h.LastFailure.After(first))

	for _, code := range []int{http.StatusNotFound, http.StatusBadRequest} {
		set(code, false)
		_, err = e.c.ConfirmPayment(ctx, e2eid)
		require.Error(t, err)
		h = e.c.Health()
		require.True(t, h.Up, "a %d is the PSP answering", code)
		require.True(t, h.LastSuccess.After(first))
		require.Equal(t, provider.FailHTTP5xx, h.LastFailClass, "the last failure is kept")
	}

	set(http.StatusForbidden, false)
	_, err = e.c.ConfirmPayment(ctx, e2eid)
	require.Error(t, err)
	require.False(t, e.c.Health().Up)
	require.Equal(t, provider.FailAuth, e.c.Health().LastFailClass)

	set(http.StatusOK, true)
	hctx, hcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = e.c.ConfirmPayment(hctx, e2eid)
	hcancel()
	require.Error(t, err)
	require.False(t, e.c.Health().Up)
	require.Equal(t, provider.FailTimeout, e.c.Health().LastFailClass)

	// A caller that gives up says nothing of the PSP.
	set(http.StatusOK, false)
	_, err = e.c.ConfirmPayment(ctx, e2eid)
	require.NoError(t, err)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = e.c.ConfirmPayment(cctx, e2eid)
	require.Error(t, err)
	require.True(t, e.c.Health().Up)

	// The token endpoint refusing the credentials.
	e.psp.mu.Lock()
	e.psp.tokenStatus, e.psp.tokenBody = http.StatusUnauthorized, `{"error":"invalid_client"}`
	e.psp.mu.Unlock()
	e.c.tokens.discard(e.c.tokens.tok)
	_, err = e.c.ConfirmPayment(ctx, e2eid)
	require.Error(t, err)
	require.Equal(t, provider.FailAuth, e.c.Health().LastFailClass)
}

// TestHealthClassifiesTransportFailures: a refused connection and the TLS
// failures of either side (an unknown server, a client certificate the PSP
// refuses) get their class, never the error's text.
func TestHealthClassifiesTransportFailures(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) { w.WriteHeader(http.StatusOK) })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close())
	other, err := pspsim.NewPKI(time.Hour)
	require.NoError(t, err)

	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		class  string
	}{
		{"connection refused", func(c *Config) { c.APIURL = "https://" + closed + "/v2" }, provider.FailConnectionRefused},
		{"unknown server", func(c *Config) { c.CAPEM = other.CAPEM }, provider.FailTLS},
		{"client certificate refused", func(c *Config) { c.CertPEM, c.KeyPEM = other.ClientCertPEM, other.ClientKeyPEM }, provider.FailTLS},
		{"expired client certificate", func(c *Config) {
			expired, err := pspsim.NewPKI(-time.Minute)
			require.NoError(t, err)
			c.CertPEM, c.KeyPEM = expired.ClientCertPEM, expired.ClientKeyPEM
		}, provider.FailTLS},
	} {
		cfg := e.psp.config(io.Discard, nil)
		tc.mutate(&cfg)
		c, err := New(cfg)
		require.NoError(t, err)
		require.Error(t, c.Start(ctx), tc.name)
		h := c.Health()
		require.False(t, h.Up, tc.name)
		require.Equal(t, tc.class, h.LastFailClass, tc.name)
	}
}

// TestCheckWebhook: GET /webhook/{chave} tells this client's URL (as the
// PSP may have normalised it) from another deployment's and from none; a
// failed reading changes nothing.
func TestCheckWebhook(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	held := ""
	code := http.StatusOK
	e.psp.setHandler(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		assert.Equal(t, http.MethodGet, r.Method)
		assert.Equal(t, "/v2/webhook/"+testPixKey, r.URL.Path)
		e.psp.mu.Lock()
		u, c := held, code
		e.psp.mu.Unlock()
		switch {
		case c != http.StatusOK:
			writeProblem(w, c, "Serviço Indisponível", "x")
		case u == "":
			writeProblem(w, http.StatusNotFound, "Webhook não encontrado", "no webhook for this key")
		default:
			writeJSON(w, http.StatusOK, fmt.Sprintf(`{"webhookUrl":%q,"chave":%q,"cnpj":"12345678000195","criacao":"2026-01-01T12:00:00Z"}`, u, testPixKey))
		}
	})
	set := func(u string, c int) {
		e.psp.mu.Lock()
		held, code = u, c
		e.psp.mu.Unlock()
	}
	for _, tc := range []struct {
		held  string
		state provider.WebhookState
		host  string
	}{
		{testWebhookURL, provider.WebhookOurs, ""},
		{strings.Replace(testWebhookURL, "pixgate.example", "PIXGATE.example", 1) + "/", provider.WebhookOurs, ""},
		{"https://other.example:8443/psp/webhook/otherDeploymentSecret_0123456789", provider.WebhookOther, "other.example:8443"},
		{strings.TrimSuffix(testWebhookURL, "f") + "g", provider.WebhookOther, "pixgate.example"},
		{"", provider.WebhookNone, ""},
	} {
		set(tc.held, http.StatusOK)
		state, err := e.c.CheckWebhook(ctx)
		require.NoError(t, err, tc.held)
		require.Equal(t, tc.state, state, tc.held)
		h := e.c.Health()
		require.Equal(t, tc.state, h.Webhook)
		require.Equal(t, tc.host, h.WebhookHost)
		require.False(t, h.WebhookCheckedAt.IsZero())
	}
	set(testWebhookURL, http.StatusServiceUnavailable)
	state, err := e.c.CheckWebhook(ctx)
	require.Error(t, err)
	require.Equal(t, provider.WebhookUnknown, state)
	require.Equal(t, provider.WebhookNone, e.c.Health().Webhook, "the last reading stands")
	assert.NotContains(t, e.log.String(), "otherDeploymentSecret")
}

// TestWebhookTakenOverAtTheSimulator: two deployments on one PSP account
// (the simulator, its answers checked against BACEN's OpenAPI): the
// second one's registration takes the webhook over, and the first one's
// reading finds another URL.
func TestWebhookTakenOverAtTheSimulator(t *testing.T) {
	v := testkit.BACENValidator(t)
	ctx := context.Background()
	sim := pspsim.New(pspsim.Options{Wrap: v.Wrap})
	require.NoError(t, sim.Start(ctx))
	t.Cleanup(sim.Close)
	o := sim.Options()
	client := func(hookURL string) *Client {
		c, err := New(Config{APIURL: sim.URL(), ClientID: o.ClientID, ClientSecret: o.ClientSecret,
			CertPEM: o.PKI.ClientCertPEM, KeyPEM: o.PKI.ClientKeyPEM, CAPEM: o.PKI.CAPEM, PixKey: o.PixKey,
			WebhookURL: hookURL, Log: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		return c
	}
	first := client("https://first.example/psp/webhook/first-deployment-secret-0123456789")
	second := client("https://second.example/psp/webhook/second-deployment-secret-012345678")

	state, err := first.CheckWebhook(ctx)
	require.NoError(t, err)
	require.Equal(t, provider.WebhookNone, state, "nothing registered yet")
	require.NoError(t, first.Start(ctx))
	state, err = first.CheckWebhook(ctx)
	require.NoError(t, err)
	require.Equal(t, provider.WebhookOurs, state)

	require.NoError(t, second.Start(ctx))
	state, err = first.CheckWebhook(ctx)
	require.NoError(t, err)
	require.Equal(t, provider.WebhookOther, state)
	require.Equal(t, "second.example", first.Health().WebhookHost)
	state, err = second.CheckWebhook(ctx)
	require.NoError(t, err)
	require.Equal(t, provider.WebhookOurs, state)
	require.True(t, first.Health().Up && second.Health().Up)
}
