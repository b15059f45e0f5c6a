package client

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Transaction statuses (lookup, history, webhook statusTransaction).
const (
	StatusPending   = "PENDING"
	StatusPaid      = "PAID"
	StatusCancelled = "CANCELLED"
	StatusRefunded  = "REFUNDED"
	StatusReversed  = "REVERSED"
)

// Transaction types.
const (
	TypeCashin   = "cashin"
	TypeCashout  = "cashout"
	TypeSplit    = "split"    // a share of a split charge received
	TypeTransfer = "transfer" // one side of a transfer between accounts
)

// PIX key types of a payout's credit party.
const (
	KeyCPF   = "CPF"
	KeyCNPJ  = "CNPJ"
	KeyEmail = "EMAIL"
	KeyPhone = "PHONE"
	KeyEVP   = "EVP"
)

// ChargeRequest creates a charge (POST /api/v1/gateway/request-qrcode).
// Every field is required except IdempotencyKey: Amount, ExternalID, the
// whole Payer (name, document, phone number, e-mail and all six address
// fields), PayerQuestion, PostbackURL and at least one Product. A missing
// or invalid field is a 400 whose Details name it (payer.address.zipCode,
// products[0].price, …).
type ChargeRequest struct {
	Amount Amount `json:"amount"` // greater than 0, at most R$ 1,000,000.00
	// ExternalID is your reference for the charge, unique per client
	// across charges and payouts: 1–64 characters of A-Z a-z 0-9 . _ : -.
	// A charge sent again with the same ExternalID and body replays the
	// first one instead of creating another.
	ExternalID    string `json:"external_id"`
	Payer         Payer  `json:"payer"`
	PayerQuestion string `json:"payerQuestion"` // the message shown to the payer, at most 140 characters
	// PostbackURL receives the charge's webhooks: an absolute https URL
	// (http is accepted in the sandbox).
	PostbackURL string    `json:"postbackUrl"`
	Products    []Product `json:"products"` // 1 to 100 lines
	// Due, when set, makes the charge a bill with a due date; optional.
	Due *Due `json:"due,omitempty"`
	// Splits, optional, shares what the charge brings, net of your cash-in
	// fee, among your sub-accounts once it is paid (docs/marketplace.md).
	Splits []Split `json:"splits,omitempty"`
	// IdempotencyKey is sent as the Idempotency-Key header (1–255 visible
	// ASCII characters); optional, generated when empty. Set it (see
	// NewIdempotencyKey) to repeat a creation safely after a *RetryError or
	// a restart.
	IdempotencyKey string `json:"-"`
}

// Payer is who pays a charge. Every field is required.
type Payer struct {
	Name        string  `json:"name"`        // at most 200 characters
	Document    string  `json:"document"`    // CPF or CNPJ with valid check digits, digits only
	PhoneNumber string  `json:"phoneNumber"` // area code and number, 10 or 11 digits, optionally prefixed by +55
	Email       string  `json:"email"`
	Address     Address `json:"address"`
}

// Address is a payer's address. Every field is required.
type Address struct {
	Street       string `json:"street"`
	Number       string `json:"number"`
	Neighborhood string `json:"neighborhood"`
	City         string `json:"city"`
	State        string `json:"state"`   // UF, upper case
	ZipCode      string `json:"zipCode"` // CEP, 8 digits
}

// Product is one line of a charge. Every field is required.
type Product struct {
	Name     string `json:"name"`
	Quantity string `json:"quantity"` // a string of digits, greater than 0: "1"
	Price    Amount `json:"price"`    // greater than 0
}

// Charge is a created charge.
type Charge struct {
	Response    `json:"-"`
	PaymentID   string    `json:"payment_id"`
	ExternalID  string    `json:"external_id"`
	Amount      Amount    `json:"amount"`
	QRCode      string    `json:"qrcode"`       // PIX copy-and-paste code
	QRCodeImage string    `json:"qrcode_image"` // PNG, Base64
	Status      string    `json:"status"`
	ExpiresAt   time.Time `json:"expires_at"`
	// Due echoes the terms of a charge with a due date (nil for any
	// other), and AmountDueToday is what it costs on the day it was
	// created.
	Due            *Due    `json:"due,omitempty"`
	AmountDueToday *Amount `json:"amount_due_today,omitempty"`
}

