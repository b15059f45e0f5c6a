package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// exerciseClock runs the behaviours of sandbox clients' clocks: the
// offset on the client row, bounded and announced, and the due-work reads
// scoped to one client at that client's time.
func exerciseClock(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("A client's clock advances within its bound and is read with the client", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		a, b := NewClient(t, db), NewClient(t, db)
		clocks, err := db.ClientClocks(ctx)
		require.NoError(t, err)
		require.Empty(t, clocks, "no client starts ahead")

		advance := func(id string, by time.Duration) (time.Duration, bool) {
			var off time.Duration
			var ok bool
			require.NoError(t, db.Write(ctx, func(tx *store.Tx) (err error) {
				off, ok, err = tx.AdvanceClock(ctx, id, by, 48*time.Hour)
				return err
			}))
			return off, ok
		}
		off, ok := advance(a.ID, 36*time.Hour)
		require.True(t, ok)
		require.Equal(t, 36*time.Hour, off)
		off, ok = advance(a.ID, 12*time.Hour+time.Millisecond)
		require.False(t, ok, "past the bound")
		require.Zero(t, off)
		off, ok = advance(a.ID, 12*time.Hour)
		require.True(t, ok, "up to the bound")
		require.Equal(t, 48*time.Hour, off)
		err = db.Write(ctx, func(tx *store.Tx) error {
			_, _, err := tx.AdvanceClock(ctx, "nope", time.Hour, 48*time.Hour)
			return err
		})
		require.ErrorIs(t, err, store.ErrNotFound)

		got, err := db.Client(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, 48*time.Hour, got.ClockOffset)
		got, err = db.Client(ctx, b.ID)
		require.NoError(t, err)
		require.Zero(t, got.ClockOffset, "another client's clock is its own")
		clocks, err = db.ClientClocks(ctx)
		require.NoError(t, err)
		require.Equal(t, []store.ClientClock{{ClientID: a.ID, Offset: 48 * time.Hour}}, clocks)
	})

	t.Run("Due work read for one client is that client's, due on its clock", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		a, b := NewClient(t, db), NewClient(t, db)
		ca, cb := newTx(a, pix.TypeCashin, "", 100, t0), newTx(b, pix.TypeCashin, "", 100, t0)
		pa, pb := newPayout(a, "pa", t0.Add(time.Hour)), newPayout(b, "pb", t0.Add(time.Hour))
		pa.SendState, pb.SendState = pix.SendSent, pix.SendSent
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for _, tr := range []pix.Transaction{ca, cb, pa, pb} {
				if _, err := tx.InsertTransaction(ctx, tr); err != nil {
					return err
				}
			}
			for _, r := range []pix.Refund{
				{ID: "rf-a", ClientID: a.ID, TransactionID: ca.ID, RequestHash: "h", Status: pix.RefundPending, Amount: 10,
					CreatedAt: t0, SettleAt: t0.Add(time.Hour), SendState: pix.SendToSend},
				{ID: "rf-b", ClientID: b.ID, TransactionID: cb.ID, RequestHash: "h", Status: pix.RefundPending, Amount: 10,
					CreatedAt: t0, SettleAt: t0.Add(time.Hour), SendState: pix.SendToSend},
			} {
				if _, err := tx.InsertRefund(ctx, r); err != nil {
					return err
				}
			}
			return nil
		}))
		early, late := t0.Add(time.Minute), t0.Add(2*time.Hour)

		charges, err := db.ClientExpiredCharges(ctx, a.ID, early, 10)
		require.NoError(t, err)
		require.Empty(t, charges, "not expired yet on that clock")
		charges, err = db.ClientExpiredCharges(ctx, a.ID, late, 10)
		require.NoError(t, err)
		require.Equal(t, []string{ca.ID}, ids(charges), "only that client's")

		payouts, err := db.ClientDueSettlements(ctx, a.ID, early, early, 10)
		require.NoError(t, err)
		require.Empty(t, payouts)
		payouts, err = db.ClientDueSettlements(ctx, a.ID, late, early, 10)
		require.NoError(t, err)
		require.Equal(t, []string{pa.ID}, ids(payouts))

		refunds, err := db.ClientDueRefundRows(ctx, a.ID, early, early, 10)
		require.NoError(t, err)
		require.Empty(t, refunds)
		refunds, err = db.ClientDueRefundRows(ctx, a.ID, late, early, 10)
		require.NoError(t, err)
		require.Len(t, refunds, 1)
		require.Equal(t, "rf-a", refunds[0].ID)

		// A node's hold is on the real clock: it keeps the payout from
		// being due however far the client's clock runs.
		hold := early.Add(time.Minute)
		ok, err := db.StepSendGrouped(ctx, store.SendStep{ID: pa.ID, WasState: pix.SendSent, WasSettleAt: pa.SettleAt,
			State: pix.SendSent, Hold: hold, Now: early})
		require.NoError(t, err)
		require.True(t, ok)
		payouts, err = db.ClientDueSettlements(ctx, a.ID, late, early, 10)
		require.NoError(t, err)
		require.Empty(t, payouts, "held")
		payouts, err = db.ClientDueSettlements(ctx, a.ID, late, hold, 10)
		require.NoError(t, err)
		require.Equal(t, []string{pa.ID}, ids(payouts), "the hold ended")
	})
}
