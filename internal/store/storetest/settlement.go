package storetest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// exerciseSettlement runs the behaviours of due work: charges to expire,
// and payouts and refunds stepped through the send state machine, each
// step guarded by the state and due time it was read with.
func exerciseSettlement(t *testing.T, open Opener) {
	exerciseDueWork(t, open)
	exerciseSendSteps(t, open)
	exerciseSendClaims(t, open)
	exerciseGroupedSteps(t, open)
	exercisePayoutSteps(t, open)
	exerciseDueRefunds(t, open)
}

// exerciseDueWork checks that expired charges and due transfers are found.
func exerciseDueWork(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Expired charges and due transfers", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		expired := newTx(c, pix.TypeCashin, "", 100, t0)
		notExpired := newTx(c, pix.TypeCashin, "", 100, t0.Add(2*time.Hour))
		payout := newPayout(c, "", t0.Add(time.Second))
		payout.SendState = pix.SendToSend
		later := newPayout(c, "", t0.Add(2*time.Hour))
		later.SendState = pix.SendToSend
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for _, tr := range []pix.Transaction{expired, notExpired, payout, later} {
				if _, err := tx.InsertTransaction(ctx, tr); err != nil {
					return err
				}
			}
			return nil
		}))
		rows, err := db.ExpiredCharges(ctx, t0.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Equal(t, []string{expired.ID}, ids(rows))
		due, err := db.DueSettlements(ctx, t0.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Equal(t, []string{payout.ID}, ids(due))
		require.Equal(t, pix.SendToSend, due[0].SendState)
	})
}

// exerciseSendSteps checks that a send step applies only to the row as it
// was read.
func exerciseSendSteps(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Send steps apply only to the row as read", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		payout := newPayout(c, "", t0)
		payout.SendState = pix.SendToSend
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			_, err := tx.InsertTransaction(ctx, payout)
			return err
		}))
		step := func(st store.SendStep) bool {
			t.Helper()
			ok := false
			require.NoError(t, db.WriteGrouped(ctx, func(tx *store.Tx) error {
				var err error
				ok, err = tx.StepSend(ctx, st)
				return err
			}))
			return ok
		}
		lease := t0.Add(30 * time.Second)
		claim := store.SendStep{ID: payout.ID, WasState: pix.SendToSend, WasSettleAt: t0, State: pix.SendUnknown, Next: lease}
		require.True(t, step(claim), "claimed")
		require.False(t, step(claim), "claimed once: the row is no longer as read")
		due, err := db.DueSettlements(ctx, t0.Add(time.Second), 10)
		require.NoError(t, err)
		require.Empty(t, due, "a claimed transfer is not due while its node holds it")

		sent := store.SendStep{ID: payout.ID, WasState: pix.SendUnknown, WasSettleAt: lease, State: pix.SendSent,
			Next: t0.Add(time.Minute), EndToEndID: "E00000000202603011200aBcDeFgHiJk", Attempt: true}
		require.True(t, step(sent))
		got, err := db.TransactionByID(ctx, payout.ID)
		require.NoError(t, err)
		require.Equal(t, pix.SendSent, got.SendState)
		require.Equal(t, 1, got.SendAttempts)
		require.Equal(t, "E00000000202603011200aBcDeFgHiJk", got.EndToEndID)
		require.Equal(t, t0.Add(time.Minute), got.SettleAt)

		pending, err := db.PendingPayouts(ctx, []string{payout.ID, "00000000-0000-4000-8000-000000000000"})
		require.NoError(t, err)
		require.Equal(t, []string{payout.ID}, ids(pending), "a sent payout waits on the PSP's word")

		done := store.SendStep{ID: payout.ID, WasState: pix.SendSent, WasSettleAt: t0.Add(time.Minute), State: pix.SendDone}
		require.True(t, step(done))
		due, err = db.DueSettlements(ctx, t0.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Empty(t, due, "done: never due again")
		pending, err = db.PendingPayouts(ctx, []string{payout.ID})
		require.NoError(t, err)
		require.Empty(t, pending, "done: no longer pending at the PSP")
		got, err = db.TransactionByID(ctx, payout.ID)
		require.NoError(t, err)
		require.Equal(t, "E00000000202603011200aBcDeFgHiJk", got.EndToEndID, "an empty end-to-end id keeps the known one")
	})
}

