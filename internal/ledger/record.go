package ledger

import "time"

// PostingRecord is a stored posting with its entries.
type PostingRecord struct {
	ID            string
	TransactionID string
	Kind          string
	CreatedAt     time.Time
	Entries       []Entry
}
