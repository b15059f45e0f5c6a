package cashin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// Messages of disputes' errors (docs/med.md).
const (
	MsgDisputeNotFound = "Dispute not found"
	msgDisputeClosed   = "Dispute is CLOSED"
)

// DisputeEventBody is the JSON body of a pix.dispute.* webhook.
type DisputeEventBody struct {
	ID        string            `json:"id"`
	Event     string            `json:"event"`
	DisputeID string            `json:"dispute_id"`
	PaymentID string            `json:"payment_id"`
	Amount    pix.Amount        `json:"amount"`
	Reason    pix.DisputeReason `json:"reason"`
	// RespondBy is set on pix.dispute.opened; Outcome and ReturnedAmount
	// on pix.dispute.closed.
	RespondBy      string      `json:"respond_by,omitempty"`
	Outcome        pix.Outcome `json:"outcome,omitempty"`
	ReturnedAmount *pix.Amount `json:"returned_amount,omitempty"`
	OccurredAt     string      `json:"occurred_at"`
}

// emitDispute writes event for dispute d (as it now is) of charge t into
// the outbox, to the charge's postbackUrl.
func (s *Service) emitDispute(ctx context.Context, tx *store.Tx, o *outbox.Events, t pix.Transaction, d pix.Dispute, event string, now time.Time) error {
	b := DisputeEventBody{ID: s.w.EventID(), Event: event, DisputeID: d.ID, PaymentID: d.PaymentID, Amount: d.Amount,
		Reason: d.Reason, OccurredAt: pix.FormatTime(now)}
	if event == pix.EventDisputeOpened {
		b.RespondBy = pix.FormatTime(d.RespondBy)
	} else {
		b.Outcome = d.Outcome
		returned := d.ReturnedAmount
		b.ReturnedAmount = &returned
	}
	payload, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("dispute event payload: %w", err)
	}
	return o.Insert(ctx, tx, pix.Event{ID: b.ID, ClientID: t.ClientID, TransactionID: t.ID, Type: event,
		URL: t.CallbackURL, Payload: string(payload), CreatedAt: now})
}

// OpenDispute opens a dispute of amount on charge t (PAID or partly
// refunded), as the PSP reported it (an infraction, pspID its id) or the
// sandbox's payer's bank contests it: what the owner has available of
// amount is blocked at once, the rest is filled by later credits, and
// pix.dispute.opened is sent. An infraction recorded before is answered
// again, unchanged. Errors: EUnprocessable (the charge is not paid, or
// amount is above what is left of it).
func (s *Service) OpenDispute(ctx context.Context, t pix.Transaction, amount pix.Amount, reason pix.DisputeReason,
	respondBy time.Time, pspID string) (pix.Dispute, error) {
	now := s.clocks.At(ctx)
	var out pix.Dispute
	err := s.w.Write(ctx, func(tx *store.Tx, o *outbox.Events) error {
		if prev, ok, err := recorded(pspID, func() (pix.Dispute, error) { return tx.DisputeByPSPID(ctx, t.ID, pspID) }); err != nil || ok {
			out = prev
			return err
		}
		cur, err := lockForMED(ctx, tx, t, amount)
		if err != nil {
			return err
		}
		b, err := tx.BalancesForUpdate(ctx, cur.ClientID)
		if err != nil {
			return err
		}
		d := pix.Dispute{ID: s.newUUID(), ClientID: cur.ClientID, PaymentID: cur.ID, Amount: amount, Reason: reason,
			Status: pix.DisputeOpen, RespondBy: respondBy.UTC().Truncate(time.Millisecond), OpenedAt: now, PSPID: pspID}
		d.Blocked = min(amount, b[ledger.Available])
		if err := tx.InsertDispute(ctx, d); err != nil {
			return err
		}
		if d.Blocked > 0 {
			if err := tx.Post(ctx, s.w.OrderedID(), cur.ClientID, cur.ID, ledger.DisputeBlocked(d.Blocked), now); err != nil {
				return err
			}
		}
		out = d
		return s.emitDispute(ctx, tx, o, cur, d, pix.EventDisputeOpened, now)
	})
	if err != nil {
		return pix.Dispute{}, fmt.Errorf("open dispute: %w", err)
	}
	return out, nil
}

// recorded returns the dispute get finds for the PSP's id, when id is
// set and one was recorded: a PSP's report seen twice is recorded once.
func recorded(id string, get func() (pix.Dispute, error)) (pix.Dispute, bool, error) {
	if id == "" {
		return pix.Dispute{}, false, nil
	}
	d, err := get()
	if errors.Is(err, store.ErrNotFound) {
		return pix.Dispute{}, false, nil
	}
	return d, err == nil, err
}

