package cli

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/config"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/provider/apipix"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestCheckCertificate: no line while the certificate has more than 30
// days left, a warning within them (at start and at every daily check),
// an error once it has expired.
func TestCheckCertificate(t *testing.T) {
	t.Parallel()
	var logs testkit.Buffer
	notAfter := time.Date(2031, 1, 31, 12, 0, 0, 0, time.UTC)
	a := &app{log: newLogger(&logs, "info"), settings: config.Settings{Config: config.Config{PSPCertFile: "/etc/pixgate/psp.pem"}, CertNotAfter: notAfter}}
	a.checkCertificate(notAfter.Add(-31 * 24 * time.Hour))
	require.Empty(t, logs.String())
	a.checkCertificate(notAfter.Add(-29 * 24 * time.Hour))
	require.Contains(t, logs.String(), `"level":"WARN","msg":"the PSP client certificate expires soon: renew it with the PSP before then","file":"/etc/pixgate/psp.pem","not_after":"2031-01-31T12:00:00Z","days_left":29`)
	a.checkCertificate(notAfter.Add(time.Second))
	require.Contains(t, logs.String(), `"level":"ERROR","msg":"the PSP client certificate has expired`)

	// watchCertificate checks at start and at every tick (daily in serve).
	var watched testkit.Buffer
	soon := time.Now().Add(24 * time.Hour)
	w := &app{log: newLogger(&watched, "info"), settings: config.Settings{CertNotAfter: soon}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); w.watchCertificate(ctx, time.Millisecond) }()
	waitUntil(t, func() bool { return strings.Count(watched.String(), "expires soon") >= 3 })
	cancel()
	<-done
	require.Equal(t, 24*time.Hour, certCheckEvery, "daily in serve")
}

// TestCheckWebhookAlerts: two deployments on one PSP account; when the
// second registers its URL, the first one's reading logs an error (with
// the other host, never a secret), its metric drops to 0, and it does not
// register again.
func TestCheckWebhookAlerts(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	sim := pspsim.New(pspsim.Options{})
	require.NoError(t, sim.Start(ctx))
	t.Cleanup(sim.Close)
	o := sim.Options()
	client := func(hookURL string) *apipix.Client {
		c, err := apipix.New(apipix.Config{APIURL: sim.URL(), ClientID: o.ClientID, ClientSecret: o.ClientSecret,
			CertPEM: o.PKI.ClientCertPEM, KeyPEM: o.PKI.ClientKeyPEM, CAPEM: o.PKI.CAPEM, PixKey: o.PixKey,
			WebhookURL: hookURL, Log: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		return c
	}
	const firstSecret, secondSecret = "first-deployment-secret-0123456789", "second-deployment-secret-012345678"
	first := client("https://first.example/psp/webhook/" + firstSecret)
	second := client("https://second.example:8443/psp/webhook/" + secondSecret)
	var logs testkit.Buffer
	a := &app{log: newLogger(&logs, "info")}
	state, ok := a.pspState(first)
	require.True(t, ok)

	require.NoError(t, first.Start(ctx))
	require.Equal(t, provider.WebhookOurs, a.checkWebhook(ctx, first, provider.WebhookUnknown))
	require.True(t, state().WebhookRegistered)
	require.Contains(t, logs.String(), `"level":"INFO","msg":"the PSP's webhook registration is this deployment's"`)
	require.Equal(t, provider.WebhookOurs, a.checkWebhook(ctx, first, provider.WebhookOurs))
	require.Equal(t, 1, strings.Count(logs.String(), "registration is this deployment's"), "said once, not every 5 minutes")

	require.NoError(t, second.Start(ctx))
	puts := len(sim.Requests())
	require.Equal(t, provider.WebhookOther, a.checkWebhook(ctx, first, provider.WebhookOurs))
	require.False(t, state().WebhookRegistered)
	require.Contains(t, logs.String(), `"level":"ERROR","msg":"the PSP holds another webhook URL for PIXGATE_PSP_PIX_KEY: another deployment on the same PSP account took it over`)
	require.Contains(t, logs.String(), `"registered_host":"second.example:8443"`)
	require.Equal(t, provider.WebhookOther, a.checkWebhook(ctx, first, provider.WebhookOther))
	for _, r := range sim.Requests()[puts:] {
		require.Equal(t, http.MethodGet, r.Method, "the first deployment only reads: %s %s", r.Method, r.Path)
	}
	require.Equal(t, "https://second.example:8443/psp/webhook/"+secondSecret, sim.State().Webhook, "the second one keeps it")

	// A reading that fails keeps the last state and logs a warning.
	sim.SetDown(true)
	require.Equal(t, provider.WebhookOther, a.checkWebhook(ctx, first, provider.WebhookOther))
	require.Contains(t, logs.String(), `"level":"WARN","msg":"could not read the PSP's webhook registration; trying again later"`)
	sim.SetDown(false)

	// Removed at the PSP: none.
	require.NoError(t, second.Do(ctx, apipix.Request{Method: http.MethodDelete, URL: sim.URL() + "/webhook/" + url.PathEscape(o.PixKey)}, nil))
	require.Equal(t, provider.WebhookNone, a.checkWebhook(ctx, first, provider.WebhookOther))
	require.Contains(t, logs.String(), `"level":"ERROR","msg":"the PSP holds no webhook URL for PIXGATE_PSP_PIX_KEY`)

	for _, s := range []string{firstSecret, secondSecret} {
		require.NotContains(t, logs.String(), s)
	}
}
