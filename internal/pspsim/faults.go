package pspsim

import (
	"io"
	"net/http"
	"strings"
	"time"
)

// FaultKind is how an injected fault answers.
type FaultKind string

// Kinds of fault.
const (
	// FaultError answers 500 without doing anything.
	FaultError FaultKind = "error"
	// FaultHang does nothing and never answers: the client times out.
	FaultHang FaultKind = "hang"
	// FaultCommitThenError does what the request asks (a send, a
	// devolução, a cob is created), then answers 500: the caller cannot
	// tell that it happened.
	FaultCommitThenError FaultKind = "commit_then_error"
	// FaultCommitThenHang does what the request asks, then never answers.
	FaultCommitThenHang FaultKind = "commit_then_hang"
)

// Fault makes the next Times requests whose method is Method (any when
// empty) and whose path starts with PathPrefix (for example "/v3/gn/pix/"
// or "/v2/pix/") fail as Kind. Faults apply after the token check.
type Fault struct {
	Method     string    `json:"method,omitempty"`
	PathPrefix string    `json:"path_prefix"`
	Kind       FaultKind `json:"kind"`
	// Times is how many matching requests fail; at least 1.
	Times int `json:"times,omitempty"`
}

type activeFault struct {
	Fault
	left int
}

// AddFault arms f. Faults are matched in the order they were added.
func (s *Server) AddFault(f Fault) {
	if f.Times < 1 {
		f.Times = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &activeFault{Fault: f, left: f.Times})
}

// ClearFaults disarms every fault, ends SetDown and LoseWebhooks.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults, s.down, s.loseHooks = nil, false, 0
}

// SetDown makes every request, token requests included, answer 503 while
// down is true.
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// LoseWebhooks drops the next n webhook deliveries (they are recorded as
// lost and never sent); n < 0 drops every one until LoseWebhooks(0).
func (s *Server) LoseWebhooks(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loseHooks = n
}

// takeFault consumes and returns the first armed fault matching the
// request, or "".
func (s *Server) takeFault(method, path string) FaultKind {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if (f.Method == "" || strings.EqualFold(f.Method, method)) && strings.HasPrefix(path, f.PathPrefix) {
			f.left--
			if f.left <= 0 {
				s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			}
			return f.Kind
		}
	}
	return ""
}

// withFaults applies the armed faults to the requests reaching next.
func (s *Server) withFaults(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch s.takeFault(r.Method, r.URL.Path) {
		case "":
			next.ServeHTTP(w, r)
		case FaultError:
			writeProblem(w, http.StatusInternalServerError, "ErroInternoDoServidor", "Erro interno do servidor", "injected fault", nil)
		case FaultHang:
			s.hang(w, r)
		case FaultCommitThenError:
			next.ServeHTTP(&discardWriter{h: http.Header{}}, r)
			writeProblem(w, http.StatusInternalServerError, "ErroInternoDoServidor", "Erro interno do servidor", "injected fault", nil)
		case FaultCommitThenHang:
			next.ServeHTTP(&discardWriter{h: http.Header{}}, r)
			s.hang(w, r)
		}
	})
}

// hang answers nothing until the client gives up or the server closes; the
// request log records status 0.
func (s *Server) hang(w http.ResponseWriter, r *http.Request) {
	if sw, ok := w.(*statusWriter); ok {
		sw.hung = true
	}
	// net/http notices a client that went away only once the body is read.
	_, _ = io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, maxBody))
	select {
	case <-r.Context().Done():
	case <-s.closing:
	}
	// Drop the connection rather than answer: a hang has no response.
	panic(http.ErrAbortHandler)
}

// discardWriter swallows the response of a committed request whose answer
// a fault replaces.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}

// Request is one request the API received, as the client saw it.
type Request struct {
	Method string
	Path   string
	// Query is the raw query, such as a list's filters.
	Query string
	// Status is the answer's status; 0 when the request hung.
	Status int
	At     time.Time
}

// Requests returns every request received so far (at most the last
// 10,000), oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Count is how many PUTs for one id reached the simulated PSP and how many
// of them it accepted (created the send or devolução).
type Count struct {
	Puts     int `json:"puts"`
	Accepted int `json:"accepted"`
}

// SendCount counts the PUT /v3/gn/pix/{idEnvio} for idEnvio. Requests that
// an injected FaultError or FaultHang stopped never reach the PSP and are
// not counted, nor is one whose body never arrived whole (its client died
// or gave up while sending it: over HTTP/2 the headers go first, and the
// handler starts on them); committed ones are.
func (s *Server) SendCount(idEnvio string) Count {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.sendPuts[idEnvio]
}

// RefundCount counts the PUT /pix/{e2eid}/devolucao/{id} for the devolução
// id (of any e2eid), like SendCount.
func (s *Server) RefundCount(id string) Count {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.refundPuts[id]
}

// statusWriter records the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	status int
	hung   bool
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// withLog records and logs every request, and answers 503 while down.
func (s *Server) withLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			status := sw.status
			if sw.hung {
				status = 0
			}
			s.mu.Lock()
			s.requests = appendBounded(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Status: status, At: s.now()})
			s.mu.Unlock()
			s.log.Debug("pspsim request", "method", r.Method, "path", r.URL.Path, "status", status)
		}()
		s.mu.Lock()
		down := s.down
		s.mu.Unlock()
		if down {
			writeProblem(sw, http.StatusServiceUnavailable, "ServicoIndisponivel", "Serviço indisponível", "the simulated PSP is down", nil)
			return
		}
		next.ServeHTTP(sw, r)
	})
}
