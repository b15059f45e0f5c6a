package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
)

// pipeline is a PostgreSQL transaction whose statements travel together. A
// payout's reservation (transaction insert, two balance updates, posting,
// entries) is five statements that need no answer one by one; sent as one
// batch with no BEGIN or COMMIT they form one implicit transaction and cost a
// single round trip instead of seven. A statement whose answer is needed
// (a read, or a write whose row count matters) goes out at once, together
// with BEGIN if the transaction has not begun and with the queued writes:
// one round trip; the commit then sends the remaining writes with COMMIT.
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

// send opens the transaction if needed and sends the queued writes followed
// by last (unless last is empty), in one round trip. It returns the number
// of rows last changed or, with query set, the rows it returned.
func (p *pipeline) send(ctx context.Context, last Stmt, query bool) (int64, Rows, error) {
	if err := p.stuck(); err != nil {
		return 0, nil, err
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
	n, rows, err := p.d.Pipeline(ctx, p.conn, stmts, query)
	if err != nil {
		p.err = p.d.Classify(err)
		return 0, nil, p.err
	}
	return n, rows, nil
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
	if _, _, err := p.d.Pipeline(ctx, p.conn, stmts, false); err != nil {
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

// ExecContext sends the statement together with BEGIN (if the transaction
// has not begun) and the queued writes: one round trip.
func (p *pipeline) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	n, _, err := p.send(ctx, Stmt{SQL: query, Args: args}, false)
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

// QueryContext sends the query with BEGIN (if the transaction has not
// begun) and the queued writes, which it therefore sees: one round trip.
// The rows are read in full before it returns.
func (p *pipeline) QueryContext(ctx context.Context, query string, args ...any) (Rows, error) {
	_, rows, err := p.send(ctx, Stmt{SQL: query, Args: args}, true)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// QueryRowContext is QueryContext for the first row.
func (p *pipeline) QueryRowContext(ctx context.Context, query string, args ...any) scanner {
	rows, err := p.QueryContext(ctx, query, args...)
	return &firstRow{rows: rows, err: err}
}

// firstRow is the first row of a pipelined query, as *sql.Row has it:
// sql.ErrNoRows when there is none.
type firstRow struct {
	rows Rows
	err  error
}

func (r *firstRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	return r.rows.Scan(dest...)
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
	defer tx.closeAnnounced()
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
	db.committed(ctx, tx)
	return nil
}
