package batch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The batch runner's own rules, apart from any database: calls are answered
// in their own order, they share runs under concurrency, a failing group is
// retried call by call, and a caller that leaves does not hold up the rest.
func TestBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("answers each call, sharing runs", func(t *testing.T) {
		t.Parallel()
		var runs, biggest atomic.Int64
		g := New[int, string](2, 8, func(_ context.Context, ins []int) ([]string, error) {
			runs.Add(1)
			for n := int64(len(ins)); ; {
				b := biggest.Load()
				if n <= b || biggest.CompareAndSwap(b, n) {
					break
				}
			}
			time.Sleep(time.Millisecond) // a statement takes a while
			out := make([]string, len(ins))
			for i, in := range ins {
				out[i] = fmt.Sprint("v", in)
			}
			return out, nil
		})
		var wg sync.WaitGroup
		got := make([]string, 200)
		errs := make([]error, 200)
		for i := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i], errs[i] = g.Do(ctx, i)
			}()
		}
		wg.Wait()
		for i := range got {
			require.NoError(t, errs[i], i)
			require.Equal(t, fmt.Sprint("v", i), got[i])
		}
		require.Less(t, runs.Load(), int64(200), "concurrent calls share runs")
		require.LessOrEqual(t, biggest.Load(), int64(8), "no run takes more than max calls")
		// Flushes end once the queue is empty (after their last answers).
		require.Eventually(t, func() bool {
			g.mu.Lock()
			defer g.mu.Unlock()
			return g.inFlight == 0 && len(g.queue) == 0
		}, 5*time.Second, time.Millisecond)
	})

	t.Run("a failing group is retried call by call", func(t *testing.T) {
		t.Parallel()
		g := New[string, string](1, 64, func(_ context.Context, ins []string) ([]string, error) {
			time.Sleep(time.Millisecond)
			for _, in := range ins {
				if strings.HasPrefix(in, "bad") {
					return nil, errors.New("refused " + in)
				}
			}
			return ins, nil
		})
		var wg sync.WaitGroup
		ins := make([]string, 50)
		got := make([]string, len(ins))
		errs := make([]error, len(ins))
		for i := range ins {
			ins[i] = fmt.Sprint("ok", i)
			if i%10 == 0 {
				ins[i] = fmt.Sprint("bad", i)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i], errs[i] = g.Do(ctx, ins[i])
			}()
		}
		wg.Wait()
		for i, in := range ins {
			if i%10 == 0 {
				require.EqualError(t, errs[i], "refused "+in)
				continue
			}
			require.NoError(t, errs[i], in)
			require.Equal(t, in, got[i])
		}
	})

	t.Run("a held flush leaves the other slots free, and no more", func(t *testing.T) {
		t.Parallel()
		held := make(chan struct{})
		var release sync.Once
		unhold := func() { release.Do(func() { close(held) }) }
		t.Cleanup(unhold)
		g := New[int, int](2, 64, func(_ context.Context, ins []int) ([]int, error) {
			if slices.Contains(ins, 1) || slices.Contains(ins, 3) {
				<-held // e.g. a group waiting for another transaction's rows
			}
			return ins, nil
		})
		answered := make(chan int, 3)
		call := func(in int) {
			go func() {
				v, err := g.Do(ctx, in)
				assert.NoError(t, err)
				answered <- v
			}()
		}
		// taken: n flushes run and every call so far is in one of them.
		taken := func(n int) {
			require.Eventually(t, func() bool {
				g.mu.Lock()
				defer g.mu.Unlock()
				return g.inFlight == n && len(g.queue) == 0
			}, 5*time.Second, time.Millisecond)
		}
		next := func(msg string) int {
			select {
			case v := <-answered:
				return v
			case <-time.After(5 * time.Second):
				require.FailNow(t, msg)
				return 0
			}
		}
		call(1)
		taken(1)
		call(2)
		require.Equal(t, 2, next("a second slot answers while the first flush is held"))
		call(3)
		taken(2)
		call(4)
		require.Never(t, func() bool { return len(answered) > 0 }, 50*time.Millisecond, time.Millisecond,
			"with both slots held a call waits: no third flush starts")
		unhold()
		got := []int{next("answered once released"), next("answered once released"), next("answered once released")}
		require.ElementsMatch(t, []int{1, 3, 4}, got)
	})

	t.Run("a caller that gives up leaves the others answered", func(t *testing.T) {
		t.Parallel()
		release, taken := make(chan struct{}), make(chan []int, 2)
		g := New[int, int](1, 64, func(_ context.Context, ins []int) ([]int, error) {
			taken <- ins
			<-release
			return ins, nil
		})
		// Call 2 holds the only slot; call 1 queues behind it and its
		// caller gives up: it is dropped at once, and call 2 answered.
		got := make(chan int, 1)
		go func() { v, _ := g.Do(ctx, 2); got <- v }()
		require.Equal(t, []int{2}, <-taken)
		gone, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() { _, err := g.Do(gone, 1); errc <- err }()
		require.Eventually(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.queue) == 1 }, 5*time.Second, time.Millisecond)
		cancel()
		require.ErrorIs(t, <-errc, context.Canceled)
		close(release)
		require.Equal(t, 2, <-got)
		select {
		case ins := <-taken:
			t.Fatalf("a dropped call was flushed: %v", ins)
		case <-time.After(20 * time.Millisecond):
		}
	})
}
