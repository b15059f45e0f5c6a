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

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
	Locker:   func() (lock.SessionLocker, error) { return advisoryLocker{}, nil },
	Pipeline: pipeline,
	// Enough groups in flight to keep several connections busy, few
	// enough that concurrent charges still share statements.
	GroupInserts: 3,
}

// pipeline sends stmts as one pgx batch on conn's pgx connection: one
// write, one Sync, one round trip. Outside an explicit transaction the
// server runs them as one implicit transaction, so either all commit or an
// error rolls all of them back. It returns the number of rows the last
// statement changed, or the first statement's error.
func pipeline(ctx context.Context, conn *sql.Conn, stmts []store.Stmt) (int64, error) {
	var last int64
	err := conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("pipeline: unexpected driver connection %T", dc)
		}
		b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(stmts))}
		for _, s := range stmts {
			b.Queue(s.SQL, s.Args...)
		}
		res := c.Conn().SendBatch(ctx, b)
		var first error
		for range stmts {
			tag, err := res.Exec()
			if err != nil && first == nil {
				first = err
			}
			last = tag.RowsAffected()
		}
		if err := res.Close(); err != nil && first == nil {
			first = err
		}
		return first
	})
	return last, err
}

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
	return store.New(db, db, dialect), nil
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
