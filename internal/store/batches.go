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

const batchColumns = `id, client_id, external_id, request_hash, callback_url, state, total, accepted, rejected,
	lease_until, created_at, completed_at`

func scanBatch(row scanner) (pix.Batch, error) {
	var b pix.Batch
	var lease, created int64
	var completed sql.NullInt64
	err := row.Scan(&b.ID, &b.ClientID, &b.ExternalID, &b.RequestHash, &b.CallbackURL, &b.State, &b.Total, &b.Accepted,
		&b.Rejected, &lease, &created, &completed)
	if errors.Is(err, sql.ErrNoRows) {
		return pix.Batch{}, ErrNotFound
	}
	if err != nil {
		return pix.Batch{}, fmt.Errorf("scan batch: %w", err)
	}
	b.LeaseUntil, b.CreatedAt, b.CompletedAt = fromMS(lease), fromMS(created), fromNullMS(completed)
	return b, nil
}

// InsertBatch stores batch b, accepting, unless the client has a batch
// with its external_id already; it reports whether it inserted.
func (db *DB) InsertBatch(ctx context.Context, b pix.Batch) (bool, error) {
	n, err := db.writeAffected(ctx, `INSERT INTO payout_batches (`+batchColumns+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)
		ON CONFLICT DO NOTHING`, b.ID, b.ClientID, b.ExternalID, b.RequestHash, b.CallbackURL, b.State, b.Total, b.Accepted,
		b.Rejected, ms(b.LeaseUntil), ms(b.CreatedAt), nullMS(b.CompletedAt))
	if err != nil {
		return false, fmt.Errorf("insert batch: %w", err)
	}
	return n == 1, nil
}

// writeAffected runs one write statement in a transaction of its own and
// returns how many rows it changed.
func (db *DB) writeAffected(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := db.Write(ctx, func(tx *Tx) error {
		var err error
		n, err = tx.affected(ctx, query, args...)
		return err
	})
	return n, err
}

// Batch returns the client's batch id, or ErrNotFound.
func (q *Q) Batch(ctx context.Context, clientID, id string) (pix.Batch, error) {
	return scanBatch(q.q.QueryRowContext(ctx, `SELECT `+batchColumns+` FROM payout_batches WHERE id = $1 AND client_id = $2`, id, clientID))
}

// BatchByExternalID returns the client's batch of that external_id, or
// ErrNotFound.
func (q *Q) BatchByExternalID(ctx context.Context, clientID, externalID string) (pix.Batch, error) {
	return scanBatch(q.q.QueryRowContext(ctx, `SELECT `+batchColumns+` FROM payout_batches WHERE client_id = $1 AND external_id = $2`,
		clientID, externalID))
}

// TakeBatch gives accepting batch id to a new request until lease, if its
// lease is still was (the request holding it died or gave up); it reports
// whether it did.
func (db *DB) TakeBatch(ctx context.Context, id string, was, lease time.Time) (bool, error) {
	n, err := db.writeAffected(ctx, `UPDATE payout_batches SET lease_until = $3 WHERE id = $1 AND state = 'accepting' AND lease_until = $2`,
		id, ms(was), ms(lease))
	if err != nil {
		return false, fmt.Errorf("take batch: %w", err)
	}
	return n == 1, nil
}

// AcceptBatch records the items of accepting batch b and marks it
// accepted with its counts, in one transaction; ErrConflict when another
// request recorded them first.
func (db *DB) AcceptBatch(ctx context.Context, b pix.Batch, items []pix.BatchItem) error {
	err := db.Write(ctx, func(tx *Tx) error {
		const cols = 7
		for start := 0; start < len(items); start += maxGroup {
			part := items[start:min(start+maxGroup, len(items))]
			var q strings.Builder
			q.WriteString(`INSERT INTO payout_batch_items (batch_id, idx, external_id, transaction_id, accepted, error_code, error_message) VALUES `)
			tuples(&q, 1, len(part), cols)
			args := make([]any, 0, len(part)*cols)
			for _, it := range part {
				args = append(args, b.ID, it.Index, nullString(it.ExternalID), nullString(it.TransactionID), string(it.Accepted),
					nullString(string(it.ErrorCode)), nullString(it.ErrorMessage))
			}
			if err := tx.later(ctx, q.String(), args...); err != nil {
				return fmt.Errorf("insert batch items: %w", err)
			}
		}
		n, err := tx.affected(ctx, `UPDATE payout_batches SET state = 'accepted', accepted = $2, rejected = $3
			WHERE id = $1 AND state = 'accepting'`, b.ID, b.Accepted, b.Rejected)
		if err != nil {
			return fmt.Errorf("accept batch: %w", err)
		}
		if n == 0 {
			return ErrConflict
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("accept batch %s: %w", b.ID, err)
	}
	return nil
}

// BatchItems returns batch id's items in order, each with its payout as it
// now is (rejected items have none).
func (q *Q) BatchItems(ctx context.Context, batchID string) ([]pix.BatchItem, error) {
	items, err := selectAll(ctx, q, func(row scanner) (pix.BatchItem, error) {
		var it pix.BatchItem
		var ext, tid, code, msg sql.NullString
		err := row.Scan(&it.BatchID, &it.Index, &ext, &tid, &it.Accepted, &code, &msg)
		it.ExternalID, it.TransactionID, it.ErrorCode, it.ErrorMessage = ext.String, tid.String, pix.Code(code.String), msg.String
		return it, err
	}, `SELECT batch_id, idx, external_id, transaction_id, accepted, error_code, error_message FROM payout_batch_items
		WHERE batch_id = $1 ORDER BY idx`, batchID)
	if err != nil {
		return nil, fmt.Errorf("batch items: %w", err)
	}
	ids := make([]string, 0, len(items))
	for _, it := range items {
		if it.TransactionID != "" {
			ids = append(ids, it.TransactionID)
		}
	}
	ts, err := q.TransactionsByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range items {
		items[i].Payout = ts[items[i].TransactionID]
	}
	return items, nil
}

// TransactionsByIDs returns the transactions of ids, by id.
func (q *Q) TransactionsByIDs(ctx context.Context, ids []string) (map[string]pix.Transaction, error) {
	return q.transactionsIn(ctx, `id IN `, "", ids)
}

// TransactionsByExternalIDs returns the client's transactions of those
// external_ids, by external_id.
func (q *Q) TransactionsByExternalIDs(ctx context.Context, clientID string, externalIDs []string) (map[string]pix.Transaction, error) {
	out, err := q.transactionsIn(ctx, `client_id = $1 AND external_id IN `, clientID, externalIDs)
	if err != nil {
		return nil, err
	}
	byExt := make(map[string]pix.Transaction, len(out))
	for _, t := range out {
		byExt[t.ExternalID] = t
	}
	return byExt, nil
}

// transactionsIn reads the transactions where is true of keys (in
// chunks), where is a condition ending in "IN ", with $1 the client when
// clientID is set.
func (q *Q) transactionsIn(ctx context.Context, where, clientID string, keys []string) (map[string]pix.Transaction, error) {
	out := make(map[string]pix.Transaction, len(keys))
	const chunk = 500
	for start := 0; start < len(keys); start += chunk {
		part := keys[start:min(start+chunk, len(keys))]
		var b strings.Builder
		b.WriteString(`SELECT ` + txColumns + ` FROM transactions WHERE ` + where)
		var args []any
		first := 1
		if clientID != "" {
			args, first = append(args, clientID), 2
		}
		tuples(&b, first, 1, len(part))
		ts, err := q.list(ctx, b.String(), stringArgs(args, part)...)
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			out[t.ID] = t
		}
	}
	return out, nil
}

// CompletableBatches returns up to limit accepted batches none of whose
// items' payouts is PENDING any more: due for pix.batch.completed.
func (q *Q) CompletableBatches(ctx context.Context, limit int) ([]pix.Batch, error) {
	out, err := selectEach(ctx, q, scanBatch, `SELECT `+batchColumns+` FROM payout_batches b WHERE state = 'accepted'
		AND NOT EXISTS (SELECT 1 FROM payout_batch_items i JOIN transactions t ON t.id = i.transaction_id
			WHERE i.batch_id = b.id AND t.status = 'PENDING')
		ORDER BY created_at LIMIT $1`, limit)
	if err != nil {
		return out, fmt.Errorf("completable batches: %w", err)
	}
	return out, nil
}

// CompleteBatch marks accepted batch id completed at at, and reports
// whether it did (false: another node did first).
func (tx *Tx) CompleteBatch(ctx context.Context, id string, at time.Time) (bool, error) {
	n, err := tx.affected(ctx, `UPDATE payout_batches SET state = 'completed', completed_at = $2 WHERE id = $1 AND state = 'accepted'`,
		id, ms(at))
	if err != nil {
		return false, fmt.Errorf("complete batch: %w", err)
	}
	return n == 1, nil
}
