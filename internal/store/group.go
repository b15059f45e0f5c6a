package store

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// group runs concurrent calls of one kind together: group commit for
// writes, one statement for many reads. A caller that finds a slot free
// starts a flush at once with whatever is queued (alone, at low load);
// calls arriving while every slot is busy are taken together by the next
// flush. Nothing waits for a group to fill, and a call queued after a
// statement went out is never answered by that statement, so a grouped
// read sees every commit that preceded the call.
type group[In, Out any] struct {
	slots int // flushes in flight at most
	max   int // calls per flush at most
	// run answers a whole group, one Out per In in order; if it fails for
	// a group of several, each call is run alone so that one bad call
	// cannot fail the others.
	run func(ctx context.Context, ins []In) ([]Out, error)

	mu       sync.Mutex
	queue    []*call[In, Out]
	inFlight int
}

type call[In, Out any] struct {
	in   In
	done chan result[Out] // buffered: a flush never blocks on a caller that left
}

type result[Out any] struct {
	out Out
	err error
}

// flushTimeout bounds one group's statement. A flush does not use any one
// caller's context, since a caller that gives up must not fail the others.
const flushTimeout = 30 * time.Second

// do queues in and waits for its answer.
func (g *group[In, Out]) do(ctx context.Context, in In) (Out, error) {
	c := &call[In, Out]{in: in, done: make(chan result[Out], 1)}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	start := g.inFlight < max(g.slots, 1)
	if start {
		g.inFlight++
	}
	g.mu.Unlock()
	if start {
		go g.flushLoop()
	}
	select {
	case r := <-c.done:
		return r.out, r.err
	case <-ctx.Done():
	}
	// A caller that gives up is dropped if no flush has taken it yet;
	// once one has, its answer is awaited, so that a call never returns
	// while its write may still happen.
	g.mu.Lock()
	for i, q := range g.queue {
		if q == c {
			g.queue = append(g.queue[:i], g.queue[i+1:]...)
			g.mu.Unlock()
			var zero Out
			return zero, fmt.Errorf("grouped call: %w", ctx.Err())
		}
	}
	g.mu.Unlock()
	r := <-c.done
	return r.out, r.err
}

// flushLoop flushes queued calls until the queue is empty.
func (g *group[In, Out]) flushLoop() {
	for {
		g.mu.Lock()
		n := min(len(g.queue), g.max)
		if n == 0 {
			g.inFlight--
			g.mu.Unlock()
			return
		}
		batch := make([]*call[In, Out], n)
		copy(batch, g.queue)
		g.queue = append(g.queue[:0], g.queue[n:]...)
		g.mu.Unlock()
		g.flush(batch)
	}
}

func (g *group[In, Out]) flush(batch []*call[In, Out]) {
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	ins := make([]In, len(batch))
	for i, c := range batch {
		ins[i] = c.in
	}
	outs, err := g.run(ctx, ins)
	if err == nil && len(outs) != len(ins) {
		err = fmt.Errorf("grouped call: %d answers for %d calls", len(outs), len(ins))
	}
	if err != nil && len(batch) > 1 {
		for _, c := range batch {
			out, err := g.run(ctx, []In{c.in})
			var r result[Out]
			if err == nil && len(out) == 1 {
				r.out = out[0]
			}
			r.err = err
			c.done <- r
		}
		return
	}
	for i, c := range batch {
		var r result[Out]
		if err == nil {
			r.out = outs[i]
		}
		r.err = err
		c.done <- r
	}
}

// Batch groups concurrent calls of one kind into one run, as the store's
// own grouped writes do (group commit), for work that is decided above
// the store: a caller's call is answered by a run that began after it,
// and a run that fails is run again call by call.
type Batch[In, Out any] struct {
	g *group[In, Out]
}

// NewBatch returns a Batch of at most max calls per run and slots runs at
// once; run answers a whole batch, one Out per In in order.
func NewBatch[In, Out any](slots, max int, run func(ctx context.Context, ins []In) ([]Out, error)) *Batch[In, Out] {
	return &Batch[In, Out]{g: &group[In, Out]{slots: slots, max: max, run: run}}
}

// Do queues in and waits for its answer.
func (b *Batch[In, Out]) Do(ctx context.Context, in In) (Out, error) { return b.g.do(ctx, in) }

// GroupSlots is how many grouped writes may be in flight at once on this
// database (1 on SQLite's single writer).
func (db *DB) GroupSlots() int { return max(db.d.GroupPayouts, 1) }
