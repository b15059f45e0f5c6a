package gateway

import (
	"context"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// sandboxRespondDays is how long the sandbox's disputes give the merchant
// to defend them (docs/med.md, In the sandbox).
const sandboxRespondDays = 3

// Dispute opens, as the payer's bank contesting it, a MED dispute of
// client c's paid charge paymentID: of d.Amount (zero: what is left of
// the Pix), for d.Reason, to be answered within three days on c's clock.
// Errors: ENotFound, EUnprocessable (not paid, or more than is left).
func (x *Sandbox) Dispute(ctx context.Context, c pix.Client, paymentID string, d pix.SandboxDispute) (pix.Dispute, error) {
	if x == nil {
		return pix.Dispute{}, pix.Errorf(pix.ENotFound, "Charge not found")
	}
	t, amount, err := x.leftOf(ctx, c, paymentID, d.Amount)
	if err != nil {
		return pix.Dispute{}, err
	}
	respondBy := x.s.clocks.At(ctx).Add(sandboxRespondDays * 24 * time.Hour)
	return x.s.cashin.OpenDispute(ctx, t, amount, d.Reason, respondBy, "")
}

// ResolveDispute closes client c's OPEN dispute id as the PSP decides it:
// released, or returned by a MED devolução of r.Amount (zero: the disputed
// amount). Errors: ENotFound, EUnprocessable (CLOSED, or more than is left).
func (x *Sandbox) ResolveDispute(ctx context.Context, c pix.Client, id string, r pix.SandboxResolve) (pix.Dispute, error) {
	if x == nil {
		return pix.Dispute{}, pix.Errorf(pix.ENotFound, "Dispute not found")
	}
	if r.Outcome == pix.OutcomeReleased {
		return x.s.cashin.ReleaseDispute(ctx, c.ID, id)
	}
	return x.s.cashin.ReturnDispute(ctx, c.ID, id, r.Amount, "")
}

// MedReturn returns, as the PSP does under MED without a dispute before
// it, r.Amount (zero: what is left) of client c's paid charge paymentID,
// natureza r.Nature: it closes the charge's OPEN dispute, or is recorded
// as a dispute CLOSED at once. Errors: ENotFound, EUnprocessable (not
// paid, or more than is left).
func (x *Sandbox) MedReturn(ctx context.Context, c pix.Client, paymentID string, r pix.SandboxReturn) (pix.Dispute, error) {
	if x == nil {
		return pix.Dispute{}, pix.Errorf(pix.ENotFound, "Charge not found")
	}
	t, amount, err := x.leftOf(ctx, c, paymentID, r.Amount)
	if err != nil {
		return pix.Dispute{}, err
	}
	return x.s.cashin.MedReturned(ctx, t, amount, r.Nature, "")
}

// leftOf returns client c's charge paymentID and amount, or when amount
// is zero what is left of its Pix (paid, less what was refunded or
// returned). Errors: ENotFound.
func (x *Sandbox) leftOf(ctx context.Context, c pix.Client, paymentID string, amount pix.Amount) (pix.Transaction, pix.Amount, error) {
	t, err := x.s.cashin.Charge(ctx, c, paymentID)
	if err != nil {
		return pix.Transaction{}, 0, err
	}
	if amount == 0 {
		amount = t.Left()
	}
	return t, amount, nil
}
