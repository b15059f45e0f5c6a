package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
// pix.cashout.reversed) — so that a payout is never settled twice, even
// across nodes.
//
// Due payouts settle in batches, one transaction per batch, each step
// decided from the rows DueSettlements read and written only if its row is
// still as read (store.Tx.SetSettledIfUnchanged): one guarded update, then
// the events, postings and balances with the commit — on PostgreSQL two
// round trips for the whole batch, and no lock taken on a row before it is
// changed. A batch holds payouts of one client only, so it locks the same
// account rows one payout's settlement would (store.Tx.PostAll moves each
// once, by the batch's sum): payouts being created for other clients never
// wait for it (batches spanning clients made payout creation queue behind
// them: docs/decisions.md). A batch that fails — a row another node
// settled meanwhile, or a payout that cannot settle — is settled again
// payout by payout, each claimed afresh (settleClaimed), so one payout does
// not hold up the rest.
func (s *Service) SettleDue(ctx context.Context, limit int) (int, error) {
	if !s.caps.Simulated {
		return s.sendDue(ctx, limit)
	}
	now := s.now()
	due, err := s.db.DueSettlements(ctx, now, limit)
	if err != nil {
		return 0, fmt.Errorf("settle payouts: %w", err)
	}
	n, err := each(ctx, byClient(due, maxSettleBatch), func(batch []store.Transaction) (int, error) {
		n, err := s.settleBatch(ctx, batch, now)
		if err == nil || ctx.Err() != nil {
			return n, err
		}
		if s.Log != nil && !errors.Is(err, store.ErrChanged) {
			s.Log.WarnContext(ctx, "settling a batch of payouts failed; settling them one by one", "payouts", len(batch), "error", err.Error())
		}
		n = 0
		var firstErr error
		for _, t := range batch {
			k, err := s.settleClaimed(ctx, t.ID, now)
			n += k
			if err != nil && firstErr == nil {
				firstErr = err
			}
		}
		return n, firstErr
	})
	return n, err
}

// settleBatch settles due, read by DueSettlements, in one transaction and
// returns how many it settled: all of them, or none and an error
// (store.ErrChanged if a row was no longer as read). Each kind of write goes
// out as one statement for the whole batch: the status changes, the events,
// the postings and their entries. The provider is asked before the
// transaction begins, so no transaction waits on it.
func (s *Service) settleBatch(ctx context.Context, due []store.Transaction, now time.Time) (int, error) {
	var w settlementWrites
	for _, t := range due {
		if err := s.settlePayout(ctx, t, now, &w); err != nil {
			return 0, fmt.Errorf("settle payouts: payout %s: %w", t.ID, err)
		}
	}
	err := s.write(ctx, func(tx *store.Tx, o *outbox) error {
		return w.record(ctx, tx, o, now, tx.SetSettledIfUnchanged)
	})
	if err != nil {
		return 0, fmt.Errorf("settle payouts: %w", err)
	}
	return len(due), nil
}

// settleClaimed claims the payout id if it is still due and no other node
// holds it, and settles it; it returns 1 if it did, 0 if there was nothing
// left to settle.
func (s *Service) settleClaimed(ctx context.Context, id string, now time.Time) (int, error) {
	settled := 0
	err := s.write(ctx, func(tx *store.Tx, o *outbox) error {
		settled = 0
		ts, err := tx.ClaimSettlements(ctx, []string{id}, now)
		if err != nil {
			return err
		}
		var w settlementWrites
		for _, t := range ts {
			if err := s.settlePayout(ctx, t, now, &w); err != nil {
				return fmt.Errorf("payout %s: %w", t.ID, err)
			}
		}
		settled = len(ts)
		return w.record(ctx, tx, o, now, tx.SetSettledAll)
	})
	if err != nil {
		return 0, fmt.Errorf("settle payouts: %w", err)
	}
	return settled, nil
}

// settlementWrites collects what a batch of settlement steps writes.
type settlementWrites struct {
	steps  []store.Settled
	events []store.Event
	posts  []store.PostingWrite
}

// record writes w in tx: the status changes with set (guarded or not), then
// the events — a fresh copy for each attempt, since the outbox leases the
// events it is given — and the postings.
func (w *settlementWrites) record(ctx context.Context, tx *store.Tx, o *outbox, now time.Time,
	set func(context.Context, []store.Settled) error) error {
	if err := set(ctx, w.steps); err != nil {
		return err
	}
	if err := o.insert(ctx, tx, slices.Clone(w.events)...); err != nil {
		return err
	}
	return tx.PostAll(ctx, w.posts, now)
}

