package metrics

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPSPGauges: the PSP's gauges follow the callback at every scrape, the
// certificate's expiry in Unix seconds; without SetPSP they are absent.
func TestPSPGauges(t *testing.T) {
	t.Parallel()
	m := New()
	require.NotContains(t, scrape(t, m), "pixgate_psp_", "no PSP, no series")

	var up, ours atomic.Bool
	notAfter := time.Date(2031, 5, 17, 12, 0, 0, 0, time.UTC)
	require.NoError(t, m.SetPSP(func() PSPState {
		return PSPState{Up: up.Load(), WebhookRegistered: ours.Load(), CertNotAfter: notAfter}
	}))
	body := scrape(t, m)
	requireSeries(t, body, "pixgate_psp_up", "0")
	requireSeries(t, body, "pixgate_psp_webhook_registered", "0")
	requireSeries(t, body, "pixgate_psp_certificate_expiry_timestamp_seconds", "1.9367856e+09")
	require.Contains(t, body, "# TYPE pixgate_psp_up gauge")

	up.Store(true)
	ours.Store(true)
	body = scrape(t, m)
	requireSeries(t, body, "pixgate_psp_up", "1")
	requireSeries(t, body, "pixgate_psp_webhook_registered", "1")
	up.Store(false)
	requireSeries(t, scrape(t, m), "pixgate_psp_up", "0")

	require.Error(t, m.SetPSP(func() PSPState { return PSPState{} }), "installed once")
	var none *Metrics
	require.NoError(t, none.SetPSP(func() PSPState { return PSPState{} }))
}
