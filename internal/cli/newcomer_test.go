package cli

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// TestClientsCreateNamesItsDatabase: clients create says on stderr, in one
// line, which environment and database the client went to — so that one
// created without the server's PIXGATE_ENV or PIXGATE_DATABASE_URL is
// noticed — and never a password from the database URL.
func TestClientsCreateNamesItsDatabase(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		db := testkit.SQLiteURL(t)
		code, out, errOut := run(t, "clients", "create", "--database-url", db, "--name", "Loja")
		require.Equal(t, 0, code, errOut)
		var c testkit.Creds
		require.NoError(t, json.Unmarshal([]byte(out), &c), out)
		abs, err := filepath.Abs(db)
		require.NoError(t, err)
		line := lastLine(errOut)
		require.Contains(t, line, "client "+c.ClientID+" created in environment sandbox, database SQLite "+abs)
		require.Contains(t, line, "PIXGATE_ENV and PIXGATE_DATABASE_URL")

		// A relative path is named absolute: where it really is.
		dir := t.TempDir()
		wd, err := os.Getwd()
		require.NoError(t, err)
		rel, err := filepath.Rel(wd, filepath.Join(dir, "rel.db"))
		require.NoError(t, err)
		code, _, errOut = run(t, "clients", "create", "--database-url", "sqlite://"+rel, "--env", "production", "--name", "Loja")
		require.Equal(t, 0, code, errOut)
		require.Contains(t, lastLine(errOut), "created in environment production, database SQLite "+filepath.Join(dir, "rel.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		u, err := url.Parse(testkit.PostgresURL(t))
		require.NoError(t, err)
		// The test server trusts local connections, so the passwords are
		// only there to be kept out of the output.
		u.User = url.UserPassword(u.User.Username(), "userinfo-S3cret")
		q := u.Query()
		q.Set("password", "query-S3cret")
		q.Set("sslpassword", "ssl-S3cret")
		u.RawQuery = q.Encode()
		code, out, errOut := run(t, "clients", "create", "--database-url", u.String(), "--env", "production", "--name", "Loja")
		require.Equal(t, 0, code, errOut)
		var c testkit.Creds
		require.NoError(t, json.Unmarshal([]byte(out), &c), out)
		line := lastLine(errOut)
		require.Contains(t, line, "client "+c.ClientID+" created in environment production, database PostgreSQL postgres://"+u.User.Username()+"@"+u.Host+u.Path)
		require.NotContains(t, errOut, "S3cret")
		require.NotContains(t, out, "S3cret")
	})
}

// TestCommandHelpListsItsOwnFlags: psp-sim is its own program: its --help
// lists its flags (and pixgate's address, which its printed webhook URL
// points at), not every setting of serve; serve's and the client
// commands' --help still list the settings they read.
func TestCommandHelpListsItsOwnFlags(t *testing.T) {
	t.Parallel()
	code, out, errOut := run(t, "psp-sim", "--help")
	require.Equal(t, 0, code, errOut)
	for _, flag := range []string{"--api-addr", "--control-addr", "--dir", "--key", "--client-id", "--client-secret",
		"--settle-delay", "--latency", "--latency-jitter", "--rate-limit", "--addr", "--log-level", "PIXGATE_ADDR"} {
		require.Contains(t, out, flag)
	}
	// Its --rate-limit is the simulated PSP's own, not pixgate's.
	require.NotContains(t, out, "$PIXGATE_RATE_LIMIT")
	for _, flag := range []string{"--database-url", "--env", "--psp-api-url", "--psp-webhook-url", "--merchant-name",
		"--pix-key", "--tls-cert", "--redis-url"} {
		require.NotContains(t, out, flag+" ", "psp-sim does not read %s", flag)
		require.NotContains(t, out, flag+"=", "psp-sim does not read %s", flag)
	}
	for _, cmd := range [][]string{{"serve"}, {"migrate"}, {"clients", "create"}, {"users", "create"}, {"statement"}} {
		code, out, errOut := run(t, append(cmd, "--help")...)
		require.Equal(t, 0, code, errOut)
		for _, flag := range []string{"--database-url", "--env", "--psp-api-url"} {
			require.Contains(t, out, flag, strings.Join(cmd, " "))
		}
	}
	// Settings after the command are still read; a bad one is named.
	code, _, errOut = run(t, "psp-sim", "--log-level", "loud")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--log-level")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}