// lockForMED locks charge t, inside tx, for a MED change of amount: the
// charge must be paid with amount left of it (disputable), and its owner
// gets MED's accounts if it has none yet.
func lockForMED(ctx context.Context, tx *store.Tx, t pix.Transaction, amount pix.Amount) (pix.Transaction, error) {
	cur, err := tx.TransactionByIDForUpdate(ctx, t.ID)
	if err != nil {
		return pix.Transaction{}, err
	}
	if err := disputable(cur, amount); err != nil {
		return pix.Transaction{}, err
	}
	return cur, tx.OpenMEDAccounts(ctx, cur.ClientID)
}

// disputable refuses a dispute (or a MED return) of amount on charge t:
// only money received can be contested, at most what is left of it.
func disputable(t pix.Transaction, amount pix.Amount) error {
	if t.Type != pix.TypeCashin || (t.Status != pix.StatusPaid && t.Status != pix.StatusRefunded) {
		return pix.Errorf(pix.EUnprocessable, "Charge is %s and cannot be disputed", t.Status)
	}
	if amount <= 0 || amount > t.Left() {
		return pix.Errorf(pix.EUnprocessable, "Amount exceeds what is left of the payment")
	}
	return nil
}

// ReleaseDispute closes client c's OPEN dispute id as released (the
// contest failed): its block returns to available, with
// pix.dispute.closed. Errors: ENotFound, EUnprocessable (CLOSED).
func (s *Service) ReleaseDispute(ctx context.Context, clientID, id string) (pix.Dispute, error) {
	return s.closeDispute(ctx, clientID, id, func(ctx context.Context, tx *store.Tx, t pix.Transaction, d *pix.Dispute, now time.Time) error {
		d.Outcome = pix.OutcomeReleased
		if d.Blocked == 0 {
			return nil
		}
		released := d.Blocked
		d.Blocked = 0
		return tx.Post(ctx, s.w.OrderedID(), d.ClientID, t.ID, ledger.DisputeReleased(released), now)
	})
}

// closeDispute closes dispute id of client clientID ("" for any client:
// the PSP's word) in one transaction: settle moves its money and sets its
// outcome, then the dispute is recorded CLOSED with pix.dispute.closed.
func (s *Service) closeDispute(ctx context.Context, clientID, id string,
	settle func(ctx context.Context, tx *store.Tx, t pix.Transaction, d *pix.Dispute, now time.Time) error) (pix.Dispute, error) {
	if !pix.CanonicalID(id) {
		return pix.Dispute{}, pix.Errorf(pix.ENotFound, MsgDisputeNotFound)
	}
	now := s.clocks.At(ctx)
	var out pix.Dispute
	err := s.w.Write(ctx, func(tx *store.Tx, o *outbox.Events) error {
		// The charge is locked before its dispute, as every MED change
		// does, so that two of them never deadlock.
		d, err := tx.DisputeByID(ctx, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && clientID != "" && d.ClientID != clientID) {
			return pix.Errorf(pix.ENotFound, MsgDisputeNotFound)
		}
		if err != nil {
			return err
		}
		t, err := tx.TransactionByIDForUpdate(ctx, d.PaymentID)
		if err != nil {
			return err
		}
		if d, err = tx.DisputeForUpdate(ctx, id); err != nil {
			return err
		}
		if d.Status != pix.DisputeOpen {
			return pix.Errorf(pix.EUnprocessable, msgDisputeClosed)
		}
		if err := settle(ctx, tx, t, &d, now); err != nil {
			return err
		}
		d.Status, d.ClosedAt = pix.DisputeClosed, &now
		if err := tx.CloseDispute(ctx, d); err != nil {
			return err
		}
		out = d
		return s.emitDispute(ctx, tx, o, t, d, pix.EventDisputeClosed, now)
	})
	if err != nil {
		return pix.Dispute{}, fmt.Errorf("close dispute %s: %w", id, err)
	}
	return out, nil
}

// ReturnDispute closes client clientID's ("" for the PSP's word) OPEN
// dispute id as returned: a MED devolução of returned (at most what is
// left of the Pix; zero means the disputed amount), returnID its id at
// the PSP ("" for the sandbox's), left the PSP's account. Errors:
// ENotFound, EUnprocessable (CLOSED, or more than is left).
func (s *Service) ReturnDispute(ctx context.Context, clientID, id string, returned pix.Amount, returnID string) (pix.Dispute, error) {
	return s.closeDispute(ctx, clientID, id, func(ctx context.Context, tx *store.Tx, t pix.Transaction, d *pix.Dispute, now time.Time) error {
		if returned == 0 {
			returned = d.Amount
		}
		if err := disputable(t, returned); err != nil {
			return err
		}
		return s.returnMoney(ctx, tx, t, d, returned, returnID, now)
	})
}

