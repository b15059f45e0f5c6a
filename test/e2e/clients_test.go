package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// balance calls GET /api/v1/wallet/balance with credentials and returns the
// status code.
func balance(t *testing.T, addr, id, secret string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+"/api/v1/wallet/balance", nil)
	require.NoError(t, err)
	req.Header.Set("stpi", id)
	req.Header.Set("stps", secret)
	return do(t, req)
}

func getStatus(t *testing.T, url string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	return do(t, req)
}

var testHTTP = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

func do(t *testing.T, req *http.Request) int {
	t.Helper()
	resp, err := testHTTP.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	return resp.StatusCode
}

func TestClients(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, db string) {
		code, out, errOut := run(t, "clients", "create", "--database-url", db, "--name", "Loja A",
			"--cashin-fee-percent", "1.5", "--cashin-fee-fixed", "0.10",
			"--payout-fee-percent", "0.99", "--payout-fee-fixed", "2")
		require.Equal(t, 0, code, "stderr: %s", errOut)
		a := testkit.DecodeOne(t, out, testkit.CredKeys...)
		testkit.RequireNewClient(t, a, "Loja A", "sandbox")
		require.NotContains(t, errOut, a.ClientSecret, "secret logged")
		require.NotContains(t, errOut, a.WebhookSecret, "webhook secret logged")

		code, out, errOut = run(t, "clients", "create", "--database-url", db, "--name", "Loja Prod", "--env", "production")
		require.Equal(t, 0, code, "stderr: %s", errOut)
		p := testkit.DecodeOne(t, out, testkit.CredKeys...)
		testkit.RequireNewClient(t, p, "Loja Prod", "production")
		require.NotEqual(t, a.ClientID, p.ClientID)
		require.NotEqual(t, a.WebhookSecret, p.WebhookSecret)

		clients, raw := listClients(t, db)
		require.Len(t, clients, 2)
		for _, s := range []string{a.ClientSecret, a.WebhookSecret, p.ClientSecret, p.WebhookSecret} {
			require.NotContains(t, raw, s, "clients list shows a secret")
		}
		require.Equal(t, testkit.ListedClient{ClientID: a.ClientID, Name: "Loja A", Environment: "sandbox", Status: "active",
			CashinFeePercent: "1.5", CashinFeeFixed: "0.10", PayoutFeePercent: "0.99", PayoutFeeFixed: "2.00",
			CreatedAt: clients[a.ClientID].CreatedAt}, clients[a.ClientID])
		require.Equal(t, testkit.ListedClient{ClientID: p.ClientID, Name: "Loja Prod", Environment: "production", Status: "active",
			CashinFeePercent: "0", CashinFeeFixed: "0.00", PayoutFeePercent: "0", PayoutFeeFixed: "0.00",
			CreatedAt: clients[p.ClientID].CreatedAt}, clients[p.ClientID])

		// A sandbox and a production server on the same database: each
		// accepts only its own environment's credentials.
		sandbox := startServe(t, db)
		production := startServe(t, db, testkit.ProductionSandboxFlags...)
		require.Empty(t, sandbox.stdout.String(), "no sandbox client on a database with clients")
		require.Empty(t, production.stdout.String())
		require.Equal(t, http.StatusOK, balance(t, sandbox.addr, a.ClientID, a.ClientSecret))
		require.Equal(t, http.StatusUnauthorized, balance(t, sandbox.addr, p.ClientID, p.ClientSecret), "production client on a sandbox server")
		require.Equal(t, http.StatusOK, balance(t, production.addr, p.ClientID, p.ClientSecret))
		require.Equal(t, http.StatusUnauthorized, balance(t, production.addr, a.ClientID, a.ClientSecret), "sandbox client on a production server")
		require.Equal(t, http.StatusUnauthorized, balance(t, sandbox.addr, a.ClientID, a.ClientSecret+"x"))
		require.Equal(t, http.StatusUnauthorized, balance(t, sandbox.addr, a.ClientID, p.ClientSecret))

		// Rotation: the new secret works at once, the old one stops at once.
		code, out, errOut = run(t, "clients", "rotate-secret", a.ClientID, "--database-url", db)
		require.Equal(t, 0, code, "stderr: %s", errOut)
		rotated := testkit.DecodeOne(t, out, "client_id", "client_secret")
		require.Equal(t, a.ClientID, rotated.ClientID)
		require.True(t, strings.HasPrefix(rotated.ClientSecret, "sk_test_"), rotated.ClientSecret)
		require.NotEqual(t, a.ClientSecret, rotated.ClientSecret)
		require.NotContains(t, errOut, rotated.ClientSecret, "secret logged")
		require.Equal(t, http.StatusUnauthorized, balance(t, sandbox.addr, a.ClientID, a.ClientSecret), "old secret after rotation")
		require.Equal(t, http.StatusOK, balance(t, sandbox.addr, a.ClientID, rotated.ClientSecret), "new secret after rotation")

		// Disabling: the client's credentials stop working at once; the
		// other client is untouched.
		code, out, errOut = run(t, "clients", "disable", a.ClientID, "--database-url", db)
		require.Equal(t, 0, code, "stderr: %s", errOut)
		require.JSONEq(t, `{"client_id":"`+a.ClientID+`","status":"disabled"}`, out)
		require.Equal(t, http.StatusUnauthorized, balance(t, sandbox.addr, a.ClientID, rotated.ClientSecret), "disabled client")
		require.Equal(t, http.StatusOK, balance(t, production.addr, p.ClientID, p.ClientSecret))

		clients, _ = listClients(t, db)
		require.Equal(t, "disabled", clients[a.ClientID].Status)
		require.Equal(t, "active", clients[p.ClientID].Status)

		// Unknown ids: exit 1, one clear line, nothing on stdout.
		for _, cmd := range []string{"rotate-secret", "disable"} {
			code, out, errOut = run(t, "clients", cmd, "cli_test_000000000000000000000000", "--database-url", db)
			require.Equal(t, 1, code, "%s: stderr: %s", cmd, errOut)
			require.Empty(t, out, cmd)
			require.Equal(t, "pixgate: client \"cli_test_000000000000000000000000\" not found\n", errOut, cmd)
		}

		sandbox.stop(t)
		production.stop(t)
	})
}
