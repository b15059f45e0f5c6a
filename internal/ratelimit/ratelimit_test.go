package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func TestMemoryRollingWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := NewMemory(3)
	for i := 0; i < 3; i++ {
		d, err := m.Allow(ctx, "a", t0.Add(time.Duration(i)*10*time.Second))
		require.NoError(t, err)
		require.True(t, d.Allowed)
		require.Equal(t, 2-i, d.Remaining)
		require.Equal(t, 60-10*i, d.Reset, "seconds until the first request leaves")
	}
	d, _ := m.Allow(ctx, "a", t0.Add(30*time.Second))
	require.False(t, d.Allowed)
	require.Equal(t, 0, d.Remaining)
	require.Equal(t, 30, d.Reset)
	// Refused requests do not count: at t0+60s exactly one slot frees.
	d, _ = m.Allow(ctx, "a", t0.Add(60*time.Second))
	require.True(t, d.Allowed)
	require.Equal(t, 0, d.Remaining)
	d, _ = m.Allow(ctx, "a", t0.Add(61*time.Second))
	require.False(t, d.Allowed)
	require.Equal(t, 9, d.Reset)
	// Other keys are independent.
	d, _ = m.Allow(ctx, "b", t0.Add(61*time.Second))
	require.True(t, d.Allowed)
}

func TestMemoryConcurrentExact(t *testing.T) {
	t.Parallel()
	m := NewMemory(100)
	var ok atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 300; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if d, _ := m.Allow(context.Background(), "k", t0); d.Allowed {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	require.Equal(t, int32(100), ok.Load())
}

func TestMemoryEvictsIdleKeys(t *testing.T) {
	t.Parallel()
	m := NewMemory(5)
	for i := 0; i < 1000; i++ {
		_, _ = m.Allow(context.Background(), fmt.Sprint("ip", i), t0)
	}
	require.Equal(t, 1000, m.Len())
	// 2000 new keys touch every shard (64) with overwhelming probability;
	// each touched shard drops its idle keys.
	for i := 0; i < 2000; i++ {
		_, _ = m.Allow(context.Background(), fmt.Sprint("later", i), t0.Add(2*Window))
	}
	require.Equal(t, 2000, m.Len(), "the 1000 idle keys are gone")
}
