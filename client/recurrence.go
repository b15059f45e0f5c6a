package client

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// Frequencies of a recurrence: how often its cycles fall due. They are the
// server's own names.
const (
	FrequencyWeekly     = string(pix.Weekly)
	FrequencyMonthly    = string(pix.Monthly)
	FrequencyQuarterly  = string(pix.Quarterly)
	FrequencySemiannual = string(pix.Semiannual)
	FrequencyAnnual     = string(pix.Annual)
)

// Retry policies of a recurrence: whether a failed debit is attempted
// again (RetryThreeInSevenDays: on the 1st, 3rd and 5th day after the due
// date).
const (
	RetryNone             = string(pix.RetryNone)
	RetryThreeInSevenDays = string(pix.RetryThreeInSevenDays)
)

// Statuses of a recurrence. RecurrenceCreated waits for the payer's
// answer; RecurrenceRejected, RecurrenceExpired, RecurrenceCancelled and
// RecurrenceFinished are final.
const (
	RecurrenceCreated   = string(pix.RecurrenceCreated)
	RecurrenceApproved  = string(pix.RecurrenceApproved)
	RecurrenceRejected  = string(pix.RecurrenceRejected)
	RecurrenceExpired   = string(pix.RecurrenceExpired)
	RecurrenceCancelled = string(pix.RecurrenceCancelled)
	RecurrenceFinished  = string(pix.RecurrenceFinished)
)

// Who cancelled a recurrence (its CancelledBy).
const (
	CancelledByMerchant = string(pix.CancelledByMerchant)
	CancelledByPayer    = string(pix.CancelledByPayer)
)

// RecurrenceRequest creates a Pix Automático recurrence
// (POST /api/v1/gateway/recurrences; docs/recurrences.md): the payer
// authorizes it once by scanning its QR code, and each cycle's charge is
// then debited on its due date. Every field is required except EndDate,
// FirstPayment and IdempotencyKey. A missing or invalid field is a 400
// whose Details name it (payer.document, start_date, …), and nothing is
// created.
type RecurrenceRequest struct {
	// ExternalID is your reference for the recurrence, unique per client
	// among recurrences: 1–64 characters of A-Z a-z 0-9 . _ : -. The same
	// ExternalID with the same body replays the first answer.
	ExternalID string          `json:"external_id"`
	Payer      RecurrencePayer `json:"payer"`
	// Contract is the contract, order or plan the payments are for, and
	// Description what is paid: 1–35 characters each; the payer's bank
	// shows both.
	Contract    string `json:"contract"`
	Description string `json:"description"`
	// Frequency is FrequencyWeekly, FrequencyMonthly, FrequencyQuarterly,
	// FrequencySemiannual or FrequencyAnnual.
	Frequency string `json:"frequency"`
	// StartDate is the first due date, "YYYY-MM-DD", at least 2 days after
	// today on the São Paulo calendar.
	StartDate string `json:"start_date"`
	// EndDate, optional, is the last day a cycle may be due on (a cycle due
	// on it is included); empty: the recurrence runs until cancelled.
	EndDate string `json:"end_date,omitempty"`
	// Amount is every cycle's amount, greater than 0, at most
	// R$ 1,000,000.00.
	Amount Amount `json:"amount"`
	// Retry is RetryNone or RetryThreeInSevenDays.
	Retry string `json:"retry"`
	// FirstPayment, optional, is paid at once with the same QR code that
	// authorizes the recurrence (an ordinary cash-in charge); zero: the
	// code only authorizes.
	FirstPayment Amount `json:"first_payment,omitzero"`
	// PostbackURL receives the recurrence's events and those of its
	// charges: an absolute https URL (http is accepted in the sandbox).
	PostbackURL string `json:"postbackUrl"`
	// Splits, optional, are copied to every charge of the recurrence
	// (docs/marketplace.md); amounts add up to at most Amount.
	Splits []Split `json:"splits,omitempty"`
	// IdempotencyKey is sent as the Idempotency-Key header (1–255 visible
	// ASCII characters); optional, generated when empty.
	IdempotencyKey string `json:"-"`
}

// RecurrencePayer is whom a recurrence's cycles debit.
type RecurrencePayer struct {
	Name     string `json:"name"`     // 1–140 characters
	Document string `json:"document"` // CPF or CNPJ with valid check digits, digits only
}