// CreateCharge creates a PIX charge. An error whose outcome is unknown is
// a *RetryError carrying the Idempotency-Key to repeat it with.
func (c *Client) CreateCharge(ctx context.Context, r ChargeRequest) (*Charge, error) {
	var out Charge
	resp, err := c.do(ctx, call{method: http.MethodPost, path: "/api/v1/gateway/request-qrcode",
		body: r, idemKey: keyOr(r.IdempotencyKey), policy: creationPolicy}, &out)
	if err != nil {
		return nil, err
	}
	out.Response = resp
	return &out, nil
}

// PayoutRequest sends a PIX payment (POST /api/v1/gateway/pix-payment).
// Amount, Description, CreditParty (its KeyType and Key) and CallbackURL
// are required; ExternalID and IdempotencyKey are optional. A missing or
// invalid field is a 400 whose Details name it; a key that does not match
// its KeyType is a 400 "Invalid key format".
//
// A payout is money leaving the wallet: give it an IdempotencyKey chosen
// and stored before the call (or an ExternalID), so that it can be repeated
// after an unknown outcome (*RetryError) without paying twice.
type PayoutRequest struct {
	Amount      Amount      `json:"amount"`      // greater than 0, at most R$ 1,000,000.00
	Description string      `json:"description"` // at most 140 characters
	CreditParty CreditParty `json:"creditParty"`
	// CallbackURL receives the payout's webhooks: an absolute https URL
	// (http is accepted in the sandbox).
	CallbackURL string `json:"callbackUrl"`
	// ExternalID is your optional reference for the payout, unique per
	// client across charges and payouts; like IdempotencyKey, it makes a
	// repeated request replay the first one.
	ExternalID string `json:"external_id,omitempty"`
	// ScheduledDate, when set (WithScheduledDate), is the São Paulo date
	// YYYY-MM-DD, from tomorrow to 365 days ahead, the payout is reserved
	// and sent on; until then it is StatusScheduled and nothing is held.
	ScheduledDate string `json:"scheduled_date,omitempty"`
	// IdempotencyKey is sent as the Idempotency-Key header (1–255 visible
	// ASCII characters); generated when empty, but then only this call's
	// own retries share it.
	IdempotencyKey string `json:"-"`
}

// CreditParty is the beneficiary of a payout. KeyType and Key are
// required; Name is optional.
type CreditParty struct {
	Name    string `json:"name,omitempty"`
	KeyType string `json:"keyType"` // KeyCPF, KeyCNPJ, KeyEmail, KeyPhone or KeyEVP
	// Key is the PIX key, in the form of its KeyType: CPF or CNPJ digits,
	// an e-mail, +55 and 10–11 digits, or a UUID v4.
	Key string `json:"key"`
}

// Payout is an accepted payout.
type Payout struct {
	Response      `json:"-"`
	TransactionID string `json:"transaction_id"`
	ExternalID    string `json:"external_id"` // empty when none was sent
	Amount        Amount `json:"amount"`
	Tax           Amount `json:"tax"`
	Status        string `json:"status"` // StatusPending, or StatusScheduled with ScheduledDate
	// ScheduledDate is a scheduled payout's date; empty otherwise.
	ScheduledDate string `json:"scheduled_date,omitempty"`
}

// CreatePayout sends a PIX payment; amount + tax is held from the balance.
// An error whose outcome is unknown is a *RetryError carrying the
// Idempotency-Key to repeat it with: repeating it with another key may pay
// twice.
func (c *Client) CreatePayout(ctx context.Context, r PayoutRequest) (*Payout, error) {
	var out Payout
	resp, err := c.do(ctx, call{method: http.MethodPost, path: "/api/v1/gateway/pix-payment",
		body: r, idemKey: keyOr(r.IdempotencyKey), policy: creationPolicy}, &out)
	if err != nil {
		return nil, err
	}
	out.Response = resp
	return &out, nil
}