// returnMoney moves, inside tx, the MED return of returned out of charge
// t's owner's balance for dispute d: from d's block first, then from
// available, and what is still missing becomes the owner's debt; what is
// left of the block returns to available. Of a split charge, each
// receiver gives back its pro rata share (ProRataShares, returnShares) and
// the owner only the rest; the block, the owner's alone, covers only the
// owner's part (docs/marketplace.md, Splits and MED). The charge's refunded_amount
// includes the return (REFUNDED once it reaches paid_amount).
func (s *Service) returnMoney(ctx context.Context, tx *store.Tx, t pix.Transaction, d *pix.Dispute, returned pix.Amount, returnID string,
	now time.Time) error {
	shares, own, err := ProRataShares(ctx, tx, t, returned)
	if err != nil {
		return err
	}
	b, err := tx.BalancesForUpdate(ctx, t.ClientID)
	if err != nil {
		return err
	}
	fromBlocked, fromAvailable, _ := ledger.PlanReturn(own, d.Blocked, b[ledger.Available])
	if own > 0 {
		p, err := ledger.MedReturned(own, fromBlocked, fromAvailable)
		if err != nil {
			return err
		}
		if err := tx.Post(ctx, s.w.OrderedID(), t.ClientID, t.ID, p, now); err != nil {
			return err
		}
	}
	if err := s.returnShares(ctx, tx, shares, now); err != nil {
		return err
	}
	if left := d.Blocked - fromBlocked; left > 0 {
		if err := tx.Post(ctx, s.w.OrderedID(), t.ClientID, t.ID, ledger.DisputeReleased(left), now); err != nil {
			return err
		}
	}
	d.Blocked, d.Outcome, d.ReturnedAmount, d.ReturnID = 0, pix.OutcomeReturned, returned, returnID
	if err := tx.AddMEDReturned(ctx, t.ID, returned); err != nil {
		return fmt.Errorf("charge %s: %w", t.ID, err)
	}
	if t.RefundedAmount+t.MEDReturned+returned >= t.PaidAmount && t.Status == pix.StatusPaid {
		return tx.SetStatus(ctx, t.ID, pix.StatusRefunded)
	}
	return nil
}

// returnShares takes, inside tx, each receiver's share of a MED return of
// a split charge out of its available balance, and what that does not
// cover becomes the receiver's own debt (docs/med.md): a return is never refused.
// The movement is the receiver's split transaction's.
func (s *Service) returnShares(ctx context.Context, tx *store.Tx, shares []Share, now time.Time) error {
	for _, sh := range shares {
		if err := tx.OpenMEDAccounts(ctx, sh.ClientID); err != nil {
			return err
		}
		b, err := tx.BalancesForUpdate(ctx, sh.ClientID)
		if err != nil {
			return err
		}
		_, fromAvailable, _ := ledger.PlanReturn(sh.Amount, 0, b[ledger.Available])
		p, err := ledger.MedReturned(sh.Amount, 0, fromAvailable)
		if err != nil {
			return err
		}
		if err := tx.Post(ctx, s.w.OrderedID(), sh.ClientID, sh.SplitID, p, now); err != nil {
			return err
		}
	}
	return nil
}

// MedReturned records a devolução of charge t that pixgate did not ask for
// (returnID, the PSP's id; nature its natureza), whichever reading of the
// PSP sees it first, once: it closes the charge's OPEN dispute as
// returned, or else is recorded as a dispute CLOSED at once as returned
// (only pix.dispute.closed is sent). A return recorded before changes
// nothing.
func (s *Service) MedReturned(ctx context.Context, t pix.Transaction, returned pix.Amount, nature, returnID string) (pix.Dispute, error) {
	now := s.clocks.At(ctx)
	var out pix.Dispute
	err := s.w.Write(ctx, func(tx *store.Tx, o *outbox.Events) error {
		if prev, ok, err := recorded(returnID, func() (pix.Dispute, error) { return tx.DisputeByReturnID(ctx, returnID) }); err != nil || ok {
			out = prev
			return err
		}
		cur, err := lockForMED(ctx, tx, t, returned)
		if err != nil {
			return err
		}
		open, err := tx.TransactionDisputes(ctx, cur.ID)
		if err != nil {
			return err
		}
		d := pix.Dispute{ID: s.newUUID(), ClientID: cur.ClientID, PaymentID: cur.ID, Amount: returned,
			Reason: pix.ReasonOfNature(nature), Status: pix.DisputeOpen, RespondBy: now, OpenedAt: now}
		fresh := true
		for _, x := range open {
			if x.Status == pix.DisputeOpen {
				d, fresh = x, false
				break
			}
		}
		if fresh {
			if err := tx.InsertDispute(ctx, d); err != nil {
				return err
			}
		}
		if err := s.returnMoney(ctx, tx, cur, &d, returned, returnID, now); err != nil {
			return err
		}
		d.Status, d.ClosedAt = pix.DisputeClosed, &now
		if err := tx.CloseDispute(ctx, d); err != nil {
			return err
		}
		out = d
		return s.emitDispute(ctx, tx, o, cur, d, pix.EventDisputeClosed, now)
	})
	if err != nil {
		return pix.Dispute{}, fmt.Errorf("record MED return %s: %w", returnID, err)
	}
	return out, nil
}
