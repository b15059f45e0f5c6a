package gateway

import "github.com/pixgate/pixgate/internal/store"

// The rows the API and the panel receive from the use cases. Each is the
// store's row type under the gateway's name: the rows are exactly what the
// callers show, and one definition keeps the two from drifting apart.
type (
	// Client is an API client: credentials, fees, webhook secret, status.
	Client = store.Client
	// Transaction is a charge (cash-in) or a payout (cash-out).
	Transaction = store.Transaction
	// Refund is a return of part or all of a paid charge.
	Refund = store.Refund
	// Event is a webhook event of a transaction.
	Event = store.Event
	// Attempt is one delivery attempt of an Event.
	Attempt = store.Attempt
	// Posting is a ledger posting with its entries.
	Posting = store.PostingRecord
)
