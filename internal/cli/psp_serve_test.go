package cli

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/testkit"
)

// flakyPSP fails to start fails times, then starts.
type flakyPSP struct {
	provider.None
	mu     sync.Mutex
	fails  int
	starts int
}

func (p *flakyPSP) Start(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.starts++
	if p.starts <= p.fails {
		return errors.New("PSP answered 503: indisponível")
	}
	return nil
}

// TestStartPSPRetries: a PSP that cannot be started is tried again in the
// background, one error line per failure, until it starts; startPSP ends
// with its context too.
func TestStartPSPRetries(t *testing.T) {
	t.Parallel()
	var logs testkit.Buffer
	a := &app{log: newLogger(&logs, "info")}
	psp := &flakyPSP{fails: 3}
	a.startPSP(t.Context(), psp, time.Millisecond)
	require.Equal(t, 4, psp.starts, "tried until it started, then no more")
	require.Equal(t, 3, strings.Count(logs.String(), `"level":"ERROR"`), logs.String())
	require.Contains(t, logs.String(), "PSP answered 503: indisponível")

	ctx, cancel := context.WithCancel(t.Context())
	never := &flakyPSP{fails: 1 << 30}
	done := make(chan struct{})
	go func() { defer close(done); a.startPSP(ctx, never, time.Millisecond) }()
	waitUntil(t, func() bool { never.mu.Lock(); defer never.mu.Unlock(); return never.starts >= 2 })
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("startPSP did not return after its context ended")
	}
}

// waitUntil polls cond for at most 10 s.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "condition not met within 10 s")
		time.Sleep(time.Millisecond)
	}
}
