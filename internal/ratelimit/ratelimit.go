// Package ratelimit owns request rate limiting: at most N accepted requests
// per key in any rolling 60 s window. The in-memory Limiter here serves one
// node; ratelimit/redis shares the same window across nodes.
package ratelimit

import (
	"context"
	"hash/maphash"
	"sync"
	"time"
)

// Window is the rolling window every limit is counted over.
const Window = 60 * time.Second

// Decision is the outcome of one request.
type Decision struct {
	Allowed   bool
	Limit     int
	Remaining int
	// Reset is the number of whole seconds until the oldest counted request
	// leaves the window (0 when none is counted). For a refused request it is
	// also the Retry-After.
	Reset int
}

// Limiter decides whether a request under key may proceed and, if so,
// counts it. Refused requests are not counted.
type Limiter interface {
	Allow(ctx context.Context, key string, now time.Time) (Decision, error)
}

// ceilSeconds rounds d up to whole seconds.
func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d + time.Second - 1) / time.Second)
}

// Memory is an exact rolling-window limiter held in this process's memory.
// Each key keeps the times of its accepted requests in the window (at most
// Limit of them); keys idle for a whole window are evicted, so memory is
// bounded by the number of keys active in the last minute.
type Memory struct {
	limit  int
	seed   maphash.Seed
	shards [64]shard
}

type shard struct {
	mu        sync.Mutex
	keys      map[string]*ring
	lastSweep time.Time
}

// ring holds the accepted request times of one key, oldest first. It grows
// with use (never beyond the limit) and compacts as times leave the window,
// so an idle or light key costs a few bytes whatever the limit.
type ring struct {
	times []time.Time
	start int
	n     int
}

func (r *ring) oldest() time.Time { return r.times[r.start] }

func (r *ring) pop() {
	r.times[r.start] = time.Time{}
	r.start++
	r.n--
	if r.n == 0 {
		r.times, r.start = r.times[:0], 0
	}
}

func (r *ring) push(t time.Time) {
	if r.start > 0 && len(r.times) == cap(r.times) && r.start >= len(r.times)/2 {
		// Reuse the dead prefix before growing.
		copy(r.times, r.times[r.start:])
		r.times = r.times[:r.n]
		r.start = 0
	}
	r.times = append(r.times, t)
	r.n++
}

func (r *ring) newest() time.Time { return r.times[r.start+r.n-1] }

// NewMemory returns an in-memory limiter of limit requests per Window.
func NewMemory(limit int) *Memory {
	m := &Memory{limit: limit, seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].keys = map[string]*ring{}
	}
	return m
}

// Allow implements Limiter.
func (m *Memory) Allow(_ context.Context, key string, now time.Time) (Decision, error) {
	s := &m.shards[maphash.String(m.seed, key)%uint64(len(m.shards))]
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.lastSweep) > Window {
		s.sweep(now)
	}
	r := s.keys[key]
	if r == nil {
		r = &ring{}
		s.keys[key] = r
	}
	for r.n > 0 && !now.Before(r.oldest().Add(Window)) {
		r.pop()
	}
	d := Decision{Limit: m.limit}
	if r.n >= m.limit {
		d.Reset = max(1, ceilSeconds(r.oldest().Add(Window).Sub(now)))
		return d, nil
	}
	r.push(now)
	d.Allowed = true
	d.Remaining = m.limit - r.n
	d.Reset = max(1, ceilSeconds(r.oldest().Add(Window).Sub(now)))
	return d, nil
}

// sweep evicts keys with no request in the window.
func (s *shard) sweep(now time.Time) {
	s.lastSweep = now
	for k, r := range s.keys {
		if r.n == 0 || !now.Before(r.newest().Add(Window)) {
			delete(s.keys, k)
		}
	}
}

// Len returns the number of keys held (for tests of eviction).
func (m *Memory) Len() int {
	n := 0
	for i := range m.shards {
		m.shards[i].mu.Lock()
		n += len(m.shards[i].keys)
		m.shards[i].mu.Unlock()
	}
	return n
}
