package recurrence

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/pixgate/pixgate/internal/cashin"
	"github.com/pixgate/pixgate/internal/clock"
	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
)

// Every spaces the cycle job's runs (RunRecurrences) and the
// readings of the PSP's changed recurrences and cycle charges.
const Every = 5 * time.Second

// waitingRecheck spaces the readings of a recurrence whose payer let the
// approval window pass but that the PSP has not expired yet.
const waitingRecheck = 10 * time.Minute

// EventBody is the JSON body of a pix.recurrence.* webhook.
type EventBody struct {
	ID           string               `json:"id"`
	Event        string               `json:"event"`
	RecurrenceID string               `json:"recurrence_id"`
	ExternalID   string               `json:"external_id"`
	Status       pix.RecurrenceStatus `json:"status"`
	// CancelledBy is set on pix.recurrence.cancelled.
	CancelledBy *pix.CancelledBy `json:"cancelled_by,omitempty"`
	// PaymentID and Attempts are set on pix.recurrence.charge_failed: the
	// cycle's charge and how many debits of it failed.
	PaymentID  string `json:"payment_id,omitempty"`
	Attempts   *int   `json:"attempts,omitempty"`
	OccurredAt string `json:"occurred_at"`
}

// recurrenceEvents names the event of each status a recurrence moves to.
var recurrenceEvents = map[pix.RecurrenceStatus]string{
	pix.RecurrenceApproved:  pix.EventRecurrenceApproved,
	pix.RecurrenceRejected:  pix.EventRecurrenceRejected,
	pix.RecurrenceExpired:   pix.EventRecurrenceExpired,
	pix.RecurrenceCancelled: pix.EventRecurrenceCancelled,
	pix.RecurrenceFinished:  pix.EventRecurrenceFinished,
}

// emitRecurrence writes event for recurrence r (as it now is) into the outbox.
func (s *Service) emitRecurrence(ctx context.Context, tx *store.Tx, o *outbox.Events, r pix.Recurrence, event, paymentID string, attempts int, now time.Time) error {
	b := EventBody{ID: s.w.EventID(), Event: event, RecurrenceID: r.ID, ExternalID: r.ExternalID, Status: r.Status,
		PaymentID: paymentID, OccurredAt: pix.FormatTime(now)}
	if event == pix.EventRecurrenceCancelled {
		by := r.CancelledBy
		b.CancelledBy = &by
	}
	if event == pix.EventRecurrenceChargeFailed {
		b.Attempts = &attempts
	}
	payload, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("recurrence event payload: %w", err)
	}
	// Events name their subject in transaction_id: here the recurrence.
	return o.Insert(ctx, tx, pix.Event{ID: b.ID, ClientID: r.ClientID, TransactionID: r.ID, Type: event,
		URL: r.CallbackURL, Payload: string(payload), CreatedAt: now})
}

// moveRecurrence moves the locked recurrence r to status to, with its event.
func (s *Service) moveRecurrence(ctx context.Context, tx *store.Tx, o *outbox.Events, r pix.Recurrence, to pix.RecurrenceStatus, by pix.CancelledBy, now time.Time) error {
	if to != pix.RecurrenceCancelled {
		by = ""
	}
	ok, err := tx.SetRecurrenceStatus(ctx, r.ID, r.Status, to, by, now)
	if err != nil || !ok {
		return errors.Join(err, fmt.Errorf("recurrence %s: %w", r.ID, errChanged))
	}
	r.Status, r.CancelledBy = to, by
	if event, ok := recurrenceEvents[to]; ok {
		return s.emitRecurrence(ctx, tx, o, r, event, "", 0, now)
	}
	return nil
}

// finishIfDone finishes the locked recurrence r once its calendar is over
// (no cycle left) and no cycle charge is still PENDING.
func (s *Service) finishIfDone(ctx context.Context, tx *store.Tx, o *outbox.Events, r pix.Recurrence, now time.Time) error {
	if r.Status != pix.RecurrenceApproved || !r.NextDue.IsZero() {
		return nil
	}
	n, err := tx.PendingCycleCount(ctx, r.ID)
	if err != nil || n > 0 {
		return err
	}
	return s.moveRecurrence(ctx, tx, o, r, pix.RecurrenceFinished, "", now)
}

