package gateway

import (
	"context"
	"errors"
	"fmt"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// Charge returns client c's charge with the given id. Errors: ENotFound.
func (s *Service) Charge(ctx context.Context, c pix.Client, id string) (pix.Transaction, error) {
	return s.cashin.Charge(ctx, c, id)
}

// PayerCharge returns the charge with the given id whoever its client is:
// the payer's page shows it without credentials. Errors: ENotFound (no
// charge has that id).
func (s *Service) PayerCharge(ctx context.Context, id string) (pix.Transaction, error) {
	if !pix.CanonicalID(id) {
		return pix.Transaction{}, pix.Errorf(pix.ENotFound, "Charge not found")
	}
	t, err := s.db.TransactionByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && t.Type != pix.TypeCashin) {
		return pix.Transaction{}, pix.Errorf(pix.ENotFound, "Charge not found")
	}
	if err != nil {
		return pix.Transaction{}, fmt.Errorf("payer charge: %w", err)
	}
	return t, nil
}

// ExpireCharge cancels client c's PENDING charge (the sandbox's expire
// action) as the TTL job does (expireOne): a payment the PSP reports for
// it is credited instead, else the charge is withdrawn at the PSP, then
// CANCELLED with event pix.cashin.cancelled. Expiring a cancelled charge
// again changes nothing. Errors: ENotFound, EUnprocessable (paid),
// EProviderUnavailable (the PSP did not answer).
func (x *Sandbox) ExpireCharge(ctx context.Context, c pix.Client, id string) (pix.Transaction, error) {
	if x == nil {
		return pix.Transaction{}, pix.Errorf(pix.ENotFound, "Charge not found")
	}
	s := x.s
	t, err := s.Charge(ctx, c, id)
	if err != nil {
		return pix.Transaction{}, err
	}
	if t.Status == pix.StatusPending {
		if _, err := s.cashin.Expire(ctx, t, s.clocks.At(ctx)); err != nil {
			s.Log.WarnContext(ctx, "could not expire a charge at the PSP", "charge", t.ID, "error", err.Error())
			return pix.Transaction{}, pix.Errorf(pix.EProviderUnavailable, "Payment provider unavailable")
		}
		if t, err = s.Charge(ctx, c, id); err != nil {
			return pix.Transaction{}, err
		}
	}
	if t.Status != pix.StatusCancelled {
		return pix.Transaction{}, pix.Errorf(pix.EUnprocessable, "Charge is %s and can no longer be cancelled", t.Status)
	}
	return t, nil
}
