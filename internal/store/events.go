package store

import (
	"context"
	"fmt"
	"time"
)

// Event is one outbox row: a webhook to deliver, written in the same
// database transaction as the change it reports.
type Event struct {
	ID            string
	ClientID      string
	TransactionID string
	Type          string
	URL           string
	Payload       string // the JSON body, exactly as it will be sent
	CreatedAt     time.Time
	Status        string // pending, delivered, failed
	Attempts      int
	NextAttemptAt time.Time
}

// InsertEvent adds an event to the outbox, due at once.
func (tx *Tx) InsertEvent(ctx context.Context, e Event) error {
	_, err := tx.exec(ctx, `INSERT INTO events (id, client_id, transaction_id, type, url, payload, created_at, next_attempt_at)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`, e.ID, e.ClientID, e.TransactionID, e.Type, e.URL, e.Payload, ms(e.CreatedAt), ms(e.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert event: %w", err)
	}
	return nil
}

// Events returns the events of one transaction, oldest first.
func (q *Q) Events(ctx context.Context, transactionID string) ([]Event, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT id, client_id, transaction_id, type, url, payload, created_at, status, attempts, next_attempt_at
		FROM events WHERE transaction_id = $1 ORDER BY created_at, id`, transactionID)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var created, next int64
		if err := rows.Scan(&e.ID, &e.ClientID, &e.TransactionID, &e.Type, &e.URL, &e.Payload, &created, &e.Status, &e.Attempts, &next); err != nil {
			return nil, fmt.Errorf("events: %w", err)
		}
		e.CreatedAt, e.NextAttemptAt = fromMS(created), fromMS(next)
		out = append(out, e)
	}
	return out, rows.Err()
}
