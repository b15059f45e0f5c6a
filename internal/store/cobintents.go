package store

import (
	"context"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// Kinds of cob_intents rows.
const (
	intentCob  = "cob"
	intentCobV = "cobv"
)

// InsertCobIntent records, committed before it returns, that the cob
// it.TxID is about to be created at the PSP for client it.ClientID. The
// intents of charges created at the same moment share a commit
// (WriteGrouped).
func (db *DB) InsertCobIntent(ctx context.Context, it pix.CobIntent) error {
	kind := intentCob
	if it.Due {
		kind = intentCobV
	}
	err := db.WriteGrouped(ctx, func(tx *Tx) error {
		_, err := tx.exec(ctx, `INSERT INTO cob_intents (txid, client_id, created_at, kind) VALUES ($1, $2, $3, $4)`,
			it.TxID, it.ClientID, ms(it.CreatedAt), kind)
		return err
	})
	if err != nil {
		return fmt.Errorf("insert cob intent: %w", err)
	}
	return nil
}

// DeleteCobIntent removes the intent of cob txid (its charge is stored, or
// its cob is withdrawn) and reports whether it was there; deletions of the
// same moment share a commit (WriteGrouped).
func (db *DB) DeleteCobIntent(ctx context.Context, txid string) (bool, error) {
	var n int64
	err := db.WriteGrouped(ctx, func(tx *Tx) error {
		var err error
		n, err = tx.affected(ctx, `DELETE FROM cob_intents WHERE txid = $1`, txid)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("delete cob intent: %w", err)
	}
	return n == 1, nil
}

// StaleCobIntents returns up to limit intents created before before, oldest
// first.
func (q *Q) StaleCobIntents(ctx context.Context, before time.Time, limit int) ([]pix.CobIntent, error) {
	out, err := selectAll(ctx, q, func(row scanner) (pix.CobIntent, error) {
		var c pix.CobIntent
		var at int64
		var kind string
		err := row.Scan(&c.TxID, &c.ClientID, &at, &kind)
		c.CreatedAt, c.Due = fromMS(at), kind == intentCobV
		return c, err
	}, `SELECT txid, client_id, created_at, kind FROM cob_intents WHERE created_at < $1 ORDER BY created_at LIMIT $2`, ms(before), limit)
	if err != nil {
		return nil, fmt.Errorf("stale cob intents: %w", err)
	}
	return out, nil
}
