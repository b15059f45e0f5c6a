package provider

import (
	"context"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// Recurrence is a Pix Automático recurrence to register at the PSP
// (BACEN's rec): the payer authorizes it once at their bank, then each
// cycle's charge (CycleCharge) is debited on its due date.
type Recurrence struct {
	Payer pix.RecurrencePayer
	// Contract and Description are vinculo.contrato and vinculo.objeto,
	// 1–35 characters each.
	Contract, Description string
	Schedule              pix.Schedule
	// Amount is every cycle's amount (valor.valorRec).
	Amount pix.Amount
	Retry  pix.RetryPolicy
	// FirstPayment, when positive, makes it journey 3: a cob of that
	// amount with txid FirstTxID (26–35 letters and digits) and validity
	// FirstTTL is created first, and the QR code pays it and authorizes
	// the recurrence at once. Zero: journey 2, authorization only.
	FirstPayment pix.Amount
	FirstTxID    string
	FirstTTL     time.Duration
}

// RecurrenceCreated is what the PSP answers to a new recurrence.
type RecurrenceCreated struct {
	// ID is the PSP's idRec (29 letters and digits), by which every later
	// call names the recurrence.
	ID string
	// QRCode is the copy-and-paste code the payer scans to authorize (and,
	// in journey 3, to pay the first payment).
	QRCode string
}

// RecurrenceState is what the PSP says about a recurrence, in pixgate's
// vocabulary. The PSP never says FINISHED: pixgate finishes a recurrence
// after the cycle of its end date.
type RecurrenceState struct {
	ID     string
	Status pix.RecurrenceStatus // CREATED, APPROVED, REJECTED, EXPIRED or CANCELLED
	// CancelledBy is set when Status is CANCELLED: merchant when the
	// receiver (or its PSP) cancelled, payer when the payer (or theirs) did.
	CancelledBy pix.CancelledBy
	// FirstTxID is the txid of the journey-3 cob the payer paid with the
	// authorization ("" in journey 2).
	FirstTxID string
	// UpdatedAt is the time of the last status change the PSP reports.
	UpdatedAt time.Time
}

// CycleCharge is one cycle's charge of an APPROVED recurrence (BACEN's
// cobr): the payer's bank debits it on DueDate (or the next business day).
type CycleCharge struct {
	// TxID identifies the charge at the PSP (26–35 letters and digits).
	TxID string
	// RecurrenceID is the PSP's idRec of the recurrence.
	RecurrenceID string
	DueDate      pix.Date
	Amount       pix.Amount
	// Payer is the recurrence's payer; the address fields are optional.
	Payer DuePayer
	// Info is shown to the payer (infoAdicional), at most 140 characters.
	Info string
}

// CycleStatus is where a cycle's charge stands at the PSP.
type CycleStatus string

// Statuses of a cycle's charge.
const (
	// CyclePending: created, or scheduled at the payer's bank, not debited
	// yet (CRIADA, ATIVA). A failed attempt that may still be retried
	// leaves it pending.
	CyclePending CycleStatus = "pending"
	// CyclePaid: debited (CONCLUIDA); Payments holds the Pix.
	CyclePaid CycleStatus = "paid"
	// CycleFailed: no attempt is left, or the payer's bank refused it for
	// good (EXPIRADA, REJEITADA).
	CycleFailed CycleStatus = "failed"
	// CycleCancelled: cancelled before it was due (CANCELADA), by the
	// merchant or with its recurrence.
	CycleCancelled CycleStatus = "cancelled"
)

// AttemptStatus is where one debit attempt of a cycle stands.
type AttemptStatus string

// Statuses of an attempt.
const (
	AttemptScheduled AttemptStatus = "scheduled" // SOLICITADA, AGENDADA
	AttemptPaid      AttemptStatus = "paid"      // PAGA
	AttemptFailed    AttemptStatus = "failed"    // REJEITADA, EXPIRADA
	AttemptCancelled AttemptStatus = "cancelled" // CANCELADA
)

// Attempt is one debit of a cycle's charge: on the due date, or a retry.
type Attempt struct {
	Date   pix.Date // dataLiquidacao
	Retry  bool     // a retry (NTAG) rather than the scheduled debit (AGND)
	Status AttemptStatus
	// Reason is the PSP's rejection code and text of a failed attempt.
	Reason string
}

// CycleState is what the PSP says about a cycle's charge.
type CycleState struct {
	TxID         string
	RecurrenceID string
	DueDate      pix.Date
	Status       CycleStatus
	Attempts     []Attempt
	// Payments are the Pix received for it (one once paid), to confirm
	// with ConfirmPayment before anything is credited.
	Payments []Payment
	// UpdatedAt is the time of the last status change the PSP reports.
	UpdatedAt time.Time
}

// FailedAttempts counts the attempts that failed.
func (s CycleState) FailedAttempts() int {
	n := 0
	for _, a := range s.Attempts {
		if a.Status == AttemptFailed {
			n++
		}
	}
	return n
}

// Recurrer is a Provider that runs Pix Automático recurrences. It is
// optional: the gateway asks a Provider for it with a type assertion, and
// a provider without it takes no recurrences. The errors follow Provider's
// rules (ErrNotFound, ErrRejected, ErrRateLimited, anything else unknown).
type Recurrer interface {
	// StartRecurrences registers the webhooks of recurrences and of cycle
	// charges with the PSP (webhookrec, webhookcobr), so that it posts to
	// <webhook URL>/rec and <webhook URL>/cobr. Call it beside Start.
	StartRecurrences(ctx context.Context) error

	// CreateRecurrence registers r at the PSP and returns its id and the
	// QR code. ErrRejected: nothing the payer can use was created. Any
	// other error: perhaps a recurrence was created whose id was lost; it
	// is harmless (nobody sees its QR code and it expires unanswered), so
	// creating again is safe.
	CreateRecurrence(ctx context.Context, r Recurrence) (RecurrenceCreated, error)
	// Recurrence reads the recurrence id at the PSP. ErrNotFound: unknown.
	Recurrence(ctx context.Context, id string) (RecurrenceState, error)
	// RecurrencesChanged lists the recurrences whose status changed in
	// [from, to], every page.
	RecurrencesChanged(ctx context.Context, from, to time.Time) ([]RecurrenceState, error)
	// CancelRecurrence cancels the recurrence id as its receiver; one
	// cancelled already counts as cancelled. ErrRejected: the PSP keeps it
	// (it was rejected or expired: read it).
	CancelRecurrence(ctx context.Context, id string) error

	// CreateCycleCharge registers c at the PSP. It is idempotent by TxID:
	// the same charge created again is success. ErrRejected: not created
	// (the recurrence is not approved, the due date is out of the 2–10 day
	// window…).
	CreateCycleCharge(ctx context.Context, c CycleCharge) error
	// CycleCharge reads the cycle charge txid. ErrNotFound: unknown.
	CycleCharge(ctx context.Context, txid string) (CycleState, error)
	// CycleChargesChanged lists the cycle charges whose status, or an
	// attempt's, changed in [from, to], every page.
	CycleChargesChanged(ctx context.Context, from, to time.Time) ([]CycleState, error)
	// RetryCycleCharge asks for a new debit of the cycle charge txid on
	// day, after a failed attempt, and returns its state. ErrRejected: the
	// PSP refuses (no retries under the recurrence's policy, none left, a
	// day out of the window, an attempt still scheduled): read it.
	RetryCycleCharge(ctx context.Context, txid string, day pix.Date) (CycleState, error)
	// CancelCycleCharge cancels the cycle charge txid, which the PSP allows
	// only before its due date; one cancelled already counts as cancelled.
	// ErrRejected: the PSP keeps it (due, paid or failed): read it.
	CancelCycleCharge(ctx context.Context, txid string) error
}

// RecurrencePayer is a provider whose payers answer on request (the
// sandbox's), as Payer pays: each action returns the state the provider
// then reports, which the gateway applies as it applies a PSP's report.
type RecurrencePayer interface {
	// AnswerRecurrence has the payer approve (or reject) the recurrence
	// id waiting for an answer.
	AnswerRecurrence(ctx context.Context, id string, approve bool) (RecurrenceState, error)
	// CancelRecurrenceAsPayer has the payer cancel the APPROVED
	// recurrence id.
	CancelRecurrenceAsPayer(ctx context.Context, id string) (RecurrenceState, error)
	// FailDebit has the payer's bank fail the next debit of cycle charge
	// txid, due on due, after earlier failed attempts: every attempt so far
	// failed.
	FailDebit(ctx context.Context, txid string, due pix.Date, earlier int) (CycleState, error)
}
