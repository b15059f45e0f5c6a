package cli

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

func TestRotateWebhookSecret(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, db string) {
		code, out, errOut := run(t, "clients", "create", "--database-url", db, "--name", "loja")
		require.Equal(t, 0, code, errOut)
		c := testkit.DecodeOne(t, out, testkit.CredKeys...)
		code, out, errOut = run(t, "clients", "rotate-webhook-secret", c.ClientID, "--database-url", db)
		require.Equal(t, 0, code, errOut)
		var got map[string]string
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		require.Equal(t, c.ClientID, got["client_id"])
		require.NotEqual(t, c.WebhookSecret, got["webhook_secret"])
		testkit.RequireWebhookSecret(t, got["webhook_secret"])
		code, out, errOut = run(t, "clients", "rotate-webhook-secret", "cli_test_nope", "--database-url", db)
		require.Equal(t, 1, code)
		require.Empty(t, out)
		require.Contains(t, errOut, "not found")
	})
}
