package cashin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/clock"
	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
)

// expireAtPSP cancels up to limit expired charges the PSP says are unpaid:
// each is read first (GET /cob, or /cobv for a charge with a due date),
// and a payment found is credited instead; then the cob is removed (PATCH)
// and only then is the charge CANCELLED. A
// charge the PSP did not answer for waits expiryRetry.
func (s *Service) expireAtPSP(ctx context.Context, limit int) (int, error) {
	now := s.now()
	due, err := s.db.ExpiredCharges(ctx, now, limit)
	if err != nil {
		return 0, fmt.Errorf("expire due charges: %w", err)
	}
	due = clock.Each(s.clocks, ctx, due, func(t pix.Transaction) string { return t.ID },
		func(ctx context.Context, c store.ClientClock, at time.Time) ([]pix.Transaction, error) {
			return s.db.ClientExpiredCharges(ctx, c.ClientID, at, limit)
		})
	n := 0
	for _, t := range due {
		if ctx.Err() != nil {
			break
		}
		if !s.retry.Ready(t.ID, now) {
			continue
		}
		cctx := s.clocks.For(ctx, t.ClientID)
		cancelled, err := s.Expire(cctx, t, s.clocks.At(cctx))
		if err != nil {
			s.retry.Wait(t.ID, now.Add(expiryRetry))
			s.log.WarnContext(ctx, "could not expire a charge at the PSP; trying again later", "charge", t.ID, "error", err.Error())
			continue
		}
		s.retry.Done(t.ID)
		if cancelled {
			n++
		}
	}
	return n, nil
}

// Expire settles the expired charge t with the PSP and reports whether
// it cancelled it.
func (s *Service) Expire(ctx context.Context, t pix.Transaction, now time.Time) (bool, error) {
	cctx, cancel := context.WithTimeout(ctx, PSPCallTimeout)
	defer cancel()
	if t.RecurrenceID != "" {
		// A cycle's charge is debited, not paid by a cob: its PSP says how
		// it ended.
		if _, err := s.db.Cycle(ctx, t.ID); err == nil {
			return s.cycles.ExpireCycle(cctx, t)
		} else if !errors.Is(err, store.ErrNotFound) {
			return false, err
		}
	}
	due := t.Due != nil
	pays, err := s.chargePayments(cctx, t.TxID, due)
	if errors.Is(err, errNoDueCharges) {
		s.log.WarnContext(ctx, "a charge with a due date expired under a provider without them; cancelled here only", "charge", t.ID)
	}
	known := !errors.Is(err, provider.ErrNotFound)
	if err != nil && known {
		return false, err
	}
	if len(pays) > 0 {
		for _, p := range pays {
			if err := s.Receive(ctx, p); err != nil {
				return false, err
			}
		}
		return false, nil
	}
	if known {
		if err := s.CancelAtPSP(cctx, t.TxID, due); err != nil {
			return false, fmt.Errorf("remove cob: %w", err)
		}
	}
	cancelled := false
	err = s.w.Write(ctx, func(tx *store.Tx, o *outbox.Events) error {
		cur, err := tx.TransactionForUpdate(ctx, t.ClientID, t.ID)
		if err != nil || cur.Status != pix.StatusPending {
			return err
		}
		cancelled = true
		return s.Cancel(ctx, tx, o, &cur, now)
	})
	return cancelled, err
}

func (s *Service) Cancel(ctx context.Context, tx *store.Tx, o *outbox.Events, t *pix.Transaction, now time.Time) error {
	ok, err := tx.TransitionTransaction(ctx, t.ID, pix.StatusPending, pix.StatusCancelled, time.Time{})
	if err != nil || !ok {
		return err
	}
	t.Status = pix.StatusCancelled
	return s.w.Emit(ctx, tx, o, *t, pix.EventCashinCancelled, pix.StatusCancelled, t.Amount, t.Tax, "", now)
}

// ExpireDue cancels up to limit charges whose expires_at has passed, each
// once the PSP says it is unpaid (expireAtPSP), and returns how many it
// cancelled.
func (s *Service) ExpireDue(ctx context.Context, limit int) (int, error) {
	return s.expireAtPSP(ctx, limit)
}
