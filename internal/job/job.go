// Package job runs the background work of `pixgate serve`, on every node,
// until its context ends: periodic tasks (Task: expiring unpaid charges,
// the readings of the PSP's lists, the sweep of orphan cobs, recurrences'
// calendars), polled every Interval and backed off while the database is
// out of reach (Backoff), and long-running loops (Loop: the sender of
// payouts and refunds, the webhook dispatcher, the PSP's start and watch,
// the certificate watch, the client-change listener). Runner.Run returns
// only once every task and loop has returned, so that the work in flight
// at shutdown finishes.
//
// The work itself lives in the database (a charge's expires_at, a
// transfer's send state), so nothing is lost when a process dies: any node
// picks it up, and each change happens once because it is a conditional
// state transition, claimed with SKIP LOCKED or a guarded update.
//
// What must run on one node at a time (the readings of the PSP's received
// Pix, sent payouts and recurrences, the recurrence cycles) claims its turn
// itself, inside the task, with store.DB.ClaimReading; the Runner holds no
// claim. That claim is also the reading's cursor: it returns where the
// last complete reading ended, which the task reads from and moves with
// store.DB.SetReadUntil once it has applied the reading; each task claims
// with its own clock, period and first-reading start; and a task whose
// provider cannot do the reading returns before claiming, so it writes
// nothing. A claim held here would have to hand the cursor to the task and
// write a claim on every node at every tick for tasks that then do
// nothing, and it would not make the tasks shorter.
package job

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Task is one kind of due work, run on every poll: it handles up to batch
// items and returns how many it handled.
type Task struct {
	Name string
	Run  func(ctx context.Context, batch int) (int, error)
	// Batch, when positive, replaces the Runner's Batch for this task.
	Batch int
}

// Loop is one long-running piece of background work: Run works until ctx
// ends. A Loop that returns sooner has stopped working, and is logged.
type Loop struct {
	Name string
	Run  func(ctx context.Context)
}

// Runner runs its tasks and loops until its context ends.
type Runner struct {
	Tasks []Task
	Loops []Loop
	// Interval spaces the polls of the tasks (default: a second); Batch is
	// a task's batch unless it has its own (default: 100).
	Interval time.Duration
	Batch    int
	Log      *slog.Logger
	// Unavailable, when set, tells the errors of a database out of reach
	// (store.DB.Unavailable): a task failing so waits twice as long after
	// each failure, up to MaxBackoff, and is logged at most once per
	// LogEvery, while the other tasks keep their pace.
	Unavailable func(error) bool
}

// Run starts every loop, each in its own goroutine, and polls the tasks in
// another; it returns when ctx is done and all of them have returned.
func (r *Runner) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, l := range r.Loops {
		wg.Go(func() { r.runLoop(ctx, l) })
	}
	if len(r.Tasks) > 0 {
		wg.Go(func() { r.poll(ctx) })
	}
	wg.Wait()
}

func (r *Runner) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// runLoop runs l until it returns, and says so if it returned before ctx
// ended: that work is no longer done on this node.
func (r *Runner) runLoop(ctx context.Context, l Loop) {
	l.Run(ctx)
	if ctx.Err() == nil {
		r.log().WarnContext(ctx, "background loop returned before shutdown", "job", l.Name)
	}
}

// poll runs every task every Interval; a task that filled its batch runs
// again at once.
func (r *Runner) poll(ctx context.Context) {
	interval := r.Interval
	if interval <= 0 {
		interval = time.Second
	}
	backoffs := make([]*Backoff, len(r.Tasks))
	for i, task := range r.Tasks {
		backoffs[i] = &Backoff{Name: task.Name, Log: r.Log, Min: interval}
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		for i, task := range r.Tasks {
			if backoffs[i].Due() {
				r.drain(ctx, task, backoffs[i])
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// drain runs task until it handles less than its batch, fails, or ctx
// ends; a failure of the database's reach backs the task off.
func (r *Runner) drain(ctx context.Context, task Task, backoff *Backoff) {
	batch := r.Batch
	if batch <= 0 {
		batch = 100
	}
	if task.Batch > 0 {
		batch = task.Batch
	}
	for ctx.Err() == nil {
		n, err := task.Run(ctx, batch)
		if err != nil && r.Unavailable != nil && r.Unavailable(err) {
			backoff.Fail(ctx, err)
			return
		}
		backoff.Succeed(ctx)
		if err != nil {
			if ctx.Err() == nil {
				r.log().WarnContext(ctx, "job failed", "job", task.Name, "error", err.Error())
			}
			return
		}
		if n > 0 {
			r.log().DebugContext(ctx, "job ran", "job", task.Name, "count", n)
		}
		if n < batch {
			return
		}
	}
}
