package efi_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/provider/apipix"
	"github.com/pixgate/pixgate/internal/provider/efi"
	"github.com/pixgate/pixgate/internal/pspsim"
)

// TestPayoutRateLimited: a payout's PUT beyond the simulator's rate is a
// rate limit with its Retry-After, not a refusal, and sends nothing; sent
// again after the wait, it is accepted once.
func TestPayoutRateLimited(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var ns atomic.Int64
	ns.Store(time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC).UnixNano())
	sim := pspsim.New(pspsim.Options{Now: func() time.Time { return time.Unix(0, ns.Load()) }, SettleDelay: -1,
		PixKey: "loja@example.com", RateLimit: 1})
	require.NoError(t, sim.Start(ctx))
	t.Cleanup(sim.Close)
	o := sim.Options()
	p, err := efi.New(apipix.Config{APIURL: sim.URL(), ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		CertPEM: o.PKI.ClientCertPEM, KeyPEM: o.PKI.ClientKeyPEM, CAPEM: o.PKI.CAPEM, PixKey: o.PixKey,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	require.NoError(t, err)
	payout := provider.Transfer{ID: "1c8d4b63-3333-4333-8333-333333333333", Amount: 250, KeyType: pix.KeyEmail,
		Key: "fornecedor@example.com", Description: "NF 42"}

	_, err = p.Status(ctx, payout)
	require.ErrorIs(t, err, provider.ErrNotFound, "the one request of this second")
	_, err = p.Send(ctx, payout)
	require.ErrorIs(t, err, provider.ErrRateLimited)
	require.NotErrorIs(t, err, provider.ErrRejected)
	wait, ok := provider.RetryAfter(err)
	require.True(t, ok)
	require.Equal(t, time.Second, wait)
	require.Equal(t, pspsim.Count{}, sim.SendCount(provider.HexID(payout.ID)), "nothing was sent")

	ns.Add(int64(wait))
	st, err := p.Send(ctx, payout)
	require.NoError(t, err)
	require.Equal(t, provider.Processing, st.Status)
	require.Equal(t, pspsim.Count{Puts: 1, Accepted: 1}, sim.SendCount(provider.HexID(payout.ID)))
}
