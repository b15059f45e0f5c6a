package httpapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Some requests never reach pixgate's handlers: net/http refuses a request
// it cannot parse (a control character in a header, headers over
// MaxHeaderBytes, a bad request line, an unknown transfer coding) by writing
// a fixed plain-text response straight to the connection, in one Write
// (and answers an unknown Expect header or "OPTIONS *" itself):
//
//	HTTP/1.1 <code> <text>\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n<body>
//
// and crypto/tls answers plain HTTP sent to an HTTPS port the same way. The
// listeners below replace exactly those responses with the documented JSON
// error body (gateway shape, since no path is known) and X-Request-Id, so
// that every response of the server has them.

// handshakeTimeout bounds a TLS handshake, as http.Server bounds its own by
// its header timeout.
const handshakeTimeout = 5 * time.Second

// Listener wraps ln (plain TCP) so that net/http's own error responses carry
// the JSON error body and X-Request-Id.
func (s *Server) Listener(ln net.Listener) net.Listener {
	return &errListener{Listener: ln, log: s.log}
}

type errListener struct {
	net.Listener
	log *slog.Logger
}

func (l *errListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &errConn{Conn: c, log: l.log}, nil
}

// errConn rewrites net/http's fixed error responses written to it, and
// refuses the requests framed both by length and by chunks (framing.go).
type errConn struct {
	net.Conn
	log *slog.Logger

	fr      framer
	pending []byte // what net/http may read next
	rerr    error  // the read error to report once pending is read
	refused atomic.Bool
}

// Read hands net/http the client's bytes as the framer releases them.
func (c *errConn) Read(p []byte) (int, error) {
	for {
		if len(c.pending) > 0 {
			n := copy(p, c.pending)
			c.pending = c.pending[n:]
			return n, nil
		}
		switch {
		case c.fr.state == frameEnd:
			return 0, io.EOF
		case c.rerr != nil:
			return 0, c.rerr
		}
		n, err := c.Conn.Read(p)
		c.pending = c.fr.feed(c.pending[:0], p[:n])
		if c.fr.refused {
			c.refused.Store(true)
		}
		if err == nil {
			continue
		}
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			// net/http's deadlines (an idle connection, a background
			// read it stops): what is held stays for the next Read.
			if len(c.pending) > 0 {
				continue
			}
			return 0, err
		}
		// The client is gone: net/http gets a partial header as it is.
		c.pending = append(c.pending, c.fr.hold...)
		c.fr.hold = nil
		c.rerr = err
	}
}

