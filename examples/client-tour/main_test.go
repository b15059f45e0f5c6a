package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// TestTour runs the tour against a real pixgate serve (sandbox, SQLite), so
// the example keeps working as the API and the client change.
func TestTour(t *testing.T) {
	t.Parallel()
	cfg := startServe(t)
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), cfg, &out), "output:\n%s", out.String())
	t.Log("\n" + out.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		"webhooks: listening on 127.0.0.1:",
		"balance: available R$ 0.00, pending R$ 0.00",
		"charge: ",
		"sandbox: charge ",
		"webhook: pix.cashin.paid for ",
		"payout: ",
		"webhook: pix.cashout.paid for ",
		"refund: ",
		"webhook: pix.refund.completed for ",
		// 20.00 − 0.10 cash-in fee − 5.00 − 0.50 payout fee − 3.50 refunded
		"balance: available R$ 10.90, pending R$ 0.00",
		"done",
	}
	require.Len(t, lines, len(want), "output:\n%s", out.String())
	for i, w := range want {
		require.True(t, strings.HasPrefix(lines[i], w), "line %d: %q, want prefix %q", i, lines[i], w)
	}
	require.Contains(t, lines[2], "R$ 20.00 created (PENDING)")
	require.Contains(t, lines[3], "paid (PAID)")
	require.Contains(t, lines[4], "R$ 20.00 (fee R$ 0.10)")
	require.Contains(t, lines[5], "R$ 5.00 + fee R$ 0.50 (PENDING)")
	require.Contains(t, lines[7], "R$ 3.50 of ")
}

// TestTourFails: with a wrong webhook secret no webhook is accepted, and the
// tour fails with the step it waited for.
func TestTourFails(t *testing.T) {
	t.Parallel()
	cfg := startServe(t)
	cfg.WebhookSecret = "whsec_" + strings.Repeat("A", 44)
	cfg.Wait = time.Second
	var out bytes.Buffer
	err := run(t.Context(), cfg, &out)
	require.ErrorContains(t, err, "no pix.cashin.paid webhook within 1s")
	require.Contains(t, out.String(), "sandbox: charge ")
}

func TestParseFlags(t *testing.T) {
	for _, k := range []string{"PIXGATE_URL", "PIXGATE_CLIENT_ID", "PIXGATE_CLIENT_SECRET", "PIXGATE_WEBHOOK_SECRET",
		"PIXGATE_TOUR_LISTEN", "PIXGATE_TOUR_PUBLIC_URL"} {
		t.Setenv(k, "")
	}
	_, err := parseFlags(nil)
	require.ErrorContains(t, err, "required")
	t.Setenv("PIXGATE_CLIENT_ID", "id")
	t.Setenv("PIXGATE_CLIENT_SECRET", "secret")
	cfg, err := parseFlags([]string{"-webhook-secret", "whsec_x", "-url", "http://h:1"})
	require.NoError(t, err)
	require.Equal(t, config{BaseURL: "http://h:1", ClientID: "id", ClientSecret: "secret", WebhookSecret: "whsec_x",
		Listen: "127.0.0.1:0", Wait: 30 * time.Second}, cfg)
}

var pixgate testkit.Binary

func TestMain(m *testing.M) {
	code := m.Run()
	pixgate.Remove()
	os.Exit(code)
}

// startServe builds pixgate (once), runs pixgate serve (sandbox, SQLite, payouts
// settled after 200 ms) on a free port, creates a client (cash-in fee
// R$ 0.10, payout fee R$ 0.50) and returns the tour's config for it.
// It skips the test under -short, which runs no processes.
func startServe(t *testing.T) config {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a pixgate process")
	}
	bin := pixgate.Path(t)
	db := testkit.SQLiteURL(t)
	url, _ := testkit.ServeProcess(t, bin, "--database-url", db, "--sandbox-payout-delay", "200ms")

	out, err := testkit.Command(bin, "clients", "create", "--database-url", db, "--name", "Tour",
		"--cashin-fee-fixed", "0.10", "--payout-fee-fixed", "0.50").Output()
	require.NoError(t, err, "clients create: %s", out)
	var creds struct {
		ClientID      string `json:"client_id"`
		ClientSecret  string `json:"client_secret"`
		WebhookSecret string `json:"webhook_secret"`
	}
	require.NoError(t, json.Unmarshal(out, &creds), "%s", out)
	return config{BaseURL: url, ClientID: creds.ClientID, ClientSecret: creds.ClientSecret,
		WebhookSecret: creds.WebhookSecret, Listen: "127.0.0.1:0", Wait: 15 * time.Second}
}
