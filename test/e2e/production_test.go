package e2e

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// TestServeProductionWithSandboxProvider: with everything set explicitly,
// production starts, warns that the PIX network is simulated, and writes the
// configured key and names (never the sandbox defaults) into BR Codes.
func TestServeProductionWithSandboxProvider(t *testing.T) {
	t.Parallel()
	db := testkit.SQLiteURL(t)
	code, out, errOut := run(t, "clients", "create", "--database-url", db, "--name", "Loja", "--env", "production")
	require.Equal(t, 0, code, errOut)
	c := testkit.DecodeOne(t, out, testkit.CredKeys...)

	s := startServe(t, db, testkit.ProductionSandboxFlags...)
	require.Contains(t, s.stderr.String(), `"level":"WARN","msg":"PIXGATE_PROVIDER=sandbox in production: the PIX network is simulated, no real money moves`)
	status, body := api(t, s.addr, c, "POST", "/api/v1/gateway/request-qrcode", charge("prod-1", 10))
	require.Equal(t, http.StatusCreated, status, "%v", body)
	qr, _ := body["qrcode"].(string)
	require.Contains(t, qr, "011412345678000195", "the configured CNPJ key (26/01)")
	require.Contains(t, qr, "5914Loja Real Ltda", "the configured merchant name (59)")
	require.Contains(t, qr, "6006Recife", "the configured city (60)")
	require.NotContains(t, qr, "pixgate.dev")
	require.NotContains(t, qr, "SANDBOX")
	s.stop(t)
}

// TestSandboxDefaultsProvider: in sandbox the provider defaults to sandbox
// and the BR Code's receiving side to the sandbox values, without a warning.
func TestSandboxDefaultsProvider(t *testing.T) {
	t.Parallel()
	s := startServe(t, testkit.SQLiteURL(t))
	c := testkit.DecodeOne(t, s.stdout.String(), testkit.ServeKeys...)
	status, body := api(t, s.addr, c, "POST", "/api/v1/gateway/request-qrcode", charge("sb-1", 10))
	require.Equal(t, http.StatusCreated, status, "%v", body)
	qr, _ := body["qrcode"].(string)
	require.Contains(t, qr, "pix@pixgate.dev")
	require.Contains(t, qr, "PIXGATE SANDBOX")
	require.NotContains(t, s.stderr.String(), "PIXGATE_PROVIDER=sandbox in production")
	s.stop(t)
}
