// Package sandbox is an in-process PSP for the sandbox environment. It
// stands behind the same seam as a real PSP (provider.Provider) and the
// gateway drives it down the same path: charges, with a due date or not
// (provider.DueCharger), are static BR Codes written here, a payer pays on request (Pay, the optional provider.Payer)
// and the gateway confirms the payment before it credits it, and payouts
// and refunds are sent once and their status read until final. Outcomes
// follow the rules of docs/api.md (Sandbox): a transfer completes Delay
// after pixgate accepted it; an EMAIL key ending in @fail.sandbox fails,
// one ending in @reverse.sandbox completes and is returned one Delay
// later; a refund whose reason is exactly "sandbox:fail" fails. Nothing
// leaves the process.
//
// A transfer's outcome is computed from the transfer itself and the
// clock, never remembered: every node of a cluster, and a node restarted
// after a crash, reads the same status for it.
package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/pixgate/pixgate/internal/brcode"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
)

// FailRefundReason is the refund reason that makes a sandbox refund fail.
const FailRefundReason = "sandbox:fail"

// Key suffixes of EMAIL keys whose payouts fail, or are returned.
const (
	FailKeySuffix    = "@fail.sandbox"
	ReverseKeySuffix = "@reverse.sandbox"
)

// rememberPayments bounds the payments a Provider keeps for ConfirmPayment
// and ChargePayments: the gateway confirms a payment within the request
// that made it, so only recent ones are ever asked about.
const rememberPayments = 4096

// Config is what a Provider is built from.
type Config struct {
	// PixKey, MerchantName and MerchantCity are written into every BR Code.
	PixKey       string
	MerchantName string
	MerchantCity string
	// Delay is how long after pixgate accepted it a transfer settles (and
	// how long after that a returned payout is returned); not negative.
	Delay time.Duration
	// Now is the clock transfers settle by; nil means time.Now.
	Now func() time.Time
}

// Provider is the sandbox PSP. It is safe for concurrent use.
type Provider struct {
	cfg Config
	loc *time.Location // São Paulo, whose calendar prices charges with a due date

	mu       sync.Mutex
	payments map[string]provider.Payment // by end-to-end id
	byTxID   map[string]string           // end-to-end id of the payment of each txid
	order    []string                    // end-to-end ids, oldest first
}

// New returns the sandbox PSP cfg describes.
func New(cfg Config) *Provider {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Delay = max(cfg.Delay, 0)
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		// Brazil has kept UTC−3 all year since 2019.
		loc = time.FixedZone("America/Sao_Paulo", -3*60*60)
	}
	return &Provider{cfg: cfg, loc: loc, payments: make(map[string]provider.Payment), byTxID: make(map[string]string)}
}

// Name returns provider.NameSandbox.
func (*Provider) Name() string { return provider.NameSandbox }

// Capabilities: payouts, static BR Codes with a 25-character txid written
// here (local charges), sends that only compute a status (stateless), and
// calls that never wait on a network (a second bounds them).
func (*Provider) Capabilities() provider.Capabilities {
	return provider.Capabilities{Payouts: true, TxIDLength: brcode.TxIDLen, LocalCharges: true, StatelessSends: true, CallTimeout: time.Second}
}

// now is the time of the client a call is for: the real time plus the
// client's clock offset (provider.WithClockOffset), so that a sandbox
// client that advances its clock sees its payouts settle and its
// recurrences expire as if that time had passed.
func (p *Provider) now(ctx context.Context) time.Time {
	return p.cfg.Now().Add(provider.ClockOffset(ctx))
}

// Start does nothing: there is no PSP to reach.
func (*Provider) Start(context.Context) error { return nil }

// CreateCharge writes c's static BR Code: p's key and merchant, c's amount and txid.
func (p *Provider) CreateCharge(_ context.Context, c provider.Charge) (string, error) {
	return p.encode(c.TxID, c.Amount)
}

// CreateDueCharge writes c's static BR Code as CreateCharge does, for the
// amount due today (São Paulo date): a static code carries one amount, so
// its field 54 is what the charge costs on the day it was created. The
// pay action (Pay) pays whatever amount is due on the day it names.
func (p *Provider) CreateDueCharge(ctx context.Context, c provider.DueCharge) (string, error) {
	a, ok := c.Due.AmountOn(c.Amount, pix.DateOf(p.now(ctx).In(p.loc)))
	if !ok {
		return "", fmt.Errorf("sandbox: due charge %s is past its last day: %w", c.TxID, provider.ErrRejected)
	}
	return p.encode(c.TxID, a)
}

// encode writes the static BR Code of txid for amount.
func (p *Provider) encode(txid string, amount pix.Amount) (string, error) {
	code, err := brcode.Encode(brcode.Payload{Key: p.cfg.PixKey, MerchantName: p.cfg.MerchantName,
		MerchantCity: p.cfg.MerchantCity, Amount: int64(amount), TxID: txid})
	if err != nil {
		return "", fmt.Errorf("sandbox: encode BR Code: %w", err)
	}
	return code, nil
}

