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

	t.Run("A client's refunds are listed newest first, filtered and paged by key", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c, other := NewClient(t, db), NewClient(t, db)
		a := newTx(c, pix.TypeCashin, "rl-a", 1000, t0)
		b := newTx(c, pix.TypeCashin, "rl-b", 1000, t0)
		o := newTx(other, pix.TypeCashin, "rl-o", 1000, t0)
		var mine []pix.Refund // oldest first
		refund := func(cl pix.Client, charge pix.Transaction, status pix.RefundStatus, at time.Duration) pix.Refund {
			return pix.Refund{ID: uuid.NewString(), ClientID: cl.ID, TransactionID: charge.ID, RequestHash: "h",
				Status: status, Amount: 10, CreatedAt: t0.Add(at)}
		}
		// Two refunds share a millisecond: the id orders them.
		mine = append(mine, refund(c, a, pix.RefundPending, time.Second), refund(c, b, pix.RefundFailed, 2*time.Second),
			refund(c, a, pix.RefundCompleted, 3*time.Second), refund(c, a, pix.RefundPending, 3*time.Second))
		if mine[2].ID > mine[3].ID {
			mine[2], mine[3] = mine[3], mine[2]
		}
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for _, ch := range []pix.Transaction{a, b, o} {
				if _, err := tx.InsertTransaction(ctx, ch); err != nil {
					return err
				}
			}
			for _, r := range append(mine, refund(other, o, pix.RefundPending, 4*time.Second)) {
				if _, err := tx.InsertRefund(ctx, r); err != nil {
					return err
				}
			}
			return nil
		}))
		ids := func(rs []pix.Refund) []string {
			out := []string{}
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return out
		}
		rows, next, err := db.RefundHistory(ctx, store.RefundFilter{ClientID: c.ID, Limit: 10})
		require.NoError(t, err)
		require.Empty(t, next)
		require.Equal(t, []string{mine[3].ID, mine[2].ID, mine[1].ID, mine[0].ID}, ids(rows), "newest first, never another client's")
		require.Equal(t, mine[3], rows[0], "every field round-trips")

		rows, next, err = db.RefundHistory(ctx, store.RefundFilter{ClientID: c.ID, Limit: 3})
		require.NoError(t, err)
		require.Len(t, rows, 3)
		require.NotEmpty(t, next)
		rows, last, err := db.RefundHistory(ctx, store.RefundFilter{ClientID: c.ID, Limit: 3, Cursor: next})
		require.NoError(t, err)
		require.Empty(t, last)
		require.Equal(t, []string{mine[0].ID}, ids(rows))

		rows, _, err = db.RefundHistory(ctx, store.RefundFilter{ClientID: c.ID, PaymentID: a.ID, Status: pix.RefundPending, Limit: 10})
		require.NoError(t, err)
		var want []string
		for i := len(mine) - 1; i >= 0; i-- {
			if mine[i].TransactionID == a.ID && mine[i].Status == pix.RefundPending {
				want = append(want, mine[i].ID)
			}
		}
		require.Len(t, want, 2)
		require.Equal(t, want, ids(rows))
		rows, _, err = db.RefundHistory(ctx, store.RefundFilter{ClientID: c.ID, PaymentID: o.ID, Limit: 10})
		require.NoError(t, err)
		require.Empty(t, rows, "another client's charge lists nothing")
		_, _, err = db.RefundHistory(ctx, store.RefundFilter{ClientID: c.ID, Limit: 10, Cursor: "not a cursor"})
		require.ErrorIs(t, err, store.ErrBadCursor)
	})

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
