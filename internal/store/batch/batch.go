// Package batch runs concurrent calls of one kind together: group commit
// for writes, one statement for many reads, or any other work whose cost is
// per run rather than per call. It knows nothing of SQL or of the calls'
// types; the store and its callers supply the run that answers a batch.
package batch

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Batch runs concurrent calls together. A caller that finds a slot free
// starts a flush at once with whatever is queued (alone, at low load);
// calls arriving while every slot is busy are taken together by the next
// flush. Nothing waits for a batch to fill, and a call queued after a run
// began is never answered by that run, so a batched read sees every commit
// that preceded the call.
type Batch[In, Out any] struct {
	slots int // flushes in flight at most
	max   int // calls per flush at most
	// run answers a whole batch, one Out per In in order; if it fails for
	// a batch of several, each call is run alone so that one bad call
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

// flushTimeout bounds one run. A flush does not use any one caller's
// context, since a caller that gives up must not fail the others.
const flushTimeout = 30 * time.Second

// New returns a Batch of at most max calls per run and slots runs at once
// (at least 1); run answers a whole batch, one Out per In in order.
func New[In, Out any](slots, max int, run func(ctx context.Context, ins []In) ([]Out, error)) *Batch[In, Out] {
	return &Batch[In, Out]{slots: slots, max: max, run: run}
}

// Do queues in and waits for its answer.
func (b *Batch[In, Out]) Do(ctx context.Context, in In) (Out, error) {
	c := &call[In, Out]{in: in, done: make(chan result[Out], 1)}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	start := b.inFlight < max(b.slots, 1)
	if start {
		b.inFlight++
	}
	b.mu.Unlock()
	if start {
		go b.flushLoop()
	}
	select {
	case r := <-c.done:
		return r.out, r.err
	case <-ctx.Done():
	}
	// A caller that gives up is dropped if no flush has taken it yet;
	// once one has, its answer is awaited, so that a call never returns
	// while its write may still happen.
	b.mu.Lock()
	for i, q := range b.queue {
		if q == c {
			b.queue = append(b.queue[:i], b.queue[i+1:]...)
			b.mu.Unlock()
			var zero Out
			return zero, fmt.Errorf("grouped call: %w", ctx.Err())
		}
	}
	b.mu.Unlock()
	r := <-c.done
	return r.out, r.err
}

// flushLoop flushes queued calls until the queue is empty.
func (b *Batch[In, Out]) flushLoop() {
	for {
		b.mu.Lock()
		n := min(len(b.queue), b.max)
		if n == 0 {
			b.inFlight--
			b.mu.Unlock()
			return
		}
		taken := make([]*call[In, Out], n)
		copy(taken, b.queue)
		b.queue = append(b.queue[:0], b.queue[n:]...)
		b.mu.Unlock()
		b.flush(taken)
	}
}

// flush runs taken together and answers each call, running each alone
// again if the run failed for several.
func (b *Batch[In, Out]) flush(taken []*call[In, Out]) {
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	ins := make([]In, len(taken))
	for i, c := range taken {
		ins[i] = c.in
	}
	outs, err := b.run(ctx, ins)
	if err == nil && len(outs) != len(ins) {
		err = fmt.Errorf("grouped call: %d answers for %d calls", len(outs), len(ins))
	}
	if err != nil && len(taken) > 1 {
		for _, c := range taken {
			out, err := b.run(ctx, []In{c.in})
			var r result[Out]
			if err == nil && len(out) == 1 {
				r.out = out[0]
			}
			r.err = err
			c.done <- r
		}
		return
	}
	for i, c := range taken {
		var r result[Out]
		if err == nil {
			r.out = outs[i]
		}
		r.err = err
		c.done <- r
	}
}
