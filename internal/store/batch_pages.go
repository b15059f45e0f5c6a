package store

import (
	"context"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// BatchFilter selects a page of batches for the panel.
type BatchFilter struct {
	ClientID string // "" for every client
	State    string // pix.BatchAccepted, pix.BatchCompleted, or ""
	Cursor   string
	Limit    int
}

// BatchHistory returns a page of batches, newest first, and the next
// page's cursor ("" at the end); ErrBadCursor for a cursor it did not
// issue.
func (q *Q) BatchHistory(ctx context.Context, f BatchFilter) ([]pix.Batch, string, error) {
	rows, next, err := keyPage(ctx, q, keyset[pix.Batch]{table: "payout_batches", columns: batchColumns, scan: scanBatch,
		key: func(b pix.Batch) (time.Time, string) { return b.CreatedAt, b.ID }},
		[]filter{{"client_id", f.ClientID}, {"state", f.State}}, f.Cursor, f.Limit)
	if err != nil {
		return nil, "", fmt.Errorf("batch history: %w", err)
	}
	return rows, next, nil
}

// ScheduledRow is a scheduled payout as the panel lists it.
type ScheduledRow struct {
	TransactionID string
	ClientID      string
	Date          string
	DueAt         time.Time
	// State is "scheduled" (waiting), "started", "cancelled" or "failed".
	State string
}

// ScheduledFilter selects a page of scheduled payouts for the panel.
type ScheduledFilter struct {
	ClientID string // "" for every client
	State    string // one of ScheduledStates, or ""
	Cursor   string
	Limit    int
}

// ScheduledStates are the states a scheduled payout's row goes through.
func ScheduledStates() []string {
	return []string{scheduledWaiting, scheduledStarted, scheduledCancelled, scheduledFailed}
}

// ScheduledHistory returns a page of scheduled payouts, latest day first,
// and the next page's cursor ("" at the end); ErrBadCursor for a cursor it
// did not issue.
func (q *Q) ScheduledHistory(ctx context.Context, f ScheduledFilter) ([]ScheduledRow, string, error) {
	scan := func(row scanner) (ScheduledRow, error) {
		var r ScheduledRow
		var due int64
		err := row.Scan(&r.TransactionID, &r.ClientID, &r.Date, &due, &r.State)
		r.DueAt = fromMS(due)
		return r, err
	}
	rows, next, err := keyPage(ctx, q, keyset[ScheduledRow]{table: "scheduled_payouts", at: "due_at", id: "transaction_id",
		columns: "transaction_id, client_id, scheduled_date, due_at, state", scan: scan,
		key: func(r ScheduledRow) (time.Time, string) { return r.DueAt, r.TransactionID }},
		[]filter{{"client_id", f.ClientID}, {"state", f.State}}, f.Cursor, f.Limit)
	if err != nil {
		return nil, "", fmt.Errorf("scheduled payouts: %w", err)
	}
	return rows, next, nil
}
