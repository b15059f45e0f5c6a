package apipix

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/pspsim"
)

// TestRateLimitedBySimulator: against the PSP simulator's rate limit (real
// mutual TLS), a 429 to a devolução's PUT, a GET or a cob's PUT is a
// *provider.RateLimitedError with the simulator's Retry-After, never
// ErrRejected, sent once (not retried), and nothing was done: the
// devolução does not exist until it is sent again after the wait.
func TestRateLimitedBySimulator(t *testing.T) {
	ctx := context.Background()
	// The simulator's clock moves only when told, so that its bucket
	// refills exactly when the test says.
	var ns atomic.Int64
	ns.Store(time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, ns.Load()) }
	sim := pspsim.New(pspsim.Options{Now: now, SettleDelay: -1, PixKey: testPixKey, RateLimit: 2})
	require.NoError(t, sim.Start(ctx))
	t.Cleanup(sim.Close)
	o := sim.Options()
	c, err := New(Config{APIURL: sim.URL(), ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		CertPEM: o.PKI.ClientCertPEM, KeyPEM: o.PKI.ClientKeyPEM, CAPEM: o.PKI.CAPEM, PixKey: o.PixKey,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)

	_, err = c.CreateCharge(ctx, provider.Charge{TxID: txid, Amount: 1000, TTL: time.Hour})
	require.NoError(t, err)
	e2e, err := sim.Pay(ctx, txid)
	require.NoError(t, err)
	_, err = c.ConfirmPayment(ctx, e2e)
	require.NoError(t, err, "two requests a second pass")

	refund := provider.Transfer{ID: refundID, Amount: 400, Description: "devolução", Refund: true, PaymentE2E: e2e}
	_, err = c.Send(ctx, refund)
	require.ErrorIs(t, err, provider.ErrRateLimited)
	require.NotErrorIs(t, err, provider.ErrRejected, "a rate limit never fails a transfer")
	rl, ok := errors.AsType[*provider.RateLimitedError](err)
	require.True(t, ok, "%v", err)
	require.Equal(t, time.Second, rl.RetryAfter)
	wait, ok := provider.RetryAfter(err)
	require.True(t, ok)
	require.Equal(t, time.Second, wait)
	assert.Contains(t, err.Error(), "429")
	require.Equal(t, pspsim.Count{}, sim.RefundCount(refundHex), "the refused PUT did nothing")

	_, err = c.Status(ctx, refund)
	require.ErrorIs(t, err, provider.ErrRateLimited, "a GET too")
	require.NotErrorIs(t, err, provider.ErrNotFound)
	_, err = c.CreateCharge(ctx, provider.Charge{TxID: txid + "2", Amount: 1000, TTL: time.Hour})
	require.ErrorIs(t, err, provider.ErrRateLimited, "a cob's PUT too")
	require.True(t, c.Health().Up, "a PSP that answers 429 is up")
	limited := 0
	for _, r := range sim.Requests() {
		if r.Status == http.StatusTooManyRequests {
			limited++
		}
	}
	require.Equal(t, 3, limited, "each call tried once: a 429 is not retried within a call")

	ns.Add(int64(time.Second))
	st, err := c.Send(ctx, refund)
	require.NoError(t, err, "sent after the wait")
	require.Equal(t, provider.Processing, st.Status)
	require.Equal(t, pspsim.Count{Puts: 1, Accepted: 1}, sim.RefundCount(refundHex))
}

// TestTokenEndpointRateLimited: a 429 from the token endpoint is a rate
// limit too (with its Retry-After, an HTTP-date here), not a refused
// authentication, and the PSP counts as up.
func TestTokenEndpointRateLimited(t *testing.T) {
	e := newEnv(t)
	at := time.Now().Add(90 * time.Second).UTC().Truncate(time.Second)
	e.psp.mu.Lock()
	e.psp.tokenStatus, e.psp.tokenBody = http.StatusTooManyRequests, `{"error":"slow_down"}`
	e.psp.tokenHeader = http.Header{"Retry-After": {at.Format(http.TimeFormat)}}
	e.psp.mu.Unlock()
	_, err := e.c.ConfirmPayment(context.Background(), e2eid)
	require.ErrorIs(t, err, provider.ErrRateLimited)
	require.NotErrorIs(t, err, provider.ErrRejected)
	wait, ok := provider.RetryAfter(err)
	require.True(t, ok)
	require.InDelta(t, 90, wait.Seconds(), 30, "the HTTP-date, from the client's clock")
	require.Empty(t, e.psp.apiCalls())
	h := e.c.Health()
	require.True(t, h.Up)
	require.Empty(t, h.LastFailClass)
}

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		" 1 ":                           time.Second,
		"-5":                            0,
		"99999999999999999":             time.Hour,
		"soon":                          0,
		"Mon, 02 Mar 2026 12:00:30 GMT": 30 * time.Second,
		"Mon, 02 Mar 2026 11:00:00 GMT": 0,
	} {
		assert.Equal(t, want, retryAfter(v, now), "%q", v)
	}
}
