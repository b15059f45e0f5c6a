package cashin

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
)

// Orphan cobs: a cob is created at the PSP before the charge that holds it
// is stored, so a process that dies in between (or a PSP call whose outcome
// is unknown) can leave at the PSP a cob that a payer could pay and no
// charge of ours holds. An intent is committed before every PSP call and
// deleted once the charge is stored; the sweep withdraws the cob of every
// intent left behind.
const (
	// OrphanAge is how old an intent must be before the sweep takes it: far
	// beyond the longest charge creation (its PSP call is bounded at 5 s).
	OrphanAge = time.Minute
	// sweepEvery spaces one node's sweeps; with OrphanAge, an orphan cob is
	// withdrawn within two minutes, well inside five.
	sweepEvery = 30 * time.Second
)

// sweepClock spaces a node's sweeps for orphan cobs.
type sweepClock struct {
	mu   sync.Mutex
	next time.Time
}

// due reports whether a sweep is due at now, and if so schedules the next.
func (c *sweepClock) due(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Before(c.next) {
		return false
	}
	c.next = now.Add(sweepEvery)
	return true
}

// SweepOrphanCobs withdraws at the PSP up to limit cobs that no charge
// holds (see OrphanAge): a cob still payable is removed (PATCH); a cob a
// payer already paid has its payment recorded as an unmatched receipt,
// which goes back to the payer. It returns how many intents it settled.
func (s *Service) SweepOrphanCobs(ctx context.Context, limit int) (int, error) {
	now := s.now()
	if !s.sweep.due(now) {
		return 0, nil
	}
	stale, err := s.db.StaleCobIntents(ctx, now.Add(-OrphanAge), limit)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, it := range stale {
		if ctx.Err() != nil {
			break
		}
		if err := s.settleIntent(ctx, it); err != nil {
			s.log.WarnContext(ctx, "could not withdraw a cob that no charge holds; trying again later", "txid", it.TxID, "error", err.Error())
			continue
		}
		n++
	}
	return n, nil
}

// settleIntent settles one stale intent: nothing to do if a charge holds
// its cob; otherwise the cob is read and, unpaid, removed at the PSP.
func (s *Service) settleIntent(ctx context.Context, it pix.CobIntent) error {
	_, err := s.db.TransactionByTxID(ctx, it.TxID)
	if err == nil {
		_, err = s.db.DeleteCobIntent(ctx, it.TxID)
		return err
	}
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, PSPCallTimeout)
	defer cancel()
	pays, err := s.chargePayments(cctx, it.TxID, it.Due)
	switch {
	case errors.Is(err, provider.ErrNotFound):
		// The PSP never created it.
	case err != nil:
		return err
	case len(pays) > 0:
		for _, p := range pays {
			if err := s.Receive(ctx, p); err != nil {
				return err
			}
		}
	default:
		if err := s.CancelAtPSP(cctx, it.TxID, it.Due); err != nil && !errors.Is(err, provider.ErrNotFound) {
			return err
		}
		s.log.WarnContext(ctx, "withdrew at the PSP a cob that no charge holds", "txid", it.TxID)
	}
	_, err = s.db.DeleteCobIntent(ctx, it.TxID)
	return err
}
