package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

const recurrenceColumns = `id, client_id, external_id, idempotency_key, request_hash, psp_id, status, cancelled_by,
	payer_name, payer_document, contract, description, frequency, start_date, end_date, amount, retry,
	first_payment, first_payment_id, qrcode, callback_url, next_cycle, next_due, created_at, updated_at`

// dateColumn is the stored form of a date: YYYY-MM-DD, ” for the zero
// Date. Stored so, dates compare as text in both databases.
func dateColumn(d pix.Date) string {
	if d.IsZero() {
		return ""
	}
	return d.String()
}

func parseDateColumn(s string) (pix.Date, error) {
	if s == "" {
		return pix.Date{}, nil
	}
	if len(s) > len(pix.DateLayout) && s[0] != '0' {
		// A year past 9999, which earlier versions could store as the
		// calendar's next cycle: read as it is, so that the row can still
		// be shown and cancelled (the calendar ends before it).
		if y, err := strconv.Atoi(s[:len(s)-6]); err == nil && y > 9999 {
			if d, err := pix.ParseDate("2000" + s[len(s)-6:]); err == nil {
				return pix.Date{Year: y, Month: d.Month, Day: d.Day}, nil
			}
		}
	}
	d, err := pix.ParseDate(s)
	if err != nil {
		return pix.Date{}, fmt.Errorf("stored date %q: %w", s, err)
	}
	return d, nil
}

func scanRecurrence(row scanner) (pix.Recurrence, error) {
	var r pix.Recurrence
	var idem, first sql.NullString
	var start, end, next string
	var amount, firstAmount, created, updated int64
	err := row.Scan(&r.ID, &r.ClientID, &r.ExternalID, &idem, &r.RequestHash, &r.PSPID, &r.Status, &r.CancelledBy,
		&r.Payer.Name, &r.Payer.Document, &r.Contract, &r.Description, &r.Schedule.Frequency, &start, &end, &amount, &r.Retry,
		&firstAmount, &first, &r.QRCode, &r.CallbackURL, &r.NextCycle, &next, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return pix.Recurrence{}, ErrNotFound
	}
	if err != nil {
		return pix.Recurrence{}, fmt.Errorf("scan recurrence: %w", err)
	}
	r.IdempotencyKey, r.FirstPaymentID = idem.String, first.String
	r.Amount, r.FirstPayment = pix.Amount(amount), pix.Amount(firstAmount)
	r.CreatedAt, r.UpdatedAt = fromMS(created), fromMS(updated)
	for _, d := range []struct {
		dst *pix.Date
		s   string
	}{{&r.Schedule.Start, start}, {&r.Schedule.End, end}, {&r.NextDue, next}} {
		if *d.dst, err = parseDateColumn(d.s); err != nil {
			return pix.Recurrence{}, fmt.Errorf("scan recurrence %s: %w", r.ID, err)
		}
	}
	return r, nil
}

// InsertRecurrence stores a new recurrence unless the client already has
// one with the same external_id or idempotency key; it reports whether it
// inserted.
func (tx *Tx) InsertRecurrence(ctx context.Context, r pix.Recurrence) (bool, error) {
	n, err := tx.affected(ctx, `INSERT INTO recurrences (`+recurrenceColumns+`) VALUES
		($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25) ON CONFLICT DO NOTHING`,
		r.ID, r.ClientID, r.ExternalID, nullString(r.IdempotencyKey), r.RequestHash, r.PSPID, r.Status, r.CancelledBy,
		r.Payer.Name, r.Payer.Document, r.Contract, r.Description, r.Schedule.Frequency, dateColumn(r.Schedule.Start),
		dateColumn(r.Schedule.End), int64(r.Amount), r.Retry, int64(r.FirstPayment), nullString(r.FirstPaymentID), r.QRCode,
		r.CallbackURL, r.NextCycle, dateColumn(r.NextDue), ms(r.CreatedAt), ms(r.UpdatedAt))
	if err != nil {
		return false, fmt.Errorf("insert recurrence: %w", err)
	}
	return n == 1, nil
}

// Recurrence returns the client's recurrence id, or ErrNotFound.
func (q *Q) Recurrence(ctx context.Context, clientID, id string) (pix.Recurrence, error) {
	return scanRecurrence(q.q.QueryRowContext(ctx, `SELECT `+recurrenceColumns+` FROM recurrences WHERE id = $1 AND client_id = $2`, id, clientID))
}

// RecurrenceByExternalID returns the client's recurrence created with
// external_id, or ErrNotFound.
func (q *Q) RecurrenceByExternalID(ctx context.Context, clientID, externalID string) (pix.Recurrence, error) {
	return scanRecurrence(q.q.QueryRowContext(ctx, `SELECT `+recurrenceColumns+` FROM recurrences
		WHERE client_id = $1 AND external_id = $2`, clientID, externalID))
}

