package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/httpapi"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider/sandbox"
	"github.com/pixgate/pixgate/internal/ratelimit"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
	"github.com/pixgate/pixgate/internal/webhook"
)

// databases runs fn once per database driver, as parallel subtests.
func databases(t *testing.T, fn func(t *testing.T, open func(t *testing.T) *store.DB)) {
	t.Helper()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) { fn(t, open) })
}

// bundle is one running API over one database.
type bundle struct {
	t     *testing.T
	db    *store.DB
	gw    *gateway.Service
	srv   *httptest.Server
	http  *http.Client // every response is checked against openapi.yaml
	raw   *http.Client // unchecked, for undocumented routes (404/405)
	cred  gateway.Credentials
	clock *testkit.Clock
	logs  *testkit.Buffer
}

type options struct {
	env       string
	rateLimit int
	fee       pix.FeeRule
}

func setup(t *testing.T, open func(t *testing.T) *store.DB, o options) *bundle {
	t.Helper()
	if o.env == "" {
		o.env = "sandbox"
	}
	if o.rateLimit == 0 {
		o.rateLimit = 100000
	}
	db := open(t)
	logs := &testkit.Buffer{}
	log := slog.New(httpapi.LogHandler(slog.NewJSONHandler(logs, nil)))
	clk := &testkit.Clock{}
	gw, err := gateway.New(gateway.Config{DB: db, Env: o.env,
		ChargeTTL: 24 * time.Hour, PayoutDelay: time.Hour, Log: log, Provider: sandbox.Provider{PixKey: "pix@pixgate.dev", MerchantName: "Loja Exemplo Ltda", MerchantCity: "São Paulo"}, Now: clk.Now,
		CheckWebhookURL: webhook.Guard{AllowPrivate: o.env == "sandbox", RequireHTTPS: o.env == "production"}.CheckURL})
	require.NoError(t, err)
	api, err := httpapi.New(httpapi.Options{Gateway: gw, Log: log, Ready: db.Ping, Limiter: ratelimit.NewMemory(o.rateLimit)})
	require.NoError(t, err)
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	cred, err := gw.CreateClient(context.Background(), gateway.ClientParams{Name: "merchant", CashinFee: o.fee, PayoutFee: o.fee})
	require.NoError(t, err)
	doc := testkit.NewOpenAPI(t, httpapi.OpenAPIDocument())
	return &bundle{t: t, db: db, gw: gw, srv: srv, http: doc.Client(t, http.DefaultTransport), raw: &http.Client{},
		cred: cred, clock: clk, logs: logs}
}

// response is a decoded HTTP response.
type response struct {
	status int
	header http.Header
	body   []byte
	json   map[string]any
}

// do sends a request with the bundle's credentials (unless cred is given).
func (b *bundle) do(method, path string, body any, cred ...gateway.Credentials) response {
	b.t.Helper()
	return b.send(b.http, method, path, body, "application/json", cred...)
}

func (b *bundle) send(c *http.Client, method, path string, body any, contentType string, cred ...gateway.Credentials) response {
	b.t.Helper()
	r := b.exchange(c, b.request(method, path, body, contentType, cred...))
	require.NotEmpty(b.t, r.header.Get("X-Request-Id"))
	return r
}

// doKey POSTs body as JSON with an Idempotency-Key header.
func (b *bundle) doKey(path string, body any, key string) response {
	b.t.Helper()
	req := b.request("POST", path, body, "application/json")
	req.Header.Set("Idempotency-Key", key)
	return b.exchange(b.http, req)
}

// request builds a request with the bundle's credentials (unless cred is
// given); body is sent as is (string, []byte) or as JSON.
func (b *bundle) request(method, path string, body any, contentType string, cred ...gateway.Credentials) *http.Request {
	b.t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = bytes.NewReader([]byte(v))
	case []byte:
		rd = bytes.NewReader(v)
	default:
		raw, err := json.Marshal(v)
		require.NoError(b.t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, b.srv.URL+path, rd)
	require.NoError(b.t, err)
	if rd != nil && contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	cr := b.cred
	if len(cred) > 0 {
		cr = cred[0]
	}
	if cr.ClientID != "" {
		req.Header.Set("stpi", cr.ClientID)
	}
	if cr.ClientSecret != "" {
		req.Header.Set("stps", cr.ClientSecret)
	}
	return req
}

// exchange sends req with c and decodes the answer.
func (b *bundle) exchange(c *http.Client, req *http.Request) response {
	b.t.Helper()
	resp, err := c.Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(b.t, err)
	r := response{status: resp.StatusCode, header: resp.Header, body: raw}
	if len(raw) > 0 && raw[0] == '{' {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		require.NoError(b.t, d.Decode(&r.json), string(raw))
	}
	return r
}

// validCharge returns a charge request body that passes every rule.
func validCharge(externalID string, amount string) map[string]any {
	return map[string]any{
		"amount":      json.Number(amount),
		"external_id": externalID,
		"payer": map[string]any{
			"name": "João da Silva", "document": "52998224725", "phoneNumber": "11987654321", "email": "joao@example.com",
			"address": map[string]any{"street": "Rua das Flores", "number": "100", "neighborhood": "Centro",
				"city": "São Paulo", "state": "SP", "zipCode": "01001000"},
		},
		"payerQuestion": "Pedido 123",
		"postbackUrl":   "https://merchant.example.com/webhooks/pix",
		"products":      []any{map[string]any{"name": "Camiseta", "quantity": "1", "price": json.Number(amount)}},
	}
}

// count returns how many transactions the client has.
func (b *bundle) count(clientID string) int {
	b.t.Helper()
	rows, _, err := b.db.History(context.Background(), clientID, store.HistoryFilter{Limit: 1000})
	require.NoError(b.t, err)
	return len(rows)
}

func (b *bundle) createCharge(ext, amount string) response {
	b.t.Helper()
	r := b.do("POST", "/api/v1/gateway/request-qrcode", validCharge(ext, amount))
	require.Equal(b.t, http.StatusCreated, r.status, string(r.body))
	return r
}
