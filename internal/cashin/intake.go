package cashin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/transfer"
)

// Timing of the work with a real PSP (docs/production.md, Moving real money).
const (
	// DefaultReconcileEvery spaces the readings of the PSP's received
	// payments: a payment whose webhook is lost is credited within it
	// (well inside the 2 minutes by which every payment must be credited).
	DefaultReconcileEvery = 20 * time.Second
	// ReadOverlap re-reads the end of the previous window: a PSP lists a
	// payment by its own clock, which may run behind ours.
	ReadOverlap = 2 * time.Minute
	// FirstReading is how far back the first reading ever looks.
	FirstReading = time.Hour
	// PSPCallTimeout bounds one call to the PSP.
	PSPCallTimeout = provider.DefaultCallTimeout
	// expiryRetry spaces the attempts to cancel an expired charge at a PSP
	// that did not answer.
	expiryRetry = 30 * time.Second
	// maxReported is the most payments one PSP webhook may report.
	maxReported = 1000
)

// ReportedPix is one payment a PSP's webhook reports: received (its
// EndToEndID), or, with SendID, a payout sent (Efí reports the Pix sent
// from the account by the send's idEnvio). Nothing of it is trusted: the
// payment or the payout is read back from the PSP before money moves.
type ReportedPix struct {
	EndToEndID string
	TxID       string
	SendID     string
}

