// Package sandbox simulates the PIX network for the sandbox environment:
// payers paying charges on request, and outgoing transfers whose outcome is
// chosen by the beneficiary's key (CONTRACT §4).
package sandbox

import (
	"context"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
)

// Provider is the sandbox PSP.
type Provider struct{}

// PaymentFor returns the payment a payer makes when paying exactly the
// charge with that txid and amount.
func (Provider) PaymentFor(txid string, amount pix.Amount, now time.Time) provider.Payment {
	return provider.Payment{TxID: txid, Amount: amount, EndToEndID: "E" + txid, PaidAt: now}
}

// Settle decides a transfer's outcome: an EMAIL key ending in @fail.sandbox
// fails, one ending in @reverse.sandbox completes and is then returned, a
// refund whose reason is exactly "sandbox:fail" fails; everything else
// completes.
func (Provider) Settle(_ context.Context, t provider.Transfer) (provider.Outcome, error) {
	if t.Refund {
		if t.Reason == "sandbox:fail" {
			return provider.Failed, nil
		}
		return provider.Completed, nil
	}
	if t.KeyType == pix.KeyEmail {
		key := strings.ToLower(t.Key)
		switch {
		case strings.HasSuffix(key, "@fail.sandbox"):
			return provider.Failed, nil
		case strings.HasSuffix(key, "@reverse.sandbox"):
			return provider.Returned, nil
		}
	}
	return provider.Completed, nil
}

var _ provider.Provider = Provider{}
