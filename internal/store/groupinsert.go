package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// groupInserter writes the transactions that DB.InsertTransaction receives
// at the same moment as one multi-row INSERT in one autocommitted statement:
// group commit. Concurrent charges then share a statement, a commit and its
// WAL flush instead of paying for one each, which is most of what a charge
// costs the database. Nothing waits for a batch to fill: a caller that finds
// a flush slot free starts one at once with whatever is queued (alone, at
// low load), and requests arriving while the slots are busy are taken
// together by the next flush. A caller is answered only after the statement
// holding its row has committed.
type groupInserter struct {
	db       *DB
	slots    int // flushes allowed in flight
	mu       sync.Mutex
	queue    []*insertRequest
	inFlight int
}

type insertRequest struct {
	t    Transaction
	done chan insertResult // buffered: a flush never blocks on a caller that left
}

type insertResult struct {
	inserted bool
	err      error
}

// maxGroup bounds a statement's rows: 19 parameters each stays far below
// both databases' limits on bound parameters.
const maxGroup = 64

// flushTimeout bounds one group's statement. A flush does not use any one
// caller's context, since a caller that gives up must not fail the others.
const flushTimeout = 30 * time.Second

func (g *groupInserter) insert(ctx context.Context, t Transaction) (bool, error) {
	req := &insertRequest{t: t, done: make(chan insertResult, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, req)
	start := g.inFlight < g.slots
	if start {
		g.inFlight++
	}
	g.mu.Unlock()
	if start {
		go g.flushLoop()
	}
	select {
	case r := <-req.done:
		return r.inserted, r.err
	case <-ctx.Done():
		// The row may still be written; idempotency makes a retry safe.
		return false, fmt.Errorf("insert transaction: %w", ctx.Err())
	}
}

// flushLoop flushes queued requests until the queue is empty.
func (g *groupInserter) flushLoop() {
	for {
		g.mu.Lock()
		n := min(len(g.queue), maxGroup)
		if n == 0 {
			g.inFlight--
			g.mu.Unlock()
			return
		}
		group := make([]*insertRequest, n)
		copy(group, g.queue)
		g.queue = append(g.queue[:0], g.queue[n:]...)
		g.mu.Unlock()
		g.flush(group)
	}
}

// flush writes one group. If the statement fails, each row is tried on its
// own, so that one bad row cannot fail the rows that came with it.
func (g *groupInserter) flush(group []*insertRequest) {
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	inserted, err := g.insertMany(ctx, group)
	if err != nil && len(group) > 1 {
		for _, r := range group {
			ok, err := g.insertMany(ctx, []*insertRequest{r})
			r.done <- insertResult{inserted: ok[r.t.ID], err: err}
		}
		return
	}
	for _, r := range group {
		r.done <- insertResult{inserted: inserted[r.t.ID], err: err}
	}
}

// insertMany runs one INSERT … ON CONFLICT DO NOTHING RETURNING id for the
// group and returns the ids it inserted. A row whose external_id,
// Idempotency-Key or txid is taken — by an earlier row or by an earlier row
// of the same statement — is skipped, as InsertTransaction promises.
func (g *groupInserter) insertMany(ctx context.Context, group []*insertRequest) (map[string]bool, error) {
	var q strings.Builder
	q.Grow(len(insertTransactionHead) + len(group)*100 + 40)
	q.WriteString(insertTransactionHead)
	args := make([]any, 0, len(group)*txColumnCount)
	for i, r := range group {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteByte('(')
		for c := 0; c < txColumnCount; c++ {
			if c > 0 {
				q.WriteByte(',')
			}
			q.WriteByte('$')
			q.WriteString(strconv.Itoa(len(args) + c + 1))
		}
		q.WriteByte(')')
		args = append(args, transactionArgs(r.t)...)
	}
	q.WriteString(" ON CONFLICT DO NOTHING RETURNING id")
	rows, err := g.db.writer.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("insert transactions: %w", g.db.d.Classify(err))
	}
	defer rows.Close()
	inserted := make(map[string]bool, len(group))
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("insert transactions: %w", err)
		}
		inserted[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("insert transactions: %w", g.db.d.Classify(err))
	}
	return inserted, nil
}
