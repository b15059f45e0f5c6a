package transfer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
)

// finishSend records the final state st of a transfer held by this node
// (held) in one transaction, by the finisher of its kind: the step, the
// status, the posting and the event; it returns 1 if it moved the
// transfer's status. If the hold was lost, nothing is written. A payout
// the PSP reports completed but due to change (st.ReadAt: it will be
// returned) is PAID and stays sent, to be read again then.
func (e *Engine) finishSend(ctx context.Context, it item, held store.SendStep, st provider.TransferState) (int, error) {
	step := held
	step.State, step.Next, step.EndToEndID = pix.SendDone, time.Time{}, st.EndToEndID
	if it.kind == pix.TransferPayout && st.Status == provider.Completed && !st.ReadAt.IsZero() {
		step.State, step.Next = pix.SendSent, e.nextRead(ctx, st, pollMax)
	}
	if !pix.SendStepAllowed(step.WasState, step.State) {
		return 0, fmt.Errorf("finish %s %s: %q → %q is not a step a transfer may take", it.kind, it.id, step.WasState, step.State)
	}
	return e.kinds[it.kind].finish(ctx, it, step, st)
}

// finishPayout writes a payout's finish, batched with the others of the
// same moment (finishPayouts).
func (e *Engine) finishPayout(ctx context.Context, it item, step store.SendStep, st provider.TransferState) (int, error) {
	t := it.payout
	if t.ID == "" {
		var err error
		if t, err = e.db.TransactionByID(ctx, it.id); err != nil {
			return 0, fmt.Errorf("finish %s: %w", it.id, err)
		}
	}
	ok, err := e.payoutFinishes.Do(ctx, payoutFinish{t: t, step: step, st: st})
	if err != nil || !ok {
		return 0, err // not applied: another node or step finished it
	}
	return 1, nil
}

// finishGrouped writes the finish fn of a refund or a return with its step,
// in a transaction shared with the others of the same moment.
func (e *Engine) finishGrouped(ctx context.Context, it item, step store.SendStep,
	fn func(tx *store.Tx, o *outbox.Events, now time.Time) error) (int, error) {
	now := e.clocks.At(ctx)
	err := e.w.WriteGrouped(ctx, func(tx *store.Tx, o *outbox.Events) error {
		ok, err := tx.StepSend(ctx, step)
		if err != nil || !ok {
			return errors.Join(err, ErrChanged)
		}
		return fn(tx, o, now)
	})
	if errors.Is(err, ErrChanged) {
		return 0, nil // another node or the PSP's webhook finished it
	}
	if err != nil {
		return 0, fmt.Errorf("finish %s: %w", it.id, err)
	}
	return 1, nil
}

// finishRefundStep is the finisher of a refund's step.
func (e *Engine) finishRefundStep(ctx context.Context, it item, step store.SendStep, st provider.TransferState) (int, error) {
	return e.finishGrouped(ctx, it, step, func(tx *store.Tx, o *outbox.Events, now time.Time) error {
		r, err := tx.RefundForUpdate(ctx, it.id)
		if err != nil {
			return err
		}
		charge, err := tx.TransactionForUpdate(ctx, r.ClientID, r.TransactionID)
		if err != nil {
			return err
		}
		return e.FinishRefund(ctx, tx, o, r, charge, st, now)
	})
}

// finishReturnStep is the finisher of the step of an unmatched receipt's
// return.
func (e *Engine) finishReturnStep(ctx context.Context, it item, step store.SendStep, st provider.TransferState) (int, error) {
	return e.finishGrouped(ctx, it, step, func(tx *store.Tx, _ *outbox.Events, now time.Time) error {
		return e.FinishReturn(ctx, tx, it.id, st, now)
	})
}

// FinishRefund applies the final state st of refund r of charge (locked by
// tx): completed (the charge's refunded_amount grows, REFUNDED once whole,
// pix.refund.completed) or failed (funds back, pix.refund.failed). It
// returns ErrChanged if r was finished meanwhile. The PSP's report of a
// charge's devoluções finishes refunds with it too.
func (e *Engine) FinishRefund(ctx context.Context, tx *store.Tx, o *outbox.Events, r pix.Refund, charge pix.Transaction,
	st provider.TransferState, now time.Time) error {
	status, event := pix.RefundCompleted, pix.EventRefundCompleted
	posting := ledger.RefundCompleted
	settled := r.Amount
	if st.Status == provider.Failed {
		status, event, posting, settled = pix.RefundFailed, pix.EventRefundFailed, ledger.RefundFailed, 0
	}
	ok, err := tx.FinishRefundSend(ctx, r.ID, status, now, st.EndToEndID)
	if err != nil || !ok {
		return errors.Join(err, ErrChanged)
	}
	if err := tx.AddRefundPending(ctx, charge.ID, -r.Amount, settled); err != nil {
		return err
	}
	// A refund of a split charge held each receiver's share in its own
	// pending (docs/marketplace.md): each share leaves, or returns, there.
	shares, err := tx.RefundShares(ctx, r.ID)
	if err != nil {
		return err
	}
	own := r.Amount
	ps := make([]store.PostingWrite, 0, 1+len(shares))
	for _, sh := range shares {
		own -= sh.Amount
		ps = append(ps, store.PostingWrite{ID: e.w.OrderedID(), ClientID: sh.ClientID, TransactionID: r.ID, Posting: posting(sh.Amount)})
	}
	if own > 0 {
		ps = append(ps, store.PostingWrite{ID: e.w.OrderedID(), ClientID: r.ClientID, TransactionID: r.ID, Posting: posting(own)})
	}
	if err := tx.PostAll(ctx, ps, now); err != nil {
		return err
	}
	charge.RefundedAmount += settled
	if charge.RefundedAmount+charge.MEDReturned >= charge.Refundable() && charge.Status == pix.StatusPaid {
		if err := tx.SetStatus(ctx, charge.ID, pix.StatusRefunded); err != nil {
			return err
		}
		charge.Status = pix.StatusRefunded
	}
	return e.w.Emit(ctx, tx, o, charge, event, charge.Status, r.Amount, 0, r.ID, now)
}

// FinishReturn applies the final state st of the return of unmatched
// receipt id inside tx: returned (suspense → PIX network) or failed (held
// again for an operator, the money still in suspense). It returns
// ErrChanged if the return was finished meanwhile. The PSP's report of
// the receipt's devoluções finishes returns with it too.
func (e *Engine) FinishReturn(ctx context.Context, tx *store.Tx, id string, st provider.TransferState, now time.Time) error {
	u, err := tx.UnmatchedForUpdate(ctx, id)
	if err != nil {
		return err
	}
	if st.Status == provider.Failed {
		ok, err := tx.FinishUnmatchedReturn(ctx, id, now, "", "the PSP did not complete the return")
		if err != nil || !ok {
			return errors.Join(err, ErrChanged)
		}
		e.log.ErrorContext(ctx, "the return of an unmatched receipt failed; it is held for an operator", "unmatched_receipt", id)
		return nil
	}
	ok, err := tx.FinishUnmatchedReturn(ctx, id, now, st.EndToEndID, "")
	if err != nil || !ok {
		return errors.Join(err, ErrChanged)
	}
	return tx.Post(ctx, e.w.OrderedID(), store.HouseID, u.ID, ledger.UnmatchedReturned(u.Amount), now)
}
