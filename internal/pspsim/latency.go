package pspsim

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"time"
)

// SetLatency makes every later API request, token requests included, wait
// d ± jitter (uniform) before it is handled, as Options.Latency does at
// start; SetLatency(0, 0) ends it. A request already waiting keeps its
// delay.
func (s *Server) SetLatency(d, jitter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.Latency, s.opts.LatencyJitter = max(d, 0), max(jitter, 0)
}

// delay draws one request's latency from Latency and LatencyJitter.
func (s *Server) delay() time.Duration {
	s.mu.Lock()
	d, jitter := s.opts.Latency, s.opts.LatencyJitter
	s.mu.Unlock()
	if jitter > 0 {
		d += time.Duration(rand.Int64N(int64(2*jitter)+1)) - jitter //nolint:gosec // G404: simulated latency, guards nothing
	}
	return max(d, 0)
}

// withLatency delays each request by delay(). A client that gives up
// while it waits, or a server that closes, drops the connection without
// an answer: the request never reaches the PSP, so nothing it asked is
// done.
func (s *Server) withLatency(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := s.delay(); d > 0 {
			// net/http notices a client that went away only once the body
			// is read: read it now (the handler's own limit still applies
			// to the rest).
			head, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
			if err != nil {
				panic(http.ErrAbortHandler)
			}
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				panic(http.ErrAbortHandler)
			case <-s.closing:
				t.Stop()
				panic(http.ErrAbortHandler)
			}
		}
		next.ServeHTTP(w, r)
	})
}
