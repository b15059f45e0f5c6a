package gateway

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

// payoutFinish is a payout's final word from the PSP, as its step decided
// it: the row as read, the step to write (guarded by the send state it was
// decided from) and the PSP's state.
type payoutFinish struct {
	t    pix.Transaction
	step store.SendStep
	st   provider.TransferState
}

// payoutMove is one status change of a payout with its event and posting.
type payoutMove struct {
	to        pix.TxStatus
	event     string
	posting   ledger.Posting
	confirmed time.Time
}

// payoutMoves is what the PSP's final word st does to payout t: a PENDING
// payout completes (PAID, pix.cashout.paid) or fails (CANCELLED, amount
// and tax back, pix.cashout.failed); a returned one (the beneficiary's
// bank sent the amount back) is REVERSED (amount back, tax kept,
// pix.cashout.reversed), after it was PAID. Anything else changes nothing.
func payoutMoves(t pix.Transaction, st provider.TransferState, now time.Time) []payoutMove {
	var moves []payoutMove
	status := t.Status
	if status == pix.StatusPending {
		if st.Status == provider.Failed {
			return []payoutMove{{pix.StatusCancelled, pix.EventCashoutFailed, ledger.PayoutFailed(t.Amount, t.Tax), time.Time{}}}
		}
		moves = append(moves, payoutMove{pix.StatusPaid, pix.EventCashoutPaid, ledger.PayoutCompleted(t.Amount, t.Tax), now})
		status = pix.StatusPaid
	}
	if status == pix.StatusPaid && st.Status == provider.Returned {
		moves = append(moves, payoutMove{pix.StatusReversed, pix.EventCashoutReversed, ledger.PayoutReversed(t.Amount), time.Time{}})
	}
	return moves
}

// finishPayouts writes the finishes of the payouts decided at the same
// moment in one transaction: their steps and first status changes by one
// guarded UPDATE, then the events and postings of those that applied (one
// insert and one PostAll). It reports which applied; one whose row was no
// longer as read is left to whoever changed it. A payout named twice is
// finished in rounds, each against the row as the earlier left it.
func (s *Service) finishPayouts(ctx context.Context, fs []payoutFinish) ([]bool, error) {
	now := s.now()
	var applied []bool
	err := s.w.Write(ctx, func(tx *store.Tx, o *outbox.Events) error {
		applied = make([]bool, len(fs))
		var events []pix.Event
		var posts []store.PostingWrite
		pending := make([]int, len(fs))
		for i := range fs {
			pending[i] = i
		}
		for len(pending) > 0 {
			var round, later []int
			seen := make(map[string]bool, len(pending))
			for _, i := range pending {
				if seen[fs[i].t.ID] {
					later = append(later, i)
					continue
				}
				seen[fs[i].t.ID] = true
				round = append(round, i)
			}
			plans := make([][]payoutMove, len(round))
			steps := make([]store.PayoutStep, len(round))
			for k, i := range round {
				f := fs[i]
				plans[k] = payoutMoves(f.t, f.st, now.Add(s.clocks.Offset(f.t.ClientID)))
				steps[k] = store.PayoutStep{Step: f.step, From: f.t.Status}
				if len(plans[k]) > 0 {
					steps[k].To, steps[k].Confirmed = plans[k][0].to, plans[k][0].confirmed
				}
			}
			ok, err := tx.StepPayouts(ctx, steps)
			if err != nil {
				return err
			}
			for k, i := range round {
				if !ok[k] {
					continue
				}
				applied[i] = true
				t := fs[i].t
				at := now.Add(s.clocks.Offset(t.ClientID)) // on the client's clock
				if fs[i].st.EndToEndID != "" {
					t.EndToEndID = fs[i].st.EndToEndID
				}
				for n, m := range plans[k] {
					if n > 0 {
						// The row is locked by the UPDATE above: this holds.
						moved, err := tx.TransitionTransaction(ctx, t.ID, t.Status, m.to, m.confirmed)
						if err != nil || !moved {
							return errors.Join(err, fmt.Errorf("payout %s changed under its finish", t.ID))
						}
					}
					t.Status = m.to
					if !m.confirmed.IsZero() {
						t.ConfirmedAt = m.confirmed
					}
					e, err := s.w.Event(t, m.event, m.to, t.Amount, t.Tax, "", at)
					if err != nil {
						return err
					}
					events = append(events, e)
					posts = append(posts, store.PostingWrite{ID: s.w.OrderedID(), ClientID: t.ClientID, TransactionID: t.ID, Posting: m.posting, At: at})
				}
			}
			pending = later
		}
		if err := o.Insert(ctx, tx, events...); err != nil {
			return err
		}
		return tx.PostAll(ctx, posts, now)
	})
	if err != nil {
		return nil, fmt.Errorf("finish payouts: %w", err)
	}
	return applied, nil
}