// exerciseSendClaims checks that a claim holds the row without moving its
// settle_at, and only the holder steps it.
func exerciseSendClaims(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("A claim holds the row without moving its settle_at; only the holder steps it", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		payout := newPayout(c, "", t0)
		payout.SendState = pix.SendToSend
		other := newPayout(c, "", t0)
		other.SendState = pix.SendToSend
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			if _, err := tx.InsertTransaction(ctx, payout); err != nil {
				return err
			}
			_, err := tx.InsertTransaction(ctx, other)
			return err
		}))
		single := func(st store.SendStep) bool {
			t.Helper()
			ok := false
			require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
				var err error
				ok, err = tx.StepSend(ctx, st)
				return err
			}))
			return ok
		}
		grouped := func(st store.SendStep) bool {
			t.Helper()
			ok, err := db.StepSendGrouped(ctx, st)
			require.NoError(t, err)
			return ok
		}
		dueIDs := func(at time.Time) []string {
			t.Helper()
			due, err := db.DueSettlements(ctx, at, 10)
			require.NoError(t, err)
			return ids(due)
		}
		hold1, hold2 := t0.Add(30*time.Second), t0.Add(60*time.Second)
		require.True(t, single(store.SendStep{ID: payout.ID, WasState: pix.SendToSend, WasSettleAt: t0, State: pix.SendUnknown,
			Hold: hold1, Now: t0.Add(time.Second)}), "claimed")
		got, err := db.TransactionByID(ctx, payout.ID)
		require.NoError(t, err)
		require.Equal(t, pix.SendUnknown, got.SendState)
		require.Equal(t, t0, got.SettleAt, "the claim leaves settle_at as it was")
		require.Equal(t, []string{other.ID}, dueIDs(t0.Add(10*time.Second)), "held: not due for anyone")
		require.ElementsMatch(t, []string{payout.ID, other.ID}, dueIDs(hold1), "due again once the hold ends")
		except, err := db.DueSettlementsExcept(ctx, hold1, 10, []string{payout.ID, "00000000-0000-4000-8000-000000000000"})
		require.NoError(t, err)
		require.Equal(t, []string{other.ID}, ids(except), "a row being read is left out")

		// Another node's claim while the hold lives fails, by either path.
		reclaim := store.SendStep{ID: payout.ID, WasState: pix.SendUnknown, WasSettleAt: t0, State: pix.SendUnknown,
			Hold: hold2, Now: t0.Add(10 * time.Second)}
		require.False(t, single(reclaim))
		require.False(t, grouped(reclaim))
		// Once it has ended, the claim is taken over...
		reclaim.Now = hold1
		require.True(t, grouped(reclaim))
		// ...and the first holder's late step changes nothing.
		late := store.SendStep{ID: payout.ID, WasState: pix.SendUnknown, WasSettleAt: t0, Held: hold1, State: pix.SendSent,
			Next: t0.Add(45 * time.Second), Attempt: true}
		require.False(t, grouped(late))
		require.False(t, single(late))
		mine := late
		mine.Held = hold2
		require.True(t, grouped(mine))
		got, err = db.TransactionByID(ctx, payout.ID)
		require.NoError(t, err)
		require.Equal(t, pix.SendSent, got.SendState)
		require.Equal(t, t0.Add(45*time.Second), got.SettleAt)
		require.Equal(t, 1, got.SendAttempts)
		require.ElementsMatch(t, []string{payout.ID, other.ID}, dueIDs(t0.Add(50*time.Second)),
			"a step drops the hold: due at its settle_at, before the hold would have ended")

		// A payout's finish is guarded by the hold too.
		require.True(t, grouped(store.SendStep{ID: other.ID, WasState: pix.SendToSend, WasSettleAt: t0, State: pix.SendUnknown,
			Hold: hold1, Now: t0}))
		finish := func(held time.Time) bool {
			t.Helper()
			var oks []bool
			require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
				var err error
				oks, err = tx.StepPayouts(ctx, []store.PayoutStep{{Step: store.SendStep{ID: other.ID, WasState: pix.SendUnknown,
					WasSettleAt: t0, Held: held, State: pix.SendDone}, From: pix.StatusPending, To: pix.StatusPaid, Confirmed: t0}})
				return err
			}))
			return oks[0]
		}
		require.False(t, finish(hold2), "not the row's hold")
		require.True(t, finish(hold1))
		require.Equal(t, []string{payout.ID}, dueIDs(t0.Add(time.Hour)))
	})
}

// exerciseGroupedSteps checks that concurrent grouped steps claim each row
// once and each get their own answer.
func exerciseGroupedSteps(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Concurrent grouped steps: each row claimed once, each step its own answer", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		var payouts []pix.Transaction
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for range 20 {
				p := newPayout(c, "", t0)
				p.SendState = pix.SendToSend
				if _, err := tx.InsertTransaction(ctx, p); err != nil {
					return err
				}
				payouts = append(payouts, p)
			}
			return nil
		}))
		// Three claims of every payout at once, from "three nodes": one wins.
		var wg sync.WaitGroup
		wins := make([]atomic.Int32, len(payouts))
		errs := make(chan error, 3*len(payouts))
		for node := range 3 {
			for i, p := range payouts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ok, err := db.StepSendGrouped(ctx, store.SendStep{ID: p.ID, WasState: pix.SendToSend, WasSettleAt: t0,
						State: pix.SendUnknown, Next: t0.Add(time.Duration(node+1) * time.Second)})
					if err != nil {
						errs <- err
					}
					if ok {
						wins[i].Add(1)
					}
				}()
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		for i, p := range payouts {
			require.Equal(t, int32(1), wins[i].Load(), "payout %d claimed once", i)
			got, err := db.TransactionByID(ctx, p.ID)
			require.NoError(t, err)
			require.Equal(t, pix.SendUnknown, got.SendState)
		}
		// A row named twice in one transaction: the second step sees the first's work.
		var oks []bool
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			got, err := db.TransactionByID(ctx, payouts[0].ID)
			if err != nil {
				return err
			}
			first := store.SendStep{ID: got.ID, WasState: pix.SendUnknown, WasSettleAt: got.SettleAt, State: pix.SendSent, Next: t0.Add(time.Minute)}
			second := store.SendStep{ID: got.ID, WasState: pix.SendSent, WasSettleAt: t0.Add(time.Minute), State: pix.SendDone}
			stale := first
			oks, err = tx.StepSends(ctx, []store.SendStep{first, second, stale})
			return err
		}))
		require.Equal(t, []bool{true, true, false}, oks)
	})
}

