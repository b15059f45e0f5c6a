package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// unavailableRetry is the Retry-After of a 503 while the database is out
// of reach: the background work retries on its own within 30 s, a client
// may well try sooner.
const unavailableRetry = 5 * time.Second

// unavailableMessage is the message of that 503 (docs/production.md, "Outages of the database").
const unavailableMessage = "Service temporarily unavailable"

// outageLog says that requests fail because the database is out of reach
// at most once a minute, with how many failed meanwhile, so that an
// outage under load does not write a line per request.
type outageLog struct {
	mu     sync.Mutex
	logged time.Time
	quiet  int
}

// note reports whether to log now, and how many failures were not logged
// since the last line.
func (o *outageLog) note(now time.Time) (bool, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.logged.IsZero() && now.Sub(o.logged) < time.Minute {
		o.quiet++
		return false, 0
	}
	n := o.quiet
	o.logged, o.quiet = now, 0
	return true, n
}

// writeUnavailable answers a request that failed because the database
// cannot be reached: 503 with Retry-After, in the family's error shape.
func (s *Server) writeUnavailable(w http.ResponseWriter, r *http.Request, err error) {
	ctx := r.Context()
	if ok, quiet := s.outage.note(time.Now()); ok && ctx.Err() == nil {
		s.logger(ctx).WarnContext(ctx, "database unavailable; answering 503", "error", err.Error(), "not_logged", quiet)
	}
	setUnavailable(w)
	body := errorBody{StatusCode: http.StatusServiceUnavailable, Message: unavailableMessage}
	if familyOf(r) == gatewayFamily {
		body.Error = http.StatusText(http.StatusServiceUnavailable)
	}
	writeJSON(w, http.StatusServiceUnavailable, body)
}

func setUnavailable(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(int(unavailableRetry/time.Second)))
}

// readyLogged keeps /readyz's "not ready" line to once a minute as well.
func (s *Server) notReady(ctx context.Context, err error) {
	if ok, quiet := s.readyLog.note(time.Now()); ok {
		s.logger(ctx).WarnContext(ctx, "not ready", "error", err.Error(), "not_logged", quiet)
	}
}
