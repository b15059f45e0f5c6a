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
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		for _, task := range r.Tasks {
			batch := defaultBatch
			if task.Batch > 0 {
				batch = task.Batch
			}
			for ctx.Err() == nil {
				n, err := task.Run(ctx, batch)
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
