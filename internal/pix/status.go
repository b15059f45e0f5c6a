package pix

// The vocabulary of states. It lives in the domain core because every layer
// speaks it: the store writes it, the gateway moves between its values, the
// API and the panel show it, and webhooks carry it. Each is its own type so
// that a refund status cannot be passed where a transaction status is meant.

// TxStatus is a transaction's status as the lookup endpoint shows it
// (POST /api/v1/wallet/transaction); it is stored as transactions.status.
type TxStatus string

// Transaction statuses.
const (
	StatusPending   TxStatus = "PENDING"
	StatusPaid      TxStatus = "PAID"
	StatusCancelled TxStatus = "CANCELLED"
	StatusRefunded  TxStatus = "REFUNDED"
	StatusReversed  TxStatus = "REVERSED"
)

// TxStatuses returns every transaction status, in the order the history
// filter and the panel list them (a new slice: callers may keep it).
func TxStatuses() []TxStatus {
	return []TxStatus{StatusPending, StatusPaid, StatusCancelled, StatusRefunded, StatusReversed}
}

// TxType is what a transaction is: a charge (cash-in), a payout
// (cash-out), a receiver's share of a split charge or one side of a
// transfer between a parent and its sub-account.
type TxType string

// Transaction types.
const (
	TypeCashin   TxType = "cashin"
	TypeCashout  TxType = "cashout"
	TypeSplit    TxType = "split"
	TypeTransfer TxType = "transfer"
)

// TxTypes returns every transaction type.
func TxTypes() []TxType { return []TxType{TypeCashin, TypeCashout, TypeSplit, TypeTransfer} }

// RefundStatus is a refund's status.
type RefundStatus string

// Refund statuses.
const (
	RefundPending   RefundStatus = "PENDING"
	RefundCompleted RefundStatus = "COMPLETED"
	RefundFailed    RefundStatus = "FAILED"
)

// ClientStatus is whether an API client's credentials work.
type ClientStatus string

// Client statuses.
const (
	ClientActive   ClientStatus = "active"
	ClientDisabled ClientStatus = "disabled"
)
