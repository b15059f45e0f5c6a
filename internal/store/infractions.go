package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// ChargeByEndToEndID returns the charge (of any client) that the received
// Pix e2eid credited, or ErrNotFound.
func (q *Q) ChargeByEndToEndID(ctx context.Context, e2eid string) (pix.Transaction, error) {
	return scanTransaction(q.q.QueryRowContext(ctx, `SELECT `+txColumns+` FROM transactions
		WHERE end_to_end_id = $1 AND type = 'cashin'`, e2eid))
}

// OldestOpenInfraction returns when the oldest OPEN dispute that a PSP's
// infraction opened was opened, and false when there is none: the readings
// of infractions look back that far, since a PSP lists an infraction by
// when it was created, not by when it last changed.
func (q *Q) OldestOpenInfraction(ctx context.Context) (time.Time, bool, error) {
	var at sql.NullInt64
	if err := q.q.QueryRowContext(ctx, `SELECT MIN(opened_at) FROM disputes WHERE status = 'OPEN' AND psp_id <> ''`).Scan(&at); err != nil {
		return time.Time{}, false, fmt.Errorf("oldest open infraction: %w", err)
	}
	if !at.Valid {
		return time.Time{}, false, nil
	}
	return fromMS(at.Int64), true, nil
}

// AdoptInfraction records the PSP's infraction pspID on dispute id, a
// return recorded before its infraction was read, unless it names one
// already; it reports whether it did.
func (tx *Tx) AdoptInfraction(ctx context.Context, id, pspID string) (bool, error) {
	n, err := tx.affected(ctx, `UPDATE disputes SET psp_id = $2 WHERE id = $1 AND psp_id = ''`, id, pspID)
	if err != nil {
		return false, fmt.Errorf("adopt infraction: %w", err)
	}
	return n == 1, nil
}
