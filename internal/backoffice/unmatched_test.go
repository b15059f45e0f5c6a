package backoffice_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
)

// The operators' views of money that matched no charge: the receipts, by
// status, one receipt, and the suspense balance they hold.
func TestUnmatchedViews(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		ctx := context.Background()
		bo, db := newBackoffice(t, open, pix.EnvProduction)
		bal, err := bo.SuspenseBalance(ctx)
		require.NoError(t, err)
		require.Zero(t, bal)
		_, err = bo.UnmatchedReceipt(ctx, "missing")
		require.Equal(t, pix.ENotFound, pix.ErrorCode(err), "%v", err)

		now := at.Truncate(time.Millisecond)
		u := pix.UnmatchedReceipt{ID: "u1", PaymentEndToEndID: "E1", TxID: "t1", Amount: 777, ReceivedAt: now,
			RecordedAt: now, Reason: pix.UnmatchedNoCharge, Status: pix.UnmatchedHeld}
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			if _, err := tx.InsertUnmatched(ctx, u); err != nil {
				return err
			}
			return tx.Post(ctx, "p1", store.HouseID, u.ID, ledger.UnmatchedReceived(u.Amount), now)
		}))

		bal, err = bo.SuspenseBalance(ctx)
		require.NoError(t, err)
		require.Equal(t, pix.Amount(777), bal)
		held, err := bo.UnmatchedReceipts(ctx, pix.UnmatchedHeld, 10)
		require.NoError(t, err)
		require.Len(t, held, 1)
		require.Equal(t, u.ID, held[0].ID)
		returned, err := bo.UnmatchedReceipts(ctx, pix.UnmatchedReturned, 10)
		require.NoError(t, err)
		require.Empty(t, returned)
		got, err := bo.UnmatchedReceipt(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, pix.Amount(777), got.Amount)
		require.Equal(t, pix.UnmatchedHeld, got.Status)
	})
}

// healthy is a provider that calls a PSP: it reports what it has seen.
type healthy struct {
	provider.None
	h provider.Health
}

func (p healthy) Health() provider.Health { return p.h }

// PSPHealth reports the provider's health when it calls a PSP, and
// nothing without a provider or with one that calls none.
func TestPSPHealth(t *testing.T) {
	t.Parallel()
	db := testkit.OpenSQLite(t)
	for name, c := range map[string]struct {
		p  provider.Provider
		ok bool
	}{
		"none":      {nil, false},
		"no PSP":    {provider.None{}, false},
		"PSP calls": {healthy{h: provider.Health{Up: true, WebhookHost: "pixgate.example"}}, true},
	} {
		bo, err := backoffice.New(backoffice.Config{DB: db, Env: pix.EnvProduction, Provider: c.p})
		require.NoError(t, err)
		h, ok := bo.PSPHealth()
		require.Equal(t, c.ok, ok, name)
		if ok {
			require.Equal(t, provider.Health{Up: true, WebhookHost: "pixgate.example"}, h, name)
		}
	}
}
