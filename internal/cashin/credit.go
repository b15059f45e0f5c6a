package cashin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
)

// Credit credits payment p to the charge with its txid, once per
// end-to-end id. strict (the simulated payer) refuses what a real payer
// cannot do: paying a charge that is not PENDING, or another amount. A
// payment a real PSP confirmed is money received and is never refused: a
// CANCELLED charge becomes PAID, another amount than the charge's is
// credited as received (paid_amount, the fee on it, amount_mismatch), and
// a payment no open charge takes — no charge holds its txid, or the charge
// was paid already — becomes an unmatched receipt (recordUnmatched). The
// returned transaction is the charge credited, or the zero Transaction
// when the payment was recorded as unmatched.
//
// For a charge with a due date, "its amount" is what its terms make due on
// the day the payment was made: day, or when zero the São Paulo date of
// the payment's time. It is recorded with the payment (ExpectedAmount).
func (s *Service) Credit(ctx context.Context, p provider.Payment, strict bool, day pix.Date) (pix.Transaction, error) {
	now := s.clocks.At(ctx)
	paidAt := now
	if !p.PaidAt.IsZero() {
		paidAt = p.PaidAt.UTC().Truncate(time.Millisecond)
	}
	if day.IsZero() {
		day = s.dateOf(paidAt)
	}
	var out pix.Transaction
	err := s.w.Write(ctx, func(tx *store.Tx, o *outbox.Events) error {
		out = pix.Transaction{}
		t, err := tx.ChargeByTxIDForUpdate(ctx, p.TxID)
		if p.TxID == "" || errors.Is(err, store.ErrNotFound) || (err == nil && t.Type != pix.TypeCashin) {
			if strict {
				return pix.Errorf(pix.ENotFound, "Charge not found")
			}
			return s.recordUnmatched(ctx, tx, p, pix.Transaction{}, now)
		}
		if err != nil {
			return err
		}
		switch {
		case t.EndToEndID != "" && t.EndToEndID == p.EndToEndID:
			out = t
			return nil // already credited: a payment reported twice credits once
		case (t.Status == pix.StatusPaid || t.Status == pix.StatusRefunded) && !strict:
			return s.recordUnmatched(ctx, tx, p, t, now)
		case t.Status == pix.StatusCancelled && !strict:
		case t.Status != pix.StatusPending:
			return pix.Errorf(pix.EUnprocessable, "Charge is %s and can no longer be paid", t.Status)
		}
		expected, recorded := t.Amount, pix.Amount(0)
		if t.Due != nil {
			// 0 after the last day: nothing was due, any amount differs.
			expected, _ = t.Due.AmountOn(t.Amount, day)
			recorded = expected
		}
		switch {
		case strict && t.Due != nil && expected == 0:
			return pix.Errorf(pix.EUnprocessable, "Charge can no longer be paid on %s", day)
		case strict && t.Due != nil && p.Amount != expected:
			return pix.Errorf(pix.EUnprocessable, "Payment amount %s does not match the amount due on %s, %s", p.Amount, day, expected)
		case strict && p.Amount != t.Amount && t.Due == nil:
			return pix.Errorf(pix.EUnprocessable, "Payment amount %s does not match the charge amount %s", p.Amount, t.Amount)
		}
		tax := t.Tax
		if p.Amount != t.Amount {
			// The fee is the client's cash-in fee on what was received.
			c, err := tx.Client(ctx, t.ClientID)
			if err != nil {
				return fmt.Errorf("client of charge %s: %w", t.ID, err)
			}
			tax = c.CashinFee.CashInFee(p.Amount)
		}
		if p.Amount != expected {
			s.log.WarnContext(ctx, "a payment's amount differs from what its charge asked; the amount received is credited",
				"charge", t.ID, "end_to_end_id", p.EndToEndID, "paid_amount", p.Amount.String(), "expected_amount", expected.String())
		}
		ok, err := tx.CreditCharge(ctx, t.ID, t.Status, paidAt, p.EndToEndID, p.Amount, tax, recorded)
		if err != nil || !ok {
			return errors.Join(err, fmt.Errorf("charge %s changed concurrently", t.ID))
		}
		out = t
		out.Status, out.ConfirmedAt, out.EndToEndID, out.PaidAmount, out.Tax = pix.StatusPaid, paidAt, p.EndToEndID, p.Amount, tax
		out.ExpectedAmount = recorded
		if name, doc := payerOf(p); name != "" || doc != "" {
			if err := tx.SetChargePayer(ctx, t.ID, name, doc); err != nil {
				return err
			}
			out.PayerName, out.PayerDocument = name, doc
		}
		return s.credited(ctx, tx, o, &out, now)
	})
	if err != nil {
		return pix.Transaction{}, fmt.Errorf("receive payment: %w", err)
	}
	return out, nil
}

