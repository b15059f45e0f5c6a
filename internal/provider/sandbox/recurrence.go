package sandbox

import (
	"context"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/brcode"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
)

// sandboxISPB stands in the idRec where a PSP writes its ISPB.
const sandboxISPB = "00000000"

// CreateRecurrence registers r: its id has BACEN's idRec form (RR, an
// ISPB, the date it was created, 11 letters and digits), and its QR code is
// a static BR Code of the first payment (journey 3) or of one cycle's
// amount (journey 2), for display: the sandbox's payer answers through the
// sandbox actions, not by scanning it.
func (p *Provider) CreateRecurrence(ctx context.Context, r provider.Recurrence) (provider.RecurrenceCreated, error) {
	tail, err := brcode.NewTxID(nil)
	if err != nil {
		return provider.RecurrenceCreated{}, fmt.Errorf("sandbox: recurrence id: %w", err)
	}
	today := pix.DateOf(p.now(ctx).In(p.loc))
	id := fmt.Sprintf("RR%s%04d%02d%02d%s", sandboxISPB, today.Year, int(today.Month), today.Day, tail[:11])
	txid, amount := r.FirstTxID, r.FirstPayment
	if amount <= 0 {
		txid, amount = id[len(id)-brcode.TxIDLen:], r.Amount
	}
	code, err := p.encode(txid, amount)
	if err != nil {
		return provider.RecurrenceCreated{}, err
	}
	return provider.RecurrenceCreated{ID: id, QRCode: code}, nil
}

// Recurrence reports the one change of a recurrence that comes from the
// clock: CREATED until pix.ApprovalDays after the day its id carries, then
// EXPIRED. The sandbox remembers no payer's answer: those come from the
// sandbox actions, which the gateway applies as it applies a PSP's report,
// so the gateway asks only about recurrences still waiting for one.
func (p *Provider) Recurrence(ctx context.Context, id string) (provider.RecurrenceState, error) {
	var y, m, d int
	if len(id) != 29 || id[:2] != "RR" {
		return provider.RecurrenceState{}, fmt.Errorf("sandbox: recurrence %q: %w", id, provider.ErrNotFound)
	}
	if _, err := fmt.Sscanf(id[10:18], "%4d%2d%2d", &y, &m, &d); err != nil {
		return provider.RecurrenceState{}, fmt.Errorf("sandbox: recurrence %q: %w", id, provider.ErrNotFound)
	}
	created := pix.Date{Year: y, Month: time.Month(m), Day: d}
	st := provider.RecurrenceState{ID: id, Status: pix.RecurrenceCreated}
	if pix.DateOf(p.now(ctx).In(p.loc)).DaysSince(created) >= pix.ApprovalDays {
		st.Status = pix.RecurrenceExpired
	}
	return st, nil
}

// RecurrencesChanged lists nothing: no recurrence changes here but by a
// sandbox action, which the gateway applies as it happens.
func (*Provider) RecurrencesChanged(context.Context, time.Time, time.Time) ([]provider.RecurrenceState, error) {
	return nil, nil
}

// CancelRecurrence accepts: nothing is left at the sandbox to withdraw.
func (*Provider) CancelRecurrence(context.Context, string) error { return nil }

// CreateCycleCharge accepts any cycle charge: the sandbox's payer's bank
// debits it when the pay action says so.
func (*Provider) CreateCycleCharge(context.Context, provider.CycleCharge) error { return nil }

// CycleCharge reports what the sandbox knows of a cycle charge: a payment
// made to it by the pay action (paid), else nothing (ErrNotFound): no
// payer's bank debits a sandbox charge on its own.
func (p *Provider) CycleCharge(ctx context.Context, txid string) (provider.CycleState, error) {
	pays, err := p.ChargePayments(ctx, txid)
	if err != nil {
		return provider.CycleState{}, err
	}
	if len(pays) == 0 {
		return provider.CycleState{}, fmt.Errorf("sandbox: cycle charge %s: %w", txid, provider.ErrNotFound)
	}
	return provider.CycleState{TxID: txid, Status: provider.CyclePaid, Payments: pays,
		Attempts: []provider.Attempt{{Date: pix.DateOf(pays[0].PaidAt.In(p.loc)), Status: provider.AttemptPaid}}}, nil
}

// CycleChargesChanged lists nothing, as RecurrencesChanged.
func (*Provider) CycleChargesChanged(context.Context, time.Time, time.Time) ([]provider.CycleState, error) {
	return nil, nil
}

// RetryCycleCharge schedules the retry on day: the sandbox's payer's bank
// debits it, or fails it, when a sandbox action says so.
func (*Provider) RetryCycleCharge(_ context.Context, txid string, day pix.Date) (provider.CycleState, error) {
	return provider.CycleState{TxID: txid, Status: provider.CyclePending,
		Attempts: []provider.Attempt{{Date: day, Retry: true, Status: provider.AttemptScheduled}}}, nil
}

// CancelCycleCharge accepts, as CancelRecurrence.
func (*Provider) CancelCycleCharge(context.Context, string) error { return nil }

// StartRecurrences does nothing: there are no webhooks to register.
func (*Provider) StartRecurrences(context.Context) error { return nil }

// AnswerRecurrence reports the payer's answer to recurrence id.
func (*Provider) AnswerRecurrence(_ context.Context, id string, approve bool) (provider.RecurrenceState, error) {
	st := provider.RecurrenceState{ID: id, Status: pix.RecurrenceRejected}
	if approve {
		st.Status = pix.RecurrenceApproved
	}
	return st, nil
}

// CancelRecurrenceAsPayer reports recurrence id cancelled by its payer.
func (*Provider) CancelRecurrenceAsPayer(_ context.Context, id string) (provider.RecurrenceState, error) {
	return provider.RecurrenceState{ID: id, Status: pix.RecurrenceCancelled, CancelledBy: pix.CancelledByPayer}, nil
}

// FailDebit reports cycle charge txid still open with every attempt so
// far, earlier ones and this one, failed.
func (*Provider) FailDebit(_ context.Context, txid string, due pix.Date, earlier int) (provider.CycleState, error) {
	st := provider.CycleState{TxID: txid, DueDate: due, Status: provider.CyclePending}
	for i := 0; i <= earlier; i++ {
		st.Attempts = append(st.Attempts, provider.Attempt{Status: provider.AttemptFailed, Retry: i > 0})
	}
	return st, nil
}

var (
	_ provider.Recurrer        = (*Provider)(nil)
	_ provider.RecurrencePayer = (*Provider)(nil)
)
