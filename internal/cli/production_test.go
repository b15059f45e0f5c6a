package cli

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// productionFlags are what serve needs in production with this build's only
// provider: the provider named explicitly and the BR Code's receiving side.
var productionFlags = []string{"--env", "production", "--provider", "sandbox",
	"--pix-key", "12345678000195", "--merchant-name", "Loja Real Ltda", "--merchant-city", "Recife"}

// without returns productionFlags without flag and its value.
func without(flag string) []string {
	var out []string
	for i := 0; i < len(productionFlags); i += 2 {
		if productionFlags[i] != flag {
			out = append(out, productionFlags[i], productionFlags[i+1])
		}
	}
	return out
}

// TestServeProductionRefusesSandboxDefaults: in production serve stops at
// once, with one line naming the setting and exit code 2, unless the
// provider and (with provider sandbox) the key, merchant name and city are
// set explicitly; apipix and efi need their PSP settings
// (psp_serve_test.go names each). It opens no database: the SQLite file is never created.
func TestServeProductionRefusesSandboxDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		line string
	}{
		{without("--provider"), "pixgate: invalid PIXGATE_PROVIDER (--provider): must be set in production (sandbox, apipix or efi)"},
		{without("--pix-key"), "pixgate: invalid PIXGATE_PIX_KEY (--pix-key): must be set in production with PIXGATE_PROVIDER=sandbox (it is written into every BR Code)"},
		{without("--merchant-name"), "pixgate: invalid PIXGATE_MERCHANT_NAME (--merchant-name): must be set in production with PIXGATE_PROVIDER=sandbox (it is written into every BR Code)"},
		{without("--merchant-city"), "pixgate: invalid PIXGATE_MERCHANT_CITY (--merchant-city): must be set in production with PIXGATE_PROVIDER=sandbox (it is written into every BR Code)"},
		{append(without("--provider"), "--provider", "bank"), `pixgate: invalid PIXGATE_PROVIDER (--provider): "bank" must be sandbox, apipix or efi`},
	} {
		db := filepath.Join(t.TempDir(), "pixgate.db")
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--database-url", db}, tc.args...)
		code, out, errOut := run(t, args...)
		require.Equal(t, 2, code, "%v: %s", tc.args, errOut)
		require.Empty(t, out)
		require.Equal(t, tc.line+"\n", errOut, "%v", tc.args)
		require.NoFileExists(t, db)
	}

	// Several missing settings: one line each.
	db := filepath.Join(t.TempDir(), "pixgate.db")
	code, _, errOut := run(t, "serve", "--addr", "127.0.0.1:0", "--database-url", db, "--env", "production", "--provider", "sandbox")
	require.Equal(t, 2, code)
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	require.Len(t, lines, 3, errOut)
	for i, env := range []string{"PIXGATE_PIX_KEY", "PIXGATE_MERCHANT_NAME", "PIXGATE_MERCHANT_CITY"} {
		require.Contains(t, lines[i], env)
	}

	// A PSP provider without its settings: one line per missing setting, the first the API URL.
	code, _, errOut = run(t, "serve", "--addr", "127.0.0.1:0", "--database-url", db, "--env", "production", "--provider", "apipix")
	require.Equal(t, 2, code)
	require.True(t, strings.HasPrefix(errOut, "pixgate: invalid PIXGATE_PSP_API_URL (--psp-api-url): "), errOut)
	require.NotContains(t, errOut, "not available in this build")
	require.NoFileExists(t, db)

	// Other commands need neither: a production client can be created.
	code, _, errOut = run(t, "clients", "create", "--database-url", db, "--name", "Loja", "--env", "production")
	require.Equal(t, 0, code, errOut)
}

// TestServeProductionWithSandboxProvider: with everything set explicitly,
// production starts, warns that the PIX network is simulated, and writes the
// configured key and names (never the sandbox defaults) into BR Codes.
func TestServeProductionWithSandboxProvider(t *testing.T) {
	t.Parallel()
	db := sqliteURL(t)
	code, out, errOut := run(t, "clients", "create", "--database-url", db, "--name", "Loja", "--env", "production")
	require.Equal(t, 0, code, errOut)
	c := decodeOne(t, out, credKeys...)

	s := startServe(t, db, productionFlags...)
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
	s := startServe(t, sqliteURL(t))
	c := decodeOne(t, s.stdout.String(), serveKeys...)
	status, body := api(t, s.addr, c, "POST", "/api/v1/gateway/request-qrcode", charge("sb-1", 10))
	require.Equal(t, http.StatusCreated, status, "%v", body)
	qr, _ := body["qrcode"].(string)
	require.Contains(t, qr, "pix@pixgate.dev")
	require.Contains(t, qr, "PIXGATE SANDBOX")
	require.NotContains(t, s.stderr.String(), "PIXGATE_PROVIDER=sandbox in production")
	s.stop(t)
}
