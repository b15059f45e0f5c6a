package transfer

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// ReturnUnmatched starts the return to its payer of the HELD unmatched
// receipt id (an operator's decision, or a new try after a return that
// failed), with a new devolução id, and wakes the sender. Errors:
// ENotFound, EUnprocessable (it is being returned or was returned).
func (e *Engine) ReturnUnmatched(ctx context.Context, id string) (pix.UnmatchedReceipt, error) {
	now := e.clocks.Now()
	var out pix.UnmatchedReceipt
	err := e.w.Write(ctx, func(tx *store.Tx, _ *outbox.Events) error {
		u, err := tx.UnmatchedForUpdate(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return pix.Errorf(pix.ENotFound, "Unmatched receipt not found")
		}
		if err != nil {
			return err
		}
		if u.Status != pix.UnmatchedHeld {
			return pix.Errorf(pix.EUnprocessable, "Unmatched receipt is %s and cannot be returned again", u.Status)
		}
		returnID, err := uuid.NewRandomFromReader(e.w.Rand)
		if err != nil {
			return fmt.Errorf("return id: %w", err)
		}
		ok, err := tx.StartUnmatchedReturn(ctx, id, returnID.String(), now)
		if err != nil || !ok {
			return errors.Join(err, ErrChanged)
		}
		u.Status, u.ReturnID, u.ReturnError, u.SendState, u.SettleAt = pix.UnmatchedReturning, returnID.String(), "", pix.SendToSend, now
		out = u
		return nil
	})
	if errors.Is(err, ErrChanged) {
		return pix.UnmatchedReceipt{}, pix.Errorf(pix.EUnprocessable, "Unmatched receipt is being returned")
	}
	if err != nil {
		return pix.UnmatchedReceipt{}, fmt.Errorf("return unmatched receipt: %w", err)
	}
	e.Kick()
	return out, nil
}
