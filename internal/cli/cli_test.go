package cli

import (
	"bytes"
	"context"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// run runs Main to completion and returns its exit code, stdout and stderr.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code = Main(ctx, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// listClients runs clients list and returns its entries by client id; the
// raw output is returned too, to look for secrets in it.
func listClients(t *testing.T, dbURL string) (map[string]testkit.ListedClient, string) {
	t.Helper()
	code, out, errOut := run(t, "clients", "list", "--database-url", dbURL)
	require.Equal(t, 0, code, "clients list: %s", errOut)
	return testkit.DecodeClientList(t, out), out
}

func TestClientsCreateBadFlags(t *testing.T) {
	t.Parallel()
	db := testkit.SQLiteURL(t)
	t.Run("cases", func(t *testing.T) { clientsCreateBadFlags(t, db) })
	clients, _ := listClients(t, db)
	require.Empty(t, clients, "a rejected create left a client")
}

func clientsCreateBadFlags(t *testing.T, db string) {
	for _, tc := range []struct {
		args  []string
		flags []string // each must be named on stderr
	}{
		{[]string{"--cashin-fee-percent", "100.01"}, []string{"--cashin-fee-percent"}},
		{[]string{"--cashin-fee-percent", "1.234"}, []string{"--cashin-fee-percent"}},
		{[]string{"--cashin-fee-percent=-1"}, []string{"--cashin-fee-percent"}},
		{[]string{"--cashin-fee-fixed=-0.10"}, []string{"--cashin-fee-fixed"}},
		{[]string{"--cashin-fee-fixed", "0,10"}, []string{"--cashin-fee-fixed"}},
		{[]string{"--payout-fee-percent", "abc"}, []string{"--payout-fee-percent"}},
		{[]string{"--payout-fee-fixed", "0.001"}, []string{"--payout-fee-fixed"}},
		{[]string{"--payout-fee-fixed", "1000000.01"}, []string{"--payout-fee-fixed"}},
		{[]string{"--cashin-fee-percent", "x", "--payout-fee-fixed", "1e3"}, []string{"--cashin-fee-percent", "--payout-fee-fixed"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			args := append([]string{"clients", "create", "--database-url", db, "--name", "N"}, tc.args...)
			code, out, errOut := run(t, args...)
			require.Equal(t, 1, code, "stderr: %s", errOut)
			require.Empty(t, out)
			lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
			require.Len(t, lines, len(tc.flags), "one line per bad flag: %q", errOut)
			for i, f := range tc.flags {
				// Only the first line carries "pixgate: " (Main prints the joined error once).
				require.Contains(t, lines[i], "invalid "+f+" ", "line %q should name %s", lines[i], f)
			}
		})
	}
	t.Run("missing name", func(t *testing.T) {
		t.Parallel()
		code, out, errOut := run(t, "clients", "create", "--database-url", db)
		require.Equal(t, 2, code)
		require.Empty(t, out)
		require.Contains(t, errOut, "--name")
	})
	t.Run("blank name", func(t *testing.T) {
		t.Parallel()
		code, out, errOut := run(t, "clients", "create", "--database-url", db, "--name", "  ")
		require.Equal(t, 1, code)
		require.Empty(t, out)
		require.Equal(t, "pixgate: invalid --name: 1 to 100 characters\n", errOut, "checked before the database is opened")
	})
}

func TestBadConfiguration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		args     []string
		settings []string // each named on its own line, with its flag
	}{
		{"env", []string{"--env", "staging"}, []string{"PIXGATE_ENV (--env)"}},
		{"charge ttl", []string{"--charge-ttl", "soon"}, []string{"PIXGATE_CHARGE_TTL (--charge-ttl)"}},
		{"charge ttl zero", []string{"--charge-ttl", "0s"}, []string{"PIXGATE_CHARGE_TTL (--charge-ttl)"}},
		{"rate limit", []string{"--rate-limit", "0"}, []string{"PIXGATE_RATE_LIMIT (--rate-limit)"}},
		{"rate limit text", []string{"--rate-limit", "many"}, []string{"PIXGATE_RATE_LIMIT (--rate-limit)"}},
		{"database url", []string{"--database-url", "mysql://x"}, []string{"PIXGATE_DATABASE_URL (--database-url)"}},
		{"addr", []string{"--addr", "localhost"}, []string{"PIXGATE_ADDR (--addr)"}},
		{"redis url", []string{"--redis-url", "http://localhost:6379"}, []string{"PIXGATE_REDIS_URL (--redis-url)"}},
		{"pix key", []string{"--pix-key", "not a key"}, []string{"PIXGATE_PIX_KEY (--pix-key)"}},
		{"payout delay", []string{"--sandbox-payout-delay=-1s"}, []string{"PIXGATE_SANDBOX_PAYOUT_DELAY (--sandbox-payout-delay)"}},
		{"retry schedule", []string{"--webhook-retry-schedule", "5s,,5m"}, []string{"PIXGATE_WEBHOOK_RETRY_SCHEDULE (--webhook-retry-schedule)"}},
		{"allow private", []string{"--webhook-allow-private", "maybe"}, []string{"PIXGATE_WEBHOOK_ALLOW_PRIVATE (--webhook-allow-private)"}},
		{"tls half", []string{"--tls-cert", "cert.pem"}, []string{"PIXGATE_TLS_CERT (--tls-cert)"}},
		{"log level", []string{"--log-level", "loud"}, []string{"PIXGATE_LOG_LEVEL (--log-level)"}},
		{"two at once", []string{"--env", "staging", "--rate-limit", "0"},
			[]string{"PIXGATE_ENV (--env)", "PIXGATE_RATE_LIMIT (--rate-limit)"}},
	} {
		for _, cmd := range [][]string{{"serve"}, {"migrate"}, {"clients", "list"}} {
			t.Run(tc.name+"/"+strings.Join(cmd, " "), func(t *testing.T) {
				t.Parallel()
				db := testkit.SQLiteURL(t)
				args := append(append([]string{}, cmd...), "--addr", "127.0.0.1:0", "--database-url", db)
				args = append(args, tc.args...) // the last value of a repeated flag wins
				// Should validation wrongly pass, serve would run until this
				// context ends; the failed exit-code check then reports it.
				ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
				defer cancel()
				var out, errOut bytes.Buffer
				code := Main(ctx, args, &out, &errOut)
				require.Equal(t, 2, code, "stderr: %s", errOut.String())
				require.Empty(t, out.String())
				lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
				require.Len(t, lines, len(tc.settings), "stderr: %q", errOut.String())
				sort.Strings(lines)
				for i, s := range tc.settings {
					require.True(t, strings.HasPrefix(lines[i], "pixgate: invalid "+s+": "), "line %q should name %s", lines[i], s)
				}
				_, err := os.Stat(db)
				require.ErrorIs(t, err, os.ErrNotExist, "bad configuration must not touch the database")
			})
		}
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"serve", "--no-such-flag"},
		{"clients", "rotate-secret"},
		{"clients", "disable", "a", "b"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			code, out, errOut := run(t, args...)
			require.Equal(t, 2, code, "stderr: %s", errOut)
			require.Empty(t, out)
			require.True(t, strings.HasPrefix(errOut, "pixgate: "), errOut)
		})
	}
	t.Run("help", func(t *testing.T) {
		t.Parallel()
		code, out, _ := run(t, "--help")
		require.Equal(t, 0, code)
		require.Contains(t, out, "clients")
	})
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, db string) {
		if !strings.Contains(db, "://") {
			db = "sqlite://" + db // the other spelling of a SQLite database
		}
		code, out, errOut := run(t, "migrate", "--database-url", db)
		require.Equal(t, 0, code, "stderr: %s", errOut)
		require.Empty(t, out)
		require.Contains(t, errOut, `"msg":"migrations applied"`)

		code, out, errOut = run(t, "migrate", "--database-url", db)
		require.Equal(t, 0, code, "stderr: %s", errOut)
		require.Empty(t, out)
		require.NotContains(t, errOut, "migrations applied", "second migrate applied something")

		clients, _ := listClients(t, db)
		require.Empty(t, clients, "migrate must not create clients")
	})
}
