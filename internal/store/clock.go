package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// ClientClock is a client whose clock runs ahead of the real time (a
// sandbox client that advanced it), and by how much.
type ClientClock struct {
	ClientID string
	Offset   time.Duration
}

// AdvanceClock moves client id's clock forward by by, unless its offset
// would then pass max, and returns the new offset; ok is false (and
// nothing changes) when it would. Returns ErrNotFound. The change is
// announced as every change of a client is, so that every node reads the
// new offset with the client.
func (tx *Tx) AdvanceClock(ctx context.Context, id string, by, max time.Duration) (offset time.Duration, ok bool, err error) {
	var v int64
	err = tx.q.QueryRowContext(ctx, `UPDATE clients SET clock_offset_ms = clock_offset_ms + $2
		WHERE id = $1 AND clock_offset_ms + $2 <= $3 RETURNING clock_offset_ms`, id, by.Milliseconds(), max.Milliseconds()).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := tx.Client(ctx, id); err != nil {
			return 0, false, err
		}
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("advance clock of %s: %w", id, err)
	}
	if err := tx.clientChanged(ctx, id); err != nil {
		return 0, false, err
	}
	return time.Duration(v) * time.Millisecond, true, nil
}

// ClientClocks lists the clients whose clock runs ahead of the real time.
// Only sandbox clients ever have one, so in production the list is empty
// (and the callers do not ask).
func (q *Q) ClientClocks(ctx context.Context) ([]ClientClock, error) {
	out, err := selectAll(ctx, q, func(row scanner) (ClientClock, error) {
		var c ClientClock
		var v int64
		err := row.Scan(&c.ClientID, &v)
		c.Offset = time.Duration(v) * time.Millisecond
		return c, err
	}, `SELECT id, clock_offset_ms FROM clients WHERE clock_offset_ms <> 0 ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("client clocks: %w", err)
	}
	return out, nil
}

// ClientExpiredCharges is ExpiredCharges for one client's charges: those
// whose expires_at ≤ now, now being that client's clock.
func (q *Q) ClientExpiredCharges(ctx context.Context, clientID string, now time.Time, limit int) ([]pix.Transaction, error) {
	out, err := q.list(ctx, `SELECT `+txColumns+` FROM transactions
		WHERE client_id = $1 AND status = 'PENDING' AND type = 'cashin' AND expires_at <= $2 ORDER BY expires_at LIMIT $3`,
		clientID, ms(now), limit)
	if err != nil {
		return nil, fmt.Errorf("expired charges of %s: %w", clientID, err)
	}
	return out, nil
}

// ClientDueSettlements is DueSettlements for one client's transactions:
// due at at, that client's clock; a send lease (a node's hold, on the real
// clock) must have ended by now.
func (q *Q) ClientDueSettlements(ctx context.Context, clientID string, at, now time.Time, limit int) ([]pix.Transaction, error) {
	out, err := q.list(ctx, `SELECT `+txColumns+` FROM transactions WHERE client_id = $1 AND settle_at IS NOT NULL
		AND settle_at <= $2 AND (send_lease IS NULL OR send_lease <= $4) ORDER BY settle_at LIMIT $3`,
		clientID, ms(at), limit, ms(now))
	if err != nil {
		return nil, fmt.Errorf("due settlements of %s: %w", clientID, err)
	}
	return out, nil
}

// ClientDueRefundRows is DueRefundRows for one client's refunds, due at
// at on that client's clock, their send lease ended by now (real clock).
func (q *Q) ClientDueRefundRows(ctx context.Context, clientID string, at, now time.Time, limit int) ([]pix.Refund, error) {
	out, err := selectAll(ctx, q, scanRefund, `SELECT `+refundColumns+` FROM refunds
		WHERE client_id = $1 AND settle_at IS NOT NULL AND settle_at <= $2 AND (send_lease IS NULL OR send_lease <= $4)
		ORDER BY settle_at, created_at, id LIMIT $3`, clientID, ms(at), limit, ms(now))
	if err != nil {
		return nil, fmt.Errorf("due refunds of %s: %w", clientID, err)
	}
	return out, nil
}

// ClientDueRecurrences is DueRecurrences for one client's recurrences,
// until being a date on that client's clock.
func (q *Q) ClientDueRecurrences(ctx context.Context, clientID string, until pix.Date, limit int) ([]pix.Recurrence, error) {
	out, err := selectAll(ctx, q, scanRecurrence, `SELECT `+recurrenceColumns+` FROM recurrences
		WHERE client_id = $1 AND status = 'APPROVED' AND next_due <> '' AND next_due <= $2 ORDER BY next_due, id LIMIT $3`,
		clientID, dateColumn(until), limit)
	if err != nil {
		return nil, fmt.Errorf("due recurrences of %s: %w", clientID, err)
	}
	return out, nil
}

// ClientWaitingRecurrences is WaitingRecurrences for one client's
// recurrences, before being a time on that client's clock.
func (q *Q) ClientWaitingRecurrences(ctx context.Context, clientID string, before time.Time, limit int) ([]pix.Recurrence, error) {
	out, err := selectAll(ctx, q, scanRecurrence, `SELECT `+recurrenceColumns+` FROM recurrences
		WHERE client_id = $1 AND status = 'CREATED' AND created_at < $2 ORDER BY created_at, id LIMIT $3`,
		clientID, ms(before), limit)
	if err != nil {
		return nil, fmt.Errorf("waiting recurrences of %s: %w", clientID, err)
	}
	return out, nil
}

// ReadingDueNow makes the next reading of the list name due at once (see
// ClaimReading), for whichever node looks next: a client's clock that
// moved may have made its work due.
func (tx *Tx) ReadingDueNow(ctx context.Context, name string) error {
	if _, err := tx.affected(ctx, `UPDATE psp_readings SET next_at = 0 WHERE name = $1`, name); err != nil {
		return fmt.Errorf("reading %s due now: %w", name, err)
	}
	return nil
}
