package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/pixgate/pixgate/internal/pix"
)

// InsertEvent adds an event to the outbox, due at once. Like Post, it waits
// for the transaction's next read or commit on PostgreSQL (Tx.later).
func (tx *Tx) InsertEvent(ctx context.Context, e pix.Event) error {
	return tx.InsertEvents(ctx, []pix.Event{e})
}

// InsertEvents is InsertEvent for several events, in one statement.
func (tx *Tx) InsertEvents(ctx context.Context, es []pix.Event) error {
	if len(es) == 0 {
		return nil
	}
	var q strings.Builder
	q.WriteString(`INSERT INTO events (id, client_id, transaction_id, type, url, payload, created_at, next_attempt_at, lease_owner, lease_until) VALUES `)
	tuples(&q, 1, len(es), 10)
	args := make([]any, 0, 10*len(es))
	for _, e := range es {
		var until int64
		if !e.LeaseUntil.IsZero() {
			until = ms(e.LeaseUntil)
		}
		args = append(args, e.ID, e.ClientID, e.TransactionID, e.Type, e.URL, e.Payload, ms(e.CreatedAt), ms(e.CreatedAt), e.LeaseOwner, until)
	}
	if err := tx.later(ctx, q.String(), args...); err != nil {
		return fmt.Errorf("insert events: %w", err)
	}
	return nil
}

// Events returns the events of one transaction, oldest first.
func (q *Q) Events(ctx context.Context, transactionID string) ([]pix.Event, error) {
	out, err := selectAll(ctx, q, scanEvent, `SELECT `+eventColumns+` FROM events WHERE transaction_id = $1 ORDER BY created_at, id`, transactionID)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	return out, nil
}
