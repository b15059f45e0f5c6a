package job

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// buffer is a log sink safe for concurrent writes.
type buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestBackoffDoublesAndLogsOnceAMinute: each failure of an outage doubles
// the wait up to MaxBackoff; the outage is logged at its first failure and
// then at most once per LogEvery (saying how many were not logged); its
// end is logged once and the waits start over.
func TestBackoffDoublesAndLogsOnceAMinute(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	logs := &buffer{}
	b := &Backoff{Name: "sender", Log: slog.New(slog.NewTextHandler(logs, nil)), Min: time.Second, Now: func() time.Time { return now }}
	ctx := context.Background()
	down := errors.New("connection refused")

	var waits []time.Duration
	for range 8 {
		w := b.Fail(ctx, down)
		waits = append(waits, w)
		require.False(t, b.Due())
		now = now.Add(w)
		require.True(t, b.Due())
	}
	require.Equal(t, []time.Duration{1, 2, 4, 8, 16, 30, 30, 30}, secondsOf(waits))
	// Failures at 0, 1, 3, 7, 15, 31, 61 and 91 s: those at 0 and 61 s are
	// logged.
	require.Equal(t, 2, strings.Count(logs.String(), "backing off"), logs.String())
	require.Contains(t, logs.String(), "not_logged=")

	b.Succeed(ctx)
	b.Succeed(ctx)
	require.Equal(t, 1, strings.Count(logs.String(), "background work resumed"))
	require.Equal(t, time.Second, b.Fail(ctx, down), "the waits start over")
	require.Equal(t, 3, strings.Count(logs.String(), "backing off"), "a new outage is logged at once")
}

func secondsOf(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d / time.Second
	}
	return out
}

// TestRunnerBacksOffAnUnavailableTask: a task failing because the
// database is out of reach is not run at every tick, and is logged once;
// a task failing otherwise keeps its pace and its line per failure.
func TestRunnerBacksOffAnUnavailableTask(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	down := errors.New("database down")
	logs := &buffer{}
	var outageRuns, otherRuns int
	r := &Runner{Interval: time.Millisecond, Log: slog.New(slog.NewTextHandler(logs, nil)),
		Unavailable: func(err error) bool { return errors.Is(err, down) },
		Tasks: []Task{
			{Name: "outage", Run: func(context.Context, int) (int, error) { outageRuns++; return 0, down }},
			{Name: "other", Run: func(context.Context, int) (int, error) {
				otherRuns++
				if otherRuns == 20 {
					cancel()
				}
				return 0, errors.New("bad row")
			}},
		}}
	r.Run(ctx)
	require.Equal(t, 20, otherRuns)
	// The waits double from 1 ms: 12 runs take 2 s, far more than 20
	// ticks of 1 ms take even on a loaded machine; without the back-off
	// it would run at every tick.
	require.LessOrEqual(t, outageRuns, 12)
	require.Equal(t, 1, strings.Count(logs.String(), "backing off"), logs.String())
	require.Equal(t, 19, strings.Count(logs.String(), "job failed"), "every failure but the one that ended the run")
}
