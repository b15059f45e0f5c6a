package client

import (
	"context"
	"net/http"
	"net/url"
)

// SandboxResult is a charge after a sandbox tool changed it.
type SandboxResult struct {
	Response
	Transaction
}

// SandboxPay pays a pending charge as if a payer had paid it
// (POST /api/v1/sandbox/charges/{payment_id}/pay): the charge becomes
// StatusPaid and pix.cashin.paid is sent to its postbackUrl. Sandbox only:
// in production the path answers 404.
//
// It is idempotent: paying a charge already paid (or refunded) answers 200
// with the charge as it is, crediting nothing and sending no event again.
// So, like a read, it is retried after a network error or a 5xx, and a 429
// is waited out. A cancelled charge cannot be paid: 422.
func (c *Client) SandboxPay(ctx context.Context, paymentID string) (*SandboxResult, error) {
	return c.sandbox(ctx, paymentID, "pay")
}

// SandboxExpire cancels a pending charge as if it had expired
// (POST /api/v1/sandbox/charges/{payment_id}/expire): the charge becomes
// StatusCancelled and pix.cashin.cancelled is sent. Sandbox only: in
// production the path answers 404.
//
// It is idempotent: expiring a charge already cancelled answers 200 with the
// charge as it is and sends no event again. So, like a read, it is retried
// after a network error or a 5xx, and a 429 is waited out. A paid charge
// cannot be expired: 422.
func (c *Client) SandboxExpire(ctx context.Context, paymentID string) (*SandboxResult, error) {
	return c.sandbox(ctx, paymentID, "expire")
}

func (c *Client) sandbox(ctx context.Context, paymentID, action string) (*SandboxResult, error) {
	var out struct {
		Data Transaction `json:"data"`
	}
	resp, err := c.do(ctx, call{method: http.MethodPost,
		path: "/api/v1/sandbox/charges/" + url.PathEscape(paymentID) + "/" + action, policy: readPolicy}, &out)
	if err != nil {
		return nil, err
	}
	return &SandboxResult{Response: resp, Transaction: out.Data}, nil
}
