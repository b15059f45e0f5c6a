package pix

import "time"

// Reasons a receipt matched no open charge.
const (
	// UnmatchedNoCharge: no charge holds the Pix's txid (or it had none).
	UnmatchedNoCharge = "no_charge"
	// UnmatchedAlreadyPaid: the charge had already been paid by another Pix.
	UnmatchedAlreadyPaid = "already_paid"
)

// Statuses of an unmatched receipt.
const (
	// UnmatchedHeld: in suspense, waiting for an operator (or after a
	// return that failed).
	UnmatchedHeld = "HELD"
	// UnmatchedReturning: its return (devolução) is being sent or read.
	UnmatchedReturning = "RETURNING"
	// UnmatchedReturned: returned to the payer in full.
	UnmatchedReturned = "RETURNED"
)

// UnmatchedReceipt is money the PSP confirmed that no open charge takes.
type UnmatchedReceipt struct {
	ID                string
	PaymentEndToEndID string // the received Pix
	TxID              string // as the PSP reported it ("" for a Pix without one)
	Amount            Amount
	ReceivedAt        time.Time // the PSP's horario
	RecordedAt        time.Time
	Reason            string // UnmatchedNoCharge or UnmatchedAlreadyPaid
	ClientID          string // of the charge it names, when one does
	TransactionID     string // that charge
	Status            string
	ReturnID          string // the devolução id of the current or last return
	ReturnError       string // why the last return did not happen
	ReturnedAt        time.Time
	ReturnEndToEndID  string // the return's rtrId, when known
	SendState         string
	SendAttempts      int
	SettleAt          time.Time
}

// CobIntent is a cob being created at the PSP for a charge not stored yet.
type CobIntent struct {
	TxID      string
	ClientID  string
	CreatedAt time.Time
	// Due marks a charge with a due date (a cobv), which the PSP reads and
	// removes by its own paths.
	Due bool
}
