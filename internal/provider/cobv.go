package provider

import (
	"context"

	"github.com/pixgate/pixgate/internal/pix"
)

// DueCharge is a charge with a due date to register at the PSP (BACEN's
// cobv): the PSP itself computes what the payer owes on the day they pay,
// from Amount and the terms in Due, and reports what was paid.
type DueCharge struct {
	// TxID identifies the charge at the PSP (26–35 letters and digits).
	TxID   string
	Amount pix.Amount
	// Due holds the due date, the validity after it, the fine, the
	// interest and the discounts (docs/due-dates.md).
	Due pix.Due
	// Payer is who owes the charge: a cobv names its debtor.
	Payer DuePayer
	// Question is shown to the payer (solicitacaoPagador).
	Question string
}

// DuePayer is the debtor of a due-date charge, as a cobv's devedor carries
// it.
type DuePayer struct {
	Name     string
	Document string // CPF (11 digits) or CNPJ (14 digits)
	Street   string
	Number   string
	City     string
	State    string // UF, such as SP
	ZipCode  string // CEP, 8 digits
}

// DueCharger is a Provider that registers due-date charges. It is
// optional: the gateway asks a Provider for it with a type assertion, and
// a provider without it cannot take charges with a due date. The errors
// follow Provider's rules.
type DueCharger interface {
	// CreateDueCharge registers c at the PSP and returns its BR Code (the
	// payer's copy-and-paste code). ErrRejected or any other error: no
	// charge exists for the payer to pay.
	CreateDueCharge(ctx context.Context, c DueCharge) (brCode string, err error)
	// DueChargePayments reads the due-date charge txid at the PSP and
	// returns the payments made to it (none when unpaid), each with the
	// amount the PSP received: what it computed as due that day.
	DueChargePayments(ctx context.Context, txid string) ([]Payment, error)
	// CancelDueCharge removes the due-date charge txid at the PSP so that
	// it can no longer be paid; one removed already counts as removed.
	// ErrRejected: the PSP keeps it (it was paid). Read it with
	// DueChargePayments first: a payment may have just arrived.
	CancelDueCharge(ctx context.Context, txid string) error
}
