package gateway

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
)

// Sandbox is the sandbox's actions: what its payers and their banks do on
// request (pay, approve, reject or cancel a recurrence, fail a debit),
// expiring a charge at once, and a client's clock. It exists only in the
// sandbox environment with a provider whose payers pay on request
// (provider.Payer); Service.Sandbox is nil elsewhere, and a nil Sandbox
// answers every action ENotFound. With a real PSP only real payers pay.
type Sandbox struct{ s *Service }

// newSandbox is the Sandbox of s, or nil where payers do not pay on
// request.
func newSandbox(s *Service) *Sandbox {
	if _, ok := s.psp.(provider.Payer); !ok || s.Env != EnvSandbox {
		return nil
	}
	return &Sandbox{s}
}

// Sandbox returns the sandbox's actions, nil outside the sandbox (see
// Sandbox).
func (s *Service) Sandbox() *Sandbox { return s.sandbox }

// Pay pays the charge today (São Paulo date): PayOn with no day.
func (x *Sandbox) Pay(ctx context.Context, charge pix.Transaction) (pix.Transaction, error) {
	return x.PayOn(ctx, charge, pix.Date{})
}

// Issues of the sandbox pay action's date.
const (
	issuePayToday        = "must be today (%s): a charge without a due date is paid on the day it is paid"
	issuePayBeforeCharge = "must not be before the charge was created (%s)"
	issuePayAfterLastDay = "must not be after due.date + due.days_after (%s)"
)

// PayOn pays the charge as the sandbox's payer does on day (zero:
// today, São Paulo date): the provider makes the payment of the amount due
// that day — the charge's amount, or for a charge with a due date what its
// terms make due on day — and reports it; the payment is then confirmed at
// the provider and credited as every PSP-reported payment is. The API, the
// pay page and the panel all pay this way. Paying a charge already paid
// this way answers it again. Errors: EInvalid (day is not a day the charge
// can be paid on: another day than today for an immediate charge; before
// the charge was created or after its last day for one with a due date),
// ENotFound (the provider's payers do not pay on request, or no such
// charge), EUnprocessable (the charge can no longer be paid).
func (x *Sandbox) PayOn(ctx context.Context, charge pix.Transaction, day pix.Date) (pix.Transaction, error) {
	if x == nil {
		// The routes exist only in the sandbox; this guards a future one.
		return pix.Transaction{}, pix.Errorf(pix.ENotFound, "Charge not found")
	}
	s := x.s
	payer := s.psp.(provider.Payer)
	if provider.ClockOffset(ctx) == 0 {
		// The payer's page pays without the client's credentials: its
		// clock is the charge's client's.
		ctx = s.clocks.For(ctx, charge.ClientID)
	}
	today := s.clocks.Today(ctx)
	if day.IsZero() {
		day = today
	}
	amount := charge.Amount
	var is issues
	switch created := s.dateOf(charge.CreatedAt); {
	case charge.Due == nil && day != today:
		is.add("date", fmt.Sprintf(issuePayToday, today))
	case charge.Due == nil:
	case day.Before(created):
		is.add("date", fmt.Sprintf(issuePayBeforeCharge, created))
	case day.After(charge.Due.LastDay()):
		is.add("date", fmt.Sprintf(issuePayAfterLastDay, charge.Due.LastDay()))
	default:
		amount, _ = charge.Due.AmountOn(charge.Amount, day)
	}
	if err := is.err(); err != nil {
		return pix.Transaction{}, err
	}
	if charge.EndToEndID != "" && (charge.Status == pix.StatusPaid || charge.Status == pix.StatusRefunded) {
		// Paid already: the same answer again, whichever node (or
		// sandbox provider) paid it.
		return charge, nil
	}
	var details struct {
		Payer *Payer `json:"payer"`
	}
	_ = json.Unmarshal([]byte(charge.Details), &details) // a charge without payer details is paid by nobody named
	c := provider.Charge{TxID: charge.TxID, Amount: amount}
	if details.Payer != nil {
		// The sandbox's payer is the payer the charge names.
		c.PayerName, c.PayerDocument = details.Payer.Name, details.Payer.Document
	}
	p, err := payer.Pay(ctx, c)
	if err != nil {
		return pix.Transaction{}, fmt.Errorf("sandbox pay: %w", err)
	}
	confirmed, err := s.psp.ConfirmPayment(ctx, p.EndToEndID)
	if err != nil {
		return pix.Transaction{}, fmt.Errorf("sandbox pay: confirm: %w", err)
	}
	// Strict: a payer's bank pays neither a charge that is closed nor
	// another amount than is due that day, so neither is credited.
	return s.cashin.Credit(ctx, confirmed, true, day)
}