// Sync reads the recurrence pspID at the PSP and applies what it
// says (a webhook's report, read back before anything moves).
func (s *Service) Sync(ctx context.Context, pspID string) error {
	rec, err := s.recurrer()
	if err != nil {
		return err
	}
	st, err := rec.Recurrence(ctx, pspID)
	if err != nil {
		return fmt.Errorf("read recurrence %s: %w", pspID, err)
	}
	return s.applyRecurrence(ctx, st)
}

// applyRecurrence applies what the PSP (or the sandbox's payer) says of a
// recurrence: its approval, rejection, expiry or cancellation. A status
// the recurrence cannot move to changes nothing.
func (s *Service) applyRecurrence(ctx context.Context, st provider.RecurrenceState) error {
	r, err := s.db.RecurrenceByPSPID(ctx, st.ID)
	if errors.Is(err, store.ErrNotFound) {
		return s.orphanRecurrence(ctx, st)
	}
	if err != nil {
		return fmt.Errorf("recurrence %s: %w", st.ID, err)
	}
	if !r.Status.CanBecome(st.Status) {
		return nil
	}
	switch st.Status {
	case pix.RecurrenceApproved:
		now := s.clocks.At(ctx)
		return s.w.Write(ctx, func(tx *store.Tx, o *outbox.Events) error {
			cur, err := tx.RecurrenceForUpdate(ctx, r.ID)
			if err != nil || !cur.Status.CanBecome(st.Status) {
				return err
			}
			return s.moveRecurrence(ctx, tx, o, cur, st.Status, "", now)
		})
	case pix.RecurrenceCancelled:
		by := st.CancelledBy
		if by == "" {
			by = pix.CancelledByPayer
		}
		var withdrawn []string
		if rec, ok := s.psp.(provider.Recurrer); ok {
			if withdrawn, err = s.withdrawCycles(ctx, rec, r); err != nil {
				return fmt.Errorf("withdraw cycles of %s: %w", r.ID, err)
			}
		}
		return s.endRecurrence(ctx, r.ID, st.Status, by, withdrawn)
	case pix.RecurrenceRejected, pix.RecurrenceExpired:
		return s.endRecurrence(ctx, r.ID, st.Status, "", nil)
	}
	return nil
}

// orphanRecurrence handles a recurrence the PSP holds and no row of ours
// names: one a create registered at the PSP and then lost (the process
// died before storing it, or a later call of the create failed), or one
// withdrawn already. One the payer could still answer is withdrawn
// (CANCELADA), as an orphan cob is, once it is older than any create still
// under way (cashin.OrphanAge; the readings' overlap lists it for longer than
// that). A final one is left alone without a log line: the readings list
// it for minutes after its withdrawal, which was logged once.
func (s *Service) orphanRecurrence(ctx context.Context, st provider.RecurrenceState) error {
	if st.Status.Final() {
		return nil
	}
	if st.UpdatedAt.IsZero() || s.now().Sub(st.UpdatedAt) < cashin.OrphanAge {
		return nil // perhaps a create storing it right now
	}
	rec, err := s.recurrer()
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, cashin.PSPCallTimeout)
	defer cancel()
	if err := rec.CancelRecurrence(cctx, st.ID); err != nil && !errors.Is(err, provider.ErrNotFound) {
		return fmt.Errorf("withdraw recurrence %s that no recurrence holds: %w", st.ID, err)
	}
	s.log.WarnContext(ctx, "withdrew at the PSP a recurrence that no recurrence holds", "psp_id", st.ID)
	return nil
}

// cycleTxID is the txid of cycle n of recurrence id: derived, so that a
// cycle registered at the PSP by a node that died before storing it is
// registered again under the same txid, which the PSP takes as the same
// charge.
func cycleTxID(id string, n int) string {
	sum := sha256.Sum256([]byte(id + "/" + strconv.Itoa(n)))
	return hex.EncodeToString(sum[:])[:32]
}

