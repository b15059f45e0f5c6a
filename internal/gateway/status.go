package gateway

// Lookup statuses (spec §2.1), stored as transactions.status.
const (
	StatusPending   = "PENDING"
	StatusPaid      = "PAID"
	StatusCancelled = "CANCELLED"
	StatusRefunded  = "REFUNDED"
	StatusReversed  = "REVERSED"
)

// LookupStatuses lists the statuses the history filter accepts.
var LookupStatuses = []string{StatusPending, StatusPaid, StatusCancelled, StatusRefunded, StatusReversed}
