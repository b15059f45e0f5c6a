package backoffice

import (
	"context"
	"errors"
	"fmt"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// This file holds the operators' read-only views of the money the PSP
// received that matched no open charge; returning it is a use case of
// gateway's (ReturnUnmatched), which moves money.

// UnmatchedReceipts returns up to limit unmatched receipts, newest first;
// with status (HELD, RETURNING, RETURNED), only those in it. Operators see
// them in the panel.
func (s *Service) UnmatchedReceipts(ctx context.Context, status string, limit int) ([]pix.UnmatchedReceipt, error) {
	out, err := s.db.UnmatchedReceipts(ctx, status, limit)
	if err != nil {
		return nil, fmt.Errorf("unmatched receipts: %w", err)
	}
	return out, nil
}

// UnmatchedReceipt returns the unmatched receipt id. Errors: ENotFound.
func (s *Service) UnmatchedReceipt(ctx context.Context, id string) (pix.UnmatchedReceipt, error) {
	u, err := s.db.UnmatchedReceipt(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return pix.UnmatchedReceipt{}, pix.Errorf(pix.ENotFound, "Unmatched receipt not found")
	}
	if err != nil {
		return pix.UnmatchedReceipt{}, fmt.Errorf("unmatched receipt: %w", err)
	}
	return u, nil
}

// SuspenseBalance returns the balance of the house's suspense account:
// money the PSP received that matched no open charge and is not yet
// returned to its payer (held or being returned). Operators see it on the
// panel's overview.
func (s *Service) SuspenseBalance(ctx context.Context) (pix.Amount, error) {
	b, err := s.db.HouseBalances(ctx)
	if err != nil {
		return 0, fmt.Errorf("suspense balance: %w", err)
	}
	return b[ledger.Suspense], nil
}