// RefundRequest refunds a paid charge, identified by PaymentID, ExternalID
// or both (POST /api/v1/gateway/refund).
type RefundRequest struct {
	PaymentID  string `json:"payment_id,omitempty"`
	ExternalID string `json:"external_id,omitempty"`
	// Amount to refund; zero refunds everything not yet refunded.
	Amount Amount `json:"amount,omitzero"`
	Reason string `json:"reason,omitempty"`
	// IdempotencyKey is sent as the Idempotency-Key header; generated when
	// empty, but then only this call's own retries share it: set it to
	// repeat the refund safely after a *RetryError.
	IdempotencyKey string `json:"-"`
}

// Refund is an accepted refund.
type Refund struct {
	Response  `json:"-"`
	RefundID  string `json:"refund_id"`
	PaymentID string `json:"payment_id"`
	Amount    Amount `json:"amount"`
	Status    string `json:"status"`
}

// CreateRefund refunds all or part of a paid charge. An error whose outcome
// is unknown is a *RetryError carrying the Idempotency-Key to repeat it
// with.
func (c *Client) CreateRefund(ctx context.Context, r RefundRequest) (*Refund, error) {
	var out Refund
	resp, err := c.do(ctx, call{method: http.MethodPost, path: "/api/v1/gateway/refund",
		body: r, idemKey: keyOr(r.IdempotencyKey), policy: creationPolicy}, &out)
	if err != nil {
		return nil, err
	}
	out.Response = resp
	return &out, nil
}

// RefundDetails is a refund with its current status.
type RefundDetails struct {
	Response  `json:"-"`
	RefundID  string     `json:"refund_id"`
	PaymentID string     `json:"payment_id"`
	Amount    Amount     `json:"amount"`
	Reason    *string    `json:"reason"`
	Status    string     `json:"status"` // PENDING, COMPLETED, FAILED
	CreatedAt time.Time  `json:"created_at"`
	SettledAt *time.Time `json:"settled_at"`
}

// Refund reads one refund (GET /api/v1/gateway/refunds/{refund_id}).
func (c *Client) Refund(ctx context.Context, refundID string) (*RefundDetails, error) {
	var out struct {
		Data RefundDetails `json:"data"`
	}
	resp, err := c.do(ctx, call{method: http.MethodGet,
		path: "/api/v1/gateway/refunds/" + url.PathEscape(refundID), policy: readPolicy}, &out)
	if err != nil {
		return nil, err
	}
	out.Data.Response = resp
	return &out.Data, nil
}

// Balance is the wallet balance.
type Balance struct {
	Response
	Available Amount    // can be withdrawn or moved
	Pending   Amount    // held by pending payouts and refunds
	Blocked   Amount    // held by open MED disputes (docs/med.md)
	Debt      Amount    // owed after MED returns; later credits pay it first
	Currency  string    // BRL
	Timestamp time.Time // of the query
}

// Balance reads the wallet balance (GET /api/v1/wallet/balance).
func (c *Client) Balance(ctx context.Context) (*Balance, error) {
	var out struct {
		Data struct {
			Available int64  `json:"available_cents"`
			Pending   int64  `json:"pending_cents"`
			Blocked   int64  `json:"blocked_cents"`
			Debt      int64  `json:"debt_cents"`
			Currency  string `json:"currency"`
		} `json:"data"`
		Timestamp time.Time `json:"timestamp"`
	}
	resp, err := c.do(ctx, call{method: http.MethodGet, path: "/api/v1/wallet/balance", policy: readPolicy}, &out)
	if err != nil {
		return nil, err
	}
	return &Balance{Response: resp, Available: Centavos(out.Data.Available), Pending: Centavos(out.Data.Pending),
		Blocked: Centavos(out.Data.Blocked), Debt: Centavos(out.Data.Debt), Currency: out.Data.Currency, Timestamp: out.Timestamp}, nil
}

