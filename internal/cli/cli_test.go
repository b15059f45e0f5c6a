package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// These tests run the real program through Main, configured by flags only:
// they run in parallel, so none of them may touch the process environment.

type syncBuffer = testkit.Buffer

// run runs Main to completion and returns its exit code, stdout and stderr.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code = Main(ctx, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// forEachDB runs f as parallel subtests on a fresh SQLite file and on a fresh
// PostgreSQL database (skipped, or failed under CI=true, without a server).
func forEachDB(t *testing.T, f func(t *testing.T, dbURL string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		f(t, sqliteURL(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		f(t, testkit.PostgresURL(t))
	})
}

func sqliteURL(t *testing.T) string {
	return filepath.Join(t.TempDir(), "pixgate.db")
}

// creds are the credentials printed by clients create, rotate-secret and the
// sandbox bootstrap of serve.
type creds struct {
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	WebhookSecret string `json:"webhook_secret"`
	Name          string `json:"name"`
	Environment   string `json:"environment"`
}

// decodeOne requires out to hold exactly one JSON object, whose keys are
// exactly keys, followed by one newline, and decodes it.
func decodeOne(t *testing.T, out string, keys ...string) creds {
	t.Helper()
	require.True(t, strings.HasSuffix(out, "}\n"), "stdout must be one JSON object and a newline: %q", out)
	dec := json.NewDecoder(strings.NewReader(out))
	var m map[string]any
	require.NoError(t, dec.Decode(&m), "stdout: %q", out)
	_, err := dec.Token()
	require.ErrorIs(t, err, io.EOF, "stdout holds more than one JSON value: %q", out)
	got := make([]string, 0, len(m))
	for k, v := range m {
		got = append(got, k)
		require.IsType(t, "", v, "%s", k)
	}
	require.ElementsMatch(t, keys, got, "keys of %s", out)
	var c creds
	require.NoError(t, json.Unmarshal([]byte(out), &c))
	return c
}

var credKeys = []string{"client_id", "client_secret", "webhook_secret", "name", "environment"}

// requireNewClient checks the credentials of a newly created client.
func requireNewClient(t *testing.T, c creds, name, env string) {
	t.Helper()
	require.Equal(t, name, c.Name)
	require.Equal(t, env, c.Environment)
	idPrefix, secretPrefix := "cli_test_", "sk_test_"
	if env == "production" {
		idPrefix, secretPrefix = "cli_live_", "sk_live_"
	}
	require.True(t, strings.HasPrefix(c.ClientID, idPrefix), "client_id %q", c.ClientID)
	require.True(t, strings.HasPrefix(c.ClientSecret, secretPrefix), "client_secret %q", c.ClientSecret)
	require.Greater(t, len(c.ClientSecret), len(secretPrefix)+40, "client_secret too short")
	requireWebhookSecret(t, c.WebhookSecret)
}

func requireWebhookSecret(t *testing.T, s string) {
	t.Helper()
	b64, ok := strings.CutPrefix(s, "whsec_")
	require.True(t, ok, "webhook_secret %q lacks whsec_", s)
	raw, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(t, err, "webhook_secret %q is not whsec_ + standard base64", s)
	require.Len(t, raw, 32)
}

// listed is one entry of clients list.
type listed struct {
	ClientID         string `json:"client_id"`
	Name             string `json:"name"`
	Environment      string `json:"environment"`
	Status           string `json:"status"`
	CashinFeePercent string `json:"cashin_fee_percent"`
	CashinFeeFixed   string `json:"cashin_fee_fixed"`
	PayoutFeePercent string `json:"payout_fee_percent"`
	PayoutFeeFixed   string `json:"payout_fee_fixed"`
	CreatedAt        string `json:"created_at"`
}

// listClients runs clients list and returns its entries by client id; the
// raw output is returned too, to look for secrets in it.
func listClients(t *testing.T, dbURL string) (map[string]listed, string) {
	t.Helper()
	code, out, errOut := run(t, "clients", "list", "--database-url", dbURL)
	require.Equal(t, 0, code, "clients list: %s", errOut)
	var raw []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &raw), "clients list stdout: %q", out)
	for _, m := range raw {
		for k := range m {
			require.NotContains(t, strings.ToLower(k), "secret", "clients list shows %q", k)
			require.NotContains(t, strings.ToLower(k), "hash", "clients list shows %q", k)
		}
	}
	var entries []listed
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&entries))
	byID := make(map[string]listed, len(entries))
	for _, e := range entries {
		byID[e.ClientID] = e
		_, err := time.Parse(time.RFC3339Nano, e.CreatedAt)
		require.NoError(t, err, "created_at %q", e.CreatedAt)
	}
	require.Len(t, byID, len(entries), "duplicate client ids: %s", out)
	return byID, out
}

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
	forEachDB(t, func(t *testing.T, db string) {
		code, out, errOut := run(t, "clients", "create", "--database-url", db, "--name", "Loja A",
			"--cashin-fee-percent", "1.5", "--cashin-fee-fixed", "0.10",
			"--payout-fee-percent", "0.99", "--payout-fee-fixed", "2")
		require.Equal(t, 0, code, "stderr: %s", errOut)
		a := decodeOne(t, out, credKeys...)
		requireNewClient(t, a, "Loja A", "sandbox")
		require.NotContains(t, errOut, a.ClientSecret, "secret logged")
		require.NotContains(t, errOut, a.WebhookSecret, "webhook secret logged")

		code, out, errOut = run(t, "clients", "create", "--database-url", db, "--name", "Loja Prod", "--env", "production")
		require.Equal(t, 0, code, "stderr: %s", errOut)
		p := decodeOne(t, out, credKeys...)
		requireNewClient(t, p, "Loja Prod", "production")
		require.NotEqual(t, a.ClientID, p.ClientID)
		require.NotEqual(t, a.WebhookSecret, p.WebhookSecret)

		clients, raw := listClients(t, db)
		require.Len(t, clients, 2)
		for _, s := range []string{a.ClientSecret, a.WebhookSecret, p.ClientSecret, p.WebhookSecret} {
			require.NotContains(t, raw, s, "clients list shows a secret")
		}
		require.Equal(t, listed{ClientID: a.ClientID, Name: "Loja A", Environment: "sandbox", Status: "active",
			CashinFeePercent: "1.5", CashinFeeFixed: "0.10", PayoutFeePercent: "0.99", PayoutFeeFixed: "2.00",
			CreatedAt: clients[a.ClientID].CreatedAt}, clients[a.ClientID])
		require.Equal(t, listed{ClientID: p.ClientID, Name: "Loja Prod", Environment: "production", Status: "active",
			CashinFeePercent: "0", CashinFeeFixed: "0.00", PayoutFeePercent: "0", PayoutFeeFixed: "0.00",
			CreatedAt: clients[p.ClientID].CreatedAt}, clients[p.ClientID])

		// A sandbox and a production server on the same database: each
		// accepts only its own environment's credentials.
		sandbox := startServe(t, db)
		production := startServe(t, db, productionFlags...)
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
		rotated := decodeOne(t, out, "client_id", "client_secret")
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

func TestClientsCreateBadFlags(t *testing.T) {
	t.Parallel()
	db := sqliteURL(t)
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
				db := sqliteURL(t)
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
	forEachDB(t, func(t *testing.T, db string) {
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
