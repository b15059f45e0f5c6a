package cashin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/transfer"
)

// recordUnmatched records payment p, which no open charge takes, as an
// unmatched receipt inside tx: its amount goes from the PIX network into
// the house's suspense account, and its return to the payer is scheduled
// at once unless HoldUnmatched keeps it for an operator. charge is the
// paid charge p names, or the zero Transaction when no charge holds its
// txid. A payment already recorded changes nothing.
func (s *Service) recordUnmatched(ctx context.Context, tx *store.Tx, p provider.Payment, charge pix.Transaction, now time.Time) error {
	u := pix.UnmatchedReceipt{ID: s.newUUID(), PaymentEndToEndID: p.EndToEndID, TxID: p.TxID, Amount: p.Amount,
		ReceivedAt: now, RecordedAt: now, Reason: pix.UnmatchedNoCharge, Status: pix.UnmatchedHeld}
	if !p.PaidAt.IsZero() {
		u.ReceivedAt = p.PaidAt.UTC().Truncate(time.Millisecond)
	}
	if charge.ID != "" {
		u.Reason, u.ClientID, u.TransactionID = pix.UnmatchedAlreadyPaid, charge.ClientID, charge.ID
	}
	action := "held for an operator"
	if !s.holdUnmatched {
		u.Status, u.ReturnID, u.SendState, u.SettleAt = pix.UnmatchedReturning, s.newUUID(), pix.SendToSend, now
		action = "returning it to the payer"
	}
	// The end-to-end id is the PSP's as it confirmed it: a form this code
	// does not expect must not keep received money out of the books.
	if p.Amount <= 0 || p.EndToEndID == "" {
		return fmt.Errorf("unmatched payment %q of %s: not a payment the PSP could confirm", p.EndToEndID, p.Amount)
	}
	inserted, err := tx.InsertUnmatched(ctx, u)
	if err != nil || !inserted {
		return err // recorded before: a payment reported twice is recorded once
	}
	s.log.ErrorContext(ctx, "the PSP received a payment that no open charge takes; it is in suspense, "+action,
		"unmatched_receipt", u.ID, "end_to_end_id", p.EndToEndID, "txid", p.TxID, "amount", p.Amount.String(),
		"reason", u.Reason, "charge", u.TransactionID)
	return tx.Post(ctx, s.w.OrderedID(), store.HouseID, u.ID, ledger.UnmatchedReceived(p.Amount), now)
}

// unmatchedReported settles the return of the unmatched receipt of payment
// p when the PSP reports it final among p's devoluções.
func (s *Service) unmatchedReported(ctx context.Context, p provider.Payment) error {
	if len(p.Refunds) == 0 {
		return nil
	}
	u, err := s.db.UnmatchedByPayment(ctx, p.EndToEndID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("unmatched receipt of %s: %w", p.EndToEndID, err)
	}
	if u.Status != pix.UnmatchedReturning {
		for _, rs := range p.Refunds {
			if rs.Status == provider.Completed && !strings.EqualFold(provider.HexID(u.ReturnID), rs.ID) {
				if err := s.unmatchedReturnedByPSP(ctx, u, rs); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, rs := range p.Refunds {
		if !strings.EqualFold(provider.HexID(u.ReturnID), rs.ID) || (rs.Status != provider.Completed && rs.Status != provider.Failed) {
			continue
		}
		now := s.now()
		err := s.w.Write(ctx, func(tx *store.Tx, _ *outbox.Events) error { return s.transfers.FinishReturn(ctx, tx, u.ID, rs, now) })
		if err != nil && !errors.Is(err, transfer.ErrChanged) {
			return fmt.Errorf("settle reported return of %s: %w", u.ID, err)
		}
	}
	return nil
}

// unmatchedReturnedByPSP records a devolução pixgate did not send (a MED
// return) of HELD unmatched receipt u: when it returned the whole receipt,
// u is RETURNED by it, its amount leaving suspense as a return of ours
// would; any other (part of it, or u RETURNED already) stays for an
// operator, who is told.
func (s *Service) unmatchedReturnedByPSP(ctx context.Context, u pix.UnmatchedReceipt, rs provider.TransferState) error {
	if u.Status != pix.UnmatchedHeld || rs.Amount != u.Amount {
		s.log.ErrorContext(ctx, "the PSP returned an unmatched receipt by a devolução pixgate did not send", "unmatched_receipt", u.ID,
			"status", u.Status, "devolucao", rs.ID, "natureza", rs.Nature, "amount", rs.Amount.String())
		return nil
	}
	now := s.now()
	err := s.w.Write(ctx, func(tx *store.Tx, _ *outbox.Events) error {
		started, err := tx.StartUnmatchedReturn(ctx, u.ID, rs.ID, now)
		if err != nil || !started {
			return errors.Join(err, transfer.ErrChanged)
		}
		if _, err := tx.FinishUnmatchedReturn(ctx, u.ID, now, rs.EndToEndID, ""); err != nil {
			return err
		}
		return tx.Post(ctx, s.w.OrderedID(), store.HouseID, u.ID, ledger.UnmatchedReturned(u.Amount), now)
	})
	if err != nil && !errors.Is(err, transfer.ErrChanged) {
		return fmt.Errorf("record the PSP's return of unmatched receipt %s: %w", u.ID, err)
	}
	if err == nil {
		s.log.WarnContext(ctx, "the PSP returned a held unmatched receipt by a devolução pixgate did not send (MED); it is RETURNED",
			"unmatched_receipt", u.ID, "devolucao", rs.ID, "natureza", rs.Nature)
	}
	return nil
}
