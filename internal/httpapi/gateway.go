package httpapi

import (
	"context"
	"time"

	"github.com/pixgate/pixgate/internal/account"
	"github.com/pixgate/pixgate/internal/cashin"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/recurrence"
)

// Gateway is what the API asks of the use cases (*gateway.Service). Each
// method's errors are those its gateway doc comment lists.
type Gateway interface {
	// Sandbox is the sandbox's actions (pay, expire, recurrences' payer,
	// the client's clock); nil outside the sandbox, where their routes are
	// not served.
	Sandbox() *gateway.Sandbox
	// Unavailable reports the errors of a database out of reach (503).
	Unavailable(err error) bool
	Authenticate(ctx context.Context, clientID, secret string) (pix.Client, error)
	CreateCharge(ctx context.Context, c pix.Client, in gateway.Idempotent[gateway.ChargeRequest]) (resp gateway.ChargeResponse, replayed bool, err error)
	CreatePayout(ctx context.Context, c pix.Client, in gateway.Idempotent[gateway.PayoutRequest]) (gateway.PayoutResponse, bool, error)
	CreateRefund(ctx context.Context, c pix.Client, in gateway.Idempotent[gateway.RefundRequest]) (gateway.RefundResponse, bool, error)
	Charge(ctx context.Context, c pix.Client, id string) (pix.Transaction, error)
	PayerCharge(ctx context.Context, id string) (pix.Transaction, error)
	// Today is the São Paulo date that prices charges with a due date.
	Today() pix.Date
	CancelCharge(ctx context.Context, c pix.Client, id string) (pix.Transaction, error)
	Refund(ctx context.Context, c pix.Client, id string) (gateway.RefundView, error)
	Refunds(ctx context.Context, c pix.Client, q gateway.RefundsQuery) ([]gateway.RefundView, string, error)
	Balance(ctx context.Context, c pix.Client) (gateway.Balance, error)
	Lookup(ctx context.Context, c pix.Client, paymentID, externalID string) (pix.Transaction, error)
	History(ctx context.Context, c pix.Client, q gateway.HistoryQuery) ([]pix.Transaction, string, error)
	Statement(ctx context.Context, c pix.Client, q gateway.StatementQuery) (*gateway.Statement, error)
	Deliveries(ctx context.Context, c pix.Client, paymentID string) ([]gateway.DeliveryView, error)
	RetryDelivery(ctx context.Context, c pix.Client, eventID string) error
	TestWebhook(ctx context.Context, c pix.Client, rawURL string) (gateway.TestAttemptView, error)
	// Payouts is what payouts do beyond the single request: cancel a
	// scheduled payout, batches (docs/payouts.md).
	Payouts() *gateway.Payouts
	// Cashin takes the PSP's webhook reports of received Pix.
	Cashin() *cashin.Service
	// Recurrences is Pix Automático: the merchant's recurrences, the
	// PSP's reports of them and, in the sandbox, the payer's actions.
	Recurrences() *recurrence.Service
	// Accounts is sub-accounts and the transfers between a parent and
	// its sub-accounts.
	Accounts() *account.Service
	// ClientNow and ClientToday are the time and the São Paulo date on
	// the client's clock (a sandbox client may have advanced it).
	ClientNow(c pix.Client) time.Time
	ClientToday(c pix.Client) pix.Date
	// TodayOf is ClientToday for a client known by id (the payer's page).
	TodayOf(ctx context.Context, clientID string) pix.Date
}
