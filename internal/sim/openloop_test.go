package sim

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestGenerateOpenLoop: the generator starts each request at its time
// whatever the earlier ones take. Every call here waits until all five
// have started, which a generator that waited for answers never gets to.
func TestGenerateOpenLoop(t *testing.T) {
	t.Parallel()
	const n = 5
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	started := 0
	all := make(chan struct{})
	offers := generate(ctx, OpenLoopConfig{Rate: 100}, n, func(ctx context.Context, i int) string {
		mu.Lock()
		started++
		if started == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
			return "ok"
		case <-ctx.Done():
			return ""
		}
	})
	require.NoError(t, ctx.Err(), "the calls waited for each other: the generator waited for answers")
	require.Len(t, offers, n)
	for i, o := range offers {
		require.Equal(t, "ok", o.id, "offer %d", i)
		require.False(t, o.started.Before(o.scheduled), "offer %d started before its time", i)
		require.False(t, o.accepted.Before(o.started), "offer %d", i)
		if i > 0 {
			require.Equal(t, 10*time.Millisecond, o.scheduled.Sub(offers[i-1].scheduled), "offer %d: 100/s is one every 10 ms", i)
		}
	}
}

// TestOpenLoopMeasure: the report's counts at the 5 s and 25 s marks, its
// rates and its percentiles, from made-up times.
func TestOpenLoopMeasure(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	const id1, id2, id3, id4, id5 = "00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002",
		"00000000-0000-0000-0000-000000000003", "00000000-0000-0000-0000-000000000004", "00000000-0000-0000-0000-000000000005"
	offers := []offer{
		{scheduled: at(0), started: at(time.Millisecond), accepted: at(11 * time.Millisecond), id: id1},
		// Started 30 ms late.
		{scheduled: at(500 * time.Millisecond), started: at(530 * time.Millisecond), accepted: at(540 * time.Millisecond), id: id2},
		{scheduled: at(time.Second), started: at(time.Second), accepted: at(time.Second + 10*time.Millisecond), id: id3},
		{scheduled: at(1500 * time.Millisecond), started: at(1500 * time.Millisecond), accepted: at(1510 * time.Millisecond), id: id4},
		{scheduled: at(2 * time.Second), started: at(2 * time.Second), accepted: at(2010 * time.Millisecond), id: id5},
		// Refused.
		{scheduled: at(2500 * time.Millisecond), started: at(2500 * time.Millisecond), accepted: at(2510 * time.Millisecond)},
	}
	stop := at(2510 * time.Millisecond)
	puts := map[string]time.Time{
		hexID(id1): at(100 * time.Millisecond),
		hexID(id2): at(600 * time.Millisecond),
		hexID(id3): at(1100 * time.Millisecond),
		hexID(id4): stop.Add(6 * time.Second), // after the 5 s mark
		// id5 never reached the PSP.
	}
	paid := map[string]time.Time{
		id1: at(time.Second),
		id2: stop.Add(4 * time.Second),  // before the 5 s mark
		id3: stop.Add(10 * time.Second), // between the marks
		id4: stop.Add(30 * time.Second), // after the 25 s mark
	}
	failed := map[string]time.Time{id5: stop}
	var r OpenLoopReport
	r.measure(offers, stop, puts, paid, failed)

	require.Equal(t, 1, r.LateStarts)
	require.Equal(t, 30*time.Millisecond, r.MaxStartLag)
	require.Equal(t, 2, r.UnsentAt5s, "id4 after the mark, id5 never")
	require.Equal(t, 3, r.UnpaidAt5s, "id3, id4, id5")
	require.Equal(t, 2, r.UnpaidAt25s, "id4, id5")
	require.Equal(t, 1, r.Unpaid)
	require.Equal(t, 1, r.Failed)
	require.Equal(t, 10*time.Millisecond, r.Accept["p50"])
	require.Equal(t, 90*time.Millisecond, r.ToPSP["p50"], "of 60 ms, 89 ms, 90 ms, 7 s and never")
	require.Equal(t, Never, r.ToPSP["max"])
	require.Equal(t, Never, r.ToPaid["p99"])
	require.InDelta(t, 5/1.999, r.AcceptRate, 1e-9, "5 acceptances from 11 ms to 2.010 s")
	require.InDelta(t, 4/(stop.Add(6*time.Second).Sub(at(100*time.Millisecond)).Seconds()), r.SendRate, 1e-9)

	b, err := json.Marshal(r)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	require.Nil(t, m["acceptance_to_put_ms"].(map[string]any)["max"], "never is null")
	require.InDelta(t, 90.0, m["acceptance_to_put_ms"].(map[string]any)["p50"], 1e-9)
	require.Contains(t, r.String(), "max never")
}