// settlePayout decides one settlement step of t — read by DueSettlements,
// or claimed by the caller's transaction — and adds its status change, its
// webhook event and the posting that moves the money, if any, to w.
func (s *Service) settlePayout(ctx context.Context, t store.Transaction, now time.Time, w *settlementWrites) error {
	// Each step records the row's status and settle_at it was decided from:
	// a claimed row cannot change (store.Tx.SetSettledAll ignores them), one
	// read without a lock is changed only if it did not
	// (store.Tx.SetSettledIfUnchanged).
	var e2e string
	step := func(status pix.TxStatus, confirmed, next time.Time, p ledger.Posting, event string) error {
		w.steps = append(w.steps, store.Settled{ID: t.ID, Status: status, Confirmed: confirmed, Next: next,
			EndToEndID: e2e, WasStatus: t.Status, WasSettleAt: t.SettleAt})
		t.Status = status
		if !confirmed.IsZero() {
			t.ConfirmedAt = confirmed
		}
		e, err := s.event(t, event, status, t.Amount, t.Tax, "", now)
		if err != nil {
			return err
		}
		w.events = append(w.events, e)
		w.posts = append(w.posts, store.PostingWrite{ID: s.newOrderedID(), ClientID: t.ClientID, TransactionID: t.ID, Posting: p})
		return nil
	}
	// Anything else than a pending or paid payout has nothing left to settle.
	done := store.Settled{ID: t.ID, Status: t.Status, WasStatus: t.Status, WasSettleAt: t.SettleAt}
	if t.Type != pix.TypeCashout || t.SendState != "" {
		// A payout sent to a real PSP is not the simulator's to settle.
		w.steps = append(w.steps, done)
		return nil
	}
	switch t.Status {
	case pix.StatusPending:
		d, err := parsePayoutDetails(t)
		if err != nil {
			return err
		}
		st, err := s.Provider.Status(ctx, provider.Transfer{ID: t.ID, Amount: t.Amount,
			KeyType: pix.KeyType(d.CreditParty.KeyType), Key: d.CreditParty.Key, Description: d.Description})
		if err != nil {
			return err
		}
		e2e = st.EndToEndID
		switch st.Status {
		case provider.Failed:
			return step(pix.StatusCancelled, time.Time{}, time.Time{}, ledger.PayoutFailed(t.Amount, t.Tax), EventCashoutFailed)
		case provider.Completed:
			return step(pix.StatusPaid, now, time.Time{}, ledger.PayoutCompleted(t.Amount, t.Tax), EventCashoutPaid)
		case provider.Returned:
			next := now.Add(max(s.PayoutDelay, time.Millisecond))
			return step(pix.StatusPaid, now, next, ledger.PayoutCompleted(t.Amount, t.Tax), EventCashoutPaid)
		}
		return fmt.Errorf("the simulator left payout %s %s", t.ID, st.Status)
	case pix.StatusPaid:
		// A completed payout scheduled again is being returned by the beneficiary's bank.
		return step(pix.StatusReversed, time.Time{}, time.Time{}, ledger.PayoutReversed(t.Amount), EventCashoutReversed)
	}
	w.steps = append(w.steps, done)
	return nil
}

var errChanged = errors.New("changed concurrently")

// settleWorkers is how many batches of payouts, or charges' refunds, settle
// at once. Each batch, and each refund, is its own short transaction claimed
// with SKIP LOCKED, so on PostgreSQL they run in parallel; SQLite's single
// writer simply takes them in turn.
const settleWorkers = 2

// maxSettleBatch is the most payouts settled in one transaction. Larger
// batches save little more and hold their client's account rows longer.
const maxSettleBatch = 25

// inGroups groups items by key, in order of each group's first item, in
// batches of at most size items (a group larger than size continues in a
// new batch).
func inGroups[T any](items []T, size int, key func(T) string) [][]T {
	var out [][]T
	open := make(map[string]int) // group → index of its batch being filled
	for _, item := range items {
		g := key(item)
		i, ok := open[g]
		if !ok || len(out[i]) == size {
			i = len(out)
			out = append(out, nil)
			open[g] = i
		}
		out[i] = append(out[i], item)
	}
	return out
}

// byClient groups due payouts by client, in order of each client's earliest
// one, in batches of at most size payouts.
func byClient(due []store.Transaction, size int) [][]store.Transaction {
	return inGroups(due, size, func(t store.Transaction) string { return t.ClientID })
}

