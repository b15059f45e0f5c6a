package httpapi_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/httpapi"
	redislimit "github.com/pixgate/pixgate/internal/ratelimit/redis"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestRedisDownFailsOpen: with the shared limiter's Redis unreachable (a
// closed port), requests are still served, with the headers, under this
// node's own limit, and each request decided without Redis is counted.
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
		for i := 0; i < 8; i++ { // more than the limit: the node's own limit holds while Redis is down
			req, err := http.NewRequestWithContext(context.Background(), "GET", srv.URL+"/api/v1/wallet/balance", nil)
			require.NoError(t, err)
			req.Header.Set("stpi", b.cred.ClientID)
			req.Header.Set("stps", b.cred.ClientSecret)
			resp, err := b.http.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			want := http.StatusOK
			if i >= 5 {
				want = http.StatusTooManyRequests
			}
			require.Equal(t, want, resp.StatusCode, "request %d", i+1)
			require.Equal(t, "5", resp.Header.Get("X-RateLimit-Limit"))
		}
		require.Equal(t, int32(8), failures.Load())
	})
}

// TestRedisFrozen: a Redis that accepts connections but never answers (a
// real redis-server stopped with SIGSTOP) costs a request at most the
// 50 ms budget: requests go on under this node's own limit, each counted,
// the outage logged once; when Redis runs again, the shared limit is back
// and that is logged once.
func TestRedisFrozen(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a redis-server")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	t.Parallel()
	dir, err := os.MkdirTemp("", "rd")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	out, err := exec.Command("../../scripts/start-redis.sh", dir).Output()
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(dir, "redis.pid"))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGCONT)
		_ = exec.Command("../../scripts/stop-redis.sh", dir).Run()
	})

	b := setup(t, testkit.OpenSQLite, options{})
	// Redis's own timeouts as in production (500 ms reads): the budget,
	// not they, must bound a request.
	limiter, err := redislimit.New(strings.TrimSpace(string(out)), 3, redislimit.WithKeyPrefix("frozen:"+b.cred.ClientID+":"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = limiter.Close() })
	logs := &testkit.Buffer{}
	var failures atomic.Int32
	api, err := httpapi.New(httpapi.Options{Gateway: b.gw, Now: b.clock.Now, Log: slog.New(slog.NewTextHandler(logs, nil)),
		// A budget above a loaded machine's worst healthy round trip, yet
		// well under Redis's own 500 ms and the client's 400 ms.
		Limiter: limiter, RateLimit: 3, LimiterBudget: 200 * time.Millisecond, LimiterFailed: func() { failures.Add(1) }})
	require.NoError(t, err)
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	// A request that waited for the frozen Redis's 500 ms would miss this.
	client := &http.Client{Timeout: 400 * time.Millisecond}
	// get returns its error rather than failing the test: it also runs
	// in Eventually's goroutine.
	get := func() (int, error) {
		req, err := http.NewRequestWithContext(context.Background(), "GET", srv.URL+"/api/v1/wallet/balance", nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("stpi", b.cred.ClientID)
		req.Header.Set("stps", b.cred.ClientSecret)
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	statuses := func(n int) []int {
		var got []int
		for range n {
			st, err := get()
			require.NoError(t, err)
			got = append(got, st)
		}
		return got
	}

	// The connection and the script are ready before anything is counted.
	require.Eventually(t, func() bool {
		_, err := limiter.Allow(context.Background(), "warm-up", time.Now())
		return err == nil
	}, 10*time.Second, 50*time.Millisecond)

	// Redis answering: its limit of 3.
	require.Equal(t, []int{200, 200, 200, 429}, statuses(4))
	require.Zero(t, failures.Load())

	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	// This node's own limit, which had counted nothing: 3 more, then 429.
	require.Equal(t, []int{200, 200, 200, 429, 429, 429}, statuses(6))
	require.Equal(t, int32(6), failures.Load(), "every request decided without Redis is counted")
	require.Equal(t, 1, strings.Count(logs.String(), "shared rate limiter unavailable"), logs.String())

	require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
	// Once the pause after the failure is over, Redis decides again: its
	// window still holds the first 3 requests.
	require.Eventually(t, func() bool {
		st, err := get()
		return err == nil && st == http.StatusTooManyRequests && strings.Contains(logs.String(), "shared rate limiter answers again")
	}, 10*time.Second, 100*time.Millisecond)
	before := failures.Load()
	require.Equal(t, []int{429, 429}, statuses(2))
	require.Equal(t, before, failures.Load(), "Redis decides again")
	require.Equal(t, 1, strings.Count(logs.String(), "shared rate limiter unavailable"))
	require.Equal(t, 1, strings.Count(logs.String(), "shared rate limiter answers again"))
}
