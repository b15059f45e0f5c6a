package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The job runner settles sandbox payouts in small, frequent ticks: a tick
// gathers only a twentieth of the delay's payouts, so settling them does not
// hold the CPU for long at a time (see jobInterval); the bounds keep an idle
// server from polling hard and a long delay from settling late.
func TestJobInterval(t *testing.T) {
	for _, c := range []struct{ delay, want time.Duration }{
		{2 * time.Second, 100 * time.Millisecond}, // the default delay
		{10 * time.Second, 500 * time.Millisecond},
		{time.Minute, time.Second},
		{500 * time.Millisecond, 50 * time.Millisecond},
		{0, 50 * time.Millisecond},
	} {
		require.Equal(t, c.want, jobInterval(c.delay), "delay %s", c.delay)
	}
}
