package client

import (
	"context"
	"net/http"
	"net/url"
)

// Statuses of scheduled payouts and batch items beyond a transaction's.
const (
	StatusScheduled = "SCHEDULED"
	StatusRejected  = "REJECTED"
)

// MaxBatchItems is how many payouts one batch may hold.
const MaxBatchItems = 1000

// WithScheduledDate returns r scheduled for day, a São Paulo date
// YYYY-MM-DD from tomorrow to 365 days ahead (docs/payouts.md): nothing is
// reserved and no balance is checked until that day begins; then amount +
// tax is reserved and it is sent, or it fails with pix.cashout.failed
// (reason "Insufficient balance").
func WithScheduledDate(r PayoutRequest, day string) PayoutRequest {
	r.ScheduledDate = day
	return r
}

// CancelPayout cancels a scheduled payout before its day
// (POST /api/v1/gateway/pix-payment/{transaction_id}/cancel): it becomes
// StatusCancelled and pix.cashout.cancelled is sent. Once its day has
// begun, or for a payout never scheduled: 422. Retried like a read; a 422
// on a retry whose earlier attempt did cancel it reads the payout back.
func (c *Client) CancelPayout(ctx context.Context, transactionID string) (*LookupResult, error) {
	var out struct {
		Data Transaction `json:"data"`
	}
	path := "/api/v1/gateway/pix-payment/" + url.PathEscape(transactionID) + "/cancel"
	resp, err := c.do(ctx, call{method: http.MethodPost, path: path, policy: readPolicy}, &out)
	if e := AsError(err); e != nil && e.StatusCode == http.StatusUnprocessableEntity && e.Response.Attempts > 1 {
		if t, rerr := c.Lookup(ctx, LookupQuery{PaymentID: transactionID}); rerr == nil && t.Status == StatusCancelled {
			return t, nil
		}
	}
	if err != nil {
		return nil, err
	}
	return &LookupResult{Response: resp, Transaction: out.Data}, nil
}

// BatchRequest is a batch of payouts (POST /api/v1/gateway/pix-payments/batch):
// 1 to MaxBatchItems items, each an ordinary payout with its own
// ExternalID; the batch's ExternalID makes it idempotent (a namespace of
// batches only), so a call repeated after a network error replays it.
type BatchRequest struct {
	ExternalID string `json:"external_id"`
	// CallbackURL receives pix.batch.completed, and the events of items
	// that name no CallbackURL of their own.
	CallbackURL string          `json:"callbackUrl"`
	Items       []PayoutRequest `json:"items"`
}

// BatchItem is what became of one item of a batch.
type BatchItem struct {
	Index         int    `json:"index"`
	ExternalID    string `json:"external_id"`
	TransactionID string `json:"transaction_id"` // empty when rejected
	// Status is StatusPending, StatusScheduled or StatusRejected at
	// creation; later as lookup reads the payout.
	Status string `json:"status"`
	// Error is a rejected item's error: what its single request would have
	// answered.
	Error *BatchItemError `json:"error"`
}

// BatchItemError is a rejected item's status and message.
type BatchItemError struct {
	StatusCode int    `json:"statusCode"`
	Message    string `json:"message"`
}

// Batch is a batch of payouts as created or read.
type Batch struct {
	Response   `json:"-"`
	BatchID    string `json:"batch_id"`
	ExternalID string `json:"external_id"`
	Total      int    `json:"total"`
	Accepted   int    `json:"accepted"`
	Rejected   int    `json:"rejected"`
	// Counts (Batch only) counts the items by their status now.
	Counts map[string]int `json:"counts,omitempty"`
	Items  []BatchItem    `json:"items"`
}

// CreateBatch sends a batch of payouts: each item is validated, reserved
// and idempotent on its own, in order; a rejected one carries its error
// and the others go on.
func (c *Client) CreateBatch(ctx context.Context, r BatchRequest) (*Batch, error) {
	return c.batchCall(ctx, call{method: http.MethodPost, path: "/api/v1/gateway/pix-payments/batch", body: r, policy: creationPolicy})
}

// Batch reads a batch with its items as they now read
// (GET /api/v1/gateway/pix-payments/batch/{batch_id}); another client's is
// a 404.
func (c *Client) Batch(ctx context.Context, batchID string) (*Batch, error) {
	return c.batchCall(ctx, call{method: http.MethodGet, path: "/api/v1/gateway/pix-payments/batch/" + url.PathEscape(batchID), policy: readPolicy})
}

func (c *Client) batchCall(ctx context.Context, k call) (*Batch, error) {
	var out struct {
		Data Batch `json:"data"`
	}
	resp, err := c.do(ctx, k, &out)
	if err != nil {
		return nil, err
	}
	out.Data.Response = resp
	return &out.Data, nil
}

// SandboxRunSchedule starts a scheduled payout now, as if its day had
// begun (POST /api/v1/sandbox/payouts/{transaction_id}/run-schedule).
// Sandbox only; not repeated after a network error.
func (c *Client) SandboxRunSchedule(ctx context.Context, transactionID string) (*LookupResult, error) {
	var out struct {
		Data Transaction `json:"data"`
	}
	path := "/api/v1/sandbox/payouts/" + url.PathEscape(transactionID) + "/run-schedule"
	resp, err := c.do(ctx, call{method: http.MethodPost, path: path, policy: unsafePolicy}, &out)
	if err != nil {
		return nil, err
	}
	return &LookupResult{Response: resp, Transaction: out.Data}, nil
}
