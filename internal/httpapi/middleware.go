package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
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
			// A handler that aborts its response (http.ErrAbortHandler: a
			// stream that failed after its status) still gets its request
			// line and metrics, then the panic goes on to net/http, which
			// closes the connection.
			v := recover()
			aborted := false
			if v != nil {
				if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					aborted = true
				} else {
					s.logger(ctx).ErrorContext(ctx, "panic serving request", "route", r.Pattern, "panic", fmt.Sprintf("%T", v))
					if !rec.wrote {
						s.writeError(rec, r, fmt.Errorf("panic"))
					}
				}
			}
			r.Pattern = holder.pattern
			attrs := append(make([]slog.Attr, 0, 7), slog.String("method", r.Method), slog.String("route", r.Pattern),
				slog.Int("status", rec.status), slog.Int64("duration_us", time.Since(start).Microseconds()))
			if aborted {
				attrs = append(attrs, slog.Bool("aborted", true))
			}
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
			if aborted {
				panic(v)
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

// routed serves mux, answering unknown paths (404) and wrong methods (405,
// with Allow) with the JSON error body of the path's family instead of the
// mux's plain text. It never lets the mux redirect: a path that is not in
// canonical form (//api/v1/…, /a/../b) or lacks a subtree's trailing slash
// is not a route, so it answers 404 — after authentication when it lies
// under /api/v1, which authenticates every path first. A matched
// request whose path, query or Idempotency-Key holds a NUL character or
// invalid UTF-8, or whose query gives a parameter twice, answers 400 naming
// the path value, parameter or header.
func (s *Server) routed(mux *http.ServeMux) http.Handler {
	notFound := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.writeError(w, r, errRouteNotFound) })
	apiNotFound := s.authenticate(notFound)
	noRoute := func(w http.ResponseWriter, r *http.Request, clean string) {
		if client(r).ID != "" || !underAPI(clean) {
			notFound.ServeHTTP(w, r)
			return
		}
		// Read the error family (and log the route) from the cleaned path.
		r2 := *r
		u := *r.URL
		u.Path, u.RawPath = clean, ""
		r2.URL = &u
		apiNotFound.ServeHTTP(w, &r2)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if clean := cleanPath(r.URL.Path); clean != r.URL.Path {
			noRoute(w, r, clean)
			return
		}
		h, pattern := mux.Handler(r)
		if pattern != "" {
			if pp := patternPath(pattern); pp == r.URL.Path+"/" && r.Method != http.MethodConnect {
				// The mux would redirect to the subtree's slash.
				noRoute(w, r, r.URL.Path)
				return
			}
			if ph, ok := r.Context().Value(patternKey).(*patternHolder); ok {
				ph.pattern = pattern
			}
			// /api/v1/ is checked inside, after authentication; the PSP's
			// webhook answers a path that is not text as any wrong path (404).
			if pattern != apiSubtree && pattern != pspWebhookSubtree {
				if err := requestError(r, pattern); err != nil {
					s.writeError(w, r, err)
					return
				}
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
		default:
			s.writeError(w, r, errRouteNotFound)
		}
	})
}

// apiSubtree is the root pattern of the authenticated API (routes.go).
const apiSubtree = "/api/v1/"

func underAPI(path string) bool {
	return path == "/api/v1" || strings.HasPrefix(path, apiSubtree)
}

// patternPath returns the path part of a ServeMux pattern ("GET /pay/{id}").
func patternPath(pattern string) string {
	if i := strings.IndexByte(pattern, '/'); i >= 0 {
		return pattern[i:]
	}
	return pattern
}

// cleanPath returns the canonical form of p as ServeMux computes it: rooted,
// without . or .. elements or repeated slashes, keeping a trailing slash.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		if len(p) == len(np)+1 && strings.HasPrefix(p, np) {
			return p
		}
		np += "/"
	}
	return np
}

// requestTextError checks the request's path, query and Idempotency-Key
// header: each must be valid UTF-8 without NUL characters (docs/api.md, Input rules),
// since identifiers read from them reach the database, and PostgreSQL
// refuses both. pattern names the path's wildcards.
func requestTextError(r *http.Request, pattern string) error {
	if !pix.ValidText(r.URL.Path) {
		return badTextError(pathField(r, pattern))
	}
	// A query without escapes is checked as it is, without parsing it.
	if q := r.URL.RawQuery; strings.IndexByte(q, '%') >= 0 || !pix.ValidText(q) {
		for k, vs := range r.URL.Query() {
			if !pix.ValidText(k) {
				return badTextError("query")
			}
			for _, v := range vs {
				if !pix.ValidText(v) {
					return badTextError(k)
				}
			}
		}
	}
	for _, v := range r.Header.Values("Idempotency-Key") {
		if !pix.ValidText(v) {
			return badTextError("Idempotency-Key")
		}
	}
	return nil
}

// pathField names the first path segment that is not valid text: its
// wildcard's name in pattern ({payment_id} → payment_id), else "path".
func pathField(r *http.Request, pattern string) string {
	segs := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	pats := strings.Split(strings.TrimPrefix(patternPath(pattern), "/"), "/")
	for i, seg := range segs {
		v, err := url.PathUnescape(seg)
		if err == nil && pix.ValidText(v) {
			continue
		}
		if i < len(pats) && strings.HasPrefix(pats[i], "{") {
			name := strings.TrimSuffix(strings.Trim(pats[i], "{}"), "...")
			if name != "$" {
				return name
			}
		}
		break
	}
	return "path"
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
