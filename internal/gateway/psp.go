package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/pixgate/pixgate/internal/brcode"
	"github.com/pixgate/pixgate/internal/clock"
	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
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
	// pspCallTimeout bounds one call to the PSP, unless the provider says
	// otherwise (provider.Capabilities.CallTimeout).
	pspCallTimeout = 15 * time.Second
	// pollFirst and pollMax bound the backoff between readings of a
	// transfer's status, and between retries after an unknown outcome.
	pollFirst = time.Second
	pollMax   = 30 * time.Second
	// maxRateWait bounds how long a transfer waits on a PSP's 429, whatever
	// its Retry-After says.
	maxRateWait = time.Minute
	// expiryRetry spaces the attempts to cancel an expired charge at a PSP
	// that did not answer.
	expiryRetry = 30 * time.Second
	// pspWorkers is how many payouts (or refunds) one node takes a step of
	// at once. A step waits mostly on the PSP, so the send rate is about
	// pspWorkers / the PSP's latency until the database or the CPU is the
	// bound: 16 sent 104 payouts/s to a PSP taking 150 ms per call, against
	// 1,927/s to one answering at once (docs/decisions.md).
	pspWorkers = 512
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
	for b.Len() < s.caps.TxIDLength {
		id, err := brcode.NewTxID(s.Rand)
		if err != nil {
			return "", err
		}
		b.WriteString(id)
	}
	return b.String()[:s.caps.TxIDLength], nil
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
		return s.Provider.ChargePayments(ctx, txid)
	}
	dc, ok := s.Provider.(provider.DueCharger)
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
		return s.Provider.CancelCharge(ctx, txid)
	}
	dc, ok := s.Provider.(provider.DueCharger)
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
		p, err := s.Provider.ConfirmPayment(cctx, r.EndToEndID)
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
	if err := s.sendsReported(ctx, sends); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// sendsReported reads back the payouts whose sends (their ids at the PSP,
