package cashin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/provider"
)

// Timing of the MED readings (docs/med.md, With a PSP).
const (
	// DefaultReturnsEvery spaces the readings of received Pix with a
	// devolução (PIXGATE_PSP_RETURNS_INTERVAL).
	DefaultReturnsEvery = 10 * time.Minute
	// returnsWindow is how far back each of those readings looks: a MED
	// return comes within 90 days of its Pix.
	returnsWindow = 90 * 24 * time.Hour
)

// returnsReader is what a PSP that lists its received Pix with a
// devolução offers (provider.ReturnsReader).
type returnsReader interface {
	ReceivedWithReturns(ctx context.Context, from, to time.Time) ([]provider.Payment, error)
}

// ReadReturns reads the PSP's received Pix of the last 90 days that have a
// devolução, and records every MED return no webhook announced (Receive),
// once whichever reading sees it first. One node reads at a time, at most
// once per the returns interval (store.DB.ClaimReading); a PSP that cannot
// list them is never asked. It returns how many payments the reading
// listed; limit is unused (a reading takes every page).
func (s *Service) ReadReturns(ctx context.Context, _ int) (int, error) {
	rr, ok := s.psp.(returnsReader)
	if !ok {
		return 0, nil
	}
	now := s.clocks.Now()
	if _, ok, err := s.db.ClaimReading(ctx, "returns", now, now.Add(s.returnsEvery), now); err != nil || !ok {
		return 0, err
	}
	cctx, cancel := context.WithTimeout(ctx, s.returnsEvery+PSPCallTimeout)
	pays, err := rr.ReceivedWithReturns(cctx, now.Add(-returnsWindow), now)
	cancel()
	if err != nil {
		return 0, fmt.Errorf("read received Pix with returns: %w", err)
	}
	var errs []error
	for _, p := range pays {
		if err := s.Receive(ctx, p); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return len(pays), fmt.Errorf("read returns: %w", err)
	}
	return len(pays), s.db.SetReadUntil(ctx, "returns", now)
}
