package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
)

// pipeline is a PostgreSQL transaction whose writes travel together. A
// payout's reservation (transaction insert, two balance updates, posting,
// entries) is five statements that need no answer one by one; sent as one
// batch with no BEGIN or COMMIT they form one implicit transaction and cost a
// single round trip instead of seven. Reads cannot wait, so the first read
// opens the transaction explicitly (BEGIN goes out with whatever writes are
// queued) and the commit then sends the remaining writes with COMMIT.
//
// Any failure is sticky: once a batch fails, every later statement of the
// transaction fails too, so a caller that ignored an error can never commit
// part of its work.
type pipeline struct {
	conn  *sql.Conn
	d     *Dialect
	begun bool   // BEGIN has been sent
	queue []Stmt // writes not sent yet
	err   error  // the first failure; the transaction can only roll back
}

var errPipelineFailed = errors.New("store: transaction failed earlier")

// add queues one write.
func (p *pipeline) add(query string, args []any) error {
	if err := p.stuck(); err != nil {
		return err
	}
	p.queue = append(p.queue, Stmt{SQL: query, Args: args})
	return nil
}

// flush opens the transaction if needed and sends the queued writes.
func (p *pipeline) flush(ctx context.Context) error {
	if p.begun && len(p.queue) == 0 {
		return p.stuck()
	}
	_, err := p.send(ctx, Stmt{})
	return err
}

// send opens the transaction if needed and sends the queued writes followed
// by last (unless last is empty), in one round trip, returning the number of
// rows last changed.
func (p *pipeline) send(ctx context.Context, last Stmt) (int64, error) {
	if err := p.stuck(); err != nil {
		return 0, err
	}
	stmts := make([]Stmt, 0, len(p.queue)+2)
	if !p.begun {
		stmts = append(stmts, Stmt{SQL: "BEGIN"})
		p.begun = true
	}
	stmts = append(stmts, p.queue...)
	if last.SQL != "" {
		stmts = append(stmts, last)
	}
	p.queue = p.queue[:0]
	n, err := p.d.Pipeline(ctx, p.conn, stmts)
	if err != nil {
		p.err = p.d.Classify(err)
		return 0, p.err
	}
	return n, nil
}

// stuck returns an error once the transaction has failed.
func (p *pipeline) stuck() error {
	if p.err != nil {
		return errPipelineFailed
	}
	return nil
}

// commit sends what is queued and commits: one round trip in every case.
func (p *pipeline) commit(ctx context.Context) error {
	if p.err != nil {
		return p.err
	}
	stmts := p.queue
	if p.begun {
		stmts = append(stmts, Stmt{SQL: "COMMIT"})
	}
	p.queue = nil
	if len(stmts) == 0 {
		return nil
	}
	if _, err := p.d.Pipeline(ctx, p.conn, stmts); err != nil {
		p.err = p.d.Classify(err)
		return p.err
	}
	p.begun = false
	return nil
}

// rollback ends an open transaction; a connection that cannot roll back is
// discarded rather than returned to the pool mid-transaction.
func (p *pipeline) rollback() {
	p.queue = nil
	if !p.begun {
		return // an implicit transaction rolls itself back
	}
	// Not the caller's context: a cancelled request must still leave a
	// clean connection behind.
	if _, err := p.conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		_ = p.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	p.begun = false
}

// The querier methods send queued writes first, so that reads see them.
// A read goes through database/sql after them: a second round trip.

// ExecContext sends the statement together with BEGIN (if the transaction
// has not begun) and the queued writes: one round trip.
func (p *pipeline) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	n, err := p.send(ctx, Stmt{SQL: query, Args: args})
	if err != nil {
		return nil, err
	}
	return rowsAffected(n), nil
}

// rowsAffected is the sql.Result of a pipelined statement.
type rowsAffected int64

func (n rowsAffected) RowsAffected() (int64, error) { return int64(n), nil }

func (rowsAffected) LastInsertId() (int64, error) {
	return 0, errors.New("store: LastInsertId is not supported")
}

func (p *pipeline) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := p.flush(ctx); err != nil {
		return nil, err
	}
	return p.conn.QueryContext(ctx, query, args...)
}

func (p *pipeline) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if err := p.flush(ctx); err != nil {
		// *sql.Row cannot carry an error of ours: a cancelled context
		// makes its Scan fail, and write returns p.err.
		dead, cancel := context.WithCancel(ctx)
		cancel()
		return p.conn.QueryRowContext(dead, query, args...)
	}
	return p.conn.QueryRowContext(ctx, query, args...)
}

// writePipelined is write for a pipelining dialect.
func (db *DB) writePipelined(ctx context.Context, fn func(tx *Tx) error) (err error) {
	conn, err := db.writer.Conn(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer conn.Close()
	p := &pipeline{conn: conn, d: db.d}
	tx := &Tx{Q: Q{q: p, d: db.d}, pipe: p}
	if err = fn(tx); err != nil {
		if p.err != nil {
			err = p.err // the statement that failed, not what it made fail later
		}
		p.rollback()
		return err
	}
	if err = p.commit(ctx); err != nil {
		p.rollback()
		return fmt.Errorf("commit: %w", err)
	}
	db.committed(tx)
	return nil
}
