// Package provider is the seam between pixgate and the PSP that moves money
// on the PIX network. The gateway talks to the network only through these
// types; provider/sandbox simulates it, and a real PSP adapter goes beside it.
package provider

import (
	"context"
	"errors"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// Payment is an inbound PIX payment the PSP reports: a payer paid the BR
// Code whose txid is TxID.
type Payment struct {
	TxID       string
	Amount     pix.Amount
	EndToEndID string
	PaidAt     time.Time
}

// Outcome is the final result of an outgoing transfer (payout or refund).
type Outcome string

// Outcomes of an outgoing transfer.
const (
	// Completed: the money reached the beneficiary.
	Completed Outcome = "completed"
	// Failed: the transfer did not happen; the funds are released.
	Failed Outcome = "failed"
	// Returned: completed, then the beneficiary's bank returned the amount.
	Returned Outcome = "returned"
)

// Transfer is an outgoing PIX transfer to settle.
type Transfer struct {
	ID      string
	Amount  pix.Amount
	KeyType pix.KeyType
	Key     string
	Reason  string // refunds: the client's reason
	Refund  bool
}

// Provider settles outgoing transfers.
type Provider interface {
	// Settle sends the transfer and returns its final outcome. It must be
	// idempotent per Transfer.ID: the gateway may call it again after a crash.
	Settle(ctx context.Context, t Transfer) (Outcome, error)
}

// None is the Provider of a process that settles no transfer: the
// administration commands, which create clients and users but never pay.
// Naming it keeps the simulator from standing in for a PSP unnoticed.
type None struct{}

// ErrNone is what None.Settle returns.
var ErrNone = errors.New("provider: this process settles no transfers")

// Settle refuses every transfer with ErrNone.
func (None) Settle(context.Context, Transfer) (Outcome, error) { return "", ErrNone }

var _ Provider = None{}
