package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// SendStep moves one transfer of Kind (its row: a payout's transaction, a
// refund, an unmatched receipt's return) from the send
// state and settle_at it was read with to State and Next, only if the row
// still has them: the claim of a step by one node, and its outcome.
//
// A claim that sets Hold leaves settle_at as it is and holds the row
// instead (send_lease, which no index covers, so on PostgreSQL the claim
// is a HOT update): it applies only if no other hold is live at Now, and
// the row is not due for anyone until Hold. The steps of the node that
// holds it name the hold (Held) and apply only while the row still has
// it; every step that is not a claim drops the hold.
type SendStep struct {
	Kind        pix.TransferKind
	ID          string
	WasState    string
	WasSettleAt time.Time
	State       string
	Next        time.Time // the next settle_at; zero: none
	EndToEndID  string    // recorded when not ""
	Attempt     bool      // counts one more send attempt
	Hold        time.Time // a claim: the row is held until then (Next is unused)
	Now         time.Time // a claim: the time a hold must have ended by to be taken over
	Held        time.Time // the hold this step's claim took; zero: none
}

// leaseGuard is the WHERE clause of a step on table whose hold, time of the
// claim and held lease are the SQL expressions hold, now and held (BIGINT
// or NULL): a claim applies only if no hold is live at now, and a step of
// a claim only while its hold is the row's.
func leaseGuard(table, hold, now, held string) string {
	return ` AND (` + held + ` IS NULL OR ` + table + `.send_lease = ` + held + `) AND (` + hold + ` IS NULL OR ` +
		table + `.send_lease IS NULL OR ` + table + `.send_lease <= ` + now + `)`
}

// StepSend applies st and reports whether the row was still as read.
func (tx *Tx) StepSend(ctx context.Context, st SendStep) (bool, error) {
	table := stepTable(st)
	attempt := 0
	if st.Attempt {
		attempt = 1
	}
	n, err := tx.affected(ctx, `UPDATE `+table+` SET send_state = $3,
		settle_at = CASE WHEN CAST($8 AS BIGINT) IS NULL THEN CAST($4 AS BIGINT) ELSE settle_at END, send_lease = CAST($8 AS BIGINT),
		end_to_end_id = COALESCE($5, end_to_end_id), send_attempts = send_attempts + $6
		WHERE id = $1 AND send_state = $2 AND settle_at = $7`+
		leaseGuard(table, "CAST($8 AS BIGINT)", "CAST($9 AS BIGINT)", "CAST($10 AS BIGINT)"),
		st.ID, st.WasState, st.State, nullMS(st.Next), nullString(st.EndToEndID), attempt, nullMS(st.WasSettleAt),
		nullMS(st.Hold), nullMS(st.Now), nullMS(st.Held))
	if err != nil {
		return false, fmt.Errorf("step send of %s: %w", st.ID, err)
	}
	return n == 1, nil
}

// StepSendAndTransition applies st to a payout and, in the same guarded
// UPDATE, moves it from status from to status to (setting confirmed_at
// when confirmed is non-zero); it reports whether the row was still as
// read (send state, settle_at and status).
func (tx *Tx) StepSendAndTransition(ctx context.Context, st SendStep, from, to pix.TxStatus, confirmed time.Time) (bool, error) {
	attempt := 0
	if st.Attempt {
		attempt = 1
	}
	n, err := tx.affected(ctx, `UPDATE transactions SET send_state = $3, settle_at = $4,
		end_to_end_id = COALESCE($5, end_to_end_id), send_attempts = send_attempts + $6, status = $8,
		confirmed_at = COALESCE($9, confirmed_at)
		WHERE id = $1 AND send_state = $2 AND settle_at = $7 AND status = $10`,
		st.ID, st.WasState, st.State, nullMS(st.Next), nullString(st.EndToEndID), attempt, nullMS(st.WasSettleAt),
		to, nullMS(confirmed), from)
	if err != nil {
		return false, fmt.Errorf("step and transition %s: %w", st.ID, err)
	}
	return n == 1, nil
}