// exercisePayoutSteps checks that a payout's step with its status change
// applies only to the row as it was read.
func exercisePayoutSteps(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Payout steps with their status change apply only to the row as read", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		var ps []pix.Transaction
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for range 3 {
				p := newPayout(c, "", t0)
				p.SendState = pix.SendSent
				if _, err := tx.InsertTransaction(ctx, p); err != nil {
					return err
				}
				ps = append(ps, p)
			}
			return nil
		}))
		done := func(p pix.Transaction, wasAt time.Time) store.SendStep {
			return store.SendStep{ID: p.ID, WasState: pix.SendSent, WasSettleAt: wasAt, State: pix.SendDone, EndToEndID: "E00000000202603011200aBcDeFgHiJk"}
		}
		var oks []bool
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			var err error
			oks, err = tx.StepPayouts(ctx, []store.PayoutStep{
				{Step: done(ps[0], t0), From: pix.StatusPending, To: pix.StatusPaid, Confirmed: t0.Add(time.Second)},
				{Step: done(ps[1], t0.Add(time.Second)), From: pix.StatusPending, To: pix.StatusPaid}, // stale settle_at
				{Step: done(ps[2], t0), From: pix.StatusPaid, To: pix.StatusReversed},                 // stale status
			})
			return err
		}))
		require.Equal(t, []bool{true, false, false}, oks)
		got, err := db.TransactionByID(ctx, ps[0].ID)
		require.NoError(t, err)
		require.Equal(t, pix.StatusPaid, got.Status)
		require.Equal(t, pix.SendDone, got.SendState)
		require.Equal(t, t0.Add(time.Second), got.ConfirmedAt)
		require.Equal(t, "E00000000202603011200aBcDeFgHiJk", got.EndToEndID)
		for _, p := range ps[1:] {
			got, err := db.TransactionByID(ctx, p.ID)
			require.NoError(t, err)
			require.Equal(t, pix.StatusPending, got.Status, "unchanged")
			require.Equal(t, pix.SendSent, got.SendState, "unchanged")
		}
	})
}

// exerciseDueRefunds checks that refunds are due in order and finished once.
func exerciseDueRefunds(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Refunds are due in order and finished once", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		charge := newTx(c, pix.TypeCashin, "", 100, t0)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			if _, err := tx.InsertTransaction(ctx, charge); err != nil {
				return err
			}
			for i, id := range []string{"rf-2", "rf-1"} {
				if _, err := tx.InsertRefund(ctx, pix.Refund{ID: id, ClientID: c.ID, TransactionID: charge.ID, RequestHash: "h",
					Status: pix.RefundPending, Amount: 10, CreatedAt: t0, SettleAt: t0.Add(time.Duration(2-i) * time.Second),
					SendState: pix.SendToSend}); err != nil {
					return err
				}
			}
			return nil
		}))
		due, err := db.DueRefundRows(ctx, t0.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Len(t, due, 2)
		require.Equal(t, []string{"rf-1", "rf-2"}, []string{due[0].ID, due[1].ID}, "earliest due first")
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			done, err := tx.FinishRefundSend(ctx, "rf-1", pix.RefundCompleted, t0.Add(time.Hour), "D00000000202603011200aBcDeFgHiJk")
			require.True(t, done)
			return err
		}))
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			done, err := tx.FinishRefundSend(ctx, "rf-1", pix.RefundFailed, t0.Add(time.Hour), "")
			require.False(t, done, "finished once")
			return err
		}))
		due, err = db.DueRefundRows(ctx, t0.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Len(t, due, 1)
		require.Equal(t, "rf-2", due[0].ID)
		r, err := db.RefundByID(ctx, "rf-1")
		require.NoError(t, err)
		require.Equal(t, pix.RefundCompleted, r.Status)
		require.Equal(t, pix.SendDone, r.SendState)
		require.Equal(t, "D00000000202603011200aBcDeFgHiJk", r.EndToEndID)
	})
}