// the payout's UUID without dashes) a webhook reported, and finishes each
// one the PSP itself reports final, as a reading of the payout on its own
// would: a payout finishes as soon as the PSP says so rather than at its
// next reading. The report says nothing by itself: an id that names no
// payout still waiting on the PSP is ignored, and what the PSP answers is
// all that is written, guarded by the row as read.
func (s *Service) sendsReported(ctx context.Context, sendIDs []string) error {
	var ids []string
	seen := make(map[string]bool, len(sendIDs))
	for _, h := range sendIDs {
		// A payout is sent under its UUID's 32 hex digits (provider.HexID),
		// which uuid.Parse reads back.
		u, err := uuid.Parse(h)
		id, ok := u.String(), err == nil && len(h) == 32
		if !ok {
			s.Log.WarnContext(ctx, "a PSP webhook reported a send that is no payout's; ignored")
			continue
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := s.db.PendingPayouts(ctx, ids)
	if err != nil {
		return fmt.Errorf("reported sends: %w", err)
	}
	_, err = eachN(ctx, pspWorkers, rows, func(t pix.Transaction) (int, error) {
		tr, err := payoutTransfer(t)
		if err != nil {
			return 0, err
		}
		cctx, cancel := context.WithTimeout(ctx, pspCallTimeout)
		st, err := s.Provider.Status(cctx, tr)
		cancel()
		if errors.Is(err, provider.ErrNotFound) {
			s.Log.WarnContext(ctx, "a PSP webhook reported a send the PSP does not find; left to its readings", "payout", t.ID)
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("read reported payout %s: %w", t.ID, err)
		}
		if st.Status != provider.Completed && st.Status != provider.Failed && st.Status != provider.Returned {
			return 0, nil // still processing: read again on its schedule
		}
		it := sendItem{id: t.ID, state: t.SendState, settleAt: t.SettleAt, payout: t, transfer: tr}
		return s.finishSend(ctx, it, store.SendStep{ID: t.ID, WasState: t.SendState, WasSettleAt: t.SettleAt}, st)
	})
	return err
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
			return s.finishRefund(ctx, tx, o, r, c, rs, now)
		})
		if err != nil && !errors.Is(err, errChanged) {
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
	pays, err := s.Provider.Received(cctx, from.Add(-readOverlap), now)
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

// sendItem is a payout, refund or return of an unmatched receipt due for
// a step with the PSP.
type sendItem struct {
	refund    bool
	unmatched bool // the return of an unmatched receipt
	id        string
	state     string
	settleAt  time.Time
	attempts  int
	transfer  provider.Transfer
	// chargeID, for a refund: the charge whose payment it returns (its
	// end-to-end id is read at the step).
	chargeID string
	// clientID, for a refund: its client, whose clock it runs on.
	clientID string
	// stray: a row with no send state to take (see unschedule).
	stray bool
	// payout is the payout's row as read, when it is one: its finish is
	// guarded by the row's send state, so it need not be read again.
	payout pix.Transaction
}

// client is the id of the client whose transfer it is ("" for the return
// of an unmatched receipt, which no client's clock times).
func (it sendItem) client() string {
	if it.payout.ClientID != "" {
		return it.payout.ClientID
	}
	return it.clientID
}

// errChanged marks a step another node, or a report of the PSP, took
// first: nothing to do.
var errChanged = errors.New("changed concurrently")

// errStillSent marks a transfer the PSP accepted but cannot find now: it
// is never sent again, only read again later.
var errStillSent = errors.New("the PSP accepted this transfer but does not find it now")

// errSendRefused marks a transfer the PSP refused and does not know: final.
var errSendRefused = errors.New("refused by the PSP")

// unschedule stops the payout or refund of st (ID, Refund, WasState,
// WasSettleAt), which has no send state (a version before every provider
// shared the send path settled it in its own way), from being due again:
// it is left for an operator rather than sent to whatever PSP runs now.
func (s *Service) unschedule(ctx context.Context, st store.SendStep) error {
	s.Log.WarnContext(ctx, "a transfer not sent through this PSP is left as it is", "id", st.ID, "refund", st.Refund)
	st.State, st.Next = st.WasState, time.Time{}
	_, err := s.stepSend(ctx, st)
	return err
}

// advance takes one step of a transfer with the PSP. The step is claimed
// first by a committed update that also moves a never-sent transfer to
// "unknown": whatever happens to this process during the send, the next
// step reads the PSP before it sends again. It returns 1 if the transfer
// reached its final state. A step the PSP refused for its rate (429) did
// nothing at the PSP: the transfer goes back to the state it was claimed
// from, due after the PSP's wait, and the step is not counted among the
// attempts that polling backs off on.
func (s *Service) advance(ctx context.Context, it sendItem) (int, error) {
	claimed := it.state
	if claimed == store.SendToSend {
		claimed = store.SendUnknown
	}
	// The hold outlasts the step's calls (twice their bound), so that no
	// other node reads "unknown to the PSP" while a send is in flight.
	stepTimeout := s.caps.CallTimeout
	if stepTimeout <= 0 {
		stepTimeout = pspCallTimeout
	}
	held := store.SendStep{Refund: it.refund, Unmatched: it.unmatched, ID: it.id, WasState: it.state, WasSettleAt: it.settleAt, Attempt: true}
	if it.state != store.SendSent {
		// A step that may send is claimed first (the claims of the same
		// moment are one statement: store.DB.StepSendGrouped). A step that
		// only reads a transfer the PSP accepted is not: two nodes reading
		// it at once cost a call, and its outcome is written guarded by
		// the row as read, so only one of them writes it.
		// The claim holds the row rather than moving its settle_at, which
		// the due-work index covers: on PostgreSQL it is then a HOT update.
		now := s.now()
		lease := now.Add(2 * stepTimeout)
		ok, err := s.stepSend(ctx, store.SendStep{Refund: it.refund, Unmatched: it.unmatched, ID: it.id, WasState: it.state,
			WasSettleAt: it.settleAt, State: claimed, Hold: lease, Now: now})
		if err != nil || !ok {
			return 0, err // another node took this step
		}
		held.WasState, held.Held = claimed, lease
	}
	cctx, cancel := context.WithTimeout(ctx, stepTimeout)
	st, err := s.exchange(cctx, it.state, it.transfer)
	cancel()
	delay := backoff(it.attempts + 1)
	// kind names the transfer in logs (its key holds the id); noun in text.
	kind, noun, refusal := "payout", "payout", "it fails"
	switch {
	case it.refund:
		kind, noun = "refund", "refund"
	case it.unmatched:
		kind, noun, refusal = "unmatched_receipt", "return of an unmatched receipt", "it is held for an operator"
	}
	switch {
	case errors.Is(err, provider.ErrRateLimited):
		// Every call of the step before the 429 was a read or a refused
		// PUT, so the claimed-from state is still true; a never-sent
		// transfer is then sent without a GET first.
		wait := rateLimitWait(err)
		s.Log.InfoContext(ctx, "the PSP limited its rate; the "+noun+" waits and is taken up again", kind, it.id, "retry_after", wait.String())
		held.State, held.Next, held.Attempt = it.state, s.clocks.At(ctx).Add(wait), false
		_, err := s.stepSend(ctx, held)
		return 0, err
	case errors.Is(err, errSendRefused):
		s.Log.WarnContext(ctx, "the PSP refused a "+noun+"; "+refusal, kind, it.id, "error", err.Error())
		return s.finishSend(ctx, it, held, provider.TransferState{ID: it.id, Status: provider.Failed})
	case errors.Is(err, errStillSent):
		s.Log.WarnContext(ctx, "the PSP does not find a "+noun+" it accepted; reading it again later", kind, it.id)
		held.State, held.Next = store.SendSent, s.clocks.At(ctx).Add(pollMax)
		_, err := s.stepSend(ctx, held)
		return 0, err
	case err != nil:
		s.Log.WarnContext(ctx, "the outcome of a "+noun+" at the PSP is unknown; its status is read before any resend",
			kind, it.id, "error", err.Error())
		// A transfer the PSP accepted stays accepted: it is read again,
		// never sent.
		held.State, held.Next = store.SendUnknown, s.clocks.At(ctx).Add(delay)
		if it.state == store.SendSent {
			held.State = store.SendSent
		}
		_, err := s.stepSend(ctx, held)
		return 0, err
	case st.Status == provider.Completed || st.Status == provider.Failed || st.Status == provider.Returned:
		return s.finishSend(ctx, it, held, st)
	}
	if _, lists := s.Provider.(provider.SentLister); lists && !it.refund && !it.unmatched {
		// The list of sent payouts (ReadSent) will usually settle it first.
		delay = max(delay, listedFirstRead)
	}
	held.State, held.Next, held.EndToEndID = store.SendSent, s.nextRead(ctx, st, delay), st.EndToEndID
	_, err = s.stepSend(ctx, held)
	return 0, err
}

// exchange is the PSP side of one step from state: send a transfer never
// sent; read one whose send's outcome is unknown, and send it only if the
// PSP does not know it; read one the PSP accepted.
func (s *Service) exchange(ctx context.Context, state string, t provider.Transfer) (provider.TransferState, error) {
	switch state {
	case store.SendToSend:
		return s.send(ctx, t)
	case store.SendUnknown:
		st, err := s.Provider.Status(ctx, t)
		if errors.Is(err, provider.ErrNotFound) {
			return s.send(ctx, t)
		}
		return st, err
	}
	st, err := s.Provider.Status(ctx, t)
	if errors.Is(err, provider.ErrNotFound) {
		return st, errStillSent
	}
	return st, err
}

// send sends t. A refusal is final only if the PSP does not know t: the
// API Pix also refuses a reused devolução id, which a resend after a lost
// answer would be.
func (s *Service) send(ctx context.Context, t provider.Transfer) (provider.TransferState, error) {
	st, err := s.Provider.Send(ctx, t)
	if !errors.Is(err, provider.ErrRejected) && !errors.Is(err, provider.ErrUnsupported) {
		return st, err
	}
	known, serr := s.Provider.Status(ctx, t)
	if errors.Is(serr, provider.ErrNotFound) {
		return provider.TransferState{}, fmt.Errorf("%w: %w", errSendRefused, err)
	}
	return known, serr
}

// stepSend applies one guarded step in a transaction of its own.
func (s *Service) stepSend(ctx context.Context, st store.SendStep) (bool, error) {
	ok, err := s.db.StepSendGrouped(ctx, st)
	if err != nil {
		return false, fmt.Errorf("send step: %w", err)
	}
	return ok, nil
}

// finishSend records the final state st of a transfer held by this node
// (held) in one transaction: the step, the status, the posting and the
// event; it returns 1 if it moved the transfer's status. If the hold was
// lost, nothing is written. A payout the PSP reports completed but due to
// change (st.ReadAt: it will be returned) is PAID and stays sent, to be
// read again then.
func (s *Service) finishSend(ctx context.Context, it sendItem, held store.SendStep, st provider.TransferState) (int, error) {
	now := s.clocks.At(ctx)
	step := held
	step.State, step.Next, step.EndToEndID = store.SendDone, time.Time{}, st.EndToEndID
	if !it.refund && !it.unmatched && st.Status == provider.Completed && !st.ReadAt.IsZero() {
		step.State, step.Next = store.SendSent, s.nextRead(ctx, st, pollMax)
	}
	if !it.refund && !it.unmatched {
		t := it.payout
		if t.ID == "" {
			var err error
			if t, err = s.db.TransactionByID(ctx, it.id); err != nil {
				return 0, fmt.Errorf("finish %s: %w", it.id, err)
			}
		}
		ok, err := s.payoutFinishes.Do(ctx, payoutFinish{t: t, step: step, st: st})
		if err != nil || !ok {
			return 0, err // not applied: another node or step finished it
		}
		return 1, nil
	}
	err := s.w.WriteGrouped(ctx, func(tx *store.Tx, o *outbox.Events) error {
		ok, err := tx.StepSend(ctx, step)
		if err != nil || !ok {
			return errors.Join(err, errChanged)
		}
		if it.unmatched {
			return s.finishUnmatched(ctx, tx, it.id, st, now)
		}
		r, err := tx.RefundForUpdate(ctx, it.id)
		if err != nil {
			return err
		}
		charge, err := tx.TransactionForUpdate(ctx, r.ClientID, r.TransactionID)
		if err != nil {
			return err
		}
		return s.finishRefund(ctx, tx, o, r, charge, st, now)
	})
	if errors.Is(err, errChanged) {
		return 0, nil // another node or the PSP's webhook finished it
	}
	if err != nil {
		return 0, fmt.Errorf("finish %s: %w", it.id, err)
	}
	return 1, nil
}

// nextRead is when a transfer the PSP left st is read again: when the
// PSP expects it to change, if it said, else after wait.
func (s *Service) nextRead(ctx context.Context, st provider.TransferState, wait time.Duration) time.Time {
	now := s.clocks.At(ctx)
	if st.ReadAt.IsZero() {
		return now.Add(wait)
	}
	at := st.ReadAt.UTC().Truncate(time.Millisecond)
	if at.Before(now) {
		return now
	}
	return at
}

// rateLimitWait is how long a transfer waits after the PSP's 429 err: the
// PSP's Retry-After (pollFirst when it gave none), at most maxRateWait.
func rateLimitWait(err error) time.Duration {
	d, _ := provider.RetryAfter(err)
	if d <= 0 {
		d = pollFirst
	}
	return min(d, maxRateWait)
}

// backoff is the wait before the n-th reading of a transfer (n ≥ 1):
// pollFirst, doubling, at most pollMax.
func backoff(n int) time.Duration {
	d := pollFirst
	for i := 1; i < n && d < pollMax; i++ {
		d *= 2
	}
	return min(d, pollMax)
}