// RecurrenceByIdempotencyKey returns the client's recurrence created with
// the Idempotency-Key key, or ErrNotFound.
func (q *Q) RecurrenceByIdempotencyKey(ctx context.Context, clientID, key string) (pix.Recurrence, error) {
	return scanRecurrence(q.q.QueryRowContext(ctx, `SELECT `+recurrenceColumns+` FROM recurrences
		WHERE client_id = $1 AND idempotency_key = $2`, clientID, key))
}

// RecurrenceByPSPID returns the recurrence the PSP names pspID, of any
// client, or ErrNotFound.
func (q *Q) RecurrenceByPSPID(ctx context.Context, pspID string) (pix.Recurrence, error) {
	return scanRecurrence(q.q.QueryRowContext(ctx, `SELECT `+recurrenceColumns+` FROM recurrences WHERE psp_id = $1`, pspID))
}

// RecurrenceForUpdate returns the recurrence id of any client, locked
// until tx ends, or ErrNotFound.
func (tx *Tx) RecurrenceForUpdate(ctx context.Context, id string) (pix.Recurrence, error) {
	return scanRecurrence(tx.q.QueryRowContext(ctx, `SELECT `+recurrenceColumns+` FROM recurrences WHERE id = $1`+tx.d.ForUpdate, id))
}

// SetRecurrenceStatus moves the recurrence id from status from to to (with
// who cancelled it, for CANCELLED) and reports whether it was in from.
func (tx *Tx) SetRecurrenceStatus(ctx context.Context, id string, from, to pix.RecurrenceStatus, by pix.CancelledBy, now time.Time) (bool, error) {
	n, err := tx.affected(ctx, `UPDATE recurrences SET status = $3, cancelled_by = $4, updated_at = $5
		WHERE id = $1 AND status = $2`, id, from, to, by, ms(now))
	if err != nil {
		return false, fmt.Errorf("set recurrence status: %w", err)
	}
	return n == 1, nil
}

// AdvanceRecurrence moves the calendar of the recurrence id from cycle
// number from to cycle next, due on nextDue (zero: no cycle left), and
// reports whether it stood at from: of two nodes that created the same
// cycle, one advances it.
func (tx *Tx) AdvanceRecurrence(ctx context.Context, id string, from, next int, nextDue pix.Date, now time.Time) (bool, error) {
	n, err := tx.affected(ctx, `UPDATE recurrences SET next_cycle = $3, next_due = $4, updated_at = $5
		WHERE id = $1 AND next_cycle = $2`, id, from, next, dateColumn(nextDue), ms(now))
	if err != nil {
		return false, fmt.Errorf("advance recurrence: %w", err)
	}
	return n == 1, nil
}

// DueRecurrences returns APPROVED recurrences whose next cycle is due on
// or before until (the cycles whose charge window has opened), oldest due
// first. Only ten-character dates compare as text: a date of another
// length (a year past 9999) is no cycle of the calendar and is left out,
// rather than sorted into every batch. A row that cannot be read is left
// out too, with its error beside the rows that can: it fails only itself.
func (q *Q) DueRecurrences(ctx context.Context, until pix.Date, limit int) ([]pix.Recurrence, error) {
	out, err := selectEach(ctx, q, scanRecurrence, `SELECT `+recurrenceColumns+` FROM recurrences
		WHERE status = 'APPROVED' AND length(next_due) = 10 AND next_due <= $1 ORDER BY next_due, id LIMIT $2`, dateColumn(until), limit)
	if err != nil {
		return out, fmt.Errorf("due recurrences: %w", err)
	}
	return out, nil
}

// WaitingRecurrences returns CREATED recurrences created before before,
// oldest first: those whose payer has let the approval window pass. Like
// DueRecurrences, it returns the rows it can read beside the errors of
// those it cannot.
func (q *Q) WaitingRecurrences(ctx context.Context, before time.Time, limit int) ([]pix.Recurrence, error) {
	out, err := selectEach(ctx, q, scanRecurrence, `SELECT `+recurrenceColumns+` FROM recurrences
		WHERE status = 'CREATED' AND created_at < $1 ORDER BY created_at, id LIMIT $2`, ms(before), limit)
	if err != nil {
		return out, fmt.Errorf("waiting recurrences: %w", err)
	}
	return out, nil
}

const cycleColumns = `c.payment_id, c.recurrence_id, c.cycle, c.due_date, c.attempts, c.retry_on, c.updated_at`

func scanCycleInto(c *pix.Cycle, dest ...any) []any {
	return append([]any{&c.PaymentID, &c.RecurrenceID, &c.Number}, dest...)
}

func scanCycle(row scanner) (pix.Cycle, error) {
	var c pix.Cycle
	var due, retry string
	var updated int64
	err := row.Scan(scanCycleInto(&c, &due, &c.Attempts, &retry, &updated)...)
	if errors.Is(err, sql.ErrNoRows) {
		return pix.Cycle{}, ErrNotFound
	}
	if err != nil {
		return pix.Cycle{}, fmt.Errorf("scan cycle: %w", err)
	}
	return c, setCycleDates(&c, due, retry, updated)
}

