package cashin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
)

// DefaultDisputesEvery spaces the readings of the PSP's infractions
// (PIXGATE_PSP_DISPUTES_INTERVAL).
const DefaultDisputesEvery = 5 * time.Minute

// infractionOverlap is how far before the last reading's end each reading
// starts again: an infraction the PSP recorded a moment before it listed
// the last page must not fall between two readings.
const infractionOverlap = 10 * time.Minute

// ReadInfractions reads the infractions (MED contests) the PSP reports
// and brings pixgate's disputes to them: an open one opens a dispute (and
// blocks its amount) before any return comes; a released one releases
// it. An accepted one needs nothing here: its MED devolução closes the
// dispute as returned when a reading of returns or a webhook sees it. Each
// infraction is recorded once (keyed on its id), one node reads at a time,
// at most once per the disputes interval, and a PSP without infractions is
// never asked. It returns how many infractions the reading listed.
func (s *Service) ReadInfractions(ctx context.Context, _ int) (int, error) {
	dp, ok := s.psp.(provider.Disputer)
	if !ok {
		return 0, nil
	}
	now := s.clocks.Now()
	until, ok, err := s.db.ClaimReading(ctx, "infractions", now, now.Add(s.disputesEvery), now.Add(-returnsWindow))
	if err != nil || !ok {
		return 0, err
	}
	// A PSP lists infractions by when they were made, so the reading goes
	// back to the oldest one still open to see it released.
	from := until.Add(-infractionOverlap)
	if oldest, ok, err := s.db.OldestOpenInfraction(ctx); err != nil {
		return 0, err
	} else if ok && oldest.Add(-infractionOverlap).Before(from) {
		from = oldest.Add(-infractionOverlap)
	}
	cctx, cancel := context.WithTimeout(ctx, s.disputesEvery+PSPCallTimeout)
	infs, err := dp.Infractions(cctx, from, now)
	cancel()
	if err != nil {
		return 0, fmt.Errorf("read infractions: %w", err)
	}
	var errs []error
	for _, inf := range infs {
		if err := s.infractionReported(ctx, inf); err != nil {
			errs = append(errs, fmt.Errorf("infraction %s: %w", inf.ID, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return len(infs), fmt.Errorf("read infractions: %w", err)
	}
	return len(infs), s.db.SetReadUntil(ctx, "infractions", now)
}

// infractionReported brings the dispute of inf to where the PSP says inf
// stands. A contest pixgate cannot record (a Pix it never credited, or
// more than is left of it) is logged for an operator: no retry mends it.
func (s *Service) infractionReported(ctx context.Context, inf provider.Infraction) error {
	if inf.ID == "" || inf.EndToEndID == "" {
		return fmt.Errorf("the PSP gave an infraction without its id or its Pix")
	}
	charge, err := s.db.ChargeByEndToEndID(ctx, inf.EndToEndID)
	if errors.Is(err, store.ErrNotFound) {
		s.log.ErrorContext(ctx, "the PSP reported a MED contest of a Pix no charge holds", "infraction", inf.ID,
			"end_to_end_id", inf.EndToEndID)
		return nil
	}
	if err != nil {
		return err
	}
	d, err := s.db.DisputeByPSPID(ctx, charge.ID, inf.ID)
	known := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	switch {
	case inf.Status == provider.InfractionReleased && known && d.Status == pix.DisputeOpen:
		_, err = s.ReleaseDispute(ctx, "", d.ID)
	case inf.Status == provider.InfractionReleased || known:
		// Released before pixgate saw it open (nothing was ever blocked),
		// or recorded already.
		return nil
	case inf.Status == provider.InfractionAccepted:
		// Opened and decided between two readings: its devolução may have
		// been recorded already, as a return nobody announced.
		if adopted, err := s.adoptInfraction(ctx, charge, inf.ID); err != nil || adopted {
			return err
		}
		fallthrough
	default: // open, or accepted with its devolução still to come
		// The PSP cannot block more than is left of the Pix.
		left := charge.Left()
		amount := inf.Amount
		if amount <= 0 || amount > left {
			amount = left
		}
		reason := inf.Reason
		if reason == "" {
			reason = pix.ReasonFraud
		}
		respondBy := inf.RespondBy
		if respondBy.IsZero() {
			respondBy = s.clocks.Now()
		}
		_, err = s.OpenDispute(ctx, charge, amount, reason, respondBy, inf.ID)
	}
	if pe := pix.AsError(err); pe != nil && (pe.Code == pix.EUnprocessable || pe.Code == pix.ENotFound) {
		s.log.ErrorContext(ctx, "the PSP reported a MED contest pixgate cannot record", "infraction", inf.ID,
			"charge", charge.ID, "amount", inf.Amount.String(), "error", err.Error())
		return nil
	}
	return err
}

// adoptInfraction gives the infraction infractionID to charge's return
// recorded without one, if there is such a return, and reports whether it
// did.
func (s *Service) adoptInfraction(ctx context.Context, charge pix.Transaction, infractionID string) (bool, error) {
	ds, err := s.db.TransactionDisputes(ctx, charge.ID)
	if err != nil {
		return false, err
	}
	for _, d := range ds {
		if d.PSPID != "" || d.ReturnID == "" {
			continue
		}
		adopted := false
		err := s.w.Write(ctx, func(tx *store.Tx, _ *outbox.Events) error {
			var err error
			adopted, err = tx.AdoptInfraction(ctx, d.ID, infractionID)
			return err
		})
		if err != nil || adopted {
			return adopted, err
		}
	}
	return false, nil
}
