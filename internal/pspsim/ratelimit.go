package pspsim

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
)

// rateLimiter is a token bucket over the whole API: it holds at most one
// second's worth of requests and refills at the rate, by the simulator's
// clock (Options.Now), so that a test with a frozen clock sees exactly
// the rate pass and then 429s until it advances the clock.
type rateLimiter struct {
	tokens float64
	last   time.Time
}

// SetRateLimit lets at most perSecond API requests a second through (a
// burst of up to one second's worth), as Options.RateLimit does at start;
// SetRateLimit(0) ends the limit. The bucket starts full.
func (s *Server) SetRateLimit(perSecond int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.RateLimit = max(perSecond, 0)
	s.limiter = rateLimiter{tokens: float64(s.opts.RateLimit), last: s.now()}
}

// allow takes one request from the bucket and returns 0; when the bucket
// is empty it returns how long until a request would be let through, and
// the limit.
func (s *Server) allow() (time.Duration, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rate := float64(s.opts.RateLimit)
	if rate <= 0 {
		return 0, 0
	}
	now := s.now()
	if s.limiter.last.IsZero() {
		s.limiter = rateLimiter{tokens: rate, last: now}
	}
	if elapsed := now.Sub(s.limiter.last); elapsed > 0 {
		s.limiter.tokens = min(rate, s.limiter.tokens+elapsed.Seconds()*rate)
		s.limiter.last = now
	}
	if s.limiter.tokens >= 1 {
		s.limiter.tokens--
		return 0, s.opts.RateLimit
	}
	return max(time.Duration((1-s.limiter.tokens)/rate*float64(time.Second)), 1), s.opts.RateLimit
}

// withRateLimit answers 429, with Retry-After in whole seconds (at least
// 1) and a problem body, to a request beyond Options.RateLimit, without
// handling it: nothing the request asked is done, and a refused request
// takes nothing from the bucket. Token requests are routed around it:
// neither limited nor counted, so that a client can always renew its
// token.
func (s *Server) withRateLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wait, limit := s.allow()
		if wait == 0 {
			next.ServeHTTP(w, r)
			return
		}
		secs := max(1, int(math.Ceil(wait.Seconds())))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		writeProblem(w, http.StatusTooManyRequests, "LimiteDeRequisicoesExcedido", "Limite de requisições excedido",
			fmt.Sprintf("more than %d requests per second; retry after %d s", limit, secs), nil)
	})
}