// CreditCharge moves a charge from status from to PAID, confirmed at
// confirmed by the payment e2e of paid centavos with fee tax, and reports
// whether it did. expected is, for a charge with a due date, what its
// terms made due on the day it was paid (0 for none, and for an immediate
// charge).
func (tx *Tx) CreditCharge(ctx context.Context, id string, from pix.TxStatus, confirmed time.Time, e2e string, paid, tax, expected pix.Amount) (bool, error) {
	n, err := tx.affected(ctx, `UPDATE transactions SET status = 'PAID', confirmed_at = $3, end_to_end_id = $4, paid_amount = $5, tax = $6,
		expected_amount = $7 WHERE id = $1 AND status = $2`, id, from, ms(confirmed), nullString(e2e), int64(paid), int64(tax), nullAmount(expected))
	if err != nil {
		return false, fmt.Errorf("credit charge: %w", err)
	}
	return n == 1, nil
}

// SetChargePayer records who paid charge id, as the PSP reported it: name
// and the masked document (pix.MaskPayerDocument), each "" when unknown.
// It is written in the transaction that credits the charge; needing no
// answer, it waits for the transaction's next read or commit (Tx.later).
func (tx *Tx) SetChargePayer(ctx context.Context, id, name, maskedDocument string) error {
	if err := tx.later(ctx, `UPDATE transactions SET payer_name = $2, payer_document = $3 WHERE id = $1`,
		id, nullString(name), nullString(maskedDocument)); err != nil {
		return fmt.Errorf("set charge payer: %w", err)
	}
	return nil
}

// FinishRefundSend moves a PENDING refund to status (COMPLETED or FAILED),
// unschedules it, records the return's end-to-end id (when not "") and the
// final send state, and reports whether it did (false: already finished).
func (tx *Tx) FinishRefundSend(ctx context.Context, id string, status pix.RefundStatus, at time.Time, e2e string) (bool, error) {
	n, err := tx.affected(ctx, `UPDATE refunds SET status = $2, settled_at = $3, settle_at = NULL, send_state = 'done',
		end_to_end_id = COALESCE($4, end_to_end_id) WHERE id = $1 AND status = 'PENDING'`, id, status, ms(at), nullString(e2e))
	if err != nil {
		return false, fmt.Errorf("finish refund: %w", err)
	}
	return n == 1, nil
}

// DueSettlementsExcept is Q.DueSettlements without the rows whose ids are
// in except.
func (q *Q) DueSettlementsExcept(ctx context.Context, now time.Time, limit int, except []string) ([]pix.Transaction, error) {
	if len(except) == 0 {
		return q.DueSettlements(ctx, now, limit)
	}
	var b strings.Builder
	b.WriteString(`SELECT ` + txColumns + ` FROM transactions WHERE settle_at IS NOT NULL AND settle_at <= $1
		AND (send_lease IS NULL OR send_lease <= $1) AND id NOT IN `)
	tuples(&b, 3, 1, len(except))
	b.WriteString(` ORDER BY settle_at LIMIT $2`)
	out, err := q.list(ctx, b.String(), stringArgs([]any{ms(now), limit}, except)...)
	if err != nil {
		return nil, fmt.Errorf("due settlements: %w", err)
	}
	return out, nil
}

// DueRefundRows returns up to limit refunds whose settle_at ≤ now, earliest
// first, without locking them.
func (q *Q) DueRefundRows(ctx context.Context, now time.Time, limit int) ([]pix.Refund, error) {
	out, err := selectAll(ctx, q, scanRefund, `SELECT `+refundColumns+` FROM refunds
		WHERE settle_at IS NOT NULL AND settle_at <= $1 AND (send_lease IS NULL OR send_lease <= $1)
		ORDER BY settle_at, created_at, id LIMIT $2`, ms(now), limit)
	if err != nil {
		return nil, fmt.Errorf("due refunds: %w", err)
	}
	return out, nil
}

