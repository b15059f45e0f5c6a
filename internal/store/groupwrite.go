package store

import (
	"context"
	"fmt"

	"github.com/pixgate/pixgate/internal/store/batch"
)

// WriteGrouped runs fn in a read-write transaction, as Write does, but
// shared with the WriteGrouped calls made at the same moment (group
// commit): one commit, and on SQLite one WAL flush, for many small
// transactions such as the steps of transfers at a PSP. The calls of a
// group run one after another in the shared transaction; if any fails,
// or the commit does, each is run again in a transaction of its own, so a
// caller only ever gets its own fn's error. fn may therefore run more
// than once and, as for Write, must only touch the database.
//
// The postings of a group (Tx.Post, Tx.PostAll) are applied together
// after its last fn, by one PostAll: its account rows are then locked in
// account-id order, as every transaction locks them, so a group never
// deadlocks on them with another. An fn must therefore not read the
// balances it posts to.
func (db *DB) WriteGrouped(ctx context.Context, fn func(tx *Tx) error) error {
	_, err := db.writes.Do(ctx, fn)
	return err
}

// newWriteGroup groups WriteGrouped calls, as many groups in flight at
// once as there are for payouts' creation.
func newWriteGroup(db *DB) *batch.Batch[func(*Tx) error, struct{}] {
	return batch.New(db.d.GroupPayouts, maxGroup, db.writeAll)
}

// writeAll runs fns one after another in one transaction and then applies
// the postings they deferred with one PostAll.
func (db *DB) writeAll(ctx context.Context, fns []func(*Tx) error) ([]struct{}, error) {
	err := db.Write(ctx, func(tx *Tx) error {
		var posts []PostingWrite
		tx.deferred = &posts
		for _, fn := range fns {
			if err := fn(tx); err != nil {
				return err
			}
		}
		tx.deferred = nil
		if len(posts) == 0 {
			return nil
		}
		return tx.PostAll(ctx, posts, posts[0].At)
	})
	if err != nil {
		if len(fns) > 1 {
			return nil, fmt.Errorf("grouped write: %w", err)
		}
		return nil, err
	}
	return make([]struct{}, len(fns)), nil
}
