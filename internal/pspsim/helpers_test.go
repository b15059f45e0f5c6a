package pspsim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

// sim is a started simulator, a client that speaks to it as pixgate does,
// and a webhook receiver.
type sim struct {
	*pspsim.Server
	t      *testing.T
	client *http.Client
	token  string
	clock  *testkit.Clock
	hooks  *hookSink
	origin string
}

const testKey = "merchant@example.com"

func startSim(t *testing.T, mod func(*pspsim.Options)) *sim {
	t.Helper()
	clock := &testkit.Clock{}
	o := pspsim.Options{PixKey: testKey, ClientID: "client-1", ClientSecret: "secret-1", Now: clock.Now, SettleDelay: time.Minute}
	if mod != nil {
		mod(&o)
	}
	s := pspsim.New(o)
	require.NoError(t, s.Start(context.Background()))
	t.Cleanup(s.Close)
	u, err := url.Parse(s.URL())
	require.NoError(t, err)
	e := &sim{Server: s, t: t, client: s.HTTPClient(), clock: clock, hooks: newHookSink(t), origin: u.Scheme + "://" + u.Host}
	e.token = e.fetchToken("client-1", "secret-1")
	return e
}

// fetchToken asks the token endpoint as pixgate does (form, HTTP Basic).
func (e *sim) fetchToken(id, secret string) string {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.TokenURL(), strings.NewReader("grant_type=client_credentials"))
	require.NoError(e.t, err)
	req.SetBasicAuth(id, secret)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := e.client.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	require.Equal(e.t, http.StatusOK, resp.StatusCode)
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int    `json:"expires_in"`
	}
	require.NoError(e.t, json.NewDecoder(resp.Body).Decode(&tok))
	require.Equal(e.t, "Bearer", tok.TokenType)
	require.NotEmpty(e.t, tok.AccessToken)
	return tok.AccessToken
}

// do sends method path (from the origin, "/v2/cob/…") with body as JSON
// and returns the status and the decoded answer (nil when empty).
func (e *sim) do(method, path string, body any) (int, map[string]any) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(e.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.origin+path, rd)
	require.NoError(e.t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+e.token)
	resp, err := e.client.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	if len(raw) == 0 {
		return resp.StatusCode, nil
	}
	var out map[string]any
	require.NoError(e.t, json.Unmarshal(raw, &out), "body: %s", raw)
	return resp.StatusCode, out
}

// cobBody is a cob as pixgate sends it.
func cobBody(valor string) map[string]any {
	return map[string]any{
		"calendario":         map[string]any{"expiracao": 3600},
		"devedor":            map[string]any{"cpf": "12345678909", "nome": "Fulano de Tal"},
		"valor":              map[string]any{"original": valor},
		"chave":              testKey,
		"solicitacaoPagador": "Pedido 42",
	}
}

// txid returns a valid txid unique in the test (26-35 alphanumerics).
func txid(n int) string {
	return strings.Repeat("T", 26) + strings.Repeat("0", 3) + string(rune('A'+n/26)) + string(rune('a'+n%26))
}

// hex32 is a devolução id or idEnvio as pixgate writes them.
func hex32(n int) string {
	return strings.Repeat("ab", 15) + string(rune('a'+n/16)) + "0123456789abcdef"[n%16:n%16+1]
}

// registerWebhook points the simulator's webhook at the sink.
func (e *sim) registerWebhook() {
	e.t.Helper()
	st, body := e.do(http.MethodPut, "/v2/webhook/"+url.PathEscape(testKey), map[string]any{"webhookUrl": e.hooks.URL + "/psp/webhook/secret"})
	require.Equal(e.t, http.StatusOK, st, "%v", body)
}

// hookSink records the webhook POSTs it receives.
type hookSink struct {
	*httptest.Server
	mu     sync.Mutex
	paths  []string
	bodies []map[string]any
	status int
}

func newHookSink(t *testing.T) *hookSink {
	h := &hookSink{status: http.StatusOK}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		h.mu.Lock()
		h.paths = append(h.paths, r.Method+" "+r.URL.Path)
		h.bodies = append(h.bodies, body)
		status := h.status
		h.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookSink) received() ([]string, []map[string]any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.paths...), append([]map[string]any(nil), h.bodies...)
}

// get reads a nested value: get(m, "pix", 0, "endToEndId").
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}
