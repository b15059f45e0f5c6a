package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store/batch"
)

// maxGroup bounds a grouped statement's rows: 19 parameters each stays far
// below both databases' limits on bound parameters.
const maxGroup = 64

// newInsertGroup groups DB.InsertTransaction calls: the transactions
// received at the same moment are written by one multi-row INSERT in one
// autocommitted statement (group commit), so concurrent charges share a
// statement, a commit and its WAL flush instead of paying for one each,
// which is most of what a charge costs the database. A caller is answered
// only after the statement holding its row has committed.
func newInsertGroup(db *DB) *batch.Batch[pix.Transaction, bool] {
	return batch.New(db.d.GroupInserts, maxGroup, db.insertMany)
}

// insertMany runs one INSERT … ON CONFLICT DO NOTHING RETURNING id for ts and
// reports, for each, whether it was inserted. A row whose external_id,
// Idempotency-Key or txid is taken — by an earlier row or by an earlier row
// of the same statement — is skipped, as InsertTransaction promises.
func (db *DB) insertMany(ctx context.Context, ts []pix.Transaction) ([]bool, error) {
	q, args := insertTransactions(ts, " ON CONFLICT DO NOTHING RETURNING id")
	rows, err := db.writer.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("insert transactions: %w", db.d.Classify(err))
	}
	defer rows.Close()
	inserted := make(map[string]bool, len(ts))
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("insert transactions: %w", err)
		}
		inserted[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("insert transactions: %w", db.d.Classify(err))
	}
	out := make([]bool, len(ts))
	for i, t := range ts {
		out[i] = inserted[t.ID]
	}
	return out, nil
}

// insertTransactions returns one INSERT of every row of ts, followed by
// suffix, and its arguments.
func insertTransactions(ts []pix.Transaction, suffix string) (string, []any) {
	var q strings.Builder
	q.Grow(len(insertTransactionHead) + len(ts)*100 + len(suffix))
	q.WriteString(insertTransactionHead)
	tuples(&q, 1, len(ts), txColumnCount)
	q.WriteString(suffix)
	args := make([]any, 0, len(ts)*txColumnCount)
	for _, t := range ts {
		args = append(args, transactionArgs(t)...)
	}
	return q.String(), args
}
