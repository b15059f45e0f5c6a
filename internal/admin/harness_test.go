package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/pixgate/pixgate/internal/admin"
	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/httpapi"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/provider/sandbox"
	"github.com/pixgate/pixgate/internal/ratelimit"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
)

type opener = testkit.Opener

var openSQLite opener = testkit.OpenSQLite

// databases runs fn once per database driver, as parallel subtests.
func databases(t *testing.T, fn func(t *testing.T, open opener)) {
	t.Helper()
	testkit.Databases(t, fn)
}

// bundle is the real API server with the panel mounted, on loopback.
type bundle struct {
	t     *testing.T
	db    *store.DB
	gw    *gateway.Service
	bo    *backoffice.Service
	srv   *httptest.Server
	clock *testkit.Clock
	// panel is the panel's own handler, also reachable through srv.
	panel http.Handler
	// merchant is a client created at setup, with its credentials.
	merchant backoffice.Credentials
}

func setup(t *testing.T, open opener, env string) *bundle {
	t.Helper()
	db := open(t)
	log := slog.New(slog.DiscardHandler)
	clk := &testkit.Clock{}
	psp := sandbox.New(sandbox.Config{PixKey: "pix@pixgate.dev", MerchantName: "Loja Exemplo", MerchantCity: "Sao Paulo", Delay: 50 * time.Millisecond, Now: clk.Now})
	gw, err := gateway.New(gateway.Config{DB: db, Env: env,
		ChargeTTL: 24 * time.Hour, Log: log, Provider: psp, Now: clk.Now})
	require.NoError(t, err)
	panel, bo := newPanel(t, db, gw, psp, clk, log)
	api, err := httpapi.New(httpapi.Options{Gateway: gw, Now: clk.Now, Log: log, Ready: db.Ping, Limiter: ratelimit.NewMemory(100000), Admin: panel})
	require.NoError(t, err)
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	cred, err := bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "Loja Exemplo"})
	require.NoError(t, err)
	return &bundle{t: t, db: db, gw: gw, bo: bo, srv: srv, clock: clk, panel: panel, merchant: cred}
}

// newPanel returns the panel over gw and a back office on db beside it (in
// gw's environment, with its provider psp), both on clk.
func newPanel(t *testing.T, db *store.DB, gw *gateway.Service, psp provider.Provider, clk *testkit.Clock, log *slog.Logger) (*admin.Handler, *backoffice.Service) {
	t.Helper()
	bo, err := backoffice.New(backoffice.Config{DB: db, Env: gw.Env, Now: clk.Now, Provider: psp})
	require.NoError(t, err)
	panel, err := admin.New(admin.Options{Gateway: gw, Backoffice: bo, Log: log, PasswordCost: bcrypt.MinCost})
	require.NoError(t, err)
	return panel, bo
}

// user creates a panel user (cheap bcrypt cost) and returns its password.
func (b *bundle) user(email, role, clientID string) string {
	b.t.Helper()
	nu, err := admin.CreateUser(context.Background(), b.bo, admin.UserParams{Email: email, Role: role, ClientID: clientID, Cost: bcrypt.MinCost})
	require.NoError(b.t, err)
	return nu.Password
}

// api calls the JSON API with a client's credentials and returns the
// status and decoded body.
func (b *bundle) api(cred backoffice.Credentials, method, path string, body any) (int, map[string]any) {
	b.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(b.t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, b.srv.URL+path, rd)
	require.NoError(b.t, err)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("stpi", cred.ClientID)
	req.Header.Set("stps", cred.ClientSecret)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	var m map[string]any
	raw, err := io.ReadAll(resp.Body)
	require.NoError(b.t, err)
	if len(raw) > 0 {
		require.NoError(b.t, json.Unmarshal(raw, &m), string(raw))
	}
	return resp.StatusCode, m
}

