package pix

import "time"

// Recurrence is a stored Pix Automático recurrence: its terms, where it
// stands, and how far its calendar has gone.
type Recurrence struct {
	ID             string
	ClientID       string
	ExternalID     string
	IdempotencyKey string // "" when none
	RequestHash    string // canonical hash of the creating request, for idempotency
	// PSPID is the PSP's idRec, by which the PSP names it.
	PSPID       string
	Status      RecurrenceStatus
	CancelledBy CancelledBy // set when Status is CANCELLED
	Payer       RecurrencePayer
	Contract    string
	Description string
	Schedule    Schedule
	Amount      Amount
	Retry       RetryPolicy
	// FirstPayment is the journey-3 payment made with the authorization
	// (0: none), and FirstPaymentID its cash-in charge.
	FirstPayment   Amount
	FirstPaymentID string
	// QRCode is the code the payer scans to authorize.
	QRCode      string
	CallbackURL string
	// NextCycle is the number of the next cycle whose charge is not created
	// yet, due on NextDue (zero when no cycle is left).
	NextCycle int
	NextDue   Date
	CreatedAt time.Time
	UpdatedAt time.Time
}

// UpcomingDue is the due date of the next cycle still to come: zero once r
// is final (REJECTED, EXPIRED, CANCELLED or FINISHED: no cycle comes
// then), when its calendar is over, or for a date past the calendar's
// last cycle day (which earlier versions could store).
func (r Recurrence) UpcomingDue() Date {
	if r.Status.Final() || r.NextDue.After(LastCycleDue) {
		return Date{}
	}
	return r.NextDue
}

// Cycle is one cycle's charge of a recurrence; its status, amount and
// payment are those of its cash-in transaction PaymentID.
type Cycle struct {
	PaymentID    string
	RecurrenceID string
	// Number is the cycle's place in the calendar (Schedule.Due).
	Number  int
	DueDate Date
	// Attempts counts the debits tried, paid or failed.
	Attempts int
	// RetryOn is the day of a retry the PSP is still to be asked for (zero
	// when none).
	RetryOn   Date
	UpdatedAt time.Time
}

// CycleCharge is a cycle with its charge, as the API shows it.
type CycleCharge struct {
	Cycle
	Amount Amount
	Status TxStatus
}
