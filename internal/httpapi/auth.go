package httpapi

import (
	"context"
	"net"
	"net/http"
	"strconv"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/ratelimit"
)

// authenticate guards everything under /api/v1/: it checks the stpi/stps
// headers before routing (a bad credential gets 401 even on an unknown path),
// applies the rate limit — per client, or per remote IP for requests without
// valid credentials — sets the X-RateLimit-* headers on every response, and
// puts the client in the request context.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A failure to check the credentials (the database out of reach: 503)
		// is limited and answered as a bad credential is, per remote IP, so
		// that it too carries the X-RateLimit-* headers.
		c, authErr := s.gw.Authenticate(r.Context(), r.Header.Get("stpi"), r.Header.Get("stps"))
		key := "client:" + c.ID
		if authErr != nil {
			key = "ip:" + remoteIP(r)
		}
		if s.limiter != nil {
			d, err := s.limiter.Allow(r.Context(), key, s.now())
			if err != nil {
				// Fail open: serve without the shared limit, but say so.
				s.logger(r.Context()).WarnContext(r.Context(), "rate limiter unavailable", "error", err.Error())
				if s.limiterFailed != nil {
					s.limiterFailed()
				}
				h := w.Header()
				h.Set("X-RateLimit-Limit", strconv.Itoa(s.rateLimit))
				h.Set("X-RateLimit-Remaining", strconv.Itoa(s.rateLimit))
				h.Set("X-RateLimit-Reset", "0")
			} else {
				h := w.Header()
				h.Set("X-RateLimit-Limit", strconv.Itoa(d.Limit))
				h.Set("X-RateLimit-Remaining", strconv.Itoa(d.Remaining))
				h.Set("X-RateLimit-Reset", strconv.Itoa(d.Reset))
				if !d.Allowed {
					if s.limited != nil {
						s.limited()
					}
					writeRateLimited(w, d)
					return
				}
			}
		}
		if authErr != nil {
			s.writeError(w, r, authErr)
			return
		}
		noteLog(r, c.ID, "")
		// The client's clock goes with every use case the request calls.
		ctx := gateway.WithClientClock(context.WithValue(r.Context(), clientKey, c), c)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// writeRateLimited writes the 429 body, the same on every path.
func writeRateLimited(w http.ResponseWriter, d ratelimit.Decision) {
	retry := max(1, d.Reset)
	w.Header().Set("Retry-After", strconv.Itoa(retry))
	writeJSON(w, http.StatusTooManyRequests, errorBody{StatusCode: http.StatusTooManyRequests,
		Message: "Rate limit exceeded", Error: http.StatusText(http.StatusTooManyRequests), RetryAfter: &retry})
}

func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// client returns the authenticated client of the request.
func client(r *http.Request) pix.Client {
	c, _ := r.Context().Value(clientKey).(pix.Client)
	return c
}