// byCharge groups due refunds by the charge they refund, each charge's in
// the order they were requested, so that they settle in that order: one
// worker settles a charge's refunds one after another, and its webhooks
// report the charge's status after each in turn.
func byCharge(due []store.DueRefund) [][]store.DueRefund {
	return inGroups(due, len(due), func(d store.DueRefund) string { return d.ChargeID })
}

// each runs fn on every item with up to settleWorkers at once and returns
// the sum of what fn reported done, and the first error (the others still
// run).
func each[T any](ctx context.Context, items []T, fn func(T) (int, error)) (int, error) {
	return eachN(ctx, settleWorkers, items, fn)
}

// eachN is each with up to workers at once.
func eachN[T any](ctx context.Context, workers int, items []T, fn func(T) (int, error)) (int, error) {
	var (
		mu       sync.Mutex
		n        int
		firstErr error
		wg       sync.WaitGroup
	)
	work := make(chan T)
	for w := 0; w < min(workers, len(items)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for item := range work {
				done, err := fn(item)
				mu.Lock()
				n += done
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	for _, item := range items {
		if ctx.Err() != nil {
			break
		}
		work <- item
	}
	close(work)
	wg.Wait()
	return n, firstErr
}

// SettleRefundsDue settles up to limit refunds whose settle_at has passed:
// completed (pending → PIX network; the charge's refunded_amount grows and it
// reads REFUNDED once fully refunded; pix.refund.completed) or failed (funds
// back to available; pix.refund.failed). A charge's refunds settle in the
// order they were requested (byCharge).
func (s *Service) SettleRefundsDue(ctx context.Context, limit int) (int, error) {
	if !s.caps.Simulated {
		return s.sendRefundsDue(ctx, limit)
	}
	now := s.now()
	due, err := s.db.DueRefunds(ctx, now, limit)
	if err != nil {
		return 0, fmt.Errorf("settle refunds: %w", err)
	}
	n, err := each(ctx, byCharge(due), func(refunds []store.DueRefund) (int, error) {
		settled := 0
		for _, d := range refunds {
			id := d.ID
			claimed := false
			err := s.write(ctx, func(tx *store.Tx, o *outbox) error {
				r, ok, err := tx.ClaimRefund(ctx, id, now)
				if err != nil || !ok {
					return err
				}
				claimed = true
				return s.settleRefund(ctx, tx, o, r, now)
			})
			if err != nil {
				// The charge's later refunds wait for the next run rather
				// than settle before this one.
				return settled, fmt.Errorf("settle refund %s: %w", id, err)
			}
			if claimed {
				settled++
			}
		}
		return settled, nil
	})
	return n, err
}

func (s *Service) settleRefund(ctx context.Context, tx *store.Tx, o *outbox, r store.Refund, now time.Time) error {
	charge, err := tx.TransactionForUpdate(ctx, r.ClientID, r.TransactionID)
	if err != nil {
		return err
	}
	st, err := s.Provider.Status(ctx, provider.Transfer{ID: r.ID, Amount: r.Amount, Description: r.Reason, Refund: true,
		PaymentE2E: charge.EndToEndID})
	if err != nil {
		return err
	}
	return s.finishRefund(ctx, tx, o, r, charge, st, now)
}

// finishRefund applies the final state st of refund r of charge (locked by
// tx): completed (the charge's refunded_amount grows, REFUNDED once whole,
// pix.refund.completed) or failed (funds back, pix.refund.failed). It
// returns errChanged if r was finished meanwhile.
func (s *Service) finishRefund(ctx context.Context, tx *store.Tx, o *outbox, r store.Refund, charge store.Transaction,
	st provider.TransferState, now time.Time) error {
	status, event := pix.RefundCompleted, EventRefundCompleted
	posting := ledger.RefundCompleted(r.Amount)
	settled := r.Amount
	if st.Status == provider.Failed {
		status, event, posting, settled = pix.RefundFailed, EventRefundFailed, ledger.RefundFailed(r.Amount), 0
	}
	ok, err := tx.FinishRefundSend(ctx, r.ID, status, now, st.EndToEndID)
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
	if charge.RefundedAmount >= charge.Refundable() && charge.Status == pix.StatusPaid {
		if err := tx.SetStatus(ctx, charge.ID, pix.StatusRefunded); err != nil {
			return err
		}
		charge.Status = pix.StatusRefunded
	}
	return s.emit(ctx, tx, o, charge, event, charge.Status, r.Amount, 0, r.ID, now)
}
