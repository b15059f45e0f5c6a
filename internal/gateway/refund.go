package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// RefundWindow is how long after payment a charge may be refunded.
const RefundWindow = 90 * 24 * time.Hour

// RefundRequest is the body of POST /api/v1/gateway/refund.
type RefundRequest struct {
	PaymentID  string          `json:"payment_id"`
	ExternalID string          `json:"external_id"`
	Amount     json.RawMessage `json:"amount"`
	Reason     string          `json:"reason"`
}

// RefundResponse is the 200 body of a created refund (and of its replays).
type RefundResponse struct {
	StatusCode int              `json:"statusCode"`
	RefundID   string           `json:"refund_id"`
	PaymentID  string           `json:"payment_id"`
	Amount     pix.Amount       `json:"amount"`
	Status     pix.RefundStatus `json:"status"`
}

func refundResponse(r pix.Refund) RefundResponse {
	return RefundResponse{StatusCode: 200, RefundID: r.ID, PaymentID: r.TransactionID, Amount: r.Amount, Status: pix.RefundPending}
}

// CreateRefund returns part or all of client c's PAID charge to the payer:
// in one transaction it stores the refund PENDING, holds its amount
// (available → pending) and counts it against what is left to refund. No
// amount means the remainder. Idempotent on idemKey. Errors: EInvalid,
// ENotFound (no such charge of this client), EUnprocessable (not PAID, older
// than 90 days, or more than is left), EInsufficientBalance,
// EIdempotencyMismatch.
func (s *Service) CreateRefund(ctx context.Context, c pix.Client, in Idempotent[RefundRequest]) (RefundResponse, bool, error) {
	r, idemKey := in.Req, in.Key
	amount, err := validateRefund(r, idemKey)
	if err != nil {
		return RefundResponse{}, false, err
	}
	hash := in.Hash
	if hash == "" {
		return RefundResponse{}, false, pix.InvalidBody()
	}
	if idemKey != "" {
		prev, err := s.db.RefundByIdempotencyKey(ctx, c.ID, idemKey)
		if err == nil {
			return replayRefund(prev, hash)
		}
		if !errors.Is(err, store.ErrNotFound) {
			return RefundResponse{}, false, fmt.Errorf("create refund: %w", err)
		}
	}
	charge, err := s.Lookup(ctx, c, r.PaymentID, r.ExternalID)
	if err != nil {
		if pix.ErrorCode(err) == pix.ENotFound || pix.ErrorCode(err) == pix.EInvalid {
			return RefundResponse{}, false, pix.Errorf(pix.ENotFound, "Charge not found")
		}
		return RefundResponse{}, false, err
	}
	if charge.Type != pix.TypeCashin {
		return RefundResponse{}, false, pix.Errorf(pix.ENotFound, "Charge not found")
	}

	now := s.clocks.At(ctx)
	ref := pix.Refund{ID: s.newUUID(), ClientID: c.ID, TransactionID: charge.ID, IdempotencyKey: idemKey, RequestHash: hash,
		Status: pix.RefundPending, Reason: r.Reason, CreatedAt: now, SettleAt: now, SendState: pix.SendToSend}
	var prev pix.Refund
	inserted := false
	err = s.db.Write(ctx, func(tx *store.Tx) error {
		t, err := tx.TransactionForUpdate(ctx, c.ID, charge.ID)
		if err != nil {
			return err
		}
		if err := refundable(t, now); err != nil {
			return err
		}
		if err := undisputed(ctx, tx, t); err != nil {
			return err
		}
		// What was paid, when a payer paid less than the charge asked.
		left := t.Refundable() - t.RefundedAmount - t.RefundPending - t.MEDReturned
		ref.Amount = amount
		if amount == 0 {
			ref.Amount = left
		}
		if left <= 0 {
			return pix.Errorf(pix.EUnprocessable, "Nothing is left to refund on this charge (refunds in progress hold the rest)")
		}
		if ref.Amount > left {
			return pix.Errorf(pix.EUnprocessable, "Refund amount exceeds what is left to refund (%s)", left)
		}
		if inserted, err = tx.InsertRefund(ctx, ref); err != nil || !inserted {
			if err == nil {
				prev, err = tx.RefundByIdempotencyKey(ctx, c.ID, idemKey)
			}
			return err
		}
		if err := tx.AddRefundPending(ctx, t.ID, ref.Amount, 0); err != nil {
			return err
		}
		return s.holdRefund(ctx, tx, c, t, ref, now)
	})
	if errors.Is(err, store.ErrInsufficientFunds) {
		return RefundResponse{}, false, s.insufficientBalance(ctx, c, ref.Amount) // refunds carry no tax
	}
	if err != nil {
		if pix.AsError(err) != nil {
			return RefundResponse{}, false, err
		}
		return RefundResponse{}, false, fmt.Errorf("create refund: %w", err)
	}
	if !inserted {
		return replayRefund(prev, hash)
	}
	s.transfers.Kick()
	return refundResponse(ref), false, nil
}