// CyclesReading names the cycle job's claim (store.DB.ClaimReading).
const CyclesReading = "recurrence-cycles"

// RunCycles is the cycle job: on one node at a time, at most every
// Every, it reads the recurrences whose payer let the approval
// window pass, creates the charge of every cycle whose window has opened,
// and asks the PSP for the retries failed debits are owed. limit bounds
// each part; it returns how many cycle charges it created.
func (s *Service) RunCycles(ctx context.Context, limit int) (int, error) {
	rec, ok := s.psp.(provider.Recurrer)
	if !ok {
		return 0, nil
	}
	now := s.now()
	if _, ok, err := s.db.ClaimReading(ctx, CyclesReading, now, now.Add(Every), now); err != nil || !ok {
		return 0, err
	}
	var errs []error
	waiting, err := s.db.WaitingRecurrences(ctx, now.Add(-pix.ApprovalDays*24*time.Hour), limit)
	errs = append(errs, err)
	waiting = clock.Each(s.clocks, ctx, waiting, func(r pix.Recurrence) string { return r.ID },
		func(ctx context.Context, c store.ClientClock, at time.Time) ([]pix.Recurrence, error) {
			return s.db.ClientWaitingRecurrences(ctx, c.ClientID, at.Add(-pix.ApprovalDays*24*time.Hour), limit)
		})
	for _, r := range waiting {
		// A PSP that has not expired it yet is asked again later, not at
		// every run.
		if !s.retry.Ready(r.ID, now) {
			continue
		}
		s.retry.Wait(r.ID, now.Add(waitingRecheck))
		errs = append(errs, s.Sync(s.clocks.For(ctx, r.ClientID), r.PSPID))
	}
	due, err := s.db.DueRecurrences(ctx, s.clocks.Today(ctx).AddDays(pix.ChargeOpensDays), limit)
	errs = append(errs, err)
	due = clock.Each(s.clocks, ctx, due, func(r pix.Recurrence) string { return r.ID },
		func(ctx context.Context, c store.ClientClock, at time.Time) ([]pix.Recurrence, error) {
			return s.db.ClientDueRecurrences(ctx, c.ClientID, s.clocks.DateOf(at).AddDays(pix.ChargeOpensDays), limit)
		})
	created := 0
	for _, r := range due {
		if ctx.Err() != nil {
			break
		}
		t, err := s.createCycle(s.clocks.For(ctx, r.ClientID), rec, r, false)
		if err != nil && !errors.Is(err, errChanged) {
			errs = append(errs, fmt.Errorf("cycle %d of %s: %w", r.NextCycle, r.ID, err))
		}
		if t.ID != "" {
			created++
		}
	}
	retries, err := s.db.CyclesToRetry(ctx, limit)
	errs = append(errs, err)
	for _, cy := range retries {
		errs = append(errs, s.askRetry(ctx, rec, cy))
	}
	return created, errors.Join(errs...)
}

// errNoCycle: the recurrence has no cycle left to create.
var errNoCycle = errors.New("no cycle left")

