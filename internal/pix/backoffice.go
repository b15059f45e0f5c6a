package pix

import "time"

// The rows of the administration panel the store keeps and returns: its
// users and their sessions, and what the overview sums of a period.

// Roles of administration panel users.
const (
	RoleOperator = "operator" // sees and manages every client
	RoleMerchant = "merchant" // sees only its own client
)

// User is a person who logs in to the administration panel.
type User struct {
	ID           string
	Email        string // lower case, unique
	PasswordHash string // bcrypt; the password itself is never stored
	Role         string
	ClientID     string // merchant users: their client; "" for operators
	CreatedAt    time.Time
}

// Session is a logged-in browser. ID is the hex SHA-256 of the token the
// browser holds; CSRFToken is echoed by every form of the session.
type Session struct {
	ID        string
	UserID    string
	CSRFToken string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Activity summarizes the transactions of a period.
type Activity struct {
	// Counts holds the transactions created in the period, by type and status.
	Counts map[string]map[string]int64
}

// Flows is the money that moved in a period, read from the ledger, so that
// it adds up: Opening + In − Fees − Out + Returns − Refunds = Closing, where
// the balances are the merchant's whole balance (available + pending; money
// only reserved for a payout or refund has not left yet). Each amount is in
// centavos and ≥ 0; each count is how many operations it sums.
type Flows struct {
	// Opening and Closing are available + pending at from and at to.
	Opening, Closing Amount
	// In is the gross amount of the charges paid in the period.
	In      Amount
	InCount int64
	// Fees is what pixgate charged in the period: cash-in fees and the tax
	// of payouts completed (a returned payout's tax is not given back).
	Fees Amount
	// Out is the amount of the payouts completed in the period, except those
	// also returned within it: a payout paid and reversed the same day was
	// not paid out.
	Out      Amount
	OutCount int64
	// Returns is the amount of the payouts completed before the period and
	// returned (REVERSED) within it.
	Returns     Amount
	ReturnCount int64
	// Refunds is the amount of the refunds of charges settled in the period.
	Refunds     Amount
	RefundCount int64
}
