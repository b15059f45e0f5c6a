package pix

import "time"

// The rows of the money the store keeps and returns: clients, charges and
// payouts, refunds, webhook events and their delivery attempts. They are
// plain values; the store reads and writes them, gateway's use cases change
// them, and the API and the panel show them.

// Client is an API client (a merchant application) and its settings.
type Client struct {
	ID                string
	Name              string
	Environment       string
	SecretHash        string // hex SHA-256 of the client secret; the secret itself is never stored
	WebhookSecret     string // whsec_…, needed in clear to sign webhooks
	PrevWebhookSecret string // the previous webhook secret while it is still honoured
	PrevWebhookUntil  time.Time
	CashinFee         FeeRule
	PayoutFee         FeeRule
	Status            ClientStatus
	CreatedAt         time.Time
	// ClockOffset is how far the client's clock runs ahead of the real
	// time: zero but for a sandbox client that advanced its clock.
	ClockOffset time.Duration
	// AccountID is the UUID v4 that splits and transfers name the client
	// by (docs/marketplace.md); ParentID is the client id of its parent
	// when it is a sub-account, "" for a top-level client.
	AccountID string
	ParentID  string
	// Document (CPF or CNPJ), ExternalID (unique among its parent's
	// sub-accounts) and PostbackURL are a sub-account's, as its parent
	// created it; "" for clients an operator made.
	Document    string
	ExternalID  string
	PostbackURL string
	// RequestHash is the digest of the request that created a sub-account,
	// which an idempotent replay compares; "" for other clients.
	RequestHash string
}

// Attempt is one recorded delivery attempt.
type Attempt struct {
	ID         string
	EventID    string
	At         time.Time
	StatusCode int // 0 when no response was received
	Latency    time.Duration
	Error      string // "" when the receiver answered
	Response   string // the first 1 KiB of the response body
}

// Event is one outbox row: a webhook to deliver, written in the same
// database transaction as the change it reports.
type Event struct {
	ID            string
	ClientID      string
	TransactionID string
	Type          string
	URL           string
	Payload       string // the JSON body, exactly as it will be sent
	CreatedAt     time.Time
	Status        string // pending, delivered, failed
	Attempts      int
	NextAttemptAt time.Time
	// LeaseOwner and LeaseUntil, when set on an event being inserted, write
	// it already leased: the node that wrote it delivers it without a claim
	// (webhook.Dispatcher.Reserve). Reads leave them empty.
	LeaseOwner string
	LeaseUntil time.Time
}

// Refund is a return (devolução) of part or all of a paid charge.
type Refund struct {
	ID             string
	ClientID       string
	TransactionID  string // the charge
	IdempotencyKey string
	RequestHash    string
	Status         RefundStatus
	Amount         Amount
	Reason         string
	CreatedAt      time.Time
	SettledAt      time.Time
	SettleAt       time.Time
	// EndToEndID is the PIX network's id of the return (rtrId); "" until known.
	EndToEndID string
	// SendState is where the refund stands at a real PSP (SendToSend, …);
	// "" with the sandbox simulator.
	SendState    string
	SendAttempts int
}

