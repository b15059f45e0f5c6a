package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// exerciseSettlement runs the behaviours of due work: charges to expire,
// payouts and refunds to settle, and settlement steps written for a batch or
// guarded by the rows as read.
func exerciseSettlement(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Settlement steps and their events are written for a whole batch at once", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		var ps []store.Transaction
		for i := range 4 {
			p := newPayout(c, fmt.Sprint("settle-", i), t0.Add(time.Second))
			if i == 3 {
				p.ConfirmedAt = t0 // confirmed earlier: a zero Confirmed keeps it
			}
			ps = append(ps, p)
		}
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for _, p := range ps {
				if err := tx.CreateTransaction(ctx, p); err != nil {
					return err
				}
			}
			return nil
		}))
		at := t0.Add(time.Minute)
		steps := []store.Settled{
			{ID: ps[0].ID, Status: "PAID", Confirmed: at},
			{ID: ps[1].ID, Status: "CANCELLED"},
			{ID: ps[2].ID, Status: "PAID", Confirmed: at, Next: at.Add(2 * time.Second)},
			{ID: ps[3].ID, Status: "REVERSED"},
		}
		var events []store.Event
		for i, p := range ps {
			events = append(events, store.Event{ID: fmt.Sprint("evt_settle", i), ClientID: c.ID, TransactionID: p.ID, Type: "x",
				URL: "u", Payload: fmt.Sprint(`{"n":`, i, `}`), CreatedAt: at})
		}
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			if _, err := tx.ClaimSettlements(ctx, []string{ps[0].ID, ps[1].ID, ps[2].ID, ps[3].ID}, at); err != nil {
				return err
			}
			if err := tx.SetSettledAll(ctx, steps); err != nil {
				return err
			}
			return tx.InsertEvents(ctx, events)
		}))
		for i, p := range ps {
			got, err := db.Transaction(ctx, c.ID, p.ID)
			require.NoError(t, err)
			require.Equal(t, steps[i].Status, got.Status, "payout %d", i)
			want := steps[i].Confirmed
			if i == 3 {
				want = t0
			}
			require.Equal(t, want, got.ConfirmedAt.UTC(), "payout %d", i)
			require.Equal(t, steps[i].Next, got.SettleAt.UTC(), "payout %d", i)
			evs, err := db.Events(ctx, p.ID)
			require.NoError(t, err)
			require.Len(t, evs, 1, "payout %d", i)
			require.Equal(t, events[i].Payload, evs[0].Payload)
			require.Equal(t, "pending", evs[0].Status)
		}
		due, err := db.DueSettlements(ctx, at.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Equal(t, []string{ps[2].ID}, ids(due), "only the payout to be returned is scheduled again")
	})

	t.Run("Settlement steps guarded by the row as read", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		var ps []store.Transaction
		for i := range 3 {
			p := newPayout(c, fmt.Sprint("guard-", i), t0.Add(time.Duration(i+1)*time.Second))
			ps = append(ps, p)
			_, err := db.InsertTransaction(ctx, p)
			require.NoError(t, err)
		}
		at := t0.Add(time.Minute)
		due, err := db.DueSettlements(ctx, at, 10)
		require.NoError(t, err)
		require.Equal(t, []string{ps[0].ID, ps[1].ID, ps[2].ID}, ids(due), "earliest first, whole rows")
		require.Equal(t, ps[1].Details, due[1].Details)
		require.Equal(t, ps[1].SettleAt, due[1].SettleAt.UTC())
		step := func(t store.Transaction, status pix.TxStatus, next time.Time) store.Settled {
			return store.Settled{ID: t.ID, Status: status, Confirmed: at, Next: next, WasStatus: t.Status, WasSettleAt: t.SettleAt}
		}
		// Another node settles the second payout (PAID, returned later)
		// after the rows were read.
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			return tx.SetSettledIfUnchanged(ctx, []store.Settled{step(due[1], "PAID", at.Add(time.Hour))})
		}))
		// A batch decided from the stale rows changes nothing, not even the
		// rows that were still as read.
		stale := []store.Settled{step(due[0], "PAID", time.Time{}), step(due[1], "PAID", time.Time{}), step(due[2], "CANCELLED", time.Time{})}
		err = db.Write(ctx, func(tx *store.Tx) error {
			if err := tx.SetSettledIfUnchanged(ctx, stale); err != nil {
				return err
			}
			return tx.InsertEvents(ctx, []store.Event{{ID: "evt_guard", ClientID: c.ID, TransactionID: ps[0].ID, Type: "x", URL: "u", Payload: "{}", CreatedAt: at}})
		})
		require.ErrorIs(t, err, store.ErrChanged)
		for i, want := range []struct {
			status pix.TxStatus
			settle time.Time
		}{{"PENDING", ps[0].SettleAt}, {"PAID", at.Add(time.Hour)}, {"PENDING", ps[2].SettleAt}} {
			got, err := db.Transaction(ctx, c.ID, ps[i].ID)
			require.NoError(t, err)
			require.Equal(t, want.status, got.Status, "payout %d", i)
			require.Equal(t, want.settle, got.SettleAt.UTC(), "payout %d", i)
		}
		evs, err := db.Events(ctx, ps[0].ID)
		require.NoError(t, err)
		require.Empty(t, evs, "nothing of the abandoned batch committed")

		// Read again, the same batch applies: the returned payout's next
		// step is decided from its new status and settle_at.
		due, err = db.DueSettlements(ctx, at.Add(2*time.Hour), 10)
		require.NoError(t, err)
		require.Equal(t, []string{ps[0].ID, ps[2].ID, ps[1].ID}, ids(due))
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			return tx.SetSettledIfUnchanged(ctx, []store.Settled{step(due[0], "PAID", time.Time{}), step(due[1], "CANCELLED", time.Time{}), step(due[2], "REVERSED", time.Time{})})
		}))
		for i, want := range []pix.TxStatus{"PAID", "REVERSED", "CANCELLED"} {
			got, err := db.Transaction(ctx, c.ID, ps[i].ID)
			require.NoError(t, err)
			require.Equal(t, want, got.Status, "payout %d", i)
			require.True(t, got.SettleAt.IsZero(), "payout %d: nothing left to settle", i)
		}
		due, err = db.DueSettlements(ctx, at.Add(3*time.Hour), 10)
		require.NoError(t, err)
		require.Empty(t, due)
	})

	t.Run("Due charges and settlements", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		due := newTx(c, pix.TypeCashin, "", 100, t0)
		notDue := newTx(c, pix.TypeCashin, "", 100, t0.Add(2*time.Hour))
		payout := newPayout(c, "", t0.Add(time.Second))
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for _, tr := range []store.Transaction{due, notDue, payout} {
				if _, err := tx.InsertTransaction(ctx, tr); err != nil {
					return err
				}
			}
			return nil
		}))
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			rows, err := tx.DueCharges(ctx, t0.Add(time.Hour), 10)
			require.NoError(t, err)
			require.Len(t, rows, 1)
			require.Equal(t, due.ID, rows[0].ID)
			return nil
		}))
		dueSettle, err := db.DueSettlements(ctx, t0.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Equal(t, []string{payout.ID}, ids(dueSettle))
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			got, err := tx.ClaimSettlements(ctx, []string{payout.ID, due.ID, "missing"}, t0.Add(time.Hour))
			require.NoError(t, err)
			require.Len(t, got, 1, "only the scheduled payout is due")
			require.Equal(t, payout.ID, got[0].ID)
			got, err = tx.ClaimSettlements(ctx, []string{payout.ID}, t0) // not due yet at t0
			require.NoError(t, err)
			require.Empty(t, got)
			return tx.SetSettleAt(ctx, payout.ID, time.Time{})
		}))
		dueSettle, err = db.DueSettlements(ctx, t0.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Empty(t, dueSettle, "unscheduled")

		// Refunds are due, claimed and finished the same way, once.
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			_, err := tx.InsertRefund(ctx, store.Refund{ID: "rf-1", ClientID: c.ID, TransactionID: due.ID, RequestHash: "h",
				Status: pix.RefundPending, Amount: 10, CreatedAt: t0, SettleAt: t0.Add(time.Second)})
			return err
		}))
		dueRefunds, err := db.DueRefunds(ctx, t0.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Equal(t, []store.DueRefund{{ID: "rf-1", ChargeID: due.ID}}, dueRefunds)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			r, ok, err := tx.ClaimRefund(ctx, "rf-1", t0.Add(time.Hour))
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, pix.Amount(10), r.Amount)
			done, err := tx.FinishRefundSend(ctx, "rf-1", pix.RefundCompleted, t0.Add(time.Hour), "")
			require.True(t, done)
			return err
		}))
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			done, err := tx.FinishRefundSend(ctx, "rf-1", pix.RefundFailed, t0.Add(time.Hour), "")
			require.False(t, done, "finished once")
			return err
		}))
		dueRefunds, err = db.DueRefunds(ctx, t0.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Empty(t, dueRefunds)
	})
}
