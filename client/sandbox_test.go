package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
)

// TestSandboxRetried: both tools are idempotent, so a 5xx is retried like a
// read, and a 429 is waited out.
func TestSandboxRetried(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	var status atomic.Int32 // of the first attempt
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(int(status.Load()))
			return
		}
		_, _ = w.Write([]byte(`{"statusCode":200,"message":"OK","data":{"payment_id":"p1","status":"PAID"}}`))
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "id", "secret", client.WithBackoff(time.Millisecond, time.Millisecond))
	require.NoError(t, err)

	for _, f := range []func(context.Context, string) (*client.SandboxResult, error){c.SandboxPay, c.SandboxExpire} {
		for _, st := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
			hits.Store(0)
			status.Store(int32(st))
			res, err := f(t.Context(), "p1")
			require.NoError(t, err)
			require.Equal(t, int32(2), hits.Load(), "a %d is retried", st)
			require.Equal(t, 2, res.Attempts)
			require.Equal(t, client.StatusPaid, res.Status)
		}
	}
}
