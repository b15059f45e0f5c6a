package pspsim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pspsim"
)

// TestLatencyDelaysEveryRequest: with Options.Latency, and after
// SetLatency, token requests and API requests each take at least the
// latency less the jitter.
func TestLatencyDelaysEveryRequest(t *testing.T) {
	t.Parallel()
	const latency = 150 * time.Millisecond
	e := startSim(t, func(o *pspsim.Options) { o.Latency = latency })
	require.Equal(t, latency, e.Options().Latency)

	start := time.Now()
	e.fetchToken("client-1", "secret-1")
	require.GreaterOrEqual(t, time.Since(start), latency, "a token request waits")
	start = time.Now()
	st, body := e.do(http.MethodPut, "/v2/cob/"+txid(1), cobBody("10.00"))
	require.Equal(t, http.StatusCreated, st, "%v", body)
	require.GreaterOrEqual(t, time.Since(start), latency, "an API request waits")

	e.SetLatency(300*time.Millisecond, 100*time.Millisecond)
	require.Equal(t, 300*time.Millisecond, e.Options().Latency)
	require.Equal(t, 100*time.Millisecond, e.Options().LatencyJitter)
	for range 3 {
		start = time.Now()
		st, _ = e.do(http.MethodGet, "/v2/cob/"+txid(1), nil)
		require.Equal(t, http.StatusOK, st)
		require.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond, "at least latency − jitter")
	}
}

// TestLatencyAbandonedRequestIsNotHandled: a client that gives up while
// its request waits gets no answer, and the PSP does nothing of what it
// asked: the cob is not created, and its txid is still free once the
// latency ends.
func TestLatencyAbandonedRequestIsNotHandled(t *testing.T) {
	t.Parallel()
	e := startSim(t, nil)
	e.SetLatency(time.Hour, 0)

	raw, err := json.Marshal(cobBody("10.00"))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, e.origin+"/v2/cob/"+txid(2), bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.token)
	resp, err := e.client.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// The server notices the client left and logs the request unanswered
	// (status 0) long before the hour is up.
	require.Eventually(t, func() bool {
		for _, r := range e.Requests() {
			if r.Method == http.MethodPut && r.Path == "/v2/cob/"+txid(2) {
				return r.Status == 0
			}
		}
		return false
	}, 10*time.Second, 20*time.Millisecond)
	require.Empty(t, e.State().Cobs)

	e.SetLatency(0, 0)
	st, body := e.do(http.MethodPut, "/v2/cob/"+txid(2), cobBody("10.00"))
	require.Equal(t, http.StatusCreated, st, "the txid was never used: %v", body)
}