// credited moves, inside tx that marked charge t PAID, the money it
// brought: pix.cashin.paid (with its splits, if any), the cycle's change
// for a recurrence's charge, the credit posting, each split receiver's
// share (paySplits) and, of what the client keeps, its MED debt and
// blocks first (holdsFirst).
func (s *Service) credited(ctx context.Context, tx *store.Tx, o *outbox.Events, t *pix.Transaction, now time.Time) error {
	net := t.PaidAmount - t.Tax
	splits, shares, credits, err := planSplits(ctx, tx, *t, net)
	if err != nil {
		return err
	}
	t.Splits = credits
	if err := s.w.Emit(ctx, tx, o, *t, pix.EventCashinPaid, pix.StatusPaid, t.PaidAmount, t.Tax, "", t.ConfirmedAt); err != nil {
		return err
	}
	if t.RecurrenceID != "" {
		if err := s.cycles.CycleCredited(ctx, tx, o, *t, now); err != nil {
			return err
		}
	}
	if err := tx.Post(ctx, s.w.OrderedID(), t.ClientID, t.ID, ledger.CashinPaid(t.PaidAmount, t.Tax), t.ConfirmedAt); err != nil {
		return err
	}
	kept := net
	if len(splits) > 0 {
		parent, err := tx.Client(ctx, t.ClientID)
		if err != nil {
			return fmt.Errorf("client of charge %s: %w", t.ID, err)
		}
		if err := s.paySplits(ctx, tx, o, *t, parent, splits, shares, t.ConfirmedAt); err != nil {
			return err
		}
		for _, a := range shares {
			kept -= a
		}
	}
	return s.holdsFirst(ctx, tx, t.ClientID, t.ID, kept, t.ConfirmedAt)
}

// payerOf returns who paid p as a charge keeps it: the name the PSP
// reported, if it is text a payer's app may show (pix.PlainText), and the
// document masked (pix.MaskPayerDocument); "" for what is unknown.
func payerOf(p provider.Payment) (name, document string) {
	name = strings.TrimSpace(p.PayerName)
	if !pix.ValidText(name) || !pix.PlainText(name) || utf8.RuneCountInString(name) > maxPayerName {
		name = ""
	}
	return name, pix.MaskPayerDocument(p.PayerDocument)
}

// maxPayerName is the longest payer name kept: BACEN's nome has at most 200
// characters.
const maxPayerName = 200

// Charge returns client c's charge with the given id, any other id (not
// a UUID, another client's, not a charge) being ENotFound.
func (s *Service) Charge(ctx context.Context, c pix.Client, id string) (pix.Transaction, error) {
	if !pix.CanonicalID(id) {
		return pix.Transaction{}, pix.Errorf(pix.ENotFound, "Charge not found")
	}
	t, err := s.db.Transaction(ctx, c.ID, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && t.Type != pix.TypeCashin) {
		return pix.Transaction{}, pix.Errorf(pix.ENotFound, "Charge not found")
	}
	if err != nil {
		return pix.Transaction{}, fmt.Errorf("charge: %w", err)
	}
	return t, nil
}

// holdsFirst spends, inside the transaction tx that credited net to
// client clientID (for transaction txID), what the client owes first: its
// MED debt, then its open disputes' unfilled blocks, oldest first; only
// the rest stays available. The credit's posting is written before, so on
// PostgreSQL this read waits for the available row's lock, and two credits
// of one client never pay one debt twice.
func (s *Service) holdsFirst(ctx context.Context, tx *store.Tx, clientID, txID string, net pix.Amount, at time.Time) error {
	if net <= 0 {
		return nil
	}
	owed, unfilled, err := tx.ClientHolds(ctx, clientID)
	if err != nil || (owed == 0 && unfilled == 0) {
		return err
	}
	pay, fill, _ := ledger.PlanCredit(net, owed, unfilled)
	if pay > 0 {
		if err := tx.Post(ctx, s.w.OrderedID(), clientID, txID, ledger.DebtPaid(pay), at); err != nil {
			return err
		}
	}
	if fill == 0 {
		return nil
	}
	open, err := tx.OpenUnfilledDisputes(ctx, clientID)
	if err != nil {
		return err
	}
	left := fill
	for _, d := range open {
		take := min(left, d.Unfilled())
		if take == 0 {
			continue
		}
		if err := tx.SetDisputeBlocked(ctx, d.ID, d.Blocked+take); err != nil {
			return err
		}
		// The block is the contested charge's movement, whichever credit filled it.
		if err := tx.Post(ctx, s.w.OrderedID(), clientID, d.PaymentID, ledger.DisputeBlocked(take), at); err != nil {
			return err
		}
		left -= take
	}
	return nil
}
