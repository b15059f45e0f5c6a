package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

func TestAuthentication(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		gatewayBody := `{"statusCode":401,"message":"Invalid credentials","error":"Unauthorized"}`
		walletBody := `{"statusCode":401,"message":"Falha na autenticação."}`
		wrong := backoffice.Credentials{ClientID: b.cred.ClientID, ClientSecret: b.cred.ClientSecret + "x"}
		for _, tc := range []struct {
			name string
			cred backoffice.Credentials
		}{
			{"no headers", backoffice.Credentials{}},
			{"no secret", backoffice.Credentials{ClientID: b.cred.ClientID}},
			{"wrong secret", wrong},
			{"unknown client", backoffice.Credentials{ClientID: "cli_test_nope", ClientSecret: b.cred.ClientSecret}},
			// Not UTF-8 (PostgreSQL would refuse it as a parameter): a 401, not a 500.
			{"malformed client id", backoffice.Credentials{ClientID: "cli_test_\xe7\xff", ClientSecret: b.cred.ClientSecret}},
		} {
			r := b.do("GET", "/api/v1/wallet/balance", nil, tc.cred)
			require.Equal(t, http.StatusUnauthorized, r.status, tc.name)
			require.JSONEq(t, walletBody, string(r.body), tc.name)
			r = b.do("POST", "/api/v1/gateway/request-qrcode", validCharge("a1", "10"), tc.cred)
			require.Equal(t, http.StatusUnauthorized, r.status, tc.name)
			require.JSONEq(t, gatewayBody, string(r.body), tc.name)
			r = b.do("POST", "/api/v1/wallet/transaction", map[string]any{"external_id": "x"}, tc.cred)
			require.JSONEq(t, walletBody, string(r.body), tc.name)
		}
		// 401 comes before routing: even an unknown path under /api/v1/.
		r := b.send(b.raw, "GET", "/api/v1/nope", nil, "", backoffice.Credentials{})
		require.Equal(t, http.StatusUnauthorized, r.status)
		require.JSONEq(t, gatewayBody, string(r.body))
		require.Equal(t, 0, b.count(b.cred.ClientID), "nothing stored by unauthenticated requests")

		// Rotation: the old secret stops working at once, the new one works.
		ctx := context.Background()
		rotated, err := b.bo.RotateSecret(ctx, b.cred.ClientID)
		require.NoError(t, err)
		require.Equal(t, http.StatusUnauthorized, b.do("GET", "/api/v1/wallet/balance", nil).status)
		require.Equal(t, http.StatusOK, b.do("GET", "/api/v1/wallet/balance", nil, rotated).status)
		// Disabling takes effect on the next request.
		require.NoError(t, b.bo.DisableClient(ctx, b.cred.ClientID))
		require.Equal(t, http.StatusUnauthorized, b.do("GET", "/api/v1/wallet/balance", nil, rotated).status)

		// Credentials of the other environment never work here.
		prodGW, err := gateway.New(gateway.Config{DB: b.db, Env: "production", ChargeTTL: b.gw.ChargeTTL, Log: b.gw.Log, Provider: b.psp})
		require.NoError(t, err)
		prod, err := backOffice(t, b.db, prodGW).CreateClient(ctx, backoffice.ClientParams{Name: "live"})
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(prod.ClientSecret, "sk_live_"))
		require.Equal(t, http.StatusUnauthorized, b.do("GET", "/api/v1/wallet/balance", nil, prod).status)
		_, err = prodGW.Authenticate(ctx, prod.ClientID, prod.ClientSecret)
		require.NoError(t, err)

		// The secret is stored only as a hash.
		c, err := b.db.Client(ctx, prod.ClientID)
		require.NoError(t, err)
		require.NotContains(t, c.SecretHash, prod.ClientSecret)
		require.Equal(t, pix.HashSecret(prod.ClientSecret), c.SecretHash)
		require.NotContains(t, b.logs.String(), prod.ClientSecret)
		require.NotContains(t, b.logs.String(), rotated.ClientSecret)
	})
}

