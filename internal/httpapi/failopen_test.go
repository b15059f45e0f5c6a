package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/httpapi"
	redislimit "github.com/pixgate/pixgate/internal/ratelimit/redis"
	"github.com/pixgate/pixgate/internal/store"
)

// TestRedisDownFailsOpen: with the shared limiter's Redis unreachable (a
// closed port), requests are still served, with the headers, and each
// failure is counted.
func TestRedisDownFailsOpen(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		limiter, err := redislimit.New("redis://127.0.0.1:1/0", 5, redislimit.WithTimeouts(200*time.Millisecond, 200*time.Millisecond))
		require.NoError(t, err)
		t.Cleanup(func() { _ = limiter.Close() })
		var failures atomic.Int32
		api, err := httpapi.New(httpapi.Options{Gateway: b.gw, Now: b.clock.Now, Log: b.gw.Log, Limiter: limiter, RateLimit: 5,
			LimiterFailed: func() { failures.Add(1) }})
		require.NoError(t, err)
		srv := httptest.NewServer(api.Handler())
		t.Cleanup(srv.Close)
		for i := 0; i < 8; i++ { // more than the limit: nothing is refused while Redis is down
			req, err := http.NewRequestWithContext(context.Background(), "GET", srv.URL+"/api/v1/wallet/balance", nil)
			require.NoError(t, err)
			req.Header.Set("stpi", b.cred.ClientID)
			req.Header.Set("stps", b.cred.ClientSecret)
			resp, err := b.http.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, "5", resp.Header.Get("X-RateLimit-Limit"))
		}
		require.Equal(t, int32(8), failures.Load())
	})
}
