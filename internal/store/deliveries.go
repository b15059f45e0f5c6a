package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store/batch"
)

const eventColumns = `id, client_id, transaction_id, type, url, payload, created_at, status, attempts, next_attempt_at`

func scanEvent(row scanner) (pix.Event, error) {
	var e pix.Event
	var created, next int64
	err := row.Scan(&e.ID, &e.ClientID, &e.TransactionID, &e.Type, &e.URL, &e.Payload, &created, &e.Status, &e.Attempts, &next)
	if errors.Is(err, sql.ErrNoRows) {
		return pix.Event{}, ErrNotFound
	}
	if err != nil {
		return pix.Event{}, fmt.Errorf("scan event: %w", err)
	}
	e.CreatedAt, e.NextAttemptAt = fromMS(created), fromMS(next)
	return e, nil
}

// ClaimEvents leases up to limit pending events that are due at now and not
// leased by anyone else (or whose lease has run out), for owner until
// leaseUntil, oldest due first. On PostgreSQL concurrent claimers skip each
// other's rows, so two nodes never hold the same event at once. The claim
// writes only the lease columns, which no index holds: on PostgreSQL, with
// the room the events table keeps in its pages (migration 5), that
// update adds no index entry (HOT).
//
// The claim walks the due index in order and stops after limit rows, so it
// costs the same whatever the backlog — but only if the planner picks that
// plan. On PostgreSQL it would, from statistics that say few events are
// pending (a young table, or a quiet one before a receiver goes down),
// rather read every due event and sort them, which under payout load made
// the claim the most expensive statement pixgate ran (1.3–4 ms a call).
// Dialect.ClaimPlan rules that plan out for the claim's transaction.
func (tx *Tx) ClaimEvents(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]pix.Event, error) {
	if tx.d.ClaimPlan != "" {
		if err := tx.later(ctx, tx.d.ClaimPlan); err != nil {
			return nil, fmt.Errorf("claim events: %w", err)
		}
	}
	out, err := selectAll(ctx, &tx.Q, scanEvent, `UPDATE events SET lease_owner = $1, lease_until = $2
		WHERE id IN (SELECT id FROM events WHERE status = 'pending' AND next_attempt_at <= $3 AND lease_until <= $3
			ORDER BY next_attempt_at LIMIT $4`+tx.d.SkipLocked+`)
		RETURNING `+eventColumns, owner, ms(leaseUntil), ms(now), limit)
	if err != nil {
		return nil, fmt.Errorf("claim events: %w", err)
	}
	return out, nil
}

// Finish is a finished delivery attempt and the event's next state: status
// (pending, delivered or failed), attempts and the next attempt time, to be
// recorded for the lease Owner holds.
type Finish struct {
	Owner    string
	Attempt  pix.Attempt
	Status   string
	Attempts int
	Next     time.Time
}

// FinishAttempt records an attempt and the event's next state and releases
// owner's lease. It reports false, changing nothing but the attempt log,
// when owner no longer holds the lease.
func (tx *Tx) FinishAttempt(ctx context.Context, owner string, a pix.Attempt, status string, attempts int, next time.Time) (bool, error) {
	kept, err := tx.finishAttempts(ctx, []Finish{{Owner: owner, Attempt: a, Status: status, Attempts: attempts, Next: next}})
	if err != nil {
		return false, err
	}
	return kept[0], nil
}

// FinishAttempt is Tx.FinishAttempt in a transaction of its own, shared
// with concurrent calls (one transaction and one commit for the group, on
// PostgreSQL one round trip; see package batch). Each call gets its own answer.
func (db *DB) FinishAttempt(ctx context.Context, f Finish) (bool, error) {
	return db.finishes.Do(ctx, f)
}

func newFinishGroup(db *DB) *batch.Batch[Finish, bool] {
	return batch.New(db.d.GroupInserts, maxGroup, func(ctx context.Context, fs []Finish) ([]bool, error) {
		var kept []bool
		err := db.Write(ctx, func(tx *Tx) error {
			var err error
			kept, err = tx.finishAttempts(ctx, fs)
			return err
		})
		return kept, err
	})
}