// Transaction is a charge (cashin) or a payout (cashout). Status is the
// status the lookup endpoint shows.
type Transaction struct {
	ID             string
	ClientID       string
	Type           TxType
	ExternalID     string // "" when the client gave none
	IdempotencyKey string // "" when none
	RequestHash    string // canonical hash of the creating request, for idempotency
	Status         TxStatus
	Amount         Amount
	Tax            Amount
	RefundedAmount Amount
	// MEDReturned is what MED returns took of a paid charge (docs/med.md):
	// apart from RefundedAmount, as it may exceed Amount.
	MEDReturned   Amount
	RefundPending Amount
	CreatedAt     time.Time
	ConfirmedAt   time.Time // zero while not confirmed
	ExpiresAt     time.Time // charges
	SettleAt      time.Time // payouts: when the provider settles it; zero once settled
	TxID          string    // charges: the BR Code txid
	QRCode        string    // charges: the BR Code
	CallbackURL   string
	Details       string // JSON of the request's descriptive fields
	// EndToEndID is the PIX network's id of the credited payment (charges)
	// or of the send (payouts); "" until known.
	EndToEndID string
	// SendState is where a payout stands at a real PSP (SendToSend, …);
	// "" with the sandbox simulator.
	SendState    string
	SendAttempts int
	// PaidAmount is what the payer paid (charges; 0 until paid). It may
	// differ from Amount when a PSP confirms another amount.
	PaidAmount Amount
	// Due holds the terms of a charge with a due date (docs/due-dates.md);
	// nil for an immediate charge, which costs Amount until it expires.
	Due *Due
	// ExpectedAmount is, once a charge with a due date is paid, what its
	// terms made due on the day it was paid: the amount a payment is
	// compared with (AmountMismatch). 0 when nothing was due that day (it
	// was after the charge's last day). Unused for immediate charges.
	ExpectedAmount Amount
	// RecurrenceID names the recurrence of a cycle's charge, or of the
	// first payment of a journey-3 recurrence; "" for any other.
	RecurrenceID string
	// PayerName and PayerDocument are who actually paid a charge, as its
	// PSP reported them ("" when it did not); the document only in its
	// masked form (MaskPayerDocument), never the whole number.
	PayerName     string
	PayerDocument string
	// Disputes are a charge's MED disputes as its lookup lists them; nil
	// where they were not read (lists, creation answers).
	Disputes *[]DisputeSummary
	// Splits are a split charge's entries with what each receiver was
	// credited, as lookup and pix.cashin.paid show them; nil for a charge
	// without splits and where they were not read.
	Splits *[]SplitCredit
	// SourcePaymentID is, on the receiving side of a transfer, the
	// sender's transaction (the transfer_id); on a split, the charge it
	// came from. "" otherwise.
	SourcePaymentID string
	// CounterpartyAccountID is a transfer's other side: the account_id
	// that sent it or that it was sent to; "" for other transactions.
	CounterpartyAccountID string
}

// Refundable is how much of a paid charge can be returned: what was paid,
// at most the amount asked for.
func (t Transaction) Refundable() Amount {
	if t.PaidAmount > 0 {
		return min(t.Amount, t.PaidAmount)
	}
	return t.Amount
}

// Left is what is left at the PSP of a paid charge's Pix: what was paid,
// less its refunds (settled or under way) and its MED returns.
func (t Transaction) Left() Amount {
	return t.PaidAmount - t.RefundedAmount - t.RefundPending - t.MEDReturned
}

// AmountMismatch reports whether a paid charge was paid with another amount
// than it asked for: Amount for an immediate charge, what its terms made
// due on the day it was paid (ExpectedAmount) for one with a due date.
func (t Transaction) AmountMismatch() bool {
	if t.PaidAmount <= 0 {
		return false
	}
	if t.Due != nil {
		return t.PaidAmount != t.ExpectedAmount
	}
	return t.PaidAmount != t.Amount
}

// AmountDueOn returns what a PENDING charge with a due date costs when paid
// on day (a São Paulo date), and false when it has no due date, is no
// longer PENDING, or cannot be paid that day (day is after its last day).
func (t Transaction) AmountDueOn(day Date) (Amount, bool) {
	if t.Due == nil || t.Status != StatusPending {
		return 0, false
	}
	return t.Due.AmountOn(t.Amount, day)
}

// NewCashIn is a new PENDING charge of amount for client c, to be paid by
// txid until expires: the one row every kind of charge starts from (an API
// charge, a recurrence's first payment, a cycle's charge), its fee the
// client's cash-in fee at most the amount. The caller fills in what its
// kind adds.
func NewCashIn(id string, c Client, amount Amount, txid string, now, expires time.Time) Transaction {
	return Transaction{ID: id, ClientID: c.ID, Type: TypeCashin, Status: StatusPending, Amount: amount,
		Tax: c.CashinFee.CashInFee(amount), CreatedAt: now, ExpiresAt: expires, TxID: txid}
}
