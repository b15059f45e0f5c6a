package job

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A task that fills its batch runs again at once, with its own batch size
// when it has one; the others get the Runner's.
func TestRunnerBatches(t *testing.T) {
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