// finishAttempts records attempts (one multi-row insert) and the next state
// of their events (one UPDATE … FROM VALUES … RETURNING, which PostgreSQL
// and SQLite both run: the VALUES columns are column1…column5 on both), and
// reports for each whether its owner still held the lease. The insert goes
// out with the update (Tx.later): one round trip.
func (tx *Tx) finishAttempts(ctx context.Context, fs []Finish) ([]bool, error) {
	var q strings.Builder
	q.WriteString(`INSERT INTO delivery_attempts (id, event_id, at, status_code, latency_ms, error, response) VALUES `)
	tuples(&q, 1, len(fs), 7)
	args := make([]any, 0, 7*len(fs))
	for _, f := range fs {
		a := f.Attempt
		code := sql.NullInt64{Int64: int64(a.StatusCode), Valid: a.StatusCode != 0}
		args = append(args, a.ID, a.EventID, ms(a.At), code, a.Latency.Milliseconds(), nullString(a.Error), a.Response)
	}
	if err := tx.later(ctx, q.String(), args...); err != nil {
		return nil, fmt.Errorf("record attempts: %w", err)
	}

	q.Reset()
	q.WriteString(`UPDATE events SET status = v.column3, attempts = v.column4, next_attempt_at = v.column5,
		lease_owner = '', lease_until = 0 FROM (VALUES `)
	castTuples(&q, 1, len(fs), []string{"TEXT", "TEXT", "TEXT", "BIGINT", "BIGINT"})
	args = make([]any, 0, 5*len(fs)) // not args[:0]: the queued insert still holds those
	for _, f := range fs {
		args = append(args, f.Attempt.EventID, f.Owner, f.Status, int64(f.Attempts), ms(f.Next))
	}
	q.WriteString(`) AS v WHERE events.id = v.column1 AND events.lease_owner = v.column2 RETURNING events.id`)
	ids, err := tx.ids(ctx, q.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("finish attempts: %w", err)
	}
	done := make(map[string]bool, len(ids))
	for _, id := range ids {
		done[id] = true
	}
	kept := make([]bool, len(fs))
	for i, f := range fs {
		kept[i] = done[f.Attempt.EventID]
	}
	return kept, nil
}

// ReleaseEvent gives up owner's lease on an event without an attempt.
func (tx *Tx) ReleaseEvent(ctx context.Context, owner, id string) error {
	_, err := tx.exec(ctx, `UPDATE events SET lease_owner = '', lease_until = 0 WHERE id = $1 AND lease_owner = $2`, id, owner)
	if err != nil {
		return fmt.Errorf("release event: %w", err)
	}
	return nil
}

// Deferral puts off an event that was leased but not attempted: it is due
// again at Next, without an attempt counted.
type Deferral struct {
	ID   string
	Next time.Time
}

// DeferEvents gives up owner's leases on events it claimed but could not
// attempt (their destination had no free slot) and makes them due again at
// their Next: one statement for the lot. An event owner no longer holds is
// left alone. Unlike ReleaseEvent, the event leaves the front of the due
// order, so events for other destinations are claimed before it.
func (tx *Tx) DeferEvents(ctx context.Context, owner string, ds []Deferral) error {
	if len(ds) == 0 {
		return nil
	}
	var q strings.Builder
	q.WriteString(`UPDATE events SET next_attempt_at = v.column2, lease_owner = '', lease_until = 0 FROM (VALUES `)
	castTuples(&q, 2, len(ds), []string{"TEXT", "BIGINT"})
	q.WriteString(`) AS v WHERE events.id = v.column1 AND events.lease_owner = $1 AND events.status = 'pending'`)
	args := make([]any, 0, 1+2*len(ds))
	args = append(args, owner)
	for _, d := range ds {
		args = append(args, d.ID, ms(d.Next))
	}
	if _, err := tx.exec(ctx, q.String(), args...); err != nil {
		return fmt.Errorf("defer events: %w", err)
	}
	return nil
}

