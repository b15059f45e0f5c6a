package job

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A task that fills its batch runs again at once, with its own batch size
// when it has one; the others get the Runner's.
func TestRunnerBatches(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	remaining := 7
	var settled []int
	var otherBatch int
	r := &Runner{Interval: time.Hour, Batch: 5, Log: slog.New(slog.DiscardHandler), Tasks: []Task{
		{Name: "wide", Batch: 3, Run: func(_ context.Context, batch int) (int, error) {
			n := min(batch, remaining)
			remaining -= n
			settled = append(settled, n)
			return n, nil
		}},
		{Name: "default", Run: func(_ context.Context, batch int) (int, error) {
			otherBatch = batch
			cancel() // one poll is enough
			return 0, nil
		}},
	}}
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	require.Equal(t, []int{3, 3, 1}, settled)
	require.Equal(t, 5, otherBatch)
}

// TestRunnerRunsLoopsUntilShutdown: every loop runs beside the tasks
// until the context ends, Run waits for the work each has in flight then,
// and a loop that returned before is logged, once, by name.
func TestRunnerRunsLoopsUntilShutdown(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &buffer{}
	started := make(chan string, 3)
	var finished atomic.Bool
	polled := make(chan struct{}, 1)
	r := &Runner{Interval: time.Millisecond, Log: slog.New(slog.NewTextHandler(logs, nil)),
		Loops: []Loop{
			{Name: "sender", Run: func(ctx context.Context) {
				started <- "sender"
				<-ctx.Done()
				time.Sleep(20 * time.Millisecond) // a step in flight at shutdown
				finished.Store(true)
			}},
			{Name: "quitter", Run: func(context.Context) { started <- "quitter" }},
		},
		Tasks: []Task{{Name: "tick", Run: func(context.Context, int) (int, error) {
			select {
			case polled <- struct{}{}:
			default:
			}
			return 0, nil
		}}},
	}
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	got := []string{<-started, <-started}
	require.ElementsMatch(t, []string{"sender", "quitter"}, got)
	<-polled
	select {
	case <-done:
		t.Fatal("Run returned while a loop still ran")
	case <-time.After(10 * time.Millisecond):
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	require.True(t, finished.Load(), "Run returned before the sender's work in flight finished")
	require.Equal(t, 1, strings.Count(logs.String(), "background loop returned before shutdown"), logs.String())
	require.Contains(t, logs.String(), "job=quitter")
	require.NotContains(t, logs.String(), "job=sender")
}
