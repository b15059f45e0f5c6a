// Package store owns persistence: the schema and its embedded migrations,
// and the one SQL implementation shared by SQLite and PostgreSQL — its
// queries, its transactions (pipelined on PostgreSQL, pipeline.go) and the
// grouped statements that give concurrent calls one statement or one commit
// (group*.go, and the grouped reads and finishes beside their queries).
// Collecting concurrent calls into runs is store/batch's, a group-commit
// engine that knows no SQL. The driver packages (store/sqlite, store/postgres) open
// connections and supply the Dialect; everything else about storage lives
// here and is exercised by store/storetest against both.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store/batch"
)

// Errors returned by store methods. Callers test them with errors.Is.
var (
	// ErrNotFound: no row matched.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: a unique constraint refused the write.
	ErrConflict = errors.New("store: unique conflict")
	// ErrInsufficientFunds: a posting would take a non-negative account below zero.
	ErrInsufficientFunds = errors.New("store: insufficient funds")
)

// Dialect holds what differs between the databases. Everything else is one
// SQL text.
type Dialect struct {
	// Name is "sqlite" or "postgres"; migrations/<Name>/ holds the
	// dialect's own migrations (Migrations).
	Name string
	// Goose is the migration dialect.
	Goose goose.Dialect
	// ForUpdate is appended to SELECTs that lock the rows they read
	// (" FOR UPDATE" on PostgreSQL; SQLite's single writer needs nothing).
	ForUpdate string
	// SkipLocked is appended to SELECTs that claim due work.
	SkipLocked string
	// Clients, when set, carries client changes between processes, so
	// that DB.WatchClients can keep authenticated clients in memory.
	Clients ClientChanges
	// ClaimPlan, when set, runs first in the transaction of a claim of due
	// webhook events (Tx.ClaimEvents) to keep the planner on an ordered
	// scan of the due index that stops after the claim's limit.
	ClaimPlan string
	// Classify maps driver errors for unique and check violations to
	// ErrConflict and ErrInsufficientFunds; other errors pass unchanged.
	Classify func(error) error
	// Retryable reports errors after which the whole transaction may be
	// run again (serialization failures, deadlocks, busy database).
	Retryable func(error) bool
	// Unreachable reports the driver's errors that say the database cannot
	// be reached or cannot store anything (DB.Unavailable), beyond the
	// network errors every dialect shares.
	Unreachable func(error) bool
	// Locker serializes migrations across processes (PostgreSQL), or nil.
	Locker func() (lock.SessionLocker, error)
	// Pipeline, when set, sends stmts on conn in one round trip and returns
	// the number of rows the last one changed — or, with query set, the
	// rows the last one returned, read in full — or the first error
	// (PostgreSQL: a pgx batch, one Sync). Outside an
	// explicit transaction the statements form one implicit transaction:
	// all of them commit, or none. With Pipeline set, Write defers a
	// transaction's writes (Tx.later) and sends them with its next read or
	// with its COMMIT; without it (SQLite, in-process) every statement runs
	// at once.
	Pipeline func(ctx context.Context, conn *sql.Conn, stmts []Stmt, query bool) (int64, Rows, error)
	// GroupInserts is how many groups of DB.InsertTransaction inserts, and
	// of DB.FinishAttempt transactions, may be in flight at once (at least
	// 1). Fewer means larger groups: 1 on both dialects (SQLite has a
	// single writer; on PostgreSQL one measured best, see the postgres
	// dialect).
	GroupInserts int
	// GroupPayouts is how many groups of DB.CreatePayout transactions may
	// be in flight at once (at least 1): 1 on SQLite, 2 on PostgreSQL,
	// where a group held up by another transaction's account rows then no
	// longer holds up every payout behind it (see the postgres dialect).
	GroupPayouts int
	// GroupReads is how many grouped client reads (DB.Client) may be in
	// flight at once; 0 reads each client on its own (SQLite: in-process
	// reads are cheap and the reader pool runs them in parallel).
	GroupReads int
}

// Stmt is one SQL statement with its arguments.
type Stmt struct {
	SQL  string
	Args []any
}

// DB is a pixgate database. Reads go to the reader pool; Write runs a
// function in one transaction on the writer pool. For SQLite the writer pool
// holds a single connection; for PostgreSQL both pools are the same.
type DB struct {
	Q
	writer *sql.DB
	reader *sql.DB
	d      *Dialect
	// inserts groups concurrent InsertTransaction calls into one statement;
	// clients groups concurrent Client reads.
	inserts *batch.Batch[pix.Transaction, bool]
	// payouts groups concurrent CreatePayout calls into one transaction.
	payouts *batch.Batch[NewPayout, struct{}]
	clients *batch.Batch[string, clientRead]
	// finishes groups concurrent FinishAttempt calls into one transaction.
	finishes *batch.Batch[Finish, bool]
	// writes groups concurrent WriteGrouped calls into one transaction.
	writes *batch.Batch[func(*Tx) error, struct{}]
	// steps groups concurrent StepSendGrouped calls into one statement.
	steps *batch.Batch[SendStep, bool]
	// cache holds authenticated clients while WatchClients listens
	// (dialects with Clients only; nil otherwise).
	cache *clientCache
	// OnPosting, when set, is called after each commit once per ledger
	// posting the transaction wrote (for metrics).
	OnPosting func(kind string)
}

