package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// exerciseRefunds runs the storage behaviours of refund reads.
func exerciseRefunds(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Refunds are read by id and by idempotency key, only by their own client", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c, other := NewClient(t, db), NewClient(t, db)
		charge := newTx(c, pix.TypeCashin, "rf-charge", 1000, t0)
		withReason := pix.Refund{ID: uuid.NewString(), ClientID: c.ID, TransactionID: charge.ID, IdempotencyKey: "k-1",
			RequestHash: "h1", Status: pix.RefundPending, Amount: 250, Reason: "produto devolvido",
			CreatedAt: t0.Add(time.Second), SettleAt: t0.Add(3 * time.Second)}
		noReason := pix.Refund{ID: uuid.NewString(), ClientID: c.ID, TransactionID: charge.ID, RequestHash: "h2",
			Status: pix.RefundPending, Amount: 100, CreatedAt: t0.Add(2 * time.Second), SettleAt: t0.Add(4 * time.Second)}
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			if _, err := tx.InsertTransaction(ctx, charge); err != nil {
				return err
			}
			for _, r := range []pix.Refund{withReason, noReason} {
				inserted, err := tx.InsertRefund(ctx, r)
				require.True(t, inserted)
				if err != nil {
					return err
				}
			}
			return nil
		}))

		got, err := db.Refund(ctx, c.ID, withReason.ID)
		require.NoError(t, err)
		require.Equal(t, withReason, got, "every field round-trips; settled_at stays zero while pending")
		got, err = db.Refund(ctx, c.ID, noReason.ID)
		require.NoError(t, err)
		require.Equal(t, noReason, got)
		got, err = db.RefundByIdempotencyKey(ctx, c.ID, "k-1")
		require.NoError(t, err)
		require.Equal(t, withReason.ID, got.ID)

		_, err = db.Refund(ctx, other.ID, withReason.ID)
		require.ErrorIs(t, err, store.ErrNotFound, "another client's refund is not found")
		_, err = db.RefundByIdempotencyKey(ctx, other.ID, "k-1")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = db.Refund(ctx, c.ID, uuid.NewString())
		require.ErrorIs(t, err, store.ErrNotFound)

		// Finishing shows its status and time, and unschedules it.
		settled := t0.Add(5 * time.Second)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			_, err := tx.FinishRefundSend(ctx, withReason.ID, pix.RefundCompleted, settled, "")
			return err
		}))
		got, err = db.Refund(ctx, c.ID, withReason.ID)
		require.NoError(t, err)
		require.Equal(t, pix.RefundCompleted, got.Status)
		require.Equal(t, settled, got.SettledAt)
		require.True(t, got.SettleAt.IsZero())
		require.Equal(t, pix.Amount(250), got.Amount)
		require.Equal(t, "produto devolvido", got.Reason)
	})
}
