package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// AvailableMovement is one posting that moved a client's available balance,
// as PostAll recorded it.
type AvailableMovement struct {
	At            time.Time
	TransactionID string
	Kind          string     // the posting's kind, e.g. "cashout.reserved"
	Delta         pix.Amount // what it added to the available balance (signed)
	Fee           pix.Amount // the part of Delta that is a fee (signed)
	Balance       pix.Amount // the available balance after it
	Seq           int64      // its number among the account's movements, from 1
}

// StatementBounds are the balances around a window of a client's movements.
type StatementBounds struct {
	Opening, Closing pix.Amount
	// LastSeq is the sequence number of the last movement before the
	// window's end (0 if none): reading the movements up to it gives the
	// same set however many are written meanwhile.
	LastSeq int64
}

// lastMovementBefore returns the balance and sequence number of client's
// last available-balance movement before t numbered at most maxSeq, or
// zeros if none.
func (q *Q) lastMovementBefore(ctx context.Context, clientID string, t time.Time, maxSeq int64) (pix.Amount, int64, error) {
	var bal, seq int64
	err := q.q.QueryRowContext(ctx, `SELECT available_balance, available_seq FROM postings
		WHERE client_id = $1 AND available_seq IS NOT NULL AND created_at < $2 AND available_seq <= $3
		ORDER BY created_at DESC, available_seq DESC LIMIT 1`, clientID, msCeil(t), maxSeq).Scan(&bal, &seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("last movement: %w", err)
	}
	return pix.Amount(bal), seq, nil
}

// StatementBounds returns the available balance of client at from
// (opening) and at to (closing), and the last movement before to. The
// closing is read first and the opening among the movements it counts, so
// a movement committed between the two reads (one dated before a window
// that lies ahead) is in neither.
func (q *Q) StatementBounds(ctx context.Context, clientID string, from, to time.Time) (StatementBounds, error) {
	closing, last, err := q.lastMovementBefore(ctx, clientID, to, math.MaxInt64)
	if err != nil {
		return StatementBounds{}, fmt.Errorf("statement closing: %w", err)
	}
	opening, _, err := q.lastMovementBefore(ctx, clientID, from, last)
	if err != nil {
		return StatementBounds{}, fmt.Errorf("statement opening: %w", err)
	}
	return StatementBounds{Opening: opening, Closing: closing, LastSeq: last}, nil
}

// StatementMovements calls yield with each movement of client's available
// balance from from (inclusive) to to (exclusive) whose sequence number is
// at most lastSeq, in the order they were applied, reading them as a
// stream: memory does not grow with their number. It stops at the first
// error yield returns and returns it.
func (q *Q) StatementMovements(ctx context.Context, clientID string, from, to time.Time, lastSeq int64, yield func(AvailableMovement) error) error {
	rows, err := q.q.QueryContext(ctx, `SELECT created_at, transaction_id, kind, available_delta, available_fee, available_balance, available_seq
		FROM postings WHERE client_id = $1 AND available_seq IS NOT NULL AND created_at >= $2 AND created_at < $3 AND available_seq <= $4
		ORDER BY created_at, available_seq`, clientID, msCeil(from), msCeil(to), lastSeq)
	if err != nil {
		return fmt.Errorf("statement movements: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var m AvailableMovement
		var at, delta, fee, bal int64
		if err := rows.Scan(&at, &m.TransactionID, &m.Kind, &delta, &fee, &bal, &m.Seq); err != nil {
			return fmt.Errorf("statement movements: %w", err)
		}
		m.At, m.Delta, m.Fee, m.Balance = fromMS(at), pix.Amount(delta), pix.Amount(fee), pix.Amount(bal)
		if err := yield(m); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("statement movements: %w", err)
	}
	return nil
}

// msCeil is t in Unix milliseconds rounded up: a stored time (whole
// milliseconds) is at or after t exactly when it is at or after msCeil(t).
func msCeil(t time.Time) int64 {
	m := t.UnixMilli()
	if t.Sub(time.UnixMilli(m)) > 0 {
		m++
	}
	return m
}