// Pay makes the payment a payer makes when paying exactly charge c now,
// and reports it as a PSP does: the gateway then confirms it
// (ConfirmPayment) before it credits anything. The payer is the charge's
// (c.PayerName, c.PayerDocument), and the end-to-end id has BACEN's form
// (paymentEndToEnd), the same for the same txid within a minute. Paying a
// charge this Provider remembers paid reports that payment again, which
// is credited once.
func (p *Provider) Pay(ctx context.Context, c provider.Charge) (provider.Payment, error) {
	now := p.now(ctx).UTC().Truncate(time.Millisecond)
	pay := provider.Payment{TxID: c.TxID, Amount: c.Amount, EndToEndID: paymentEndToEnd(c.TxID, now), PaidAt: now,
		PayerName: c.PayerName, PayerDocument: c.PayerDocument}
	p.mu.Lock()
	defer p.mu.Unlock()
	if prev, ok := p.payments[p.byTxID[c.TxID]]; ok {
		return prev, nil
	}
	if len(p.order) == rememberPayments {
		delete(p.byTxID, p.payments[p.order[0]].TxID)
		delete(p.payments, p.order[0])
		p.order = p.order[1:]
	}
	p.order = append(p.order, pay.EndToEndID)
	p.payments[pay.EndToEndID] = pay
	p.byTxID[c.TxID] = pay.EndToEndID
	return pay, nil
}

// paymentEndToEnd returns the end-to-end id of a payment of txid made at
// at, in BACEN's form: "E", the payer's ISPB (the sandbox's, eight zeros),
// the UTC minute as yyyyMMddHHmm and 11 alphanumerics, here the start of
// the SHA-256 of txid in upper-case hex: 32 characters.
func paymentEndToEnd(txid string, at time.Time) string {
	sum := sha256.Sum256([]byte(txid))
	return "E00000000" + at.UTC().Format("200601021504") + strings.ToUpper(hex.EncodeToString(sum[:]))[:11]
}

// ChargePayments returns the payments made to the charge txid that this
// process still remembers.
func (p *Provider) ChargePayments(_ context.Context, txid string) ([]provider.Payment, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pay, ok := p.payments[p.byTxID[txid]]; ok && pay.TxID == txid {
		return []provider.Payment{pay}, nil
	}
	return nil, nil
}

// CancelCharge does nothing: a static BR Code cannot be withdrawn, and
// Pay is only offered for charges the gateway holds open.
func (*Provider) CancelCharge(context.Context, string) error { return nil }

// DueChargePayments is ChargePayments: a charge with a due date is paid
// through Pay like any other.
func (p *Provider) DueChargePayments(ctx context.Context, txid string) ([]provider.Payment, error) {
	return p.ChargePayments(ctx, txid)
}

// CancelDueCharge does nothing, as CancelCharge.
func (p *Provider) CancelDueCharge(ctx context.Context, txid string) error {
	return p.CancelCharge(ctx, txid)
}

// ConfirmPayment returns the payment e2eid made through Pay, or
// provider.ErrNotFound.
func (p *Provider) ConfirmPayment(_ context.Context, e2eid string) (provider.Payment, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pay, ok := p.payments[e2eid]
	if !ok {
		return provider.Payment{}, provider.ErrNotFound
	}
	return pay, nil
}

// Received lists nothing: every sandbox payment is confirmed and credited
// by the request that made it.
func (*Provider) Received(context.Context, time.Time, time.Time) ([]provider.Payment, error) {
	return nil, nil
}

// Send accepts t and returns its status now: the same as Status.
func (p *Provider) Send(ctx context.Context, t provider.Transfer) (provider.TransferState, error) {
	return p.Status(ctx, t)
}

// Status tells where t stands: processing until Delay after t.AcceptedAt,
// then its outcome. A returned payout reads completed (to be read again
// at its return) during its second Delay, then returned.
func (p *Provider) Status(ctx context.Context, t provider.Transfer) (provider.TransferState, error) {
	now := p.now(ctx)
	settle := t.AcceptedAt.Add(p.cfg.Delay)
	st := provider.TransferState{ID: t.ID, Status: provider.Processing}
	if now.Before(settle) {
		st.ReadAt = settle
		return st, nil
	}
	st.Status, st.EndToEndID = provider.Completed, endToEnd("E", provider.HexID(t.ID))
	if t.Refund {
		st.EndToEndID = endToEnd("D", provider.HexID(t.ID))
		if t.Description == FailRefundReason {
			st.Status, st.EndToEndID = provider.Failed, ""
		}
		return st, nil
	}
	if t.KeyType == pix.KeyEmail {
		key := strings.ToLower(t.Key)
		switch {
		case strings.HasSuffix(key, FailKeySuffix):
			st.Status, st.EndToEndID = provider.Failed, ""
		case strings.HasSuffix(key, ReverseKeySuffix):
			// The return comes one more Delay later (at least a
			// millisecond, so that the payout reads PAID first).
			returned := settle.Add(max(p.cfg.Delay, time.Millisecond))
			if now.Before(returned) {
				st.ReadAt = returned
			} else {
				st.Status = provider.Returned
			}
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

var (
	_ provider.Provider   = (*Provider)(nil)
	_ provider.Payer      = (*Provider)(nil)
	_ provider.DueCharger = (*Provider)(nil)
)
