// Package redis is a ratelimit.Limiter whose state lives in Redis, so that
// every pixgate node sharing one Redis enforces one limit per key.
//
// It reproduces ratelimit.Memory exactly: a rolling window (ratelimit.Window)
// of accepted request times per key, refused requests not counted. Each key
// is a sorted set (score = request time in Unix milliseconds) updated by one
// Lua script, so concurrent requests from any number of nodes are decided
// atomically.
//
// The request time is the caller's now, not Redis's clock (so an injected
// clock works and the decision matches Memory's). Consequently the clocks of
// all nodes must be kept in sync (NTP); skew between nodes shifts their
// windows by the same amount. Times are kept at millisecond resolution.
package redis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/pixgate/pixgate/internal/ratelimit"
)

// DefaultKeyPrefix is prepended to every rate-limit key stored in Redis.
const DefaultKeyPrefix = "pixgate:rl:"

// Default timeouts: short, so that a Redis outage fails requests over to the
// caller's fail-open path instead of stalling them.
const (
	DefaultDialTimeout      = time.Second
	DefaultReadWriteTimeout = 500 * time.Millisecond
)

// allowScript trims the window, counts, adds the request if it fits, and
// reports the oldest counted request, all atomically.
//
// KEYS[1] the key; ARGV[1] now (ms); ARGV[2] window (ms); ARGV[3] limit;
// ARGV[4] a member unique to this request.
// Returns {allowed (0|1), counted requests after this one, oldest score (ms)
// or -1 when none is counted}.
var allowScript = goredis.NewScript(`
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local allowed = 0
if count < limit then
  redis.call('ZADD', key, now, ARGV[4])
  count = count + 1
  allowed = 1
end
local oldest = -1
local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
if first[2] then
  oldest = tonumber(first[2])
end
if count > 0 then
  redis.call('PEXPIRE', key, window)
end
return {allowed, count, oldest}
`)

// Limiter is a ratelimit.Limiter backed by Redis. It is safe for concurrent
// use; create one per process and Close it on shutdown.
type Limiter struct {
	client  *goredis.Client
	limit   int
	prefix  string
	timeout time.Duration
}

var _ ratelimit.Limiter = (*Limiter)(nil)

type config struct {
	prefix      string
	dialTimeout time.Duration
	rwTimeout   time.Duration
}

// Option customises New.
type Option func(*config)

// WithKeyPrefix replaces DefaultKeyPrefix (tests use a random prefix so
// they do not interfere with each other).
func WithKeyPrefix(prefix string) Option {
	return func(c *config) { c.prefix = prefix }
}

// WithTimeouts replaces the dial timeout (default 1 s) and the socket
// read/write timeout (default 500 ms). Non-positive values keep the default.
func WithTimeouts(dial, readWrite time.Duration) Option {
	return func(c *config) {
		if dial > 0 {
			c.dialTimeout = dial
		}
		if readWrite > 0 {
			c.rwTimeout = readWrite
		}
	}
}

// New returns a Limiter of limit accepted requests per ratelimit.Window per
// key, on the Redis at url: redis://[user:pass@]host:port[/db],
// rediss://… (TLS) or unix:///path/to/redis.sock[?db=N]. It does not
// connect: a Redis that is down at start makes Allow fail (so the caller
// can fail open) until it comes back. Use Ping to check it.
func New(url string, limit int, opts ...Option) (*Limiter, error) {
	if limit < 1 {
		return nil, fmt.Errorf("ratelimit/redis: limit must be at least 1, got %d", limit)
	}
	cfg := config{
		prefix:      DefaultKeyPrefix,
		dialTimeout: DefaultDialTimeout,
		rwTimeout:   DefaultReadWriteTimeout,
	}
	for _, o := range opts {
		o(&cfg)
	}
	ro, err := goredis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("ratelimit/redis: parse Redis URL: %w", redactURLError(err))
	}
	ro.DialTimeout = cfg.dialTimeout
	ro.ReadTimeout = cfg.rwTimeout
	ro.WriteTimeout = cfg.rwTimeout
	ro.ContextTimeoutEnabled = true
	// One dial attempt and no command retries: the script is not idempotent
	// (a retry after a lost reply could count a request twice), and during an
	// outage failing fast is what the caller wants.
	ro.DialerRetries = 1
	ro.MaxRetries = -1
	return &Limiter{
		client:  goredis.NewClient(ro),
		limit:   limit,
		prefix:  cfg.prefix,
		timeout: cfg.dialTimeout + cfg.rwTimeout,
	}, nil
}

// redactURLError drops the URL (which may hold a password) from a
// *url.Error, keeping the reason.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Limit returns the number of requests allowed per window.
func (l *Limiter) Limit() int { return l.limit }

// Allow implements ratelimit.Limiter with exactly ratelimit.Memory's
// semantics. It returns an error, and a zero Decision, when Redis cannot be
// reached or answers unexpectedly; the HTTP layer then fails open. A call
// never takes much longer than the dial timeout plus the read/write timeout
// (1.5 s with the defaults).
func (l *Limiter) Allow(ctx context.Context, key string, now time.Time) (ratelimit.Decision, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	nowMs := now.UnixMilli()
	windowMs := ratelimit.Window.Milliseconds()
	member := strconv.FormatInt(nowMs, 10) + "-" + strconv.FormatUint(rand.Uint64(), 36) //nolint:gosec // G404: only keeps members unique, guards nothing
	res, err := allowScript.Run(ctx, l.client, []string{l.prefix + key},
		nowMs, windowMs, l.limit, member).Int64Slice()
	if err != nil {
		return ratelimit.Decision{}, fmt.Errorf("ratelimit/redis: allow: %w", err)
	}
	if len(res) != 3 {
		return ratelimit.Decision{}, fmt.Errorf("ratelimit/redis: allow: unexpected script reply %v", res)
	}
	allowed, count, oldest := res[0] == 1, res[1], res[2]
	d := ratelimit.Decision{Allowed: allowed, Limit: l.limit}
	if allowed {
		d.Remaining = max(0, l.limit-int(count))
	}
	if count > 0 && oldest >= 0 {
		d.Reset = resetSeconds(oldest+windowMs-nowMs, windowMs)
	}
	return d, nil
}

// resetSeconds turns the milliseconds until the oldest counted request
// leaves the window into whole seconds, rounded up, between 1 and the
// window (a request stamped by a node whose clock runs ahead could
// otherwise report more than the window).
func resetSeconds(ms, windowMs int64) int {
	s := (ms + 999) / 1000
	return int(min(max(s, 1), windowMs/1000))
}

// Ping checks that Redis answers, within the Allow timeout.
func (l *Limiter) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	if err := l.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("ratelimit/redis: ping: %w", err)
	}
	return nil
}

// Close releases the Redis connections. Allow fails after Close.
func (l *Limiter) Close() error {
	if err := l.client.Close(); err != nil {
		return fmt.Errorf("ratelimit/redis: close: %w", err)
	}
	return nil
}
