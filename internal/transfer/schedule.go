package transfer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/clock"
	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// Scheduled payouts (docs/payouts.md) wait, nothing reserved, in send
// state pix.SendScheduled. At the start of their day (São Paulo, on their
// client's clock) RunScheduled reserves amount + tax and hands each to the
// sender as any new payout, or fails it when the balance does not hold it.
// Every way out of the state is one transaction guarded by it, so a
// payout starts, fails or is cancelled once across nodes and crashes.

// MsgInsufficientBalance is the reason of a scheduled payout that failed on
// its day (pix.cashout.failed), as a payout refused at once reads.
const MsgInsufficientBalance = "Insufficient balance"

// errNotWaiting marks a scheduled payout another node (or a cancel) took
// first.
var errNotWaiting = errors.New("scheduled payout no longer waits")

// RunScheduled starts up to limit scheduled payouts whose day has begun,
// on the real clock and on every sandbox client's own, and returns how
// many it started or failed. A job task runs it every job interval.
func (e *Engine) RunScheduled(ctx context.Context, limit int) (int, error) {
	due, err := e.db.DueScheduled(ctx, e.clocks.Now(), limit)
	if err != nil && len(due) == 0 {
		return 0, fmt.Errorf("run scheduled payouts: %w", err)
	}
	due = clock.Each(e.clocks, ctx, due, func(d store.ScheduledDue) string { return d.TransactionID },
		func(ctx context.Context, c store.ClientClock, at time.Time) ([]store.ScheduledDue, error) {
			return e.db.ClientDueScheduled(ctx, c.ClientID, at, limit)
		})
	n := 0
	var errs []error
	for _, d := range due[:min(len(due), limit)] {
		ok, err := e.startScheduled(e.clocks.For(ctx, d.ClientID), d.TransactionID)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			n++
		}
	}
	if n > 0 {
		e.Kick()
	}
	return n, errors.Join(errs...)
}

// StartScheduled starts the client's scheduled payout id now, as if its
// day had begun (the sandbox's run-schedule): reserved and sent, or
// failed for want of balance. Errors: ENotFound (no such payout of the
// client), EUnprocessable (it was never scheduled, or no longer waits).
func (e *Engine) StartScheduled(ctx context.Context, clientID, id string) (pix.Transaction, error) {
	if _, waiting, err := e.db.ScheduledDueAt(ctx, clientID, id); err != nil || !waiting {
		return pix.Transaction{}, e.notWaiting(ctx, clientID, id, err)
	}
	if _, err := e.startScheduled(ctx, id); err != nil {
		return pix.Transaction{}, err
	}
	e.Kick()
	t, err := e.db.Transaction(ctx, clientID, id)
	if err != nil {
		return pix.Transaction{}, fmt.Errorf("run scheduled payout: %w", err)
	}
	return t, nil
}

// startScheduled reserves payout id and makes it due for the sender in one
// transaction; when the balance does not hold it, it fails it instead, in
// another, with pix.cashout.failed. It reports whether it changed the
// payout (false: it no longer waited).
func (e *Engine) startScheduled(ctx context.Context, id string) (bool, error) {
	at := e.clocks.At(ctx)
	var started pix.Transaction
	err := e.w.Write(ctx, func(tx *store.Tx, _ *outbox.Events) error {
		t, ok, err := tx.StartScheduled(ctx, id, e.clocks.Now())
		if err != nil {
			return err
		}
		if !ok {
			return errNotWaiting
		}
		started = t
		return tx.PostAll(ctx, []store.PostingWrite{{ID: e.w.OrderedID(), ClientID: t.ClientID, TransactionID: t.ID,
			Posting: ledger.PayoutReserved(t.Amount, t.Tax), At: at}}, at)
	})
	switch {
	case err == nil:
		e.log.InfoContext(ctx, "scheduled payout started", "transaction_id", started.ID)
		return true, nil
	case errors.Is(err, errNotWaiting):
		return false, nil
	case errors.Is(err, store.ErrInsufficientFunds):
		return e.endScheduled(ctx, id, true)
	}
	return false, fmt.Errorf("start scheduled payout %s: %w", id, err)
}

