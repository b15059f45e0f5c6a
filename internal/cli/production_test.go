package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// without returns testkit.ProductionSandboxFlags without flag and its value.
func without(flag string) []string {
	var out []string
	for i := 0; i < len(testkit.ProductionSandboxFlags); i += 2 {
		if testkit.ProductionSandboxFlags[i] != flag {
			out = append(out, testkit.ProductionSandboxFlags[i], testkit.ProductionSandboxFlags[i+1])
		}
	}
	return out
}

// TestServeProductionRefusesSandboxDefaults: in production serve stops at
// once, with one line naming the setting and exit code 2, unless the
// provider and (with provider sandbox) the key, merchant name and city are
// set explicitly; apipix and efi need their PSP settings
// (test/e2e/psp_serve_test.go names each). It opens no database: the SQLite file is never created.
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