// createCycle creates the charge of r's next cycle: at the PSP first
// (idempotent by its derived txid), then here, in one transaction that
// moves r's calendar on with a guarded update, so that a cycle is created
// once however many nodes or restarts try. A cycle whose charge window
// closed before it could be created (the recurrence was approved late, or
// the PSP was away for days) is skipped, as is one the PSP refuses; force
// (the sandbox's next-cycle action) ignores the window and reports a
// refusal. The zero Transaction is returned for a skipped cycle.
func (s *Service) createCycle(ctx context.Context, rec provider.Recurrer, r pix.Recurrence, force bool) (pix.Transaction, error) {
	n, due := r.NextCycle, r.NextDue
	if due.IsZero() {
		return pix.Transaction{}, errNoCycle
	}
	_, closes := pix.ChargeWindow(due)
	skip := !force && s.clocks.Today(ctx).After(closes)
	txid := cycleTxID(r.ID, n)
	if !skip {
		err := rec.CreateCycleCharge(ctx, provider.CycleCharge{TxID: txid, RecurrenceID: r.PSPID, DueDate: due, Amount: r.Amount,
			Payer: provider.DuePayer{Name: r.Payer.Name, Document: r.Payer.Document}, Info: r.Description})
		switch {
		case errors.Is(err, provider.ErrRejected) && force:
			return pix.Transaction{}, pix.Errorf(pix.EUnprocessable, "The payment provider refused the cycle's charge")
		case errors.Is(err, provider.ErrRejected):
			// The PSP refuses the charge of a recurrence the payer
			// cancelled: its word is read back first, so that the
			// cancellation wins over skipping the cycle (and finishing).
			if moved, rerr := s.recurrenceMoved(ctx, rec, r); rerr != nil || moved {
				return pix.Transaction{}, errors.Join(rerr, errChanged)
			}
			s.log.WarnContext(ctx, "the PSP refused a cycle's charge; the cycle is skipped", "recurrence", r.ID, "cycle", n, "error", err.Error())
			skip = true
		case err != nil:
			return pix.Transaction{}, err
		}
	} else {
		s.log.WarnContext(ctx, "a cycle's charge window closed before its charge was created; the cycle is skipped",
			"recurrence", r.ID, "cycle", n, "due_date", due.String())
	}
	next, ok := r.Schedule.Due(n + 1)
	if !ok {
		next = pix.Date{}
	}
	now := s.clocks.At(ctx)
	var t pix.Transaction
	err := s.w.Write(ctx, func(tx *store.Tx, o *outbox.Events) error {
		t = pix.Transaction{}
		if !skip {
			c, err := tx.Client(ctx, r.ClientID)
			if err != nil {
				return fmt.Errorf("client of recurrence %s: %w", r.ID, err)
			}
			details, err := json.Marshal(struct {
				Payer       pix.RecurrencePayer `json:"payer"`
				Description string              `json:"description"`
				Cycle       int                 `json:"cycle"`
			}{r.Payer, r.Description, n})
			if err != nil {
				return err
			}
			t = pix.NewCashIn(s.w.NewID(), c, r.Amount, txid, now, pix.CycleExpiresAt(r.Retry, due, s.clocks.Loc).UTC())
			t.RequestHash, t.CallbackURL, t.Details, t.RecurrenceID = "cycle", r.CallbackURL, string(details), r.ID
			if err := tx.CreateTransaction(ctx, t); err != nil {
				return err
			}
			// A cycle's charge is split as its recurrence is.
			splits, err := tx.Splits(ctx, r.ID)
			if err != nil {
				return err
			}
			if err := tx.InsertSplits(ctx, t.ID, splits); err != nil {
				return err
			}
			if err := tx.InsertCycle(ctx, pix.Cycle{PaymentID: t.ID, RecurrenceID: r.ID, Number: n, DueDate: due, UpdatedAt: now}); err != nil {
				return err
			}
		}
		ok, err := tx.AdvanceRecurrence(ctx, r.ID, n, n+1, next, now)
		if err != nil || !ok {
			return errors.Join(err, errChanged)
		}
		if !next.IsZero() {
			return nil
		}
		cur, err := tx.RecurrenceForUpdate(ctx, r.ID)
		if err != nil {
			return err
		}
		return s.finishIfDone(ctx, tx, o, cur, now)
	})
	if errors.Is(err, store.ErrConflict) {
		err = errChanged // another node stored this cycle first
	}
	if err != nil {
		return pix.Transaction{}, fmt.Errorf("create cycle: %w", err)
	}
	return t, nil
}

// recurrenceMoved reads r back at the PSP and applies what it says; it
// reports whether the PSP no longer holds r APPROVED (cancelled by the
// payer, for one), in which case r's calendar must not move on.
func (s *Service) recurrenceMoved(ctx context.Context, rec provider.Recurrer, r pix.Recurrence) (bool, error) {
	st, err := rec.Recurrence(ctx, r.PSPID)
	if err != nil {
		return false, fmt.Errorf("read recurrence %s back: %w", r.ID, err)
	}
	if st.Status == pix.RecurrenceApproved {
		return false, nil
	}
	if err := s.applyRecurrence(ctx, st); err != nil {
		return true, err
	}
	return true, nil
}