// Recurrence is a created recurrence (status RecurrenceCreated), with the
// code the payer scans to authorize it.
type Recurrence struct {
	Response     `json:"-"`
	RecurrenceID string `json:"recurrence_id"`
	ExternalID   string `json:"external_id"`
	Status       string `json:"status"`
	// QRCode (and its PNG, QRCodeImage, Base64) authorizes the recurrence
	// or, with a FirstPayment, pays it and authorizes at once.
	QRCode      string `json:"qrcode"`
	QRCodeImage string `json:"qrcode_image"`
	Frequency   string `json:"frequency"`
	Amount      Amount `json:"amount"`
	StartDate   string `json:"start_date"`
	EndDate     string `json:"end_date"` // empty when none
	Retry       string `json:"retry"`
	NextDueDate string `json:"next_due_date"`
	// FirstPayment is nil without one; FirstPaymentID is then empty,
	// otherwise the payment_id of its cash-in charge.
	FirstPayment   *Amount `json:"first_payment"`
	FirstPaymentID string  `json:"first_payment_id"`
	// Splits are the recurrence's splits as requested (each with its
	// Percent or its Amount), empty without any.
	Splits []Split `json:"splits"`
}

// RecurrenceDetails is a recurrence as it stands, with its cycle charges.
type RecurrenceDetails struct {
	Response     `json:"-"`
	RecurrenceID string `json:"recurrence_id"`
	ExternalID   string `json:"external_id"`
	Status       string `json:"status"` // RecurrenceCreated, RecurrenceApproved, …
	// CancelledBy is CancelledByMerchant or CancelledByPayer when Status
	// is RecurrenceCancelled, empty otherwise.
	CancelledBy string          `json:"cancelled_by"`
	Payer       RecurrencePayer `json:"payer"`
	Contract    string          `json:"contract"`
	Description string          `json:"description"`
	Frequency   string          `json:"frequency"`
	Amount      Amount          `json:"amount"`
	StartDate   string          `json:"start_date"`
	EndDate     string          `json:"end_date"` // empty when none
	Retry       string          `json:"retry"`
	// NextDueDate is the next cycle's due date, empty when no cycle is
	// left or the recurrence is final.
	NextDueDate    string    `json:"next_due_date"`
	FirstPayment   *Amount   `json:"first_payment"`
	FirstPaymentID string    `json:"first_payment_id"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	// Splits are the recurrence's splits as requested, empty without
	// any; ListRecurrences leaves them out.
	Splits  []Split            `json:"splits"`
	Charges []RecurrenceCharge `json:"charges"`
}

// RecurrenceCharge is the cash-in charge of one cycle; Lookup reads it
// whole.
type RecurrenceCharge struct {
	PaymentID string `json:"payment_id"`
	DueDate   string `json:"due_date"`
	Amount    Amount `json:"amount"`
	Status    string `json:"status"`   // StatusPending, StatusPaid, StatusCancelled, …
	Attempts  int    `json:"attempts"` // debits tried, paid or failed
}

// CreateRecurrence creates a recurrence. A provider without Pix Automático
// answers 422. An error whose outcome is unknown is a *RetryError
// carrying the Idempotency-Key to repeat it with.
func (c *Client) CreateRecurrence(ctx context.Context, r RecurrenceRequest) (*Recurrence, error) {
	var out Recurrence
	resp, err := c.do(ctx, call{method: http.MethodPost, path: "/api/v1/gateway/recurrences",
		body: r, idemKey: keyOr(r.IdempotencyKey), policy: creationPolicy}, &out)
	if err != nil {
		return nil, err
	}
	out.Response = resp
	return &out, nil
}

// Recurrence reads one recurrence with its cycle charges
// (GET /api/v1/gateway/recurrences/{recurrence_id}). Another client's or
// an unknown one is a 404.
func (c *Client) Recurrence(ctx context.Context, recurrenceID string) (*RecurrenceDetails, error) {
	return c.recurrenceCall(ctx, http.MethodGet, "/api/v1/gateway/recurrences/"+url.PathEscape(recurrenceID), readPolicy)
}

// CancelRecurrence cancels a recurrence
// (POST /api/v1/gateway/recurrences/{recurrence_id}/cancel): it becomes
// RecurrenceCancelled by CancelledByMerchant, every cycle charge not yet
// paid is cancelled, and pix.recurrence.cancelled is sent. A recurrence
// already final (rejected, expired, cancelled or finished) cannot be
// cancelled: 422.
//
// It is retried like a read after a network error or a 5xx. When a retry
// is refused with 422 because an earlier attempt did cancel it (its answer
// was lost), the recurrence is read and returned, as if that answer had
// arrived.
func (c *Client) CancelRecurrence(ctx context.Context, recurrenceID string) (*RecurrenceDetails, error) {
	path := "/api/v1/gateway/recurrences/" + url.PathEscape(recurrenceID)
	out, err := c.recurrenceCall(ctx, http.MethodPost, path+"/cancel", readPolicy)
	if e := AsError(err); e != nil && e.StatusCode == http.StatusUnprocessableEntity && e.Response.Attempts > 1 {
		if r, rerr := c.Recurrence(ctx, recurrenceID); rerr == nil &&
			r.Status == RecurrenceCancelled && r.CancelledBy == CancelledByMerchant {
			return r, nil
		}
	}
	return out, err
}

// recurrenceCall makes a call whose answer is {statusCode, data: recurrence}.
func (c *Client) recurrenceCall(ctx context.Context, method, path string, p policy) (*RecurrenceDetails, error) {
	var out struct {
		Data RecurrenceDetails `json:"data"`
	}
	resp, err := c.do(ctx, call{method: method, path: path, policy: p}, &out)
	if err != nil {
		return nil, err
	}
	out.Data.Response = resp
	return &out.Data, nil
}

// SandboxApproveRecurrence authorizes a RecurrenceCreated recurrence as
// its payer would at their bank
// (POST /api/v1/sandbox/recurrences/{recurrence_id}/approve), paying its
// FirstPayment if it has one: it becomes RecurrenceApproved and
// pix.recurrence.approved is sent. Sandbox only (404 in production); a
// recurrence in another status: 422.
//
// None of the sandbox's recurrence actions is repeated after a network
// error or a 5xx (a repeat would be refused, or would make a second
// change); a 429 is waited out.
func (c *Client) SandboxApproveRecurrence(ctx context.Context, recurrenceID string) (*RecurrenceDetails, error) {
	return c.sandboxRecurrence(ctx, recurrenceID, "approve")
}

// SandboxRejectRecurrence refuses a RecurrenceCreated recurrence as its
// payer would (POST /api/v1/sandbox/recurrences/{recurrence_id}/reject):
// it becomes RecurrenceRejected and pix.recurrence.rejected is sent.
// Sandbox only; a recurrence in another status: 422.
func (c *Client) SandboxRejectRecurrence(ctx context.Context, recurrenceID string) (*RecurrenceDetails, error) {
	return c.sandboxRecurrence(ctx, recurrenceID, "reject")
}

// SandboxCancelRecurrenceByPayer cancels an approved recurrence as its
// payer would at their bank
// (POST /api/v1/sandbox/recurrences/{recurrence_id}/cancel-by-payer): it
// becomes RecurrenceCancelled by CancelledByPayer and
// pix.recurrence.cancelled is sent. Sandbox only; a recurrence that is not
// RecurrenceApproved: 422.
func (c *Client) SandboxCancelRecurrenceByPayer(ctx context.Context, recurrenceID string) (*RecurrenceDetails, error) {
	return c.sandboxRecurrence(ctx, recurrenceID, "cancel-by-payer")
}

func (c *Client) sandboxRecurrence(ctx context.Context, recurrenceID, action string) (*RecurrenceDetails, error) {
	return c.recurrenceCall(ctx, http.MethodPost,
		"/api/v1/sandbox/recurrences/"+url.PathEscape(recurrenceID)+"/"+action, unsafePolicy)
}

// SandboxCycle is the cycle charge SandboxNextCycle created.
type SandboxCycle struct {
	Response  `json:"-"`
	PaymentID string `json:"payment_id"`
	DueDate   string `json:"due_date"` // YYYY-MM-DD, as scheduled
	Amount    Amount `json:"amount"`
}

// SandboxNextCycle creates the next cycle's charge of an approved
// recurrence at once, without waiting for its window
// (POST /api/v1/sandbox/recurrences/{recurrence_id}/next-cycle); its due
// date is the scheduled one. Pay it with SandboxPay, or fail an attempt
// with SandboxFailCharge. Sandbox only; a recurrence that is not
// RecurrenceApproved, or has no cycle left: 422. Each call creates a cycle,
// so it is not repeated after a network error or a 5xx.
func (c *Client) SandboxNextCycle(ctx context.Context, recurrenceID string) (*SandboxCycle, error) {
	var out SandboxCycle
	resp, err := c.do(ctx, call{method: http.MethodPost,
		path: "/api/v1/sandbox/recurrences/" + url.PathEscape(recurrenceID) + "/next-cycle", policy: unsafePolicy}, &out)
	if err != nil {
		return nil, err
	}
	out.Response = resp
	return &out, nil
}

// SandboxFailCharge fails one debit attempt of a pending cycle charge
// (POST /api/v1/sandbox/charges/{payment_id}/fail), as a payer's bank
// without funds would: with RetryThreeInSevenDays the next attempt is
// scheduled and the charge stays StatusPending; when no attempt is left it
// becomes StatusCancelled, and pix.cashin.cancelled and
// pix.recurrence.charge_failed are sent. Sandbox only; a charge that is not
// a pending cycle charge: 422. Each call fails one attempt, so it is not
// repeated after a network error or a 5xx.
func (c *Client) SandboxFailCharge(ctx context.Context, paymentID string) (*SandboxResult, error) {
	var out struct {
		Data Transaction `json:"data"`
	}
	resp, err := c.do(ctx, call{method: http.MethodPost,
		path: "/api/v1/sandbox/charges/" + url.PathEscape(paymentID) + "/fail", policy: unsafePolicy}, &out)
	if err != nil {
		return nil, err
	}
	return &SandboxResult{Response: resp, Transaction: out.Data}, nil
}
