package cli

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/config"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestBackgroundLoops: serve hands the runner only the loops that have
// work on this deployment, so that a loop returning before shutdown is
// always worth its warning: the certificate watch needs a PSP
// certificate, the client-change listener PostgreSQL.
func TestBackgroundLoops(t *testing.T) {
	t.Parallel()
	names := func(s config.Settings) []string {
		a := &app{settings: s, log: newLogger(&testkit.Buffer{}, "info")}
		// Only the loops' and tasks' names are read: nothing runs.
		r := a.background(nil, provider.None{}, nil, nil, nil, nil, nil)
		var tasks []string
		for _, task := range r.Tasks {
			tasks = append(tasks, task.Name)
		}
		require.Equal(t, []string{"expire-charges", "psp-reconcile", "psp-returns-reading", "psp-infractions-reading", "psp-sent-reading", "psp-orphan-cobs",
			"recurrence-cycles", "psp-recurrences-reading", "scheduled-payouts", "batches-completed"}, tasks)
		var out []string
		for _, l := range r.Loops {
			out = append(out, l.Name)
		}
		return out
	}
	require.Equal(t, []string{"sender", "webhook-dispatch", "psp"}, names(config.Settings{}))
	require.Equal(t, []string{"sender", "webhook-dispatch", "psp", "certificate", "client-changes"},
		names(config.Settings{Postgres: true, CertNotAfter: time.Now().Add(time.Hour)}))
}

// TestRunPSPLastsUntilShutdown: with a PSP that has no webhook
// registration to watch, the PSP's loop starts it and then waits for
// shutdown rather than return early.
func TestRunPSPLastsUntilShutdown(t *testing.T) {
	t.Parallel()
	a := &app{log: newLogger(&testkit.Buffer{}, "info")}
	psp := &flakyPSP{}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); a.runPSP(ctx, psp) }()
	waitUntil(t, func() bool { psp.mu.Lock(); defer psp.mu.Unlock(); return psp.starts == 1 })
	select {
	case <-done:
		t.Fatal("runPSP returned before its context ended")
	case <-time.After(20 * time.Millisecond):
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("runPSP did not return after its context ended")
	}
}
