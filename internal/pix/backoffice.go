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
// it adds up: Opening + In − Fees − Out + Returns − Refunds − MEDReturns +
// TransfersIn − TransfersOut + SplitsIn − SplitsOut = Closing, where the balances are the merchant's whole balance (available +
// pending + blocked + debt: money only reserved for a payout or refund, or
// held by a dispute, has not left yet, and a debt is owed out of it). Each
// amount is in centavos and ≥ 0; each count is how many operations it sums.
type Flows struct {
	// Opening and Closing are available + pending + blocked + debt at from
	// and at to (debt is ≤ 0, so a closing can be below zero).
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
	// MEDReturns is what MED devoluções returned to payers in the period,
	// whichever account it came from (the block, available, or what the
	// merchant now owes).
	MEDReturns     Amount
	MEDReturnCount int64
	// TransfersIn is what transfers from the other accounts of the
	// client's family (its parent or its sub-accounts) brought into
	// available in the period, TransfersOut what its transfers sent them.
	// The money never crosses the PIX network, so over every client the
	// two are equal (docs/marketplace.md).
	TransfersIn      Amount
	TransferInCount  int64
	TransfersOut     Amount
	TransferOutCount int64
	// SplitsIn is what the splits of its parent's paid charges credited
	// the client in the period, SplitsOut what the splits of its own paid
	// charges sent its sub-accounts (In counts those charges whole). Like
	// transfers they stay inside the family, so over every client the two
	// are equal (docs/marketplace.md).
	SplitsIn      Amount
	SplitInCount  int64
	SplitsOut     Amount
	SplitOutCount int64
	// Blocked is what disputes blocked in the period, Released what their
	// blocks gave back to available, and DebtPaid what credits paid of a
	// MED debt. They move money inside the merchant's balance, so they are
	// not in the sum; they explain how available differs from it.
	Blocked, Released, DebtPaid Amount
}