func TestProtocolErrors(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		charge := "/api/v1/gateway/request-qrcode"
		lookup := "/api/v1/wallet/transaction"

		big := `{"external_id":"` + strings.Repeat("a", 70<<10) + `"}`
		r := b.do("POST", charge, big)
		require.Equal(t, http.StatusRequestEntityTooLarge, r.status)
		require.Equal(t, "Request Entity Too Large", r.json["error"])
		r = b.do("POST", lookup, big)
		require.Equal(t, http.StatusRequestEntityTooLarge, r.status)
		require.NotContains(t, r.json, "error", "wallet bodies have only statusCode and message")

		for _, ct := range []string{"text/plain", "", "application/xml"} {
			r = b.send(b.http, "POST", charge, `{"a":1}`, ct)
			require.Equal(t, http.StatusUnsupportedMediaType, r.status, ct)
			require.Equal(t, "Unsupported Media Type", r.json["error"])
		}
		r = b.send(b.http, "POST", charge, validCharge("ct-1", "1"), "application/json; charset=utf-8")
		require.Equal(t, http.StatusCreated, r.status, "a charset parameter is fine")

		for _, body := range []string{`{"amount": 10,`, `not json`, ``, `[1,2]`, `{"a":1} {"b":2}`, `"str"`} {
			r = b.do("POST", charge, body)
			require.Equal(t, http.StatusBadRequest, r.status, body)
			require.Equal(t, "Invalid request parameters", r.json["message"], body)
			require.Equal(t, "Bad Request", r.json["error"], body)
			r = b.do("POST", lookup, body)
			require.Equal(t, http.StatusBadRequest, r.status, body)
			require.Len(t, r.json, 2, body)
		}

		r = b.send(b.raw, "GET", "/api/v1/gateway/unknown", nil, "")
		require.Equal(t, http.StatusNotFound, r.status)
		require.Equal(t, "Not Found", r.json["error"])
		r = b.send(b.raw, "GET", "/api/v1/wallet/unknown", nil, "")
		require.Equal(t, http.StatusNotFound, r.status)
		require.Len(t, r.json, 2)
		r = b.send(b.raw, "GET", "/nothing-here", nil, "")
		require.Equal(t, http.StatusNotFound, r.status)
		require.Equal(t, "application/json", r.header.Get("Content-Type"))

		r = b.send(b.raw, "DELETE", "/api/v1/wallet/balance", nil, "")
		require.Equal(t, http.StatusMethodNotAllowed, r.status)
		require.Contains(t, r.header.Get("Allow"), "GET")
		require.Len(t, r.json, 2)
		r = b.send(b.raw, "GET", charge, nil, "")
		require.Equal(t, http.StatusMethodNotAllowed, r.status)
		require.Equal(t, "Method Not Allowed", r.json["error"])
		require.Equal(t, 1, b.count(b.cred.ClientID), "only the one valid charge was stored")
	})
}

func TestHealthAndDocument(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		none := backoffice.Credentials{}
		r := b.do("GET", "/healthz", nil, none)
		require.Equal(t, http.StatusOK, r.status)
		require.JSONEq(t, `{"status":"ok"}`, string(r.body))
		require.Empty(t, r.header.Get("X-RateLimit-Limit"), "not counted against anyone")
		for h, v := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
			"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"} {
			require.Equal(t, v, r.header.Get(h), h)
		}
		r = b.do("GET", "/readyz", nil, none)
		require.Equal(t, http.StatusOK, r.status)
		r = b.do("GET", "/openapi.yaml", nil, none)
		require.Equal(t, http.StatusOK, r.status)
		require.Contains(t, string(r.body), "openapi: 3.1")
		require.NoError(t, b.db.Close())
		r = b.do("GET", "/readyz", nil, none)
		require.Equal(t, http.StatusServiceUnavailable, r.status)
	})
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{rateLimit: 3})
		for i := 0; i < 3; i++ {
			r := b.do("GET", "/api/v1/wallet/balance", nil)
			require.Equal(t, http.StatusOK, r.status)
			require.Equal(t, "3", r.header.Get("X-RateLimit-Limit"))
			require.Equal(t, []string{"2", "1", "0"}[i], r.header.Get("X-RateLimit-Remaining"))
			require.Equal(t, "60", r.header.Get("X-RateLimit-Reset"))
		}
		for _, path := range []string{"/api/v1/wallet/balance", "/api/v1/gateway/nope"} {
			r := b.send(b.raw, "GET", path, nil, "")
			require.Equal(t, http.StatusTooManyRequests, r.status)
			require.JSONEq(t, `{"statusCode":429,"message":"Rate limit exceeded","error":"Too Many Requests","retryAfter":60}`, string(r.body))
			require.Equal(t, "60", r.header.Get("Retry-After"))
			require.Equal(t, "0", r.header.Get("X-RateLimit-Remaining"))
		}
		// Another client has its own window; health checks are never limited.
		other, err := b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "other"})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, b.do("GET", "/api/v1/wallet/balance", nil, other).status)
		require.Equal(t, http.StatusOK, b.do("GET", "/healthz", nil, backoffice.Credentials{}).status)
		// Requests without valid credentials are counted per remote IP, 401s included.
		bad := backoffice.Credentials{ClientID: "x", ClientSecret: "y"}
		for i := 0; i < 3; i++ {
			r := b.do("GET", "/api/v1/wallet/balance", nil, bad)
			require.Equal(t, http.StatusUnauthorized, r.status)
			require.Equal(t, "3", r.header.Get("X-RateLimit-Limit"))
		}
		r := b.do("GET", "/api/v1/wallet/balance", nil, bad)
		require.Equal(t, http.StatusTooManyRequests, r.status)
	})
}