// CancelScheduled cancels the client's scheduled payout id before its day
// begins: CANCELLED, with pix.cashout.cancelled; nothing was reserved.
// Errors: ENotFound (no such payout of the client), EUnprocessable (it
// was never scheduled, its day has begun, or it no longer waits).
func (e *Engine) CancelScheduled(ctx context.Context, clientID, id string) (pix.Transaction, error) {
	dueAt, waiting, err := e.db.ScheduledDueAt(ctx, clientID, id)
	if err != nil || !waiting {
		return pix.Transaction{}, e.notWaiting(ctx, clientID, id, err)
	}
	if !e.clocks.At(ctx).Before(dueAt) {
		return pix.Transaction{}, pix.Errorf(pix.EUnprocessable, "The payout's scheduled day has begun: it can no longer be cancelled")
	}
	if _, err := e.endScheduled(ctx, id, false); err != nil {
		return pix.Transaction{}, err
	}
	t, err := e.db.Transaction(ctx, clientID, id)
	if err != nil {
		return pix.Transaction{}, fmt.Errorf("cancel scheduled payout: %w", err)
	}
	if t.Status != pix.StatusCancelled || t.SendState != pix.SendDone {
		return pix.Transaction{}, pix.Errorf(pix.EUnprocessable, "The payout's scheduled day has begun: it can no longer be cancelled")
	}
	return t, nil
}

// endScheduled ends payout id without a send, failed (its balance did not
// hold it on its day) or cancelled, with its event, in one transaction; it
// reports whether it changed the payout.
func (e *Engine) endScheduled(ctx context.Context, id string, failed bool) (bool, error) {
	at := e.clocks.At(ctx)
	changed := false
	err := e.w.Write(ctx, func(tx *store.Tx, o *outbox.Events) error {
		t, ok, err := tx.EndScheduled(ctx, id, failed)
		if err != nil || !ok {
			return err
		}
		changed = true
		event, reason := pix.EventCashoutCancelled, ""
		if failed {
			event, reason = pix.EventCashoutFailed, MsgInsufficientBalance
		}
		ev, err := e.w.Event(t, event, pix.StatusCancelled, t.Amount, t.Tax, "", at)
		if err != nil {
			return err
		}
		if reason != "" {
			if ev, err = withReason(ev, t, event, reason, at); err != nil {
				return err
			}
		}
		return o.Insert(ctx, tx, ev)
	})
	if err != nil {
		return false, fmt.Errorf("end scheduled payout %s: %w", id, err)
	}
	if changed && failed {
		e.log.InfoContext(ctx, "scheduled payout failed on its day: insufficient balance", "transaction_id", id)
	}
	return changed, nil
}

// withReason is event ev with its body's reason set.
func withReason(ev pix.Event, t pix.Transaction, event, reason string, at time.Time) (pix.Event, error) {
	b := pix.NewEventBody(ev.ID, t, event, pix.StatusCancelled, t.Amount, t.Tax, "", at)
	b.Reason = reason
	payload, err := json.Marshal(b)
	if err != nil {
		return ev, fmt.Errorf("event payload: %w", err)
	}
	ev.Payload = string(payload)
	return ev, nil
}

// notWaiting is the error for a payout StartScheduled or CancelScheduled
// cannot take: err from reading its schedule (ErrNotFound: never
// scheduled, or not the client's).
func (e *Engine) notWaiting(ctx context.Context, clientID, id string, err error) error {
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("scheduled payout %s: %w", id, err)
	}
	if _, terr := e.db.Transaction(ctx, clientID, id); errors.Is(terr, store.ErrNotFound) {
		return pix.Errorf(pix.ENotFound, "Payout not found")
	} else if terr != nil {
		return fmt.Errorf("scheduled payout %s: %w", id, terr)
	}
	if err != nil {
		return pix.Errorf(pix.EUnprocessable, "The payout was not scheduled: only a scheduled payout can be cancelled")
	}
	return pix.Errorf(pix.EUnprocessable, "The payout's scheduled day has begun: it can no longer be cancelled")
}
