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

// Messages of the disputes' API.
const (
	MsgDisputesOK      = "Disputes listed successfully."
	MsgDefenseSent     = "Defense sent."
	msgDefenseClosed   = "Dispute is CLOSED and can no longer be defended"
	msgDefenseTwice    = "Dispute already has a defense"
	msgDefenseTooLate  = "The deadline to defend this dispute has passed"
	issueDisputeStatus = "must be one of OPEN, CLOSED"
)

// Dispute returns client c's dispute id. Errors: ENotFound.
func (s *Service) Dispute(ctx context.Context, c pix.Client, id string) (pix.Dispute, error) {
	if !pix.CanonicalID(id) {
		return pix.Dispute{}, pix.Errorf(pix.ENotFound, MsgDisputeNotFound)
	}
	d, err := s.db.Dispute(ctx, c.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return pix.Dispute{}, pix.Errorf(pix.ENotFound, MsgDisputeNotFound)
	}
	if err != nil {
		return pix.Dispute{}, fmt.Errorf("dispute: %w", err)
	}
	return d, nil
}

// DisputeQuery is the raw query of GET /api/v1/gateway/disputes.
type DisputeQuery struct {
	Status, PaymentID, Limit, Cursor string
}

// Disputes returns a page of client c's disputes, newest first, and the
// next cursor ("" on the last page), paged as the history is. Errors:
// EInvalid with details naming each bad parameter.
func (s *Service) Disputes(ctx context.Context, c pix.Client, q DisputeQuery) ([]pix.Dispute, string, error) {
	limit, is := pix.PageParams(q.Limit, q.Cursor)
	f := store.DisputeFilter{ClientID: c.ID, PaymentID: q.PaymentID, Status: pix.DisputeStatus(q.Status), Cursor: q.Cursor, Limit: limit}
	if q.Status != "" && !f.Status.Valid() {
		is = append(is, pix.FieldIssue{Field: "status", Issue: issueDisputeStatus})
	}
	if q.PaymentID != "" && !pix.CanonicalID(q.PaymentID) {
		is = append(is, pix.FieldIssue{Field: "payment_id", Issue: "must be a UUID"})
	}
	if len(is) > 0 {
		return nil, "", pix.ListError(is)
	}
	rows, next, err := s.db.DisputeHistory(ctx, f)
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", pix.ListError([]pix.FieldIssue{{Field: "cursor", Issue: pix.IssuePageCursor}})
	}
	if err != nil {
		return nil, "", fmt.Errorf("disputes: %w", err)
	}
	return rows, next, nil
}

// ChargeDisputes returns the disputes of charge t, oldest first.
func (s *Service) ChargeDisputes(ctx context.Context, t pix.Transaction) ([]pix.Dispute, error) {
	return s.db.TransactionDisputes(ctx, t.ID)
}

// Defend sends client c's defense of its OPEN dispute id before its
// respond_by: to the PSP first when the PSP opened it (an infraction),
// then recorded. Errors: ENotFound, EUnprocessable (CLOSED, defended
// already, past respond_by), EProviderUnavailable (the PSP did not take
// it; nothing was recorded).
func (s *Service) Defend(ctx context.Context, c pix.Client, id string, accept bool, justification string) (pix.Dispute, error) {
	d, err := s.Dispute(ctx, c, id)
	if err != nil {
		return pix.Dispute{}, err
	}
	now := s.clocks.At(ctx)
	if err := defensible(d, now); err != nil {
		return pix.Dispute{}, err
	}
	if dp, ok := s.psp.(defender); ok && d.PSPID != "" {
		cctx, cancel := context.WithTimeout(ctx, PSPCallTimeout)
		err := dp.Defend(cctx, d.PSPID, accept, justification)
		cancel()
		if errors.Is(err, provider.ErrRejected) && s.defenseHeld(ctx, d, justification, now) {
			// An earlier attempt whose answer was lost did reach the PSP,
			// which refuses a second defense: the first one stands.
			err = nil
		}
		if err != nil {
			s.log.WarnContext(ctx, "the PSP did not take a dispute's defense", "dispute", d.ID, "error", err.Error())
			if errors.Is(err, provider.ErrRejected) {
				return pix.Dispute{}, pix.Errorf(pix.EUnprocessable, "The payment provider refused the defense")
			}
			return pix.Dispute{}, pix.Errorf(pix.EProviderUnavailable, "Payment provider unavailable")
		}
	}
	def := pix.DisputeDefense{Accept: accept, Justification: justification, At: now}
	err = s.w.Write(ctx, func(tx *store.Tx, _ *outbox.Events) error {
		cur, err := tx.DisputeForUpdate(ctx, d.ID)
		if err != nil {
			return err
		}
		if err := defensible(cur, now); err != nil {
			return err
		}
		ok, err := tx.SetDisputeDefense(ctx, d.ID, def)
		if err == nil && !ok {
			err = pix.Errorf(pix.EUnprocessable, msgDefenseTwice)
		}
		d = cur
		return err
	})
	if err != nil {
		return pix.Dispute{}, fmt.Errorf("defend dispute %s: %w", id, err)
	}
	d.Defense = &def
	return d, nil
}

// defenseHeld reports whether the PSP's infraction of dispute d already
// holds a defense with justification: the PSP took an attempt whose answer
// never came back. Any doubt (no listing, an error) is a no.
func (s *Service) defenseHeld(ctx context.Context, d pix.Dispute, justification string, now time.Time) bool {
	dp, ok := s.psp.(provider.Disputer)
	if !ok {
		return false
	}
	cctx, cancel := context.WithTimeout(ctx, PSPCallTimeout)
	defer cancel()
	infs, err := dp.Infractions(cctx, d.OpenedAt.Add(-24*time.Hour), now.Add(time.Minute))
	if err != nil {
		s.log.WarnContext(ctx, "could not read back a refused defense's infraction", "dispute", d.ID, "error", err.Error())
		return false
	}
	for _, in := range infs {
		if in.ID == d.PSPID {
			return in.Defense == justification
		}
	}
	return false
}

// defensible refuses a defense of d at now: one per dispute, while OPEN,
// before its deadline.
func defensible(d pix.Dispute, now time.Time) error {
	switch {
	case d.Status != pix.DisputeOpen:
		return pix.Errorf(pix.EUnprocessable, msgDefenseClosed)
	case d.Defense != nil:
		return pix.Errorf(pix.EUnprocessable, msgDefenseTwice)
	case now.After(d.RespondBy):
		return pix.Errorf(pix.EUnprocessable, msgDefenseTooLate)
	}
	return nil
}

// defender is what a PSP that takes defenses of its infractions offers
// (provider.Disputer's Defend).
type defender interface {
	Defend(ctx context.Context, infractionID string, accept bool, justification string) error
}
