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

// TestMemoryHugeLimitCostsLittle: a key's memory follows its traffic, not
// the configured limit.
func TestMemoryHugeLimitCostsLittle(t *testing.T) {
	t.Parallel()
	m := NewMemory(1_000_000_000)
	for i := 0; i < 10_000; i++ {
		d, err := m.Allow(context.Background(), fmt.Sprint("k", i%100), t0.Add(time.Duration(i)*time.Millisecond))
		require.NoError(t, err)
		require.True(t, d.Allowed)
	}
	total := 0
	for i := range m.shards {
		for _, r := range m.shards[i].keys {
			total += cap(r.times)
		}
	}
	require.Less(t, total, 100_000, "capacity follows the 10,000 requests, not the limit")
	// Times leaving the window are dropped and their room reused.
	d, _ := m.Allow(context.Background(), "k1", t0.Add(5*time.Minute))
	require.True(t, d.Allowed)
	require.Equal(t, 1_000_000_000-1, d.Remaining)
}
