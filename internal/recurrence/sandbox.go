package recurrence

import (
	"context"
	"errors"
	"fmt"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
)

// Sandbox is the sandbox payer's actions on recurrences: approve, reject
// or cancel as the payer, fail a debit, and create the next cycle at once.
// It exists only in the sandbox with a provider whose payers answer on
// request (provider.RecurrencePayer); a nil Sandbox answers every action
// ENotFound.
type Sandbox struct {
	s     *Service
	payer provider.RecurrencePayer
	pay   func(ctx context.Context, charge pix.Transaction) (pix.Transaction, error)
}

// Sandbox actions on a recurrence (docs/recurrences.md, Sandbox).
const (
	SandboxApprove       = "approve"
	SandboxReject        = "reject"
	SandboxCancelByPayer = "cancel-by-payer"
)

// Get acts as the sandbox's payer on client c's recurrence
// id: approve (paying the first payment, when there is one, through the
// pay action's path), reject, or cancel-by-payer. The payer's answer is
// applied as a PSP's report of it is. Errors: ENotFound, EUnprocessable
// (the recurrence's status does not allow the action).
func (x *Sandbox) Answer(ctx context.Context, c pix.Client, id, action string) (View, error) {
	if x == nil {
		return View{}, pix.Errorf(pix.ENotFound, msgRecurrenceNotFound)
	}
	s := x.s
	r, err := s.loadRecurrence(ctx, c, id)
	if err != nil {
		return View{}, err
	}
	payer := x.payer
	var answer func() (provider.RecurrenceState, error)
	switch action {
	case SandboxApprove, SandboxReject:
		if r.Status != pix.RecurrenceCreated {
			return View{}, pix.Errorf(pix.EUnprocessable, "Recurrence is %s and can no longer be answered", r.Status)
		}
		answer = func() (provider.RecurrenceState, error) {
			return payer.AnswerRecurrence(ctx, r.PSPID, action == SandboxApprove)
		}
	case SandboxCancelByPayer:
		if r.Status != pix.RecurrenceApproved {
			return View{}, pix.Errorf(pix.EUnprocessable, "Recurrence is %s and cannot be cancelled by the payer", r.Status)
		}
		answer = func() (provider.RecurrenceState, error) { return payer.CancelRecurrenceAsPayer(ctx, r.PSPID) }
	default:
		return View{}, pix.Errorf(pix.ENotFound, "Not found")
	}
	if action == SandboxApprove && r.FirstPaymentID != "" {
		// Journey 3: one scan pays the first payment and authorizes.
		first, err := s.db.TransactionByID(ctx, r.FirstPaymentID)
		if err != nil {
			return View{}, fmt.Errorf("first payment of %s: %w", r.ID, err)
		}
		if first.Status != pix.StatusPaid {
			if _, err := x.pay(ctx, first); err != nil {
				return View{}, err
			}
		}
	}
	st, err := answer()
	if err != nil {
		return View{}, fmt.Errorf("sandbox %s of %s: %w", action, r.ID, err)
	}
	if err := s.applyRecurrence(ctx, st); err != nil {
		return View{}, err
	}
	if r, err = s.loadRecurrence(ctx, c, id); err != nil {
		return View{}, err
	}
	return s.recurrenceView(ctx, r)
}

// NextCycle creates the charge of client c's recurrence's next
// cycle at once, due on its scheduled date. Errors: ENotFound,
// EUnprocessable (not APPROVED, or no cycle left).
func (x *Sandbox) NextCycle(ctx context.Context, c pix.Client, id string) (pix.Transaction, pix.Date, error) {
	if x == nil {
		return pix.Transaction{}, pix.Date{}, pix.Errorf(pix.ENotFound, msgRecurrenceNotFound)
	}
	s := x.s
	r, err := s.loadRecurrence(ctx, c, id)
	if err != nil {
		return pix.Transaction{}, pix.Date{}, err
	}
	rec, err := s.recurrer()
	if err != nil {
		return pix.Transaction{}, pix.Date{}, err
	}
	if r.Status != pix.RecurrenceApproved {
		return pix.Transaction{}, pix.Date{}, pix.Errorf(pix.EUnprocessable, "Recurrence is %s and creates no cycles", r.Status)
	}
	due := r.NextDue
	t, err := s.createCycle(ctx, rec, r, true)
	switch {
	case errors.Is(err, errNoCycle):
		return pix.Transaction{}, pix.Date{}, pix.Errorf(pix.EUnprocessable, "Recurrence has no cycle left")
	case errors.Is(err, errChanged):
		return pix.Transaction{}, pix.Date{}, pix.Errorf(pix.EConflict, "The recurrence's next cycle is being created")
	case err != nil:
		return pix.Transaction{}, pix.Date{}, err
	}
	return t, due, nil
}

// FailCharge makes the current debit of client c's cycle charge
// paymentID fail, as the payer's bank reports it: the next attempt is
// scheduled when the recurrence's retry policy leaves one, else the charge
// is CANCELLED with pix.recurrence.charge_failed. Errors: ENotFound,
// EUnprocessable (not a cycle's charge, or no longer PENDING).
func (x *Sandbox) FailCharge(ctx context.Context, c pix.Client, paymentID string) (pix.Transaction, error) {
	if x == nil {
		return pix.Transaction{}, pix.Errorf(pix.ENotFound, "Charge not found")
	}
	s := x.s
	t, err := s.cashin.Charge(ctx, c, paymentID)
	if err != nil {
		return pix.Transaction{}, err
	}
	cy, err := s.db.Cycle(ctx, t.ID)
	if errors.Is(err, store.ErrNotFound) {
		return pix.Transaction{}, pix.Errorf(pix.EUnprocessable, "Only a recurrence's cycle charge can fail a debit")
	}
	if err != nil {
		return pix.Transaction{}, fmt.Errorf("cycle of %s: %w", t.ID, err)
	}
	if t.Status != pix.StatusPending {
		return pix.Transaction{}, pix.Errorf(pix.EUnprocessable, "Charge is %s and has no debit to fail", t.Status)
	}
	payer := x.payer
	// Every earlier debit of a PENDING cycle charge failed; this one too.
	st, err := payer.FailDebit(ctx, t.TxID, cy.DueDate, cy.Attempts)
	if err != nil {
		return pix.Transaction{}, fmt.Errorf("sandbox fail-debit of %s: %w", t.ID, err)
	}
	if err := s.applyCycle(ctx, st); err != nil {
		return pix.Transaction{}, err
	}
	return s.cashin.Charge(ctx, c, paymentID)
}
