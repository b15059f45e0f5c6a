package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

type ctxKey int

const (
	requestIDKey ctxKey = iota
	clientKey
	patternKey
)

// patternHolder carries what the request's log line reports back out to
// observe: the innermost matched route pattern (nested muxes set Pattern on
// their own request copies), the authenticated client and the transaction
// the request created or refunded, if any — one line per request says what
// it did.
type patternHolder struct{ pattern, clientID, transactionID string }

// noteLog records the request's client or transaction (either may be "")
// for its log line.
func noteLog(r *http.Request, clientID, transactionID string) {
	if ph, ok := r.Context().Value(patternKey).(*patternHolder); ok {
		if clientID != "" {
			ph.clientID = clientID
		}
		if transactionID != "" {
			ph.transactionID = transactionID
		}
	}
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusRecorder) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// logger returns the server's logger. Built with LogHandler, its records
// logged with a request context carry request_id.
func (s *Server) logger(context.Context) *slog.Logger { return s.log }

// observe is the outermost middleware: request id, security headers, panic
// recovery (the spec's 500 body, never a stack trace) and one log line per
// request with the route pattern, never the raw path's secrets or bodies.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			id = newRequestID()
		}
		h := w.Header()
		h.Set("X-Request-Id", id)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		if r.TLS != nil {
			h.Set("Strict-Transport-Security", "max-age=63072000; includeSubDomains")
		}
		holder := &patternHolder{}
		ctx := context.WithValue(context.WithValue(r.Context(), requestIDKey, id), patternKey, holder)
		r = r.WithContext(ctx)
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.logger(ctx).ErrorContext(ctx, "panic serving request", "route", r.Pattern, "panic", fmt.Sprintf("%T", v))
				if !rec.wrote {
					s.writeError(rec, r, fmt.Errorf("panic"))
				}
			}
			r.Pattern = holder.pattern
			attrs := append(make([]slog.Attr, 0, 6), slog.String("method", r.Method), slog.String("route", r.Pattern),
				slog.Int("status", rec.status), slog.Int64("duration_us", time.Since(start).Microseconds()))
			if holder.clientID != "" {
				attrs = append(attrs, slog.String("client_id", holder.clientID))
			}
			if holder.transactionID != "" {
				attrs = append(attrs, slog.String("transaction_id", holder.transactionID))
			}
			s.logger(ctx).LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
			if s.metrics != nil {
				s.metrics(r, rec.status, time.Since(start))
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

// routed serves mux, answering unknown paths (404) and wrong methods (405,
// with Allow) with the JSON error body of the path's family instead of the
// mux's plain text.
func (s *Server) routed(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			if ph, ok := r.Context().Value(patternKey).(*patternHolder); ok {
				ph.pattern = pattern
			}
			mux.ServeHTTP(w, r)
			return
		}
		probe := &headerProbe{header: http.Header{}}
		h.ServeHTTP(probe, r)
		switch probe.status {
		case http.StatusMethodNotAllowed:
			w.Header().Set("Allow", probe.header.Get("Allow"))
			s.writeError(w, r, errMethodNotAllowed)
		case http.StatusNotFound, 0:
			s.writeError(w, r, errRouteNotFound)
		default:
			// A redirect to the cleaned path: let the mux answer it.
			mux.ServeHTTP(w, r)
		}
	})
}

// headerProbe captures what a mux's internal 404/405/redirect handler would
// write, without writing it.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header { return p.header }
func (p *headerProbe) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return len(b), nil
}
func (p *headerProbe) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}
