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

// Scheduled payouts (docs/payouts.md): the payout's row is stored PENDING
// with send state pix.SendScheduled and no settle_at, and its
// scheduled_payouts row says when its day starts and whether it still
// waits. Only internal/transfer moves it out of that state.

// ScheduledPayout is a payout for a later day: its row (send state
// pix.SendScheduled) and the first instant of its São Paulo date on its
// client's clock.
type ScheduledPayout struct {
	Transaction pix.Transaction
	Date        string
	DueAt       time.Time
}

// ScheduledDue is a scheduled payout whose day has begun.
type ScheduledDue struct {
	TransactionID string
	ClientID      string
	DueAt         time.Time
}

// Scheduled payouts' states (scheduled_payouts.state).
const (
	scheduledWaiting   = "scheduled"
	scheduledStarted   = "started"
	scheduledCancelled = "cancelled"
	scheduledFailed    = "failed"
)

// CreatePayoutRun stores payouts ps (each posting its reservation) and
// scheduled (nothing reserved) in one transaction: a duplicate of any of
// them (external_id or Idempotency-Key) fails it with ErrConflict, a
// reservation the balance cannot hold with ErrInsufficientFunds, and then
// nothing is written. A batch's items are accepted this way, many per
// commit.
func (db *DB) CreatePayoutRun(ctx context.Context, ps []NewPayout, scheduled []ScheduledPayout) error {
	if len(ps) == 0 && len(scheduled) == 0 {
		return nil
	}
	err := db.Write(ctx, func(tx *Tx) error {
		ts := make([]pix.Transaction, 0, len(ps)+len(scheduled))
		posts := make([]PostingWrite, len(ps))
		for i, p := range ps {
			ts = append(ts, p.Transaction)
			posts[i] = p.Posting
			posts[i].At = p.Transaction.CreatedAt
		}
		for _, s := range scheduled {
			ts = append(ts, s.Transaction)
		}
		for start := 0; start < len(ts); start += maxGroup {
			q, args := insertTransactions(ts[start:min(start+maxGroup, len(ts))], "")
			if err := tx.later(ctx, q, args...); err != nil {
				return fmt.Errorf("insert payouts: %w", err)
			}
		}
		for start := 0; start < len(scheduled); start += maxGroup {
			if err := tx.insertScheduled(ctx, scheduled[start:min(start+maxGroup, len(scheduled))]); err != nil {
				return err
			}
		}
		if len(posts) == 0 {
			return nil
		}
		return tx.PostAll(ctx, posts, ps[0].Transaction.CreatedAt)
	})
	if err != nil {
		return fmt.Errorf("create payouts: %w", err)
	}
	return nil
}

// CreateScheduledPayout stores one scheduled payout (CreatePayoutRun).
func (db *DB) CreateScheduledPayout(ctx context.Context, p ScheduledPayout) error {
	return db.CreatePayoutRun(ctx, nil, []ScheduledPayout{p})
}

func (tx *Tx) insertScheduled(ctx context.Context, ss []ScheduledPayout) error {
	var q strings.Builder
	q.WriteString(`INSERT INTO scheduled_payouts (transaction_id, client_id, scheduled_date, due_at, state) VALUES `)
	tuples(&q, 1, len(ss), 5)
	args := make([]any, 0, len(ss)*5)
	for _, s := range ss {
		args = append(args, s.Transaction.ID, s.Transaction.ClientID, s.Date, ms(s.DueAt), scheduledWaiting)
	}
	if err := tx.later(ctx, q.String(), args...); err != nil {
		return fmt.Errorf("insert scheduled payouts: %w", err)
	}
	return nil
}

func scanScheduledDue(row scanner) (ScheduledDue, error) {
	var d ScheduledDue
	var due int64
	if err := row.Scan(&d.TransactionID, &d.ClientID, &due); err != nil {
		return d, fmt.Errorf("scan scheduled payout: %w", err)
	}
	d.DueAt = fromMS(due)
	return d, nil
}

