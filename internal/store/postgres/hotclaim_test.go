package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/store/storetest"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestClaimIsHOT: a payout's claim before its send changes no indexed
// column (it holds the row by send_lease and leaves settle_at), so with
// the room migration 19 leaves on each page PostgreSQL updates it in
// place (HOT) and adds no index entry.
func TestClaimIsHOT(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testkit.PostgresURL(t)
	db := migrated(t, url)
	raw := rawDB(t, url)
	c := storetest.NewClient(t, db)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const n = 10
	var payouts []pix.Transaction
	require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
		for range n {
			p := pix.Transaction{ID: uuid.NewString(), ClientID: c.ID, Type: pix.TypeCashout, Status: pix.StatusPending,
				RequestHash: "h", Amount: 1000, CreatedAt: t0, SettleAt: t0, SendState: pix.SendToSend}
			if _, err := tx.InsertTransaction(ctx, p); err != nil {
				return err
			}
			payouts = append(payouts, p)
		}
		return nil
	}))
	for _, p := range payouts {
		ok, err := db.StepSendGrouped(ctx, store.SendStep{ID: p.ID, WasState: pix.SendToSend, WasSettleAt: t0,
			State: pix.SendUnknown, Hold: t0.Add(time.Minute), Now: t0})
		require.NoError(t, err)
		require.True(t, ok)
	}
	// A backend reports its counts when idle, within seconds.
	var upd, hot int
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		_, err := raw.ExecContext(ctx, `SELECT pg_stat_clear_snapshot()`)
		require.NoError(t, err)
		require.NoError(t, raw.QueryRowContext(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
			WHERE relname = 'transactions'`).Scan(&upd, &hot))
		if upd >= n || time.Now().After(deadline) {
			break
		}
	}
	require.Equal(t, n, upd)
	require.Equal(t, upd, hot, "every claim is a HOT update")
}
