package pix

import "time"

// Batch is a batch of payouts (docs/payouts.md, Batches) as the store
// keeps it: its items are ordinary payouts, each with its own row.
type Batch struct {
	ID          string
	ClientID    string
	ExternalID  string
	RequestHash string
	CallbackURL string
	// State is BatchAccepting while its items are being accepted, then
	// BatchAccepted, then BatchCompleted once every accepted item is final
	// and pix.batch.completed was written.
	State    string
	Total    int
	Accepted int
	Rejected int
	// LeaseUntil bounds how long an accepting batch belongs to the
	// request accepting it: a request that died is taken over after it.
	LeaseUntil  time.Time
	CreatedAt   time.Time
	CompletedAt time.Time // zero until completed
}

// Batch states.
const (
	BatchAccepting = "accepting"
	BatchAccepted  = "accepted"
	BatchCompleted = "completed"
)

// BatchItem is one item of a batch: the payout it created or replayed,
// or the error that rejected it.
type BatchItem struct {
	BatchID    string
	Index      int
	ExternalID string // "" when the item had none
	// TransactionID is the payout's id; "" for a rejected item.
	TransactionID string
	// Accepted is the status the batch's answer gave it: PENDING,
	// SCHEDULED or REJECTED.
	Accepted TxStatus
	// ErrorCode and ErrorMessage are a rejected item's error, as the
	// single request would have got it.
	ErrorCode    Code
	ErrorMessage string
	// Payout is the item's payout as read with it (zero when rejected).
	Payout Transaction
}
