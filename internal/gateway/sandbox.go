package gateway

import (
	"context"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider/sandbox"
)

// SandboxPay pays the charge as the sandbox's simulated payer does: the
// exact amount, now, through ReceivePayment. The API, the pay page and the
// panel all pay this way. Errors: ENotFound (no sandbox here, or no such
// charge), EUnprocessable (the charge can no longer be paid).
func (s *Service) SandboxPay(ctx context.Context, charge Transaction) (Transaction, error) {
	if !s.SandboxPayments() {
		// The routes exist only in the sandbox; this guards a future one.
		return Transaction{}, pix.Errorf(pix.ENotFound, "Charge not found")
	}
	return s.ReceivePayment(ctx, sandbox.Provider{}.PaymentFor(charge.TxID, charge.Amount, s.Now()))
}
