package job

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Outage pacing: while the database is out of reach every attempt fails
// at once, so a loop that retries at its usual pace floods the log and
// the database's recovery with attempts. Each kind of work waits twice as
// long after each failure, up to MaxBackoff, and says so at most once per
// LogEvery.
const (
	MaxBackoff = 30 * time.Second
	LogEvery   = time.Minute
)

// Backoff paces one kind of work (Name) through an outage. The zero value
// with a Name and a Log is ready to use; it is safe for concurrent use.
type Backoff struct {
	// Name is the kind of work, logged as "job".
	Name string
	Log  *slog.Logger
	// Min is the first wait (default: a second), Max the longest (default
	// MaxBackoff).
	Min, Max time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time

	mu       sync.Mutex
	failures int       // consecutive failures
	until    time.Time // no attempt before this
	logged   time.Time // when the outage was last logged
	quiet    int       // failures not logged since then
	since    time.Time // when the outage began
}

func (b *Backoff) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// Fail records a failed attempt and returns how long to wait before the
// next one. The first failure of an outage is logged at once, later ones
// at most once per LogEvery, with how many were not logged.
func (b *Backoff) Fail(ctx context.Context, err error) time.Duration {
	minWait, maxWait := b.Min, b.Max
	if minWait <= 0 {
		minWait = time.Second
	}
	if maxWait <= 0 {
		maxWait = MaxBackoff
	}
	now := b.now()
	b.mu.Lock()
	wait := minWait
	for i := 0; i < b.failures && wait < maxWait; i++ {
		wait *= 2
	}
	wait = min(wait, maxWait)
	b.failures++
	if b.failures == 1 {
		b.since = now
	}
	b.until = now.Add(wait)
	logIt := b.logged.IsZero() || now.Sub(b.logged) >= LogEvery
	quiet := b.quiet
	if logIt {
		b.logged, b.quiet = now, 0
	} else {
		b.quiet++
	}
	failures := b.failures
	b.mu.Unlock()
	if logIt && ctx.Err() == nil && b.Log != nil {
		b.Log.WarnContext(ctx, "background work failing; backing off", "job", b.Name, "error", err.Error(),
			"failures", failures, "not_logged", quiet, "retry_in", wait.String())
	}
	return wait
}

// Succeed records a successful attempt: the waits start over, and the end
// of an outage is logged once.
func (b *Backoff) Succeed(ctx context.Context) {
	b.mu.Lock()
	failures, since := b.failures, b.since
	b.failures, b.until, b.logged, b.quiet = 0, time.Time{}, time.Time{}, 0
	b.mu.Unlock()
	if failures > 0 && b.Log != nil {
		b.Log.InfoContext(ctx, "background work resumed", "job", b.Name, "failures", failures,
			"after", b.now().Sub(since).Round(time.Second).String())
	}
}

// Due reports whether the wait after the last failure is over.
func (b *Backoff) Due() bool {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	return !now.Before(b.until)
}

// Wait sleeps until the wait after the last failure is over, or ctx ends;
// it reports whether the wait ended.
func (b *Backoff) Wait(ctx context.Context) bool {
	b.mu.Lock()
	d := b.until.Sub(b.now())
	b.mu.Unlock()
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
