package testkit

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// SQLiteURL returns the path of a fresh SQLite database file in the test's
// temp dir, as --database-url takes it; the file does not exist yet.
func SQLiteURL(t testing.TB) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "pixgate.db")
}

// ForEachDatabaseURL runs f as parallel subtests "sqlite" and "postgres",
// on a fresh SQLite file and on a fresh PostgreSQL database (skipped, or
// failed under CI=true, without a server): what --database-url takes.
func ForEachDatabaseURL(t *testing.T, f func(t *testing.T, dbURL string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		f(t, SQLiteURL(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		f(t, PostgresURL(t))
	})
}

// Creds are the credentials printed by `pixgate clients create`,
// `clients rotate-secret` and the sandbox bootstrap of serve.
type Creds struct {
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	WebhookSecret string `json:"webhook_secret"`
	Name          string `json:"name"`
	Environment   string `json:"environment"`
}

// CredKeys are the keys `pixgate clients create` prints.
var CredKeys = []string{"client_id", "client_secret", "webhook_secret", "name", "environment"}

// ServeKeys are the keys of what the first sandbox serve prints: the
// sandbox client's credentials and the sandbox operator's.
var ServeKeys = append(CredKeys[:len(CredKeys):len(CredKeys)], "admin_email", "admin_password")

// DecodeOne requires out to hold exactly one JSON object, whose keys are
// exactly keys, all strings, followed by one newline, and decodes it.
func DecodeOne(t testing.TB, out string, keys ...string) Creds {
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
	var c Creds
	require.NoError(t, json.Unmarshal([]byte(out), &c))
	return c
}

// RequireNewClient checks the credentials of a newly created client of
// environment env: the prefixes of its id and secret, and its webhook
// secret's form.
func RequireNewClient(t testing.TB, c Creds, name, env string) {
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
	RequireWebhookSecret(t, c.WebhookSecret)
}

// RequireWebhookSecret checks that s is whsec_ and 32 bytes in standard
// base64.
func RequireWebhookSecret(t testing.TB, s string) {
	t.Helper()
	b64, ok := strings.CutPrefix(s, "whsec_")
	require.True(t, ok, "webhook_secret %q lacks whsec_", s)
	raw, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(t, err, "webhook_secret %q is not whsec_ + standard base64", s)
	require.Len(t, raw, 32)
}

// ListedClient is one entry of `pixgate clients list`.
type ListedClient struct {
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

// DecodeClientList decodes the output of `pixgate clients list` strictly
// and returns its entries by client id; it fails the test if a key names a
// secret or a hash, an id repeats or a creation time is not RFC 3339.
func DecodeClientList(t testing.TB, out string) map[string]ListedClient {
	t.Helper()
	var raw []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &raw), "clients list stdout: %q", out)
	for _, m := range raw {
		for k := range m {
			require.NotContains(t, strings.ToLower(k), "secret", "clients list shows %q", k)
			require.NotContains(t, strings.ToLower(k), "hash", "clients list shows %q", k)
		}
	}
	var entries []ListedClient
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&entries))
	byID := make(map[string]ListedClient, len(entries))
	for _, e := range entries {
		byID[e.ClientID] = e
		_, err := time.Parse(time.RFC3339Nano, e.CreatedAt)
		require.NoError(t, err, "created_at %q", e.CreatedAt)
	}
	require.Len(t, byID, len(entries), "duplicate client ids: %s", out)
	return byID
}

// ProductionSandboxFlags are what serve needs in production with the
// sandbox provider: the provider named explicitly and the BR Code's
// receiving side.
var ProductionSandboxFlags = []string{"--env", "production", "--provider", "sandbox",
	"--pix-key", "12345678000195", "--merchant-name", "Loja Real Ltda", "--merchant-city", "Recife"}