func (c *errConn) Write(b []byte) (int, error) {
	var out []byte
	if code, text, ok := parseServerError(b); ok {
		if code == http.StatusBadRequest && c.refused.Load() {
			text = smuggleReason
		}
		out = jsonErrorResponse(code, text, c.log)
	} else if out, ok = rewriteBareResponse(b, c.log); !ok {
		return c.Conn.Write(b)
	}
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// rewriteBareResponse handles the two responses net/http writes through its
// response writer without calling the handler: 417 to an Expect header
// other than 100-continue, and 200 to "OPTIONS *". They carry only
// Connection, Date and Content-Length: 0 — every handler's response has
// X-Request-Id and more — and arrive in one Write.
func rewriteBareResponse(b []byte, log *slog.Logger) ([]byte, bool) {
	head, ok := bytes.CutSuffix(b, []byte("\r\n\r\n"))
	if !ok || bytes.Contains(head, []byte("\r\n\r\n")) {
		return nil, false
	}
	lines := strings.Split(string(head), "\r\n")
	var date string
	rest := make([]string, 0, len(lines)-1)
	for _, l := range lines[1:] {
		if v, ok := strings.CutPrefix(l, "Date: "); ok && date == "" {
			date = v
			continue
		}
		rest = append(rest, l)
	}
	if date == "" {
		return nil, false
	}
	switch {
	case lines[0] == "HTTP/1.1 417 Expectation Failed" && slices.Equal(rest, []string{"Connection: close", "Content-Length: 0"}):
		return jsonErrorResponse(http.StatusExpectationFailed, "unsupported Expect header", log), true
	case lines[0] == "HTTP/1.1 200 OK" && slices.Equal(rest, []string{"Content-Length: 0"}):
		return []byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nDate: " + date + "\r\nX-Request-Id: " + newRequestID() + "\r\n\r\n"), true
	}
	return nil, false
}

// parseServerError recognises the exact responses net/http writes for a
// request it could not read, returning the status and the text it gave.
// Anything else — every response of a handler, which always carries more
// headers — is not one of them.
func parseServerError(b []byte) (code int, text string, ok bool) {
	const prefix = "HTTP/1.1 "
	const headers = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
	if !bytes.HasPrefix(b, []byte(prefix)) {
		return 0, "", false
	}
	i := bytes.Index(b, []byte(headers))
	if i < 0 {
		return 0, "", false
	}
	status, body := b[len(prefix):i], b[i+len(headers):]
	if len(status) < 5 || status[3] != ' ' || bytes.ContainsAny(status, "\r\n") {
		return 0, "", false
	}
	code, err := strconv.Atoi(string(status[:3]))
	if err != nil || code < 400 || code > 599 {
		return 0, "", false
	}
	switch {
	case bytes.Equal(body, status):
		return code, string(status[4:]), true
	case code == http.StatusNotImplemented && string(body) == "Unsupported transfer encoding":
		return code, string(body), true
	}
	return 0, "", false
}

// jsonErrorResponse is a whole HTTP/1.1 response with the gateway error
// body for code; text is what net/http said was wrong.
func jsonErrorResponse(code int, text string, log *slog.Logger) []byte {
	id := newRequestID()
	if log != nil {
		log.LogAttrs(context.Background(), slog.LevelInfo, "request refused before routing",
			slog.String("request_id", id), slog.Int("status", code), slog.String("reason", text))
	}
	msg := "Malformed request"
	if text != "" {
		msg += ": " + text
	}
	b, _ := json.Marshal(errorBody{StatusCode: code, Message: msg, Error: http.StatusText(code)})
	var out bytes.Buffer
	out.WriteString("HTTP/1.1 " + strconv.Itoa(code) + " " + http.StatusText(code) + "\r\n")
	out.WriteString("Content-Type: application/json\r\n")
	out.WriteString("Content-Length: " + strconv.Itoa(len(b)) + "\r\n")
	out.WriteString("X-Request-Id: " + id + "\r\n")
	out.WriteString("X-Content-Type-Options: nosniff\r\n")
	out.WriteString("Cache-Control: no-store\r\n")
	out.WriteString("Date: " + time.Now().UTC().Format(http.TimeFormat) + "\r\n")
	out.WriteString("Connection: close\r\n\r\n")
	out.Write(b)
	return out.Bytes()
}

// TLSListener serves TLS with config on ln, like tls.NewListener, but
// handshakes before handing a connection to net/http so that it can keep
// HTTP/2 (which net/http serves only on a *tls.Conn and which answers
// malformed requests with protocol frames, not text) while HTTP/1.1
// connections get the error rewriting of Listener. Plain HTTP sent to the
// port is answered with the JSON 400 instead of crypto/tls's text.
func (s *Server) TLSListener(ln net.Listener, config *tls.Config) net.Listener {
	ctx, cancel := context.WithCancel(context.Background()) //nolint:gosec // G118: Close calls cancel.
	l := &tlsErrListener{ln: ln, config: config, log: s.log, conns: make(chan net.Conn), errs: make(chan error),
		ctx: ctx, cancel: cancel}
	go l.acceptLoop()
	return l
}

type tlsErrListener struct {
	ln     net.Listener
	config *tls.Config
	log    *slog.Logger
	conns  chan net.Conn
	errs   chan error
	ctx    context.Context // done when the listener is closed
	cancel context.CancelFunc
	once   sync.Once
}

func (l *tlsErrListener) acceptLoop() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			select {
			case l.errs <- err:
			case <-l.ctx.Done():
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue // net/http retries these after a pause
			}
			return
		}
		go l.handshake(c)
	}
}

func (l *tlsErrListener) handshake(c net.Conn) {
	tc := tls.Server(c, l.config)
	ctx, cancel := context.WithTimeout(l.ctx, handshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		var re tls.RecordHeaderError
		if errors.As(err, &re) && re.Conn != nil && looksLikeHTTP(re.RecordHeader) {
			_ = re.Conn.SetWriteDeadline(time.Now().Add(handshakeTimeout))
			_, _ = re.Conn.Write(jsonErrorResponse(http.StatusBadRequest, "Client sent an HTTP request to an HTTPS server", l.log))
		}
		_ = c.Close()
		return
	}
	var conn net.Conn = tc
	if tc.ConnectionState().NegotiatedProtocol != "h2" {
		conn = &tlsErrConn{errConn: errConn{Conn: tc, log: l.log}, tc: tc}
	}
	select {
	case l.conns <- conn:
	case <-l.ctx.Done():
		_ = tc.Close()
	}
}

// looksLikeHTTP reports whether the first bytes of a would-be TLS record
// start an HTTP request line (as net/http checks before its own reply).
func looksLikeHTTP(hdr [5]byte) bool {
	switch string(hdr[:]) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO":
		return true
	}
	return false
}

func (l *tlsErrListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case err := <-l.errs:
		return nil, err
	case <-l.ctx.Done():
		return nil, net.ErrClosed
	}
}

func (l *tlsErrListener) Close() error {
	l.once.Do(l.cancel)
	return l.ln.Close()
}

func (l *tlsErrListener) Addr() net.Addr { return l.ln.Addr() }

// tlsErrConn is an HTTP/1.1 TLS connection; ConnectionState lets net/http
// fill in Request.TLS as it does for a *tls.Conn.
type tlsErrConn struct {
	errConn
	tc *tls.Conn
}

// ConnectionState returns the TLS state of the connection.
func (c *tlsErrConn) ConnectionState() tls.ConnectionState { return c.tc.ConnectionState() }
