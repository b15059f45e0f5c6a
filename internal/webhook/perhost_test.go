package webhook_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/store"
)

// TestSlowReceiverDoesNotStallOthers: deliveries to one host are bounded by
// PerHost, and a slow host does not hold back another host's events.
func TestSlowReceiverDoesNotStallOthers(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		f := setup(t, open(t))
		f.disp.PerHost = 2
		var mu sync.Mutex
		var order []string
		inflight, maxInflight := 0, 0
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			inflight++
			maxInflight = max(maxInflight, inflight)
			mu.Unlock()
			time.Sleep(300 * time.Millisecond)
			mu.Lock()
			inflight--
			order = append(order, "slow")
			mu.Unlock()
			w.WriteHeader(http.StatusOK)
		}))
		t.Cleanup(slow.Close)
		fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			order = append(order, "fast")
			mu.Unlock()
			w.WriteHeader(http.StatusOK)
		}))
		t.Cleanup(fast.Close)
		// 127.0.0.1 and localhost are different hosts for the limit.
		fastURL := "http://localhost:" + fast.Listener.Addr().(*net.TCPAddr).String()[len("127.0.0.1:"):]
		for i := 0; i < 6; i++ {
			f.paidCharge(t, "slow"+string(rune('a'+i)), slow.URL)
		}
		f.paidCharge(t, "fast", fastURL)
		// Events that cannot get a slot on their host while their lease
		// leaves room for a whole attempt are given back and claimed again.
		for i := 0; i < 20; i++ {
			_, err := f.disp.DeliverDue(context.Background())
			require.NoError(t, err)
			mu.Lock()
			done := len(order)
			mu.Unlock()
			if done == 7 {
				break
			}
		}
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, order, 7)
		require.Equal(t, 2, maxInflight, "at most PerHost deliveries to one host at once")
		require.NotEqual(t, "fast", order[len(order)-1], "the fast host was not queued behind the slow one")
		require.Equal(t, "fast", order[0])
	})
}

// TestFreeWorkersClaimMoreAtOnce: a running dispatcher keeps its workers
// busy while events are due, without waiting for the next tick or a
// wake-up from the gateway (before, it took at most Workers events per
// wake-up: about 500 webhooks/s under load while payouts settled faster).
func TestFreeWorkersClaimMoreAtOnce(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		f := setup(t, open(t))
		var mu sync.Mutex
		got := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got++
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(srv.Close)
		const events = 12
		for i := 0; i < events; i++ {
			f.paidCharge(t, "many"+string(rune('a'+i)), srv.URL)
		}
		f.disp.Workers = 2
		f.disp.Interval = time.Hour // no tick during the test
		f.run(t)
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return got == events
		}, 20*time.Second, 10*time.Millisecond, "all due events delivered by 2 workers without a tick")
	})
}