// PSPReported handles a PSP webhook's report of payments: each is read
// back from the PSP (GET /pix/{e2eid}) and only what the PSP confirms is
// credited, at the PSP's amount, once per end-to-end id; the refunds the
// PSP reports with it are settled too. A payment the PSP does not know
// moves nothing. The error, if any, means some payment could not be
// confirmed or recorded now (the PSP should report it again; the
// reconciliation reading will find it anyway).
func (s *Service) PSPReported(ctx context.Context, reported []ReportedPix) error {
	if len(reported) > maxReported {
		reported = reported[:maxReported]
	}
	seen := make(map[string]bool, len(reported))
	var errs []error
	var sends []string
	for _, r := range reported {
		if r.SendID != "" {
			sends = append(sends, r.SendID)
			continue
		}
		if seen[r.EndToEndID] {
			continue
		}
		seen[r.EndToEndID] = true
		if !provider.ValidEndToEnd(r.EndToEndID) {
			s.log.WarnContext(ctx, "a PSP webhook reported a malformed end-to-end id; ignored")
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, PSPCallTimeout)
		p, err := s.psp.ConfirmPayment(cctx, r.EndToEndID)
		cancel()
		if errors.Is(err, provider.ErrNotFound) {
			s.log.WarnContext(ctx, "a PSP webhook reported a payment the PSP does not know; nothing moved", "end_to_end_id", r.EndToEndID)
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("confirm payment %s: %w", r.EndToEndID, err))
			continue
		}
		if err := s.Receive(ctx, p); err != nil {
			errs = append(errs, err)
		}
	}
	if err := s.transfers.SendsReported(ctx, sends); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Receive credits a payment the PSP itself reported (its list, its
// cob, or a webhook's payment read back), or records it as unmatched when
// no open charge takes it, and settles the devoluções of it the PSP
// reports final.
func (s *Service) Receive(ctx context.Context, p provider.Payment) error {
	charge, err := s.Credit(ctx, p, false, pix.Date{})
	if err != nil {
		return err
	}
	if charge.ID == "" || charge.EndToEndID != p.EndToEndID {
		return s.unmatchedReported(ctx, p)
	}
	if len(p.Refunds) == 0 {
		return nil
	}
	refunds, err := s.db.Refunds(ctx, charge.ID)
	if err != nil {
		return fmt.Errorf("refunds of %s: %w", charge.ID, err)
	}
	for _, rs := range p.Refunds {
		if rs.Status != provider.Completed && rs.Status != provider.Failed {
			continue
		}
		if !ours(refunds, rs.ID) {
			if err := s.returnReported(ctx, charge, rs); err != nil {
				return err
			}
			continue
		}
		if err := s.refundReported(ctx, charge, refunds, rs); err != nil {
			return err
		}
	}
	return nil
}

// ours reports whether the devolução id is one of refunds'.
func ours(refunds []pix.Refund, id string) bool {
	for _, r := range refunds {
		if strings.EqualFold(provider.HexID(r.ID), id) {
			return true
		}
	}
	return false
}

// returnReported records a devolução of charge that pixgate did not send
// (a MED return), once the PSP reports it made: its amount left the PSP's
// account whatever pixgate thinks of it.
func (s *Service) returnReported(ctx context.Context, charge pix.Transaction, rs provider.TransferState) error {
	if rs.Status != provider.Completed || rs.ID == "" {
		return nil
	}
	if rs.Amount <= 0 {
		return fmt.Errorf("devolução %s of %s: the PSP gave no amount", rs.ID, charge.ID)
	}
	if _, err := s.db.DisputeByReturnID(ctx, rs.ID); err == nil {
		return nil // recorded by an earlier reading
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	d, err := s.MedReturned(ctx, charge, rs.Amount, rs.Nature, rs.ID)
	if pe := pix.AsError(err); pe != nil && pe.Code == pix.EUnprocessable {
		// More than is left of the Pix: the PSP's books and ours disagree,
		// which no retry mends; an operator must look.
		s.log.ErrorContext(ctx, "the PSP reported a MED return pixgate cannot record", "charge", charge.ID,
			"devolucao", rs.ID, "amount", rs.Amount.String(), "error", err.Error())
		return nil
	}
	if err != nil {
		return err
	}
	s.log.WarnContext(ctx, "the PSP returned a received Pix under MED", "charge", charge.ID, "dispute", d.ID,
		"amount", rs.Amount.String(), "natureza", rs.Nature)
	return nil
}

// refundReported settles the refund of charge whose devolução id the PSP
// reported final in rs, if it is still pending.
func (s *Service) refundReported(ctx context.Context, charge pix.Transaction, refunds []pix.Refund, rs provider.TransferState) error {
	for _, r := range refunds {
		if !strings.EqualFold(provider.HexID(r.ID), rs.ID) || r.Status != pix.RefundPending || r.SendState == "" {
			continue
		}
		now := s.now()
		err := s.w.Write(ctx, func(tx *store.Tx, o *outbox.Events) error {
			c, err := tx.TransactionForUpdate(ctx, r.ClientID, r.TransactionID)
			if err != nil {
				return err
			}
			return s.transfers.FinishRefund(ctx, tx, o, r, c, rs, now)
		})
		if err != nil && !errors.Is(err, transfer.ErrChanged) {
			return fmt.Errorf("settle reported refund %s: %w", r.ID, err)
		}
	}
	return nil
}

// ReconcileReceived reads the PSP's list of received payments over the
// time since the last complete reading (and a little before), and credits
// every payment not credited yet: a payment whose webhook never came is
// credited within ReconcileEvery. One node reads at a time, at most once
// per ReconcileEvery (store.DB.ClaimReading). It returns how many payments
// the reading listed; limit is unused (a reading takes every page).
func (s *Service) ReconcileReceived(ctx context.Context, _ int) (int, error) {
	now := s.clocks.Now().UTC().Truncate(time.Millisecond)
	from, ok, err := s.db.ClaimReading(ctx, "received", now, now.Add(s.reconcileEvery), now.Add(-FirstReading))
	if err != nil || !ok {
		return 0, err
	}
	cctx, cancel := context.WithTimeout(ctx, s.reconcileEvery+PSPCallTimeout)
	pays, err := s.psp.Received(cctx, from.Add(-ReadOverlap), now)
	cancel()
	if err != nil {
		return 0, fmt.Errorf("read received payments: %w", err)
	}
	var errs []error
	for _, p := range pays {
		if err := s.Receive(ctx, p); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return len(pays), fmt.Errorf("reconcile received payments: %w", err)
	}
	return len(pays), s.db.SetReadUntil(ctx, "received", now)
}
