package webhook_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/webhook"
)

// hangingReceiver accepts requests and never answers them while the test
// runs; it records how many it holds at once and whether any ended.
type hangingReceiver struct {
	srv                   *httptest.Server
	mu                    sync.Mutex
	inflight, maxInflight int
	got, ended            int
}

func newHangingReceiver(t *testing.T) *hangingReceiver {
	h := &hangingReceiver{}
	stop := make(chan struct{})
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.got++
		h.inflight++
		h.maxInflight = max(h.maxInflight, h.inflight)
		h.mu.Unlock()
		select {
		case <-stop:
		case <-r.Context().Done():
		}
		h.mu.Lock()
		h.inflight--
		h.ended++
		h.mu.Unlock()
	}))
	h.srv.Start()
	// Cleanups run last registered first: the handlers return before
	// Close waits for them.
	t.Cleanup(h.srv.Close)
	t.Cleanup(func() { close(stop) })
	return h
}

func (h *hangingReceiver) state() (got, inflight, maxInflight, ended int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.got, h.inflight, h.maxInflight, h.ended
}

// TestHangingReceiverDoesNotStarveOtherHosts: ≈2,000 events of two clients
// wait for a receiver that accepts connections and never answers; another
// client's events, written after them, are all attempted while the hanging
// receiver still holds its slots (docs/webhooks.md: another host is first attempted within 5 s). Before, a claim
// took the oldest due events, the hanging host's, and an event that found
// no free slot was given back still due first, so the healthy client's
// events were never claimed. The two clients on the hanging host share its
// PerHost slots.
func TestHangingReceiverDoesNotStarveOtherHosts(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		ctx := context.Background()
		f := setup(t, open(t))
		// The hanging attempts outlast the test, so that "attempted while
		// the hanging receiver holds its slots" needs no clock.
		f.disp.Timeout = time.Minute
		f.disp.Lease = f.disp.Timeout + 2*time.Second
		f.disp.Grace = 100 * time.Millisecond // the hanging attempts are abandoned at the end
		hanging := newHangingReceiver(t)
		// Two clients share the hanging host; f.c is the healthy one.
		var onHost []string
		for _, name := range []string{"hanging a", "hanging b"} {
			cred, err := f.bo.CreateClient(ctx, backoffice.ClientParams{Name: name})
			require.NoError(t, err)
			onHost = append(onHost, cred.ClientID)
		}
		const waiting = 2000
		events := make([]pix.Event, 0, waiting)
		now := f.clock.Now()
		for i := range waiting {
			events = append(events, pix.Event{ID: fmt.Sprintf("evt_hang%04d", i), ClientID: onHost[i%2], TransactionID: fmt.Sprint("tx-hang", i),
				Type: "pix.cashin.paid", URL: hanging.srv.URL + fmt.Sprintf("/c%d", i%2), Payload: `{"n":1}`,
				CreatedAt: now.Add(time.Duration(i-waiting) * time.Millisecond)})
		}
		require.NoError(t, f.db.Write(ctx, func(tx *store.Tx) error { return tx.InsertEvents(ctx, events) }))

		healthy := newReceiver(t, nil, 0)
		f.run(t)
		require.Eventually(t, func() bool {
			_, inflight, _, _ := hanging.state()
			return inflight == webhook.DefaultPerHost
		}, time.Minute, 10*time.Millisecond, "the hanging receiver holds its slots")

		const healthyEvents = 20
		start := time.Now()
		for i := range healthyEvents {
			f.paidCharge(t, fmt.Sprint("healthy", i), healthy.srv.URL+"/hook")
		}
		require.Eventually(t, func() bool { return healthy.count() >= healthyEvents }, time.Minute, 20*time.Millisecond,
			"every healthy event attempted while %d events wait for the hanging receiver", waiting)
		t.Logf("%d healthy events written and attempted in %v", healthyEvents, time.Since(start))
		got, inflight, maxInflight, ended := hanging.state()
		require.Zero(t, ended, "no hanging attempt ended: the healthy events did not wait for its slots")
		require.Equal(t, webhook.DefaultPerHost, inflight)
		require.Equal(t, webhook.DefaultPerHost, got, "no more attempts than its slots while they hang")
		require.Equal(t, webhook.DefaultPerHost, maxInflight, "the two clients on one host share its slots")
		pending, err := f.db.PendingEvents(ctx, onHost)
		require.NoError(t, err)
		require.Equal(t, int64(waiting), pending, "the hanging host's events wait, none lost or given up")
	})
}
