package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
)

// SettleDue settles up to limit payouts whose settle_at has passed: it asks
// the provider for each one's outcome and applies it — completed (PAID,
// pix.cashout.paid), failed (CANCELLED, funds released, pix.cashout.failed)
// or returned (PAID now, REVERSED one delay later, amount back and tax kept,
// pix.cashout.reversed) — each in the transaction that claimed the row, so a
// payout is never settled twice, even across nodes.
//
// Each payout settles in its own transaction: a batch would lock several
// clients' accounts in an order no other transaction follows, and deadlock.
func (s *Service) SettleDue(ctx context.Context, limit int) (int, error) {
	now := s.now()
	ids, err := s.DB.DueSettlementIDs(ctx, now, limit)
	if err != nil {
		return 0, fmt.Errorf("settle payouts: %w", err)
	}
	n, err := s.each(ctx, ids, func(id string) (bool, error) {
		settled := false
		err := s.DB.Write(ctx, func(tx *store.Tx) error {
			t, ok, err := tx.ClaimSettlement(ctx, id, now)
			if err != nil || !ok {
				return err
			}
			settled = true
			return s.settlePayout(ctx, tx, t, now)
		})
		if err != nil {
			return false, fmt.Errorf("settle payout %s: %w", id, err)
		}
		return settled, nil
	})
	if n > 0 {
		s.wake()
	}
	return n, err
}

func (s *Service) settlePayout(ctx context.Context, tx *store.Tx, t store.Transaction, now time.Time) error {
	if t.Type != store.TypeCashout {
		return tx.SetSettleAt(ctx, t.ID, time.Time{})
	}
	switch t.Status {
	case StatusPending:
		d, err := parsePayoutDetails(t)
		if err != nil {
			return err
		}
		outcome, err := s.Provider.Settle(ctx, provider.Transfer{ID: t.ID, Amount: t.Amount,
			KeyType: pix.KeyType(d.CreditParty.KeyType), Key: d.CreditParty.Key})
		if err != nil {
			return err
		}
		// The claim locked the row in its current status, so each step
		// below is one deferred update (store.Tx.SetSettled), not a
		// checked transition: on PostgreSQL the whole step goes out with
		// the COMMIT.
		switch outcome {
		case provider.Failed:
			if err := tx.SetSettled(ctx, t.ID, StatusCancelled, time.Time{}, time.Time{}); err != nil {
				return err
			}
			if err := tx.Post(ctx, s.newOrderedID(), t.ClientID, t.ID, ledger.PayoutFailed(t.Amount, t.Tax), now); err != nil {
				return err
			}
			t.Status = StatusCancelled
			return s.emit(ctx, tx, t, EventCashoutFailed, StatusCancelled, t.Amount, t.Tax, "", now)
		case provider.Completed, provider.Returned:
			next := time.Time{}
			if outcome == provider.Returned {
				next = now.Add(max(s.PayoutDelay, time.Millisecond))
			}
			if err := tx.SetSettled(ctx, t.ID, StatusPaid, now, next); err != nil {
				return err
			}
			if err := tx.Post(ctx, s.newOrderedID(), t.ClientID, t.ID, ledger.PayoutCompleted(t.Amount, t.Tax), now); err != nil {
				return err
			}
			t.Status, t.ConfirmedAt = StatusPaid, now
			return s.emit(ctx, tx, t, EventCashoutPaid, StatusPaid, t.Amount, t.Tax, "", now)
		}
		return fmt.Errorf("unknown provider outcome %q", outcome)
	case StatusPaid:
		// A completed payout scheduled again is being returned by the beneficiary's bank.
		if err := tx.SetSettled(ctx, t.ID, StatusReversed, time.Time{}, time.Time{}); err != nil {
			return err
		}
		if err := tx.Post(ctx, s.newOrderedID(), t.ClientID, t.ID, ledger.PayoutReversed(t.Amount), now); err != nil {
			return err
		}
		t.Status = StatusReversed
		return s.emit(ctx, tx, t, EventCashoutReversed, StatusReversed, t.Amount, t.Tax, "", now)
	}
	// Anything else has nothing left to settle.
	return tx.SetSettleAt(ctx, t.ID, time.Time{})
}

var errChanged = errors.New("changed concurrently")

// settleWorkers is how many items of a batch settle at once. Each is its own
// short transaction claimed with SKIP LOCKED, so on PostgreSQL they run in
// parallel; SQLite's single writer simply takes them in turn.
const settleWorkers = 4

// each runs fn on every id with up to settleWorkers at once and returns how
// many reported done, and the first error (the others still run).
func (s *Service) each(ctx context.Context, ids []string, fn func(id string) (bool, error)) (int, error) {
	var (
		mu       sync.Mutex
		n        int
		firstErr error
		wg       sync.WaitGroup
	)
	work := make(chan string)
	for w := 0; w < min(settleWorkers, len(ids)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				done, err := fn(id)
				mu.Lock()
				if done {
					n++
				}
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		work <- id
	}
	close(work)
	wg.Wait()
	return n, firstErr
}

// SettleRefundsDue settles up to limit refunds whose settle_at has passed:
// completed (pending → PIX network; the charge's refunded_amount grows and it
// reads REFUNDED once fully refunded; pix.refund.completed) or failed (funds
// back to available; pix.refund.failed).
func (s *Service) SettleRefundsDue(ctx context.Context, limit int) (int, error) {
	now := s.now()
	ids, err := s.DB.DueRefundIDs(ctx, now, limit)
	if err != nil {
		return 0, fmt.Errorf("settle refunds: %w", err)
	}
	n, err := s.each(ctx, ids, func(id string) (bool, error) {
		settled := false
		err := s.DB.Write(ctx, func(tx *store.Tx) error {
			r, ok, err := tx.ClaimRefund(ctx, id, now)
			if err != nil || !ok {
				return err
			}
			settled = true
			return s.settleRefund(ctx, tx, r, now)
		})
		if err != nil {
			return false, fmt.Errorf("settle refund %s: %w", id, err)
		}
		return settled, nil
	})
	if n > 0 {
		s.wake()
	}
	return n, err
}

func (s *Service) settleRefund(ctx context.Context, tx *store.Tx, r store.Refund, now time.Time) error {
	charge, err := tx.TransactionForUpdate(ctx, r.ClientID, r.TransactionID)
	if err != nil {
		return err
	}
	outcome, err := s.Provider.Settle(ctx, provider.Transfer{ID: r.ID, Amount: r.Amount, Reason: r.Reason, Refund: true})
	if err != nil {
		return err
	}
	status, event := store.RefundCompleted, EventRefundCompleted
	posting := ledger.RefundCompleted(r.Amount)
	settled := r.Amount
	if outcome == provider.Failed {
		status, event, posting, settled = store.RefundFailed, EventRefundFailed, ledger.RefundFailed(r.Amount), 0
	}
	ok, err := tx.FinishRefund(ctx, r.ID, status, now)
	if err != nil || !ok {
		return errors.Join(err, errChanged)
	}
	if err := tx.AddRefundPending(ctx, charge.ID, -r.Amount, settled); err != nil {
		return err
	}
	if err := tx.Post(ctx, s.newOrderedID(), r.ClientID, r.ID, posting, now); err != nil {
		return err
	}
	charge.RefundedAmount += settled
	if charge.RefundedAmount == charge.Amount && charge.Status == StatusPaid {
		if err := tx.SetStatus(ctx, charge.ID, StatusRefunded); err != nil {
			return err
		}
		charge.Status = StatusRefunded
	}
	return s.emit(ctx, tx, charge, event, charge.Status, r.Amount, 0, r.ID, now)
}