// New wraps opened pools. Drivers call it; applications call the driver's Open.
func New(writer, reader *sql.DB, d *Dialect) *DB {
	db := &DB{Q: Q{q: sqlQuerier{reader}, d: d}, writer: writer, reader: reader, d: d}
	db.inserts = newInsertGroup(db)
	db.payouts = newPayoutGroup(db)
	db.clients = newClientGroup(db)
	db.finishes = newFinishGroup(db)
	db.writes = newWriteGroup(db)
	db.steps = newStepGroup(db)
	if d.Clients != nil {
		db.cache = &clientCache{m: map[string]cachedClient{}}
	}
	return db
}

// Dialect returns the database dialect name ("sqlite" or "postgres").
func (db *DB) Dialect() string { return db.d.Name }

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.writer.PingContext(ctx); err != nil {
		return fmt.Errorf("ping database: %w", err)
	}
	return nil
}

// Close closes both pools.
func (db *DB) Close() error {
	err := db.writer.Close()
	if db.reader != db.writer {
		err = errors.Join(err, db.reader.Close())
	}
	return err
}

// Write runs fn in one read-write transaction and commits if fn returns nil.
// A transaction that fails for a retryable reason (deadlock, serialization)
// is run again, up to a few times; fn must therefore only touch the database.
func (db *DB) Write(ctx context.Context, fn func(tx *Tx) error) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		err = db.write(ctx, fn)
		if err == nil || db.d.Retryable == nil || !db.d.Retryable(err) {
			return err
		}
		time.Sleep(time.Duration(attempt+1) * 5 * time.Millisecond)
	}
	return err
}

func (db *DB) write(ctx context.Context, fn func(tx *Tx) error) (err error) {
	if db.d.Pipeline != nil {
		return db.writePipelined(ctx, fn)
	}
	sqlTx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = sqlTx.Rollback()
		}
	}()
	tx := &Tx{Q: Q{q: sqlQuerier{sqlTx}, d: db.d}}
	defer tx.closeAnnounced()
	if err = fn(tx); err != nil {
		return err
	}
	if err = sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	db.committed(ctx, tx)
	return nil
}

// committed reports a committed transaction's postings and waits until
// the clients it changed are dropped from every process's memory.
func (db *DB) committed(ctx context.Context, tx *Tx) {
	db.awaitAnnounced(ctx, tx)
	if db.OnPosting != nil {
		for _, kind := range tx.posted {
			db.OnPosting(kind)
		}
	}
}

// Tx is one read-write transaction. Its read methods see its own writes.
type Tx struct {
	Q
	posted   []string     // kinds of the postings written, reported after commit
	pipe     *pipeline    // set when the dialect pipelines: writes wait in its queue
	announce Announcement // set once the transaction changed a client (Dialect.Clients)
	// deferred, when set, collects the postings of a grouped write, applied
	// together at its end (WriteGrouped).
	deferred *[]PostingWrite
}

// later runs a write whose result the caller does not need. On a pipelining
// dialect it waits in the queue and goes out with the transaction's next
// read or its COMMIT, in order; otherwise it runs at once. Its error, if
// any, may therefore come from a later call or from the commit. The queue
// keeps args as given: a caller must not reuse the slice afterwards.
func (tx *Tx) later(ctx context.Context, query string, args ...any) error {
	if tx.pipe != nil {
		return tx.pipe.add(query, args)
	}
	_, err := tx.exec(ctx, query, args...)
	return err
}

// Rows is a result set being read: *sql.Rows, or the rows a pipelined
// batch returned (Dialect.Pipeline).
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// querier is how Q reaches the database: database/sql (sqlQuerier) or a
// pipelined PostgreSQL transaction.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) scanner
}

// sqlQuerier adapts *sql.DB and *sql.Tx to querier.
type sqlQuerier struct {
	q interface {
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	}
}

func (s sqlQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return s.q.ExecContext(ctx, query, args...)
}

func (s sqlQuerier) QueryContext(ctx context.Context, query string, args ...any) (Rows, error) {
	rows, err := s.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return rows, nil
}

func (s sqlQuerier) QueryRowContext(ctx context.Context, query string, args ...any) scanner {
	return s.q.QueryRowContext(ctx, query, args...)
}

// Q holds the read methods shared by DB (reader pool) and Tx.
type Q struct {
	q querier
	d *Dialect
}

func (q *Q) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := q.q.ExecContext(ctx, query, args...)
	if err != nil {
		return nil, q.d.Classify(err)
	}
	return res, nil
}

// ms converts a time to the stored Unix milliseconds.
func ms(t time.Time) int64 { return t.UnixMilli() }

// fromMS converts stored Unix milliseconds to a UTC time.
func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// nullMS converts an optional time (zero = NULL) for storage.
func nullMS(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

// fromNullMS converts an optional stored time; NULL becomes the zero time.
func fromNullMS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMS(v.Int64)
}

// nullAmount converts an optional amount (0 = NULL) for storage.
func nullAmount(a pix.Amount) sql.NullInt64 {
	return sql.NullInt64{Int64: int64(a), Valid: a != 0}
}

func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}

// RawExec runs one statement inside tx with error classification. It exists
// for tests that prove the database's own constraints.
func RawExec(ctx context.Context, tx *Tx, query string, args ...any) error {
	_, err := tx.exec(ctx, query, args...)
	return err
}

// scanner is one result row: *sql.Row, *sql.Rows or a pipelined one.
type scanner interface{ Scan(dest ...any) error }

// selectAll runs query and scans every row with scan.
func selectAll[T any](ctx context.Context, q *Q, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// selectEach is selectAll for the background jobs: a row that cannot be
// scanned is left out and its error joined to the others', so that the
// rows that can be read are still worked on.
func selectEach[T any](ctx context.Context, q *Q, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	var errs []error
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, errors.Join(errs...)
}

// affected runs one statement and returns how many rows it changed.
func (q *Q) affected(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
