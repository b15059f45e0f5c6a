package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/httpapi"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
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
	bo    *backoffice.Service
	srv   *httptest.Server
	http  *http.Client // every response is checked against openapi.yaml
	raw   *http.Client // unchecked, for undocumented routes (404/405)
	cred  backoffice.Credentials
	clock clock
	logs  *testkit.Buffer
	// psp is the bundle's PSP; node builds another gateway process on the
	// same database and clock with PSP p.
	psp  provider.Provider
	node func(p provider.Provider) *gateway.Service
}

// clock is the bundle's clock: the real time moved forward by Advance.
type clock interface {
	Now() time.Time
	Advance(d time.Duration)
}

// startedClock is a clock that starts at a chosen instant and runs with the
// real clock from there (so that timestamps still advance between calls),
// for tests that need a calendar date (due dates).
type startedClock struct {
	at      time.Time
	started time.Time
	off     testkit.Clock
}

func newStartedClock(at time.Time) *startedClock {
	return &startedClock{at: at, started: time.Now()}
}

// Now returns the start instant plus the real time since, plus every Advance.
func (c *startedClock) Now() time.Time { return c.at.Add(c.off.Now().Sub(c.started)) }

// Advance moves the clock forward by d.
func (c *startedClock) Advance(d time.Duration) { c.off.Advance(d) }

type options struct {
	env       string
	rateLimit int
	fee       pix.FeeRule
	// start, when set, is the instant the bundle's clock starts at.
	start time.Time
	// provider, when set, wraps the sandbox PSP the bundle would use.
	provider func(provider.Provider) provider.Provider
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
	var clk clock = &testkit.Clock{}
	if !o.start.IsZero() {
		clk = newStartedClock(o.start)
	}
	var psp provider.Provider = sandbox.New(sandbox.Config{PixKey: "pix@pixgate.dev", MerchantName: "Loja Exemplo Ltda", MerchantCity: "São Paulo", Delay: time.Hour, Now: clk.Now})
	if o.provider != nil {
		psp = o.provider(psp)
	}
	newNode := func(p provider.Provider) *gateway.Service {
		gw, err := gateway.New(gateway.Config{DB: db, Env: o.env,
			ChargeTTL: 24 * time.Hour, Log: log, Provider: p, Now: clk.Now,
			CheckWebhookURL: webhook.Guard{AllowPrivate: o.env == "sandbox", RequireHTTPS: o.env == "production"}.CheckURL})
		require.NoError(t, err)
		return gw
	}
	gw := newNode(psp)
	api, err := httpapi.New(httpapi.Options{Gateway: gw, Now: clk.Now, Log: log, Ready: db.Ping, Limiter: ratelimit.NewMemory(o.rateLimit)})
	require.NoError(t, err)
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	bo := backOffice(t, db, gw)
	cred, err := bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "merchant", CashinFee: o.fee, PayoutFee: o.fee})
	require.NoError(t, err)
	doc := testkit.NewOpenAPI(t, httpapi.OpenAPIDocument())
	return &bundle{t: t, db: db, gw: gw, bo: bo, srv: srv, http: doc.Client(t, http.DefaultTransport), raw: &http.Client{},
		cred: cred, clock: clk, logs: logs, psp: psp, node: newNode}
}

// backOffice is the back office beside gw on db, as serve builds it: in
// gw.s environment, on its clock and random source.
// Tests create their clients through it, as operators do.
func backOffice(t testing.TB, db *store.DB, gw *gateway.Service) *backoffice.Service {
	t.Helper()
	bo, err := backoffice.New(backoffice.Config{DB: db, Env: gw.Env, Now: func() time.Time { return gw.Now() }, Rand: gw.Rand})
	require.NoError(t, err)
	return bo
}

// response is a decoded HTTP response.
type response struct {
	status int
	header http.Header
	body   []byte
	json   map[string]any
}

// do sends a request with the bundle's credentials (unless cred is given).
func (b *bundle) do(method, path string, body any, cred ...backoffice.Credentials) response {
	b.t.Helper()
	return b.send(b.http, method, path, body, "application/json", cred...)
}

func (b *bundle) send(c *http.Client, method, path string, body any, contentType string, cred ...backoffice.Credentials) response {
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
func (b *bundle) request(method, path string, body any, contentType string, cred ...backoffice.Credentials) *http.Request {
	b.t.Helper()
	req, err := b.build(method, path, body, contentType, cred...)
	require.NoError(b.t, err)
	return req
}

// attempt is doKey (do when key is empty) for goroutines: it returns what
// went wrong instead of failing the test, since require may only be called
// from the test's goroutine; the test asserts after the join.
func (b *bundle) attempt(method, path string, body any, key string) (response, error) {
	req, err := b.build(method, path, body, "application/json")
	if err != nil {
		return response{}, err
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	r, err := fetch(b.http, req)
	if err == nil && r.header.Get("X-Request-Id") == "" {
		err = fmt.Errorf("%s %s: no X-Request-Id", method, path)
	}
	return r, err
}

// build is request without the test: it returns the error instead.
func (b *bundle) build(method, path string, body any, contentType string, cred ...backoffice.Credentials) (*http.Request, error) {
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = bytes.NewReader([]byte(v))
	case []byte:
		rd = bytes.NewReader(v)
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encode body: %w", err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, b.srv.URL+path, rd)
	if err != nil {
		return nil, fmt.Errorf("new request: %w", err)
	}
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
	return req, nil
}

// exchange sends req with c and decodes the answer.
func (b *bundle) exchange(c *http.Client, req *http.Request) response {
	b.t.Helper()
	r, err := fetch(c, req)
	require.NoError(b.t, err)
	return r
}

// fetch is exchange without the test: it returns the error instead.
func fetch(c *http.Client, req *http.Request) (response, error) {
	resp, err := c.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, fmt.Errorf("read body: %w", err)
	}
	r := response{status: resp.StatusCode, header: resp.Header, body: raw}
	if len(raw) > 0 && raw[0] == '{' {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&r.json); err != nil {
			return response{}, fmt.Errorf("decode %s: %w", raw, err)
		}
	}
	return r, nil
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