// RetryEvent makes the client's event due again at now (whatever its
// status). Returns ErrNotFound if the client has no such event.
func (tx *Tx) RetryEvent(ctx context.Context, clientID, id string, now time.Time) error {
	return tx.updateOne(ctx, `UPDATE events SET status = 'pending', next_attempt_at = $3 WHERE id = $1 AND client_id = $2`,
		id, clientID, ms(now))
}

// Event returns one event, or ErrNotFound.
func (q *Q) Event(ctx context.Context, id string) (pix.Event, error) {
	return scanEvent(q.q.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM events WHERE id = $1`, id))
}

// Attempts returns the attempts of the given events, oldest first, by event id.
func (q *Q) Attempts(ctx context.Context, transactionID string) (map[string][]pix.Attempt, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT a.id, a.event_id, a.at, a.status_code, a.latency_ms, a.error, a.response
		FROM delivery_attempts a JOIN events e ON e.id = a.event_id WHERE e.transaction_id = $1 ORDER BY a.at, a.id`, transactionID)
	if err != nil {
		return nil, fmt.Errorf("attempts: %w", err)
	}
	defer rows.Close()
	out := map[string][]pix.Attempt{}
	for rows.Next() {
		var a pix.Attempt
		var at, latency int64
		var code sql.NullInt64
		var errText sql.NullString
		if err := rows.Scan(&a.ID, &a.EventID, &at, &code, &latency, &errText, &a.Response); err != nil {
			return nil, fmt.Errorf("attempts: %w", err)
		}
		a.At, a.StatusCode, a.Latency, a.Error = fromMS(at), int(code.Int64), time.Duration(latency)*time.Millisecond, errText.String
		out[a.EventID] = append(out[a.EventID], a)
	}
	return out, rows.Err()
}

// PendingEvents counts the events of the given clients not yet delivered
// or given up on.
func (q *Q) PendingEvents(ctx context.Context, clientIDs []string) (int64, error) {
	if len(clientIDs) == 0 {
		return 0, nil
	}
	var b strings.Builder
	b.WriteString(`SELECT COUNT(*) FROM events WHERE status = 'pending' AND client_id IN `)
	tuples(&b, 1, 1, len(clientIDs))
	var n int64
	if err := q.q.QueryRowContext(ctx, b.String(), stringArgs(nil, clientIDs)...).Scan(&n); err != nil {
		return 0, fmt.Errorf("pending events: %w", err)
	}
	return n, nil
}

// OutboxLag returns how many events wait for delivery and the age of the oldest.
func (q *Q) OutboxLag(ctx context.Context, now time.Time) (int64, time.Duration, error) {
	var n int64
	var oldest sql.NullInt64
	if err := q.q.QueryRowContext(ctx, `SELECT COUNT(*), MIN(created_at) FROM events WHERE status = 'pending'`).Scan(&n, &oldest); err != nil {
		return 0, 0, fmt.Errorf("outbox lag: %w", err)
	}
	if !oldest.Valid {
		return n, 0, nil
	}
	return n, now.Sub(fromMS(oldest.Int64)), nil
}

// StatusCounts returns the number of transactions by type and status.
func (q *Q) StatusCounts(ctx context.Context) (map[string]map[string]int64, error) {
	out, err := q.countByTypeStatus(ctx, `SELECT type, status, COUNT(*) FROM transactions GROUP BY type, status`)
	if err != nil {
		return nil, fmt.Errorf("status counts: %w", err)
	}
	return out, nil
}

// countByTypeStatus runs a query of (type, status, count) rows into a map.
func (q *Q) countByTypeStatus(ctx context.Context, query string, args ...any) (map[string]map[string]int64, error) {
	type row struct {
		typ, status string
		n           int64
	}
	rows, err := selectAll(ctx, q, func(s scanner) (r row, err error) { return r, s.Scan(&r.typ, &r.status, &r.n) }, query, args...)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]int64{}
	for _, r := range rows {
		if out[r.typ] == nil {
			out[r.typ] = map[string]int64{}
		}
		out[r.typ][r.status] = r.n
	}
	return out, nil
}
