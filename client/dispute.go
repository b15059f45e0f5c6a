package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Dispute statuses, reasons and outcomes (docs/med.md).
const (
	DisputeOpen   = "OPEN"
	DisputeClosed = "CLOSED"

	DisputeReasonFraud              = "FRAUD"
	DisputeReasonOperationalFailure = "OPERATIONAL_FAILURE"
	DisputeReasonPixAutomatico      = "PIX_AUTOMATICO"

	OutcomeReleased = "released"
	OutcomeReturned = "returned"
)

// Dispute is a MED contest of a Pix a charge received: while it is OPEN
// its Amount is blocked in the balance; it closes released (the block is
// given back) or returned (a MED devolução took ReturnedAmount).
type Dispute struct {
	Response       `json:"-"`
	DisputeID      string          `json:"dispute_id"`
	PaymentID      string          `json:"payment_id"`
	Amount         Amount          `json:"amount"`
	Reason         string          `json:"reason"` // DisputeReasonFraud, …
	Status         string          `json:"status"` // DisputeOpen or DisputeClosed
	RespondBy      time.Time       `json:"respond_by"`
	Defense        *DisputeDefense `json:"defense"`
	Outcome        *string         `json:"outcome"` // nil while OPEN; OutcomeReleased or OutcomeReturned
	ReturnedAmount Amount          `json:"returned_amount"`
	OpenedAt       time.Time       `json:"opened_at"`
	ClosedAt       *time.Time      `json:"closed_at"`
}

// DisputeDefense is the merchant's answer to a dispute.
type DisputeDefense struct {
	Accept        bool      `json:"accept"`
	Justification string    `json:"justification"`
	At            time.Time `json:"at"`
}

// DisputeQuery filters the disputes' list; every field is optional.
type DisputeQuery struct {
	Status    string // DisputeOpen or DisputeClosed
	PaymentID string
	Limit     int    // 1–100; 0 means the server's default (50)
	Cursor    string // from DisputePage.NextCursor
}

// DisputePage is one page of disputes, newest first.
type DisputePage struct {
	Response
	Data       []Dispute
	NextCursor string // "" on the last page
}

// Dispute reads one dispute (GET /api/v1/gateway/disputes/{dispute_id});
// another client's or an unknown one is a 404.
func (c *Client) Dispute(ctx context.Context, disputeID string) (*Dispute, error) {
	return c.disputeCall(ctx, http.MethodGet, "/api/v1/gateway/disputes/"+url.PathEscape(disputeID), nil, readPolicy)
}

// DisputesPage reads one page of the client's disputes
// (GET /api/v1/gateway/disputes).
func (c *Client) DisputesPage(ctx context.Context, q DisputeQuery) (*DisputePage, error) {
	v := url.Values{}
	for k, s := range map[string]string{"status": q.Status, "payment_id": q.PaymentID, "cursor": q.Cursor} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var out struct {
		Data       []Dispute `json:"data"`
		NextCursor *string   `json:"next_cursor"`
	}
	resp, err := c.do(ctx, call{method: http.MethodGet, path: "/api/v1/gateway/disputes", query: v, policy: readPolicy}, &out)
	if err != nil {
		return nil, err
	}
	p := &DisputePage{Response: resp, Data: out.Data}
	if out.NextCursor != nil {
		p.NextCursor = *out.NextCursor
	}
	return p, nil
}

// Disputes iterates over every dispute q selects, newest first, reading
// page after page; it stops at the first error, which it yields.
func (c *Client) Disputes(ctx context.Context, q DisputeQuery) iter.Seq2[Dispute, error] {
	return allPages(func(cursor string) ([]Dispute, string, error) {
		q.Cursor = cursor
		p, err := c.DisputesPage(ctx, q)
		if err != nil {
			return nil, "", err
		}
		return p.Data, p.NextCursor, nil
	}, q.Cursor)
}

// DefendDispute sends the merchant's answer to an OPEN dispute before its
// RespondBy (POST /api/v1/gateway/disputes/{dispute_id}/defense): accept
// agrees the money goes back; justification is 1–2000 characters. A
// second defense, a CLOSED dispute or a late one is a 422. It is not
// repeated after a network error (a repeat would be refused as a second
// defense): read the dispute to learn whether it arrived.
func (c *Client) DefendDispute(ctx context.Context, disputeID string, accept bool, justification string) (*Dispute, error) {
	body := map[string]any{"accept": accept, "justification": justification}
	return c.disputeCall(ctx, http.MethodPost, "/api/v1/gateway/disputes/"+url.PathEscape(disputeID)+"/defense", body, unsafePolicy)
}

// SandboxDispute makes the payer's bank contest a paid charge
// (POST /api/v1/sandbox/charges/{payment_id}/dispute): amount nil means
// what is left of the Pix, reason "" means DisputeReasonFraud. Sandbox only.
func (c *Client) SandboxDispute(ctx context.Context, paymentID string, amount *Amount, reason string) (*Dispute, error) {
	body := map[string]any{}
	if amount != nil {
		body["amount"] = *amount
	}
	if reason != "" {
		body["reason"] = reason
	}
	return c.disputeCall(ctx, http.MethodPost, "/api/v1/sandbox/charges/"+url.PathEscape(paymentID)+"/dispute", body, unsafePolicy)
}

// SandboxResolveDispute decides an OPEN dispute as the PSP would
// (POST /api/v1/sandbox/disputes/{dispute_id}/resolve): outcome is
// OutcomeReleased or OutcomeReturned; amount (returned only) nil means the
// disputed amount. Sandbox only.
func (c *Client) SandboxResolveDispute(ctx context.Context, disputeID, outcome string, amount *Amount) (*Dispute, error) {
	body := map[string]any{"outcome": outcome}
	if amount != nil {
		body["amount"] = *amount
	}
	return c.disputeCall(ctx, http.MethodPost, "/api/v1/sandbox/disputes/"+url.PathEscape(disputeID)+"/resolve", body, unsafePolicy)
}

// SandboxMedReturn makes the PSP return a paid charge under MED with no
// dispute before it (POST /api/v1/sandbox/charges/{payment_id}/med-return):
// amount nil means what is left, natureza "" none. Sandbox only.
func (c *Client) SandboxMedReturn(ctx context.Context, paymentID string, amount *Amount, natureza string) (*Dispute, error) {
	body := map[string]any{}
	if amount != nil {
		body["amount"] = *amount
	}
	if natureza != "" {
		body["natureza"] = natureza
	}
	return c.disputeCall(ctx, http.MethodPost, "/api/v1/sandbox/charges/"+url.PathEscape(paymentID)+"/med-return", body, unsafePolicy)
}

// disputeCall makes a call whose answer is {statusCode, data: dispute}.
func (c *Client) disputeCall(ctx context.Context, method, path string, body any, p policy) (*Dispute, error) {
	var out struct {
		Data Dispute `json:"data"`
	}
	resp, err := c.do(ctx, call{method: method, path: path, body: body, policy: p}, &out)
	if err != nil {
		return nil, err
	}
	out.Data.Response = resp
	return &out.Data, nil
}
