// Package postgres opens a pixgate database on PostgreSQL through pgx's
// database/sql driver. Balance rows are locked by the UPDATE that changes
// them, due work is claimed with FOR UPDATE SKIP LOCKED, and migrations
// serialize on an advisory lock so several nodes may start at once.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/pixgate/pixgate/internal/store"
)

var dialect = &store.Dialect{
	Name:       "postgres",
	Goose:      goose.DialectPostgres,
	ForUpdate:  " FOR UPDATE",
	SkipLocked: " FOR UPDATE SKIP LOCKED",
	// For this transaction only: no bitmap scan of every due event followed
	// by a sort, which the planner picks whenever its statistics say few
	// events are pending, and which costs as much as the backlog is long.
	ClaimPlan: `SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true)`,
	Classify: func(err error) error {
		var e *pgconn.PgError
		if errors.As(err, &e) {
			switch e.Code {
			case "23505":
				return fmt.Errorf("%w: %s", store.ErrConflict, e.ConstraintName)
			case "23514":
				return fmt.Errorf("%w: %s", store.ErrInsufficientFunds, e.ConstraintName)
			}
		}
		return err
	},
	Retryable: func(err error) bool {
		var e *pgconn.PgError
		return errors.As(err, &e) && (e.Code == "40001" || e.Code == "40P01")
	},
	// The server unreachable, shutting down or out of disk; a connection
	// it dropped (pgx reports it closed, or the stream cut short).
	Unreachable: func(err error) bool {
		var e *pgconn.PgError
		if errors.As(err, &e) {
			switch {
			case strings.HasPrefix(e.Code, "08"), // connection exception
				e.Code == "57P01", e.Code == "57P02", e.Code == "57P03", // admin, crash shutdown; cannot connect now
				e.Code == "53100", e.Code == "53300", e.Code == "58030": // disk full, too many connections, I/O error
				return true
			}
			return false
		}
		var ce *pgconn.ConnectError
		return errors.As(err, &ce) || errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.ErrUnexpectedEOF)
	},
	Locker:   func() (lock.SessionLocker, error) { return advisoryLocker{}, nil },
	Pipeline: pipeline,
	// One group in flight: calls that arrive meanwhile all go out together
	// in the next statement, so groups are larger and each call costs less
	// CPU (docs/decisions.md).
	GroupInserts: 1,
	// Two payout groups (DB.CreatePayout) in flight: with one, a group that
	// waits (for a settlement's account rows or for the CPU) holds up every
	// payout behind it (docs/decisions.md). Both groups lock account rows
	// in id order, so balances never deadlock them; only two groups
	// carrying the same two duplicate payouts in opposite orders could wait
	// on each other's unique-index entries, which PostgreSQL breaks after
	// deadlock_timeout, and the failed group is run again payout by payout
	// like any other.
	GroupPayouts: 2,
	// Authentication reads of concurrent requests share a statement, one
	// at a time: reads flush nothing, and larger groups cost less CPU per
	// call (docs/decisions.md).
	GroupReads: 1,
}

// pipeline sends stmts as one pgx batch on conn's pgx connection: one
// write, one Sync, one round trip. Outside an explicit transaction the
// server runs them as one implicit transaction, so either all commit or an
// error rolls all of them back. It returns the number of rows the last
// statement changed or, with query set, the rows it returned (read in full
// here, scanned later), or the first statement's error.
func pipeline(ctx context.Context, conn *sql.Conn, stmts []store.Stmt, query bool) (int64, store.Rows, error) {
	var (
		affected int64
		result   *batchRows
	)
	err := conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("pipeline: unexpected driver connection %T", dc)
		}
		c := sc.Conn()
		b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(stmts))}
		for _, s := range stmts {
			b.Queue(s.SQL, s.Args...)
		}
		res := c.SendBatch(ctx, b)
		var first error
		keep := func(err error) {
			if err != nil && first == nil {
				first = err
			}
		}
		n := len(stmts)
		if query {
			n--
		}
		for range n {
			tag, err := res.Exec()
			keep(err)
			affected = tag.RowsAffected()
		}
		if query {
			rows, err := res.Query()
			if err == nil {
				result = &batchRows{typeMap: c.TypeMap(), fields: slices.Clone(rows.FieldDescriptions())}
				for rows.Next() {
					raw := rows.RawValues()
					row := make([][]byte, len(raw))
					for i, v := range raw {
						if v != nil {
							row[i] = slices.Clone(v)
						}
					}
					result.rows = append(result.rows, row)
				}
				rows.Close()
				err = rows.Err()
			}
			keep(err)
		}
		keep(res.Close())
		return first
	})
	if err != nil {
		return 0, nil, err
	}
	if result == nil {
		return affected, nil, nil
	}
	return affected, result, nil
}

// batchRows are the rows a pipelined query returned, read off the wire in
// full and decoded on Scan with the connection's type map. The connection
// stays reserved to the transaction (database/sql's *sql.Conn) while they
// are scanned.
type batchRows struct {
	typeMap *pgtype.Map
	fields  []pgconn.FieldDescription
	rows    [][][]byte
	next    int
}

func (r *batchRows) Next() bool {
	r.next++
	return r.next <= len(r.rows)
}

func (r *batchRows) Scan(dest ...any) error {
	if r.next < 1 || r.next > len(r.rows) {
		return errors.New("pipeline: Scan without a current row")
	}
	return pgx.ScanRow(r.typeMap, r.fields, r.rows[r.next-1], dest...)
}

func (r *batchRows) Err() error   { return nil }
func (r *batchRows) Close() error { return nil }

// Open connects to the PostgreSQL database at url (postgres://…). It does
// not migrate; call Migrate.
func Open(ctx context.Context, url string, maxConns int) (*store.DB, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse PostgreSQL URL: %w", errors.New("invalid connection string"))
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["synchronous_commit"] = "on"
	cfg.RuntimeParams["timezone"] = "UTC"
	db := stdlib.OpenDB(*cfg)
	if maxConns <= 0 {
		maxConns = 16
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	d := *dialect
	d.Clients = &clientChanges{cfg: cfg.Copy()}
	return store.New(db, db, &d), nil
}

// migrationLockID is the advisory lock key migrations serialize on.
const migrationLockID = 0x70697867617465 // "pixgate"

// advisoryLocker serializes migrations with a blocking session advisory
// lock, so a node that loses the race starts the moment the winner is done
// (goose's own locker polls every few seconds).
type advisoryLocker struct{}

// SessionLock waits for the migration lock on conn.
func (advisoryLocker) SessionLock(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", int64(migrationLockID)); err != nil {
		return fmt.Errorf("take migration lock: %w", err)
	}
	return nil
}

// SessionUnlock releases the migration lock on conn.
func (advisoryLocker) SessionUnlock(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_unlock($1)", int64(migrationLockID)); err != nil {
		return fmt.Errorf("release migration lock: %w", err)
	}
	return nil
}