// InsertCycle stores a new cycle of a recurrence; a second charge for the
// same cycle fails with ErrConflict.
func (tx *Tx) InsertCycle(ctx context.Context, c pix.Cycle) error {
	_, err := tx.exec(ctx, `INSERT INTO recurrence_cycles (payment_id, recurrence_id, cycle, due_date, attempts, retry_on, updated_at)
		VALUES ($1,$2,$3,$4,$5,$6,$7)`, c.PaymentID, c.RecurrenceID, c.Number, dateColumn(c.DueDate), c.Attempts,
		dateColumn(c.RetryOn), ms(c.UpdatedAt))
	if err != nil {
		return fmt.Errorf("insert cycle: %w", err)
	}
	return nil
}

// Cycle returns the cycle whose charge is paymentID, or ErrNotFound (the
// charge is no cycle's).
func (q *Q) Cycle(ctx context.Context, paymentID string) (pix.Cycle, error) {
	return scanCycle(q.q.QueryRowContext(ctx, `SELECT `+cycleColumns+` FROM recurrence_cycles c WHERE c.payment_id = $1`, paymentID))
}

// UpdateCycle records a cycle's attempts and the retry still to ask for.
func (tx *Tx) UpdateCycle(ctx context.Context, paymentID string, attempts int, retryOn pix.Date, now time.Time) error {
	if _, err := tx.affected(ctx, `UPDATE recurrence_cycles SET attempts = $2, retry_on = $3, updated_at = $4 WHERE payment_id = $1`,
		paymentID, attempts, dateColumn(retryOn), ms(now)); err != nil {
		return fmt.Errorf("update cycle: %w", err)
	}
	return nil
}

// CycleCharges returns the cycles of the recurrence id with their
// charges' amount and status, in calendar order.
func (q *Q) CycleCharges(ctx context.Context, recurrenceID string) ([]pix.CycleCharge, error) {
	out, err := selectAll(ctx, q, scanCycleCharge, `SELECT `+cycleColumns+`, t.amount, t.status
		FROM recurrence_cycles c JOIN transactions t ON t.id = c.payment_id
		WHERE c.recurrence_id = $1 ORDER BY c.cycle`, recurrenceID)
	if err != nil {
		return nil, fmt.Errorf("cycle charges: %w", err)
	}
	return out, nil
}

// CyclesToRetry returns cycles with a retry still to ask the PSP for,
// earliest retry first; as DueRecurrences, only ten-character dates are
// taken, and a row that cannot be read fails only itself.
func (q *Q) CyclesToRetry(ctx context.Context, limit int) ([]pix.Cycle, error) {
	out, err := selectEach(ctx, q, scanCycle, `SELECT `+cycleColumns+` FROM recurrence_cycles c
		WHERE length(c.retry_on) = 10 ORDER BY c.retry_on, c.payment_id LIMIT $1`, limit)
	if err != nil {
		return out, fmt.Errorf("cycles to retry: %w", err)
	}
	return out, nil
}

// PendingCycleCount counts the recurrence's cycle charges still PENDING.
func (q *Q) PendingCycleCount(ctx context.Context, recurrenceID string) (int, error) {
	var n int
	err := q.q.QueryRowContext(ctx, `SELECT count(*) FROM recurrence_cycles c JOIN transactions t ON t.id = c.payment_id
		WHERE c.recurrence_id = $1 AND t.status = 'PENDING'`, recurrenceID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("pending cycles: %w", err)
	}
	return n, nil
}

func scanCycleCharge(row scanner) (pix.CycleCharge, error) {
	var c pix.CycleCharge
	var due, retry string
	var updated, amount int64
	err := row.Scan(scanCycleInto(&c.Cycle, &due, &c.Attempts, &retry, &updated, &amount, &c.Status)...)
	if err != nil {
		return pix.CycleCharge{}, fmt.Errorf("scan cycle charge: %w", err)
	}
	c.Amount = pix.Amount(amount)
	return c, setCycleDates(&c.Cycle, due, retry, updated)
}

func setCycleDates(c *pix.Cycle, due, retry string, updated int64) error {
	var err error
	if c.DueDate, err = parseDateColumn(due); err != nil {
		return fmt.Errorf("scan cycle %s: %w", c.PaymentID, err)
	}
	if c.RetryOn, err = parseDateColumn(retry); err != nil {
		return fmt.Errorf("scan cycle %s: %w", c.PaymentID, err)
	}
	c.UpdatedAt = fromMS(updated)
	return nil
}

// UpdateCycleRetry sets the retry still to ask for of the cycle whose
// charge is paymentID (zero: none); a charge that is no cycle's is left.
func (tx *Tx) UpdateCycleRetry(ctx context.Context, paymentID string, retryOn pix.Date, now time.Time) error {
	if _, err := tx.affected(ctx, `UPDATE recurrence_cycles SET retry_on = $2, updated_at = $3 WHERE payment_id = $1`,
		paymentID, dateColumn(retryOn), ms(now)); err != nil {
		return fmt.Errorf("update cycle retry: %w", err)
	}
	return nil
}
