package gateway

import (
	"context"
	"fmt"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
)

// SandboxPayments reports whether payers pay on request here: in the
// sandbox environment, with a provider whose payers do (provider.Payer).
// With a real PSP only real payers pay.
func (s *Service) SandboxPayments() bool {
	_, ok := s.Provider.(provider.Payer)
	return s.Sandbox() && ok
}

// SandboxPay pays the charge as the sandbox's payer does: the provider
// makes the payment of the exact amount, now, and reports it; the payment
// is then confirmed at the provider and credited as every PSP-reported
// payment is. The API, the pay page and the panel all pay this way.
// Paying a charge already paid this way answers it again. Errors:
// ENotFound (the provider's payers do not pay on request, or no such
// charge), EUnprocessable (the
// charge can no longer be paid).
func (s *Service) SandboxPay(ctx context.Context, charge pix.Transaction) (pix.Transaction, error) {
	payer, ok := s.Provider.(provider.Payer)
	if !ok {
		// The routes exist only where SandboxPayments; this guards a future one.
		return pix.Transaction{}, pix.Errorf(pix.ENotFound, "Charge not found")
	}
	p, err := payer.Pay(ctx, provider.Charge{TxID: charge.TxID, Amount: charge.Amount})
	if err != nil {
		return pix.Transaction{}, fmt.Errorf("sandbox pay: %w", err)
	}
	confirmed, err := s.Provider.ConfirmPayment(ctx, p.EndToEndID)
	if err != nil {
		return pix.Transaction{}, fmt.Errorf("sandbox pay: confirm: %w", err)
	}
	// Strict: a payer's bank pays neither a charge that is closed nor
	// another amount, so neither is credited.
	return s.credit(ctx, confirmed, true)
}
