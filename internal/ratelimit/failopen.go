package ratelimit

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Defaults of FailOpen.
const (
	// DefaultBudget is how long a request waits for the shared limiter's
	// answer (docs/production.md: no answer within 50 ms is an outage).
	DefaultBudget = 50 * time.Millisecond
	// DefaultPause is how long the shared limiter is left alone after it
	// failed: requests meanwhile do not each pay the budget.
	DefaultPause = time.Second
)

// FailOpen is a Limiter over a shared one (Redis) that may fail or freeze:
// each request waits at most Budget for it; when it fails or is late, the
// request is decided by Local, this node's own limit, and so are the
// requests of the next Pause, after which the shared limiter is tried
// again. The outage is logged at most once a minute and its end once.
type FailOpen struct {
	Shared Limiter
	Local  *Memory
	// Budget and Pause default to DefaultBudget and DefaultPause.
	Budget, Pause time.Duration
	// Failed, when set, is called for every request decided by Local.
	Failed func()
	Log    *slog.Logger

	mu       sync.Mutex
	skipTill time.Time // the shared limiter is not asked before this
	down     bool      // the shared limiter failed and has not answered since
	logged   time.Time // when the outage was last logged
	quiet    int       // requests decided locally since then
}

var _ Limiter = (*FailOpen)(nil)

// Allow asks the shared limiter within the budget and falls back to the
// local one. It never fails.
func (f *FailOpen) Allow(ctx context.Context, key string, now time.Time) (Decision, error) {
	wall := time.Now()
	f.mu.Lock()
	skip := wall.Before(f.skipTill)
	f.mu.Unlock()
	if !skip {
		budget := f.Budget
		if budget <= 0 {
			budget = DefaultBudget
		}
		sctx, cancel := context.WithTimeout(ctx, budget)
		d, err := f.Shared.Allow(sctx, key, now)
		cancel()
		if err == nil {
			f.recovered(ctx)
			return d, nil
		}
		if ctx.Err() != nil {
			// The caller gave up, not the shared limiter.
			return f.Local.Allow(ctx, key, now)
		}
		f.failed(ctx, wall, err)
	} else {
		f.failed(ctx, wall, nil)
	}
	if f.Failed != nil {
		f.Failed()
	}
	return f.Local.Allow(ctx, key, now)
}

// failed notes a request decided locally; err is the shared limiter's
// failure, nil while it is left alone.
func (f *FailOpen) failed(ctx context.Context, wall time.Time, err error) {
	f.mu.Lock()
	if err != nil {
		pause := f.Pause
		if pause <= 0 {
			pause = DefaultPause
		}
		f.skipTill = wall.Add(pause)
		f.down = true
	}
	logIt := err != nil && (f.logged.IsZero() || wall.Sub(f.logged) >= time.Minute)
	quiet := f.quiet
	if logIt {
		f.logged, f.quiet = wall, 0
	} else {
		f.quiet++
	}
	f.mu.Unlock()
	if logIt && f.Log != nil {
		f.Log.WarnContext(ctx, "shared rate limiter unavailable; each node limits on its own", "error", err.Error(),
			"not_logged", quiet)
	}
}

// recovered notes an answer of the shared limiter; the first after an
// outage is logged.
func (f *FailOpen) recovered(ctx context.Context) {
	f.mu.Lock()
	was := f.down
	f.down, f.logged, f.quiet = false, time.Time{}, 0
	f.mu.Unlock()
	if was && f.Log != nil {
		f.Log.InfoContext(ctx, "shared rate limiter answers again")
	}
}