// validateRefund checks refund request r and its idempotency key, and
// returns the amount asked (zero: what is left).
func validateRefund(r *RefundRequest, idemKey string) (pix.Amount, error) {
	var is issues
	var amount pix.Amount
	if len(r.Amount) > 0 && string(r.Amount) != "null" {
		amount = is.amount("amount", r.Amount)
	}
	if r.PaymentID == "" && r.ExternalID == "" {
		is.add("payment_id", "payment_id or external_id is required")
	}
	if utf8.RuneCountInString(r.Reason) > 140 {
		is.add("reason", "must be at most 140 characters")
	} else {
		is.plain("reason", r.Reason)
	}
	if idemKey != "" && !pix.ValidIdempotencyKey(idemKey) {
		is.add("Idempotency-Key", "must be 1 to 255 visible ASCII characters")
	}
	return amount, is.err()
}

// refundable is the 422 of a charge t that cannot be refunded at now.
func refundable(t pix.Transaction, now time.Time) error {
	switch {
	case t.Status == pix.StatusRefunded:
		return pix.Errorf(pix.EUnprocessable, "Charge has already been fully refunded")
	case t.Status != pix.StatusPaid:
		return pix.Errorf(pix.EUnprocessable, "Only PAID charges can be refunded; this charge is %s", t.Status)
	case now.Sub(t.ConfirmedAt) > RefundWindow:
		return pix.Errorf(pix.EUnprocessable, "Charges can only be refunded within 90 days of payment")
	case t.EndToEndID == "":
		// A devolução names the payment it returns.
		return pix.Errorf(pix.EUnprocessable, "This charge's payment is not known to the payment provider and cannot be refunded through it")
	}
	return nil
}

func replayRefund(prev pix.Refund, hash string) (RefundResponse, bool, error) {
	if prev.RequestHash != hash {
		// Refunds are idempotent on the header alone (their external_id
		// names the charge), so the header is what clashed.
		return RefundResponse{}, false, pix.Mismatch(false)
	}
	return refundResponse(prev), true, nil
}

// RefundView is a refund as GET /api/v1/gateway/refunds/{refund_id} shows
// it (docs/api.md): reason is null when none was given, settled_at null
// while the refund is PENDING.
type RefundView struct {
	RefundID  string           `json:"refund_id"`
	PaymentID string           `json:"payment_id"`
	Amount    pix.Amount       `json:"amount"`
	Reason    *string          `json:"reason"`
	Status    pix.RefundStatus `json:"status"`
	CreatedAt string           `json:"created_at"`
	SettledAt *string          `json:"settled_at"`
}

// Refund returns client c's refund with the given id. Errors: ENotFound
// when c has no such refund (another client's refund is not found either).
func (s *Service) Refund(ctx context.Context, c pix.Client, id string) (RefundView, error) {
	if !pix.CanonicalID(id) {
		return RefundView{}, pix.Errorf(pix.ENotFound, "Refund not found")
	}
	r, err := s.db.Refund(ctx, c.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return RefundView{}, pix.Errorf(pix.ENotFound, "Refund not found")
	}
	if err != nil {
		return RefundView{}, fmt.Errorf("refund %s: %w", id, err)
	}
	return refundView(r), nil
}

// refundView is refund r as the API shows it.
func refundView(r pix.Refund) RefundView {
	v := RefundView{RefundID: r.ID, PaymentID: r.TransactionID, Amount: r.Amount, Status: r.Status, CreatedAt: pix.FormatTime(r.CreatedAt)}
	if r.Reason != "" {
		reason := r.Reason
		v.Reason = &reason
	}
	if !r.SettledAt.IsZero() {
		at := pix.FormatTime(r.SettledAt)
		v.SettledAt = &at
	}
	return v
}

// undisputed refuses a refund of charge t while a MED dispute of it is
// OPEN: its money may still go back to the payer by the scheme.
func undisputed(ctx context.Context, tx *store.Tx, t pix.Transaction) error {
	ds, err := tx.TransactionDisputes(ctx, t.ID)
	if err != nil {
		return err
	}
	for _, d := range ds {
		if d.Status == pix.DisputeOpen {
			return pix.Errorf(pix.EUnprocessable, "Charge is under dispute")
		}
	}
	return nil
}
