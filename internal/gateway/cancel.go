package gateway

import (
	"context"

	"github.com/pixgate/pixgate/internal/pix"
)

// msgCycleCancel is the 422 for cancelling a recurrence's charge by
// itself: its recurrence owns it (the calendar, the retries, the PSP's
// debit), so it is cancelled with the recurrence.
const msgCycleCancel = "Charge belongs to a recurrence; cancel the recurrence with POST /api/v1/gateway/recurrences/{recurrence_id}/cancel"

// CancelCharge cancels client c's unpaid charge at the client's request, as
// expiry does (expireOne): the charge is read at the PSP first and a
// payment found there is credited instead (the payment wins and the cancel
// is refused), else its cob (cobv for a charge with a due date) is removed
// at the PSP, and only then is the charge CANCELLED with event
// pix.cashin.cancelled. Errors: ENotFound (no charge of this client has
// that id), EUnprocessable (not PENDING, paid meanwhile, or a charge of a
// recurrence), EProviderUnavailable (the PSP did not answer; nothing
// changed).
func (s *Service) CancelCharge(ctx context.Context, c pix.Client, id string) (pix.Transaction, error) {
	t, err := s.Charge(ctx, c, id)
	if err != nil {
		return pix.Transaction{}, err
	}
	if t.RecurrenceID != "" {
		return pix.Transaction{}, pix.Errorf(pix.EUnprocessable, msgCycleCancel)
	}
	if t.Status != pix.StatusPending {
		return pix.Transaction{}, notCancellable(t)
	}
	if _, err := s.cashin.Expire(ctx, t, s.now()); err != nil {
		s.Log.WarnContext(ctx, "could not cancel a charge at the PSP", "charge", t.ID, "error", err.Error())
		return pix.Transaction{}, pix.Errorf(pix.EProviderUnavailable, "Payment provider unavailable")
	}
	if t, err = s.Charge(ctx, c, id); err != nil {
		return pix.Transaction{}, err
	}
	if t.Status != pix.StatusCancelled {
		// A payment reported before the cob was removed was credited.
		return pix.Transaction{}, notCancellable(t)
	}
	return t, nil
}

func notCancellable(t pix.Transaction) error {
	return pix.Errorf(pix.EUnprocessable, "Charge is %s and can no longer be cancelled", t.Status)
}
