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

// TestRateLimitedThenServed: after waiting Retry-After the retry goes
// through. A fake server, since the real window is a minute.
func TestRateLimitedThenServed(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"statusCode":429,"message":"Rate limit exceeded","error":"Too Many Requests","retryAfter":7}`))
			return
		}
		w.Header().Set("X-RateLimit-Limit", "100")
		_, _ = w.Write([]byte(`{"statusCode":200,"message":"ok","data":{"available_cents":1234,"currency":"BRL","pending_cents":5},"timestamp":"2025-01-31T10:45:00.000-03:00"}`))
	}))
	t.Cleanup(srv.Close)
	var waits []time.Duration
	c, err := client.New(srv.URL, "id", "secret", client.WithSleep(func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}))
	require.NoError(t, err)
	b, err := c.Balance(t.Context())
	require.NoError(t, err)
	require.Equal(t, 2, b.Attempts)
	require.Equal(t, []time.Duration{7 * time.Second}, waits)
	require.Equal(t, client.Reais("12.34"), b.Available)
	require.Equal(t, client.Centavos(5), b.Pending)
}

func TestNewValidates(t *testing.T) {
	for _, u := range []string{"", "localhost:8080", "ftp://x", "http://"} {
		_, err := client.New(u, "id", "secret")
		require.Error(t, err, u)
	}
	_, err := client.New("http://localhost", "", "secret")
	require.Error(t, err)
	_, err = client.New("http://localhost", "id", "secret")
	require.NoError(t, err)
}