// RefundByID returns a refund of any client, or ErrNotFound.
func (q *Q) RefundByID(ctx context.Context, id string) (pix.Refund, error) {
	return scanRefund(q.q.QueryRowContext(ctx, `SELECT `+refundColumns+` FROM refunds WHERE id = $1`, id))
}

// RefundForUpdate returns a refund of any client locked until tx ends, or
// ErrNotFound.
func (tx *Tx) RefundForUpdate(ctx context.Context, id string) (pix.Refund, error) {
	return scanRefund(tx.q.QueryRowContext(ctx, `SELECT `+refundColumns+` FROM refunds WHERE id = $1`+tx.d.ForUpdate, id))
}

// ExpiredCharges returns up to limit PENDING charges whose expires_at ≤
// now, earliest first, without locking them: with a real PSP each is read
// at the PSP before it is cancelled, outside any transaction.
func (q *Q) ExpiredCharges(ctx context.Context, now time.Time, limit int) ([]pix.Transaction, error) {
	out, err := q.list(ctx, `SELECT `+txColumns+` FROM transactions
		WHERE status = 'PENDING' AND type = 'cashin' AND expires_at <= $1 ORDER BY expires_at LIMIT $2`, ms(now), limit)
	if err != nil {
		return nil, fmt.Errorf("expired charges: %w", err)
	}
	return out, nil
}

// ClaimReading claims the next reading of the list name (a PSP's received
// payments) if it is due at now, for this node alone until next; it returns
// where the last complete reading ended (start on the first reading).
func (db *DB) ClaimReading(ctx context.Context, name string, now, next, start time.Time) (time.Time, bool, error) {
	var until int64
	claimed := false
	err := db.Write(ctx, func(tx *Tx) error {
		if _, err := tx.affected(ctx, `INSERT INTO psp_readings (name, read_until, next_at) VALUES ($1, $2, 0)
			ON CONFLICT DO NOTHING`, name, ms(start)); err != nil {
			return err
		}
		err := tx.q.QueryRowContext(ctx, `UPDATE psp_readings SET next_at = $3 WHERE name = $1 AND next_at <= $2
			RETURNING read_until`, name, ms(now), ms(next)).Scan(&until)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		claimed = err == nil
		return err
	})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("claim reading: %w", err)
	}
	return fromMS(until), claimed, nil
}

// SetReadUntil records that the list name has been read completely up to until.
func (db *DB) SetReadUntil(ctx context.Context, name string, until time.Time) error {
	err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.affected(ctx, `UPDATE psp_readings SET read_until = $2 WHERE name = $1 AND read_until < $2`, name, ms(until))
		return err
	})
	if err != nil {
		return fmt.Errorf("set read until: %w", err)
	}
	return nil
}

// TransactionByIDForUpdate returns a transaction of any client locked
// until tx ends, or ErrNotFound.
func (tx *Tx) TransactionByIDForUpdate(ctx context.Context, id string) (pix.Transaction, error) {
	return scanTransaction(tx.q.QueryRowContext(ctx, `SELECT `+txColumns+` FROM transactions WHERE id = $1`+tx.d.ForUpdate, id))
}

// PendingPayouts returns those of ids that are payouts still waiting on
// the PSP's word: PENDING, sent or with a send whose outcome is unknown.
// A reading of a PSP's list of sent payouts keeps only these (one query
// for a page of the list rather than one per payout).
func (q *Q) PendingPayouts(ctx context.Context, ids []string) ([]pix.Transaction, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var b strings.Builder
	b.WriteString(`SELECT ` + txColumns + ` FROM transactions WHERE type = 'cashout' AND status = 'PENDING'
		AND send_state IN ('sent', 'unknown') AND id IN `)
	tuples(&b, 1, 1, len(ids))
	out, err := q.list(ctx, b.String(), stringArgs(nil, ids)...)
	if err != nil {
		return nil, fmt.Errorf("pending payouts: %w", err)
	}
	return out, nil
}
