// Package sandbox simulates the PIX network for the sandbox environment:
// static BR Codes written by pixgate itself, payers paying charges on
// request, and outgoing transfers whose outcome is chosen by the
// beneficiary's key (README.md, A first payout and refund). Nothing leaves the process.
package sandbox

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/brcode"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
)

// Provider is the sandbox PSP. Its zero value settles transfers but cannot
// write BR Codes: charges need the receiving side.
type Provider struct {
	// PixKey, MerchantName and MerchantCity are written into every BR Code.
	PixKey       string
	MerchantName string
	MerchantCity string
}

// Name returns provider.NameSandbox.
func (Provider) Name() string { return provider.NameSandbox }

// Capabilities: payouts, static BR Codes with a 25-character txid, simulated.
func (Provider) Capabilities() provider.Capabilities {
	return provider.Capabilities{Payouts: true, TxIDLength: brcode.TxIDLen, Simulated: true}
}

// Start does nothing: there is no PSP to reach.
func (Provider) Start(context.Context) error { return nil }

// CreateCharge writes c's static BR Code: p's key and merchant, c's amount and txid.
func (p Provider) CreateCharge(_ context.Context, c provider.Charge) (string, error) {
	code, err := brcode.Encode(brcode.Payload{Key: p.PixKey, MerchantName: p.MerchantName,
		MerchantCity: p.MerchantCity, Amount: int64(c.Amount), TxID: c.TxID})
	if err != nil {
		return "", fmt.Errorf("sandbox: encode BR Code: %w", err)
	}
	return code, nil
}

// PaymentFor returns the payment a payer makes when paying exactly the
// charge with that txid and amount. Its end-to-end id is derived from the
// txid, 32 characters as on the PIX network.
func (Provider) PaymentFor(txid string, amount pix.Amount, now time.Time) provider.Payment {
	return provider.Payment{TxID: txid, Amount: amount, EndToEndID: endToEnd("E", txid), PaidAt: now}
}

// ChargePayments reports none: sandbox payers pay through the sandbox
// endpoints, which credit at once.
func (Provider) ChargePayments(context.Context, string) ([]provider.Payment, error) { return nil, nil }

// CancelCharge does nothing: a static BR Code cannot be withdrawn.
func (Provider) CancelCharge(context.Context, string) error { return nil }

// ConfirmPayment knows no payment: none is reported by webhook here.
func (Provider) ConfirmPayment(context.Context, string) (provider.Payment, error) {
	return provider.Payment{}, provider.ErrNotFound
}

// Received lists nothing, for the same reason.
func (Provider) Received(context.Context, time.Time, time.Time) ([]provider.Payment, error) {
	return nil, nil
}

// Send accepts every transfer; Status tells its outcome.
func (p Provider) Send(ctx context.Context, t provider.Transfer) (provider.TransferState, error) {
	return provider.TransferState{ID: t.ID, Status: provider.Processing}, nil
}

// Status decides a transfer's outcome: an EMAIL key ending in @fail.sandbox
// fails, one ending in @reverse.sandbox completes and is then returned, a
// refund whose reason is exactly "sandbox:fail" fails; everything else
// completes.
func (Provider) Status(_ context.Context, t provider.Transfer) (provider.TransferState, error) {
	st := provider.TransferState{ID: t.ID, Status: provider.Completed, EndToEndID: endToEnd("E", provider.HexID(t.ID))}
	if t.Refund {
		st.EndToEndID = endToEnd("D", provider.HexID(t.ID))
		if t.Description == "sandbox:fail" {
			st.Status, st.EndToEndID = provider.Failed, ""
		}
		return st, nil
	}
	if t.KeyType == pix.KeyEmail {
		key := strings.ToLower(t.Key)
		switch {
		case strings.HasSuffix(key, "@fail.sandbox"):
			st.Status, st.EndToEndID = provider.Failed, ""
		case strings.HasSuffix(key, "@reverse.sandbox"):
			st.Status = provider.Returned
		}
	}
	return st, nil
}

// endToEnd returns a 32-character end-to-end id: prefix, the sandbox's
// ISPB (eight zeros) and the end of id, upper-cased.
func endToEnd(prefix, id string) string {
	const n = 32 - 1 - 8
	if len(id) > n {
		id = id[len(id)-n:]
	}
	return prefix + "00000000" + strings.Repeat("0", n-len(id)) + strings.ToUpper(id)
}

var _ provider.Provider = Provider{}