// DueScheduled returns up to limit scheduled payouts still waiting whose
// day began by now, earliest first.
func (q *Q) DueScheduled(ctx context.Context, now time.Time, limit int) ([]ScheduledDue, error) {
	out, err := selectEach(ctx, q, scanScheduledDue, `SELECT transaction_id, client_id, due_at FROM scheduled_payouts
		WHERE state = 'scheduled' AND due_at <= $1 ORDER BY due_at, transaction_id LIMIT $2`, ms(now), limit)
	if err != nil {
		return out, fmt.Errorf("due scheduled payouts: %w", err)
	}
	return out, nil
}

// ClientDueScheduled is DueScheduled for one client's payouts, due at at,
// its clock.
func (q *Q) ClientDueScheduled(ctx context.Context, clientID string, at time.Time, limit int) ([]ScheduledDue, error) {
	out, err := selectEach(ctx, q, scanScheduledDue, `SELECT transaction_id, client_id, due_at FROM scheduled_payouts
		WHERE client_id = $1 AND state = 'scheduled' AND due_at <= $2 ORDER BY due_at, transaction_id LIMIT $3`, clientID, ms(at), limit)
	if err != nil {
		return out, fmt.Errorf("due scheduled payouts of %s: %w", clientID, err)
	}
	return out, nil
}

// ScheduledDueAt returns when the day of the client's scheduled payout id
// starts and whether it still waits; ErrNotFound for a payout that was
// never scheduled (or another client's).
func (q *Q) ScheduledDueAt(ctx context.Context, clientID, id string) (time.Time, bool, error) {
	var due int64
	var state string
	err := q.q.QueryRowContext(ctx, `SELECT due_at, state FROM scheduled_payouts WHERE transaction_id = $1 AND client_id = $2`,
		id, clientID).Scan(&due, &state)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return time.Time{}, false, ErrNotFound
		}
		return time.Time{}, false, fmt.Errorf("scheduled payout %s: %w", id, err)
	}
	return fromMS(due), state == scheduledWaiting, nil
}

// StartScheduled moves scheduled payout id, if it still waits, to be sent:
// send state to_send, due for the sender at at; the caller posts its
// reservation in the same transaction. It reports the row as it now is,
// and false (nothing changed) when the payout no longer waited.
func (tx *Tx) StartScheduled(ctx context.Context, id string, at time.Time) (pix.Transaction, bool, error) {
	n, err := tx.affected(ctx, `UPDATE scheduled_payouts SET state = $2 WHERE transaction_id = $1 AND state = 'scheduled'`, id, scheduledStarted)
	if err != nil || n == 0 {
		return pix.Transaction{}, false, wrapErr("start scheduled payout", err)
	}
	t, err := scanTransaction(tx.q.QueryRowContext(ctx, `UPDATE transactions SET send_state = $2, settle_at = $3
		WHERE id = $1 AND status = 'PENDING' AND send_state = $4 RETURNING `+txColumns, id, pix.SendToSend, ms(at), pix.SendScheduled))
	if err != nil {
		return pix.Transaction{}, false, fmt.Errorf("start scheduled payout %s: %w", id, err)
	}
	return t, true, nil
}

// EndScheduled ends scheduled payout id, if it still waits, without a send:
// cancelled (by its client) or failed (its day began and its balance did
// not hold it). Its row becomes CANCELLED, send state done; nothing was
// reserved, so nothing is released. It reports the row as it now is, and
// false when the payout no longer waited.
func (tx *Tx) EndScheduled(ctx context.Context, id string, failed bool) (pix.Transaction, bool, error) {
	state := scheduledCancelled
	if failed {
		state = scheduledFailed
	}
	n, err := tx.affected(ctx, `UPDATE scheduled_payouts SET state = $2 WHERE transaction_id = $1 AND state = 'scheduled'`, id, state)
	if err != nil || n == 0 {
		return pix.Transaction{}, false, wrapErr("end scheduled payout", err)
	}
	t, err := scanTransaction(tx.q.QueryRowContext(ctx, `UPDATE transactions SET status = 'CANCELLED', send_state = $2, settle_at = NULL
		WHERE id = $1 AND status = 'PENDING' AND send_state = $3 RETURNING `+txColumns, id, pix.SendDone, pix.SendScheduled))
	if err != nil {
		return pix.Transaction{}, false, fmt.Errorf("end scheduled payout %s: %w", id, err)
	}
	return t, true, nil
}

// wrapErr wraps err with what, or is nil for a nil err.
func wrapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
