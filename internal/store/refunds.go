package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/pixgate/pixgate/internal/pix"
)

const refundColumns = `id, client_id, transaction_id, idempotency_key, request_hash, status, amount, reason, created_at, settled_at, settle_at,
	end_to_end_id, send_state, send_attempts`

func scanRefund(row scanner) (pix.Refund, error) {
	var r pix.Refund
	var idem, e2e sql.NullString
	var amount, created int64
	var settled, settle sql.NullInt64
	err := row.Scan(&r.ID, &r.ClientID, &r.TransactionID, &idem, &r.RequestHash, &r.Status, &amount, &r.Reason, &created, &settled, &settle,
		&e2e, &r.SendState, &r.SendAttempts)
	if errors.Is(err, sql.ErrNoRows) {
		return pix.Refund{}, ErrNotFound
	}
	if err != nil {
		return pix.Refund{}, fmt.Errorf("scan refund: %w", err)
	}
	r.IdempotencyKey, r.Amount, r.CreatedAt, r.EndToEndID = idem.String, pix.Amount(amount), fromMS(created), e2e.String
	r.SettledAt, r.SettleAt = fromNullMS(settled), fromNullMS(settle)
	return r, nil
}

// InsertRefund stores a refund unless the client already used its
// idempotency key; it reports whether it inserted.
func (tx *Tx) InsertRefund(ctx context.Context, r pix.Refund) (bool, error) {
	n, err := tx.affected(ctx, `INSERT INTO refunds (`+refundColumns+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14) ON CONFLICT DO NOTHING`,
		r.ID, r.ClientID, r.TransactionID, nullString(r.IdempotencyKey), r.RequestHash, r.Status, int64(r.Amount), r.Reason,
		ms(r.CreatedAt), nullMS(r.SettledAt), nullMS(r.SettleAt), nullString(r.EndToEndID), r.SendState, r.SendAttempts)
	if err != nil {
		return false, fmt.Errorf("insert refund: %w", err)
	}
	return n == 1, nil
}

// RefundByIdempotencyKey returns the client's refund created with key, or ErrNotFound.
func (q *Q) RefundByIdempotencyKey(ctx context.Context, clientID, key string) (pix.Refund, error) {
	return scanRefund(q.q.QueryRowContext(ctx, `SELECT `+refundColumns+` FROM refunds WHERE client_id = $1 AND idempotency_key = $2`, clientID, key))
}

// Refund returns the client's refund with the given id, or ErrNotFound.
func (q *Q) Refund(ctx context.Context, clientID, id string) (pix.Refund, error) {
	return scanRefund(q.q.QueryRowContext(ctx, `SELECT `+refundColumns+` FROM refunds WHERE id = $1 AND client_id = $2`, id, clientID))
}

// Refunds returns the refunds of one charge, oldest first.
func (q *Q) Refunds(ctx context.Context, transactionID string) ([]pix.Refund, error) {
	out, err := selectAll(ctx, q, scanRefund, `SELECT `+refundColumns+` FROM refunds WHERE transaction_id = $1 ORDER BY created_at, id`, transactionID)
	if err != nil {
		return nil, fmt.Errorf("refunds: %w", err)
	}
	return out, nil
}

// AddRefundPending changes a charge's held refund amount by delta (positive
// when a refund is created, negative when it settles) and, when settled is
// non-zero, adds it to refunded_amount. The table's CHECK keeps
// refunded_amount + refund_pending ≤ amount: a refund beyond the charge
// returns ErrInsufficientFunds.
func (tx *Tx) AddRefundPending(ctx context.Context, chargeID string, delta, settled pix.Amount) error {
	return tx.updateOne(ctx, `UPDATE transactions SET refund_pending = refund_pending + $2, refunded_amount = refunded_amount + $3 WHERE id = $1`,
		chargeID, int64(delta), int64(settled))
}

// AddMEDReturned adds returned to what MED returns took of charge
// chargeID.
func (tx *Tx) AddMEDReturned(ctx context.Context, chargeID string, returned pix.Amount) error {
	return tx.updateOne(ctx, `UPDATE transactions SET med_returned = med_returned + $2 WHERE id = $1`, chargeID, int64(returned))
}

// SetStatus sets a transaction's status unconditionally (used where the
// caller holds the row lock and has checked the transition).
func (tx *Tx) SetStatus(ctx context.Context, id string, status pix.TxStatus) error {
	return tx.updateOne(ctx, `UPDATE transactions SET status = $2 WHERE id = $1`, id, status)
}
