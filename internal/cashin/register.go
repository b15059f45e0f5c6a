package cashin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pixgate/pixgate/internal/brcode"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
)

// NewTxID returns a new txid of the provider's length, of [A-Za-z0-9].
func (s *Service) NewTxID() (string, error) {
	var b strings.Builder
	for b.Len() < s.txidLen {
		id, err := brcode.NewTxID(s.w.Rand)
		if err != nil {
			return "", err
		}
		b.WriteString(id)
	}
	return b.String()[:s.txidLen], nil
}

// Register registers the charge txid at the PSP with create and
// returns its BR Code; a PSP's failure is a 502 "Payment provider
// unavailable", logged with its cause.
func (s *Service) Register(ctx context.Context, txid string, create func(context.Context) (string, error)) (string, error) {
	code, err := create(ctx)
	if err == nil {
		return code, nil
	}
	if wait, limited := provider.RetryAfter(err); limited {
		// Still a 502 (the merchant may try again), but not a PSP failure.
		s.log.WarnContext(ctx, "the PSP limited its rate and did not create a charge", "txid", txid, "retry_after", wait.String())
	} else {
		s.log.WarnContext(ctx, "the PSP did not create a charge", "txid", txid, "error", err.Error())
	}
	return "", pix.Errorf(pix.EProviderUnavailable, "Payment provider unavailable")
}

// errNoDueCharges: the provider has no charges with a due date, so it
// cannot know one (it was created under another provider).
var errNoDueCharges = fmt.Errorf("%w: the provider has no charges with a due date", provider.ErrNotFound)

// chargePayments reads the charge txid at the PSP — a charge with a due
// date (due) through provider.DueCharger — and returns its payments.
func (s *Service) chargePayments(ctx context.Context, txid string, due bool) ([]provider.Payment, error) {
	if !due {
		return s.psp.ChargePayments(ctx, txid)
	}
	dc, ok := s.psp.(provider.DueCharger)
	if !ok {
		return nil, errNoDueCharges
	}
	return dc.DueChargePayments(ctx, txid)
}

// CancelAtPSP removes the charge txid at the PSP — a charge with a
// due date (due) through provider.DueCharger — so that it can no longer be
// paid.
func (s *Service) CancelAtPSP(ctx context.Context, txid string, due bool) error {
	if !due {
		return s.psp.CancelCharge(ctx, txid)
	}
	dc, ok := s.psp.(provider.DueCharger)
	if !ok {
		return errNoDueCharges
	}
	return dc.CancelDueCharge(ctx, txid)
}

// withdrawCharge removes from the PSP a cob (a cobv when due) that no
// charge of ours holds, so that no payer can pay it. If the PSP does not
// answer, the cob's intent stays and the sweep (SweepOrphanCobs) tries
// again.
func (s *Service) withdrawCharge(ctx context.Context, txid string, due bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), PSPCallTimeout)
	defer cancel()
	if err := s.CancelAtPSP(ctx, txid, due); err != nil && !errors.Is(err, provider.ErrNotFound) {
		s.log.WarnContext(ctx, "could not withdraw a cob that no charge holds; the sweep will", "txid", txid, "error", err.Error())
		return
	}
	s.intentDone(ctx, txid)
}

// intentDone deletes the intent of cob txid, whose charge is stored or
// whose cob is withdrawn. Best effort: an intent left behind costs the
// sweep one reading, which finds the charge.
func (s *Service) intentDone(ctx context.Context, txid string) {
	if _, err := s.db.DeleteCobIntent(context.WithoutCancel(ctx), txid); err != nil {
		s.log.WarnContext(ctx, "could not delete a cob's intent; the sweep will", "txid", txid, "error", err.Error())
	}
}
