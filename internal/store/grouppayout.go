package store

import (
	"context"
	"fmt"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store/batch"
)

// NewPayout is a payout for DB.CreatePayout: its transaction row and the
// posting that reserves its amount and tax, recorded at the row's
// CreatedAt.
type NewPayout struct {
	Transaction pix.Transaction
	Posting     PostingWrite
}

// CreatePayout stores a new payout and posts its reservation in one
// transaction, as Tx.CreateTransaction and Tx.PostAll would: a duplicate
// (same external_id or Idempotency-Key for the client) fails it with
// ErrConflict, a balance it would overdraw with ErrInsufficientFunds, and
// nothing of it is written. Concurrent calls share one transaction (group
// commit, see newPayoutGroup); a group that fails is run again call by
// call, so each call gets its own answer and one refused payout never
// refuses another.
func (db *DB) CreatePayout(ctx context.Context, p NewPayout) error {
	_, err := db.payouts.Do(ctx, p)
	return err
}

// newPayoutGroup groups DB.CreatePayout calls: the payouts received at the
// same moment are written by one multi-row INSERT, their clients' balances
// moved once each by the group's sum (in account-id order, as PostAll
// always does, so groups and settlements never deadlock), and their
// postings and entries recorded by one INSERT each, in one transaction:
// one commit, one WAL flush and, on PostgreSQL, one round trip for the
// group instead of one each. The accounts' CHECK holds for the sum, and
// every reservation only takes from available, so a group that commits
// leaves each payout's reservation valid on its own.
func newPayoutGroup(db *DB) *batch.Batch[NewPayout, struct{}] {
	return batch.New(db.d.GroupPayouts, maxGroup, db.createPayouts)
}

func (db *DB) createPayouts(ctx context.Context, ps []NewPayout) ([]struct{}, error) {
	err := db.Write(ctx, func(tx *Tx) error {
		ts := make([]pix.Transaction, len(ps))
		posts := make([]PostingWrite, len(ps))
		for i, p := range ps {
			ts[i], posts[i] = p.Transaction, p.Posting
			posts[i].At = p.Transaction.CreatedAt
		}
		q, args := insertTransactions(ts, "")
		if err := tx.later(ctx, q, args...); err != nil {
			return fmt.Errorf("insert payouts: %w", err)
		}
		return tx.PostAll(ctx, posts, ps[0].Transaction.CreatedAt)
	})
	if err != nil {
		return nil, fmt.Errorf("create payouts: %w", err)
	}
	return make([]struct{}, len(ps)), nil
}

// GroupSlots is how many grouped writes may be in flight at once on this
// database (1 on SQLite's single writer).
func (db *DB) GroupSlots() int { return max(db.d.GroupPayouts, 1) }