// charge creates a charge through the API and returns its payment_id.
func (b *bundle) charge(cred backoffice.Credentials, externalID, amount string) string {
	b.t.Helper()
	status, body := b.api(cred, "POST", "/api/v1/gateway/request-qrcode", validCharge(externalID, amount))
	require.Equal(b.t, http.StatusCreated, status, "%v", body)
	return body["payment_id"].(string)
}

func validCharge(externalID, amount string) map[string]any {
	return map[string]any{
		"amount":      json.Number(amount),
		"external_id": externalID,
		"payer": map[string]any{
			"name": "João da Silva", "document": "52998224725", "phoneNumber": "11987654321", "email": "joao@example.com",
			"address": map[string]any{"street": "Rua das Flores", "number": "100", "neighborhood": "Centro",
				"city": "São Paulo", "state": "SP", "zipCode": "01001000"},
		},
		"payerQuestion": "Pedido",
		"postbackUrl":   "https://merchant.example.com/webhooks/pix",
		"products":      []any{map[string]any{"name": "Camiseta", "quantity": "1", "price": json.Number(amount)}},
	}
}

// failDelivery records one failed delivery attempt of every due event of
// the transaction, as the dispatcher would after a 500, and marks them
// failed for good when final.
func (b *bundle) failDelivery(txID string, final bool) {
	b.t.Helper()
	ctx := context.Background()
	now := b.clock.Now()
	require.NoError(b.t, b.db.Write(ctx, func(tx *store.Tx) error {
		claimed, err := tx.ClaimEvents(ctx, "test", now, now.Add(time.Minute), 100)
		if err != nil {
			return err
		}
		for _, e := range claimed {
			if e.TransactionID != txID {
				if err := tx.ReleaseEvent(ctx, "test", e.ID); err != nil {
					return err
				}
				continue
			}
			status, next := "pending", now.Add(5*time.Minute)
			if final {
				status = "failed"
			}
			a := pix.Attempt{ID: uuid.NewString(), EventID: e.ID, At: now, StatusCode: 500, Latency: 42 * time.Millisecond,
				Error: "unexpected status 500", Response: "oops"}
			if _, err := tx.FinishAttempt(ctx, "test", a, status, e.Attempts+1, next); err != nil {
				return err
			}
		}
		return nil
	}))
}

// webClient is a cookie-keeping HTTP client that does not follow redirects.
type webClient struct {
	t    *testing.T
	b    *bundle
	http *http.Client
	// header is added to every request.
	header http.Header
}

func (b *bundle) web() *webClient {
	jar, err := cookiejar.New(nil)
	require.NoError(b.t, err)
	return &webClient{t: b.t, b: b, header: http.Header{}, http: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (c *webClient) do(method, path string, form url.Values) page {
	c.t.Helper()
	var rd io.Reader
	if form != nil {
		rd = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.b.srv.URL+path, rd)
	require.NoError(c.t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, vs := range c.header {
		req.Header[k] = vs
	}
	resp, err := c.http.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return page{status: resp.StatusCode, header: resp.Header, body: string(raw)}
}

func (c *webClient) get(path string) page { return c.do("GET", path, nil) }

func (c *webClient) post(path string, form url.Values) page { return c.do("POST", path, form) }

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf returns the CSRF token of the forms of a page.
func csrf(t *testing.T, p page) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.body)
	require.NotNil(t, m, "no csrf field in page: %s", p.body)
	return m[1]
}

// login logs in through the form and returns the session's CSRF token.
func (c *webClient) login(email, password string) string {
	c.t.Helper()
	lp := c.get("/admin/login")
	require.Equal(c.t, http.StatusOK, lp.status)
	p := c.post("/admin/login", url.Values{"csrf": {csrf(c.t, lp)}, "email": {email}, "password": {password}})
	require.Equal(c.t, http.StatusSeeOther, p.status, p.body)
	require.Equal(c.t, "/admin/", p.header.Get("Location"))
	home := c.get("/admin/")
	if home.status == http.StatusSeeOther {
		home = c.get(home.header.Get("Location"))
	}
	require.Equal(c.t, http.StatusOK, home.status, home.body)
	return csrf(c.t, home)
}
