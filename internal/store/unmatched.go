package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
)

// HouseID owns the ledger accounts that belong to no client (house:settlement
// and house:suspense): postings of unmatched receipts are made for it.
const HouseID = "house"

const unmatchedColumns = `id, payment_end_to_end_id, txid, amount, received_at, recorded_at, reason, client_id, transaction_id,
	status, return_id, return_error, returned_at, end_to_end_id, send_state, send_attempts, settle_at`

func scanUnmatched(row scanner) (pix.UnmatchedReceipt, error) {
	var u pix.UnmatchedReceipt
	var client, txn, ret, e2e sql.NullString
	var amount, received, recorded int64
	var returned, settle sql.NullInt64
	err := row.Scan(&u.ID, &u.PaymentEndToEndID, &u.TxID, &amount, &received, &recorded, &u.Reason, &client, &txn,
		&u.Status, &ret, &u.ReturnError, &returned, &e2e, &u.SendState, &u.SendAttempts, &settle)
	if errors.Is(err, sql.ErrNoRows) {
		return pix.UnmatchedReceipt{}, ErrNotFound
	}
	if err != nil {
		return pix.UnmatchedReceipt{}, fmt.Errorf("scan unmatched receipt: %w", err)
	}
	u.Amount, u.ReceivedAt, u.RecordedAt = pix.Amount(amount), fromMS(received), fromMS(recorded)
	u.ClientID, u.TransactionID, u.ReturnID, u.ReturnEndToEndID = client.String, txn.String, ret.String, e2e.String
	u.ReturnedAt, u.SettleAt = fromNullMS(returned), fromNullMS(settle)
	return u, nil
}

// HouseBalances returns the balances of the house's accounts (settlement
// and suspense).
func (q *Q) HouseBalances(ctx context.Context) (ledger.Balances, error) {
	b, err := q.balances(ctx, `SELECT kind, balance FROM accounts WHERE client_id IS NULL`)
	if err != nil {
		return nil, fmt.Errorf("house balances: %w", err)
	}
	return b, nil
}

// InsertUnmatched records u unless a receipt of the same received Pix
// exists; it reports whether it inserted (a Pix reported twice is recorded
// once).
func (tx *Tx) InsertUnmatched(ctx context.Context, u pix.UnmatchedReceipt) (bool, error) {
	n, err := tx.affected(ctx, `INSERT INTO unmatched_receipts (`+unmatchedColumns+`)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17) ON CONFLICT DO NOTHING`,
		u.ID, u.PaymentEndToEndID, u.TxID, int64(u.Amount), ms(u.ReceivedAt), ms(u.RecordedAt), u.Reason,
		nullString(u.ClientID), nullString(u.TransactionID), u.Status, nullString(u.ReturnID), u.ReturnError,
		nullMS(u.ReturnedAt), nullString(u.ReturnEndToEndID), u.SendState, u.SendAttempts, nullMS(u.SettleAt))
	if err != nil {
		return false, fmt.Errorf("insert unmatched receipt: %w", err)
	}
	return n == 1, nil
}

// pix.UnmatchedReceipt returns the unmatched receipt with that id, or ErrNotFound.
func (q *Q) UnmatchedReceipt(ctx context.Context, id string) (pix.UnmatchedReceipt, error) {
	return scanUnmatched(q.q.QueryRowContext(ctx, `SELECT `+unmatchedColumns+` FROM unmatched_receipts WHERE id = $1`, id))
}

// UnmatchedByPayment returns the unmatched receipt of the received Pix
// e2eid, or ErrNotFound.
func (q *Q) UnmatchedByPayment(ctx context.Context, e2eid string) (pix.UnmatchedReceipt, error) {
	return scanUnmatched(q.q.QueryRowContext(ctx, `SELECT `+unmatchedColumns+` FROM unmatched_receipts WHERE payment_end_to_end_id = $1`, e2eid))
}

// UnmatchedForUpdate returns the unmatched receipt with that id locked until
// tx ends, or ErrNotFound.
func (tx *Tx) UnmatchedForUpdate(ctx context.Context, id string) (pix.UnmatchedReceipt, error) {
	return scanUnmatched(tx.q.QueryRowContext(ctx, `SELECT `+unmatchedColumns+` FROM unmatched_receipts WHERE id = $1`+tx.d.ForUpdate, id))
}

// UnmatchedReceipts returns up to limit unmatched receipts, newest first;
// with status, only those in it.
func (q *Q) UnmatchedReceipts(ctx context.Context, status string, limit int) ([]pix.UnmatchedReceipt, error) {
	out, err := selectAll(ctx, q, scanUnmatched, `SELECT `+unmatchedColumns+` FROM unmatched_receipts
		WHERE $1 = '' OR status = $1 ORDER BY recorded_at DESC, id DESC LIMIT $2`, status, limit)
	if err != nil {
		return nil, fmt.Errorf("unmatched receipts: %w", err)
	}
	return out, nil
}

// DueUnmatchedReturns returns up to limit unmatched receipts whose return
// is due (settle_at ≤ now), earliest first, without locking them.
func (q *Q) DueUnmatchedReturns(ctx context.Context, now time.Time, limit int) ([]pix.UnmatchedReceipt, error) {
	out, err := selectAll(ctx, q, scanUnmatched, `SELECT `+unmatchedColumns+` FROM unmatched_receipts
		WHERE settle_at IS NOT NULL AND settle_at <= $1 AND (send_lease IS NULL OR send_lease <= $1)
		ORDER BY settle_at, id LIMIT $2`, ms(now), limit)
	if err != nil {
		return nil, fmt.Errorf("due unmatched returns: %w", err)
	}
	return out, nil
}

// StartUnmatchedReturn moves a HELD receipt to RETURNING with a new return
// id, due at now, and reports whether it did (false: it was not HELD).
func (tx *Tx) StartUnmatchedReturn(ctx context.Context, id, returnID string, now time.Time) (bool, error) {
	n, err := tx.affected(ctx, `UPDATE unmatched_receipts SET status = 'RETURNING', return_id = $2, return_error = '',
		end_to_end_id = NULL, send_state = 'to_send', send_attempts = 0, settle_at = $3 WHERE id = $1 AND status = 'HELD'`,
		id, returnID, ms(now))
	if err != nil {
		return false, fmt.Errorf("start unmatched return: %w", err)
	}
	return n == 1, nil
}

// FinishUnmatchedReturn ends the return of a RETURNING receipt: RETURNED at
// at with the return's e2e (when not ""), or, when failure is not "", back
// to HELD with that reason. It reports whether the receipt was RETURNING.
func (tx *Tx) FinishUnmatchedReturn(ctx context.Context, id string, at time.Time, e2e, failure string) (bool, error) {
	status, returned := pix.UnmatchedReturned, nullMS(at)
	if failure != "" {
		status, returned = pix.UnmatchedHeld, nullMS(time.Time{})
	}
	n, err := tx.affected(ctx, `UPDATE unmatched_receipts SET status = $2, returned_at = $3, return_error = $4,
		end_to_end_id = COALESCE($5, end_to_end_id), send_state = 'done', settle_at = NULL WHERE id = $1 AND status = 'RETURNING'`,
		id, status, returned, failure, nullString(e2e))
	if err != nil {
		return false, fmt.Errorf("finish unmatched return: %w", err)
	}
	return n == 1, nil
}
