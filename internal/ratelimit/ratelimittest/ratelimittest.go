// Package ratelimittest holds the conformance tests every
// ratelimit.Limiter must pass, so that the in-memory and the Redis limiters
// are held to one table of decisions.
//
// It imports ratelimit, so call it from an external test package
// (package ratelimit_test), not from package ratelimit itself.
package ratelimittest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/ratelimit"
)

// T0 is the fixed clock origin of the conformance table.
var T0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// NewLimiter returns a fresh limiter of limit requests per window whose keys
// are independent of every other limiter it returned (e.g. a Redis limiter
// with a random key prefix). It registers its own cleanup on t.
type NewLimiter func(t *testing.T, limit int) ratelimit.Limiter

// step is one call and the decision it must produce.
type step struct {
	at        time.Duration // since T0
	key       string
	allowed   bool
	remaining int
	reset     int
}

// cases are the conformance tables: one fresh limiter each.
var cases = []struct {
	name  string
	limit int
	steps []step
}{
	{
		// The table of TestMemoryRollingWindow.
		name:  "rolling window",
		limit: 3,
		steps: []step{
			{0, "a", true, 2, 60},
			{10 * time.Second, "a", true, 1, 50},
			{20 * time.Second, "a", true, 0, 40},
			{30 * time.Second, "a", false, 0, 30},
			// Refused requests do not count: at T0+60s exactly one slot frees.
			{60 * time.Second, "a", true, 0, 10},
			{61 * time.Second, "a", false, 0, 9},
			// Other keys are independent.
			{61 * time.Second, "b", true, 2, 60},
		},
	},
	{
		name:  "limit one",
		limit: 1,
		steps: []step{
			{0, "k", true, 0, 60},
			{time.Millisecond, "k", false, 0, 60},
			{59*time.Second + 999*time.Millisecond, "k", false, 0, 1},
			{60 * time.Second, "k", true, 0, 60},
			{90 * time.Second, "k", false, 0, 30},
		},
	},
	{
		name:  "fractional seconds round up",
		limit: 2,
		steps: []step{
			{500 * time.Millisecond, "k", true, 1, 60},
			{1500 * time.Millisecond, "k", true, 0, 59},  // oldest leaves at 60.5 s
			{2250 * time.Millisecond, "k", false, 0, 59}, // 58.25 s left
			{60499 * time.Millisecond, "k", false, 0, 1}, // 1 ms left
			{60500 * time.Millisecond, "k", true, 0, 1},  // first left; second leaves at 61.5 s
			{61 * time.Second, "k", false, 0, 1},         // 0.5 s left
			{61500 * time.Millisecond, "k", true, 0, 59}, // oldest now the one at 60.5 s
			{120 * time.Second, "k", false, 0, 1},        // 0.5 s left
			{200 * time.Second, "k", true, 1, 60},        // all left
			{200 * time.Second, "other", true, 1, 60},    // independent key
			{200 * time.Second, "k", true, 0, 60},        // same instant, both count
			{200 * time.Second, "k", false, 0, 60},       // full
			{260 * time.Second, "k", true, 1, 60},        // both left together
			{260 * time.Second, "other", true, 1, 60},    // its one at 200 s left too
			{260 * time.Second, "other", true, 0, 60},
			{260 * time.Second, "other", false, 0, 60},
			{319999 * time.Millisecond, "k", true, 0, 1}, // 260 s leaves in 1 ms
			{320 * time.Second, "k", true, 0, 60},        // 260 s left; oldest 319.999 s
			{320 * time.Second, "other", true, 1, 60},    // both at 260 s left
			{380 * time.Second, "other", true, 1, 60},
			{380 * time.Second, "k", true, 1, 60}, // 319.999 s and 320 s left
			{380 * time.Second, "k", true, 0, 60},
			{381 * time.Second, "k", false, 0, 59},
			{440 * time.Second, "k", true, 1, 60}, // idle for a whole window
			{440 * time.Second, "k", true, 0, 60},
			{440 * time.Second, "k", false, 0, 60},
			{499999 * time.Millisecond, "k", false, 0, 1},
		},
	},
}

// Exercise runs the conformance tables and a concurrency check against
// limiters made by newLimiter. Every decision must match ratelimit.Memory's.
func Exercise(t *testing.T, newLimiter NewLimiter) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := newLimiter(t, tc.limit)
			for i, s := range tc.steps {
				d, err := l.Allow(context.Background(), s.key, T0.Add(s.at))
				require.NoError(t, err)
				want := ratelimit.Decision{Allowed: s.allowed, Limit: tc.limit, Remaining: s.remaining, Reset: s.reset}
				require.Equal(t, want, d, "step %d: key %q at T0+%v", i, s.key, s.at)
			}
		})
	}
	t.Run("concurrent exact", func(t *testing.T) {
		t.Parallel()
		const limit = 100
		l := newLimiter(t, limit)
		var ok atomic.Int32
		var wg sync.WaitGroup
		errs := make(chan error, 300)
		for i := range 300 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := l.Allow(context.Background(), "k", T0.Add(time.Duration(i%7)*time.Millisecond))
				if err != nil {
					errs <- err
					return
				}
				if d.Allowed {
					ok.Add(1)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, int32(limit), ok.Load())
	})
	t.Run("many keys", func(t *testing.T) {
		t.Parallel()
		l := newLimiter(t, 2)
		for i := range 50 {
			key := fmt.Sprint("ip", i)
			for j, want := range []bool{true, true, false} {
				d, err := l.Allow(context.Background(), key, T0)
				require.NoError(t, err)
				require.Equal(t, want, d.Allowed, "key %s call %d", key, j)
			}
		}
	})
}