// Transaction is a charge or a payout as the wallet reports it.
type Transaction struct {
	PaymentID      string     `json:"payment_id"` // a payout's transaction_id
	ExternalID     string     `json:"external_id"`
	Type           string     `json:"type"`   // TypeCashin, TypeCashout, TypeSplit or TypeTransfer
	Status         string     `json:"status"` // StatusPending, StatusPaid, …
	Amount         Amount     `json:"amount"`
	Tax            Amount     `json:"tax"`
	RefundedAmount Amount     `json:"refunded_amount"`
	CreatedAt      time.Time  `json:"created_at"`
	ConfirmedDate  *time.Time `json:"confirmed_date"`
	// PaidAmount is what the payer paid: nil until a charge is paid, and
	// for payouts. With a real PSP it may differ from Amount; Tax is then
	// the fee on PaidAmount and AmountMismatch is true.
	PaidAmount     *Amount `json:"paid_amount"`
	AmountMismatch bool    `json:"amount_mismatch"`
	// Due holds the terms of a charge with a due date (nil for any other);
	// AmountDueToday is what it costs when paid today (São Paulo date),
	// nil once it can no longer be paid. For such a charge AmountMismatch
	// compares PaidAmount with what was due on the day it was paid.
	Due            *Due    `json:"due,omitempty"`
	AmountDueToday *Amount `json:"amount_due_today,omitempty"`
	// RecurrenceID names the recurrence of a cycle charge, or of a
	// recurrence's first payment (docs/recurrences.md); empty otherwise.
	RecurrenceID string `json:"recurrence_id,omitempty"`
	// Disputes are a charge's MED disputes, in its lookup only.
	Disputes []DisputeSummary `json:"disputes,omitempty"`
	// TransferID, Direction ("in" or "out") and CounterpartyAccountID
	// describe one side of a transfer between a parent and its
	// sub-account (docs/marketplace.md); empty for other transactions.
	TransferID            string `json:"transfer_id,omitempty"`
	Direction             string `json:"direction,omitempty"`
	CounterpartyAccountID string `json:"counterparty_account_id,omitempty"`
	// ScheduledDate is a scheduled payout's São Paulo date (it reads
	// StatusPending until then); empty for every other transaction.
	ScheduledDate string `json:"scheduled_date,omitempty"`
	// Splits lists a split charge's receivers and what each was credited,
	// in its lookup only; SourcePaymentID is, on a receiver's split
	// transaction (TypeSplit), the charge it came from, whose client is
	// CounterpartyAccountID.
	Splits          []SplitCredit `json:"splits,omitempty"`
	SourcePaymentID string        `json:"source_payment_id,omitempty"`
}

// DisputeSummary is a dispute as a charge's lookup lists it.
type DisputeSummary struct {
	DisputeID string `json:"dispute_id"`
	Status    string `json:"status"`
	Amount    Amount `json:"amount"`
}

// LookupQuery names a transaction by PaymentID, ExternalID or both (they
// must then identify the same transaction).
type LookupQuery struct {
	PaymentID  string `json:"payment_id,omitempty"`
	ExternalID string `json:"external_id,omitempty"`
}

// LookupResult is the transaction found by Lookup.
type LookupResult struct {
	Response
	Transaction
}

// Lookup finds one transaction (POST /api/v1/wallet/transaction).
func (c *Client) Lookup(ctx context.Context, q LookupQuery) (*LookupResult, error) {
	if q.PaymentID == "" && q.ExternalID == "" {
		return nil, errors.New("client: Lookup needs a PaymentID, an ExternalID or both")
	}
	var out struct {
		Data Transaction `json:"data"`
	}
	resp, err := c.do(ctx, call{method: http.MethodPost, path: "/api/v1/wallet/transaction", body: q, policy: readPolicy}, &out)
	if err != nil {
		return nil, err
	}
	return &LookupResult{Response: resp, Transaction: out.Data}, nil
}

// HistoryQuery filters the history. Zero fields are not sent.
type HistoryQuery struct {
	Limit  int       // page size, 1–100 (server default 50)
	Status string    // only this status
	Type   string    // TypeCashin, TypeCashout, TypeSplit or TypeTransfer
	From   time.Time // created at or after
	To     time.Time // created before
	Cursor string    // start at this page (a NextCursor)
}

// TransactionPage is one page of the history.
type TransactionPage struct {
	Response
	Transactions []Transaction
	NextCursor   string // empty on the last page
}

