package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/pixgate/pixgate/internal/brcode"
	"github.com/pixgate/pixgate/internal/clock"
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
	// readOverlap re-reads the end of the previous window: a PSP lists a
	// payment by its own clock, which may run behind ours.
	readOverlap = 2 * time.Minute
	// firstReading is how far back the first reading ever looks.
	firstReading = time.Hour
	// pspCallTimeout bounds one call to the PSP.
	pspCallTimeout = provider.DefaultCallTimeout
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

// newTxID returns a new txid of the provider's length, of [A-Za-z0-9].
func (s *Service) newTxID() (string, error) {
	var b strings.Builder
	for b.Len() < s.txidLen {
		id, err := brcode.NewTxID(s.Rand)
		if err != nil {
			return "", err
		}
		b.WriteString(id)
	}
	return b.String()[:s.txidLen], nil
}

// createAtProvider registers the charge txid at the PSP with create and
// returns its BR Code; a PSP's failure is a 502 "Payment provider
// unavailable", logged with its cause.
func (s *Service) createAtProvider(ctx context.Context, txid string, create func(context.Context) (string, error)) (string, error) {
	code, err := create(ctx)
	if err == nil {
		return code, nil
	}
	if wait, limited := provider.RetryAfter(err); limited {
		// Still a 502 (the merchant may try again), but not a PSP failure.
		s.Log.WarnContext(ctx, "the PSP limited its rate and did not create a charge", "txid", txid, "retry_after", wait.String())
	} else {
		s.Log.WarnContext(ctx, "the PSP did not create a charge", "txid", txid, "error", err.Error())
	}
	return "", pix.Errorf(pix.EProviderUnavailable, "Payment provider unavailable")
}

// errNoDueCharges: the provider has no charges with a due date, so it
// cannot know one (it was created under another provider).
var errNoDueCharges = fmt.Errorf("%w: the provider has no charges with a due date", provider.ErrNotFound)

// chargePayments reads the charge txid at the PSP — a charge with a due
// date (due) through provider.DueCharger — and returns its payments.
func (s *Service) chargePayments(ctx context.Context, txid string, due bool) ([]provider.Payment, error) {
	if !due {
		return s.psp.ChargePayments(ctx, txid)
	}
	dc, ok := s.psp.(provider.DueCharger)
	if !ok {
		return nil, errNoDueCharges
	}
	return dc.DueChargePayments(ctx, txid)
}

// cancelAtProvider removes the charge txid at the PSP — a charge with a
// due date (due) through provider.DueCharger — so that it can no longer be
// paid.
func (s *Service) cancelAtProvider(ctx context.Context, txid string, due bool) error {
	if !due {
		return s.psp.CancelCharge(ctx, txid)
	}
	dc, ok := s.psp.(provider.DueCharger)
	if !ok {
		return errNoDueCharges
	}
	return dc.CancelDueCharge(ctx, txid)
}

// withdrawCharge removes from the PSP a cob (a cobv when due) that no
// charge of ours holds, so that no payer can pay it. If the PSP does not
// answer, the cob's intent stays and the sweep (SweepOrphanCobs) tries
// again.
func (s *Service) withdrawCharge(ctx context.Context, txid string, due bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pspCallTimeout)
	defer cancel()
	if err := s.cancelAtProvider(ctx, txid, due); err != nil && !errors.Is(err, provider.ErrNotFound) {
		s.Log.WarnContext(ctx, "could not withdraw a cob that no charge holds; the sweep will", "txid", txid, "error", err.Error())
		return
	}
	s.intentDone(ctx, txid)
}

// intentDone deletes the intent of cob txid, whose charge is stored or
// whose cob is withdrawn. Best effort: an intent left behind costs the
// sweep one reading, which finds the charge.
func (s *Service) intentDone(ctx context.Context, txid string) {
	if _, err := s.db.DeleteCobIntent(context.WithoutCancel(ctx), txid); err != nil {
		s.Log.WarnContext(ctx, "could not delete a cob's intent; the sweep will", "txid", txid, "error", err.Error())
	}
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
			s.Log.WarnContext(ctx, "a PSP webhook reported a malformed end-to-end id; ignored")
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, pspCallTimeout)
		p, err := s.psp.ConfirmPayment(cctx, r.EndToEndID)
		cancel()
		if errors.Is(err, provider.ErrNotFound) {
			s.Log.WarnContext(ctx, "a PSP webhook reported a payment the PSP does not know; nothing moved", "end_to_end_id", r.EndToEndID)
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("confirm payment %s: %w", r.EndToEndID, err))
			continue
		}
		if err := s.receiveConfirmed(ctx, p); err != nil {
			errs = append(errs, err)
		}
	}
	if err := s.transfers.SendsReported(ctx, sends); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// receiveConfirmed credits a payment the PSP itself reported (its list, its
// cob, or a webhook's payment read back), or records it as unmatched when
// no open charge takes it, and settles the devoluções of it the PSP
// reports final.
func (s *Service) receiveConfirmed(ctx context.Context, p provider.Payment) error {
	charge, err := s.credit(ctx, p, false, pix.Date{})
	if err != nil {
		return err
	}
	if charge.ID == "" || charge.EndToEndID != p.EndToEndID {
		return s.unmatchedReported(ctx, p)
	}
	for _, rs := range p.Refunds {
		if rs.Status != provider.Completed && rs.Status != provider.Failed {
			continue
		}
		if err := s.refundReported(ctx, charge, rs); err != nil {
			return err
		}
	}
	return nil
}

