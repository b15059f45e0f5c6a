package redis

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/ratelimit"
	"github.com/pixgate/pixgate/internal/ratelimit/ratelimittest"
)

// redisURL returns the URL of the real Redis the tests run against, from
// PIXGATE_TEST_REDIS_URL. Without it the test skips, or fails under CI.
func redisURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("PIXGATE_TEST_REDIS_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("PIXGATE_TEST_REDIS_URL is not set (required when CI=true)")
		}
		t.Skip("PIXGATE_TEST_REDIS_URL is not set")
	}
	return u
}

// testPrefix is a key prefix unique to one test, so tests sharing one
// Redis do not interfere.
func testPrefix() string {
	return "pixgate:test:rl:" + rand.Text() + ":"
}

// newTestLimiter returns a Limiter on the test Redis, closed at cleanup.
func newTestLimiter(t *testing.T, limit int, prefix string) *Limiter {
	t.Helper()
	l, err := New(redisURL(t), limit, WithKeyPrefix(prefix))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	return l
}

func TestConformance(t *testing.T) {
	t.Parallel()
	ratelimittest.Exercise(t, func(t *testing.T, limit int) ratelimit.Limiter {
		return newTestLimiter(t, limit, testPrefix())
	})
}

func TestTwoNodesShareTheLimit(t *testing.T) {
	t.Parallel()
	const limit = 100
	prefix := testPrefix()
	nodes := []*Limiter{newTestLimiter(t, limit, prefix), newTestLimiter(t, limit, prefix)}
	var allowed atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 300)
	for i := range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := nodes[i%2].Allow(context.Background(), "client", ratelimittest.T0)
			if err != nil {
				errs <- err
				return
			}
			if d.Allowed {
				allowed.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, int32(limit), allowed.Load())
	// Either node now refuses, with the same Reset.
	for _, n := range nodes {
		d, err := n.Allow(context.Background(), "client", ratelimittest.T0.Add(time.Second))
		require.NoError(t, err)
		require.Equal(t, ratelimit.Decision{Limit: limit, Reset: 59}, d)
	}
}

func TestKeysArePrefixedAndExpire(t *testing.T) {
	t.Parallel()
	u := redisURL(t)
	prefix := testPrefix()
	l := newTestLimiter(t, 5, prefix)
	_, err := l.Allow(context.Background(), "c1", time.Now())
	require.NoError(t, err)

	opt, err := goredis.ParseURL(u)
	require.NoError(t, err)
	c := goredis.NewClient(opt)
	defer c.Close()
	ttl, err := c.PTTL(context.Background(), prefix+"c1").Result()
	require.NoError(t, err)
	require.Greater(t, ttl, 50*time.Second)
	require.LessOrEqual(t, ttl, ratelimit.Window)
	n, err := c.ZCard(context.Background(), prefix+"c1").Result()
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
}

func TestDefaultPrefix(t *testing.T) {
	t.Parallel()
	l, err := New("redis://127.0.0.1:6379", 1)
	require.NoError(t, err)
	defer l.Close()
	require.Equal(t, "pixgate:rl:", l.prefix)
	require.Equal(t, 1, l.Limit())
}

func TestScriptReloadedAfterFlush(t *testing.T) {
	t.Parallel()
	u := redisURL(t)
	l := newTestLimiter(t, 2, testPrefix())
	_, err := l.Allow(context.Background(), "k", ratelimittest.T0)
	require.NoError(t, err)
	// SCRIPT FLUSH drops the cached script: EVALSHA fails with NOSCRIPT and
	// the limiter falls back to EVAL.
	opt, err := goredis.ParseURL(u)
	require.NoError(t, err)
	c := goredis.NewClient(opt)
	defer c.Close()
	require.NoError(t, c.ScriptFlush(context.Background()).Err())
	d, err := l.Allow(context.Background(), "k", ratelimittest.T0)
	require.NoError(t, err)
	require.Equal(t, ratelimit.Decision{Allowed: true, Limit: 2, Remaining: 0, Reset: 60}, d)
}

func TestUnreachableRedisFailsFast(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"redis://127.0.0.1:1",                         // connection refused
		"unix:///nonexistent/pixgate-test/redis.sock", // no such socket
		"redis://10.255.255.1:6379",                   // unroutable: dial timeout
		"rediss://user:secret@127.0.0.1:1/0",          // TLS, refused
		"redis://127.0.0.1:1?dial_timeout=30s&db=0",   // URL options do not lengthen the wait
	} {
		t.Run(u, func(t *testing.T) {
			t.Parallel()
			l, err := New(u, 10)
			require.NoError(t, err)
			defer l.Close()
			for range 2 {
				start := time.Now()
				d, err := l.Allow(context.Background(), "k", time.Now())
				require.Error(t, err)
				require.Equal(t, ratelimit.Decision{}, d)
				require.Less(t, time.Since(start), 2*time.Second)
				require.NotContains(t, err.Error(), "secret")
			}
			require.Error(t, l.Ping(context.Background()))
		})
	}
}

func TestHangingRedisFailsFast(t *testing.T) {
	t.Parallel()
	// A server that accepts connections and never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	l, err := New("redis://"+ln.Addr().String(), 10)
	require.NoError(t, err)
	defer l.Close()
	start := time.Now()
	_, err = l.Allow(context.Background(), "k", time.Now())
	require.Error(t, err)
	require.Less(t, time.Since(start), 2*time.Second)
}

func TestNewRejectsBadInput(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"http://127.0.0.1:6379",
		"unix://",
		"redis://user:hunter2@[::1",
		"://hunter2",
	} {
		_, err := New(u, 10)
		require.Error(t, err, u)
		require.True(t, strings.HasPrefix(err.Error(), "ratelimit/redis: "), err.Error())
		require.NotContains(t, err.Error(), "hunter2")
	}
	_, err := New("redis://127.0.0.1:6379", 0)
	require.Error(t, err)
}

func TestURLForms(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"redis://127.0.0.1:6379",
		"redis://:pw@localhost:6379/2",
		"rediss://user:pw@redis.example:6380/0",
		"unix:///tmp/redis.sock",
		"unix://user:pw@/tmp/redis.sock?db=3",
	} {
		l, err := New(u, 10)
		require.NoError(t, err, u)
		require.NoError(t, l.Close())
	}
}

func TestResetSeconds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ms   int64
		want int
	}{{-5, 1}, {0, 1}, {1, 1}, {999, 1}, {1000, 1}, {1001, 2}, {59_999, 60}, {60_000, 60}, {75_000, 60}} {
		require.Equal(t, c.want, resetSeconds(c.ms, 60_000), "%d ms", c.ms)
	}
}

func TestDriverLogger(t *testing.T) {
	t.Parallel()
	// Quiets the driver for every test in this package (it would print a
	// line per failed dial of TestUnreachableRedisFailsFast).
	SetDriverLogger(nil)
	var buf strings.Builder
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	driverLogger{l}.Printf(context.Background(), "dial %s failed", "x")
	require.Contains(t, buf.String(), `msg="dial x failed" component=go-redis`)
	driverLogger{}.Printf(context.Background(), "dropped")
}
