// Package job runs pixgate's durable background work: expiring unpaid
// charges and settling payouts and refunds. The work itself lives in the
// database (a charge's expires_at, a transfer's settle_at), so nothing is lost
// when a process dies; any node may pick it up, and each change happens once
// because it is a conditional state transition claimed with SKIP LOCKED.
package job

import (
	"context"
	"log/slog"
	"time"
)

// Task is one kind of due work: it handles up to batch items and returns how
// many it handled.
type Task struct {
	Name string
	Run  func(ctx context.Context, batch int) (int, error)
	// Batch, when positive, replaces the Runner's Batch for this task.
	Batch int
}

// Runner polls its tasks until its context ends.
type Runner struct {
	Tasks    []Task
	Interval time.Duration
	Batch    int
	Log      *slog.Logger
	// Unavailable, when set, tells the errors of a database out of reach
	// (store.DB.Unavailable): a task failing so waits twice as long after
	// each failure, up to MaxBackoff, and is logged at most once per
	// LogEvery, while the other tasks keep their pace.
	Unavailable func(error) bool
}

// Run polls every Interval; a task that filled its batch runs again at once.
// It returns when ctx is done.
func (r *Runner) Run(ctx context.Context) {
	interval := r.Interval
	if interval <= 0 {
		interval = time.Second
	}
	defaultBatch := r.Batch
	if defaultBatch <= 0 {
		defaultBatch = 100
	}
	backoffs := make([]*Backoff, len(r.Tasks))
	for i, task := range r.Tasks {
		backoffs[i] = &Backoff{Name: task.Name, Log: r.Log, Min: interval}
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		for i, task := range r.Tasks {
			batch := defaultBatch
			if task.Batch > 0 {
				batch = task.Batch
			}
			if !backoffs[i].Due() {
				continue
			}
			for ctx.Err() == nil {
				n, err := task.Run(ctx, batch)
				if err != nil && r.Unavailable != nil && r.Unavailable(err) {
					backoffs[i].Fail(ctx, err)
					break
				}
				backoffs[i].Succeed(ctx)
				if err != nil {
					if ctx.Err() == nil {
						r.Log.WarnContext(ctx, "job failed", "job", task.Name, "error", err.Error())
					}
					break
				}
				if n > 0 {
					r.Log.DebugContext(ctx, "job ran", "job", task.Name, "count", n)
				}
				if n < batch {
					break
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
