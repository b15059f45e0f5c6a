package gateway

import (
	"context"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// sandboxRespondDays is how long the sandbox's disputes give the merchant
// to defend them (CONTRACT §11).
const sandboxRespondDays = 3

// Dispute opens, as the payer's bank contesting it, a MED dispute of
// client c's paid charge paymentID: of d.Amount (zero: what is left of
// the Pix), for d.Reason, to be answered within three days on c's clock.
// Errors: ENotFound, EUnprocessable (not paid, or more than is left).
func (x *Sandbox) Dispute(ctx context.Context, c pix.Client, paymentID string, d pix.SandboxDispute) (pix.Dispute, error) {
	if x == nil {
		return pix.Dispute{}, pix.Errorf(pix.ENotFound, "Charge not found")
	}
	s := x.s
	t, err := s.cashin.Charge(ctx, c, paymentID)
	if err != nil {
		return pix.Dispute{}, err
	}
	amount := d.Amount
	if amount == 0 {
		amount = t.PaidAmount - t.RefundedAmount
	}
	respondBy := s.clocks.At(ctx).Add(sandboxRespondDays * 24 * time.Hour)
	return s.cashin.OpenDispute(ctx, t, amount, d.Reason, respondBy, "")
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
	s := x.s
	t, err := s.cashin.Charge(ctx, c, paymentID)
	if err != nil {
		return pix.Dispute{}, err
	}
	amount := r.Amount
	if amount == 0 {
		amount = t.PaidAmount - t.RefundedAmount
	}
	return s.cashin.MedReturned(ctx, t, amount, r.Nature, "")
}