// SyncCycle reads the cycle charge txid at the PSP and applies what it
// says (a webhook's report, read back before anything moves).
func (s *Service) SyncCycle(ctx context.Context, txid string) error {
	rec, err := s.recurrer()
	if err != nil {
		return err
	}
	st, err := rec.CycleCharge(ctx, txid)
	if err != nil {
		return fmt.Errorf("read cycle charge %s: %w", txid, err)
	}
	return s.applyCycle(ctx, st)
}

// applyCycle applies what the PSP says of a cycle's charge: its payments
// are confirmed and credited first (money moves only on a confirmed Pix,
// once); then its attempts are counted, a failed debit owed a retry gets
// one scheduled (askRetry), and a charge that failed for good, or was
// cancelled, is CANCELLED with pix.cashin.cancelled (and, when it failed,
// pix.recurrence.charge_failed).
func (s *Service) applyCycle(ctx context.Context, st provider.CycleState) error {
	t, err := s.db.TransactionByTxID(ctx, st.TxID)
	if errors.Is(err, store.ErrNotFound) {
		s.log.WarnContext(ctx, "the PSP reported a cycle charge pixgate does not hold", "txid", st.TxID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("cycle charge %s: %w", st.TxID, err)
	}
	cy, err := s.db.Cycle(ctx, t.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // a charge of ours, but no cycle's
	}
	if err != nil {
		return fmt.Errorf("cycle of %s: %w", t.ID, err)
	}
	if err := s.receiveCyclePayments(ctx, t, st.Payments); err != nil {
		return err
	}
	r, err := s.db.Recurrence(ctx, t.ClientID, cy.RecurrenceID)
	if err != nil {
		return fmt.Errorf("recurrence of %s: %w", t.ID, err)
	}
	attempts, failed, scheduled, lastFailed := countAttempts(st.Attempts)
	status := st.Status
	var retryOn pix.Date
	if status == provider.CyclePending && lastFailed && !scheduled {
		// Retries count from the first debit, which a PSP moves off a
		// weekend or holiday to the next business day.
		first := cy.DueDate
		if len(st.Attempts) > 0 && !st.Attempts[0].Date.IsZero() {
			first = st.Attempts[0].Date
		}
		retryOn = s.retryDay(ctx, r.Retry, first, failed)
		if retryOn.IsZero() {
			status = provider.CycleFailed // no retry left
		}
	}
	return s.settleCycle(ctx, t, cy, r.ID, status, attempts, retryOn)
}

// settleCycle records where cycle cy's charge t stands — status, with
// the debits attempted and the day of the retry owed — in one
// transaction with the charge's cancellation when it failed for good or
// was cancelled, and the recurrence's end when that was its last cycle.
func (s *Service) settleCycle(ctx context.Context, t pix.Transaction, cy pix.Cycle, recurrenceID string, status provider.CycleStatus,
	attempts int, retryOn pix.Date) error {
	now := s.clocks.At(ctx)
	err := s.w.Write(ctx, func(tx *store.Tx, o *outbox.Events) error {
		cur, err := tx.TransactionByIDForUpdate(ctx, t.ID)
		if err != nil {
			return err
		}
		rec, err := tx.RecurrenceForUpdate(ctx, recurrenceID)
		if err != nil {
			return err
		}
		n := max(cy.Attempts, attempts)
		switch status {
		case provider.CyclePending:
			if cur.Status == pix.StatusPending {
				return tx.UpdateCycle(ctx, t.ID, n, retryOn, now)
			}
			return nil
		case provider.CycleFailed, provider.CycleCancelled:
			if err := tx.UpdateCycle(ctx, t.ID, n, pix.Date{}, now); err != nil || cur.Status != pix.StatusPending {
				return err
			}
			if err := s.cashin.Cancel(ctx, tx, o, &cur, now); err != nil {
				return err
			}
			if status == provider.CycleFailed {
				if err := s.emitRecurrence(ctx, tx, o, rec, pix.EventRecurrenceChargeFailed, t.ID, n, now); err != nil {
					return err
				}
			}
		default:
			if err := tx.UpdateCycle(ctx, t.ID, n, pix.Date{}, now); err != nil {
				return err
			}
		}
		return s.finishIfDone(ctx, tx, o, rec, now)
	})
	if err != nil {
		return fmt.Errorf("apply cycle charge %s: %w", t.ID, err)
	}
	return nil
}

// receiveCyclePayments credits the payments the PSP reports for cycle
// charge t, each confirmed at the PSP first.
func (s *Service) receiveCyclePayments(ctx context.Context, t pix.Transaction, pays []provider.Payment) error {
	for _, p := range pays {
		confirmed, err := s.psp.ConfirmPayment(ctx, p.EndToEndID)
		if errors.Is(err, provider.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("confirm payment of cycle charge %s: %w", t.ID, err)
		}
		if err := s.cashin.Receive(ctx, confirmed); err != nil {
			return err
		}
	}
	return nil
}

// countAttempts counts a cycle charge's debit attempts as its PSP reports
// them: made, failed, whether one is scheduled, and whether the last made
// failed.
func countAttempts(as []provider.Attempt) (attempts, failed int, scheduled, lastFailed bool) {
	for _, a := range as {
		switch a.Status {
		case provider.AttemptPaid:
			attempts++
			lastFailed = false
		case provider.AttemptFailed:
			attempts++
			failed++
			lastFailed = true
		case provider.AttemptScheduled:
			scheduled = true
		}
	}
	return attempts, failed, scheduled, lastFailed
}

// retryDay is the day of the retry owed after failed debits of a cycle
// first debited on due under policy p: the failed-th retry day, or a later one if that
// one is already past (only days after today can still be asked for); zero
// when none is left.
func (s *Service) retryDay(ctx context.Context, p pix.RetryPolicy, due pix.Date, failed int) pix.Date {
	days := pix.RetryDays(p, due)
	today := s.clocks.Today(ctx)
	for i := failed - 1; i >= 0 && i < len(days); i++ {
		if days[i].After(today) {
			return days[i]
		}
	}
	return pix.Date{}
}

// askRetry asks the PSP for the retry owed to cycle cy and applies the
// state it answers; a refusal is read back and applied.
func (s *Service) askRetry(ctx context.Context, rec provider.Recurrer, cy pix.Cycle) error {
	t, err := s.db.TransactionByID(ctx, cy.PaymentID)
	if err != nil {
		return fmt.Errorf("cycle charge %s: %w", cy.PaymentID, err)
	}
	ctx = s.clocks.For(ctx, t.ClientID)
	if t.Status != pix.StatusPending {
		return s.db.Write(ctx, func(tx *store.Tx) error { return tx.UpdateCycleRetry(ctx, t.ID, pix.Date{}, s.clocks.At(ctx)) })
	}
	st, err := rec.RetryCycleCharge(ctx, t.TxID, cy.RetryOn)
	if errors.Is(err, provider.ErrRejected) {
		st, err = rec.CycleCharge(ctx, t.TxID)
	}
	if err != nil {
		return fmt.Errorf("retry of cycle charge %s: %w", t.ID, err)
	}
	return s.applyCycle(ctx, st)
}

// CycleCredited records, in the transaction that credited charge t, the
// paid debit of t's cycle (when t is a cycle's charge) and finishes the
// recurrence if that was its last cycle.
func (s *Service) CycleCredited(ctx context.Context, tx *store.Tx, o *outbox.Events, t pix.Transaction, now time.Time) error {
	cy, err := tx.Cycle(ctx, t.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // a journey-3 first payment
	}
	if err != nil {
		return err
	}
	if err := tx.UpdateCycle(ctx, t.ID, cy.Attempts+1, pix.Date{}, now); err != nil {
		return err
	}
	r, err := tx.RecurrenceForUpdate(ctx, cy.RecurrenceID)
	if err != nil {
		return err
	}
	return s.finishIfDone(ctx, tx, o, r, now)
}

// ExpireCycle settles a cycle's charge past its last attempt day with the
// PSP: what the PSP says is applied; one the PSP does not know (the
// sandbox's, which no payer debited) failed. One the PSP still holds open
// waits for its word.
func (s *Service) ExpireCycle(ctx context.Context, t pix.Transaction) (bool, error) {
	rec, err := s.recurrer()
	if err != nil {
		return false, err
	}
	st, err := rec.CycleCharge(ctx, t.TxID)
	switch {
	case errors.Is(err, provider.ErrNotFound):
		// No debit of it was ever made, so none can still come: it
		// failed, by the calendar, not by a state the PSP reported.
		cy, err := s.db.Cycle(ctx, t.ID)
		if err != nil {
			return false, fmt.Errorf("cycle of %s: %w", t.ID, err)
		}
		if err := s.settleCycle(ctx, t, cy, cy.RecurrenceID, provider.CycleFailed, 0, pix.Date{}); err != nil {
			return false, err
		}
	case err != nil:
		return false, err
	case st.Status == provider.CyclePending && len(st.Payments) == 0:
		return false, fmt.Errorf("cycle charge %s is past its last day and still open at the PSP", t.ID)
	default:
		if err := s.applyCycle(ctx, st); err != nil {
			return false, err
		}
	}
	cur, err := s.db.TransactionByID(ctx, t.ID)
	return err == nil && cur.Status == pix.StatusCancelled, err
}

// Read reads the PSP's lists of recurrences and of cycle
// charges that changed since the last reading (and a little before), and
// applies each, so that nothing waits on a webhook. One node reads at a
// time, at most every Every. limit is unused.
func (s *Service) Read(ctx context.Context, _ int) (int, error) {
	rec, ok := s.psp.(provider.Recurrer)
	if !ok {
		return 0, nil
	}
	now := s.now()
	from, ok, err := s.db.ClaimReading(ctx, "recurrences", now, now.Add(Every), now.Add(-cashin.FirstReading))
	if err != nil || !ok {
		return 0, err
	}
	cctx, cancel := context.WithTimeout(ctx, Every+cashin.PSPCallTimeout)
	defer cancel()
	recs, err := rec.RecurrencesChanged(cctx, from.Add(-cashin.ReadOverlap), now)
	if err != nil {
		return 0, fmt.Errorf("read changed recurrences: %w", err)
	}
	var errs []error
	for _, st := range recs {
		errs = append(errs, s.applyRecurrence(ctx, st))
	}
	cycles, err := rec.CycleChargesChanged(cctx, from.Add(-cashin.ReadOverlap), now)
	if err != nil {
		return len(recs), errors.Join(append(errs, fmt.Errorf("read changed cycle charges: %w", err))...)
	}
	for _, st := range cycles {
		errs = append(errs, s.applyCycle(ctx, st))
	}
	if err := errors.Join(errs...); err != nil {
		return len(recs) + len(cycles), err
	}
	return len(recs) + len(cycles), s.db.SetReadUntil(ctx, "recurrences", now)
}

// Reported handles a PSP webhook's report of recurrences
// (webhookrec): each is read back from the PSP and what it says applied.
func (s *Service) Reported(ctx context.Context, pspIDs []string) error {
	var errs []error
	for _, id := range pspIDs {
		err := s.Sync(ctx, id)
		if errors.Is(err, provider.ErrNotFound) {
			// As for a Pix: a report of what the PSP does not know moves
			// nothing, and answering it as taken stops the PSP resending it.
			s.log.WarnContext(ctx, "a PSP webhook reported a recurrence the PSP does not know; nothing moved", "psp_id", id)
			continue
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// CyclesReported handles a PSP webhook's report of cycle charges
// (webhookcobr): each is read back from the PSP and what it says applied.
func (s *Service) CyclesReported(ctx context.Context, txids []string) error {
	var errs []error
	for _, txid := range txids {
		err := s.SyncCycle(ctx, txid)
		if errors.Is(err, provider.ErrNotFound) {
			s.log.WarnContext(ctx, "a PSP webhook reported a cycle charge the PSP does not know; nothing moved", "txid", txid)
			continue
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
