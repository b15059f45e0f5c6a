package testkit

import (
	"context"
	"testing"
	"time"
)

// RunUntilCleanup runs run in its own goroutine until the test ends: its
// context is cancelled then, and the test fails with stuck (the likely
// reason) if run has not returned within 30 s.
func RunUntilCleanup(t testing.TB, stuck string, run func(ctx context.Context)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error(stuck)
		}
	})
}