// refundReported settles the refund of charge whose devolução id the PSP
// reported final in rs, if it is still pending.
func (s *Service) refundReported(ctx context.Context, charge pix.Transaction, rs provider.TransferState) error {
	refunds, err := s.db.Refunds(ctx, charge.ID)
	if err != nil {
		return fmt.Errorf("refunds of %s: %w", charge.ID, err)
	}
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
	now := s.Now().UTC().Truncate(time.Millisecond)
	from, ok, err := s.db.ClaimReading(ctx, "received", now, now.Add(s.ReconcileEvery), now.Add(-firstReading))
	if err != nil || !ok {
		return 0, err
	}
	cctx, cancel := context.WithTimeout(ctx, s.ReconcileEvery+pspCallTimeout)
	pays, err := s.psp.Received(cctx, from.Add(-readOverlap), now)
	cancel()
	if err != nil {
		return 0, fmt.Errorf("read received payments: %w", err)
	}
	var errs []error
	for _, p := range pays {
		if err := s.receiveConfirmed(ctx, p); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return len(pays), fmt.Errorf("reconcile received payments: %w", err)
	}
	return len(pays), s.db.SetReadUntil(ctx, "received", now)
}

// expireAtPSP cancels up to limit expired charges the PSP says are unpaid:
// each is read first (GET /cob, or /cobv for a charge with a due date),
// and a payment found is credited instead; then the cob is removed (PATCH)
// and only then is the charge CANCELLED. A
// charge the PSP did not answer for waits expiryRetry.
func (s *Service) expireAtPSP(ctx context.Context, limit int) (int, error) {
	now := s.now()
	due, err := s.db.ExpiredCharges(ctx, now, limit)
	if err != nil {
		return 0, fmt.Errorf("expire due charges: %w", err)
	}
	due = clock.Each(s.clocks, ctx, due, func(t pix.Transaction) string { return t.ID },
		func(ctx context.Context, c store.ClientClock, at time.Time) ([]pix.Transaction, error) {
			return s.db.ClientExpiredCharges(ctx, c.ClientID, at, limit)
		})
	n := 0
	for _, t := range due {
		if ctx.Err() != nil {
			break
		}
		if !s.retry.ready(t.ID, now) {
			continue
		}
		cctx := s.clocks.For(ctx, t.ClientID)
		cancelled, err := s.expireOne(cctx, t, s.clocks.At(cctx))
		if err != nil {
			s.retry.wait(t.ID, now.Add(expiryRetry))
			s.Log.WarnContext(ctx, "could not expire a charge at the PSP; trying again later", "charge", t.ID, "error", err.Error())
			continue
		}
		s.retry.done(t.ID)
		if cancelled {
			n++
		}
	}
	return n, nil
}

// expireOne settles the expired charge t with the PSP and reports whether
// it cancelled it.
func (s *Service) expireOne(ctx context.Context, t pix.Transaction, now time.Time) (bool, error) {
	cctx, cancel := context.WithTimeout(ctx, pspCallTimeout)
	defer cancel()
	if t.RecurrenceID != "" {
		// A cycle's charge is debited, not paid by a cob: its PSP says how
		// it ended.
		if _, err := s.db.Cycle(ctx, t.ID); err == nil {
			return s.expireCycle(cctx, t)
		} else if !errors.Is(err, store.ErrNotFound) {
			return false, err
		}
	}
	due := t.Due != nil
	pays, err := s.chargePayments(cctx, t.TxID, due)
	if errors.Is(err, errNoDueCharges) {
		s.Log.WarnContext(ctx, "a charge with a due date expired under a provider without them; cancelled here only", "charge", t.ID)
	}
	known := !errors.Is(err, provider.ErrNotFound)
	if err != nil && known {
		return false, err
	}
	if len(pays) > 0 {
		for _, p := range pays {
			if err := s.receiveConfirmed(ctx, p); err != nil {
				return false, err
			}
		}
		return false, nil
	}
	if known {
		if err := s.cancelAtProvider(cctx, t.TxID, due); err != nil {
			return false, fmt.Errorf("remove cob: %w", err)
		}
	}
	cancelled := false
	err = s.w.Write(ctx, func(tx *store.Tx, o *outbox.Events) error {
		cur, err := tx.TransactionForUpdate(ctx, t.ClientID, t.ID)
		if err != nil || cur.Status != pix.StatusPending {
			return err
		}
		cancelled = true
		return s.cancel(ctx, tx, o, &cur, now)
	})
	return cancelled, err
}

// backoffs remembers, per key, when a failed attempt may be tried again.
type backoffs struct {
	mu   sync.Mutex
	next map[string]time.Time
}

// ready reports whether key's wait is over; a wait that is over is
// forgotten, so that keys nobody asks about again do not pile up.
func (b *backoffs) ready(key string, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	until, ok := b.next[key]
	if ok && !now.Before(until) {
		delete(b.next, key)
	}
	return !now.Before(until)
}

func (b *backoffs) wait(key string, until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next == nil {
		b.next = make(map[string]time.Time)
	}
	b.next[key] = until
}

func (b *backoffs) done(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.next, key)
}

// errChanged marks a change another node, or a report of the PSP, made
// first: nothing to do.
var errChanged = transfer.ErrChanged