// HistoryPage reads one page of the history, newest first
// (GET /api/v1/wallet/transactions).
func (c *Client) HistoryPage(ctx context.Context, q HistoryQuery) (*TransactionPage, error) {
	v := url.Values{}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("status", q.Status)
	set("type", q.Type)
	set("cursor", q.Cursor)
	if !q.From.IsZero() {
		v.Set("from", q.From.UTC().Format(time.RFC3339Nano))
	}
	if !q.To.IsZero() {
		v.Set("to", q.To.UTC().Format(time.RFC3339Nano))
	}
	var out struct {
		Data       []Transaction `json:"data"`
		NextCursor *string       `json:"next_cursor"`
	}
	resp, err := c.do(ctx, call{method: http.MethodGet, path: "/api/v1/wallet/transactions", query: v, policy: readPolicy}, &out)
	if err != nil {
		return nil, err
	}
	p := &TransactionPage{Response: resp, Transactions: out.Data}
	if out.NextCursor != nil {
		p.NextCursor = *out.NextCursor
	}
	return p, nil
}

// History iterates over every transaction matching q, newest first,
// following the cursor from page to page. An error ends the iteration after
// being yielded once (with a zero Transaction).
//
//	for tx, err := range c.History(ctx, client.HistoryQuery{Type: client.TypeCashout}) {
//		if err != nil { return err }
//		…
//	}
func (c *Client) History(ctx context.Context, q HistoryQuery) iter.Seq2[Transaction, error] {
	return allPages(func(cursor string) ([]Transaction, string, error) {
		q.Cursor = cursor
		p, err := c.HistoryPage(ctx, q)
		if err != nil {
			return nil, "", err
		}
		return p.Transactions, p.NextCursor, nil
	}, q.Cursor)
}

// allPages iterates over the rows of every page read by page, from cursor
// on, until a page has no next cursor; an error ends the iteration after
// being yielded once (with a zero row).
func allPages[T any](page func(cursor string) ([]T, string, error), cursor string) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for {
			rows, next, err := page(cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, r := range rows {
				if !yield(r, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			cursor = next
		}
	}
}

// Delivery is one webhook event sent about a transaction, with its
// attempts.
type Delivery struct {
	EventID   string            `json:"event_id"`
	Event     string            `json:"event"` // EventCashinPaid, …
	PaymentID string            `json:"payment_id"`
	URL       string            `json:"url"`
	Status    string            `json:"status"` // pending, delivered, failed
	Attempts  []DeliveryAttempt `json:"attempts"`
}

// DeliveryAttempt is one attempt to deliver an event.
type DeliveryAttempt struct {
	At         time.Time `json:"at"`
	StatusCode *int      `json:"status_code"` // nil when no answer arrived
	LatencyMS  int64     `json:"latency_ms"`
	Error      *string   `json:"error"` // a class such as "timeout"; nil on success
}

// DeliveryList is the webhook log of one transaction, oldest event first.
type DeliveryList struct {
	Response
	Deliveries []Delivery
}

// Deliveries lists the webhook events about an id with every attempt
// (GET /api/v1/webhooks/deliveries): a charge's payment_id (its events and
// its refunds'), a payout's transaction_id, a refund_id or a recurrence_id.
func (c *Client) Deliveries(ctx context.Context, paymentID string) (*DeliveryList, error) {
	var out struct {
		Data []Delivery `json:"data"`
	}
	resp, err := c.do(ctx, call{method: http.MethodGet, path: "/api/v1/webhooks/deliveries",
		query: url.Values{"payment_id": {paymentID}}, policy: readPolicy}, &out)
	if err != nil {
		return nil, err
	}
	return &DeliveryList{Response: resp, Deliveries: out.Data}, nil
}

// Accepted is a 202 answer.
type Accepted struct {
	Response `json:"-"`
	Message  string `json:"message"`
}

// RetryDelivery queues one more delivery of an event, with the same
// webhook-id (POST /api/v1/webhooks/deliveries/{event_id}/retry). It is not
// repeated after a network error or a 5xx, which could send the event twice;
// a 429 is still waited out.
func (c *Client) RetryDelivery(ctx context.Context, eventID string) (*Accepted, error) {
	var out Accepted
	resp, err := c.do(ctx, call{method: http.MethodPost,
		path: "/api/v1/webhooks/deliveries/" + url.PathEscape(eventID) + "/retry", policy: unsafePolicy}, &out)
	if err != nil {
		return nil, err
	}
	out.Response = resp
	return &out, nil
}
